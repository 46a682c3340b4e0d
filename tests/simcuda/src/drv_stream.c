/*
 * drv_stream.c - streams and events of the simulated driver (cuda.h "Stream
 * Management" and "Event Management", CUDA 13.0).
 *
 * Design: the simulated device has no queues. Every operation "on a stream" runs
 * to completion on the calling thread before the call returns, so queries
 * report completion and synchronisation only settles memory pools (releasing
 * pool memory above the release threshold, see drv_pool.c). Events record
 * CLOCK_MONOTONIC so cuEventElapsedTime gives host wall time between records.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <time.h>

static int stream_known_locked(struct CUstream_st *s)
{
    for (struct CUstream_st *p = sim_drv.streams; p; p = p->next)
        if (p == s)
            return 1;
    return 0;
}

static int event_known_locked(struct CUevent_st *e)
{
    for (struct CUevent_st *p = sim_drv.events; p; p = p->next)
        if (p == e)
            return 1;
    return 0;
}

CUresult sim_stream_ctx_locked(CUstream s, struct CUctx_st **ctx)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return sim_ctx_require_locked(ctx);
    if (!stream_known_locked(s))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!sim_ctx_valid_locked(s->ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctx = s->ctx;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    SIM_REQUIRE_INIT();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        struct CUstream_st *s = calloc(1, sizeof *s);
        if (!s) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            s->magic = SIM_MAGIC_STREAM;
            s->ctx = c;
            s->flags = flags;
            s->priority = priority;
            s->next = sim_drv.streams;
            sim_drv.streams = s;
            *phStream = s;
        }
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUstream_st **pp = &sim_drv.streams; *pp; pp = &(*pp)->next)
        if (*pp == hStream) {
            struct CUstream_st *s = *pp;
            *pp = s->next;
            s->magic = 0;
            free(s);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

static CUresult stream_sync(CUstream s)
{
    SIM_REQUIRE_INIT();
    if (sim_capture_refuses(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS)
        sim_pools_settle_locked(c->device);
    SIM_UNLOCK();
    return r;
}

CUresult cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream); }
CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream); }

static CUresult stream_query(CUstream s)
{
    SIM_REQUIRE_INIT();
    if (sim_capture_refuses(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    SIM_UNLOCK();
    return r;
}

CUresult cuStreamQuery(CUstream hStream) { return stream_query(hStream); }
CUresult cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream); }

static CUresult stream_wait(CUstream s, CUevent e)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS && !event_known_locked(e))
        r = CUDA_ERROR_INVALID_HANDLE;
    /* waiting on an event recorded in a capture joins that capture */
    if (r == CUDA_SUCCESS && e->cap && s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD &&
        !sim_stream_capturing_locked(s))
        s->cap = e->cap;
    SIM_UNLOCK();
    return r;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    (void)Flags;
    return stream_wait(hStream, hEvent);
}
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    (void)Flags;
    return stream_wait(hStream, hEvent);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    SIM_REQUIRE_INIT();
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        struct CUevent_st *e = calloc(1, sizeof *e);
        if (!e) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e->magic = SIM_MAGIC_EVENT;
            e->ctx = c;
            e->flags = Flags;
            e->next = sim_drv.events;
            sim_drv.events = e;
            *phEvent = e;
        }
    }
    SIM_UNLOCK();
    return r;
}

static CUresult event_record(CUevent e, CUstream s)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS && !event_known_locked(e))
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && sim_stream_capturing_locked(s)) {
        e->cap = s->cap;   /* a record node: other streams may join the capture */
    } else if (r == CUDA_SUCCESS) {
        e->cap = NULL;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        e->ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
        e->recorded = 1;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream); }
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream); }

CUresult cuEventQuery(CUevent hEvent)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = event_known_locked(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    return r;
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = event_known_locked(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && sim_ctx_valid_locked(hEvent->ctx))
        sim_pools_settle_locked(hEvent->ctx->device);
    SIM_UNLOCK();
    return r;
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    SIM_REQUIRE_INIT();
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!event_known_locked(hStart) || !event_known_locked(hEnd))
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!hStart->recorded || !hEnd->recorded)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
        r = CUDA_ERROR_INVALID_HANDLE;
    else
        *pMilliseconds = (float)((double)((int64_t)(hEnd->ns - hStart->ns)) / 1e6);
    SIM_UNLOCK();
    return r;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUevent_st **pp = &sim_drv.events; *pp; pp = &(*pp)->next)
        if (*pp == hEvent) {
            struct CUevent_st *e = *pp;
            *pp = e->next;
            e->magic = 0;
            free(e);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

/* Kernels do nothing on the simulated device; the launch is accepted. */
static CUresult launch(CUfunction f, CUstream s)
{
    SIM_REQUIRE_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS && sim_stream_capturing_locked(s))
        r = sim_capture_noop_locked(s); /* a kernel node */
    SIM_UNLOCK();
    return r;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    (void)gridDimX; (void)gridDimY; (void)gridDimZ; (void)blockDimX; (void)blockDimY; (void)blockDimZ;
    (void)sharedMemBytes; (void)kernelParams; (void)extra;
    return launch(f, hStream);
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    (void)gridDimX; (void)gridDimY; (void)gridDimZ; (void)blockDimX; (void)blockDimY; (void)blockDimZ;
    (void)sharedMemBytes; (void)kernelParams; (void)extra;
    return launch(f, hStream);
}

/* CUDA 2.0 ABI of cuEventElapsedTime (same signature as _v2). */
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}
