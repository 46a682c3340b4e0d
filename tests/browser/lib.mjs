// lib.mjs — what the browser tests of the HTML report share (report.test.mjs,
// viz.test.mjs, hostile.test.mjs): the failed-check list, Debian's chromium launched
// through playwright-core, and a page opened from file:// with its errors recorded.
// Launch options are those that work as root on a closed network: no sandbox, no GPU,
// no background networking, a fresh profile folder removed by close().
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// The failed checks so far; check() adds one `FAIL:` line per failure and returns ok.
export const fails = [];
export function check(ok, what) {
  if (!ok) { fails.push(what); console.log('FAIL: ' + what); }
  return ok;
}

// Chromium (/usr/bin/chromium) driven by the playwright-core in NODEDIR/node_modules,
// in a fresh profile. Returns { browser, close } (close also removes the profile).
export async function launch(nodeDir) {
  const require = createRequire(join(resolve(nodeDir), 'package.json'));
  const { chromium } = require('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'vt-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60000,
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Opens FILE in a fresh page of VIEWPORT size; returns the page and what it did wrong:
// seen.errors (console errors, page errors), seen.outside (requests not to file:, data:
// or about:). A load that fails is a failed check.
export async function open(browser, file, viewport = { width: 1100, height: 700 }) {
  const page = await browser.newPage({ viewport });
  const seen = { errors: [], outside: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => seen.errors.push('page error: ' + e.message));
  page.on('request', (r) => { if (!/^(?:file|data|about):/.test(r.url())) seen.outside.push(r.url()); });
  const resp = await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: 'load', timeout: 30000 });
  check(resp === null || resp.ok(), `${file}: did not load`);
  return { page, seen };
}

// The checks that a page NAME made no error and no request outside itself.
export function noErrors(name, seen) {
  check(seen.errors.length === 0, `${name}: ${seen.errors.length} console/page error(s): ${seen.errors.slice(0, 3).join(' | ')}`);
  check(seen.outside.length === 0, `${name}: requests outside the page: ${seen.outside.slice(0, 3).join(' ')}`);
}
