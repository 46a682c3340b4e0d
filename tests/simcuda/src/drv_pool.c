/*
 * drv_pool.c - stream-ordered allocation and memory pools of the simulated
 * driver (cuda.h "Stream Ordered Memory Allocator", CUDA 13.0).
 *
 * Design: a pool holds chunks, each an extent of the device arena rounded to
 * 2 MiB; allocations are placed first-fit inside the chunks (sim_arena per
 * chunk) and a new chunk is taken from the device when none fits.
 *   reserved = bytes of chunks held   (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
 *   used     = bytes of live allocations, rounded like cuMemAlloc
 *                                       (CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
 * Streams run synchronously, so cuMemFreeAsync returns memory to its pool at
 * once; like a real pool, unused chunks go back to the device only at a
 * synchronisation point (stream/event/context synchronize) and only down to
 * the release threshold (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, default 0), or on
 * cuMemPoolTrimTo. Pools belong to the device, not to a context, so context
 * reset and destruction leave pool memory alone.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drv_ipc.h"

void sim_pool_init_default(struct CUmemPoolHandle_st *p, int dev)
{
    memset(p, 0, sizeof *p);
    p->magic = SIM_MAGIC_POOL;
    p->device = dev;
    p->is_default = 1;
    p->reuse_follow_event = p->reuse_opportunistic = p->reuse_internal = 1;
}

int sim_pool_valid_locked(struct CUmemPoolHandle_st *p)
{
    if (!p)
        return 0;
    for (int i = 0; i < sim_drv.ndev; i++)
        if (p == &sim_drv.dev[i].default_pool)
            return 1;
    for (struct CUmemPoolHandle_st *q = sim_drv.pools; q; q = q->next)
        if (q == p)
            return !p->destroyed;
    return 0;
}

/* Release unused chunks while reserved > keep. */
static void pool_trim_locked(struct CUmemPoolHandle_st *p, size_t keep)
{
    sim_chunk **pc = &p->chunks;
    while (*pc && p->reserved > keep) {
        sim_chunk *c = *pc;
        if (c->sub.used == 0) {
            *pc = c->next;
            sim_device_unplace_locked(p->device, c->base, c->size);
            p->reserved -= c->size;
            sim_arena_destroy(&c->sub);
            free(c);
        } else {
            pc = &c->next;
        }
    }
}

void sim_pools_settle_locked(int dev)
{
    struct CUmemPoolHandle_st *d = &sim_drv.dev[dev].default_pool;
    pool_trim_locked(d, d->release_threshold);
    for (struct CUmemPoolHandle_st *q = sim_drv.pools; q; q = q->next)
        if (q->device == dev)
            pool_trim_locked(q, q->destroyed ? 0 : q->release_threshold);
}

void sim_pool_free_locked(sim_alloc *a)
{
    struct CUmemPoolHandle_st *p = a->pool;
    sim_arena_free(&a->chunk->sub, a->addr - a->chunk->base, a->span);
    p->used -= a->span;
    if (p->destroyed)
        pool_trim_locked(p, 0);
}

