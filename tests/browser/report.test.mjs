// Browser test of the HTML report: Debian's chromium, driven by playwright-core, loads
// reports from file:// and the page is read back from its DOM.
//
// node report.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML
//   NODEDIR       folder whose node_modules holds playwright-core (npm ci by run_browser.sh)
//   ARTIFACTS     folder the screenshots are written to (kept after the test)
//   TRAINING_HTML report of the training-loop example (one leak: remember_batch)
//   FRAGMENTATION_HTML report of the fragmentation example (an OOM by fragmentation)
// Exit 0 when every check holds, 1 with one `FAIL:` line per failed check otherwise.
// Chromium is launched and pages are opened by lib.mjs (shared with the other browser tests).
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { fails, check, launch, open, noErrors } from './lib.mjs';

const [nodeDir, artifacts, trainingHtml, fragHtml] = process.argv.slice(2);
if (!fragHtml) {
  console.error('usage: node report.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML');
  process.exit(2);
}

// The Must-show static checks over the file's text: nothing loaded from the network,
// no font from outside the page, no code built from strings.
function staticChecks(name, text) {
  const loads = [
    /\b(?:src|href|action|formaction|poster|srcset|data)\s*=\s*["']?\s*(?:https?:)?\/\//gi,
    /url\(\s*["']?\s*(?:https?:)?\/\//gi,
    /@import/gi,
    /\b(?:fetch|importScripts|XMLHttpRequest|WebSocket|EventSource)\s*\(/g,
    /\bimport\s*\(/g,
  ];
  for (const re of loads) {
    const m = text.match(re);
    check(!m, `${name}: a load from outside the page (${re}): ${m && m[0]}`);
  }
  // http: or https: anywhere but the SVG namespace (an identifier, never fetched)
  const urls = text.replace(/xmlns(?::\w+)?="http:\/\/www\.w3\.org\/[^"]*"/g, '').match(/https?:[^\s"'<>]*/gi);
  check(!urls, `${name}: http:/https: address in the page: ${urls && urls.slice(0, 3).join(' ')}`);
  check(!/@font-face|<link\b[^>]*\brel\s*=\s*["']?(?:stylesheet|preload|font)/i.test(text),
        `${name}: an external font or stylesheet (@font-face or <link rel=...>)`);
  const ev = text.match(/\beval\s*\(|\bnew\s+Function\s*\(|\bset(?:Timeout|Interval)\s*\(\s*["'`]/);
  check(!ev, `${name}: code built from a string (${ev && ev[0]})`);
  const csp = text.match(/<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/i);
  check(csp && /default-src 'none'/.test(csp[1]) && !/unsafe-eval/.test(csp[1]),
        `${name}: no content security policy with default-src 'none' (or it allows eval)`);
}

// RGB rows of an 8-bit non-interlaced RGB/RGBA PNG (what Chromium's screenshots are).
function pngPixels(buf) {
  let off = 8, w = 0, h = 0, type = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off), tag = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (tag === 'IHDR') {
      w = body.readUInt32BE(0); h = body.readUInt32BE(4); type = body[9];
      if (body[8] !== 8 || (type !== 2 && type !== 6) || body[12] !== 0) throw new Error('unsupported PNG');
    } else if (tag === 'IDAT') idat.push(body);
    off += 12 + len;
  }
  const bpp = type === 6 ? 4 : 3, stride = w * bpp, raw = inflateSync(Buffer.concat(idat));
  const out = Buffer.alloc(stride * h);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[dst + x - bpp] : 0, b = y ? out[dst - stride + x] : 0;
      const c = x >= bpp && y ? out[dst - stride + x - bpp] : 0;
      let p = raw[src + x];
      if (f === 1) p += a;
      else if (f === 2) p += b;
      else if (f === 3) p += (a + b) >> 1;
      else if (f === 4) {
        const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c);
        p += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[dst + x] = p & 255;
    }
  }
  return { w, h, bpp, out };
}
function countColor({ w, h, bpp, out }, [r, g, b]) {
  let n = 0;
  for (let i = 0; i < w * h * bpp; i += bpp)
    if (Math.abs(out[i] - r) < 24 && Math.abs(out[i + 1] - g) < 24 && Math.abs(out[i + 2] - b) < 24) n++;
  return n;
}

// The rows' text of the table that follows the h3 titled TITLE (empty when absent).
async function tableAfter(page, title) {
  return page.evaluate((t) => {
    for (const h of document.querySelectorAll('h3')) {
      if (h.textContent.trim() !== t) continue;
      let n = h.nextElementSibling;
      if (!n || n.tagName !== 'TABLE') return [];
      return [...n.querySelectorAll('tr')].slice(1).map((tr) => [...tr.cells].map((c) => c.innerText.trim()));
    }
    return [];
  }, title);
}

// A point inside the timeline's area of site SI (CLS: vt-tl-area, its live bytes at the
// steps' ends; vt-tl-inner, its most inside the steps), in page coordinates (null: none).
async function pointInArea(page, si, cls = 'vt-tl-area') {
  return page.evaluate(([si, cls]) => {
    const path = document.querySelector(`#vt-tl-svg path.${cls}[data-site="${si}"]`);
    if (!path) return null;
    const svg = path.ownerSVGElement, b = path.getBBox(), m = svg.getScreenCTM();
    let best = null;
    for (let fx = 0.9; fx >= 0.3 && !best; fx -= 0.1)
      for (let fy = 0.05; fy < 1 && !best; fy += 0.05) {
        const p = new DOMPoint(b.x + b.width * fx, b.y + b.height * fy);
        if (path.isPointInFill(p) && path.isPointInFill(new DOMPoint(p.x, p.y + 3)) && path.isPointInFill(new DOMPoint(p.x, p.y - 3))) best = p;
      }
    if (!best) return null;
    const q = best.matrixTransform(m);
    return { x: q.x, y: q.y };
  }, [si, cls]);
}
const tickText = (page) => page.evaluate(() => [...document.querySelectorAll('#vt-tl-svg .vt-tl-xtick')].map((t) => t.textContent).join(','));

// The timeline and the site panel of a report with one leak, remember_batch.
async function timelineChecks(page, name) {
  const data = await page.evaluate(() => window.VT && VT.data);
  check(data && data.procs.length === 1, `${name}: no data object with one process`);
  if (!data) return;
  const proc = data.procs[0];
  const leakSi = proc.sites.findIndex((s) => s.verdict === 'leak');
  check(leakSi >= 0 && /remember_batch/.test(proc.sites[leakSi].title), `${name}: the leaking site is not remember_batch`);
  check(await page.locator('#vt-tl-svg').count() === 1, `${name}: the timeline is not drawn`);
  // the header's peak is on the chart: its line, labelled with the same size
  const peakText = await page.evaluate(() => (document.querySelector('#vt-tl-svg .vt-tl-label-peak') || {}).textContent || '');
  const headerPeak = await page.evaluate((b) => VT.fmtBytes(b), proc.peak_bytes);
  console.log(`${name}: peak line "${peakText}", header peak ${headerPeak}`);
  check(peakText === 'peak ' + headerPeak, `${name}: the chart's peak line "${peakText}" is not the header's peak ${headerPeak}`);
  const bandTop = Math.max(...proc.timeline.views[0].band);
  const endTop = Math.max(...proc.timeline.step.map((_, j) => proc.timeline.views[0].sites.reduce((a, s) => a + s.live[j], 0)
    + proc.timeline.views[0].other.live[j]));
  console.log(`${name}: within-step band up to ${headerPeak && bandTop}, step ends up to ${endTop}`);
  check(bandTop > endTop, `${name}: the band shows no within-step peak above the steps' ends (${bandTop} <= ${endTop})`);
  const shot = join(artifacts, `${name}.png`);
  const px = pngPixels(await page.screenshot({ path: shot, fullPage: false }));
  console.log('screenshot: ' + shot);
  const red = countColor(px, [0xd6, 0x27, 0x28]);
  console.log(`${name}: leak area (#d62728): ${red} pixels`);
  check(red > 300, `${name}: the leak's area is not visible in the screenshot (${red} pixels)`);

  // the lines' labels (peak, driver, NVML, ...) are legible: no two boxes overlap or
  // touch (at least 2 px apart; the training loop's peak and driver lines are 27 MiB apart)
  const boxes = await page.evaluate(() => [...document.querySelectorAll('#vt-tl-svg .vt-tl-label')].map((t) => {
    const r = t.getBoundingClientRect();
    return { text: t.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom };
  }));
  console.log(`${name}: line labels: ${boxes.map((b) => `"${b.text}" y ${b.t.toFixed(1)}-${b.b.toFixed(1)}`).join('; ')}`);
  check(boxes.some((b) => /^peak /.test(b.text)) && boxes.some((b) => /^driver: /.test(b.text)),
        `${name}: the peak and driver lines are not both labelled`);
  for (let i = 0; i < boxes.length; i++)
    for (let k = i + 1; k < boxes.length; k++) {
      const a = boxes[i], c = boxes[k];
      check(a.r + 2 <= c.l || c.r + 2 <= a.l || a.b + 2 <= c.t || c.b + 2 <= a.t,
            `${name}: the labels "${a.text}" and "${c.text}" overlap or touch (${a.t.toFixed(1)}-${a.b.toFixed(1)}, ${c.t.toFixed(1)}-${c.b.toFixed(1)})`);
    }
  // a churn site (its memory is given back inside each step) is visible: a point inside
  // its area is its own path, on top, and hovering it names it
  const churnSi = proc.sites.reduce((best, s, i) => (s.verdict === 'churn' && (best < 0 || s.peak > proc.sites[best].peak) ? i : best), -1);
  check(churnSi >= 0, `${name}: no churn site`);
  if (churnSi >= 0) {
    const cp = await pointInArea(page, churnSi, 'vt-tl-inner');
    check(cp, `${name}: no area drawn for churn site ${proc.sites[churnSi].title} inside the steps`);
    if (cp) {
      const hit = await page.evaluate(([x, y]) => {
        const e = document.elementFromPoint(x, y);
        return e ? `${e.tagName}.${e.getAttribute('class')}[${e.getAttribute('data-site')}]` : 'nothing';
      }, [cp.x, cp.y]);
      console.log(`${name}: churn site ${churnSi} (${proc.sites[churnSi].title}): element at its area: ${hit}`);
      check(hit === `path.vt-tl-inner[${churnSi}]`, `${name}: the churn site's area is covered: ${hit} is on top of it`);
      await page.mouse.move(cp.x, cp.y);
      const ct = (await page.locator('#vt-tip').isVisible()) ? await page.locator('#vt-tip').innerText() : '';
      check(ct.includes(proc.sites[churnSi].title) && /inside step \d+/.test(ct),
            `${name}: hovering the churn site's area does not name it: ${JSON.stringify(ct)}`);
    }
  }

  // hover the leak's area: the tooltip names the site, its bytes and the step
  const pt = await pointInArea(page, leakSi);
  check(pt, `${name}: no point inside the leak's area`);
  if (!pt) return;
  await page.mouse.move(pt.x, pt.y);
  const tip = (await page.locator('#vt-tip').isVisible()) ? await page.locator('#vt-tip').innerText() : '';
  console.log(`${name}: tooltip: ${tip.replace(/\n/g, ' | ')}`);
  check(/remember_batch/.test(tip) && /\d (?:B|KiB|MiB|GiB)\b/.test(tip) && /\bstep \d+/.test(tip),
        `${name}: the tooltip lacks site, bytes or step: ${JSON.stringify(tip)}`);
  check(!/\b\d{6,} ?B?\b/.test(tip), `${name}: raw bytes in the tooltip: ${JSON.stringify(tip)}`);

  // click it: the site's panel, with its stack and its rule, takes the focus
  await page.mouse.click(pt.x, pt.y);
  const panel = page.locator('#vt-site-panel');
  check(await panel.isVisible(), `${name}: clicking the leak's area opened no site panel`);
  if (await panel.isVisible()) {
    const stack = await panel.locator('.vt-sp-stack li').allInnerTexts();
    const rule = await panel.locator('.vt-sp-rule').innerText();
    console.log(`${name}: panel stack: ${stack.slice(0, 3).join(' | ')}; rule: ${rule}`);
    check(stack.length >= 2 && /remember_batch/.test(stack[0]) && stack.some((f) => /\bmain\b/.test(f)),
          `${name}: the panel's stack is not remember_batch <- main: ${stack.join(' | ')}`);
    check(/floor rose at each of the last \d+ steps/.test(rule) && /3 MiB each/.test(rule),
          `${name}: the panel's rule is not "floor rose at each of the last N steps, 3 MiB each": ${rule}`);
    const focusIn = await page.evaluate(() => !!document.activeElement && !!document.activeElement.closest('#vt-site-panel'));
    check(focusIn, `${name}: the focus did not move into the panel`);
    const pshot = join(artifacts, `${name}-panel.png`);
    await page.screenshot({ path: pshot, fullPage: false });
    console.log('screenshot: ' + pshot);
    await page.keyboard.press('Escape');
    check(await panel.count() === 0, `${name}: Escape did not close the panel`);
  }

  // keyboard: tab to the zoom-in button and press it; the chart's range narrows
  const before = await tickText(page);
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement && document.activeElement.id === 'vt-tl-zoomin');
  }
  check(reached, `${name}: Tab never reached the timeline's zoom-in button`);
  if (reached) {
    await page.keyboard.press('Enter');
    const after = await tickText(page);
    console.log(`${name}: x ticks ${before} -> ${after} (zoom in by keyboard)`);
    check(after !== before, `${name}: the zoom-in button (Enter) did not change the chart's range`);
    await page.locator('#vt-tl-svg').focus();
    await page.keyboard.press('0');
    check(await tickText(page) === before, `${name}: the key 0 on the chart did not reset the zoom`);
  }
  // a legend button opens the panel from the keyboard; Escape gives the focus back to it
  const btn = page.locator(`.vt-tl-site[data-site="${leakSi}"]`);
  await btn.focus();
  await page.keyboard.press('Enter');
  check(await panel.isVisible(), `${name}: Enter on the legend's button opened no panel`);
  await page.keyboard.press('Escape');
  const back = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('data-site'));
  check(back === String(leakSi), `${name}: the focus did not come back to the legend's button (${back})`);

  // drag to zoom, then reset
  const box = await page.locator('#vt-tl-svg').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5, { steps: 5 });
  await page.mouse.up();
  const dragged = await tickText(page);
  console.log(`${name}: x ticks after a drag: ${dragged}`);
  check(dragged !== before, `${name}: dragging across the chart did not zoom`);
  await page.locator('#vt-tl-reset').click();
  check(await tickText(page) === before, `${name}: Reset zoom did not restore the whole run`);
  // over time: the axis in seconds, the tooltip still names the step; and back
  const picker = await page.locator('#vt-tl-x').count();
  check(picker === 1, `${name}: no steps/time picker (the snapshots have times)`);
  if (picker) {
    await page.selectOption('#vt-tl-x', 'time');
    const tt = await tickText(page);
    console.log(`${name}: x ticks over time: ${tt}`);
    check(/^[\d.]+ m?s(,[\d.]+ m?s)+$/.test(tt), `${name}: the time axis is not in seconds: ${tt}`);
    const p2 = await pointInArea(page, leakSi);
    if (p2) {
      await page.mouse.move(p2.x, p2.y);
      const t2 = await page.locator('#vt-tip').innerText();
      check(/remember_batch/.test(t2) && /\bstep \d+ \(ended at [\d.]+ m?s\)/.test(t2), `${name}: the tooltip over time: ${JSON.stringify(t2)}`);
    }
    await page.selectOption('#vt-tl-x', 'step');
    check(await tickText(page) === before, `${name}: back to steps, the axis is not the steps'`);
  }
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  staticChecks('training_loop', readFileSync(trainingHtml, 'latin1'));
  staticChecks('fragmentation', readFileSync(fragHtml, 'latin1'));

  const { browser, close } = await launch(nodeDir);
  try {
    console.log('chromium ' + (browser.browser() ? browser.browser().version() : '?'));
    // training loop: loads clean, the leaks table names remember_batch, the curves are drawn
    {
      const { page, seen } = await open(browser, trainingHtml);
      const leaks = await tableAfter(page, 'Leaks');
      console.log(`training_loop: ${leaks.length} leak row(s): ${leaks.map((r) => r[r.length - 1].split('\n')[0]).join('; ')}`);
      check(leaks.length === 1, `training_loop: expected 1 row in the leaks table, found ${leaks.length}`);
      check(leaks.some((r) => r.join(' ').includes('remember_batch')), 'training_loop: remember_batch not in the leaks table');
      check(leaks.some((r) => /^\+?3(\.0+)? MiB/.test(r[0])), `training_loop: leak growth is not 3 MiB/step: ${leaks.map((r) => r[0])}`);
      await timelineChecks(page, 'training_loop');
      noErrors('training_loop', seen);   // loading, hovering, clicking, zooming
      await page.close();
    }
    // the dark theme: the same page drawn with the dark colours
    {
      const { page, seen } = await open(browser, trainingHtml);
      await page.locator('#vt-theme').click();
      const theme = await page.evaluate(() => document.documentElement.dataset.theme);
      check(theme === 'dark', `training_loop: the theme button did not switch to dark (${theme})`);
      const shot = join(artifacts, 'training_loop-dark.png');
      const px = pngPixels(await page.screenshot({ path: shot, fullPage: false }));
      console.log('screenshot: ' + shot);
      const dark = countColor(px, [0x15, 0x17, 0x1a]), light = countColor(px, [0xff, 0xff, 0xff]);
      const leak = countColor(px, [0xd6, 0x27, 0x28]);
      console.log(`training_loop dark: background ${dark} px, white ${light} px, leak area ${leak} px`);
      check(dark > px.w * px.h / 3 && light < dark / 10, `training_loop: the dark theme is not dark (${dark} dark, ${light} white pixels)`);
      check(leak > 300, `training_loop: the leak's area is not drawn in the dark theme (${leak} pixels)`);
      noErrors('training_loop (dark)', seen);
      await page.close();
    }
    // fragmentation: loads clean, the OOM table gives the verdict
    {
      const { page, seen } = await open(browser, fragHtml);
      noErrors('fragmentation', seen);
      const ooms = await tableAfter(page, 'Out of memory');
      console.log(`fragmentation: ${ooms.length} OOM row(s), verdicts: ${ooms.map((r) => r[7]).join(', ')}`);
      check(ooms.length >= 1, 'fragmentation: no row in the out-of-memory table');
      check(ooms.some((r) => r[7] === 'fragmentation'), 'fragmentation: no OOM with the verdict "fragmentation"');
      const oomMarks = await page.locator('#vt-tl-svg .vt-tl-mark-oom').count();
      check(oomMarks >= 1, `fragmentation: no out-of-memory marker on the timeline (${oomMarks})`);
      const visible = await page.getByText('fragmentation', { exact: true }).first().isVisible();
      check(visible, 'fragmentation: the verdict text is not visible');
      const shot = join(artifacts, 'fragmentation.png');
      await page.screenshot({ path: shot, fullPage: true });
      console.log('screenshot: ' + shot);
      await page.close();
    }
  } finally {
    await close();
  }
}

main().then(
  () => { console.log(fails.length ? `browser: FAILED (${fails.length})` : 'browser: ok'); process.exit(fails.length ? 1 : 0); },
  (e) => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
