// inline_leak.cu — an ordinary C++ CUDA program built for release (nvcc -O2 -g
// -cudart shared), as a user's would be: the cudaMalloc(T **, size_t) template of
// cuda_runtime.h inlined into a method (Cache::grow), inlined into a helper
// (refill), inlined into main; and a method of a class in an anonymous namespace
// (Scratch::take, kept out of line), which GCC gives no linkage name. Each of the
// 30 steps keeps 1 MiB through Cache::grow and 2 MiB through Scratch::take.
// test_cli.py inline checks the report's first frames and their names.
#include <cuda_runtime.h>
#include <stdio.h>

#include "vramtrace.h"

namespace {
struct Scratch {
    float *bufs[64];
    int n = 0;
    __attribute__((noinline)) void take(size_t bytes)
    {
        float *p = nullptr;
        if (cudaMalloc(&p, bytes) == cudaSuccess && n < 64) bufs[n++] = p;
        __asm__ volatile("" ::: "memory");
    }
};
}  // namespace

struct Cache {
    double *kept[64];
    int n = 0;
    inline void grow(size_t bytes)
    {
        double *p = nullptr;
        if (cudaMalloc(&p, bytes) == cudaSuccess && n < 64) kept[n++] = p;
    }
};

static inline void refill(Cache &c) { c.grow(1 << 20); }

int main()
{
    Cache c;
    Scratch s;
    for (int i = 0; i < 30; i++) {
        refill(c);
        s.take(2 << 20);
        vramtrace_step();
    }
    printf("inline_leak: %d + %d buffers kept\n", c.n, s.n);
    return 0;
}
