#!/bin/sh
# check_capgap.sh VRAMTRACE LIBVRAMTRACE PROG WORKDIR — a write fault under a small
# size cap: the rewrites keep saying the gap (its record in each rewritten head), so
# `check` still fails the gaps gate and the report names it. A 2 MiB tmpfs in a user
# and mount namespace (`unshare -rm`); exit 77 with a SKIP line where not permitted.
vt=$1; lib=$2; prog=$3; work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
if ! unshare -rm sh -c 'mkdir -p /tmp && mount -t tmpfs -o size=64k tmpfs "$0"' "$work" 2>/dev/null; then
  echo "SKIP: unshare -rm with a tmpfs mount is not permitted here"
  exit 77
fi
unshare -rm sh -c '
  mount -t tmpfs -o size=2m,mode=0700 tmpfs "$1" || exit 9
  mkdir "$1/o"
  LD_PRELOAD="$2" VRAMTRACE_OUTPUT="$1/o" VRAMTRACE_INTERVAL_MS=0 VRAMTRACE_MAX_BYTES=64KiB VRAMTRACE_LOG=info \
    "$3" full 1500 300 600 1 "$1/filler" > "$1/stdout" 2> "$1/stderr"
  echo "rc=$?" >> "$1/stdout"
  mkdir -p "$1.keep" && cp -a "$1/o/." "$1/stdout" "$1/stderr" "$1.keep/"
' sh "$work" "$lib" "$prog" || { echo "FAIL: the namespace run failed"; exit 1; }
keep=$work.keep
grep -q "rc=0" "$keep/stdout" || { echo "FAIL: prog_iofault failed"; cat "$keep/stdout" "$keep/stderr"; exit 1; }
grep -q "size cap: .* rewritten" "$keep/stderr" || { echo "FAIL: the stream was never rewritten under its cap"; exit 1; }
grep -q "records lost" "$keep/stderr" || { echo "FAIL: no write fault happened"; exit 1; }
"$vt" check --max-growth 1GiB "$keep" > "$work.check" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "records lost between step" "$work.check" || {
  echo "FAIL: check exited $rc without naming the gap:"; cat "$work.check"; exit 1; }
NO_COLOR=1 "$vt" report "$keep" | grep -q "records lost between step" || { echo "FAIL: the report does not name the gap"; exit 1; }
echo "ok: the gap survives the size cap's rewrites; check fails its gaps gate"
