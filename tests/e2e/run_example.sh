#!/usr/bin/env bash
# run_example.sh OUTDIR VRAMTRACE [EXPECT-ARGS...] -- CMD [ARGS...]
# Runs CMD under `vramtrace run -o OUTDIR`, writes OUTDIR.json (report --format json)
# and OUTDIR.txt (text report), then checks expectations with expect_report.py.
# Sanitizer builds (tests/reliability/sanitize_run.sh) set VT_SANITIZER_PRELOAD: CMD
# (an nvcc-built example or python, not instrumented) then gets that runtime in
# LD_PRELOAD too, after the libvramtrace.so that `vramtrace run` puts in front; the
# sanitizer runtime must be loaded at start-up, not by dlopen. Unset: no change.
set -u
out=$1; vt=$2; shift 2
expect=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do expect+=("$1"); shift; done
shift
rm -rf "$out" "$out.json" "$out.txt"
${VT_SANITIZER_PRELOAD:+env LD_PRELOAD=$VT_SANITIZER_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}} \
  "$vt" run -o "$out" -- "$@" || { echo "run_example: program failed ($?)"; exit 1; }
"$vt" report --format json "$out" > "$out.json" || { echo "run_example: report failed"; exit 1; }
"$vt" report "$out" > "$out.txt" || { echo "run_example: text report failed"; exit 1; }
cat "$out.txt"
python3 "$(dirname "$0")/expect_report.py" "$out.json" --text "$out.txt" "${expect[@]}"
