// flame.js — the flame graph view (id 'flame'): an icicle of a process's memory by
// stack, the outermost frame at the top, each box as wide as the bytes held under
// it. Three measures (buttons, aria-pressed): the peak moment (the process's, or one
// device's), live at exit, and growth per step (each site's floor slope). Click a
// box to zoom into it; the breadcrumb, Reset and Escape zoom back out. A box that
// ends a site's stack opens its site panel from the line under the graph.
// Data: proc.flame (analyzer/report/vt_html_flame.c): frames [[name, module,
// python, inlined]], the node tree as columns parent/frame (node 0 the root; a
// child's index is above its parent's), and per chosen site its leaf node and its
// values (peak per device under devices[]); what the caps left out is in *_other.
'use strict';
(function () {
  const VT = window.VT;
  const ROW = 18;
  const MODES = [['peak', 'Peak moment'], ['exit', 'At exit'], ['growth', 'Growth per step']];
  const state = {};   // per process index: {mode, device, zoom}
  let live = null;    // {pi, zoomOut()} of the drawn view, for Escape

  function st(pi, f) {
    if (!state[pi]) state[pi] = { mode: f.peak || f.devices.length === 1 ? 'peak' : f.exited ? 'exit' : 'growth', device: 'all', zoom: 0 };
    return state[pi];
  }

  // Values per chosen site, the other sites' sum and count, and the unit of the measure.
  function measure(proc, f, s) {
    const n = f.site.length;
    if (s.mode === 'peak') {
      const pk = s.device === 'all' ? f.peak || (f.devices.length === 1 ? f.devices[0] : null)
        : f.devices.find((d) => String(d.device) === s.device);
      if (!pk) return null;
      return { vals: pk.values, other: pk.other, otherSites: pk.other_sites, total: pk.bytes,
        what: `at the peak of ${s.device === 'all' ? 'the process' : 'device ' + s.device} (${VT.fmtBytes(pk.bytes)}${pk.step == null ? '' : ', during step ' + pk.step})` };
    }
    const src = s.mode === 'exit' ? f.exit : f.growth;
    const vals = new Array(n);
    for (let k = 0; k < n; k++) {
      const dev = proc.sites[f.site[k]].device;
      vals[k] = s.device === 'all' || String(dev) === s.device ? src[k] : 0;
    }
    if (s.mode === 'exit')
      return f.exited ? { vals, other: s.device === 'all' ? f.exit_other : 0, otherSites: s.device === 'all' ? f.exit_other_sites : 0,
        what: 'live at exit' } : null;
    return { vals, other: s.device === 'all' ? f.growth_other : 0, otherSites: s.device === 'all' ? f.growth_other_sites : 0,
      what: 'of growth in all (the floor slope of each site)', perStep: true };
  }

  // Node totals (with one extra node for the other sites), children sorted largest first.
  function tree(f, m) {
    const n = f.parent.length;
    const tot = new Float64Array(n + 1), siteOf = new Int32Array(n + 1).fill(-1);
    for (let k = 0; k < f.site.length; k++) {
      const v = m.vals[k] > 0 ? m.vals[k] : 0;
      tot[f.leaf[k]] += v;
      if (v > 0) siteOf[f.leaf[k]] = f.site[k];
    }
    tot[n] = m.other > 0 ? m.other : 0;
    for (let i = n - 1; i >= 1; i--) tot[f.parent[i]] += tot[i];
    tot[0] += tot[n];
    const kids = Array.from({ length: n + 1 }, () => []);
    for (let i = 1; i < n; i++) if (tot[i] > 0) kids[f.parent[i]].push(i);
    if (tot[n] > 0) kids[0].push(n);
    for (const k of kids) k.sort((a, b) => tot[b] - tot[a]);
    return { n, tot, kids, siteOf };
  }

  function nameOf(f, t, i, m) {
    if (i === 0) return 'all';
    if (i === t.n) return `(${m.otherSites} other site${m.otherSites === 1 ? '' : 's'})`;
    return f.frames[f.frame[i]][0];
  }

  function colorOf(f, t, i) {
    if (i === 0) return VT.color('c-other') || '#aaa';
    if (i === t.n) return VT.color('c-other') || '#aaa';
    const [name, mod, py] = f.frames[f.frame[i]];
    let h = 0;
    for (const c of (mod || name)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    let n2 = 0;
    for (const c of name) n2 = (n2 * 17 + c.charCodeAt(0)) >>> 0;
    return py ? `hsl(${95 + (h % 40)},45%,${58 + (n2 % 12)}%)` : `hsl(${(h % 50) + 5},75%,${60 + (n2 % 12)}%)`;
  }

  function render(el, proc, pi) {
    const f = proc.flame;
    if (!f) { el.appendChild(VT.el('p', { class: 'vt-empty' }, 'No flame graph data in this report.')); return; }
    const s = st(pi, f);
    const bar = VT.el('div', { class: 'vt-viz-bar', role: 'group', 'aria-label': 'measure' });
    for (const [id, label] of MODES)
      bar.appendChild(VT.el('button', { id: 'vt-flame-mode-' + id, 'aria-pressed': String(s.mode === id),
        onclick: () => { s.mode = id; s.zoom = 0; redraw(); } }, label));
    const devs = new Set(proc.sites.map((x) => String(x.device)));
    f.devices.forEach((d) => devs.add(String(d.device)));
    if (devs.size > 1) {
      bar.appendChild(VT.el('label', { for: 'vt-flame-dev' }, 'Device'));
      bar.appendChild(VT.el('select', { id: 'vt-flame-dev', onchange: (e) => { s.device = e.target.value; s.zoom = 0; redraw(); } },
        VT.el('option', { value: 'all', selected: s.device === 'all' }, 'all devices'),
        [...devs].sort((a, b) => a - b).map((d) => VT.el('option', { value: d, selected: s.device === d }, d === '-1' ? 'host' : 'device ' + d))));
    }
    const resetBtn = VT.el('button', { id: 'vt-flame-reset', title: 'show the whole graph (Escape: one level up)',
      onclick: () => { s.zoom = 0; redraw(); } }, 'Reset zoom');
    bar.appendChild(resetBtn);
    const head = VT.el('p', { class: 'vt-note' });
    const crumbs = VT.el('nav', { class: 'vt-crumbs', 'aria-label': 'zoom path' });
    const box = VT.el('div', { class: 'vt-flame' });
    const foot = VT.el('div', { class: 'vt-note' });
    el.append(bar, head, crumbs, box, foot);

    function redraw() {
      for (const b of bar.querySelectorAll('button[id^=vt-flame-mode-]'))
        b.setAttribute('aria-pressed', String(b.id === 'vt-flame-mode-' + s.mode));
      head.replaceChildren(); crumbs.replaceChildren(); box.replaceChildren(); foot.replaceChildren();
      VT.tip.hide();
      const m = measure(proc, f, s);
      if (!m) {
        box.appendChild(VT.el('p', { class: 'vt-empty' }, s.mode === 'exit' ? 'No exit record: the process had not exited when its snapshots end.'
          : 'No peak composition was recorded for this choice.'));
        return;
      }
      const t = tree(f, m);
      const fmt = (v) => m.perStep ? VT.fmtBytes(v) + '/step' : VT.fmtBytes(v);
      if (!(t.tot[0] > 0)) {
        box.appendChild(VT.el('p', { class: 'vt-empty' }, s.mode === 'growth' ? 'No site grows from step to step.' : 'Nothing was live ' + m.what + '.'));
        return;
      }
      if (s.zoom > t.n || !(t.tot[s.zoom] > 0)) s.zoom = 0;
      head.textContent = `${fmt(t.tot[0])} ${m.what}; the outermost frame at the top, each box as wide as its bytes. Click a box to zoom in.`;
      // the path from the root to the zoomed node
      const path = [];
      const parentOf = (i) => (i === t.n ? 0 : f.parent[i]);
      for (let i = s.zoom; i > 0; i = parentOf(i)) path.unshift(i);
      path.unshift(0);
      path.forEach((i, k) => {
        if (k) crumbs.appendChild(VT.el('span', { 'aria-hidden': 'true' }, '›'));
        crumbs.appendChild(VT.el('button', { 'aria-current': String(i === s.zoom), title: nameOf(f, t, i, m),
          onclick: () => { s.zoom = i; redraw(); } }, nameOf(f, t, i, m)));
      });
      // layout: the path above the zoomed node full width, then its subtree scaled to it
      const W = Math.max(600, Math.min(1400, (el.clientWidth || 1000) - 24));
      const rows = [];
      path.forEach((i, d) => rows.push({ i, d, x: 0, w: W }));
      const base = path.length - 1, scale = W / t.tot[s.zoom];
      let depth = base;
      (function lay(i, x, d) {
        let cx = x;
        for (const c of t.kids[i]) {
          const w = t.tot[c] * scale;
          if (w >= 0.5) {
            rows.push({ i: c, d, x: cx, w });
            if (d > depth) depth = d;
            lay(c, cx, d + 1);
          }
          cx += w;
        }
      })(s.zoom, 0, base + 1);
      const H = (depth + 1) * ROW + 2;
      const svg = VT.svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
        'aria-label': `flame graph, ${m.what}` });
      for (const r of rows) {
        const name = nameOf(f, t, r.i, m);
        const onPath = r.d < base;
        // boxes wide enough to read are keyboard stops: Tab to one, Enter zooms, its tooltip shows
        const g = VT.svg('g', { class: 'fn', 'data-frame': name, 'data-node': r.i, tabindex: r.w >= 40 ? 0 : null,
          role: r.w >= 40 ? 'button' : null, 'aria-label': r.w >= 40 ? name : null });
        const rect = VT.svg('rect', { class: onPath ? 'fr fz' : 'fr', x: r.x.toFixed(1), y: r.d * ROW, width: Math.max(0.5, r.w - 0.5).toFixed(1),
          height: ROW - 1, fill: onPath ? null : colorOf(f, t, r.i) });
        g.appendChild(rect);
        const chars = Math.floor((r.w - 6) / 6.7);
        if (chars >= 3) {
          const label = name.length > chars ? name.slice(0, chars - 1) + '…' : name;
          g.appendChild(VT.svg('text', { x: (r.x + 3).toFixed(1), y: r.d * ROW + 12.5, fill: onPath ? VT.color('fg') : null }, label));
        }
        const info = () => {
          const fr = r.i > 0 && r.i < t.n ? f.frames[f.frame[r.i]] : null;
          const share = (100 * t.tot[r.i] / t.tot[0]).toFixed(1);
          return `${name}${fr && fr[1] ? '\nin ' + fr[1] : ''}${fr && fr[3] ? ' (inlined)' : ''}${fr && fr[2] ? '\nPython frame' : ''}\n` +
            `${fmt(t.tot[r.i])}, ${share}% of ${fmt(t.tot[0])}` + (t.siteOf[r.i] >= 0 ? '\nends site ' + proc.sites[t.siteOf[r.i]].title : '');
        };
        g.addEventListener('mousemove', (ev) => VT.tip.show(ev, info()));
        g.addEventListener('mouseleave', () => VT.tip.hide());
        const zoom = () => { s.zoom = r.i === s.zoom ? parentOf(r.i) : r.i; redraw(); };
        g.addEventListener('click', zoom);
        g.addEventListener('keydown', (ev) => {
          if (ev.key !== 'Enter' && ev.key !== ' ') return;
          ev.preventDefault();
          zoom();
          const again = box.querySelector(`g[data-node="${r.i}"]`);
          if (again) again.focus();
        });
        g.addEventListener('focus', () => {
          const b = rect.getBoundingClientRect();
          VT.tip.show({ clientX: b.left + Math.min(b.width / 2, 60), clientY: b.bottom }, info());
        });
        g.addEventListener('blur', () => VT.tip.hide());
        svg.appendChild(g);
      }
      box.appendChild(svg);
      // the zoomed box that ends a site: its panel
      if (s.zoom && t.siteOf[s.zoom] >= 0) {
        const si = t.siteOf[s.zoom];
        foot.appendChild(VT.el('p', {}, `${nameOf(f, t, s.zoom, m)}: ${fmt(t.tot[s.zoom])} ends the site `,
          VT.el('button', { class: 'vt-linkish', id: 'vt-flame-site', onclick: () => VT.openSite(pi, si) }, proc.sites[si].title),
          ` (${proc.sites[si].verdict})`));
      }
      const notes = [];
      if (m.otherSites > 0) notes.push(`${m.otherSites} site${m.otherSites === 1 ? '' : 's'} not drawn one by one (the graph draws at most ${f.max_sites} sites: those of the peak compositions, the ${f.max_each} largest at exit and the ${f.max_each} fastest growing): their ${fmt(m.other)} is the box "(${m.otherSites} other sites)"`);
      if (f.deep_stacks > 0) notes.push(`${f.deep_stacks} stack${f.deep_stacks === 1 ? '' : 's'} deeper than ${f.max_depth} frames: the outermost frames folded into one box`);
      if (s.mode === 'peak' && s.device !== 'all' && f.devices.length) notes.push('the device\'s own peak composition (it may have peaked at another moment than the process)');
      for (const n of notes) foot.appendChild(VT.el('p', {}, n + '.'));
    }
    live = { pi, zoomOut() { if (s.zoom) { const p = s.zoom >= f.parent.length ? 0 : f.parent[s.zoom]; s.zoom = p; redraw(); } } };
    redraw();
  }

  // Another view's way in (the heat map's click): process pi's graph in measure mode,
  // zoomed to the box that ends site si when the graph has it.
  VT.flameFocus = function (pi, si, mode) {
    const f = VT.data.procs[pi] && VT.data.procs[pi].flame;
    if (!f) return;
    const s = st(pi, f);
    s.mode = mode || s.mode;
    s.device = 'all';
    const k = f.site.indexOf(si);
    s.zoom = k >= 0 ? f.leaf[k] : 0;
  };
  VT.onEscape.push(() => {
    const c = VT.current();
    if (live && c.view === 'flame' && c.pi === live.pi) live.zoomOut();
  });
  VT.addView({ id: 'flame', title: 'Flame graph', order: 20, scope: 'proc', render });
})();
