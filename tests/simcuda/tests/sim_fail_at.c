/*
 * sim_fail_at.c - SIMCUDA_FAIL_AT=3,5 makes the 3rd and 5th allocation calls
 * (any kind, counted in the driver) fail with out-of-memory; the others succeed.
 */
#include <cuda_runtime_api.h>

#include "sim_check.h"

int main(void)
{
    void *p[6] = {0};
    CHECK_EQ(cudaMalloc(&p[0], 1000), cudaSuccess);              /* 1 */
    CHECK_EQ(cudaMallocHost(&p[1], 1000), cudaSuccess);          /* 2 */
    CHECK_EQ(cudaMalloc(&p[2], 1000), cudaErrorMemoryAllocation); /* 3 */
    CHECK_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaMallocAsync(&p[3], 1000, 0), cudaSuccess);      /* 4 */
    CHECK_EQ(cudaMallocManaged(&p[4], 1000, cudaMemAttachGlobal), cudaErrorMemoryAllocation); /* 5 */
    CHECK_EQ(cudaMalloc(&p[5], 1000), cudaSuccess);              /* 6 */
    CHECK_EQ(cudaFree(p[0]), cudaSuccess);
    CHECK_EQ(cudaFreeHost(p[1]), cudaSuccess);
    CHECK_EQ(cudaFreeAsync(p[3], 0), cudaSuccess);
    CHECK_EQ(cudaFree(p[5]), cudaSuccess);
    printf("fail_at: ok\n");
    return 0;
}
