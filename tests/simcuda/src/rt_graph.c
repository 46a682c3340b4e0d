/*
 * rt_graph.c - stream capture, CUDA graphs and graph memory of the simulated
 * runtime (cuda_runtime_api.h "Stream Management" capture calls, "Graph
 * Management", CUDA 13.0). Each call forwards to the driver pointer of the same
 * name (drv_graph.c has the semantics); the *_ptsz exports use the pointers
 * looked up with the per-thread-stream flag. Kernel, copy and set nodes become
 * empty nodes of the driver's graph (kernels do nothing on the simulated device);
 * host nodes keep their function, which runs at launch. Parameter structs are
 * converted field by field.
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

/* ---- capture ---- */

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamBeginCapture(stream, (CUstreamCaptureMode)mode));
}
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamBeginCapture_ptsz(stream, (CUstreamCaptureMode)mode));
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamEndCapture(stream, pGraph));
}
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamEndCapture_ptsz(stream, pGraph));
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamIsCapturing(stream, (CUstreamCaptureStatus *)pCaptureStatus));
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamIsCapturing_ptsz(stream, (CUstreamCaptureStatus *)pCaptureStatus));
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out, cudaGraph_t *graph_out,
                                     const cudaGraphNode_t **dependencies_out,
                                     const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamGetCaptureInfo(stream, (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out,
                                                   graph_out, dependencies_out,
                                                   (const CUgraphEdgeData **)edgeData_out, numDependencies_out));
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, cudaGraph_t *graph_out,
                                          const cudaGraphNode_t **dependencies_out,
                                          const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuStreamGetCaptureInfo_ptsz(stream, (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out,
                                                        graph_out, dependencies_out,
                                                        (const CUgraphEdgeData **)edgeData_out,
                                                        numDependencies_out));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuLaunchHostFunc(stream, (CUhostFn)fn, userData));
}
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuLaunchHostFunc_ptsz(stream, (CUhostFn)fn, userData));
}

/* ---- graphs and nodes ---- */

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphCreate(pGraph, flags));
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphDestroy(graph));
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                     struct cudaMemAllocNodeParams *nodeParams)
{
    if (!nodeParams)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = (CUmemAllocationType)nodeParams->poolProps.allocType;
    p.poolProps.handleTypes = (CUmemAllocationHandleType)nodeParams->poolProps.handleTypes;
    p.poolProps.location.type = (CUmemLocationType)nodeParams->poolProps.location.type;
    p.poolProps.location.id = nodeParams->poolProps.location.id;
    p.poolProps.maxSize = nodeParams->poolProps.maxSize;
    p.poolProps.usage = nodeParams->poolProps.usage;
    p.accessDescs = (const CUmemAccessDesc *)nodeParams->accessDescs;
    p.accessDescCount = nodeParams->accessDescCount;
    p.bytesize = nodeParams->bytesize;
    CUresult r = rt_drv.cuGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies, &p);
    if (r == CUDA_SUCCESS)
        nodeParams->dptr = (void *)(uintptr_t)p.dptr;
    return rt_ret_cu(r);
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                    const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dptr)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphAddMemFreeNode(pGraphNode, graph, pDependencies, numDependencies,
                                                  (CUdeviceptr)(uintptr_t)dptr));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                  const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies));
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                   const struct cudaKernelNodeParams *pNodeParams)
{
    if (!pNodeParams || !pNodeParams->func)
        return rt_ret(cudaErrorInvalidValue);
    return cudaGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                   const struct cudaMemcpy3DParms *pCopyParams)
{
    if (!pCopyParams)
        return rt_ret(cudaErrorInvalidValue);
    return cudaGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                     const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)dst;
    (void)src;
    (void)count;
    if ((unsigned)kind > cudaMemcpyDefault)
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    return cudaGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                   const struct cudaMemsetParams *pMemsetParams)
{
    if (!pMemsetParams)
        return rt_ret(cudaErrorInvalidValue);
    return cudaGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                 const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                 const struct cudaHostNodeParams *pNodeParams)
{
    if (!pNodeParams)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_HOST_NODE_PARAMS p = {.fn = (CUhostFn)pNodeParams->fn, .userData = pNodeParams->userData};
    return rt_ret_cu(rt_drv.cuGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies, &p));
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphGetNodes(graph, nodes, numNodes));
}

cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphClone(pGraphClone, originalGraph));
}

/* ---- executable graphs ---- */

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphInstantiateWithFlags(pGraphExec, graph, flags));
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphInstantiateWithFlags(pGraphExec, graph, flags));
}

static cudaError_t instantiate_params(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                      cudaGraphInstantiateParams *ip, int ptsz)
{
    if (!ip)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_GRAPH_INSTANTIATE_PARAMS p = {.flags = ip->flags, .hUploadStream = ip->uploadStream};
    CUresult r = (ptsz ? rt_drv.cuGraphInstantiateWithParams_ptsz : rt_drv.cuGraphInstantiateWithParams)(
        pGraphExec, graph, &p);
    ip->errNode_out = p.hErrNode_out;
    ip->result_out = (cudaGraphInstantiateResult)p.result_out;
    return rt_ret_cu(r);
}
cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *instantiateParams)
{
    return instantiate_params(pGraphExec, graph, instantiateParams, 0);
}
cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *instantiateParams)
{
    return instantiate_params(pGraphExec, graph, instantiateParams, 1);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphUpload(graphExec, stream));
}
cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphUpload_ptsz(graphExec, stream));
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphLaunch(graphExec, stream));
}
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphLaunch_ptsz(graphExec, stream));
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuGraphExecDestroy(graphExec));
}

/* ---- the device's graph memory ---- */

cudaError_t cudaDeviceGraphMemTrim(int device)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceGraphMemTrim(device));
}
cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceGetGraphMemAttribute(device, (CUgraphMem_attribute)attr, value));
}
cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceSetGraphMemAttribute(device, (CUgraphMem_attribute)attr, value));
}
