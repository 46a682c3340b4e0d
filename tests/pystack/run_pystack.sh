#!/bin/sh
# run_pystack.sh <slot> run <probe.so> <pystack_test.py> <mode>
# run_pystack.sh <slot> layout <probe.so> <py_layout_dump.c> <cc>
# run_pystack.sh <slot> train <libvramtrace.so> <check_train.py> <on|off> <train.py> <outdir>
# Finds the interpreter of <slot> (pyenv3XY: $PYENV_ROOT/versions/3.X.*,
# deb3XY: /usr/bin/python3.X); exits 77 (CTest SKIP) when it is absent.
# Sanitizer builds (tests/reliability/sanitize_run.sh) set VT_SANITIZER_PRELOAD: the
# interpreter, which is not instrumented, then gets that runtime first in LD_PRELOAD
# (the probe and libvramtrace.so need it, and dlopen cannot add it: "cannot allocate
# memory in static TLS block"). Unset: LD_PRELOAD as before.
san=${VT_SANITIZER_PRELOAD:+$VT_SANITIZER_PRELOAD:}
slot=$1; what=$2; probe=$3
minor=$(echo "$slot" | sed 's/^[a-z]*3//')
case $slot in
  pyenv*) root=${PYENV_ROOT:-$HOME/.pyenv}
          dir=$(ls -d "$root"/versions/3."$minor".* 2>/dev/null | grep -v -- '-' | sort -V | tail -1)
          py=$dir/bin/python3.$minor; inc="-I$dir/include/python3.$minor"
          [ -n "$dir" ] || py="$root/versions/3.$minor.*/bin/python3.$minor" ;;
  deb*)   py=/usr/bin/python3.$minor
          inc="-I/usr/include/python3.$minor -I/usr/include/$(gcc -dumpmachine 2>/dev/null)/python3.$minor" ;;
  *) echo "unknown slot $slot"; exit 2 ;;
esac
[ -x "$py" ] || { echo "SKIP: $slot: interpreter not installed (no $py)"; exit 77; }
case $what in
  run) [ -n "$san" ] && export LD_PRELOAD="${san%:}"
       exec env -u PYTHONPATH -u PYTHONHOME "$py" "$4" "$probe" "$5" ;;
  train)
    rm -rf "$7" && mkdir -p "$7" || exit 1
    env -u PYTHONPATH -u PYTHONHOME VRAMTRACE_OUTPUT="$7" VRAMTRACE_PYTHON="$5" \
        VRAMTRACE_INTERVAL_MS=0 LD_PRELOAD="$san$probe" "$py" "$6" --steps 12 || exit 1
    exec "$py" "$4" "$7" "$6" "$5" ;;
  layout)
    hdr=$(echo "$inc" | sed 's/^-I\([^ ]*\).*/\1/')/Python.h
    [ -f "$hdr" ] || { echo "SKIP: $slot: no headers ($hdr)"; exit 77; }
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    "$5" -o "$tmp/dump" $inc "$4" || { echo "FAIL: cannot compile against $inc"; exit 1; }
    "$tmp/dump" | sort > "$tmp/headers.txt"
    cat > "$tmp/q.py" <<PY
import ctypes, sys
p = ctypes.CDLL(sys.argv[1]); b = ctypes.create_string_buffer(4096)
if p.probe_init() < 0: sys.exit("FAIL: probe_init found no interpreter")
if p.probe_layout(b, 4096) <= 0: sys.exit("FAIL: probe_layout")
sys.stdout.write(b.value.decode())
PY
    [ -n "$san" ] && export LD_PRELOAD="${san%:}"
    env -u PYTHONPATH -u PYTHONHOME "$py" "$tmp/q.py" "$probe" > "$tmp/runtime.unsorted" || exit 1
    sort "$tmp/runtime.unsorted" > "$tmp/runtime.txt"
    if diff -u "$tmp/headers.txt" "$tmp/runtime.txt"; then
      echo "layout of $slot ($py) matches its headers ($(wc -l < "$tmp/headers.txt") keys)"
    else
      echo "FAIL: layout in use differs from $slot headers"; exit 1
    fi ;;
esac
