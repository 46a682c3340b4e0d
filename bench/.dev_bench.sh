set -x
nvidia-smi -L
CL=/usr/local/cuda/lib64
ls $CL/libcudart.so.13* 2>&1 | head -2
export LD_LIBRARY_PATH=$CL:$PWD/build-bench/devlibs; which python3 valgrind
B=build-bench/bin/bench_alloc; L=$PWD/build-bench/lib/libvramtrace.so
ldd $B | grep -E "cudart|unwind|not found"
$B pairs runtime 2000 || exit 1
for i in 1 2 3; do
 $B pairs runtime 20000 --base 1
 VRAMTRACE_OUTPUT=$OUT/o0 VRAMTRACE_LOG=quiet VRAMTRACE_DEPTH=0 LD_PRELOAD=$L $B pairs runtime 20000 --base 1
 VRAMTRACE_OUTPUT=$OUT/o1 VRAMTRACE_LOG=quiet LD_PRELOAD=$L $B pairs runtime 20000 --base 1
done
rm -rf $OUT/o0 $OUT/o1
timeout 400 python3 bench/vt_bench.py --build build-bench --cuda-lib $CL:$PWD/build-bench/devlibs --figures 3 --rounds 11 --work /tmp/vbw 2>&1
for t in 1 2 4 8; do $B threads $t $((40000/t)); VRAMTRACE_OUTPUT=/tmp/o2 VRAMTRACE_LOG=quiet LD_PRELOAD=$L $B threads $t $((40000/t)); done
