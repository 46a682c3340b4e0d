#!/usr/bin/env bash
# sanitize_run.sh [--list] address|thread [BUILD_DIR] — builds the tree with
# -DVRAMTRACE_SANITIZE=KIND in BUILD_DIR (default build-san-KIND) and runs CTest with
# what a sanitizer build needs (docs/reliability.md "Sanitizers"). --list only
# configures BUILD_DIR (no build, no test run) and prints, one a line, the tests each
# CTest pass of KIND would run; exit 0. -h/--help: this text.
#   - an excluded name also excludes its "_zst" twin (the same check on the compressed
#     stream, tests/preload/CMakeLists.txt): the lists below name base tests only;
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
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
list=0
case ${1:-} in
-h|--help) usage; exit 0 ;;
--list) list=1; shift ;;
esac
kind=${1:-}
case $kind in
address|thread) ;;
*) echo "usage: sanitize_run.sh [--list] address|thread [BUILD_DIR]  (--help: what each runs)" >&2; exit 2 ;;
esac
dir=${2:-build-san-$kind}

# CTest name patterns (extended regular expressions, anchored whole by ctest_re)
both=(bench_smoke fuzz_reader 'pystack_cost_.*')
thread_only=(preload_runtime_fork preload_check_fork reliability_fork reliability_race_fork
             preload_check_cancelwait preload_check_actwait)
thread_alone=(preload_runtime_threads)   # its own pass, with VRAMTRACE_DEPTH=0
# ctest_re NAME...: one regex matching each NAME and its _zst twin, nothing else
ctest_re() { local IFS='|'; printf '^(%s)(_zst)?$' "$*"; }
case $kind in
address) exclude=$(ctest_re "${both[@]}") ;;
thread)  exclude=$(ctest_re "${both[@]}" "${thread_only[@]}" "${thread_alone[@]}")
         alone=$(ctest_re "${thread_alone[@]}") ;;
esac

cd "$(dirname "$0")/../.."
root=$PWD
PATH=/usr/local/cuda/bin:$PATH cmake -S . -B "$dir" -DVRAMTRACE_SANITIZE="$kind" >/dev/null
cd "$dir"
if [ $list = 1 ]; then
  names() { ctest -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p'; }
  echo "# $kind, pass 1: ctest -E '$exclude' ($(names -E "$exclude" | wc -l) tests)"
  names -E "$exclude"
  if [ -n "${alone:-}" ]; then
    echo "# $kind, pass 2, VRAMTRACE_DEPTH=0: ctest -R '$alone' ($(names -R "$alone" | wc -l) tests)"
    names -R "$alone"
  fi
  exit 0
fi
cmake --build . -j"$(nproc)" >/dev/null
case $kind in
address)
  export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  VT_SANITIZER_PRELOAD=$(${CC:-gcc} -print-file-name=libasan.so); export VT_SANITIZER_PRELOAD
  ctest --output-on-failure -j"$(nproc)" -E "$exclude" ;;
thread)
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$root/tests/reliability/tsan.supp
  export REL_DEPTH=0
  VT_SANITIZER_PRELOAD=$(${CC:-gcc} -print-file-name=libtsan.so); export VT_SANITIZER_PRELOAD
  rc=0
  ctest --output-on-failure -j"$(nproc)" -E "$exclude" || rc=$?
  VRAMTRACE_DEPTH=0 ctest --output-on-failure -R "$alone" || rc=$?
  exit $rc ;;
esac
