// Browser test of the HTML report: Debian's chromium, driven by playwright-core, loads
// reports from file:// and the page is read back from its DOM.
//
// node report.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML
//   NODEDIR       folder whose node_modules holds playwright-core (npm ci by run_browser.sh)
//   ARTIFACTS     folder the screenshots are written to (kept after the test)
//   TRAINING_HTML report of the training-loop example (one leak: remember_batch)
//   FRAGMENTATION_HTML report of the fragmentation example (an OOM by fragmentation)
// Exit 0 when every check holds, 1 with one `FAIL:` line per failed check otherwise.
// Launch options are those that work as root on a closed network: no sandbox, no GPU,
// no background networking, a fresh profile folder removed afterwards.
import { createRequire } from 'node:module';
import { readFileSync, mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';

const [nodeDir, artifacts, trainingHtml, fragHtml] = process.argv.slice(2);
if (!fragHtml) {
  console.error('usage: node report.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML');
  process.exit(2);
}
const fails = [];
function check(ok, what) {
  if (!ok) { fails.push(what); console.log('FAIL: ' + what); }
  return ok;
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

// Opens FILE in a fresh page; returns the page and the errors and outside requests seen.
async function open(browser, file) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  const seen = { errors: [], outside: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => seen.errors.push('page error: ' + e.message));
  page.on('request', (r) => { if (!/^(?:file|data|about):/.test(r.url())) seen.outside.push(r.url()); });
  const url = pathToFileURL(resolve(file)).href;
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  check(resp === null || resp.ok(), `${file}: did not load`);
  return { page, seen };
}
function noErrors(name, seen) {
  check(seen.errors.length === 0, `${name}: ${seen.errors.length} console/page error(s): ${seen.errors.slice(0, 3).join(' | ')}`);
  check(seen.outside.length === 0, `${name}: requests outside the page: ${seen.outside.slice(0, 3).join(' ')}`);
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

async function main() {
  const require = createRequire(join(resolve(nodeDir), 'package.json'));
  const { chromium } = require('playwright-core');
  mkdirSync(artifacts, { recursive: true });
  staticChecks('training_loop', readFileSync(trainingHtml, 'latin1'));
  staticChecks('fragmentation', readFileSync(fragHtml, 'latin1'));

  const profile = mkdtempSync(join(tmpdir(), 'vt-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
    timeout: 60000,
  });
  try {
    console.log('chromium ' + (browser.browser() ? browser.browser().version() : '?'));
    // training loop: loads clean, the leaks table names remember_batch, the curves are drawn
    {
      const { page, seen } = await open(browser, trainingHtml);
      noErrors('training_loop', seen);
      const leaks = await tableAfter(page, 'Leaks');
      console.log(`training_loop: ${leaks.length} leak row(s): ${leaks.map((r) => r[r.length - 1].split('\n')[0]).join('; ')}`);
      check(leaks.length === 1, `training_loop: expected 1 row in the leaks table, found ${leaks.length}`);
      check(leaks.some((r) => r.join(' ').includes('remember_batch')), 'training_loop: remember_batch not in the leaks table');
      check(leaks.some((r) => /^\+?3(\.0+)? MiB/.test(r[0])), `training_loop: leak growth is not 3 MiB/step: ${leaks.map((r) => r[0])}`);
      const shot = join(artifacts, 'training_loop.png');
      const png = await page.screenshot({ path: shot, fullPage: false });
      console.log('screenshot: ' + shot);
      const px = pngPixels(png);
      for (const [name, rgb] of [['total (#1f77b4)', [0x1f, 0x77, 0xb4]], ['leak (#d62728)', [0xd6, 0x27, 0x28]]]) {
        const n = countColor(px, rgb);
        console.log(`training_loop: ${name}: ${n} pixels`);
        check(n > 300, `training_loop: the ${name} curve is not visible in the screenshot (${n} pixels)`);
      }
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
      const visible = await page.getByText('fragmentation', { exact: true }).first().isVisible();
      check(visible, 'fragmentation: the verdict text is not visible');
      const shot = join(artifacts, 'fragmentation.png');
      await page.screenshot({ path: shot, fullPage: true });
      console.log('screenshot: ' + shot);
      await page.close();
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(
  () => { console.log(fails.length ? `browser: FAILED (${fails.length})` : 'browser: ok'); process.exit(fails.length ? 1 : 0); },
  (e) => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
