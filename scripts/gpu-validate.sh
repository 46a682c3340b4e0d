#!/usr/bin/env bash
# gpu-validate.sh — the one prepared run for everything that needs a real NVIDIA GPU
# (docs/gpu-validation.md says what to carry and records what each run showed).
#
#   bash scripts/gpu-validate.sh --prepare   on the build machine (no GPU): builds what the
#                                             device machine cannot (build/gpu: the training
#                                             loop linked with nvcc's STATIC runtime, the
#                                             RTLD_LOCAL plugin) and copies the shared
#                                             libraries of our dependencies into
#                                             build/gpu-libs; prints the carry list
#   bash scripts/gpu-validate.sh             on the device machine, from the carried folders
#                                             (nothing is built there)
#   WHEEL=vramtrace-*.whl bash scripts/gpu-validate.sh
#                                             the same, with vramtrace installed from the
#                                             wheel into a venv (see WHEEL= below)
#   bash scripts/gpu-validate.sh --dry-run   no GPU: every step against the simulated CUDA
#                                             (build/simcuda), small sizes, 2 rounds: checks
#                                             the script, never a result
#
# The run, in order (each step's text and JSON report, and every paired figure as .txt
# and .json, in ${OUT:-gpu-validate-out}; summary.txt lists each step's exit status):
#   1. allocation paths on the real driver: the training loop (shared runtime), the
#      same program with the static runtime (driver hooks only), the driver-API
#      resolver example, the ctypes Python example
#   2. a CUDA library loaded RTLD_LOCAL by a program that links none (prog_locallib)
#   3. NVML on a real driver: the snapshots' host.nvml object and the report's NVML line
#   4. PyTorch: default allocator, expandable_segments:True, backend:cudaMallocAsync,
#      --tensors, steps from NVTX ranges alone (--step-range)
#   5. paired figures, untraced against traced, rotated order, medians of ROUNDS (10)
#      rounds, each with its diagnosis rows (VRAMTRACE_DEPTH=0, VRAMTRACE_INTERVAL_MS=0,
#      VRAMTRACE_NVML=0): the stream-ordered churn (target 1.03x), the tensor-rate churn
#      (bench_tensor.py), a small PyTorch transformer under --tensors (1.03x) and with
#      the default allocator (1.01x), then the cudaMalloc churn in the time left
# BUDGET_S (default 420 s) bounds the whole run: a paired figure starts no round past
# it (it reports the rounds it ran), and the steps after it are skipped with a line.
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=device
case "${1:-}" in
  --prepare) MODE=prepare ;;
  --dry-run) MODE=dry ;;
  "") ;;
  *) echo "usage: $0 [--prepare|--dry-run]"; exit 2 ;;
esac
ROOT=$PWD
B=$ROOT/build

if [ "$MODE" = prepare ]; then
  [ -x "$B/bin/vramtrace" ] && [ -f "$B/lib/libvramtrace.so" ] || { echo "build first: bash scripts/build.sh"; exit 1; }
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  mkdir -p "$B/gpu" "$B/gpu-libs"
  nvcc -O1 -g -I include -o "$B/gpu/training_loop_static" examples/training_loop.cu || exit 1
  # -lcuda links against the CUDA toolkit's link-only copy of libcuda.so (NVIDIA ships it
  # in lib64/stubs, soname libcuda.so.1, for machines without a driver); at run time the
  # NEEDED libcuda.so.1 resolves to the device's real driver
  gcc -shared -fPIC -O1 -I/usr/local/cuda/include tests/preload/locallib.c -L/usr/local/cuda/lib64 \
      -L/usr/local/cuda/lib64/stubs -lcudart -lcuda -o "$B/gpu/liblocallib.so" || exit 1
  # our dependencies (linked by the analyzer, dlopen'ed by the preload) and theirs
  for l in libjansson.so.4 libdw.so.1 libelf.so.1 libzstd.so.1 libunwind.so.8 liblzma.so.5 libbz2.so.1.0; do
    p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
    [ -n "$p" ] && cp -L "$p" "$B/gpu-libs/$l" || echo "warning: $l not found"
  done
  du -sh "$B/bin" "$B/lib" "$B/gpu" "$B/gpu-libs"
  echo "carry: build/bin build/lib build/gpu build/gpu-libs"
  exit 0
fi

