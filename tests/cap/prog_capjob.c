/* prog_capjob — a long deterministic training loop for the size-cap tests
 * (VRAMTRACE_MAX_BYTES): weights held all run (site hold_weights), a 4 MiB
 * temporary allocated and freed every step (site scratch), and a slow planted
 * leak: a cache re-allocated every step at LEAK bytes more than before (site
 * grow_cache: its live bytes are LEAK x (step + 1), exactly). Two allocations too
 * large for the device fail with out-of-memory, one at step 5 and one at step
 * STEPS - 5, each in its own size class (so each writes an OOM record).
 *
 * Usage: prog_capjob STEPS LEAK (under the preload). Exit status 0, 1 on an
 * unexpected CUDA result. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "vramtrace.h"

static void *cache;

__attribute__((noinline)) static int hold_weights(void **w)
{
    return cudaMalloc(w, 64 << 20) != cudaSuccess;
}

__attribute__((noinline)) static int scratch(void)
{
    void *p;
    if (cudaMalloc(&p, 4 << 20) != cudaSuccess) return 1;
    return cudaFree(p) != cudaSuccess;
}

__attribute__((noinline)) static int grow_cache(long step, long leak)
{
    if (cache && cudaFree(cache) != cudaSuccess) return 1;
    return cudaMalloc(&cache, (size_t)leak * (size_t)(step + 1)) != cudaSuccess;
}

__attribute__((noinline)) static int too_large(size_t n)
{
    void *p;
    return cudaMalloc(&p, n) != cudaErrorMemoryAllocation;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 1000, leak = argc > 2 ? atol(argv[2]) : 256;
    if (steps < 20 || leak < 1) return 1;
    void *w;
    if (hold_weights(&w)) return 1;
    for (long s = 0; s < steps; s++) {
        if (scratch() || grow_cache(s, leak)) return 1;
        if (s == 5 && too_large((size_t)1 << 44)) return 1;
        if (s == steps - 5 && too_large((size_t)1 << 46)) return 1;
        vramtrace_step();
    }
    cudaFree(w);
    printf("prog_capjob: %ld steps done\n", steps);
    return 0;
}
