/* vt_hook_table.h — the one list of every CUDA function libvramtrace hooks.
 *
 * One row per hooked function. Everything else about a hook comes from its row:
 * the typedef vt_<name>_t, the pointer to the real function real_<name>
 * (vt_hook_table.c), the resolver's look-up row (vt__hooks[], vt_resolve.c), the
 * exported symbol (the shim's alias), the shim itself for every shape but HAND
 * (vt_shims.c, from the shapes in vt_hooks.h) and the table in preload/README.md
 * (scripts/hook_table.py writes it; the preload_hook_table test compares README,
 * this list and the library's exports).
 *
 * Columns of X(name, family, kind, shape, front, ret_t, PARAMS, ARGS, SHAPE_ARGS, note):
 *   name        the symbol the real library exports (cuda_runtime_api.h / cuda.h,
 *               CUDA 13), and the name we export.
 *   family      RT: the CUDA runtime (libcudart.so.13; "not initialised" is
 *               cudaErrorInitializationError); DRV: the CUDA driver (libcuda.so.1;
 *               CUDA_ERROR_NOT_INITIALIZED). Every shim returns that code, and
 *               does nothing else, when the real function cannot be found.
 *   kind        the VT_KIND_ an ALLOC row records (common/vt_format.h); for other
 *               rows the kind the call frees or maps, NONE when it has none.
 *   shape       ALLOC   records *(out) as `size` bytes after a successful call;
 *                       SHAPE_ARGS = (out, size, stream[, after]): size may use the
 *                       result r and the call's outputs; stream is the CUstream of a
 *                       stream-ordered allocation, else 0; after, optional, is a
 *                       statement run once the success is recorded.
 *               FREE    takes the record at addr before the real call and puts it
 *                       back if the call fails; SHAPE_ARGS = (addr).
 *               FREE_ASYNC  a stream-ordered free: FREE, except on a capturing
 *                       stream, where it frees nothing and notes a graph free node
 *                       (vt_graph.h); SHAPE_ARGS = (addr, stream).
 *               PASS    forwards under the depth guard and, on success as the
 *                       outermost call, runs SHAPE_ARGS = (statement).
 *               POOL_DESTROY  a stream-ordered pool's destroy: the pool leaves the
 *                       writer's samples before the real call and comes back if it
 *                       fails; SHAPE_ARGS = (pool).
 *               RESOLVE a resolver: the real call first, then a returned function
 *                       pointer that is a real function we hook is replaced by its
 *                       hook (vt_resolve_swap); SHAPE_ARGS = (pointer out-parameter).
 *               HAND    written by hand in vt_cuda_runtime.c / vt_cuda_driver.c
 *                       (imported memory: vt_cuda_ipc.c),
 *                       because it fits no shape; SHAPE_ARGS = ().
 *   front       FRONT: the exported symbol is a front that sends a nested call
 *               (one hooked call made inside another on the same thread) straight
 *               to the real function (VT_HOOK_FRONT in vt_hooks.h): for the calls
 *               a shared runtime makes into the driver on every allocation.
 *               NOFRONT: nested calls go through the shim's depth guard.
 *   ret_t, PARAMS, ARGS  the C prototype, as in the CUDA headers.
 *   note        ABI notes, shown in preload/README.md.
 *
 * Contract: a name appears once. A row of a new shape needs nothing but the row; a
 * HAND row needs its function vt__h_<name> (with VT_EXPORT_ALIAS(name)) in the
 * family's hand-written file (or, for imported memory, vt_cuda_ipc.c). Includes both
 * CUDA headers (types only: nothing links the real libraries).
 */
#ifndef VT_HOOK_TABLE_H
#define VT_HOOK_TABLE_H

#include <stdint.h>
#include <cuda.h>
#undef cuGetProcAddress   /* cuda.h maps it to cuGetProcAddress_v2: we hook both */
#include <cuda_runtime_api.h>

