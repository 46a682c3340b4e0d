#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test vramtrace.
# Idempotent: installs only missing packages (needs root, as these machines run).
set -euo pipefail
PKGS=(build-essential cmake pkg-config libunwind-dev uthash-dev libjansson-dev libzstd-dev zstd zlib1g-dev libdw-dev libelf-dev jq python3 python3-pytest python3-venv python3-junitparser python3-numba prometheus)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "setup: the CUDA toolkit (headers under /usr/local/cuda) is required" >&2
  exit 1
fi
