// html_paint.mjs — first paint of HTML reports in Debian's chromium (vt_bench.py
// --figures 20). Each file is opened ROUNDS times, each time in a fresh page of one
// headless browser, from file://; per open it reads the Paint Timing entries
// (first-paint, first-contentful-paint) and the page's 'vt-ready' mark (core.js: the
// views are drawn), all in milliseconds from navigation start.
//
// node html_paint.mjs NODEDIR ROUNDS FILE...
//   NODEDIR  folder whose node_modules holds playwright-core
// Prints one JSON object per file on its own line:
//   {"file", "first_paint_ms": [...], "fcp_ms": [...], "ready_ms": [...], "errors": [...]}
// Exit 0, 1 when the browser could not be driven.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nodeDir, roundsArg, ...files] = process.argv.slice(2);
const rounds = Math.max(1, parseInt(roundsArg, 10) || 1);
const require = createRequire(join(resolve(nodeDir), 'package.json'));
const { chromium } = require('playwright-core');

const profile = mkdtempSync(join(tmpdir(), 'vt-paint-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 }, timeout: 60000,
});
try {
  for (const file of files) {
    const out = { file, first_paint_ms: [], fcp_ms: [], ready_ms: [], errors: [] };
    for (let r = 0; r < rounds; r++) {
      const page = await browser.newPage();
      page.on('pageerror', (e) => out.errors.push(e.message));
      await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: 'load', timeout: 120000 });
      const t = await page.evaluate(async () => {
        const want = (n) => performance.getEntriesByName(n).length > 0;
        for (let i = 0; i < 200 && !(want('first-contentful-paint') && want('vt-ready')); i++)
          await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 10)));
        const at = (n) => (performance.getEntriesByName(n)[0] || {}).startTime ?? null;
        return { fp: at('first-paint'), fcp: at('first-contentful-paint'), ready: at('vt-ready') };
      });
      out.first_paint_ms.push(t.fp);
      out.fcp_ms.push(t.fcp);
      out.ready_ms.push(t.ready);
      await page.close();
    }
    console.log(JSON.stringify(out));
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
