#!/usr/bin/env bash
# run_browser.sh SRCDIR NODEDIR OUTDIR VRAMTRACE TRAINING_LOOP FRAGMENTATION
# The browser test of the HTML report (CTest browser_report). Skips (exit 77) only when
# Debian's chromium (/usr/bin/chromium) is absent; with chromium present, a missing or
# broken node, npm or playwright-core is a failure. playwright-core is installed from
# SRCDIR's package-lock.json into NODEDIR by `npm ci` once per lock file (it downloads no
# browser). The two examples run under the preload on the simulated device (the caller
# sets LD_LIBRARY_PATH); their HTML reports and the screenshots stay under OUTDIR.
set -u
src=$1; nodedir=$2; out=$3; vt=$4; training=$5; frag=$6
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -x /usr/bin/chromium ]; then
  echo "SKIP: /usr/bin/chromium is absent (Debian's chromium; scripts/setup.sh installs it): the browser tests did not run"
  exit 77
fi
command -v node >/dev/null || fail "chromium is present but node is not on PATH"
command -v npm >/dev/null || fail "chromium is present but npm is not on PATH"
echo "node $(node --version), npm $(npm --version), $(/usr/bin/chromium --version 2>/dev/null)"
if ! cmp -s "$src/package-lock.json" "$nodedir/.installed-lock" ||
   [ ! -f "$nodedir/node_modules/playwright-core/package.json" ]; then
  mkdir -p "$nodedir" || fail "cannot create $nodedir"
  cp "$src/package.json" "$src/package-lock.json" "$nodedir/" || fail "cannot copy the lock file to $nodedir"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$nodedir" --ignore-scripts --no-audit --no-fund --prefer-offline ||
    fail "npm ci of playwright-core into $nodedir failed (no registry and no npm cache?)"
  cp "$src/package-lock.json" "$nodedir/.installed-lock"
fi

rm -rf "$out" && mkdir -p "$out" || fail "cannot create $out"
sanitize=${VT_SANITIZER_PRELOAD:+env LD_PRELOAD=$VT_SANITIZER_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}}
$sanitize "$vt" run -o "$out/training_loop" -- "$training" 40 >"$out/training_loop.log" 2>&1 ||
  { cat "$out/training_loop.log"; fail "training_loop under the preload failed"; }
$sanitize env SIMCUDA_MEM=1GiB "$vt" run -o "$out/fragmentation" -- "$frag" >"$out/fragmentation.log" 2>&1 ||
  { cat "$out/fragmentation.log"; fail "fragmentation under the preload failed"; }
# many processes: the training loop as ranks 0 and 1 of one job, in one folder (viz.test.mjs)
for r in 0 1; do
  $sanitize env RANK=$r WORLD_SIZE=2 "$vt" run -o "$out/ranks" -- "$training" $((30 + 10 * r)) >"$out/ranks.$r.log" 2>&1 ||
    { cat "$out/ranks.$r.log"; fail "training_loop as rank $r under the preload failed"; }
done
for ex in training_loop fragmentation ranks; do
  "$vt" report --format html -o "$out/$ex.html" "$out/$ex" || fail "report --format html of $ex failed"
done
# hostile names and unusual shapes (gen_edge.py): every page loads and draws without an error
golden="$src/../analyzer/golden"
python3 "$src/gen_edge.py" "$out/edge" "$golden"/python_train-step-v4/vt.*.jsonl "$golden"/oom_frag-step-v4/vt.*.jsonl ||
  fail "gen_edge.py failed"
# a folder whose name is not UTF-8 (Latin-1 0xe9): its path is in the page's data
lat="$out/edge/latin1-path-$(printf '\351')"
cp -r "$out/edge/one-step" "$lat" || fail "cannot copy edge/one-step"
"$vt" report --format html -o "$out/edge/latin1-path.html" "$lat" >"$out/edge/latin1-path.log" 2>&1 ||
  { cat "$out/edge/latin1-path.log"; fail "report --format html of a folder whose name is not UTF-8 failed"; }
rm -rf "$lat"
edge=("$out/edge/latin1-path.html")
for d in "$out"/edge/*/; do
  d=${d%/}
  "$vt" report --format html -o "$d.html" "$d" >"$d.log" 2>&1 || { cat "$d.log"; fail "report --format html of edge/${d##*/} failed"; }
  edge+=("$d.html")
done
node "$src/hostile.test.mjs" "$nodedir" "$out/screenshots/edge" "${edge[@]}"
rc3=$?
node "$src/report.test.mjs" "$nodedir" "$out/screenshots" "$out/training_loop.html" "$out/fragmentation.html"
rc=$?
# the flame graph, out-of-memory and many-processes views; the worse status of the two
node "$src/viz.test.mjs" "$nodedir" "$out/screenshots" "$out/training_loop.html" "$out/fragmentation.html" "$out/ranks.html"
rc2=$?
[ "$rc2" -gt "$rc" ] && rc=$rc2
[ "$rc3" -gt "$rc" ] && rc=$rc3
exit $rc
