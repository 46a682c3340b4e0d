#!/usr/bin/env bash
# One prepared run on a machine with a real NVIDIA GPU (see docs/gpu-validation.md).
# Runs under the preload against the REAL CUDA runtime and driver:
#   1. the training-loop example built with nvcc -cudart shared
#   2. the same program built with nvcc's default STATIC runtime (driver hooks only)
#   3. the driver-API resolver example, 4. the ctypes Python example
#   5. a real PyTorch training loop: default allocator, expandable_segments:True,
#      backend:cudaMallocAsync
#   6. a small transformer keeping one 64 KiB tensor per step
#      (examples/python/torch_small_leak.py): default allocator (a segment leak
#      titled by the Python line), --tensors (the exact line at 64 KiB/step), the
#      step time under --tensors against untraced (paired, 3 rounds), and steps
#      counted from NVTX ranges alone (--step-range step); at most ~5 minutes
#   and a CUDA library dlopen'ed RTLD_LOCAL (tests/preload/locallib.c, prog_locallib)
# and keeps each report. SKIP_BUILD=1 uses an existing build/ (plus build/gpu-libs for
# runtime libraries the machine lacks, build/gpu/training_loop_static prebuilt).
# BENCH=build-bench (a Release build, see docs/performance.md) then also runs issue 7's
# figure 3 on the real runtime, with the churn's diagnosis rows (stacks, periodic
# snapshots, NVML each off): $OUT/bench-fig3.txt and .json.
# Results go to ${OUT:-gpu-validate-out}.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-validate-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total --format=csv; } | tee "$OUT/gpu.txt" || { echo "no GPU"; exit 1; }
# WHEEL=FILE: the platform wheel (`cmake --build build --target wheel`, carried as one
# file) is installed into a fresh venv ($OUT/venv, pip --no-index) and every step runs
# its `vramtrace` and its libvramtrace.so; no build folder is carried: the examples are
# compiled here with nvcc and gcc alone into $OUT/examples (BIN and GPU below), the CMake
# build is skipped.
BIN=build/bin
GPU=build/gpu
if [ -n "${WHEEL:-}" ]; then
  python3 -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install --no-index "$WHEEL" >"$OUT/wheel-install.log" 2>&1 \
    || { cat "$OUT/wheel-install.log"; echo "wheel install failed"; exit 1; }
  VT=$(cd "$OUT" && pwd)/venv/bin/vramtrace
  VTLIB=$(ls "$(cd "$OUT" && pwd)"/venv/lib/python3*/site-packages/vramtrace/_prefix/lib/libvramtrace.so)
  echo "=== vramtrace from the wheel $WHEEL: $VT, $VTLIB" | tee "$OUT/wheel.txt"
  BIN=$OUT/examples GPU=$OUT/examples
  mkdir -p "$BIN"
  nvcc -O1 -g -I include -cudart shared -o "$BIN/training_loop" examples/training_loop.cu &&
    nvcc -O1 -g -I include -o "$GPU/training_loop_static" examples/training_loop.cu &&
    gcc -O1 -g -I/usr/local/cuda/include -o "$BIN/driver_leak" examples/driver_leak.c -ldl ||
    { echo "cannot compile the examples"; exit 1; }
  gcc -shared -fPIC -O1 -I/usr/local/cuda/include tests/preload/locallib.c -L/usr/local/cuda/lib64 \
      -L/usr/local/cuda/lib64/stubs -lcudart -lcuda -o "$GPU/liblocallib.so"
  SKIP_BUILD=1
else
  VT=$PWD/build/bin/vramtrace
  VTLIB=$PWD/build/lib/libvramtrace.so
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash scripts/build.sh >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  mkdir -p build/gpu && nvcc -O1 -g -I include -o build/gpu/training_loop_static examples/training_loop.cu
  # lib64/stubs is the toolkit's link-time libcuda.so (soname libcuda.so.1), for linking
  # where no driver is installed; at run time NEEDED libcuda.so.1 is the real driver's
  gcc -shared -fPIC -O1 -I/usr/local/cuda/include tests/preload/locallib.c -L/usr/local/cuda/lib64 \
      -L/usr/local/cuda/lib64/stubs -lcudart -lcuda -o build/gpu/liblocallib.so
