/*
 * drv_context.c - contexts of the simulated driver (cuda.h "Context Management"
 * and "Primary Context Management", CUDA 13.0).
 *
 * Design: a per-thread context stack (depth SIM_CTX_STACK) holds the current
 * context. Every ordinary allocation records its owning context; destroying a
 * created context, resetting a primary context, or releasing its last
 * reference frees those allocations (sim_ctx_scrub_locked) the way a real
 * context teardown does. Stream-ordered pool memory belongs to the device's
 * pools and survives. A later cuMemFree of a scrubbed pointer finds no record
 * and returns CUDA_ERROR_INVALID_VALUE, as the real driver does.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>

#define SIM_CTX_STACK 32

static __thread struct CUctx_st *tls_stack[SIM_CTX_STACK];
static __thread int tls_depth;

struct CUctx_st *sim_ctx_current(void)
{
    return tls_depth > 0 ? tls_stack[tls_depth - 1] : NULL;
}

int sim_ctx_valid_locked(struct CUctx_st *c)
{
    if (!c)
        return 0;
    for (int i = 0; i < sim_drv.ndev; i++)
        if (c == &sim_drv.dev[i].primary)
            return c->live;
    for (struct CUctx_st *p = sim_drv.ctxs; p; p = p->next)
        if (p == c)
            return p->live;
    return 0;
}

CUresult sim_ctx_require_locked(struct CUctx_st **out)
{
    struct CUctx_st *c = sim_ctx_current();
    if (!c || !sim_ctx_valid_locked(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

void sim_ctx_scrub_locked(struct CUctx_st *c)
{
    sim_alloc *a, *tmp;
    HASH_ITER(hh, sim_drv.allocs, a, tmp) {
        if (a->kind != SIM_KIND_POOL && a->ctx == c)
            sim_alloc_release_locked(a);
    }
    sim_texobjs_scrub_locked(c);
    sim_arrays_scrub_locked(c);
    struct CUstream_st **ps = &sim_drv.streams;
    while (*ps) {
        struct CUstream_st *s = *ps;
        if (s->ctx == c) {
            *ps = s->next;
            s->magic = 0;
            free(s);
        } else {
            ps = &s->next;
        }
    }
    struct CUevent_st **pe = &sim_drv.events;
    while (*pe) {
        struct CUevent_st *e = *pe;
        if (e->ctx == c) {
            *pe = e->next;
            e->magic = 0;
            free(e);
        } else {
            pe = &e->next;
        }
    }
}

/* Drop `c` from every position of this thread's stack (other threads keep a
 * dangling current context, which then fails validation like a real one). */
static void tls_forget(struct CUctx_st *c)
{
    int j = 0;
    for (int i = 0; i < tls_depth; i++)
        if (tls_stack[i] != c)
            tls_stack[j++] = tls_stack[i];
    tls_depth = j;
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    (void)ctxCreateParams;
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (tls_depth >= SIM_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = SIM_MAGIC_CTX;
    c->device = dev;
    c->live = 1;
    c->flags = flags;
    SIM_LOCK();
    c->next = sim_drv.ctxs;
    sim_drv.ctxs = c;
    SIM_UNLOCK();
    tls_stack[tls_depth++] = c; /* cuCtxCreate pushes the new context */
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!ctx || ctx->primary || !sim_ctx_valid_locked(ctx)) {
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else {
        sim_ctx_scrub_locked(ctx);
        ctx->live = 0; /* kept on the list so stale handles are recognised */
    }
    SIM_UNLOCK();
    if (r == CUDA_SUCCESS)
        tls_forget(ctx);
    return r;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    if (ctx) {
        SIM_LOCK();
        int ok = sim_ctx_valid_locked(ctx);
        SIM_UNLOCK();
        if (!ok)
            return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (!ctx) {
        if (tls_depth > 0)
            tls_depth--;
    } else if (tls_depth == 0) {
        tls_stack[tls_depth++] = ctx;
    } else {
        tls_stack[tls_depth - 1] = ctx;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = sim_ctx_current();
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    int ok = sim_ctx_valid_locked(ctx);
    SIM_UNLOCK();
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth >= SIM_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    SIM_REQUIRE_INIT();
    if (tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = tls_stack[--tls_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    SIM_REQUIRE_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS)
        *device = c->device;
    SIM_UNLOCK();
    return r;
}

CUresult cuCtxSynchronize(void)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS)
        sim_pools_settle_locked(c->device);
    SIM_UNLOCK();
    return r;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    struct CUctx_st *c = &sim_drv.dev[dev].primary;
    c->refcount++;
    c->live = 1;
    *pctx = c;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    struct CUctx_st *c = &sim_drv.dev[dev].primary;
    CUresult r = CUDA_SUCCESS;
    if (c->refcount == 0) {
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else if (--c->refcount == 0) {
        /* "the primary context is automatically reset once the last reference is released" */
        sim_ctx_scrub_locked(c);
        c->live = 0;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    struct CUctx_st *c = &sim_drv.dev[dev].primary;
    sim_ctx_scrub_locked(c); /* pool memory is not touched */
    c->flags = 0;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    SIM_REQUIRE_INIT();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    *flags = sim_drv.dev[dev].primary.flags;
    *active = sim_drv.dev[dev].primary.refcount > 0;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    sim_drv.dev[dev].primary.flags = flags;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        return cuCtxGetDevice(device);
    SIM_LOCK();
    CUresult r = sim_ctx_valid_locked(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS)
        *device = ctx->device;
    SIM_UNLOCK();
    return r;
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    if (!ctx)
        return cuCtxSynchronize();
    SIM_LOCK();
    CUresult r = sim_ctx_valid_locked(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS)
        sim_pools_settle_locked(ctx->device);
    SIM_UNLOCK();
    return r;
}