#define VT_HOOK_TABLE(X)                                                                              \
    /* ---- runtime: allocation ---- */                                                              \
    X(cudaMalloc, RT, DEVICE, ALLOC, FRONT, cudaError_t, (void **devPtr, size_t size), (devPtr, size), \
      (devPtr, size, 0), "")                                                                          \
    X(cudaMallocPitch, RT, DEVICE, ALLOC, NOFRONT, cudaError_t,                                        \
      (void **devPtr, size_t *pitch, size_t width, size_t height), (devPtr, pitch, width, height),    \
      (devPtr, r ? (uint64_t)width * height : (uint64_t)*pitch * height, 0),                          \
      "size: pitch x height (width x height when it fails)")                                          \
    X(cudaMalloc3D, RT, DEVICE, ALLOC, NOFRONT, cudaError_t,                                           \
      (struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent), (pitchedDevPtr, extent),      \
      (&pitchedDevPtr->ptr,                                                                           \
       r ? (uint64_t)extent.width * extent.height * extent.depth                                      \
         : (uint64_t)pitchedDevPtr->pitch * extent.height * extent.depth, 0),                         \
      "size: pitch x height x depth")                                                                 \
    X(cudaMallocManaged, RT, MANAGED, ALLOC, FRONT, cudaError_t,                                       \
      (void **devPtr, size_t size, unsigned int flags), (devPtr, size, flags), (devPtr, size, 0), "") \
    X(cudaMallocHost, RT, HOST_PINNED, ALLOC, FRONT, cudaError_t, (void **ptr, size_t size),          \
      (ptr, size), (ptr, size, 0), "")                                                                \
    X(cudaHostAlloc, RT, HOST_PINNED, ALLOC, FRONT, cudaError_t,                                       \
      (void **pHost, size_t size, unsigned int flags), (pHost, size, flags), (pHost, size, 0), "")    \
    X(cudaHostRegister, RT, HOST_PINNED_REGISTERED, ALLOC, NOFRONT, cudaError_t,                       \
      (void *ptr, size_t size, unsigned int flags), (ptr, size, flags), (&ptr, size, 0),              \
      "registered host memory; freed by unregister")                                                  \
    X(cudaMallocAsync, RT, ASYNC, ALLOC, FRONT, cudaError_t,                                           \
      (void **devPtr, size_t size, cudaStream_t stream), (devPtr, size, stream),                      \
      (devPtr, size, stream), "")                                                                     \
    X(cudaMallocAsync_ptsz, RT, ASYNC, ALLOC, FRONT, cudaError_t,                                      \
      (void **devPtr, size_t size, cudaStream_t stream), (devPtr, size, stream),                      \
      (devPtr, size, stream), "per-thread default stream")                                            \
    X(cudaMallocFromPoolAsync, RT, ASYNC, ALLOC, FRONT, cudaError_t,                                   \
      (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream), (ptr, size, pool, stream),  \
      (ptr, size, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                             \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cudaMallocFromPoolAsync_ptsz, RT, ASYNC, ALLOC, FRONT, cudaError_t,                              \
      (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream), (ptr, size, pool, stream),  \
      (ptr, size, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                             \
      "per-thread default stream; the pool's reserve and use are sampled from then on")                        \
    /* ---- runtime: free ---- */                                                                    \
    X(cudaFree, RT, DEVICE, FREE, FRONT, cudaError_t, (void *devPtr), (devPtr), (devPtr), "")         \
    X(cudaFreeHost, RT, HOST_PINNED, FREE, FRONT, cudaError_t, (void *ptr), (ptr), (ptr), "")         \
    X(cudaHostUnregister, RT, HOST_PINNED, FREE, NOFRONT, cudaError_t, (void *ptr), (ptr), (ptr),      \
      "registered host memory; freed by unregister")                                                  \
    X(cudaFreeAsync, RT, ASYNC, FREE_ASYNC, FRONT, cudaError_t, (void *devPtr, cudaStream_t stream),   \
      (devPtr, stream), (devPtr, stream), "on a capturing stream: a graph free node, nothing freed")  \
    X(cudaFreeAsync_ptsz, RT, ASYNC, FREE_ASYNC, FRONT, cudaError_t,                                    \
      (void *devPtr, cudaStream_t stream), (devPtr, stream), (devPtr, stream),                        \
      "per-thread default stream; on a capturing stream: a graph free node")                          \
    /* ---- runtime: pools, reset ---- */                                                            \
    X(cudaMemPoolTrimTo, RT, NONE, PASS, NOFRONT, cudaError_t, (cudaMemPool_t pool, size_t minBytesToKeep), \
      (pool, minBytesToKeep), ((void)0), "pool reserve changes; the writer re-reads it")              \
    X(cudaMemPoolCreate, RT, NONE, PASS, NOFRONT, cudaError_t,                                         \
      (cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps), (memPool, poolProps),       \
      (vt_driver_pool_note((uint64_t)(uintptr_t)*memPool,                                             \
                           poolProps->location.type == cudaMemLocationTypeDevice                      \
                               ? poolProps->location.id : -1)),                                       \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cudaMemPoolDestroy, RT, NONE, POOL_DESTROY, NOFRONT, cudaError_t, (cudaMemPool_t memPool),      \
      (memPool), (memPool), "the pool is no longer sampled (taken out before the real call)")        \
    X(cudaDeviceReset, RT, NONE, HAND, NOFRONT, cudaError_t, (void), (), (),                           \
      "frees every ordinary allocation of the device's primary context")                              \
    /* ---- runtime: stream capture and graph memory ---- */ \
    X(cudaStreamBeginCapture, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureMode mode), \
      (stream, mode), \
      (vt_graph_capture_begin()), \
      "a capture begins: stream-ordered calls are asked about capture") \
    X(cudaStreamBeginCapture_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureMode mode), \
      (stream, mode), \
      (vt_graph_capture_begin()), \
      "a capture begins: stream-ordered calls are asked about capture; per-thread default stream") \
    X(cudaStreamEndCapture, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, cudaGraph_t *pGraph), \
      (stream, pGraph), \
      (vt_graph_capture_end()), \
      "the capture ends") \
    X(cudaStreamEndCapture_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, cudaGraph_t *pGraph), \
      (stream, pGraph), \
      (vt_graph_capture_end()), \
      "the capture ends; per-thread default stream") \
    X(cudaStreamIsCapturing, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus), \
      (stream, pCaptureStatus), \
      ((void)0), \
      "forwarded") \
    X(cudaStreamIsCapturing_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus), \
      (stream, pCaptureStatus), \
      ((void)0), \
      "forwarded; per-thread default stream") \
    X(cudaStreamGetCaptureInfo, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out, \
       unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out, \
       const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out), \
      (stream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out), \
      ((void)0), \
      "forwarded") \
    X(cudaStreamGetCaptureInfo_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out, \
       unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out, \
       const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out), \
      (stream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out), \
      ((void)0), \
      "forwarded; per-thread default stream") \
    X(cudaGraphAddMemAllocNode, RT, GRAPH, HAND, NOFRONT, cudaError_t, \
      (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies, \
       size_t numDependencies, struct cudaMemAllocNodeParams *nodeParams), \
      (pGraphNode, graph, pDependencies, numDependencies, nodeParams), \
      (), \
      "the node is noted with its stack; counted from the launch that maps it") \
    X(cudaGraphAddMemFreeNode, RT, GRAPH, PASS, NOFRONT, cudaError_t, \
      (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies, \
       size_t numDependencies, void *dptr), \
      (pGraphNode, graph, pDependencies, numDependencies, dptr), \
      (vt_graph_node_free((uint64_t)(uintptr_t)graph, (uint64_t)(uintptr_t)dptr)), \
      "frees at the launch that runs it") \
    X(cudaGraphDestroy, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraph_t graph), \
      (graph), \
      (vt_graph_destroyed((uint64_t)(uintptr_t)graph)), \
      "frees nothing") \
    X(cudaGraphInstantiate, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags), \
      (pGraphExec, graph, flags), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*pGraphExec, (uint64_t)(uintptr_t)graph, \
       (flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0)), \
      "the exec copies the memory nodes of its graph") \
    X(cudaGraphInstantiateWithFlags, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags), \
      (pGraphExec, graph, flags), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*pGraphExec, (uint64_t)(uintptr_t)graph, \
       (flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0)), \
      "the exec copies the memory nodes of its graph") \
    X(cudaGraphInstantiateWithParams, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *instantiateParams), \
      (pGraphExec, graph, instantiateParams), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*pGraphExec, (uint64_t)(uintptr_t)graph, \
       (instantiateParams->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0)), \
      "the exec copies the memory nodes of its graph") \
    X(cudaGraphInstantiateWithParams_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *instantiateParams), \
      (pGraphExec, graph, instantiateParams), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*pGraphExec, (uint64_t)(uintptr_t)graph, \
       (instantiateParams->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0)), \
      "the exec copies the memory nodes of its graph; per-thread default stream") \
    X(cudaGraphUpload, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t graphExec, cudaStream_t stream), \
      (graphExec, stream), \
      ((void)0), \
      "graph reserve grows; nothing counted until launch") \
    X(cudaGraphUpload_ptsz, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t graphExec, cudaStream_t stream), \
      (graphExec, stream), \
      ((void)0), \
      "graph reserve grows; nothing counted until launch; per-thread default stream") \
    X(cudaGraphLaunch, RT, GRAPH, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t graphExec, cudaStream_t stream), \
      (graphExec, stream), \
      (vt_hook_graph_launched((uint64_t)(uintptr_t)graphExec, (uint64_t)(uintptr_t)stream)), \
      "allocation nodes counted, free nodes free") \
    X(cudaGraphLaunch_ptsz, RT, GRAPH, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t graphExec, cudaStream_t stream), \
      (graphExec, stream), \
      (vt_hook_graph_launched((uint64_t)(uintptr_t)graphExec, (uint64_t)(uintptr_t)stream)), \
      "allocation nodes counted, free nodes free; per-thread default stream") \
    X(cudaGraphExecDestroy, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (cudaGraphExec_t graphExec), \
      (graphExec), \
      (vt_graph_exec_destroyed((uint64_t)(uintptr_t)graphExec)), \
      "frees nothing: live graph allocations stay") \
    X(cudaDeviceGraphMemTrim, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (int device), \
      (device), \
      ((void)0), \
      "graph reserve changes; the writer re-reads it") \
    X(cudaDeviceGetGraphMemAttribute, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (int device, enum cudaGraphMemAttributeType attr, void *value), \
      (device, attr, value), \
      ((void)0), \
      "forwarded") \
    X(cudaDeviceSetGraphMemAttribute, RT, NONE, PASS, NOFRONT, cudaError_t, \
      (int device, enum cudaGraphMemAttributeType attr, void *value), \
      (device, attr, value), \
      ((void)0), \
      "forwarded") \
    /* ---- runtime: driver entry points ---- */                                                     \
    X(cudaGetDriverEntryPoint, RT, NONE, RESOLVE, NOFRONT, cudaError_t,                                \
      (const char *symbol, void **funcPtr, unsigned long long flags,                                  \
       enum cudaDriverEntryPointQueryResult *st), (symbol, funcPtr, flags, st), (funcPtr), "")        \
    X(cudaGetDriverEntryPoint_ptsz, RT, NONE, RESOLVE, NOFRONT, cudaError_t,                           \
      (const char *symbol, void **funcPtr, unsigned long long flags,                                  \
       enum cudaDriverEntryPointQueryResult *st), (symbol, funcPtr, flags, st), (funcPtr),            \
      "per-thread default stream")                                                                    \
    X(cudaGetDriverEntryPointByVersion, RT, NONE, RESOLVE, NOFRONT, cudaError_t,                       \
      (const char *symbol, void **funcPtr, unsigned int ver, unsigned long long flags,                \
       enum cudaDriverEntryPointQueryResult *st), (symbol, funcPtr, ver, flags, st), (funcPtr), "")   \
    X(cudaGetDriverEntryPointByVersion_ptsz, RT, NONE, RESOLVE, NOFRONT, cudaError_t,                  \
      (const char *symbol, void **funcPtr, unsigned int ver, unsigned long long flags,                \
       enum cudaDriverEntryPointQueryResult *st), (symbol, funcPtr, ver, flags, st), (funcPtr),       \
      "per-thread default stream")                                                                    \
    /* ---- arrays: runtime and driver (vt_cuda_arrays.c); the handle is the record's address ---- */ \
    X(cudaMallocArray, RT, ARRAY, HAND, NOFRONT, cudaError_t,                                          \
      (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width, size_t height,    \
       unsigned int flags), (array, desc, width, height, flags), (),                                  \
      "size: driver's requirements, else logical (flag logical_size); deferred: 0")                   \
    X(cudaMalloc3DArray, RT, ARRAY, HAND, NOFRONT, cudaError_t,                                        \
      (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,       \
       unsigned int flags), (array, desc, extent, flags), (),                                         \
      "size: driver's requirements, else logical (flag logical_size); deferred: 0")                   \
    X(cudaMallocMipmappedArray, RT, ARRAY, HAND, NOFRONT, cudaError_t,                                 \
      (cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,                \
       struct cudaExtent extent, unsigned int numLevels, unsigned int flags),                         \
      (mipmappedArray, desc, extent, numLevels, flags), (),                                           \
      "size: driver's requirements, else logical, levels summed (logical_size); deferred: 0")         \
    X(cudaFreeArray, RT, ARRAY, FREE, NOFRONT, cudaError_t, (cudaArray_t array), (array), (array),    \
      "by handle")                                                                                    \
    X(cudaFreeMipmappedArray, RT, ARRAY, FREE, NOFRONT, cudaError_t,                                   \
      (cudaMipmappedArray_t mipmappedArray), (mipmappedArray), (mipmappedArray), "by handle")         \
    X(cuArrayCreate_v2, DRV, ARRAY, HAND, NOFRONT, CUresult,                                           \
      (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray), (pHandle, pAllocateArray), (), \
      "size: driver's requirements, else logical (flag logical_size)")                                \
    X(cuArray3DCreate_v2, DRV, ARRAY, HAND, NOFRONT, CUresult,                                         \
      (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray), (pHandle, pAllocateArray),   \
      (), "size: driver's requirements, else logical (flag logical_size); deferred: 0")               \
    X(cuMipmappedArrayCreate, DRV, ARRAY, HAND, NOFRONT, CUresult,                                     \
      (CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,                 \
       unsigned int numMipmapLevels), (pHandle, pMipmappedArrayDesc, numMipmapLevels), (),            \
      "size: driver's requirements, else logical, levels summed (logical_size); deferred: 0")         \
    X(cuArrayDestroy, DRV, ARRAY, FREE, NOFRONT, CUresult, (CUarray hArray), (hArray), (hArray),      \
      "by handle")                                                                                    \
    X(cuMipmappedArrayDestroy, DRV, ARRAY, FREE, NOFRONT, CUresult,                                    \
      (CUmipmappedArray hMipmappedArray), (hMipmappedArray), (hMipmappedArray), "by handle")          \
    /* ---- driver: allocation ---- */                                                               \
    X(cuMemAlloc_v2, DRV, DEVICE, ALLOC, FRONT, CUresult, (CUdeviceptr *dptr, size_t bytesize),       \
      (dptr, bytesize), (dptr, bytesize, 0), "")                                                      \
    X(cuMemAllocPitch_v2, DRV, DEVICE, ALLOC, NOFRONT, CUresult,                                       \
      (CUdeviceptr *dptr, size_t *pPitch, size_t width, size_t height, unsigned int elem),            \
      (dptr, pPitch, width, height, elem),                                                            \
      (dptr, r ? (uint64_t)width * height : (uint64_t)*pPitch * height, 0),                           \
      "size: pitch x height (width x height when it fails)")                                          \
    X(cuMemAllocManaged, DRV, MANAGED, ALLOC, FRONT, CUresult,                                         \
      (CUdeviceptr *dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags),              \
      (dptr, bytesize, 0), "")                                                                        \
    X(cuMemAllocHost_v2, DRV, HOST_PINNED, ALLOC, FRONT, CUresult, (void **pp, size_t bytesize),      \
      (pp, bytesize), (pp, bytesize, 0), "")                                                          \
    X(cuMemHostAlloc, DRV, HOST_PINNED, ALLOC, FRONT, CUresult,                                        \
      (void **pp, size_t bytesize, unsigned int flags), (pp, bytesize, flags), (pp, bytesize, 0), "") \
    X(cuMemHostRegister_v2, DRV, HOST_PINNED_REGISTERED, ALLOC, NOFRONT, CUresult,                     \
      (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags), (&p, bytesize, 0),        \
      "registered host memory; freed by unregister")                                                  \
    X(cuMemAllocAsync, DRV, ASYNC, ALLOC, FRONT, CUresult,                                             \
      (CUdeviceptr *dptr, size_t bytesize, CUstream stream), (dptr, bytesize, stream),                \
      (dptr, bytesize, stream), "")                                                                   \
    X(cuMemAllocAsync_ptsz, DRV, ASYNC, ALLOC, FRONT, CUresult,                                        \
      (CUdeviceptr *dptr, size_t bytesize, CUstream stream), (dptr, bytesize, stream),                \
      (dptr, bytesize, stream), "per-thread default stream")                                          \
    X(cuMemAllocFromPoolAsync, DRV, ASYNC, ALLOC, FRONT, CUresult,                                     \
      (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                       \
      (dptr, bytesize, pool, stream),                                                                 \
      (dptr, bytesize, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                        \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cuMemAllocFromPoolAsync_ptsz, DRV, ASYNC, ALLOC, FRONT, CUresult,                                \
      (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                       \
      (dptr, bytesize, pool, stream),                                                                 \
      (dptr, bytesize, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                        \
      "per-thread default stream; the pool's reserve and use are sampled from then on")                        \
    X(cuMemPoolCreate, DRV, NONE, PASS, NOFRONT, CUresult,                                             \
      (CUmemoryPool *pool, const CUmemPoolProps *poolProps), (pool, poolProps),                       \
      (vt_driver_pool_note((uint64_t)(uintptr_t)*pool,                                                \
                           poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE                     \
                               ? poolProps->location.id : -1)),                                       \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cuMemPoolDestroy, DRV, NONE, POOL_DESTROY, NOFRONT, CUresult, (CUmemoryPool pool), (pool),      \
      (pool), "the pool is no longer sampled (taken out before the real call)")                      \
    /* ---- driver: free ---- */                                                                     \
    X(cuMemFree_v2, DRV, DEVICE, FREE, FRONT, CUresult, (CUdeviceptr dptr), (dptr), (dptr), "")       \
    X(cuMemFreeHost, DRV, HOST_PINNED, FREE, NOFRONT, CUresult, (void *p), (p), (p), "")              \
    X(cuMemHostUnregister, DRV, HOST_PINNED, FREE, NOFRONT, CUresult, (void *p), (p), (p),             \
      "registered host memory; freed by unregister")                                                  \
    X(cuMemFreeAsync, DRV, ASYNC, FREE_ASYNC, FRONT, CUresult, (CUdeviceptr dptr, CUstream stream),   \
      (dptr, stream), (dptr, stream), "on a capturing stream: a graph free node, nothing freed")      \
    X(cuMemFreeAsync_ptsz, DRV, ASYNC, FREE_ASYNC, FRONT, CUresult,                                     \
      (CUdeviceptr dptr, CUstream stream), (dptr, stream), (dptr, stream),                            \
      "per-thread default stream; on a capturing stream: a graph free node")                          \
    /* ---- driver: virtual memory management (memory is handles; address space is not) ---- */     \
    X(cuMemCreate, DRV, VMM, HAND, NOFRONT, CUresult,                                                  \
      (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,            \
       unsigned long long flags), (handle, size, prop, flags), (),                                    \
      "keyed by handle; device from prop->location")                                                  \
    X(cuMemRelease, DRV, VMM, HAND, NOFRONT, CUresult, (CUmemGenericAllocationHandle handle),         \
      (handle), (), "memory lives until released and unmapped")                                       \
    X(cuMemMap, DRV, VMM, HAND, NOFRONT, CUresult,                                                     \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,              \
       unsigned long long flags), (ptr, size, offset, handle, flags), (), "")                         \
    X(cuMemUnmap, DRV, VMM, PASS, NOFRONT, CUresult, (CUdeviceptr ptr, size_t size), (ptr, size),     \
      (vt_core_vmm_unmap((uint64_t)ptr, size)), "")                                                   \
    X(cuMemRetainAllocationHandle, DRV, VMM, HAND, NOFRONT, CUresult,                                  \
      (CUmemGenericAllocationHandle *handle, void *addr), (handle, addr), (), "")                     \
    /* ---- driver: multicast objects (NVLS); released through cuMemRelease ---- */                  \
    X(cuMulticastCreate, DRV, VMM_MULTICAST, HAND, NOFRONT, CUresult,                                  \
      (CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop), (mcHandle, prop), (), \
      "keyed by handle like cuMemCreate; prop->size bytes on the current context's device")           \
    X(cuMulticastAddDevice, DRV, NONE, PASS, NOFRONT, CUresult,                                        \
      (CUmemGenericAllocationHandle mcHandle, CUdevice dev), (mcHandle, dev), ((void)0), "")           \
    X(cuMulticastBindMem, DRV, NONE, PASS, NOFRONT, CUresult,                                          \
      (CUmemGenericAllocationHandle mcHandle, size_t mcOffset, CUmemGenericAllocationHandle memHandle, \
       size_t memOffset, size_t size, unsigned long long flags),                                       \
      (mcHandle, mcOffset, memHandle, memOffset, size, flags), ((void)0),                              \
      "bound memory is counted by its own cuMemCreate")                                                \
    X(cuMulticastBindAddr, DRV, NONE, PASS, NOFRONT, CUresult,                                         \
      (CUmemGenericAllocationHandle mcHandle, size_t mcOffset, CUdeviceptr memptr, size_t size,        \
       unsigned long long flags), (mcHandle, mcOffset, memptr, size, flags), ((void)0),                \
      "bound memory is counted by its own allocation")                                                 \
    X(cuMulticastUnbind, DRV, NONE, PASS, NOFRONT, CUresult,                                           \
      (CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset, size_t size),             \
      (mcHandle, dev, mcOffset, size), ((void)0), "")                                                  \
    X(cuMulticastGetGranularity, DRV, NONE, PASS, NOFRONT, CUresult,                                   \
      (size_t *granularity, const CUmulticastObjectProp *prop, CUmulticastGranularity_flags option),   \
      (granularity, prop, option), ((void)0), "")                                                      \
    X(cuMemAddressReserve, DRV, NONE, PASS, NOFRONT, CUresult,                                         \
      (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags),  \
      (ptr, size, alignment, addr, flags), ((void)0), "address space, not memory: counted nowhere")   \
    X(cuMemAddressFree, DRV, NONE, PASS, NOFRONT, CUresult, (CUdeviceptr ptr, size_t size),           \
      (ptr, size), ((void)0), "address space, not memory: counted nowhere")                           \
    /* ---- driver: context teardown (implicit frees), memory info ---- */                           \
    X(cuCtxDestroy_v2, DRV, NONE, HAND, NOFRONT, CUresult, (CUcontext ctx), (ctx), (),                \
      "frees the context's ordinary allocations")                                                     \
    X(cuDevicePrimaryCtxReset_v2, DRV, NONE, HAND, NOFRONT, CUresult, (CUdevice dev), (dev), (),      \
      "frees the primary context's ordinary allocations")                                             \
    X(cuDevicePrimaryCtxRelease_v2, DRV, NONE, HAND, NOFRONT, CUresult, (CUdevice dev), (dev), (),    \
      "the last release frees like a reset")                                                          \
    X(cuMemGetInfo_v2, DRV, NONE, HAND, NOFRONT, CUresult, (size_t *free_bytes, size_t *total_bytes), \
      (free_bytes, total_bytes), (), "free/total recorded for the current device")                    \
    /* ---- imported memory: legacy IPC handles ---- */                                             \
    X(cudaIpcGetMemHandle, RT, NONE, PASS, NOFRONT, cudaError_t,                                       \
      (cudaIpcMemHandle_t *handle, void *devPtr), (handle, devPtr),                                   \
      (vt_ipc_export_note((uint64_t)(uintptr_t)devPtr, vt_ipc_digest(handle, sizeof *handle))),       \
      "the exporter notes the handle's digest with the allocation's address")                         \
    X(cudaIpcOpenMemHandle, RT, IPC_IMPORT, HAND, NOFRONT, cudaError_t,                                \
      (void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags), (devPtr, handle, flags), (),    \
      "one record per handle and context; opens counted as the driver counts them")                   \
    X(cudaIpcCloseMemHandle, RT, IPC_IMPORT, HAND, NOFRONT, cudaError_t, (void *devPtr), (devPtr), (), \
      "the last close frees the record")                                                              \
    X(cuIpcGetMemHandle, DRV, NONE, PASS, NOFRONT, CUresult, (CUipcMemHandle *pHandle, CUdeviceptr dptr), \
      (pHandle, dptr), (vt_ipc_export_note((uint64_t)dptr, vt_ipc_digest(pHandle, sizeof *pHandle))), \
      "the exporter notes the handle's digest with the allocation's address")                         \
    X(cuIpcOpenMemHandle_v2, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult,                                 \
      (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags), (pdptr, handle, Flags), (),    \
      "one record per handle and context; opens counted as the driver counts them")                   \
    X(cuIpcCloseMemHandle, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult, (CUdeviceptr dptr), (dptr), (),   \
      "the last close frees the record")                                                              \
    /* ---- imported memory: pools shared between processes ---- */                               \
    X(cudaMemPoolExportToShareableHandle, RT, NONE, PASS, NOFRONT, cudaError_t,                        \
      (void *shareableHandle, cudaMemPool_t memPool, enum cudaMemAllocationHandleType handleType,     \
       unsigned int flags), (shareableHandle, memPool, handleType, flags), ((void)0),                  \
      "forwarded: pointers are exported one by one")                                                  \
    X(cudaMemPoolImportFromShareableHandle, RT, NONE, PASS, NOFRONT, cudaError_t,                      \
      (cudaMemPool_t *memPool, void *shareableHandle, enum cudaMemAllocationHandleType handleType,    \
       unsigned int flags), (memPool, shareableHandle, handleType, flags), ((void)0),                  \
      "forwarded: an imported pool holds no memory here; the pointers imported from it do")          \
    X(cudaMemPoolExportPointer, RT, NONE, PASS, NOFRONT, cudaError_t,                                  \
      (struct cudaMemPoolPtrExportData *exportData, void *ptr), (exportData, ptr),                    \
      (vt_ipc_export_note((uint64_t)(uintptr_t)ptr, vt_ipc_digest(exportData, sizeof *exportData))),  \
      "the exporter notes the export data's digest with the pointer")                                 \
    X(cudaMemPoolImportPointer, RT, IPC_IMPORT, HAND, NOFRONT, cudaError_t,                            \
      (void **ptr, cudaMemPool_t memPool, struct cudaMemPoolPtrExportData *exportData),               \
      (ptr, memPool, exportData), (), "freed by cudaFree / cudaFreeAsync (their rows)")               \
    X(cuMemPoolExportToShareableHandle, DRV, NONE, PASS, NOFRONT, CUresult,                            \
      (void *handle_out, CUmemoryPool pool, CUmemAllocationHandleType handleType,                     \
       unsigned long long flags), (handle_out, pool, handleType, flags), ((void)0),                   \
      "forwarded: pointers are exported one by one")                                                  \
    X(cuMemPoolImportFromShareableHandle, DRV, NONE, PASS, NOFRONT, CUresult,                          \
      (CUmemoryPool *pool_out, void *handle, CUmemAllocationHandleType handleType,                    \
       unsigned long long flags), (pool_out, handle, handleType, flags), ((void)0),                   \
      "forwarded: an imported pool holds no memory here; the pointers imported from it do")          \
    X(cuMemPoolExportPointer, DRV, NONE, PASS, NOFRONT, CUresult,                                      \
      (CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr), (shareData_out, ptr),                 \
      (vt_ipc_export_note((uint64_t)ptr, vt_ipc_digest(shareData_out, sizeof *shareData_out))),       \
      "the exporter notes the export data's digest with the pointer")                                 \
    X(cuMemPoolImportPointer, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult,                                \
      (CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData),                   \
      (ptr_out, pool, shareData), (), "freed by cuMemFree_v2 / cuMemFreeAsync (their rows)")          \
    /* ---- imported memory: VMM shareable handles ---- */                                         \
    X(cuMemExportToShareableHandle, DRV, NONE, PASS, NOFRONT, CUresult,                                \
      (void *shareableHandle, CUmemGenericAllocationHandle handle, CUmemAllocationHandleType handleType, \
       unsigned long long flags), (shareableHandle, handle, handleType, flags),                       \
      (vt_hook_vmm_export((uint64_t)handle, shareableHandle, (int)handleType)),                        \
      "the exporter notes the descriptor's digest (st_dev, st_ino) with the mapped address")          \
    X(cuMemImportFromShareableHandle, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult,                        \
      (CUmemGenericAllocationHandle *handle, void *osHandle, CUmemAllocationHandleType shHandleType), \
      (handle, osHandle, shHandleType), (),                                                           \
      "keyed by handle like cuMemCreate; live while referenced or mapped; counted once")             \
    /* ---- imported memory: external memory (another API's, by an opaque descriptor) ---- */      \
    X(cudaImportExternalMemory, RT, NONE, HAND, NOFRONT, cudaError_t,                                  \
      (cudaExternalMemory_t *extMem_out, const struct cudaExternalMemoryHandleDesc *memHandleDesc),   \
      (extMem_out, memHandleDesc), (), "the object's descriptor digest is noted; its buffers hold the bytes") \
    X(cudaExternalMemoryGetMappedBuffer, RT, IPC_IMPORT, HAND, NOFRONT, cudaError_t,                   \
      (void **devPtr, cudaExternalMemory_t extMem, const struct cudaExternalMemoryBufferDesc *bufferDesc), \
      (devPtr, extMem, bufferDesc), (), "size: the buffer's; freed by cudaFree or the object's destroy") \
    X(cudaDestroyExternalMemory, RT, IPC_IMPORT, HAND, NOFRONT, cudaError_t, (cudaExternalMemory_t extMem), \
      (extMem), (), "frees the records of the object's buffers")                                      \
    X(cuImportExternalMemory, DRV, NONE, HAND, NOFRONT, CUresult,                                      \
      (CUexternalMemory *extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc),          \
      (extMem_out, memHandleDesc), (), "the object's descriptor digest is noted; its buffers hold the bytes") \
    X(cuExternalMemoryGetMappedBuffer, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult,                       \
      (CUdeviceptr *devPtr, CUexternalMemory extMem, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc), \
      (devPtr, extMem, bufferDesc), (), "size: the buffer's; freed by cuMemFree_v2 or the object's destroy") \
    X(cuDestroyExternalMemory, DRV, IPC_IMPORT, HAND, NOFRONT, CUresult, (CUexternalMemory extMem),    \
      (extMem), (), "frees the records of the object's buffers")                                      \
    /* ---- driver: stream capture and graph memory ---- */ \
    X(cuStreamBeginCapture_v2, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureMode mode), \
      (hStream, mode), \
      (vt_graph_capture_begin()), \
      "a capture begins") \
    X(cuStreamBeginCapture_v2_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureMode mode), \
      (hStream, mode), \
      (vt_graph_capture_begin()), \
      "a capture begins; per-thread default stream") \
    X(cuStreamEndCapture, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUgraph *phGraph), \
      (hStream, phGraph), \
      (vt_graph_capture_end()), \
      "the capture ends") \
    X(cuStreamEndCapture_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUgraph *phGraph), \
      (hStream, phGraph), \
      (vt_graph_capture_end()), \
      "the capture ends; per-thread default stream") \
    X(cuStreamIsCapturing, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureStatus *captureStatus), \
      (hStream, captureStatus), \
      ((void)0), \
      "forwarded") \
    X(cuStreamIsCapturing_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureStatus *captureStatus), \
      (hStream, captureStatus), \
      ((void)0), \
      "forwarded; per-thread default stream") \
    X(cuStreamGetCaptureInfo_v3, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, \
       CUgraph *graph_out, const CUgraphNode **dependencies_out, \
       const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out), \
      (hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out), \
      ((void)0), \
      "forwarded") \
    X(cuStreamGetCaptureInfo_v3_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, \
       CUgraph *graph_out, const CUgraphNode **dependencies_out, \
       const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out), \
      (hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out), \
      ((void)0), \
      "forwarded; per-thread default stream") \
    X(cuGraphAddMemAllocNode, DRV, GRAPH, HAND, NOFRONT, CUresult, \
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, \
       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams), \
      (phGraphNode, hGraph, dependencies, numDependencies, nodeParams), \
      (), \
      "the node is noted with its stack; counted from the launch that maps it") \
    X(cuGraphAddMemFreeNode, DRV, GRAPH, PASS, NOFRONT, CUresult, \
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, \
       size_t numDependencies, CUdeviceptr dptr), \
      (phGraphNode, hGraph, dependencies, numDependencies, dptr), \
      (vt_graph_node_free((uint64_t)(uintptr_t)hGraph, (uint64_t)dptr)), \
      "frees at the launch that runs it") \
    X(cuGraphDestroy, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraph hGraph), \
      (hGraph), \
      (vt_graph_destroyed((uint64_t)(uintptr_t)hGraph)), \
      "frees nothing") \
    X(cuGraphInstantiateWithFlags, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags), \
      (phGraphExec, hGraph, flags), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*phGraphExec, (uint64_t)(uintptr_t)hGraph, \
       (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0)), \
      "cuGraphInstantiate in cuda.h; the exec copies the memory nodes of its graph") \
    X(cuGraphInstantiateWithParams, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams), \
      (phGraphExec, hGraph, instantiateParams), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*phGraphExec, (uint64_t)(uintptr_t)hGraph, \
       (instantiateParams->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0)), \
      "the exec copies the memory nodes of its graph") \
    X(cuGraphInstantiateWithParams_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams), \
      (phGraphExec, hGraph, instantiateParams), \
      (vt_graph_instantiated((uint64_t)(uintptr_t)*phGraphExec, (uint64_t)(uintptr_t)hGraph, \
       (instantiateParams->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0)), \
      "the exec copies the memory nodes of its graph; per-thread default stream") \
    X(cuGraphUpload, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec hGraphExec, CUstream hStream), \
      (hGraphExec, hStream), \
      ((void)0), \
      "graph reserve grows; nothing counted until launch") \
    X(cuGraphUpload_ptsz, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec hGraphExec, CUstream hStream), \
      (hGraphExec, hStream), \
      ((void)0), \
      "graph reserve grows; nothing counted until launch; per-thread default stream") \
    X(cuGraphLaunch, DRV, GRAPH, PASS, NOFRONT, CUresult, \
      (CUgraphExec hGraphExec, CUstream hStream), \
      (hGraphExec, hStream), \
      (vt_hook_graph_launched((uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hStream)), \
      "allocation nodes counted, free nodes free") \
    X(cuGraphLaunch_ptsz, DRV, GRAPH, PASS, NOFRONT, CUresult, \
      (CUgraphExec hGraphExec, CUstream hStream), \
      (hGraphExec, hStream), \
      (vt_hook_graph_launched((uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hStream)), \
      "allocation nodes counted, free nodes free; per-thread default stream") \
    X(cuGraphExecDestroy, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUgraphExec hGraphExec), \
      (hGraphExec), \
      (vt_graph_exec_destroyed((uint64_t)(uintptr_t)hGraphExec)), \
      "frees nothing: live graph allocations stay") \
    X(cuDeviceGraphMemTrim, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUdevice device), \
      (device), \
      ((void)0), \
      "graph reserve changes; the writer re-reads it") \
    X(cuDeviceGetGraphMemAttribute, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUdevice device, CUgraphMem_attribute attr, void *value), \
      (device, attr, value), \
      ((void)0), \
      "forwarded") \
    X(cuDeviceSetGraphMemAttribute, DRV, NONE, PASS, NOFRONT, CUresult, \
      (CUdevice device, CUgraphMem_attribute attr, void *value), \
      (device, attr, value), \
      ((void)0), \
      "forwarded") \
    /* ---- driver: resolvers ---- */                                                                \
    X(cuGetProcAddress, DRV, NONE, RESOLVE, NOFRONT, CUresult,                                         \
      (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags),                            \
      (symbol, pfn, cudaVersion, flags), (pfn), "")                                                   \
    X(cuGetProcAddress_v2, DRV, NONE, RESOLVE, NOFRONT, CUresult,                                      \
      (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,                             \
       CUdriverProcAddressQueryResult *symbolStatus), (symbol, pfn, cudaVersion, flags, symbolStatus),\
      (pfn), "the runtime's one look-up of the driver")

