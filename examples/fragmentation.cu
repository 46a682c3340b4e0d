/* fragmentation.cu — an out-of-memory that is fragmentation, not exhaustion.
 *
 * Fills a (small) device with blocks of 16 MiB (as many as fit: 58 on the simulated
 * 1 GiB device, whose context takes 64 MiB) from two call sites that
 * alternate (fill_even / fill_odd), frees every odd block (a checkerboard), then
 * asks for one 256 MiB buffer. Half the memory is free, but no free gap is larger
 * than 16 MiB, so cudaMalloc fails with cudaErrorMemoryAllocation while the free
 * memory reported by cudaMemGetInfo exceeds the request. The report should call it
 * a fragmentation OOM and name fill_even as the site whose blocks split the free
 * memory. Meant for a small simulated device: SIMCUDA_MEM=1GiB.
 *
 * Exit 0 when the large request failed as expected while free >= request,
 * 3 when it unexpectedly succeeded, 1 on another error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "vramtrace.h"

#define MiB (1024UL * 1024UL)
#define BLOCK (16 * MiB)
#define BIG (256 * MiB)

static void *blocks[1024];

__attribute__((noinline)) static cudaError_t fill_even(void **p) { return cudaMalloc(p, BLOCK); }
__attribute__((noinline)) static cudaError_t fill_odd(void **p) { return cudaMalloc(p, BLOCK); }

__attribute__((noinline)) static cudaError_t alloc_big(void **p) { return cudaMalloc(p, BIG); }

int main(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 1;
    /* Fill all but the last few blocks' worth, alternating sites. */
    int n = 0;
    while (n < 1024 && free_b >= 2 * BLOCK + BLOCK) {
        cudaError_t e = (n % 2 == 0) ? fill_even(&blocks[n]) : fill_odd(&blocks[n]);
        if (e != cudaSuccess) break;
        n++;
        cudaMemGetInfo(&free_b, &total_b);
    }
    for (int i = 1; i < n; i += 2) cudaFree(blocks[i]);
    cudaMemGetInfo(&free_b, &total_b);
    vramtrace_step();
    void *big = NULL;
    cudaError_t e = alloc_big(&big);
    printf("fragmentation: %d blocks of 16 MiB, %d freed; free %zu MiB of %zu MiB; "
           "cudaMalloc(256 MiB) -> %s\n", n, n / 2, free_b / MiB, total_b / MiB,
           cudaGetErrorName(e));
    if (e == cudaSuccess) { cudaFree(big); return 3; }
    if (e != cudaErrorMemoryAllocation || free_b < BIG) return 1;
    cudaGetLastError();  /* clear the sticky-free error as a real program would */
    for (int i = 0; i < n; i += 2) cudaFree(blocks[i]);
    return 0;
}
