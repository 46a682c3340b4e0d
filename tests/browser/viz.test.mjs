// Browser test of the HTML report's flame graph, out-of-memory and many-processes
// views: Debian's chromium, driven by playwright-core, loads the reports from file://
// and each view is read back from its DOM after clicks and key presses.
//
// node viz.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML RANKS_HTML
//   NODEDIR       folder whose node_modules holds playwright-core (npm ci by run_browser.sh)
//   ARTIFACTS     folder the screenshots are written to (kept after the test)
//   TRAINING_HTML report of the training-loop example (one leak: remember_batch, 3 MiB/step)
//   FRAGMENTATION_HTML report of the fragmentation example (an OOM by fragmentation)
//   RANKS_HTML    report of a folder of two training-loop processes (RANK=0 and RANK=1)
// Exit 0 when every check holds, 1 with one `FAIL:` line per failed check otherwise.
// Chromium is launched and pages are opened by lib.mjs (shared with the other browser tests).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fails, check, launch, open as openPage, noErrors } from './lib.mjs';

const [nodeDir, artifacts, trainingHtml, fragHtml, ranksHtml] = process.argv.slice(2);
if (!ranksHtml) {
  console.error('usage: node viz.test.mjs NODEDIR ARTIFACTS TRAINING_HTML FRAGMENTATION_HTML RANKS_HTML');
  process.exit(2);
}

async function open(browser, file) {
  const r = await openPage(browser, file, { width: 1200, height: 800 });
  await r.page.waitForSelector('#vt-body', { timeout: 10000 });
  return r;
}
// Raw byte counts (6+ digit numbers) in a view's visible text: sizes must be readable.
async function rawBytes(page, view) {
  const text = await page.locator(`[data-view=${view}]`).innerText();
  return text.match(/\b\d{6,}\b/g) || [];
}
async function tipText(page) {
  return page.evaluate(() => { const t = document.getElementById('vt-tip'); return t && t.style.display === 'block' ? t.textContent : ''; });
}
async function shot(page, name) {
  const p = join(artifacts, name);
  await page.screenshot({ path: p, fullPage: true });
  console.log('screenshot: ' + p);
}

async function flame(browser) {
  const { page, seen } = await open(browser, trainingHtml);
  const tab = page.locator('#vt-tab-flame');
  if (!check(await tab.count() === 1, 'training_loop: no "Flame graph" tab')) return page.close();
  await tab.click();
  // keyboard: the measure buttons are reachable and pressed with Enter
  await page.locator('#vt-flame-mode-growth').focus();
  await page.keyboard.press('Enter');
  check(await page.locator('#vt-flame-mode-growth').getAttribute('aria-pressed') === 'true', 'flame: "Growth per step" is not pressed after Enter');
  check(await page.locator('#vt-flame-mode-peak').getAttribute('aria-pressed') === 'false', 'flame: "Peak moment" still pressed in growth mode');
  const frames = await page.locator('[data-view=flame] g[data-frame]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-frame')));
  console.log(`flame (growth): ${frames.length} boxes: ${frames.join(' | ')}`);
  check(frames.some((f) => f.includes('remember_batch')), 'flame: growth mode has no frame remember_batch');
  check(!frames.some((f) => f.includes('alloc_weights')), 'flame: growth mode shows alloc_weights, which does not grow');
  const leak = page.locator('[data-view=flame] g[data-frame*="remember_batch"] rect');
  if (check(await leak.count() === 1, 'flame: no box for remember_batch')) {
    await leak.hover();
    const tip = await tipText(page);
    console.log('flame tooltip: ' + tip.replace(/\n/g, ' / '));
    check(/remember_batch/.test(tip) && /3 MiB\/step/.test(tip) && /100(\.0)?%/.test(tip),
          `flame: the tooltip does not give the frame, 3 MiB/step and its share: ${tip}`);
    await leak.click();
    const crumbs = await page.locator('[data-view=flame] .vt-crumbs button').allInnerTexts();
    check(crumbs.length >= 2 && /remember_batch/.test(crumbs[crumbs.length - 1]), `flame: the click did not zoom into remember_batch: ${crumbs.join(' > ')}`);
    check(await page.locator('#vt-flame-site').count() === 1, 'flame: the zoomed site box offers no site panel button');
    await page.keyboard.press('Escape');
    const back = await page.locator('[data-view=flame] .vt-crumbs button').count();
    check(back === crumbs.length - 1, `flame: Escape did not zoom out one level (${crumbs.length} -> ${back})`);
    await page.locator('#vt-flame-reset').click();
    check(await page.locator('[data-view=flame] .vt-crumbs button').count() === 1, 'flame: Reset did not go back to the root');
    // the keyboard: a box is a stop; focus shows its tooltip, Enter zooms into it
    await page.locator('[data-view=flame] g[data-frame="main"]').focus();
    check(/main/.test(await tipText(page)), 'flame: a focused box shows no tooltip');
    await page.keyboard.press('Enter');
    const kc = await page.locator('[data-view=flame] .vt-crumbs button').allInnerTexts();
    check(kc.length >= 2 && kc[kc.length - 1] === 'main', `flame: Enter on the box main did not zoom into it: ${kc.join(' > ')}`);
    await page.keyboard.press('Escape');
  }
  // peak moment: every site of the training loop was live at its peak
  await page.locator('#vt-flame-mode-peak').click();
  const peak = await page.locator('[data-view=flame] g[data-frame]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-frame')));
  check(peak.some((f) => f.includes('alloc_weights')) && peak.some((f) => f.includes('remember_batch')),
        `flame: the peak moment lacks alloc_weights or remember_batch: ${peak.join(' | ')}`);
  check((await rawBytes(page, 'flame')).length === 0, `flame: raw byte counts in the view: ${(await rawBytes(page, 'flame')).join(' ')}`);
  await page.locator('#vt-flame-mode-growth').click();
  await shot(page, 'flame.png');
  // the dark theme redraws the view with its state kept
  await page.keyboard.press('d');
  check(await page.locator('#vt-flame-mode-growth').getAttribute('aria-pressed') === 'true', 'flame: the theme switch lost the measure');
  noErrors('training_loop flame', seen);
  await page.close();
}

