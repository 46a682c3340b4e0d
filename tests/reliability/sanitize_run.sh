#!/usr/bin/env bash
# sanitize_run.sh address|thread [BUILD_DIR] — builds the tree with
# -DVRAMTRACE_SANITIZE=KIND in BUILD_DIR (default build-san-KIND) and runs CTest with
# what a sanitizer build needs (docs/reliability.md "Sanitizers"):
#   - libvramtrace.so (and the simulated CUDA libraries) carry the sanitizer runtime;
#     preloaded into, or dlopen'ed by, an uninstrumented program (python3, sh, the
#     nvcc-built examples) that runtime must be in LD_PRELOAD from the start ("cannot
#     allocate memory in static TLS block" otherwise): VT_SANITIZER_PRELOAD names it
#     and every test harness that starts such a program puts it first in LD_PRELOAD
#     (tests/e2e/run_example.sh puts it after the libvramtrace.so that `vramtrace run`
#     prepends); instrumented test programs already load it, and verify_asan_link_order=0
#     lets it sit after libvramtrace in LD_PRELOAD elsewhere;
#   - detect_leaks=0: LeakSanitizer would report the leaks of uninstrumented tools
#     (bash, python) that get the runtime through LD_PRELOAD; the fuzz target runs
#     with leak detection on;
#   - both kinds: the whole suite except bench_smoke and pystack_cost_* (callgrind
#     cannot run sanitizer binaries) and fuzz_reader (already ASan+UBSan, run by the
#     normal build);
#   - thread, also excluded: preload_runtime_fork, preload_check_fork, reliability_fork,
#     reliability_race_fork:
#     they fork a process whose writer thread runs, and TSan aborts the child
#     ("ThreadSanitizer: dup thread with used id");
#   - thread, also excluded: preload_check_cancelwait: prog_cancelwait exports its own
#     dl_iterate_phdr (to stop a thread inside libunwind), which TSan's start-up calls
#     before its runtime is initialised (SEGV in the uninstrumented-yet program, with
#     or without the preload); and with REL_DEPTH=0 it could not unwind anyway;
#   - thread: libunwind's thread-exit destructor (its per-thread cache, run after TSan
#     has finished the thread) crashes TSan's runtime, so threads that unwound must not
#     exit under TSan: REL_DEPTH=0 gives VRAMTRACE_DEPTH=0 to the harness checks with
#     such threads (reliability threads, preload cancel/daemonfds), and
#     preload_runtime_threads runs on its own with VRAMTRACE_DEPTH=0 (the other tests
#     keep the default depth: they assert stacks);
#   - thread: tests/reliability/tsan.supp suppresses the known, reported findings that
#     are not data races (each with its reason there).
set -euo pipefail
kind=${1:?address or thread}
dir=${2:-build-san-$kind}
cd "$(dirname "$0")/../.."
root=$PWD
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
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$root/tests/reliability/tsan.supp
  export REL_DEPTH=0
  VT_SANITIZER_PRELOAD=$(${CC:-gcc} -print-file-name=libtsan.so); export VT_SANITIZER_PRELOAD
  rc=0
  ctest --output-on-failure -j"$(nproc)" \
    -E '^(bench_smoke|fuzz_reader|pystack_cost_.*|preload_runtime_fork|preload_check_fork|reliability_fork|reliability_race_fork|preload_runtime_threads|preload_check_cancelwait)$' || rc=$?
  VRAMTRACE_DEPTH=0 ctest --output-on-failure -R '^preload_runtime_threads$' || rc=$?
  exit $rc ;;
*) echo "usage: sanitize_run.sh address|thread [BUILD_DIR]" >&2; exit 2 ;;
esac