static CUresult pool_alloc(CUdeviceptr *dptr, size_t size, struct CUmemPoolHandle_st *pool, CUstream s)
{
    SIM_REQUIRE_INIT();
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *ctx;
    CUresult r = sim_stream_ctx_locked(s, &ctx);
    if (r != CUDA_SUCCESS)
        goto out;
    if (sim_stream_capturing_locked(s)) {
        /* captured: an allocation node of the graph, physical at its launch */
        r = (pool && !sim_pool_valid_locked(pool)) ? CUDA_ERROR_INVALID_VALUE
                                               : sim_capture_alloc_locked(s, size, pool ? pool->device : ctx->device, dptr);
        goto out;
    }
    if (!pool)
        pool = sim_drv.dev[ctx->device].current_pool;
    else if (!sim_pool_valid_locked(pool) || pool->imported) {
        r = CUDA_ERROR_INVALID_VALUE; /* imported pools make no allocations (cuda.h) */
        goto out;
    }
    if (sim_fail_next_locked()) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    size_t align, span = sim_span_for(size, &align);
    sim_alloc *a = calloc(1, sizeof *a);
    if (!a) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    sim_chunk *c;
    size_t off = 0;
    for (c = pool->chunks; c; c = c->next)
        if (sim_arena_alloc(&c->sub, span, align, &off) == 0)
            break;
    if (!c) {
        size_t csize = (span + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
        uintptr_t base;
        c = calloc(1, sizeof *c);
        if (!c || sim_arena_init(&c->sub, csize) != 0 ||
            sim_device_place_locked(pool->device, csize, SIM_GRANULARITY, &base) != 0) {
            if (c)
                sim_arena_destroy(&c->sub);
            free(c);
            free(a);
            r = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        if ((pool->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) &&
            sim_ipc_share_range_locked(pool->device, base, csize) != 0) {
            sim_device_unplace_locked(pool->device, base, csize);
            sim_arena_destroy(&c->sub);
            free(c);
            free(a);
            r = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        c->base = base;
        c->size = csize;
        c->next = pool->chunks;
        pool->chunks = c;
        pool->reserved += csize;
        if (pool->reserved > pool->reserved_high)
            pool->reserved_high = pool->reserved;
        sim_arena_alloc(&c->sub, span, align, &off); /* cannot fail: fresh chunk >= span */
    }
    a->addr = c->base + off;
    a->size = size;
    a->span = span;
    a->kind = SIM_KIND_POOL;
    a->device = pool->device;
    a->pool = pool;
    a->chunk = c;
    HASH_ADD(hh, sim_drv.allocs, addr, sizeof a->addr, a);
    pool->used += span;
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
    *dptr = (CUdeviceptr)a->addr;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_alloc(dptr, bytesize, pool, hStream);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_alloc(dptr, bytesize, pool, hStream);
}

static CUresult pool_free(CUdeviceptr dptr, CUstream s)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *ctx;
    CUresult r = sim_stream_ctx_locked(s, &ctx);
    if (r == CUDA_SUCCESS && sim_stream_capturing_locked(s)) {
        r = sim_capture_free_locked(s, dptr); /* a free node of the graph */
    } else if (r == CUDA_SUCCESS) {
        uintptr_t p = (uintptr_t)dptr;
        sim_alloc *a;
        HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
        if (!a)
            r = sim_graph_free_outside_locked(p);
        else if (SIM_KIND_IS_HOST(a->kind) || SIM_IS_IPC_HANDLE(a))
            r = CUDA_ERROR_INVALID_VALUE;
        else
            sim_alloc_release_locked(a); /* cuMemFreeAsync also accepts cuMemAlloc memory */
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return pool_free(dptr, hStream); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) { return pool_free(dptr, hStream); }

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool_out = &sim_drv.dev[dev].default_pool;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    *pool = sim_drv.dev[dev].current_pool;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(pool) || pool->device != dev || pool->imported)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        sim_drv.dev[dev].current_pool = pool;
    SIM_UNLOCK();
    return r;
}

static CUresult location_device(const CUmemLocation *loc, CUmemAllocationType type, int *dev)
{
    if (!loc || type != CU_MEM_ALLOCATION_TYPE_PINNED || loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->id < 0 || loc->id >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = loc->id;
    return CUDA_SUCCESS;
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
    SIM_REQUIRE_INIT();
    int dev;
    CUresult r = location_device(location, type, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    return cuDeviceGetDefaultMemPool(pool_out, dev);
}

CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
    SIM_REQUIRE_INIT();
    int dev;
    CUresult r = location_device(location, type, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    return cuDeviceGetMemPool(pool, dev);
}

CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
    SIM_REQUIRE_INIT();
    int dev;
    CUresult r = location_device(location, type, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    return cuDeviceSetMemPool(dev, pool);
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    SIM_REQUIRE_INIT();
    if (!pool || !poolProps)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult r = location_device(&poolProps->location, poolProps->allocType, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (poolProps->handleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED; /* Win32 and fabric handles: not on this device */
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_pool_init_default(p, dev);
    p->is_default = 0;
    p->handle_types = (unsigned)poolProps->handleTypes;
    p->import_fd = -1;
    SIM_LOCK();
    p->next = sim_drv.pools;
    sim_drv.pools = p;
    SIM_UNLOCK();
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(pool) || pool->is_default) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        /* Outstanding allocations stay valid; the pool goes once they are freed. */
        pool->destroyed = 1;
        if (pool->imported && pool->import_fd >= 0) {
            close(pool->import_fd); /* pointers imported from it keep their mappings */
            pool->import_fd = -1;
        }
        for (int i = 0; i < sim_drv.ndev; i++)
            if (sim_drv.dev[i].current_pool == pool)
                sim_drv.dev[i].current_pool = &sim_drv.dev[i].default_pool;
        pool_trim_locked(pool, 0);
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(pool))
        r = CUDA_ERROR_INVALID_VALUE;
    else
        pool_trim_locked(pool, minBytesToKeep);
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    SIM_REQUIRE_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(pool)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: pool->reuse_follow_event = *(int *)value; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: pool->reuse_opportunistic = *(int *)value; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: pool->reuse_internal = *(int *)value; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->release_threshold = *(cuuint64_t *)value; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            r = CUDA_ERROR_INVALID_VALUE; /* only a reset to 0 is allowed */
        else
            pool->reserved_high = pool->reserved;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            r = CUDA_ERROR_INVALID_VALUE;
        else
            pool->used_high = pool->used;
        break;
    default:
        r = CUDA_ERROR_INVALID_VALUE; /* read-only or unknown */
    }
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    SIM_REQUIRE_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(pool)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: *(int *)value = pool->reuse_follow_event; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: *(int *)value = pool->reuse_opportunistic; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = pool->reuse_internal; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = pool->release_threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = pool->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = pool->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = pool->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = pool->used_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE;
    }
out:
    SIM_UNLOCK();
    return r;
}
