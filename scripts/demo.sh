#!/usr/bin/env bash
# The main job: install what is missing, build, run the training-loop example
# under vramtrace, and print the leak report. Uses the real GPU when one is
# present, the simulated CUDA device (build/simcuda) otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
echo "demo: building (log in build/build.log) ..."
if ! bash scripts/build.sh > build/build.log 2>&1; then
  tail -40 build/build.log
  echo "demo: the build failed; the full log is build/build.log" >&2
  exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: using the real GPU ($(nvidia-smi -L | head -1))"
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "demo: no GPU found; using the simulated CUDA device in build/simcuda"
  export LD_LIBRARY_PATH="$PWD/build/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
out="vramtrace-out/demo-$(date +%Y%m%d-%H%M%S)-$$"
build/bin/vramtrace run -o "$out" -- build/bin/training_loop 40
echo
build/bin/vramtrace report "$out"
html="$out.html"
build/bin/vramtrace report --format html -o "$html" "$out"
echo
echo "demo: snapshots in $out/, HTML report: $html"
