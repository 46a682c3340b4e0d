// timeline.js — the Timeline view: a process's live bytes over its steps, per device
// (a picker when there are several; 'all devices' is the whole process).
//
// Data: proc.timeline (analyzer/report/vt_html_timeline.c): the points' first steps,
// and per view the top sites' live bytes (the least over each point's steps), the
// rest summed as "other", the band (the most seen inside each point's steps), the
// view's peak and where it was reached, the device's capacity and the driver's and
// NVML's figures, and the markers (out of memory, labels, annotations, restart,
// lost-record gaps).
// Drawing: the sites stacked as areas (biggest peak at the bottom), the band above
// them up to the within-step peak (a light fill, each site's part of it in the site's
// colour, lighter, and its outline on top), dashed lines for the recorded peak and the
// device's figures (labels placed by their measured boxes, never over each other),
// markers as vertical lines (a gap as a shaded range).
// The x axis is the steps, or the time (when the slots have times: a picker).
// Interaction: drag to zoom into a range, shift-drag to pan, the wheel zooms around
// the pointer; buttons and keys (on the focused chart: Left/Right pan, + and - zoom,
// 0 or Home resets); hover names the site, its bytes and the step (VT.tip); a click on
// a site's area or on its legend button opens its panel (VT.openSite).
'use strict';
(function () {
  const VT = window.VT;
  const W = 960, H = 340, ML = 76, MR = 16, MT = 16, MB = 36;
  const PW = W - ML - MR, PH = H - MT - MB;
  const state = {};   // per process index: chosen view, x range, capacity scale

  function colorsFor(view) {
    // colours by the analysis order (leaks first), so a leak is always the first colour
    const order = view.sites.map((s) => s.site).sort((a, b) => a - b);
    const m = {};
    order.forEach((si, i) => { m[si] = 'c' + (i % 8); });
    return m;
  }

  // Round tick values in [x0, x1], about `want` of them (whole numbers when integer).
  function niceTicks(x0, x1, want, integer) {
    const span = Math.max(integer ? 1 : 1e-6, x1 - x0);
    const raw = span / want, p = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = [1, 2, 5, 10].map((k) => k * p).find((k) => k >= raw) || 10 * p;
    if (integer) step = Math.max(1, step);
    const out = [];
    for (let v = Math.ceil(x0 / step) * step; v <= x1 + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  const trim = (t) => (t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t);
  const fmtSec = (s) => (s === 0 ? '0 s' : s < 1 ? trim((s * 1000).toPrecision(3)) + ' ms'
    : trim(s >= 100 ? s.toFixed(0) : s >= 10 ? s.toFixed(1) : s.toFixed(2)) + ' s');

  // The stacked layers of view v: bottom first; each {site (index or -1), live[], peak[]}.
  function layers(v) {
    const ls = v.sites.map((s) => ({ site: s.site, live: s.live, peak: s.peak || s.live }));
    if (v.other.n) ls.push({ site: -1, live: v.other.live, peak: v.other.peak, n: v.other.n });
    return ls;
  }

  // The lines' labels (each {t: its text element, y: its line's y}), once the chart is
  // in the page and its text can be measured: each just above its line, else just
  // below it, else the nearest free place below; never over an earlier one (from the
  // top line down), all right-aligned at the same x.
  function placeLabels(labels) {
    const placed = [];
    const free = (top, bot) => placed.every(([a, b]) => bot <= a || top >= b);
    labels.sort((a, b) => a.y - b.y);
    for (const l of labels) {
      const bb = l.t.getBBox(), base = +l.t.getAttribute('y');
      const measured = bb.height > 0;   // not measurable while the chart is not shown: the font's size
      const up = measured ? base - bb.y : 10, down = measured ? bb.y + bb.height - base : 3;   // around the baseline
      const tries = [l.y - 4, l.y + up + 3];
      let y = tries.find((c) => free(c - up, c + down));
      if (y === undefined) {
        y = l.y + up + 3;
        for (let i = 0; i < 50 && !free(y - up, y + down); i++) y += 2;
      }
      l.t.setAttribute('y', y.toFixed(1));
      placed.push([y - up - 1, y + down + 1]);
    }
  }

  function render(el, proc, pi) {
    const tl = proc.timeline;
    if (!tl || !tl.step || !tl.step.length || !tl.views.length) {
      el.appendChild(VT.el('p', { class: 'vt-empty' }, 'No steps recorded: nothing to draw over time.'));
      return;
    }
    const st = state[pi] || (state[pi] = { vi: 0, x0: null, x1: null, cap: false, mode: 'step' });
    if (st.vi >= tl.views.length) st.vi = 0;
    const S = tl.step, n = S.length, w = Math.max(1, tl.width || 1);
    const T = tl.time_us && tl.time_us.length === n ? tl.time_us : null;   // each point's end
    const stepEnd = (j) => (j + 1 < n ? S[j + 1] : S[j] + w);
    // each point's start and end on the x axis: steps, or seconds from about the first step's start
    function bounds(mode) {
      const xs = new Array(n), xe = new Array(n);
      for (let j = 0; j < n; j++) {
        if (mode === 'time') { xs[j] = j ? T[j - 1] / 1e6 : 0; xe[j] = T[j] / 1e6; }
        else { xs[j] = S[j]; xe[j] = stepEnd(j); }
      }
      return { xs, xe };
    }
    if (!T) st.mode = 'step';
    let B = bounds(st.mode), dom0 = B.xs[0], dom1 = B.xe[n - 1];
    if (st.x0 === null) { st.x0 = dom0; st.x1 = dom1; }
    function setMode(m) {
      st.mode = m;
      B = bounds(m);
      dom0 = B.xs[0]; dom1 = B.xe[n - 1];
      st.x0 = dom0; st.x1 = dom1;
      redraw();
    }

    const chartBox = VT.el('div', { class: 'vt-tl-chart' });
    const legend = VT.el('div', { class: 'vt-tl-legend', role: 'list', 'aria-label': 'sites' });
    const note = VT.el('p', { class: 'meta vt-tl-note' });

    function clampRange(a, b) {
      const least = st.mode === 'time' ? (dom1 - dom0) / 1000 : 1;
      let span = Math.max(Math.min(b - a, dom1 - dom0), Math.min(least, dom1 - dom0));
      a = Math.max(dom0, Math.min(a, dom1 - span));
      st.x0 = a; st.x1 = a + span;
    }
    function zoom(f, at) {
      const c = at === undefined ? (st.x0 + st.x1) / 2 : at;
      clampRange(c - (c - st.x0) * f, c + (st.x1 - c) * f);
      redraw();
    }
    function pan(frac) {
      const span = st.x1 - st.x0;
      clampRange(st.x0 + span * frac, st.x1 + span * frac);
      redraw();
    }
    function reset() { st.x0 = dom0; st.x1 = dom1; redraw(); }

    // controls
    const bar = VT.el('div', { class: 'vt-bar vt-tl-controls' });
    if (tl.views.length > 1) {
      bar.appendChild(VT.el('label', { for: 'vt-tl-dev' }, 'Device '));
      bar.appendChild(VT.el('select', { id: 'vt-tl-dev', onchange: (e) => { st.vi = +e.target.value; redraw(); } },
        tl.views.map((v, i) => VT.el('option', { value: i, selected: i === st.vi }, v.label))));
    } else {
      bar.appendChild(VT.el('span', { class: 'meta' }, tl.views[0].label));
    }
    if (T) {
      bar.appendChild(VT.el('label', { for: 'vt-tl-x' }, 'Over '));
      bar.appendChild(VT.el('select', { id: 'vt-tl-x', onchange: (e) => setMode(e.target.value) },
        VT.el('option', { value: 'step', selected: st.mode === 'step' }, 'steps'),
        VT.el('option', { value: 'time', selected: st.mode === 'time' }, 'time')));
    }
    bar.appendChild(VT.el('button', { id: 'vt-tl-zoomin', title: 'zoom in (+)', onclick: () => zoom(0.5) }, 'Zoom in'));
    bar.appendChild(VT.el('button', { id: 'vt-tl-zoomout', title: 'zoom out (-)', onclick: () => zoom(2) }, 'Zoom out'));
    bar.appendChild(VT.el('button', { id: 'vt-tl-left', title: 'pan left (Left)', onclick: () => pan(-0.25) }, '\u2190 Pan'));
    bar.appendChild(VT.el('button', { id: 'vt-tl-right', title: 'pan right (Right)', onclick: () => pan(0.25) }, 'Pan \u2192'));
    bar.appendChild(VT.el('button', { id: 'vt-tl-reset', title: 'whole run (0)', onclick: reset }, 'Reset zoom'));
    const capBox = VT.el('input', { type: 'checkbox', id: 'vt-tl-cap', checked: st.cap,
      onchange: (e) => { st.cap = e.target.checked; redraw(); } });
    const capLabel = VT.el('label', { for: 'vt-tl-cap', class: 'meta' }, capBox, ' scale to the device\u2019s capacity');
    bar.appendChild(capLabel);
    bar.appendChild(VT.el('span', { class: 'vt-spacer' }));
    bar.appendChild(VT.el('span', { class: 'meta' }, 'drag: zoom \u00b7 shift-drag: pan \u00b7 wheel: zoom'));
    el.append(bar, chartBox, note, legend);

    function redraw() {
      const v = tl.views[st.vi];
      const ls = layers(v), col = colorsFor(v);
      const x0 = st.x0, x1 = st.x1, xs = B.xs, xe = B.xe, timed = st.mode === 'time';
      const j0 = Math.max(0, xe.findIndex((e) => e > x0));
      let j1 = n - 1;
      while (j1 > j0 && xs[j1] >= x1) j1--;
      // a step number's place on the x axis (inside its point, in proportion)
      const stepX = (s) => {
        if (!timed) return s;
        let j = 0;
        while (j + 1 < n && S[j + 1] <= s) j++;
        const f = Math.max(0, Math.min(1, (s - S[j]) / (stepEnd(j) - S[j])));
        return xs[j] + f * (xe[j] - xs[j]);
      };
      // a gap's range on the x axis: over time, from the end of the point before it to the
      // end of the first point after it (that point's time holds the lost steps)
      const gapX = (m) => {
        if (!timed) return [m.step, m.end + 1];
        let a = 0, b = n - 1;
        while (a + 1 < n && S[a + 1] < m.step) a++;
        while (b > 0 && S[b - 1] > m.end) b--;
        return [S[a] < m.step ? xe[a] : xs[0], xe[b]];
      };
      // cumulative tops
      const cum = ls.map(() => new Array(n));
      for (let j = 0; j < n; j++) {
        let acc = 0;
        ls.forEach((l, k) => { acc += l.live[j]; cum[k][j] = acc; });
      }
      const top = (j) => (ls.length ? cum[ls.length - 1][j] : 0);
      // inside the step: each layer's most above its live bytes at the step's end,
      // stacked from the top in the same order, never above the band
      const bandTop = (j) => Math.max(v.band[j] || 0, top(j));
      const inner = ls.map(() => new Array(n));
      for (let j = 0; j < n; j++) {
        let acc = top(j);
        ls.forEach((l, k) => { acc = Math.min(bandTop(j), acc + Math.max(0, l.peak[j] - l.live[j])); inner[k][j] = acc; });
      }
      let ymax = 1;
      for (let j = j0; j <= j1; j++) ymax = Math.max(ymax, v.band[j] || 0, top(j));
      if (v.peak) ymax = Math.max(ymax, v.peak);
      capLabel.hidden = !v.capacity;
      const lines = [];   // dashed horizontal lines: [value, class, text]
      if (v.peak) lines.push([v.peak, 'peak', 'peak ' + VT.fmtBytes(v.peak)]);
      if (v.capacity) lines.push([v.capacity, 'cap', 'capacity ' + VT.fmtBytes(v.capacity)]);
      if (v.driver_used !== null && v.driver_used !== undefined)
        lines.push([v.driver_used, 'drv', 'driver: ' + VT.fmtBytes(v.driver_used) + ' used (cuMemGetInfo, last)']);
      if (v.nvml_used !== null && v.nvml_used !== undefined)
        lines.push([v.nvml_used, 'nvml', 'NVML: ' + VT.fmtBytes(v.nvml_used) + ' used on the GPU (largest sample)']);
      if (v.nvml_process !== null && v.nvml_process !== undefined && v.nvml_process !== v.nvml_used)
        lines.push([v.nvml_process, 'nvml', 'NVML: ' + VT.fmtBytes(v.nvml_process) + ' by this process (largest sample)']);
      if (st.cap && v.capacity) ymax = Math.max(ymax, v.capacity);
      else lines.forEach(([val]) => { if (val <= ymax * 1.25) ymax = Math.max(ymax, val); });
      ymax *= 1.06;
      const X = (s) => ML + ((s - x0) / (x1 - x0)) * PW;
      const Y = (b) => MT + PH - (b / ymax) * PH;
      const svg = VT.svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'vt-tl-svg', id: 'vt-tl-svg',
        tabindex: '0', role: 'img', 'aria-label': 'live bytes per step, ' + v.label + '; keys: arrows pan, + and - zoom, 0 resets' });
      const fg = VT.color('fg'), grid = VT.color('grid'), muted = VT.color('muted');
      svg.appendChild(VT.svg('rect', { x: 0, y: 0, width: W, height: H, fill: VT.color('bg') }));
      const defs = VT.svg('defs', {}, VT.svg('clipPath', { id: 'vt-tl-clip' },
        VT.svg('rect', { x: ML, y: MT - 2, width: PW, height: PH + 2 })));
      svg.appendChild(defs);
      for (let t = 0; t <= 4; t++) {
        const b = (ymax / 1.06) * t / 4, y = Y(b);
        svg.appendChild(VT.svg('line', { x1: ML, y1: y, x2: W - MR, y2: y, stroke: grid }));
        svg.appendChild(VT.svg('text', { x: ML - 6, y: y + 4, 'font-size': 11, 'text-anchor': 'end', fill: muted }, VT.fmtBytes(b)));
      }
      for (const s of niceTicks(x0, timed ? x1 : Math.min(x1, tl.last), 8, !timed)) {
        svg.appendChild(VT.svg('line', { x1: X(s), y1: MT + PH, x2: X(s), y2: MT + PH + 4, stroke: muted }));
        svg.appendChild(VT.svg('text', { x: X(s), y: MT + PH + 16, 'font-size': 11, 'text-anchor': 'middle', fill: muted,
          class: 'vt-tl-xtick' }, timed ? fmtSec(s) : String(s)));
      }
      svg.appendChild(VT.svg('text', { x: ML + PW / 2, y: H - 4, 'font-size': 11, 'text-anchor': 'middle', fill: muted },
        timed ? 'time (from about the start of the first step)' : w > 1 ? `step (each point: ${w} steps)` : 'step'));
      const g = VT.svg('g', { 'clip-path': 'url(#vt-tl-clip)' });
      svg.appendChild(g);
      // gaps first (under everything)
      const marks = (tl.markers || []).filter((m) => m.device === null || v.device === null || m.device === v.device);
      for (const m of marks)
        if (m.k === 'gap') {
          const [ga, gb] = gapX(m);
          g.appendChild(VT.svg('rect', { x: X(ga), y: MT, width: Math.max(2, X(gb) - X(ga)),
            height: PH, fill: VT.color('warn'), 'fill-opacity': 0.18, class: 'vt-tl-gap' }));
          g.appendChild(VT.svg('text', { x: X(ga) + 3, y: MT + 22, 'font-size': 10, fill: VT.color('warn') }, 'records lost'));
        }
      // the band: from the stack's top up to the most seen inside each point; a light
      // fill under everything, its outline over the areas (drawn after them)
      let band = '';
      for (let j = j0; j <= j1; j++) band += `${j === j0 ? 'M' : 'L'}${X(xs[j]).toFixed(1)},${Y(v.band[j]).toFixed(1)}H${X(xe[j]).toFixed(1)}`;
      for (let j = j1; j >= j0; j--) band += `L${X(xe[j]).toFixed(1)},${Y(top(j)).toFixed(1)}H${X(xs[j]).toFixed(1)}`;
      g.appendChild(VT.svg('path', { d: band + 'Z', fill: VT.color('c-total'), 'fill-opacity': 0.12, stroke: 'none',
        class: 'vt-tl-band', 'data-layer': 'band' }));
      // the stacked areas
      ls.forEach((l, k) => {
        let d = '';
        for (let j = j0; j <= j1; j++) d += `${j === j0 ? 'M' : 'L'}${X(xs[j]).toFixed(1)},${Y(cum[k][j]).toFixed(1)}H${X(xe[j]).toFixed(1)}`;
        for (let j = j1; j >= j0; j--) d += `L${X(xe[j]).toFixed(1)},${Y(k ? cum[k - 1][j] : 0).toFixed(1)}H${X(xs[j]).toFixed(1)}`;
        const c = l.site < 0 ? VT.color('c-other') : VT.color(col[l.site]);
        g.appendChild(VT.svg('path', { d: d + 'Z', fill: c, stroke: c, 'stroke-width': 0.5,
          class: 'vt-tl-area', 'data-layer': k, 'data-site': l.site }));
      });
      // inside the step, per site (a churn site's temporaries are only here): its
      // colour, lighter, over the band's fill
      ls.forEach((l, k) => {
        let any = false;
        for (let j = j0; j <= j1 && !any; j++) any = inner[k][j] > (k ? inner[k - 1][j] : top(j));
        if (!any) return;
        let d = '';
        for (let j = j0; j <= j1; j++) d += `${j === j0 ? 'M' : 'L'}${X(xs[j]).toFixed(1)},${Y(inner[k][j]).toFixed(1)}H${X(xe[j]).toFixed(1)}`;
        for (let j = j1; j >= j0; j--) d += `L${X(xe[j]).toFixed(1)},${Y(k ? inner[k - 1][j] : top(j)).toFixed(1)}H${X(xs[j]).toFixed(1)}`;
        const c = l.site < 0 ? VT.color('c-other') : VT.color(col[l.site]);
        g.appendChild(VT.svg('path', { d: d + 'Z', fill: c, 'fill-opacity': 0.45, stroke: c, 'stroke-width': 0.5,
          class: 'vt-tl-inner', 'data-layer': k, 'data-site': l.site }));
      });
      g.appendChild(VT.svg('path', { d: band + 'Z', fill: 'none', stroke: VT.color('c-total'), 'stroke-width': 1.2,
        'pointer-events': 'none', class: 'vt-tl-band-edge' }));
      // dashed lines
      const off = [], labels = [];
      for (const [val, cls, text] of lines) {
        if (val > ymax) { off.push(text); continue; }
        const y = Y(val);
        svg.appendChild(VT.svg('line', { x1: ML, y1: y, x2: W - MR, y2: y, stroke: cls === 'peak' ? fg : cls === 'cap' ? VT.color('bad') : muted,
          'stroke-dasharray': cls === 'peak' ? '6 3' : '3 3', 'stroke-width': 1, class: 'vt-tl-line-' + cls }));
        const t = VT.svg('text', { x: W - MR - 4, y: y - 4, 'font-size': 11, 'text-anchor': 'end', fill: fg,
          stroke: VT.color('bg'), 'stroke-width': 3, 'paint-order': 'stroke', class: 'vt-tl-label vt-tl-label-' + cls }, text);
        svg.appendChild(t);
        labels.push({ t, y });
      }
      // where the peak was reached
      if (v.peak_at && stepX(v.peak_at.step) >= x0 && stepX(v.peak_at.step) <= x1) {
        const cx = X(stepX(v.peak_at.step + 0.5 * Math.min(w, 1))), cy = Y(v.peak_at.bytes);
        svg.appendChild(VT.svg('circle', { cx, cy, r: 4, fill: fg, class: 'vt-tl-peak' }));
      }
      // markers
      for (const m of marks) {
        if (m.k === 'gap' || stepX(m.step) < x0 || stepX(m.step) > x1) continue;
        const x = X(stepX(m.step)), c = m.k === 'oom' ? VT.color('bad') : m.k === 'restart' ? VT.color('warn') : muted;
        svg.appendChild(VT.svg('line', { x1: x, y1: MT, x2: x, y2: MT + PH, stroke: c, 'stroke-width': m.k === 'oom' ? 2 : 1,
          'stroke-dasharray': m.k === 'label' || m.k === 'annot' ? '2 3' : null, class: 'vt-tl-mark vt-tl-mark-' + m.k }));
        svg.appendChild(VT.svg('text', { x: x + 2, y: MT + 10, 'font-size': 10, fill: c },
          m.k === 'oom' ? 'OOM' : m.k === 'restart' ? 'restart' : m.k === 'label' ? '\u25be' : '\u2022'));
      }
      // hover line, selection
      const hover = VT.svg('line', { x1: 0, y1: MT, x2: 0, y2: MT + PH, stroke: fg, 'stroke-opacity': 0.5, visibility: 'hidden' });
      const sel = VT.svg('rect', { x: 0, y: MT, width: 0, height: PH, fill: VT.color('accent'), 'fill-opacity': 0.15, visibility: 'hidden' });
      svg.append(hover, sel);
      VT.tip.hide();

      const ptX = (ev) => {
        const r = svg.getBoundingClientRect();
        return ((ev.clientX - r.left) / r.width) * W;
      };
      const ptY = (ev) => {
        const r = svg.getBoundingClientRect();
        return ((ev.clientY - r.top) / r.height) * H;
      };
      const stepAt = (px) => x0 + ((px - ML) / PW) * (x1 - x0);
      const pointAt = (s) => {
        let j = j0;
        while (j < j1 && xe[j] <= s) j++;
        return j;
      };
      const siteTitle = (si) => (si < 0 ? 'other' : proc.sites[si].title + (v.device === null ? ` (device ${proc.sites[si].device})` : ''));
      const stepText = (j) => (w > 1 ? `steps ${S[j]}\u2013${stepEnd(j) - 1}` : `step ${S[j]}`) +
        (timed ? ` (ended at ${fmtSec(xe[j])})` : '');
      function describe(px, py) {
        if (px < ML || px > W - MR || py < MT || py > MT + PH) return null;
        const j = pointAt(stepAt(px)), b = ((MT + PH - py) / PH) * ymax;
        for (const m of marks) {
          if (m.k === 'gap' ? stepAt(px) >= gapX(m)[0] && stepAt(px) <= gapX(m)[1] && b > v.band[j]
            : Math.abs(X(stepX(m.step)) - px) <= 3)
            // an OOM or a label is a moment: its step counts the steps completed, so it
            // happened during the next one (docs/metrics.md "Step numbers in the reports")
            return { text: m.text + (m.k === 'oom' || m.k === 'label' ? `\n(during step ${m.step + 1})`
              : `\n(step ${m.step}${m.k === 'gap' ? '\u2013' + m.end : ''})`) };
        }
        for (let k = 0; k < ls.length; k++) {
          if (b <= cum[k][j]) {
            const l = ls[k];
            let t = `${siteTitle(l.site)}${l.site < 0 ? ` (${l.n} site${l.n === 1 ? '' : 's'})` : ''}\n` +
              `${VT.fmtBytes(l.live[j])} live at ${stepText(j)}`;
            if (l.peak[j] > l.live[j]) t += `\nup to ${VT.fmtBytes(l.peak[j])} inside the step`;
            if (l.site >= 0) t += `\n${proc.sites[l.site].verdict.replace(/_/g, ' ')} \u00b7 click for its panel`;
            return { text: t, site: l.site, j };
          }
        }
        for (let k = 0; k < ls.length; k++) {
          if (b <= inner[k][j] && inner[k][j] > (k ? inner[k - 1][j] : top(j))) {
            const l = ls[k];
            let t = `${siteTitle(l.site)}${l.site < 0 ? ` (${l.n} site${l.n === 1 ? '' : 's'})` : ''}\n` +
              `up to ${VT.fmtBytes(l.peak[j])} inside ${stepText(j)}, ${VT.fmtBytes(l.live[j])} live at its end`;
            if (l.site >= 0) t += `\n${proc.sites[l.site].verdict.replace(/_/g, ' ')} \u00b7 click for its panel`;
            return { text: t, site: l.site, j };
          }
        }
        if (b <= Math.max(v.band[j], top(j)) * 1.02 + ymax * 0.01) {
          const parts = ls.filter((l) => l.peak[j] > 0).sort((a, c) => c.peak[j] - a.peak[j]).slice(0, 4)
            .map((l) => `  ${VT.fmtBytes(l.peak[j])} ${siteTitle(l.site)}`);
          return { text: `inside ${stepText(j)}: up to ${VT.fmtBytes(v.band[j])} (at its end ${VT.fmtBytes(top(j))})\n` +
            'the most each site held during the step:\n' + parts.join('\n'), j };
        }
        return { text: `${stepText(j)}: ${VT.fmtBytes(top(j))} live at its end, up to ${VT.fmtBytes(v.band[j])} inside`, j };
      }

      let drag = null, dragged = false;
      svg.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0) return;
        drag = { px: ptX(ev), shift: ev.shiftKey, x0, x1 };
        dragged = false;
        svg.setPointerCapture(ev.pointerId);
      });
      svg.addEventListener('pointermove', (ev) => {
        const px = ptX(ev);
        if (drag) {
          if (Math.abs(px - drag.px) > 4) dragged = true;
          if (!dragged) return;
          VT.tip.hide();
          if (drag.shift) {   // the plot follows the pointer; the range moves on release
            g.setAttribute('transform', `translate(${(px - drag.px).toFixed(1)},0)`);
          } else {
            const a = Math.max(ML, Math.min(drag.px, px)), b = Math.min(W - MR, Math.max(drag.px, px));
            sel.setAttribute('x', a); sel.setAttribute('width', b - a); sel.setAttribute('visibility', 'visible');
          }
          return;
        }
        const d = describe(px, ptY(ev));
        if (!d) { VT.tip.hide(); hover.setAttribute('visibility', 'hidden'); return; }
        hover.setAttribute('x1', px); hover.setAttribute('x2', px); hover.setAttribute('visibility', 'visible');
        VT.tip.show(ev, d.text);
        svg.style.cursor = d.site !== undefined && d.site >= 0 ? 'pointer' : 'crosshair';
      });
      svg.addEventListener('pointerleave', () => { if (!drag) { VT.tip.hide(); hover.setAttribute('visibility', 'hidden'); } });
      svg.addEventListener('pointerup', (ev) => {
        const d0 = drag;
        drag = null;
        if (!d0) return;
        const px = ptX(ev);
        if (dragged && !d0.shift) {
          const a = stepAt(Math.max(ML, Math.min(d0.px, px))), b = stepAt(Math.min(W - MR, Math.max(d0.px, px)));
          if (b - a > 0) { clampRange(a, b); redraw(); }
          return;
        }
        if (dragged) {
          const ds = ((px - d0.px) / PW) * (d0.x1 - d0.x0);
          clampRange(d0.x0 - ds, d0.x1 - ds);
          redraw();
          return;
        }
        const d = describe(px, ptY(ev));
        if (d && d.site !== undefined && d.site >= 0) VT.openSite(pi, d.site);
      });
      svg.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        const px = ptX(ev);
        if (px < ML || px > W - MR) return;
        zoom(ev.deltaY > 0 ? 1.25 : 0.8, stepAt(px));
      });
      svg.addEventListener('keydown', (ev) => {
        const k = ev.key;
        if (k === 'ArrowLeft') pan(-0.25);
        else if (k === 'ArrowRight') pan(0.25);
        else if (k === '+' || k === '=') zoom(0.5);
        else if (k === '-' || k === '_') zoom(2);
        else if (k === '0' || k === 'Home') reset();
        else return;
        ev.preventDefault();
        const s2 = document.getElementById('vt-tl-svg');
        if (s2) s2.focus();
      });
      chartBox.replaceChildren(svg);
      placeLabels(labels);

      // legend: one button per site (opens its panel), then other and the lines
      legend.replaceChildren();
      v.sites.forEach((s) => {
        const ps = proc.sites[s.site];
        const sw = VT.el('span', { class: 'vt-sw', 'aria-hidden': 'true' });
        sw.style.background = VT.color(col[s.site]);
        const peak = Math.max(...(s.peak || s.live));
        legend.appendChild(VT.el('span', { role: 'listitem' }, VT.el('button', { class: 'vt-tl-site', 'data-site': s.site,
          title: 'open the site\u2019s panel', onclick: () => VT.openSite(pi, s.site) },
          sw, ps.title + (v.device === null ? ` (device ${ps.device})` : ''), VT.el('span', { class: 'meta v-' + ps.verdict }, ' ' + ps.verdict.replace(/_/g, ' ') + ', up to ' + VT.fmtBytes(peak)))));
      });
      if (v.other.n) {
        const sw = VT.el('span', { class: 'vt-sw', 'aria-hidden': 'true' });
        sw.style.background = VT.color('c-other');
        legend.appendChild(VT.el('span', { class: 'vt-tl-other', role: 'listitem' }, sw,
          `other (${v.other.n} site${v.other.n === 1 ? '' : 's'})`));
      }
      const bsw = VT.el('span', { class: 'vt-sw vt-sw-band', 'aria-hidden': 'true' });
      bsw.style.background = VT.color('c-total');
      legend.appendChild(VT.el('span', { role: 'listitem' }, bsw, v.band_source === 'trace'
        ? 'inside the step (band: the most live at any allocation or free, from the event trace)'
        : 'inside the step (band: up to each site\u2019s most, summed; each site\u2019s part in its colour, lighter)'));
      const parts = [];
      if (v.peak) parts.push(`peak ${VT.fmtBytes(v.peak)}` + (v.peak_at ? ` (reached during step ${v.peak_at.step}: ${VT.fmtBytes(v.peak_at.bytes)} live)` : ''));
      if (off.length) parts.push('off the chart: ' + off.join('; '));
      const zoomed = x0 > dom0 || x1 < dom1;
      const span = (a, b) => (a >= b ? `step ${a}` : `steps ${a}\u2013${b}`);
      if (timed) parts.push(`${fmtSec(x0)} to ${fmtSec(x1)}` + (zoomed ? ` of ${fmtSec(dom1)}` : '') + ` (${span(S[j0], stepEnd(j1) - 1)})`);
      else parts.push(zoomed ? `${span(Math.ceil(x0), Math.min(tl.last, Math.ceil(x1) - 1))} of ${span(S[0], tl.last)}` : span(S[0], tl.last));
      if (tl.markers_left_out) parts.push(`${tl.markers_left_out} markers left out`);
      note.textContent = parts.join(' \u00b7 ');
    }
    redraw();
  }

  VT.addView({ id: 'timeline', title: 'Timeline', order: 10, scope: 'proc', render });
})();
