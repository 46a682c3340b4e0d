/*
 * drv_capture.c - stream capture of the simulated driver (cuda.h "Stream
 * Management": cuStreamBeginCapture_v2, cuStreamEndCapture, cuStreamIsCapturing,
 * cuStreamGetCaptureInfo_v3 and their _ptsz forms; cuLaunchHostFunc; CUDA 13.0).
 *
 * Design: a capture is a graph (drv_graph.c) plus the streams taking part
 * (CUstream_st.cap). cuStreamBeginCapture_v2 on a created stream starts one; the
 * operations the other files run on a capturing stream add nodes through
 * sim_capture_*_locked instead (cuMemAllocAsync / cuMemFreeAsync: allocation and
 * free nodes; copies, sets, kernels: empty nodes; cuLaunchHostFunc: a host node).
 * An event recorded in a capture makes a stream that waits on it join the capture
 * (drv_stream.c). Synchronising or querying a capturing stream is refused
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and invalidates the capture, whose
 * cuStreamEndCapture then fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and
 * destroys its graph. Capture modes are accepted, not enforced; the dependency set
 * is reported empty. Every entry point takes the driver lock (drv_internal.h).
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>

struct sim_capture {
    struct CUgraph_st *graph;
    uint64_t id;
    CUstreamCaptureMode mode;
    struct CUstream_st *origin;
    int      invalid;
    struct sim_capture *next;
};

static struct sim_capture *captures;      /* active captures; cuStreamEndCapture frees one */
static uint64_t next_capture_id = 1;

static int capture_active_locked(struct sim_capture *c)
{
    for (struct sim_capture *p = captures; p; p = p->next)
        if (p == c)
            return 1;
    return 0;
}

static struct sim_capture *stream_capture_locked(CUstream s)
{
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return NULL;
    for (struct CUstream_st *p = sim_drv.streams; p; p = p->next)
        if (p == s)
            return s->cap && capture_active_locked(s->cap) ? s->cap : NULL;
    return NULL;
}

int sim_stream_capturing_locked(CUstream s)
{
    return stream_capture_locked(s) != NULL;
}

void sim_capture_invalidate_locked(CUstream s)
{
    struct sim_capture *c = stream_capture_locked(s);
    if (c)
        c->invalid = 1;
}

int sim_capture_refuses(CUstream s)
{
    SIM_LOCK();
    struct sim_capture *c = stream_capture_locked(s);
    if (c)
        c->invalid = 1;
    SIM_UNLOCK();
    return c != NULL;
}

static int stream_known_locked(CUstream s)
{
    for (struct CUstream_st *p = sim_drv.streams; p; p = p->next)
        if (p == s)
            return 1;
    return 0;
}

static CUresult begin_capture(CUstream s, CUstreamCaptureMode mode)
{
    SIM_REQUIRE_INIT();
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    struct sim_capture *c = NULL;
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    else if (!stream_known_locked(s))
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (stream_capture_locked(s))
        r = CUDA_ERROR_ILLEGAL_STATE;
    else if (!(c = calloc(1, sizeof *c)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((r = sim_graph_new_locked(&c->graph)) != CUDA_SUCCESS)
        free(c);
    if (r == CUDA_SUCCESS) {
        c->id = next_capture_id++;
        c->mode = mode;
        c->origin = s;
        c->next = captures;
        captures = c;
        s->cap = c;
    }
    SIM_UNLOCK();
    return r;
}
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) { return begin_capture(hStream, mode); }
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, mode);
}

static CUresult end_capture(CUstream s, CUgraph *ph)
{
    SIM_REQUIRE_INIT();
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    struct sim_capture *c = stream_capture_locked(s);
    if (!c)
        r = (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && !stream_known_locked(s))
                ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_ILLEGAL_STATE;
    else if (c->origin != s)
        r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    if (r == CUDA_SUCCESS) {
        for (struct sim_capture **pp = &captures; *pp; pp = &(*pp)->next)
            if (*pp == c) {
                *pp = c->next;
                break;
            }
        for (struct CUstream_st *p = sim_drv.streams; p; p = p->next)
            if (p->cap == c)
                p->cap = NULL;
        for (struct CUevent_st *e = sim_drv.events; e; e = e->next)
            if (e->cap == c)
                e->cap = NULL;
        if (c->invalid) {
            sim_graph_free_locked(c->graph);
            *ph = NULL;
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            *ph = c->graph;
        }
        free(c);
    }
    SIM_UNLOCK();
    return r;
}
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph); }
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph); }

static CUresult is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    SIM_REQUIRE_INIT();
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *ctx;
    CUresult r = sim_stream_ctx_locked(s, &ctx);
    if (r == CUDA_SUCCESS) {
        struct sim_capture *c = stream_capture_locked(s);
        *st = !c ? CU_STREAM_CAPTURE_STATUS_NONE
                 : c->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    }
    SIM_UNLOCK();
    return r;
}
CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus);
}
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus);
}

/* Dependencies are not tracked: the dependency set is reported empty. */
static CUresult capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    SIM_REQUIRE_INIT();
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *ctx;
    CUresult r = sim_stream_ctx_locked(s, &ctx);
    if (r == CUDA_SUCCESS) {
        struct sim_capture *c = stream_capture_locked(s);
        *st = !c ? CU_STREAM_CAPTURE_STATUS_NONE
                 : c->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (c) {
            if (id)
                *id = c->id;
            if (graph)
                *graph = c->graph;
            if (deps)
                *deps = NULL;
            if (edges)
                *edges = NULL;
            if (ndeps)
                *ndeps = 0;
        }
    }
    SIM_UNLOCK();
    return r;
}
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                   CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out);
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out)
{
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}

CUresult sim_capture_alloc_locked(CUstream s, size_t size, int device, CUdeviceptr *dptr)
{
    struct sim_capture *c = stream_capture_locked(s);
    if (c->invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return sim_graph_add_alloc_locked(c->graph, size, device, dptr);
}

CUresult sim_capture_free_locked(CUstream s, CUdeviceptr dptr)
{
    struct sim_capture *c = stream_capture_locked(s);
    if (c->invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    CUresult r = sim_graph_add_free_locked(c->graph, dptr);
    if (r != CUDA_SUCCESS)
        c->invalid = 1;
    return r;
}

CUresult sim_capture_noop_locked(CUstream s)
{
    struct sim_capture *c = stream_capture_locked(s);
    if (c->invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return sim_graph_add_plain_locked(c->graph, NULL, NULL);
}

/* cuLaunchHostFunc: runs fn at once (streams are synchronous), or adds a host node
 * to the capture. */
static CUresult host_func(CUstream s, CUhostFn fn, void *user)
{
    SIM_REQUIRE_INIT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    int run = r == CUDA_SUCCESS;
    if (run && sim_stream_capturing_locked(s)) {
        struct sim_capture *cap = stream_capture_locked(s);
        r = cap->invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : sim_graph_add_plain_locked(cap->graph, fn, user);
        run = 0;
    }
    SIM_UNLOCK();
    if (run)
        fn(user);
    return r;
}
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData) { return host_func(hStream, fn, userData); }
CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, fn, userData);
}
