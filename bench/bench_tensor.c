/* bench_tensor.c — the native side of the tensor-rate churn benchmark
 * (bench/bench_tensor.py, vt_bench.py --figures 14): a shared library that a Python
 * program loads with ctypes, as a framework's extension module is loaded, and calls
 * once per tensor.
 *
 * Design: bench_tensor_pair recurses `frames` native frames (standing in for the
 * framework's dispatcher, autograd and allocator frames between the interpreter and
 * the CUDA call), then calls bench_measured_tensor_pair, which makes one
 * cudaMallocAsync + cudaFreeAsync pair on the given stream. Only that function is
 * named bench_measured_* (callgrind --toggle-collect counts it inclusively: the
 * hooks, the stack capture, the Python frames, the simulated runtime), so the
 * recursion and the interpreter's own work stay outside the count. ctypes releases
 * the GIL around the call, so several Python threads reach the hooks at once.
 *
 * Thread safety: every function may be called from any thread. Errors: the CUDA
 * error code is returned (0 = success); nothing is printed.
 */
#include <cuda_runtime_api.h>
#include <execinfo.h>
#include <stddef.h>
#include <stdint.h>

static volatile uint64_t sink;

/* One stream-ordered pair of size bytes on stream: 0, or the CUDA error code. */
__attribute__((noinline, visibility("default"))) int bench_measured_tensor_pair(void *stream,
                                                                              size_t size)
{
    void *p = NULL;
    cudaError_t e = cudaMallocAsync(&p, size, (cudaStream_t)stream);
    if (e != cudaSuccess)
        return (int)e;
    return (int)cudaFreeAsync(p, (cudaStream_t)stream);
}

/* frames native frames, then what = 0: one pair; what = 1: the native depth at the
 * pair's call (frames counted by glibc's backtrace, including this library's). */
__attribute__((noinline)) static int nest(int frames, int what, void *stream, size_t size)
{
    int r;
    if (frames > 0) {
        r = nest(frames - 1, what, stream, size);
    } else if (what == 0) {
        r = bench_measured_tensor_pair(stream, size);
    } else {
        void *buf[512];
        r = backtrace(buf, 512) + 1;   /* + the pair function's own frame */
    }
    sink++;   /* keeps the call a call (no tail call) */
    return r;
}

/* One pair of size bytes on stream, frames native frames below the caller: 0 or
 * the CUDA error code. */
__attribute__((visibility("default"))) int bench_tensor_pair(int frames, void *stream, size_t size)
{
    return nest(frames, 0, stream, size);
}

/* Native frames from the thread's start to the CUDA call that bench_tensor_pair
 * makes with the same frames. */
__attribute__((visibility("default"))) int bench_tensor_native_depth(int frames)
{
    return nest(frames, 1, NULL, 0);
}

/* A new stream for the calling thread (cudaStreamNonBlocking), as a framework's
 * per-thread stream: the stream handle, or NULL on error. */
__attribute__((visibility("default"))) void *bench_tensor_stream(void)
{
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return NULL;
    return (void *)s;
}
