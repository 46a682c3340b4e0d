/*
 * sim_fragmentation.c - first-fit placement makes fragmentation real: after
 * freeing every other 32 MiB block, a 64 MiB cudaMalloc fails with
 * cudaErrorMemoryAllocation although cudaMemGetInfo reports far more free.
 * Runs with SIMCUDA_MEM=512MiB (448 MiB usable after the 64 MiB overhead).
 */
#include <cuda_runtime_api.h>

#include "sim_check.h"

int main(void)
{
    void *blk[64];
    int n = 0;
    size_t free0, total, freeb;
    CHECK_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
    CHECK_EQ(total, 512 * MiB);
    CHECK_EQ(free0, 448 * MiB);
    while (n < 64 && cudaMalloc(&blk[n], 32 * MiB) == cudaSuccess)
        n++;
    CHECK_EQ(n, 14);
    CHECK_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaGetLastError(), cudaSuccess); /* cleared */
    for (int i = 1; i < n; i += 2)
        CHECK_EQ(cudaFree(blk[i]), cudaSuccess);
    CHECK_EQ(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    CHECK_EQ(freeb, 7 * 32 * MiB);
    void *big = NULL;
    CHECK_EQ(cudaMalloc(&big, 64 * MiB), cudaErrorMemoryAllocation); /* free 224 MiB > 64 MiB */
    CHECK(big == NULL);
    CHECK_EQ(cudaMalloc(&big, 32 * MiB), cudaSuccess);               /* a hole fits exactly */
    CHECK_EQ(cudaFree(big), cudaSuccess);
    for (int i = 0; i < n; i += 2)
        CHECK_EQ(cudaFree(blk[i]), cudaSuccess);
    CHECK_EQ(cudaMalloc(&big, 256 * MiB), cudaSuccess);               /* coalesced again */
    CHECK_EQ(cudaFree(big), cudaSuccess);
    CHECK_EQ(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    CHECK_EQ(freeb, free0);
    printf("fragmentation: ok (%d blocks, 224 MiB free, 64 MiB refused)\n", n);
    return 0;
}
