#!/bin/sh
# check_pycache.sh <slot> <libvramtrace.so> <libbench_tensor.so> <bench_tensor.py> <outdir>
# The preload's Python capture cache in check mode (VRAMTRACE_PY_CACHE=check: every
# cached capture is compared with a full walk in the hook) on the tensor-rate churn
# program (bench/bench_tensor.py): 4 threads, 8 call sites, 20 and then 9 Python
# frames deep, so the hooks' own captures go through the cache (the randomized
# program with depth changes is pystack_cache_<slot>, through the probe). Passes
# when the exit line reports captures compared and 0 differed. Exits 77 when the
# slot's interpreter is not installed.
# Sanitizer builds (tests/reliability/sanitize_run.sh): VT_SANITIZER_PRELOAD goes
# first in LD_PRELOAD, as run_pystack.sh does.
san=${VT_SANITIZER_PRELOAD:+$VT_SANITIZER_PRELOAD:}
slot=$1; lib=$2; tensor=$3; prog=$4; out=$5
minor=$(echo "$slot" | sed 's/^[a-z]*3//')
dir=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".* 2>/dev/null | grep -v -- '-' | sort -V | tail -1)
py=$dir/bin/python3.$minor
[ -n "$dir" ] && [ -x "$py" ] || { echo "SKIP: $slot: interpreter not installed"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || exit 1
fail=0
for frames in 20 9; do
  log=$(env -u PYTHONPATH VRAMTRACE_OUTPUT="$out" VRAMTRACE_PY_CACHE=check VRAMTRACE_LOG=warn \
        VRAMTRACE_INTERVAL_MS=0 LD_PRELOAD="$san$lib" \
        "$py" "$prog" "$tensor" 4 300 "$frames" 12 2>&1) || { echo "$log"; echo "FAIL: program exited non-zero"; exit 1; }
  line=$(echo "$log" | grep "Python cache check:.*captures compared")
  echo "$frames frames: $line"
  echo "$line" | grep -q " 0 differed" || fail=1
  n=$(echo "$line" | sed 's/.*check: \([0-9]*\) captures.*/\1/')
  [ -n "$n" ] && [ "$n" -ge 1000 ] || { echo "FAIL: too few captures compared ($n)"; fail=1; }
done
[ $fail = 0 ] && echo "ok" || { echo "FAIL"; exit 1; }
