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
 *               PASS    forwards under the depth guard and, on success as the
 *                       outermost call, runs SHAPE_ARGS = (statement).
 *               POOL_DESTROY  a stream-ordered pool's destroy: the pool leaves the
 *                       writer's samples before the real call and comes back if it
 *                       fails; SHAPE_ARGS = (pool).
 *               RESOLVE a resolver: the real call first, then a returned function
 *                       pointer that is a real function we hook is replaced by its
 *                       hook (vt_resolve_swap); SHAPE_ARGS = (pointer out-parameter).
 *               HAND    written by hand in vt_cuda_runtime.c / vt_cuda_driver.c,
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
 * family's hand-written file. Includes both CUDA headers (types only: nothing links
 * the real libraries).
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
    X(cudaMallocAsync, RT, ASYNC, ALLOC, NOFRONT, cudaError_t,                                         \
      (void **devPtr, size_t size, cudaStream_t stream), (devPtr, size, stream),                      \
      (devPtr, size, stream), "")                                                                     \
    X(cudaMallocAsync_ptsz, RT, ASYNC, ALLOC, NOFRONT, cudaError_t,                                    \
      (void **devPtr, size_t size, cudaStream_t stream), (devPtr, size, stream),                      \
      (devPtr, size, stream), "per-thread default stream")                                            \
    X(cudaMallocFromPoolAsync, RT, ASYNC, ALLOC, NOFRONT, cudaError_t,                                 \
      (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream), (ptr, size, pool, stream),  \
      (ptr, size, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                             \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cudaMallocFromPoolAsync_ptsz, RT, ASYNC, ALLOC, NOFRONT, cudaError_t,                            \
      (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream), (ptr, size, pool, stream),  \
      (ptr, size, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                             \
      "per-thread default stream; the pool's reserve and use are sampled from then on")                        \
    /* ---- runtime: free ---- */                                                                    \
    X(cudaFree, RT, DEVICE, FREE, FRONT, cudaError_t, (void *devPtr), (devPtr), (devPtr), "")         \
    X(cudaFreeHost, RT, HOST_PINNED, FREE, FRONT, cudaError_t, (void *ptr), (ptr), (ptr), "")         \
    X(cudaHostUnregister, RT, HOST_PINNED, FREE, NOFRONT, cudaError_t, (void *ptr), (ptr), (ptr),      \
      "registered host memory; freed by unregister")                                                  \
    X(cudaFreeAsync, RT, ASYNC, FREE, NOFRONT, cudaError_t, (void *devPtr, cudaStream_t stream),      \
      (devPtr, stream), (devPtr), "")                                                                 \
    X(cudaFreeAsync_ptsz, RT, ASYNC, FREE, NOFRONT, cudaError_t, (void *devPtr, cudaStream_t stream), \
      (devPtr, stream), (devPtr), "per-thread default stream")                                        \
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
    X(cuMemAllocAsync, DRV, ASYNC, ALLOC, NOFRONT, CUresult,                                           \
      (CUdeviceptr *dptr, size_t bytesize, CUstream stream), (dptr, bytesize, stream),                \
      (dptr, bytesize, stream), "")                                                                   \
    X(cuMemAllocAsync_ptsz, DRV, ASYNC, ALLOC, NOFRONT, CUresult,                                      \
      (CUdeviceptr *dptr, size_t bytesize, CUstream stream), (dptr, bytesize, stream),                \
      (dptr, bytesize, stream), "per-thread default stream")                                          \
    X(cuMemAllocFromPoolAsync, DRV, ASYNC, ALLOC, NOFRONT, CUresult,                                   \
      (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                       \
      (dptr, bytesize, pool, stream),                                                                 \
      (dptr, bytesize, stream, vt_hook_pool_used((uint64_t)(uintptr_t)pool)),                        \
      "the pool's reserve and use are sampled from then on")                                                   \
    X(cuMemAllocFromPoolAsync_ptsz, DRV, ASYNC, ALLOC, NOFRONT, CUresult,                              \
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
    X(cuMemFreeAsync, DRV, ASYNC, FREE, NOFRONT, CUresult, (CUdeviceptr dptr, CUstream stream),       \
      (dptr, stream), (dptr), "")                                                                     \
    X(cuMemFreeAsync_ptsz, DRV, ASYNC, FREE, NOFRONT, CUresult, (CUdeviceptr dptr, CUstream stream),  \
      (dptr, stream), (dptr), "per-thread default stream")                                            \
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
 * vt_lifecycle.c).
 * X(name, note). */
#define VT_LIBC_HOOK_TABLE(X)                                                                       \
    X(dlsym, "cu* results swapped for their hooks (vt_resolve.c)")                                  \
    X(dlopen, "forwarded with the caller intact; RTLD_DEEPBIND loads re-linked to our hooks (vt_hooks_dl.c)") \
    X(dlerror, "the program's message kept across our own look-ups (vt_hooks_dl.c)")               \
    X(dl_iterate_phdr, "forwarded; hooked calls from its callbacks take no loader lock (vt_hooks_dl.c)") \
    X(pipe2, "forwarded; libunwind's validation pipe moved above low descriptors (vt_hooks_fd.c)")  \
    X(pthread_cancel, "waits for a stack capture in progress (vt_hooks_cancel.c)")                  \
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