fi
step() {  # step NAME CMD...   (RUN_OPTS: more `vramtrace run` options)
  local name=$1; shift
  echo "=== $name: ${RUN_OPTS:-} $*"
  rm -rf "$OUT/$name"
  local t0=$(date +%s.%N)
  timeout 120 "$VT" run ${RUN_OPTS:-} -o "$OUT/$name" -- "$@" >"$OUT/$name.out" 2>&1
  local rc=$?
  echo "exit $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s" | tee -a "$OUT/$name.out"
  tail -4 "$OUT/$name.out"
  "$VT" report "$OUT/$name" >"$OUT/$name.txt" 2>&1; sed -n 1,30p "$OUT/$name.txt"
  "$VT" report --format json "$OUT/$name" >"$OUT/$name.json" 2>/dev/null
}
step training_loop "$BIN/training_loop" 40
step training_loop_static "$GPU/training_loop_static" 40
step driver_leak "$BIN/driver_leak" 30
step python_ctypes python3 examples/python/train.py --steps 40
# a CUDA library dlopen'ed RTLD_LOCAL by a program that links no CUDA library (a Python
# extension module imported the default way): same results with and without the preload
if [ -f "$GPU/liblocallib.so" ] && [ -x "$BIN/prog_locallib" ]; then
  echo "=== local_plugin"
  "$BIN/prog_locallib" "$GPU/liblocallib.so" 2>&1 | tee "$OUT/local_plugin.txt"
  VT_EXPECT_TRACKED=1 LD_PRELOAD=$VTLIB VRAMTRACE_OUTPUT="$OUT/local_plugin" \
      "$BIN/prog_locallib" "$GPU/liblocallib.so" 2>&1 | tee -a "$OUT/local_plugin.txt"
fi
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>"$OUT/torch-check.txt"; then
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' | tee "$OUT/torch.txt"
  step torch_default python3 examples/python/torch_train.py --steps 60
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True step torch_expandable python3 examples/python/torch_train.py --steps 60
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync step torch_async python3 examples/python/torch_train.py --steps 60
  # 6. one 64 KiB tensor kept per step: the segment leak by default, the tensor with --tensors
  step torch_keep_default python3 examples/python/torch_small_leak.py --steps 80
  RUN_OPTS=--tensors step torch_keep_tensors python3 examples/python/torch_small_leak.py --steps 80
  RUN_OPTS="--step-range step" step torch_keep_nvtx python3 examples/python/torch_small_leak.py --steps 80 --no-mark
  for n in torch_keep_default torch_keep_tensors torch_keep_nvtx; do
    echo "--- $n: leaks, allocator, steps"
    python3 - "$OUT/$n.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["processes"]:
    print("steps", p.get("steps"), "tensors", p.get("tensors"), "allocators", p.get("allocator_env"))
    for s in p["sites"]:
        if s["verdict"] == "leak":
            print("  leak %.0f B/step %s [%s]" % (s["growth_bytes_per_step"], s["title"], s.get("allocator")))
PYEOF
  done
  echo "--- step time: untraced vs --tensors, paired, 3 rounds"
  for r in 1 2 3; do
    u=$(timeout 120 python3 examples/python/torch_small_leak.py --steps 60 | awk '/ms\/step/{print $2}')
    t=$(timeout 120 "$VT" run --tensors -o "$OUT/torch_time_$r" -- python3 examples/python/torch_small_leak.py --steps 60 2>/dev/null | awk '/ms\/step/{print $2}')
    echo "round $r: untraced $u ms/step, --tensors $t ms/step" | tee -a "$OUT/torch_time.txt"
  done
else
  echo "PyTorch with CUDA not available: torch steps skipped"; cat "$OUT/torch-check.txt"
fi
if [ -n "${BENCH:-}" ]; then
  echo "=== bench: figure 3 on the real runtime ($BENCH)"
  timeout 420 python3 bench/vt_bench.py --build "$BENCH" --work "$OUT/bench-work" \
      --cuda-lib "/usr/local/cuda/lib64:$PWD/build/gpu-libs" --figures 3 --rounds 7 \
      --churn-pairs 30000 --churn-variants --json "$OUT/bench-fig3.json" 2>&1 | tee "$OUT/bench-fig3.txt"
  rm -rf "$OUT/bench-work"
fi
echo "=== done; results in $OUT"
