#!/bin/sh
# run_numba.sh <vramtrace-cli> <simcuda-dir> <outdir> [steps]
# Runs tests/numba/numba_client.py with Numba's CUDA target on the simulated driver
# (NUMBA_CUDA_DRIVER=<simcuda-dir>/libcuda.so.1): once alone, once under
# `vramtrace run -o <outdir>/snap`, once under `vramtrace run --tensors`, then checks
# the JSON reports with check_numba.py.
# The interpreter is Debian's /usr/bin/python3 (python3-numba is built for it;
# VT_NUMBA_PYTHON overrides). Exits 77 (CTest SKIP) with a SKIP line when that
# interpreter cannot import numba.cuda.
# Sanitizer builds set VT_SANITIZER_PRELOAD (see tests/e2e/run_example.sh): the
# interpreter, which dlopens the instrumented simulated driver, then gets that runtime
# in LD_PRELOAD (alone, and after the libvramtrace.so that `vramtrace run` prepends).
vt=$1; sim=$2; out=$3; steps=${4:-24}
here=$(cd "$(dirname "$0")" && pwd)
py=${VT_NUMBA_PYTHON:-/usr/bin/python3}
if ! [ -x "$py" ] || ! env -u PYTHONPATH -u PYTHONHOME "$py" -c "import numba.cuda" >/dev/null 2>&1; then
  echo "SKIP: python3-numba is not installed ($py cannot import numba.cuda; scripts/setup.sh installs it)"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
export NUMBA_CUDA_DRIVER="$sim/libcuda.so.1"
san=${VT_SANITIZER_PRELOAD:+env LD_PRELOAD=$VT_SANITIZER_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}}
$san env -u PYTHONPATH -u PYTHONHOME "$py" "$here/numba_client.py" "$out/plain.json" --steps "$steps" \
  || { echo "FAIL: numba_client.py failed without the preload"; exit 1; }
# --interval 0: step and exit snapshots only. A periodic snapshot taken while Python
# tears down (main's list of leaked arrays is dropped, Numba frees in bursts) carries
# the last step's number and would stand for that step in the series.
$san env -u PYTHONPATH -u PYTHONHOME "$vt" run --interval 0 -o "$out/snap" -- \
  "$py" "$here/numba_client.py" "$out/traced.json" --steps "$steps" \
  || { echo "FAIL: numba_client.py failed under vramtrace run"; exit 1; }
"$vt" report --format json "$out/snap" > "$out/report.json" || { echo "FAIL: report failed"; exit 1; }
# the same under --tensors: Numba already allocates per array, so the same sites
$san env -u PYTHONPATH -u PYTHONHOME "$vt" run --tensors --interval 0 -o "$out/snap_t" -- \
  "$py" "$here/numba_client.py" "$out/traced_t.json" --steps "$steps" \
  || { echo "FAIL: numba_client.py failed under vramtrace run --tensors"; exit 1; }
"$vt" report --format json "$out/snap_t" > "$out/report_t.json" || { echo "FAIL: report (--tensors) failed"; exit 1; }
"$vt" report "$out/snap" > "$out/report.txt" || { echo "FAIL: text report failed"; exit 1; }
cat "$out/report.txt"
exec "$py" "$here/check_numba.py" "$out/report.json" "$out/traced.json" "$out/plain.json" "$out/report_t.json"