OUT=${OUT:-gpu-validate-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s)
BUDGET_S=${BUDGET_S:-420}
DEADLINE=$((T0 + BUDGET_S))
ROUNDS=${ROUNDS:-10}
PY=${PYTHON:-python3}
VT=$B/bin/vramtrace
VTLIB=$B/lib/libvramtrace.so
: >"$OUT/summary.txt"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
left() { echo $((DEADLINE - $(date +%s))); }
# WHEEL=FILE: vramtrace itself comes from the platform wheel (`cmake --build build
# --target wheel`, carried as one file), installed into a fresh venv ($OUT/venv, pip
# --no-index): every step runs its `vramtrace` and its libvramtrace.so (its own
# libraries vendored beside it, so build/gpu-libs is not needed); the test programs
# still come from the carried build/bin, build/lib (the bench's libraries) and build/gpu.
if [ -n "${WHEEL:-}" ]; then
  "$PY" -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install --no-index "$WHEEL" >"$OUT/wheel-install.log" 2>&1 \
    || { cat "$OUT/wheel-install.log"; echo "wheel install failed"; exit 1; }
  VT=$OUT/venv/bin/vramtrace
  VTLIB=$(ls "$OUT"/venv/lib/python3*/site-packages/vramtrace/_prefix/lib/libvramtrace.so)
  note "vramtrace from the wheel $WHEEL: $VT, $VTLIB"
fi

if [ "$MODE" = dry ]; then
  # the simulated CUDA stands in for the real one: small sizes, 2 rounds
  export LD_LIBRARY_PATH=$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  ROUNDS=2 STEPS=6 CHURN_PAIRS=2000 TENSOR_PAIRS=100
  STATIC=$B/bin/training_loop      # stands in for the static-runtime build
  LOCALLIB=$B/lib/liblocallib.so    # the CTest build, against the simulated CUDA
  CUDA_LIB=$B/simcuda
  note "DRY RUN on the simulated device: not a GPU result"
else
  export PATH=/usr/local/cuda/bin:$PATH
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  STEPS=60 CHURN_PAIRS=30000 TENSOR_PAIRS=2000
  STATIC=$B/gpu/training_loop_static
  LOCALLIB=$B/gpu/liblocallib.so
  CUDA_LIB=/usr/local/cuda/lib64:$B/gpu-libs
  { nvidia-smi -L && nvidia-smi --query-gpu=driver_version,memory.total --format=csv; } >"$OUT/gpu.txt" 2>&1 \
      || { cat "$OUT/gpu.txt"; echo "no GPU: use --dry-run"; exit 1; }
  cat "$OUT/gpu.txt"
fi
for f in "$VT" "$VTLIB" "$B/bin/training_loop" "$B/bin/bench_alloc" "$B/lib/libbench_tensor.so"; do
  [ -e "$f" ] || { echo "missing $f: carry build/bin build/lib build/gpu build/gpu-libs (docs/gpu-validation.md)"; exit 1; }
done
git log -1 --format='commit %H %s' 2>/dev/null | tee "$OUT/commit.txt"

step() {  # step NAME CMD...   (RUN_OPTS: more `vramtrace run` options)
  local name=$1; shift
  if [ "$(left)" -le 30 ]; then note "$name: skipped (time budget)"; return; fi
  rm -rf "${OUT:?}/$name"
  local t0 rc
  t0=$(date +%s.%N)
  timeout 120 "$VT" run ${RUN_OPTS:-} -o "$OUT/$name" -- "$@" >"$OUT/$name.out" 2>&1
  rc=$?
  note "$name: exit $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s: ${RUN_OPTS:-} $*"
  "$VT" report "$OUT/$name" >"$OUT/$name.txt" 2>&1
  "$VT" report --format json "$OUT/$name" >"$OUT/$name.json" 2>/dev/null
  sed -n 1,12p "$OUT/$name.txt"
}

# ---- 1. allocation paths on the real driver ----
step training_loop "$B/bin/training_loop" 40
step training_loop_static "$STATIC" 40
step driver_leak "$B/bin/driver_leak" 30
step python_ctypes "$PY" examples/python/train.py --steps 40

# ---- 2. a CUDA library loaded RTLD_LOCAL (a Python extension module imported the default way) ----
if [ -f "$LOCALLIB" ]; then
  { "$B/bin/prog_locallib" "$LOCALLIB"; echo "untraced exit $?"
    VT_EXPECT_TRACKED=1 LD_PRELOAD=$VTLIB VRAMTRACE_OUTPUT="$OUT/local_plugin" \
        "$B/bin/prog_locallib" "$LOCALLIB"; echo "traced exit $?"; } >"$OUT/local_plugin.txt" 2>&1
  note "local_plugin: $(grep -c 'exit 0' "$OUT/local_plugin.txt")/2 runs exited 0 (local_plugin.txt)"
else
  note "local_plugin: skipped (no $LOCALLIB: run --prepare on the build machine)"
fi