async function oom(browser) {
  const { page, seen } = await open(browser, fragHtml);
  const tab = page.locator('#vt-tab-oom');
  if (!check(await tab.count() === 1, 'fragmentation: no "Out of memory" tab')) return page.close();
  await tab.click();
  const verdicts = await page.locator('[data-view=oom] [data-verdict]').allInnerTexts();
  console.log(`oom: verdicts ${verdicts.join(', ')}`);
  check(verdicts.length >= 1 && verdicts[0] === 'fragmentation', `oom: the verdict is not "fragmentation": ${verdicts.join(', ')}`);
  const text = await page.locator('[data-view=oom]').innerText();
  check(/alloc_big/.test(text), 'oom: the failing call alloc_big is not named');
  check(/256 MiB/.test(text) && /16 MiB/.test(text), 'oom: the request (256 MiB) or the largest gap (16 MiB) is not given');
  check(/gap ratio\s+0\.96/.test(text), 'oom: the own-block gap ratio 0.96 is not given');
  const runs = await page.locator('[data-view=oom] .vt-oommap rect[data-run]').count();
  const split = await page.locator('[data-view=oom] .vt-oommap rect[data-split="1"]').count();
  const gaps = await page.locator('[data-view=oom] .vt-oommap rect[data-gap]').count();
  console.log(`oom map: ${runs} runs, ${split} splitting, ${gaps} gaps`);
  check(runs >= 20 && split >= 20 && gaps >= 20, `oom: the address map lacks blocks, splitting blocks or gaps (${runs}, ${split}, ${gaps})`);
  if (runs) {
    await page.locator('[data-view=oom] .vt-oommap rect[data-split="1"]').first().hover();
    const tip = await tipText(page);
    check(/fill_even/.test(tip) && /splits the free space/.test(tip), `oom: a splitting block's tooltip: ${tip}`);
  }
  check((await rawBytes(page, 'oom')).length === 0, `oom: raw byte counts in the view: ${(await rawBytes(page, 'oom')).join(' ')}`);
  await shot(page, 'oom.png');
  noErrors('fragmentation oom', seen);
  await page.close();
  // a process without OOM says so
  const t = await open(browser, trainingHtml);
  await t.page.locator('#vt-tab-oom').click();
  check(/No out-of-memory event/.test(await t.page.locator('[data-view=oom]').innerText()), 'oom: the training loop does not say "No out-of-memory event"');
  noErrors('training_loop oom', t.seen);
  await t.page.close();
}

async function ranks(browser) {
  const { page, seen } = await open(browser, ranksHtml);
  const tab = page.locator('#vt-tab-ranks');
  if (!check(await tab.count() === 1, 'ranks: no "Many processes" tab with two processes')) return page.close();
  await tab.click();
  const cells = page.locator('[data-view=ranks] rect.cell');
  const n = await cells.count();
  const cols = await page.locator('[data-view=ranks] text[data-col]').allTextContents();
  console.log(`ranks: ${n} cells, columns: ${cols.join(' | ')}`);
  check(n === 2, `ranks: expected 2 cells (remember_batch in each process), found ${n}`);
  check(cols.length === 1 && /remember_batch/.test(cols[0]), `ranks: expected one column remember_batch: ${cols.join(' | ')}`);
  await shot(page, 'ranks.png');
  const target = await page.evaluate(() => VT.data.procs.findIndex((p) => p.rank === 1));
  const cell = page.locator(`[data-view=ranks] rect.cell[data-proc="${target}"]`);
  if (check(target >= 0 && await cell.count() === 1, 'ranks: no cell for rank 1')) {
    await cell.hover();
    const tip = await tipText(page);
    console.log('ranks tooltip: ' + tip.replace(/\n/g, ' / '));
    check(/rank 1/.test(tip) && /remember_batch/.test(tip) && /3 MiB\/step/.test(tip), `ranks: the tooltip lacks rank, site or growth: ${tip}`);
    await cell.click();
    const cur = await page.evaluate(() => VT.current());
    console.log(`ranks: after the click: process ${cur.pi}, view ${cur.view}`);
    check(cur.pi === target, `ranks: the click did not open rank 1 (process ${cur.pi}, wanted ${target})`);
    check(cur.view === 'timeline' || cur.view === 'flame', `ranks: the click opened view ${cur.view}, not the timeline or flame graph`);
    check(await page.locator('#vt-proc').inputValue() === String(target), 'ranks: the process picker does not show rank 1');
    if (cur.view === 'flame') {
      const crumbs = await page.locator('[data-view=flame] .vt-crumbs button').allInnerTexts();
      check(/remember_batch/.test(crumbs[crumbs.length - 1] || ''), `ranks: the flame graph is not zoomed to the site: ${crumbs.join(' > ')}`);
    }
    await shot(page, 'ranks_open.png');
  }
  noErrors('ranks', seen);
  await page.close();
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const { browser, close } = await launch(nodeDir);
  try {
    await flame(browser);
    await oom(browser);
    await ranks(browser);
  } finally {
    await close();
  }
}

main().then(
  () => { console.log(fails.length ? `viz: FAILED (${fails.length})` : 'viz: ok'); process.exit(fails.length ? 1 : 0); },
  (e) => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
