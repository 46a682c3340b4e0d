/*
 * sim_threads.c - 8 threads allocate and free concurrently through the runtime
 * (cudaMalloc/cudaFree and cudaMallocAsync/cudaFreeAsync). Each block is filled
 * with its owner's tag and checked before it is freed (overlapping placements
 * would corrupt it). At a barrier, cudaMemGetInfo must show exactly the bytes
 * the threads hold (rounded by the documented rule), and all is free at the end.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "sim_check.h"

#define THREADS 8
#define ITERS 300
#define LIVE 16

static pthread_barrier_t barrier;
static atomic_size_t held;          /* bytes placed by live blocks, all threads */
static size_t free0;

static size_t span(size_t n)        /* the placement rule of docs/simcuda.md */
{
    return n >= MiB ? (n + 2 * MiB - 1) / (2 * MiB) * (2 * MiB) : (n + 255) / 256 * 256;
}

static void *worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    unsigned seed = 1234u + (unsigned)tid;
    void *blk[LIVE] = {0};
    size_t len[LIVE] = {0};
    unsigned char probe[64];
    for (int it = 0; it < ITERS; it++) {
        int k = it % LIVE;
        if (blk[k]) {
            CHECK_EQ(cudaMemcpy(probe, blk[k], sizeof probe < len[k] ? sizeof probe : len[k],
                                cudaMemcpyDeviceToHost), cudaSuccess);
            CHECK_EQ(probe[0], (unsigned char)(tid * 16 + k));
            CHECK_EQ(k & 1 ? cudaFreeAsync(blk[k], 0) : cudaFree(blk[k]), cudaSuccess);
            if (!(k & 1))
                atomic_fetch_sub(&held, span(len[k]));
            blk[k] = NULL;
        }
        seed = seed * 1103515245u + 12345u;
        len[k] = 1 + (seed >> 8) % (3 * MiB);
        if (k & 1) {
            CHECK_EQ(cudaMallocAsync(&blk[k], len[k], 0), cudaSuccess);
        } else {
            CHECK_EQ(cudaMalloc(&blk[k], len[k]), cudaSuccess);
            atomic_fetch_add(&held, span(len[k]));
        }
        CHECK_EQ(cudaMemset(blk[k], tid * 16 + k, len[k]), cudaSuccess);
    }
    pthread_barrier_wait(&barrier); /* everyone holds LIVE blocks now */
    pthread_barrier_wait(&barrier); /* main has checked the accounting */
    for (int k = 0; k < LIVE; k++) {
        CHECK_EQ(k & 1 ? cudaFreeAsync(blk[k], 0) : cudaFree(blk[k]), cudaSuccess);
        if (!(k & 1))
            atomic_fetch_sub(&held, span(len[k]));
    }
    return NULL;
}

int main(void)
{
    size_t f, total;
    CHECK_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
    cudaMemPool_t pool;
    CHECK_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
    pthread_barrier_init(&barrier, NULL, THREADS + 1);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0);
    pthread_barrier_wait(&barrier);
    uint64_t reserved = 0, used = 0;
    CHECK_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
    CHECK_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaSuccess);
    CHECK_EQ(cudaMemGetInfo(&f, &total), cudaSuccess);
    CHECK(used > 0 && reserved >= used);
    CHECK_EQ(free0 - f, atomic_load(&held) + reserved); /* ordinary bytes + pool chunks */
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaSuccess);
    CHECK_EQ(used, 0);
    CHECK_EQ(atomic_load(&held), 0);
    CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);    /* releases the pool's cached chunks */
    CHECK_EQ(cudaMemGetInfo(&f, &total), cudaSuccess);
    CHECK_EQ(f, free0);
    printf("threads: ok (%d threads x %d iterations)\n", THREADS, ITERS);
    return 0;
}