/* The loader and C library functions libvramtrace also exports (not CUDA; each
 * written by hand: vt_resolve.c, vt_hooks_dl.c, vt_hooks_fd.c, vt_hooks_cancel.c,
 * vt_hooks_exit.c, vt_lifecycle.c).
 * X(name, note). */
#define VT_LIBC_HOOK_TABLE(X)                                                                       \
    X(dlsym, "cu* results swapped for their hooks (vt_resolve.c)")                                  \
    X(dlopen, "forwarded with the caller intact; RTLD_DEEPBIND loads re-linked to our hooks (vt_hooks_dl.c)") \
    X(dlerror, "the program's message kept across our own look-ups (vt_hooks_dl.c)")               \
    X(dlclose, "forwarded; drops the kept message, as glibc resets it (vt_hooks_dl.c)")           \
    X(dlinfo, "forwarded; drops the kept message, as glibc resets it (vt_hooks_dl.c)")            \
    X(dl_iterate_phdr, "forwarded; hooked calls from its callbacks take no loader lock (vt_hooks_dl.c)") \
    X(pipe2, "forwarded; libunwind's validation pipe moved above low descriptors (vt_hooks_fd.c)")  \
    X(pthread_cancel, "waits for a stack capture in progress (vt_hooks_cancel.c)")                  \
    X(_exit, "waits (at most 1 s) for the writer thread to write the queued step snapshots (vt_hooks_exit.c)") \
    X(_Exit, "as _exit (vt_hooks_exit.c)")                                                          \
    X(__register_atfork, "registers our fork handlers before the caller's (vt_lifecycle.c)")

