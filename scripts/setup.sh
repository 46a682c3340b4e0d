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
# Debian's chromium for the browser tests (tests/browser: playwright-core drives it and
# downloads no browser of its own). Optional: without it the build and the other tests
# still run, and browser_report is skipped with a line saying so.
if ! dpkg -s chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (for the browser tests)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } >/dev/null 2>&1; then
    echo "setup: chromium could not be installed; the browser tests (browser_report) will be skipped"
  fi
fi
# The install tests (tests/install): patchelf vendors the wheel's libraries, dpkg-dev's
# dpkg-shlibdeps gives the .deb its Depends, python3-yaml parses the Kubernetes example.
# Optional: without them install_wheel, install_deb and install_container_schema are
# skipped with a line saying so.
inst_missing=()
for p in patchelf dpkg-dev python3-yaml; do
  dpkg -s "$p" >/dev/null 2>&1 || inst_missing+=("$p")
done
if ((${#inst_missing[@]})); then
  echo "setup: installing ${inst_missing[*]} (for the install tests)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${inst_missing[@]}"; } >/dev/null 2>&1; then
    echo "setup: ${inst_missing[*]} could not be installed; the install tests that need them will be skipped"
  fi
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "setup: the CUDA toolkit (headers under /usr/local/cuda) is required" >&2
  exit 1
fi
