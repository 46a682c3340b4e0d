/*
 * drv_callback.c - host callbacks on a stream of the simulated driver (cuda.h
 * "Stream Management", CUDA 13.0: cuStreamAddCallback and its _ptsz form).
 *
 * Contract: work on a simulated stream is complete when it is issued, so the
 * callback runs at once, in the calling thread, with status CUDA_SUCCESS and the
 * stream handle as given (a real driver runs it later on a driver thread). It runs
 * outside the driver lock; like a real callback it must not call the CUDA API.
 * Errors: flags other than 0, or no callback: CUDA_ERROR_INVALID_VALUE; an unknown
 * stream: CUDA_ERROR_INVALID_HANDLE; the NULL stream with no current context:
 * CUDA_ERROR_INVALID_CONTEXT.
 * Thread safety: takes the driver lock only to validate the stream.
 */
#include "drv_internal.h"

static CUresult add_callback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(hStream, &c);
    SIM_UNLOCK();
    if (r == CUDA_SUCCESS)
        callback(hStream, CUDA_SUCCESS, userData);
    return r;
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags);
CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags);
}
