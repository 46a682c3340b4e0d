#!/usr/bin/env bash
# sanitize_run.sh address|thread [BUILD_DIR] — builds the tree with
# -DVRAMTRACE_SANITIZE=KIND in BUILD_DIR (default build-san-KIND) and runs CTest with
# what a sanitizer build needs (docs/reliability.md "Sanitizers"):
#   - libvramtrace.so carries the sanitizer runtime; preloaded into an uninstrumented
#     program (python3, sh) that runtime must come first: VT_SANITIZER_PRELOAD names
#     it for the reliability checks; instrumented test programs already load it, and
#     verify_asan_link_order=0 lets it sit after libvramtrace in LD_PRELOAD elsewhere;
#   - detect_leaks=0: LeakSanitizer would report the leaks of uninstrumented tools
#     (bash, python) that get the runtime through LD_PRELOAD; the fuzz target runs
#     with leak detection on;
#   - address: the whole suite except bench_smoke and pystack_cost_* (callgrind
#     cannot run ASan binaries) and fuzz_reader (already ASan+UBSan, run by the normal build);
#   - thread: the threaded, signal and crash tests, with VRAMTRACE_DEPTH=0 because
#     libunwind's thread-exit destructor crashes TSan's runtime, and without the
#     fork tests (TSan cannot follow a multi-threaded fork: "dup thread").
set -euo pipefail
kind=${1:?address or thread}
dir=${2:-build-san-$kind}
cd "$(dirname "$0")/../.."
PATH=/usr/local/cuda/bin:$PATH cmake -S . -B "$dir" -DVRAMTRACE_SANITIZE="$kind" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
cd "$dir"
case $kind in
address)
  export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  VT_SANITIZER_PRELOAD=$(${CC:-gcc} -print-file-name=libasan.so); export VT_SANITIZER_PRELOAD
  ctest --output-on-failure -j"$(nproc)" -E '^(bench_smoke|fuzz_reader|pystack_cost_.*)$' ;;
thread)
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0
  export VRAMTRACE_DEPTH=0 REL_DEPTH=0
  VT_SANITIZER_PRELOAD=$(${CC:-gcc} -print-file-name=libtsan.so); export VT_SANITIZER_PRELOAD
  ctest --output-on-failure -j"$(nproc)" \
    -R '^(reliability_threads|reliability_crash|preload_runtime_threads|preload_core|preload_check_triggers|preload_check_sigkill|preload_runtime_leak|preload_check_leakwarn)$' ;;
*) echo "usage: sanitize_run.sh address|thread [BUILD_DIR]" >&2; exit 2 ;;
esac