# ---- 3. NVML on a real driver ----
{ echo "report lines naming NVML:"; grep -i nvml "$OUT/training_loop.txt"
  echo "snapshots with a host.nvml object:"
  cat "$OUT"/training_loop/*.jsonl 2>/dev/null | grep -c '"nvml"'
  zstdcat "$OUT"/training_loop/*.jsonl.zst 2>/dev/null | grep -c '"nvml"'; } >"$OUT/nvml.txt" 2>&1
note "nvml: $(grep -ci nvml "$OUT/training_loop.txt") report lines name NVML (nvml.txt)"

# ---- 4. PyTorch modes ----
TORCH=0
if "$PY" -c 'import torch; assert torch.cuda.is_available()' >"$OUT/torch-check.txt" 2>&1; then
  TORCH=1
  "$PY" -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' | tee "$OUT/torch.txt"
  step torch_default "$PY" examples/python/torch_train.py --steps $STEPS
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True step torch_expandable "$PY" examples/python/torch_train.py --steps $STEPS
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync step torch_async "$PY" examples/python/torch_train.py --steps $STEPS
  RUN_OPTS=--tensors step torch_tensors "$PY" examples/python/torch_small_leak.py --steps 80
  step torch_keep_default "$PY" examples/python/torch_small_leak.py --steps 80
  RUN_OPTS="--step-range step" step torch_nvtx "$PY" examples/python/torch_small_leak.py --steps 80 --no-mark
  for n in torch_keep_default torch_tensors torch_nvtx; do
    [ -s "$OUT/$n.json" ] || continue
    "$PY" - "$OUT/$n.json" <<'PYEOF' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["processes"]:
    print("%s: steps %s tensors %s allocators %s" % (sys.argv[1].rsplit("/", 1)[-1], p.get("steps"),
          p.get("tensors"), p.get("allocator_env")))
    for s in p["sites"]:
        if s["verdict"] == "leak":
            print("  leak %.0f B/step %s [%s]" % (s["growth_bytes_per_step"], s["title"], s.get("allocator")))
PYEOF
  done
else
  note "torch: skipped (PyTorch with CUDA not available: torch-check.txt)"
fi

# ---- 5. paired figures, each with its diagnosis rows ----
DIAG=(--config "traced:" --config "stacks_off:VRAMTRACE_DEPTH=0" --config "interval_off:VRAMTRACE_INTERVAL_MS=0"
      --config "nvml_off:VRAMTRACE_NVML=0" --config "clock_monotonic:VRAMTRACE_CLOCK=monotonic")
paired() {  # paired NAME SHARE_OF_THE_TIME_LEFT(%) gpu_paired.py-args...
  local name=$1 share=$2; shift 2
  local l; l=$(left)
  if [ "$l" -le 20 ]; then note "$name: skipped (time budget)"; return; fi
  "$PY" scripts/gpu_paired.py --name "$name" --out "$OUT" --rounds "$ROUNDS" --vt "$VT" \
      --deadline $(( $(date +%s) + l * share / 100 )) "$@" >/dev/null 2>"$OUT/$name.err"
  note "$name: exit $? (at $(( $(date +%s) - T0 )) s of the run)"; cat "$OUT/$name.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
}
SPIN=$(LD_LIBRARY_PATH=$CUDA_LIB:$LD_LIBRARY_PATH "$B/bin/bench_alloc" calibrate 9000 | sed 's/iters=//')
paired churn_async 15 --metric 'wall_ns=(\d+)' "${DIAG[@]}" -- \
    "$B/bin/bench_alloc" churn $CHURN_PAIRS "${SPIN:-1000}" --async 1
paired tensor_churn 18 --metric 'wall_ns=(\d+)' "${DIAG[@]}" -- \
    "$PY" bench/bench_tensor.py "$B/lib/libbench_tensor.so" 4 $TENSOR_PAIRS 20 30
if [ "$TORCH" = 1 ]; then
  paired torch_tensors_time 50 --run-opts=--tensors --env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
      --metric 'ms/step ([0-9.]+)' "${DIAG[@]}" -- "$PY" examples/python/torch_small_leak.py --steps 40
  paired torch_default_time 80 --metric 'ms/step ([0-9.]+)' "${DIAG[@]}" -- \
      "$PY" examples/python/torch_small_leak.py --steps 40
fi
# the churn of cudaMalloc/cudaFree pairs (figure 3's program; the 2026-11-29 run's 1.109x),
# in what time is left
paired churn_malloc 100 --metric 'wall_ns=(\d+)' "${DIAG[@]}" -- \
    "$B/bin/bench_alloc" churn $((CHURN_PAIRS / 3)) "${SPIN:-1000}"
note "done in $(( $(date +%s) - T0 )) s; results in $OUT"
