// Browser test of the HTML report on hostile and edge inputs: names holding markup,
// "</script>", "<!--", quotes, U+2028, long multi-byte text; unusual shapes (many
// devices, many out-of-memory events, a single step). Each page must load with no
// console or page error and no content-security-policy violation, draw every view
// (each tab shown, each site's panel opened, both themes), run no script of the data's
// (no dialog, no element the page's own code did not make), and show the names as text.
//
// node hostile.test.mjs NODEDIR ARTIFACTS REPORT.html...
//   a report whose file name starts with "hostile" must show the text "</script>" and
//   "<!--" somewhere in its drawn views (the names were text, not markup).
// Exit 0 when every check holds, 1 with one `FAIL:` line per failed check otherwise.
import { mkdirSync } from 'node:fs';
import { join, resolve, basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fails, check, launch } from './lib.mjs';

const [nodeDir, artifacts, ...reports] = process.argv.slice(2);
if (!reports.length) {
  console.error('usage: node hostile.test.mjs NODEDIR ARTIFACTS REPORT.html...');
  process.exit(2);
}
mkdirSync(artifacts, { recursive: true });
const { browser, close } = await launch(nodeDir);
try {
  for (const file of reports) {
    const name = basename(file, '.html');
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    page.on('pageerror', (e) => errors.push('page error: ' + e.message));
    page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss().catch(() => {}); });
    page.on('request', (r) => { if (!/^(?:file|data|about):/.test(r.url())) errors.push('request: ' + r.url()); });
    await page.addInitScript(() => {
      window.__vtViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__vtViolations.push(e.violatedDirective + ' ' + e.blockedURI));
    });
    try {
      await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: 'load', timeout: 30000 });
    } catch (e) {
      check(false, `${name}: did not load: ${e.message.split('\n')[0]}`);
      await page.close();
      continue;
    }
    const ok = await page.evaluate(() => !!(window.VT && VT.data && VT.data.procs));
    check(ok, `${name}: no data object (the page's script did not run)`);
    if (!ok) { await page.close(); continue; }
    // every process, every tab, every site's panel, both themes
    const texts = await page.evaluate(async () => {
      const out = [];
      const tabs = () => [...document.querySelectorAll('[role="tab"]')];
      const np = VT.data.procs.length;
      for (let pi = 0; pi < np; pi++) {
        VT.selectProcess(pi);
        for (const t of tabs()) {
          t.click();
          await new Promise((r) => requestAnimationFrame(r));
          out.push(document.getElementById('vt-app').textContent);
        }
        const ns = Math.min(VT.data.procs[pi].sites.length, 40);
        for (let si = 0; si < ns; si++) {
          VT.openSite(pi, si);
          const panel = document.getElementById('vt-site-panel');
          if (panel) out.push(panel.textContent);
          for (const f of VT.onEscape || []) f();
        }
      }
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'd', bubbles: true }));
      for (const t of tabs()) { t.click(); await new Promise((r) => requestAnimationFrame(r)); }
      return out.join('\n');
    });
    // the theme key keeps the keyboard's place: the focused tab is focused again after the redraw
    const keep = await page.evaluate(() => {
      const t = document.querySelector('[role="tab"][aria-selected="true"]');
      if (!t) return 'no tab';
      t.focus();
      document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'd', bubbles: true }));
      return document.activeElement.id === t.id ? 'kept' : 'lost to ' + document.activeElement.tagName;
    });
    check(keep === 'kept', `${name}: pressing d on the selected tab: focus ${keep}`);
    // Escape closes the site panel from a form control of the view too (the timeline's checkbox)
    const esc = await page.evaluate(() => {
      VT.show(document.querySelector('[role="tab"]').id.replace('vt-tab-', ''));
      const box = document.querySelector('#vt-app input, #vt-app select');
      if (!box || !VT.data.procs[VT.current().pi].sites.length) return 'none';
      VT.openSite(VT.current().pi, 0);
      if (!document.getElementById('vt-site-panel')) return 'none';
      box.focus();
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
      return document.getElementById('vt-site-panel') ? 'open' : 'closed';
    });
    check(esc !== 'open', `${name}: Escape from a form control left the site panel open`);
    const ownScripts = await page.evaluate(() => document.querySelectorAll('script').length);
    const strays = await page.evaluate(() => [...document.querySelectorAll('img, iframe, object, embed, b, script:not([id="vt-data"])')]
      .filter((e) => e.tagName !== 'SCRIPT' || e.textContent.startsWith('<') || e.parentNode !== document.body).map((e) => e.tagName));
    const violations = await page.evaluate(() => window.__vtViolations);
    const shot = join(artifacts, `${name}.png`);
    await page.screenshot({ path: shot, fullPage: false });
    console.log(`${name}: ${texts.length} characters of views' text, ${ownScripts} scripts; screenshot ${shot}`);
    check(errors.length === 0, `${name}: ${errors.length} error(s): ${errors.slice(0, 3).join(' | ')}`);
    check(violations.length === 0, `${name}: content security policy violations: ${violations.slice(0, 3).join(' | ')}`);
    check(strays.length === 0, `${name}: elements made from the data's markup: ${strays.join(' ')}`);
    if (name === 'sites600') {   // curves of the first sites only; the panel of a later one says so
      const nocurve = await page.evaluate(() => [10, 590].map((si) => {
        VT.openSite(0, si);
        const p = document.getElementById('vt-site-panel');
        const r = p ? [!!p.querySelector('svg.vt-sp-curve'), !!p.querySelector('.vt-sp-nocurve')] : null;
        for (const f of VT.onEscape || []) f();
        return r;
      }));
      check(JSON.stringify(nocurve) === '[[true,false],[false,true]]',
            `${name}: site 10 has no curve or site 590's panel does not say its curve was not kept: ${JSON.stringify(nocurve)}`);
    }
    if (name.startsWith('hostile')) {
      check(texts.includes('</script>') && texts.includes('<!--'), `${name}: the hostile names are not shown as text`);
      // a name of one long word wraps: the page is not made many screens wide by it
      const wide = await page.evaluate(async () => {
        VT.show('timeline');
        await new Promise((r) => requestAnimationFrame(r));
        return document.documentElement.scrollWidth;
      });
      check(wide <= 1400, `${name}: a long name makes the page ${wide} px wide (viewport 1100)`);
    }
    await page.close();
  }
} finally {
  await close();
}
if (fails.length) { console.log(`${fails.length} check(s) failed`); process.exit(1); }
console.log('all hostile/edge checks passed');
