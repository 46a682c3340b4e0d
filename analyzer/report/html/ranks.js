// ranks.js — the many-processes view (id 'ranks', shown with more than one
// process): a heat map of growth per step, one row per process (by rank), one
// column per site matched across processes and devices (the summary across ranks'
// matching), the colour the bytes per step. Hover a cell for its process, site and
// growth; click it (or Enter on it) to open that process's timeline (else its flame
// graph in growth mode, zoomed to the site: VT.flameFocus) and the site's panel.
// Data: VT.data.ranks (analyzer/report/vt_html_ranks.c): rows (process indices),
// cols ({title, kind, total, nprocs}), sparse cells [row, col, bytes/step, site].
'use strict';
(function () {
  const VT = window.VT;

  function open(pi, si) {
    VT.selectProcess(pi);
    VT.show('timeline');
    if (VT.current().view !== 'timeline') {
      if (VT.flameFocus) VT.flameFocus(pi, si, 'growth');
      VT.show('flame');
    }
    VT.openSite(pi, si);
  }

  function render(el) {
    const R = VT.data.ranks;
    if (!R || !R.cols.length) {
      el.appendChild(VT.el('p', { class: 'vt-empty' }, 'No site grows from step to step in any process.'));
      return;
    }
    const procs = VT.data.procs;
    const rowName = (pi) => procs[pi].title.replace(/, pid \d+ on .*$/, '');   // 'rank 3, restart 1', or 'pid 42 on node7'
    el.appendChild(VT.el('p', { class: 'meta' }, `Growth per step of each site (columns, the same site on every device and process ` +
      `in one column) in each process (rows). Click a cell to open that process and the site.`));
    let max = 0;
    for (const c of R.cells) if (c[2] > max) max = c[2];
    const cw = Math.max(14, Math.min(40, Math.floor(900 / R.cols.length))), ch = Math.max(12, Math.min(24, Math.floor(600 / R.rows.length)));
    const labelW = 150, top = 150;
    const W = labelW + cw * R.cols.length + 140, H = top + ch * R.rows.length + 10;   // room for the slanted labels
    const svg = VT.svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'grid',
      'aria-label': `growth per step: ${R.rows.length} processes by ${R.cols.length} sites` });
    R.cols.forEach((c, j) => {
      const x = labelW + j * cw + cw / 2;
      const t = c.title.length > 28 ? c.title.slice(0, 27) + '…' : c.title;
      const txt = VT.svg('text', { x, y: top - 6, transform: `rotate(-45 ${x} ${top - 6})`, 'data-col': j }, t);
      txt.addEventListener('mousemove', (ev) => VT.tip.show(ev, `${c.title} (${c.kind})\n${VT.fmtBytes(c.total)}/step over ${c.nprocs} process${c.nprocs === 1 ? '' : 'es'}`));
      txt.addEventListener('mouseleave', () => VT.tip.hide());
      svg.appendChild(txt);
    });
    R.rows.forEach((pi, i) => {
      const rn = rowName(pi);
      svg.appendChild(VT.svg('text', { x: labelW - 6, y: top + i * ch + ch / 2 + 4, 'text-anchor': 'end' }, rn.length > 24 ? rn.slice(0, 23) + '…' : rn));
      svg.appendChild(VT.svg('rect', { class: 'none', x: labelW, y: top + i * ch, width: cw * R.cols.length, height: ch - 1 }));
    });
    const hot = VT.color('c0');
    for (const [row, col, rate, si] of R.cells) {
      const pi = R.rows[row], c = R.cols[col];
      const r = VT.svg('rect', { class: 'cell', x: labelW + col * cw, y: top + row * ch, width: cw - 1, height: ch - 1, fill: hot,
        'fill-opacity': (0.15 + 0.85 * (max > 0 ? rate / max : 0)).toFixed(3), tabindex: 0, role: 'gridcell',
        'data-proc': pi, 'data-site': si, 'data-col': col,
        'aria-label': `${rowName(pi)}, ${c.title}: ${VT.fmtBytes(rate)} per step` });
      const tip = `${procs[pi].title}\n${c.title}\n${VT.fmtSigned(rate)}/step`;
      r.addEventListener('mousemove', (ev) => VT.tip.show(ev, tip));
      r.addEventListener('mouseleave', () => VT.tip.hide());
      r.addEventListener('click', () => open(pi, si));
      r.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); open(pi, si); } });
      svg.appendChild(r);
    }
    el.appendChild(VT.el('div', { class: 'vt-heat' }, svg));
    // the scale
    const leg = VT.el('p', { class: 'vt-note' }, 'growth per step: ');
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      const sw = VT.el('span', { class: 'vt-swatch' });
      sw.style.background = hot;
      sw.style.opacity = String(0.15 + 0.85 * f);
      leg.append(sw, VT.fmtBytes(max * f) + (f === 1 ? '/step' : ''));
    }
    el.appendChild(leg);
    if (R.cols_total > R.cols.length)
      el.appendChild(VT.el('p', { class: 'vt-note' }, `${R.cols.length} of ${R.cols_total} growing sites shown (those that grow the most over all processes).`));
    if (R.rows_total > R.rows.length)
      el.appendChild(VT.el('p', { class: 'vt-note' }, `${R.rows.length} of ${R.rows_total} processes shown (the lowest ranks).`));
  }

  VT.addView({ id: 'ranks', title: 'Many processes', order: 5, scope: 'all', render });
})();
