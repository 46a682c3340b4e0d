/*
 * sim_reset_pool.c - cudaDeviceReset frees ordinary allocations (a later
 * cudaFree of one returns cudaErrorInvalidValue) but not stream-ordered pool
 * memory; pool reserved/used attributes, release threshold and
 * cudaMemPoolTrimTo behave as documented. SIMCUDA_MEM=1GiB.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "sim_check.h"

static uint64_t pool_attr(cudaMemPool_t p, enum cudaMemPoolAttr a)
{
    uint64_t v = 0;
    CHECK_EQ(cudaMemPoolGetAttribute(p, a, &v), cudaSuccess);
    return v;
}

int main(void)
{
    size_t free0, freeb, total;
    CHECK_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
    cudaMemPool_t pool;
    CHECK_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);

    void *plain = NULL, *pinned = NULL, *async = NULL, *managed = NULL;
    CHECK_EQ(cudaMalloc(&plain, 100 * MiB), cudaSuccess);
    CHECK_EQ(cudaMallocManaged(&managed, 10 * MiB, cudaMemAttachGlobal), cudaSuccess);
    CHECK_EQ(cudaMallocHost(&pinned, 4096), cudaSuccess);
    memset(pinned, 0xab, 4096);
    CHECK_EQ(cudaMallocAsync(&async, 50 * MiB, 0), cudaSuccess);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent), 50 * MiB);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), 50 * MiB);
    CHECK_EQ(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    CHECK_EQ(free0 - freeb, 160 * MiB);

    CHECK_EQ(cudaDeviceReset(), cudaSuccess);

    CHECK_EQ(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    CHECK_EQ(free0 - freeb, 50 * MiB);                     /* only the pool memory is left */
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent), 50 * MiB);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), 50 * MiB);
    CHECK_EQ(cudaFree(plain), cudaErrorInvalidValue);      /* freed by the reset */
    CHECK_EQ(cudaFreeHost(pinned), cudaErrorInvalidValue);
    CHECK_EQ(cudaMemset(async, 1, 50 * MiB), cudaSuccess); /* pool memory still usable */
    CHECK_EQ(cudaFreeAsync(async, 0), cudaSuccess);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), 0);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent), 50 * MiB); /* cached until a sync */
    CHECK_EQ(cudaStreamSynchronize(0), cudaSuccess);                         /* threshold 0: released */
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent), 0);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReservedMemHigh), 50 * MiB);
    CHECK_EQ(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    CHECK_EQ(freeb, free0);
    CHECK_EQ(cudaFreeHost((void *)0x1234), cudaErrorInvalidValue);         /* bogus pointer */

    /* a created pool with a release threshold keeps memory across syncs until trimmed */
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t mine;
    CHECK_EQ(cudaMemPoolCreate(&mine, &props), cudaSuccess);
    uint64_t keep = UINT64_MAX;
    CHECK_EQ(cudaMemPoolSetAttribute(mine, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
    void *a = NULL, *b = NULL;
    CHECK_EQ(cudaMallocFromPoolAsync(&a, 1000, mine, 0), cudaSuccess);
    CHECK_EQ(cudaMallocFromPoolAsync(&b, 1000, mine, 0), cudaSuccess);
    CHECK_EQ((uintptr_t)b - (uintptr_t)a, 1024);           /* sub-allocated in one 2 MiB chunk */
    CHECK_EQ(pool_attr(mine, cudaMemPoolAttrReservedMemCurrent), 2 * MiB);
    CHECK_EQ(pool_attr(mine, cudaMemPoolAttrUsedMemCurrent), 2048);
    CHECK_EQ(cudaFreeAsync(a, 0), cudaSuccess);
    CHECK_EQ(cudaFreeAsync(b, 0), cudaSuccess);
    CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
    CHECK_EQ(pool_attr(mine, cudaMemPoolAttrReservedMemCurrent), 2 * MiB); /* threshold keeps it */
    CHECK_EQ(cudaMemPoolTrimTo(mine, 0), cudaSuccess);
    CHECK_EQ(pool_attr(mine, cudaMemPoolAttrReservedMemCurrent), 0);
    CHECK_EQ(cudaMemPoolDestroy(mine), cudaSuccess);
    CHECK_EQ(cudaMemPoolDestroy(pool), cudaErrorInvalidValue);              /* default pool */
    printf("reset/pool: ok\n");
    return 0;
}