/* ---- declarations generated from the table ---- */

/* typedef ret_t (*vt_<name>_t) PARAMS; extern vt_<name>_t real_<name>; the shim
 * vt__h_<name> (hidden; exported under <name> through an alias in its own file). */
#define VT_HOOK_DECLARE(name, fam, kind, shape, front, ret_t, PARAMS, ARGS, SARGS, note) \
    typedef ret_t (*vt_##name##_t) PARAMS;                                              \
    extern vt_##name##_t real_##name;                                                   \
    ret_t vt__h_##name PARAMS;                                                          \
    VT_HOOK_DECLARE_FWD_##front(name)
/* A front's nested-call target (vt_hooks.h VT_HOOK_FRONT). */
#define VT_HOOK_DECLARE_FWD_FRONT(name) extern vt_##name##_t vt__fwd_##name;
#define VT_HOOK_DECLARE_FWD_NOFRONT(name)
VT_HOOK_TABLE(VT_HOOK_DECLARE)

/* Result codes of each family: ok, out of memory, "not initialised". */
#define VT_OK_RT        cudaSuccess
#define VT_OOM_RT       cudaErrorMemoryAllocation
#define VT_NOTREADY_RT  cudaErrorInitializationError
#define VT_OK_DRV       CUDA_SUCCESS
#define VT_OOM_DRV      CUDA_ERROR_OUT_OF_MEMORY
#define VT_NOTREADY_DRV CUDA_ERROR_NOT_INITIALIZED

#endif /* VT_HOOK_TABLE_H */
