// oom.js — the out-of-memory view (id 'oom'): per OOM event of the process, the
// request and the failing call's site, the verdict (fragmentation: enough memory
// was free but no gap fitted; exhaustion: not enough was free) with its figures, and
// the address map of the device's tracked blocks at that moment: blocks by address
// coloured by site, the free gaps between them, the blocks that split the free space
// outlined, and the request drawn to the same scale.
// Data: proc.ooms (analyzer/report/vt_html_oom.c); map offsets are from map.base.
'use strict';
(function () {
  const VT = window.VT;
  const PAL = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6'];

  function siteButton(proc, pi, si, fallback) {
    if (si === null || si === undefined || si < 0) return VT.el('span', {}, fallback || '(a site not listed)');
    return VT.el('button', { class: 'vt-linkish', title: 'open the site panel', onclick: () => VT.openSite(pi, si) },
      proc.sites[si].title);
  }

  function addressMap(o, proc, pi, colorOfSite) {
    const m = o.map;
    const n = m.off.length;
    const end = m.off[n - 1] + m.size[n - 1] || 1;   // blocks of 0 bytes: nothing to scale by
    const W = 1000, left = 4, right = 4, span = W - left - right;
    const x = (v) => left + (v / end) * span;
    const splitSites = new Set((o.split || []).map((sp) => sp.site));
    const svg = VT.svg('svg', { width: W, height: 96, viewBox: `0 0 ${W} 96`, role: 'img',
      'aria-label': `address map of device ${o.device}: ${n} runs of blocks, ${o.gaps ? o.gaps.count : 0} gaps` });
    // the request at the same scale
    const rw = Math.max(1, (o.requested / end) * span);
    svg.appendChild(VT.svg('rect', { x: left, y: 4, width: Math.min(rw, span), height: 12, fill: VT.color('fg'), 'fill-opacity': 0.55, 'data-request': o.requested }));
    svg.appendChild(VT.svg('text', { x: left + Math.min(rw, span) + 6, y: 14 }, `the request: ${VT.fmtBytes(o.requested)}` +
      (rw > span ? ' (wider than every block and gap drawn)' : '')));
    const y = 30, h = 34;
    svg.appendChild(VT.svg('rect', { class: 'gap', x: left, y, width: span, height: h }));
    for (let i = 0; i < n; i++) {
      const gapBefore = i > 0 ? m.off[i] - (m.off[i - 1] + m.size[i - 1]) : 0;
      const gapAfter = i + 1 < n ? m.off[i + 1] - (m.off[i] + m.size[i]) : 0;
      const si = m.site[i];
      const split = gapBefore > 0 && gapAfter > 0 && si >= 0 && splitSites.has(si);
      const w = Math.max(1, x(m.off[i] + m.size[i]) - x(m.off[i]));
      const r = VT.svg('rect', { class: split ? 'split' : null, x: x(m.off[i]).toFixed(2), y, width: w.toFixed(2), height: h,
        fill: si >= 0 ? colorOfSite(si) : VT.color('c-other'), 'data-run': i, 'data-split': split ? '1' : null });
      const name = si >= 0 ? proc.sites[si].title : si === -1 ? 'blocks of several sites' : 'a site not listed';
      const tip = `${name}\n${VT.fmtBytes(m.size[i])} in ${m.blocks[i]} block${m.blocks[i] === 1 ? '' : 's'}` +
        (m.gaps_in[i] ? ` (with ${VT.fmtBytes(m.gaps_in[i])} of small gaps between them)` : '') +
        `\nat ${m.base} + ${VT.fmtBytes(m.off[i])}` +
        (split ? `\nsplits the free space: ${VT.fmtBytes(gapBefore)} free before, ${VT.fmtBytes(gapAfter)} after` : '');
      r.addEventListener('mousemove', (ev) => VT.tip.show(ev, tip));
      r.addEventListener('mouseleave', () => VT.tip.hide());
      if (si >= 0) r.addEventListener('click', () => VT.openSite(pi, si));
      svg.appendChild(r);
      if (gapAfter > 0) {
        const gx = x(m.off[i] + m.size[i]), gw = x(m.off[i + 1]) - gx;
        const g = VT.svg('rect', { x: gx.toFixed(2), y: y + h + 2, width: Math.max(1, gw).toFixed(2), height: 6,
          fill: gapAfter >= o.requested ? VT.color('c-total') : VT.color('faint'), 'data-gap': gapAfter });
        const gt = `free gap: ${VT.fmtBytes(gapAfter)}${gapAfter >= o.requested ? ' (the request fits)' : ' (the request does not fit)'}`;
        g.addEventListener('mousemove', (ev) => VT.tip.show(ev, gt));
        g.addEventListener('mouseleave', () => VT.tip.hide());
        svg.appendChild(g);
      }
    }
    svg.appendChild(VT.svg('text', { x: left, y: 88 }, m.base));
    svg.appendChild(VT.svg('text', { x: W - right, y: 88, 'text-anchor': 'end' }, `${m.base} + ${VT.fmtBytes(end)}`));
    return svg;
  }

  function one(o, proc, pi, idx) {
    const sec = VT.el('section', { class: 'vt-oom', 'data-oom': idx });
    sec.appendChild(VT.el('h4', {}, `During step ${o.step + 1}: ${o.api} of ${VT.fmtBytes(o.requested)} on device ${o.device} failed (error ${o.result}) `,
      VT.el('span', { class: 'vt-verdict ' + o.verdict, 'data-verdict': o.verdict }, o.verdict)));
    const why = o.verdict === 'fragmentation'
      ? `Enough memory was free (${VT.fmtBytes(o.free)}) but no free extent was large enough` +
        (o.gaps ? `: the largest gap between this process's blocks was ${VT.fmtBytes(o.gaps.largest)}.` : '.')
      : o.verdict === 'exhaustion' ? `Not enough memory was free: ${VT.fmtBytes(o.free)} free for a request of ${VT.fmtBytes(o.requested)}.`
        : 'The free memory of the device was not known at the failure: no verdict.';
    sec.appendChild(VT.el('p', {}, why));
    const fig = (k, v) => VT.el('tr', {}, VT.el('td', {}, k), VT.el('td', {}, v));
    const rows = [fig('requested', VT.fmtBytes(o.requested))];
    if (o.free !== null) rows.push(fig('free on the device', `${VT.fmtBytes(o.free)} of ${VT.fmtBytes(o.total)}`));
    if (o.gaps) {
      rows.push(fig('largest gap between its blocks', VT.fmtBytes(o.gaps.largest)));
      rows.push(fig('gaps between its blocks', `${o.gaps.count}, ${VT.fmtBytes(o.gaps.total)} in all`));
      if (o.free !== null && o.free > o.gaps.total)
        rows.push(fig('free outside the span of its blocks', `${VT.fmtBytes(o.free - o.gaps.total)} (where other processes or the driver may hold memory: not drawn)`));
      if (o.gaps.count) rows.push(fig('own-block gap ratio', `${o.gaps.ratio.toFixed(2)} (1 - largest gap / all gaps: near 1, the free space is in pieces)`));
    }
    rows.push(fig('tracked (this process)', VT.fmtBytes(o.tracked)));
    if (o.untracked !== null) rows.push(fig('untracked (others, the driver)', VT.fmtSigned(o.untracked)));
    sec.appendChild(VT.el('table', { class: 'vt-figs' }, rows));
    // the failing call
    const fail = VT.el('div', {}, VT.el('span', { class: 'meta' }, 'failing call: '), siteButton(proc, pi, o.site, o.site_title));
    if (o.frames.length) {
      const ul = VT.el('ul', { class: 'stack' }, o.frames.map(([label, py]) => VT.el('li', { class: py ? 'py' : null }, label)));
      if (o.stack_frames > o.frames.length) ul.appendChild(VT.el('li', { class: 'meta' }, `… ${o.stack_frames - o.frames.length} more frames`));
      fail.appendChild(ul);
    }
    sec.appendChild(fail);
    // colours: the sites of the map, the biggest first
    const colorIdx = new Map();
    const colorOfSite = (si) => {
      if (!colorIdx.has(si)) colorIdx.set(si, colorIdx.size);
      return VT.color(PAL[colorIdx.get(si) % PAL.length]);
    };
    (o.top || []).forEach((t) => t.site !== null && colorOfSite(t.site));
    if (o.map) {
      sec.appendChild(VT.el('p', { class: 'meta' }, `Address map of device ${o.device}: this process's blocks by address, the free gaps ` +
        'between them (marked below the blocks; blue where the request would fit), the blocks that split the free space outlined.'));
      sec.appendChild(VT.el('div', { class: 'vt-oommap' }, addressMap(o, proc, pi, colorOfSite)));
      const leg = VT.el('p', { class: 'vt-note' });
      for (const [si, k] of colorIdx) {
        if (k >= PAL.length) break;
        const sw = VT.el('span', { class: 'vt-swatch' });
        sw.style.background = VT.color(PAL[k]);
        leg.append(sw, proc.sites[si] ? proc.sites[si].title : '?');
      }
      sec.appendChild(leg);
      if (o.map.off.length >= o.map.max_runs) sec.appendChild(VT.el('p', { class: 'vt-note' },
        `More than ${o.map.max_runs} runs of blocks: the smallest gaps were merged into the runs around them (the largest gaps are exact).`));
    } else {
      sec.appendChild(VT.el('p', { class: 'vt-note' }, o.has_allocs
        ? 'No address map for this event (maps are kept for the first out-of-memory events of a process).'
        : 'No address map: the snapshot of this event had no live list.'));
    }
    if (o.top && o.top.length) {
      sec.appendChild(VT.el('table', {}, VT.el('tr', {}, VT.el('th', {}, 'holding the most'), VT.el('th', {}, 'live'), VT.el('th', {}, 'blocks')),
        o.top.map((t) => VT.el('tr', {}, VT.el('td', {}, siteButton(proc, pi, t.site)), VT.el('td', {}, VT.fmtBytes(t.bytes)),
          VT.el('td', {}, t.blocks ? String(t.blocks) : '?')))));
    }
    if (o.split && o.split.length) {
      sec.appendChild(VT.el('table', {}, VT.el('tr', {}, VT.el('th', {}, 'splitting the free space'), VT.el('th', {}, 'blocks between two gaps'),
        VT.el('th', {}, 'freeing one opens')),
      o.split.map((t) => VT.el('tr', {}, VT.el('td', {}, siteButton(proc, pi, t.site)), VT.el('td', {}, String(t.split_blocks)),
        VT.el('td', {}, VT.fmtBytes(t.gap_if_freed) + (t.fits ? ' (fits the request)' : ''))))));
    }
    return sec;
  }

  function render(el, proc, pi) {
    const ooms = proc.ooms || [];
    if (!ooms.length) {
      el.appendChild(VT.el('p', { class: 'vt-empty' }, 'No out-of-memory event in this process.'));
      return;
    }
    el.appendChild(VT.el('p', { class: 'meta' }, `${ooms.length + (proc.ooms_more || 0)} out-of-memory event${ooms.length + (proc.ooms_more || 0) === 1 ? '' : 's'}.`));
    ooms.forEach((o, i) => el.appendChild(one(o, proc, pi, i)));
    if (proc.ooms_more) el.appendChild(VT.el('p', { class: 'vt-note' }, `${proc.ooms_more} more out-of-memory events are not listed.`));
  }

  VT.addView({ id: 'oom', title: 'Out of memory', order: 30, scope: 'proc', render });
})();
