#!/bin/sh
# cost.sh <slot> <probe.so> [max_per_frame]
# Instructions (callgrind Ir, inclusive of everything vt_py_capture calls) per
# captured Python frame: runs pystack_cost.py at two recursion depths and
# divides the Ir difference by the extra frames x iterations. Prints the
# fixed cost per capture too. Exits 1 when the per-frame cost exceeds
# max_per_frame (default 100), 77 when the slot or valgrind is absent.
slot=$1; probe=$2; max=${3:-100}
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }
minor=$(echo "$slot" | sed 's/^[a-z]*3//')
case $slot in
  pyenv*) dir=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".* 2>/dev/null | grep -v -- '-' | sort -V | tail -1)
          py=$dir/bin/python3.$minor
          [ -n "$dir" ] || py="${PYENV_ROOT:-$HOME/.pyenv}/versions/3.$minor.*/bin/python3.$minor" ;;
  deb*)   py=/usr/bin/python3.$minor ;;
esac
[ -x "$py" ] || { echo "SKIP: $slot: interpreter not installed (no $py)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
iters=200
run() {  # depth -> "frames Ir"
  frames=$(env -u PYTHONPATH valgrind --tool=callgrind --toggle-collect=vt_py_capture \
      --callgrind-out-file="$tmp/cg.$1" -q "$py" "$here/pystack_cost.py" "$probe" "$1" $iters) || exit 1
  ir=$(callgrind_annotate "$tmp/cg.$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
  echo "$frames $ir"
}
set -- $(run 4) $(run 84)
f1=$1 i1=$2 f2=$3 i2=$4
[ -n "$i1" ] && [ -n "$i2" ] && [ "$f2" -gt "$f1" ] || { echo "FAIL: no measurement ($f1 $i1 $f2 $i2)"; exit 1; }
per=$(( (i2 - i1) / ((f2 - f1) * iters) ))
fixed=$(( i1 / iters - per * f1 ))
echo "$slot ($py): $per instructions per Python frame, $fixed fixed per capture ($f1 and $f2 frames, $iters captures each)"
[ "$per" -le "$max" ] || { echo "FAIL: over $max per frame"; exit 1; }
