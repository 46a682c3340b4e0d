#!/usr/bin/env bash
# One prepared run on a machine with a real NVIDIA GPU (see docs/gpu-validation.md).
# Builds, then runs under the preload against the REAL CUDA runtime and driver:
#   1. the examples built with nvcc -cudart shared (training loop, fragmentation)
#   2. an nvcc program with the default STATIC runtime (driver-layer hooks only)
#   3. the driver-API resolver example
#   4. a real PyTorch training loop: default allocator, expandable_segments:True,
#      backend:cudaMallocAsync
# and prints each report's verdicts. Writes everything under ${OUT:-gpu-validate-out}.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-validate-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L || { echo "no GPU"; exit 1; }
bash scripts/build.sh >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
VT=build/bin/vramtrace
step() {  # step NAME CMD...
  local name=$1; shift
  echo "=== $name: $*"
  rm -rf "$OUT/$name"
  timeout 300 "$VT" run -o "$OUT/$name" -- "$@" >"$OUT/$name.out" 2>&1; echo "exit $?" | tee -a "$OUT/$name.out"
  tail -3 "$OUT/$name.out"
  "$VT" report "$OUT/$name" | tee "$OUT/$name.txt" | head -40
  "$VT" report --format json "$OUT/$name" >"$OUT/$name.json"
}
step training_loop build/bin/training_loop 40
step fragmentation build/bin/fragmentation
nvcc -O1 -g -I include -o "$OUT/training_loop_static" examples/training_loop.cu   # default: -cudart static
step training_loop_static "$OUT/training_loop_static" 40
step driver_leak build/bin/driver_leak 30
step python_ctypes python3 examples/python/train.py --steps 40
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  step torch_default python3 examples/python/torch_train.py --steps 60
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True step torch_expandable python3 examples/python/torch_train.py --steps 60
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync step torch_async python3 examples/python/torch_train.py --steps 60
else
  echo "PyTorch with CUDA not available: torch steps skipped"
fi
echo "=== done; results in $OUT"
