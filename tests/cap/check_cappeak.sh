#!/bin/sh
# check_cappeak.sh VRAMTRACE LIBVRAMTRACE PROG WORKDIR — the size cap's rewrite keeps
# the sites only a peak composition names, across a file created again after its
# folder was removed: the capped stream still reads, with the spike in the peak line
# and the 4 KiB/step leak.
vt=$1; lib=$2; prog=$3; work=$4
rm -rf "$work" && mkdir -p "$work/out" || exit 1
LD_PRELOAD=$lib VRAMTRACE_OUTPUT=$work/out VRAMTRACE_INTERVAL_MS=0 VRAMTRACE_MAX_BYTES=64KiB \
  "$prog" 1500 100 > "$work/stdout" 2> "$work/stderr" || { echo "FAIL: prog_cappeak failed"; cat "$work/stderr"; exit 1; }
grep -q "records lost" "$work/stderr" || { echo "FAIL: the folder's removal made no gap"; cat "$work/stderr"; exit 1; }
NO_COLOR=1 "$vt" report "$work/out" > "$work/report.txt" 2> "$work/report.err" || {
  echo "FAIL: the capped stream does not read:"; cat "$work/report.err"; exit 1; }
# spike's place is "prog_cappeak.c:LINE" with debug information, "prog_cappeak+0xOFF"
# without (a Release build): either names spike in this program
grep -q "at the peak (8.0 GiB" "$work/report.txt" && grep -q "8 GiB spike (prog_cappeak[.+]" "$work/report.txt" || {
  echo "FAIL: no peak line naming spike:"; cat "$work/report.txt"; exit 1; }
grep -q "+4 KiB/step" "$work/report.txt" || { echo "FAIL: the 4 KiB/step leak is not found"; cat "$work/report.txt"; exit 1; }
grep -q "summarised in" "$work/report.txt" || { echo "FAIL: the stream was never rewritten under its cap"; exit 1; }
echo "ok: capped, re-created stream reads; the peak names spike; the leak found"
