// site.js — the site panel (VT.sitePanel): one site of a process in full, in a panel
// beside the views: its verdict and the rule that gave it in words, its figures, its
// curve (live bytes at each step's end, and the most held inside each step), its whole
// stack (native frames with the calls inlined into them, Python frames where the
// interpreter ran them), its allocator, and the other processes and devices where
// the same site appears (each a button that opens it there).
//
// Data: proc.sites[si] with the keys of analyzer/report/vt_html_sites.c, proc.frames
// (the frames the stacks index), proc.curve_step, VT.data.same_sites.
// Keyboard: the panel takes the focus when it opens (its heading); Escape or its Close
// button closes it and gives the focus back to what had it.
'use strict';
(function () {
  const VT = window.VT;
  let panel = null, opener = null;

  function close() {
    if (!panel) return;
    panel.remove();
    panel = null;
    VT.tip.hide();
    if (opener && document.contains(opener)) opener.focus();
    opener = null;
  }
  VT.onEscape.push(close);
  VT.closeSitePanel = close;

  function procName(p) {
    const re = /\brestart (\d+)/.exec(p.title);
    return p.rank !== null && p.rank !== undefined ? 'rank ' + p.rank + (re ? ', restart ' + re[1] : '') : p.title;
  }

  function curve(proc, s) {
    const W = 520, H = 130, ML = 64, MR = 8, MT = 8, MB = 22;
    const live = s.curve ? s.curve.live : [], peak = (s.curve && s.curve.peak) || live;
    const st = proc.curve_step || [], n = Math.min(live.length, st.length);
    if (!n && s.curve === null && st.length)   // past the page's cap on curves (vt_html_sites.c)
      return VT.el('p', { class: 'vt-empty vt-sp-nocurve' }, 'Curve not kept in this page: only the first sites of the list have one (leaks first); `vramtrace report` lists every site.');
    if (!n) return VT.el('p', { class: 'vt-empty' }, 'No steps recorded.');
    const ymax = Math.max(1, ...peak, ...live) * 1.05;
    const x0 = st[0], x1 = n > 1 ? st[n - 1] : st[0] + 1;
    const X = (v) => ML + ((v - x0) / Math.max(1, x1 - x0)) * (W - ML - MR);
    const Y = (b) => MT + (H - MT - MB) * (1 - b / ymax);
    const svg = VT.svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'vt-sp-curve', role: 'img',
      'aria-label': 'the site\u2019s bytes per step' });
    for (let t = 0; t <= 2; t++) {
      const b = (ymax / 1.05) * t / 2;
      svg.appendChild(VT.svg('line', { x1: ML, x2: W - MR, y1: Y(b), y2: Y(b), class: 'vt-sp-grid' }));
      svg.appendChild(VT.svg('text', { x: ML - 4, y: Y(b) + 4, 'text-anchor': 'end', class: 'vt-sp-axis' }, VT.fmtBytes(b)));
    }
    svg.appendChild(VT.svg('text', { x: ML, y: H - 6, class: 'vt-sp-axis' }, 'step ' + st[0]));
    svg.appendChild(VT.svg('text', { x: W - MR, y: H - 6, 'text-anchor': 'end', class: 'vt-sp-axis' }, 'step ' + st[n - 1]));
    const pts = (v) => (n === 1 ? `${X(x0)},${Y(v[0])} ${X(x1)},${Y(v[0])}` : v.slice(0, n).map((b, i) => `${X(st[i]).toFixed(1)},${Y(b).toFixed(1)}`).join(' '));
    svg.appendChild(VT.svg('polygon', { points: `${X(x0)},${Y(0)} ${pts(live)} ${X(n === 1 ? x1 : st[n - 1])},${Y(0)}`, class: 'vt-sp-live' }));
    svg.appendChild(VT.svg('polyline', { points: pts(peak), class: 'vt-sp-peak' }));
    svg.appendChild(VT.svg('polyline', { points: pts(live), class: 'vt-sp-liveline' }));
    svg.addEventListener('pointermove', (ev) => {
      const r = svg.getBoundingClientRect(), px = ((ev.clientX - r.left) / r.width) * W;
      let i = 0;
      while (i + 1 < n && X(st[i + 1]) <= px) i++;
      VT.tip.show(ev, `step ${st[i]}: ${VT.fmtBytes(live[i])} live at its end, up to ${VT.fmtBytes(peak[i])} inside`);
    });
    svg.addEventListener('pointerleave', () => VT.tip.hide());
    return svg;
  }

  function stack(proc, s) {
    const ol = VT.el('ol', { class: 'stack vt-sp-stack' });
    (s.stack || []).forEach((fi, i) => {
      const f = proc.frames[fi] || { l: '?' };
      const li = VT.el('li', { class: (f.py ? 'py' : '') + (i === s.title_frame ? ' vt-sp-title' : '') },
        f.l, f.in ? VT.el('span', { class: 'mod' }, ' (inlined)') : null,
        f.w ? VT.el('span', { class: 'mod' }, ' ' + f.w) : null);
      if (f.py) li.title = 'Python frame';
      ol.appendChild(li);
    });
    const items = [ol];
    if (s.stack_left_out) items.push(VT.el('p', { class: 'meta' }, `and ${s.stack_left_out} more frames`));
    if (!(s.stack || []).length) items.push(VT.el('p', { class: 'meta' }, '(no frames)'));
    return items;
  }

  function figures(s) {
    const rows = [['peak', VT.fmtBytes(s.peak)], ['floor at the end', VT.fmtBytes(s.floor_end)],
      ['unfreed at exit', VT.fmtBytes(s.unfreed)]];
    if (s.verdict === 'leak') {
      rows.push(['growth', VT.fmtSigned(s.slope) + ' a step'], ['leaked', VT.fmtBytes(s.leaked)]);
      if (s.since !== null && s.since !== undefined) rows.push(['floor first rose at', s.since_text || 'step ' + s.since]);
      if (s.oom_cut !== null && s.oom_cut !== undefined) rows.push(['its own allocation failed', 'during step ' + (s.oom_cut + 1)]);   // oom_cut: steps completed
      else if (s.exhaust !== null && s.exhaust !== undefined) rows.push(['alone it uses up the free memory at', 'step ' + s.exhaust]);
    }
    return VT.el('table', { class: 'vt-sp-fig' }, rows.map(([k, v]) => VT.el('tr', {}, VT.el('th', {}, k), VT.el('td', {}, v))));
  }

  function elsewhere(pi, si, s) {
    const groups = VT.data.same_sites || [];
    const g = s.same !== undefined ? groups[s.same] : null;
    if (!g) return [VT.el('p', { class: 'meta' }, VT.data.procs.length > 1 ? 'Only in this process.' : 'One process, one device.')];
    const ul = VT.el('ul', { class: 'vt-sp-where' });
    for (const [pj, sj] of g) {
      const p = VT.data.procs[pj], o = p && p.sites[sj];
      if (!o) continue;
      const here = pj === pi && sj === si;
      const text = `${procName(p)}, device ${o.device}: ${o.verdict}, up to ${VT.fmtBytes(o.peak)}` +
        (o.verdict === 'leak' ? `, ${VT.fmtSigned(o.slope)} a step` : '');
      ul.appendChild(VT.el('li', {}, here ? VT.el('span', {}, text + ' (this one)')
        : VT.el('button', { class: 'vt-linkbtn', onclick: () => VT.openSite(pj, sj) }, text)));
    }
    const ranked = g.every(([pj]) => VT.data.procs[pj].rank !== null && VT.data.procs[pj].rank !== undefined);
    const ranks = new Set(g.map(([pj]) => (ranked ? VT.data.procs[pj].rank : pj))), devs = new Set(g.map(([pj, sj]) => VT.data.procs[pj].sites[sj].device));
    const unit = ranked ? (ranks.size === 1 ? 'rank' : 'ranks') : ranks.size === 1 ? 'process' : 'processes';
    return [VT.el('p', { class: 'meta' }, `The same site (kind and frames) in ${g.length} places: ${ranks.size} ${unit}, ` +
      `device${devs.size === 1 ? '' : 's'} ${[...devs].sort((a, b) => a - b).join(', ')}.`), ul];
  }

  VT.sitePanel = function (pi, si) {
    const proc = VT.data.procs[pi], s = proc && proc.sites[si];
    if (!s) return;
    const prevOpener = panel ? opener : document.activeElement;
    if (panel) panel.remove();
    opener = prevOpener;
    const title = VT.el('h2', { id: 'vt-sp-title', tabindex: '-1' }, s.title);
    const closeBtn = VT.el('button', { class: 'vt-sp-close', id: 'vt-sp-close', 'aria-label': 'close the site panel (Escape)', onclick: close }, 'Close');
    panel = VT.el('div', { id: 'vt-site-panel', class: 'vt-sp', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'vt-sp-title',
      'data-process': pi, 'data-site': si },
      VT.el('div', { class: 'vt-sp-head' }, title, closeBtn),
      VT.el('p', { class: 'meta' }, procName(proc) + ' \u00b7 ' + s.id),
      VT.el('p', { class: 'vt-sp-verdict' }, VT.el('span', { class: 'v-' + s.verdict }, s.verdict.replace(/_/g, ' ')),
        ` \u00b7 ${s.kind} memory on ${s.device < 0 ? 'the host' : 'device ' + s.device}` + (s.flags ? ` (${s.flags})` : '')),
      VT.el('p', { class: 'vt-sp-rule' }, VT.el('strong', {}, 'Why: '), s.rule || ''),
      s.alloc ? VT.el('p', { class: 'vt-sp-alloc' }, s.alloc) : null,
      figures(s),
      VT.el('h3', {}, 'Curve'), curve(proc, s),
      VT.el('h3', {}, 'Stack'), stack(proc, s),
      VT.el('h3', {}, 'Where else'), elsewhere(pi, si, s));
    document.body.appendChild(panel);
    title.focus();
  };
})();
