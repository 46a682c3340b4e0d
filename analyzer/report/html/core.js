// core.js — the HTML report's shell: reads the page's data (#vt-data, shape in
// analyzer/report/vt_report_html.h), draws a process picker, a theme switch and one
// tab per view into #vt-app, and offers the views their common tools.
//
// A view registers itself, in any script after this one:
//   VT.addView({id: 'timeline', title: 'Timeline', order: 10,
//               scope: 'proc',                // 'proc': drawn for the chosen process;
//                                             // 'all': across processes (shown when > 1)
//               render(el, proc, pi) {...}})  // draws into the empty element el;
//                                             // proc = VT.data.procs[pi] (scope 'proc')
// Tools: VT.data, VT.fmtBytes(n), VT.fmtSigned(n), VT.el(tag, attrs, ...kids),
// VT.svg(tag, attrs, ...kids), VT.tip.show(event, text) / VT.tip.hide(),
// VT.show(viewId), VT.selectProcess(pi), VT.openSite(pi, siteIndex) (a view sets
// VT.sitePanel = function (pi, siteIndex) to draw it; the default shows the static
// table), VT.theme(). Keyboard: Left/Right/Home/End move between the tabs, Enter or
// Space opens one; 'd' switches the theme; Escape calls VT.onEscape handlers.
// Once the first view is drawn the page sets the performance mark 'vt-ready'
// (bench/html_paint.mjs reads it). Nothing is loaded from anywhere: the data and the
// code are in the page.
'use strict';
(function () {
  const VT = (window.VT = window.VT || {});
  const views = [];
  let cur = { pi: 0, view: null };
  let started = false;

  VT.fmtBytes = function (n) {
    if (n === null || n === undefined || isNaN(n)) return '?';
    const neg = n < 0;
    let v = Math.abs(n);
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    const s = i === 0 ? String(Math.round(v)) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
    return (neg ? '-' : '') + s.replace(/\.0+$|(\.\d*?)0+$/, '$1') + ' ' + u[i];
  };
  VT.fmtSigned = function (n) { return (n > 0 ? '+' : '') + VT.fmtBytes(n); };

  function build(ns, tag, attrs, kids) {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of kids.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  // Elements from data, never from markup strings: names in the data stay text.
  VT.el = (tag, attrs, ...kids) => build(null, tag, attrs, kids);
  // The SVG namespace as the HTML parser gave it to the page's empty <svg id="vt-ns">
  // (no address written in the code).
  const svgNS = (document.getElementById('vt-ns') || {}).namespaceURI;
  VT.svg = (tag, attrs, ...kids) => build(svgNS, tag, attrs, kids);

  const tipEl = VT.el('div', { class: 'vt-tip', role: 'tooltip', id: 'vt-tip' });
  VT.tip = {
    el: tipEl,
    show(ev, text) {
      tipEl.textContent = text;
      tipEl.style.display = 'block';
      const x = Math.min(ev.clientX + 14, window.innerWidth - tipEl.offsetWidth - 8);
      const y = ev.clientY + 16 + tipEl.offsetHeight > window.innerHeight ? ev.clientY - tipEl.offsetHeight - 8 : ev.clientY + 16;
      tipEl.style.left = Math.max(4, x) + 'px';
      tipEl.style.top = Math.max(4, y) + 'px';
    },
    hide() { tipEl.style.display = 'none'; },
  };

  VT.addView = function (v) {
    views.push(v);
    views.sort((a, b) => (a.order || 0) - (b.order || 0));
    if (started) draw();
  };
  VT.onEscape = [];

  function visibleViews() {
    const many = VT.data.procs.length > 1;
    return views.filter((v) => v.scope !== 'all' || many);
  }

  VT.theme = function (t) {
    const root = document.documentElement;
    if (t === undefined) t = root.dataset.theme === 'dark' ? 'light' : 'dark';
    root.dataset.theme = t;
    const b = document.getElementById('vt-theme');
    if (b) b.setAttribute('aria-pressed', String(t === 'dark'));
    if (!started) return;
    const had = document.activeElement && document.activeElement.id;
    draw();   // SVG colours are read from the style sheet at draw time
    // the redrawn view's control of the same id takes the focus back (keyboard users keep their place)
    const again = had && document.activeElement === document.body && document.getElementById(had);
    if (again) again.focus();
  };
  VT.color = (name) => getComputedStyle(document.documentElement).getPropertyValue('--' + name).trim();

  VT.selectProcess = function (pi) {
    cur.pi = Math.max(0, Math.min(VT.data.procs.length - 1, pi));
    const pick = document.getElementById('vt-proc');
    if (pick) pick.value = String(cur.pi);
    draw();
  };
  VT.show = function (id) {
    if (visibleViews().some((v) => v.id === id)) cur.view = id;
    draw();
    const t = document.getElementById('vt-tab-' + id);
    if (t) t.focus();
  };
  VT.current = () => ({ pi: cur.pi, view: cur.view });
  VT.sitePanel = null;
  VT.openSite = function (pi, si) {
    if (pi !== cur.pi) VT.selectProcess(pi);
    if (VT.data.procs[pi] && VT.data.procs[pi].reduced) return;   // its note is drawn instead
    if (VT.sitePanel) return VT.sitePanel(pi, si);
    const st = document.getElementById('vt-static');
    if (st) st.scrollIntoView();
  };

  let bar, body;
  function draw() {
    const vs = visibleViews();
    if (!vs.length) return;
    if (!vs.some((v) => v.id === cur.view)) cur.view = vs[0].id;
    bar.replaceChildren();
    vs.forEach((v) => {
      const on = v.id === cur.view;
      bar.appendChild(VT.el('button', { id: 'vt-tab-' + v.id, role: 'tab', 'aria-selected': String(on),
        'aria-controls': 'vt-body', tabindex: on ? '0' : '-1', onclick: () => VT.show(v.id) }, v.title));
    });
    body.replaceChildren();
    VT.tip.hide();
    const v = vs.find((x) => x.id === cur.view);
    const el = VT.el('div', { class: 'vt-view', 'data-view': v.id });
    body.appendChild(el);
    const proc = VT.data.procs[cur.pi];
    if (v.scope !== 'all' && proc && proc.reduced) {   // one of many processes: its views are left out
      el.appendChild(VT.el('p', { class: 'vt-empty vt-reduced' },
        `This page keeps the views of ${VT.data.procs_full} of its ${VT.data.procs.length} processes (those with an ` +
        'out-of-memory event, then the most leaks, then the largest peak). To see this one: ',
        VT.el('code', {}, proc.rank !== null && proc.rank !== undefined ? `vramtrace report --format html --rank ${proc.rank}`
          : `vramtrace report --format html ${proc.file}`)));
      return;
    }
    try {
      v.render(el, VT.data.procs[cur.pi], cur.pi);
    } catch (e) {
      el.replaceChildren(VT.el('p', { class: 'bad' }, 'This view could not be drawn: ' + e.message));
      console.error(e);
    }
  }

  function keys(ev) {
    // form controls keep their keys, but Escape (close the panel) works from them too
    if (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName) && ev.key !== 'Escape') return;
    const vs = visibleViews();
    const inTabs = ev.target && ev.target.getAttribute && ev.target.getAttribute('role') === 'tab';
    if (inTabs && /^(ArrowLeft|ArrowRight|Home|End)$/.test(ev.key)) {
      let i = vs.findIndex((v) => v.id === cur.view);
      i = ev.key === 'Home' ? 0 : ev.key === 'End' ? vs.length - 1 : (i + (ev.key === 'ArrowLeft' ? -1 : 1) + vs.length) % vs.length;
      VT.show(vs[i].id);
      ev.preventDefault();
    } else if (ev.key === 'Escape') {
      VT.tip.hide();
      VT.onEscape.forEach((f) => f());
    } else if (ev.key === 'd' && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      VT.theme();
    }
  }

  function start() {
    const src = document.getElementById('vt-data');
    const app = document.getElementById('vt-app');
    if (!src || !app) return;
    VT.data = JSON.parse(src.textContent);
    const dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    const top = VT.el('div', { class: 'vt-bar' });
    if (VT.data.procs.length > 1) {
      top.appendChild(VT.el('label', { for: 'vt-proc' }, 'Process '));
      const pick = VT.el('select', { id: 'vt-proc', onchange: (e) => VT.selectProcess(+e.target.value) },
        VT.data.procs.map((p, i) => VT.el('option', { value: i }, p.title)));
      top.appendChild(pick);
    } else if (VT.data.procs.length === 1) {
      top.appendChild(VT.el('span', { class: 'meta' }, VT.data.procs[0].title));
    }
    top.appendChild(VT.el('span', { class: 'vt-spacer' }));
    top.appendChild(VT.el('button', { id: 'vt-theme', 'aria-pressed': String(dark), title: 'light or dark theme (d)',
      onclick: () => VT.theme() }, 'Dark theme'));
    bar = VT.el('div', { class: 'vt-bar', role: 'tablist', 'aria-label': 'views' });
    body = VT.el('div', { id: 'vt-body', role: 'tabpanel' });
    app.replaceChildren(top, bar, body);
    document.body.appendChild(tipEl);
    document.addEventListener('keydown', keys);
    started = true;
    if (!VT.data.procs.length) {
      body.appendChild(VT.el('p', { class: 'vt-empty' }, 'No process in this report.'));
      return;
    }
    draw();
    if (window.performance && performance.mark) performance.mark('vt-ready');   // the views are drawn
  }
  // The view scripts come after this one in the page: start once all have run.
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else setTimeout(start, 0);
})();
