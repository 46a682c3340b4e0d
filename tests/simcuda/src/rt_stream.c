/*
 * rt_stream.c - streams and events of the simulated runtime
 * (cuda_runtime_api.h "Stream Management" and "Event Management"). Each call
 * forwards to the driver pointer of the same name (the *_ptsz exports to the
 * per-thread-stream variants). The simulated device runs work synchronously,
 * so streams are always idle and events complete when recorded.
 */
#include "rt_internal.h"

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    if (!pStream)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamCreateWithPriority(pStream, flags, priority));
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return cudaStreamCreateWithPriority(pStream, flags, 0);
}
cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamDestroy(stream));
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamSynchronize(stream));
}
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamSynchronize_ptsz(stream));
}
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamQuery(stream));
}
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamQuery_ptsz(stream));
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamWaitEvent(stream, event, flags));
}
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamWaitEvent_ptsz(stream, event, flags));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventCreate(event, flags));
}
cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventRecord(event, stream));
}
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventRecord_ptsz(event, stream));
}
cudaError_t cudaEventQuery(cudaEvent_t event)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventQuery(event));
}
cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventSynchronize(event));
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventElapsedTime(ms, start, end));
}
cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuEventDestroy(event));
}
