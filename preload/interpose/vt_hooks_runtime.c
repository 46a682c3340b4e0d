/* vt_hooks_runtime.c — shims over the CUDA runtime API (cuda_runtime_api.h, CUDA 13).
 *
 * These fire for programs that use the SHARED runtime (libcudart.so.13), through PLT
 * interposition or our dlsym override (dlsym(handle, "cudaMalloc"), Python ctypes).
 * With the shared runtime the driver shims fire underneath; the runtime shim is the
 * outermost call and records, the driver shims only forward (vt_guard.h). A statically
 * linked runtime is not interposable: only the driver shims see it.
 * Every shim returns the real cudaError_t unchanged and preserves errno; when the real
 * function cannot be found it returns cudaErrorInitializationError.
 */
#define _GNU_SOURCE
#include "vt_hooks.h"
#include "vt_resolve.h"

#include <cuda_runtime_api.h>

typedef cudaError_t (*vt_cudaMalloc_t)(void **, size_t);
typedef cudaError_t (*vt_cudaMallocPitch_t)(void **, size_t *, size_t, size_t);
typedef cudaError_t (*vt_cudaMalloc3D_t)(struct cudaPitchedPtr *, struct cudaExtent);
typedef cudaError_t (*vt_cudaMallocManaged_t)(void **, size_t, unsigned int);
typedef cudaError_t (*vt_cudaMallocHost_t)(void **, size_t);
typedef cudaError_t (*vt_cudaHostAlloc_t)(void **, size_t, unsigned int);
typedef cudaError_t (*vt_cudaFree_t)(void *);
typedef cudaError_t (*vt_cudaFreeHost_t)(void *);
typedef cudaError_t (*vt_cudaMallocAsync_t)(void **, size_t, cudaStream_t);
typedef cudaError_t (*vt_cudaMallocFromPoolAsync_t)(void **, size_t, cudaMemPool_t, cudaStream_t);
typedef cudaError_t (*vt_cudaFreeAsync_t)(void *, cudaStream_t);
typedef cudaError_t (*vt_cudaMemPoolTrimTo_t)(cudaMemPool_t, size_t);
typedef cudaError_t (*vt_cudaDeviceReset_t)(void);
typedef cudaError_t (*vt_cudaGetDriverEntryPoint_t)(const char *, void **, unsigned long long,
                                                    enum cudaDriverEntryPointQueryResult *);
typedef cudaError_t (*vt_cudaGetDriverEntryPointByVersion_t)(const char *, void **, unsigned int,
                                                             unsigned long long,
                                                             enum cudaDriverEntryPointQueryResult *);

static vt_cudaMalloc_t                 real_cudaMalloc;
static vt_cudaMallocPitch_t            real_cudaMallocPitch;
static vt_cudaMalloc3D_t               real_cudaMalloc3D;
static vt_cudaMallocManaged_t          real_cudaMallocManaged;
static vt_cudaMallocHost_t             real_cudaMallocHost;
static vt_cudaHostAlloc_t              real_cudaHostAlloc;
static vt_cudaFree_t                   real_cudaFree;
static vt_cudaFreeHost_t               real_cudaFreeHost;
static vt_cudaMallocAsync_t            real_cudaMallocAsync;
static vt_cudaMallocAsync_t            real_cudaMallocAsync_ptsz;
static vt_cudaMallocFromPoolAsync_t    real_cudaMallocFromPoolAsync;
static vt_cudaMallocFromPoolAsync_t    real_cudaMallocFromPoolAsync_ptsz;
static vt_cudaFreeAsync_t              real_cudaFreeAsync;
static vt_cudaFreeAsync_t              real_cudaFreeAsync_ptsz;
static vt_cudaMemPoolTrimTo_t          real_cudaMemPoolTrimTo;
static vt_cudaDeviceReset_t            real_cudaDeviceReset;
static vt_cudaGetDriverEntryPoint_t    real_cudaGetDriverEntryPoint;
static vt_cudaGetDriverEntryPoint_t    real_cudaGetDriverEntryPoint_ptsz;
static vt_cudaGetDriverEntryPointByVersion_t real_cudaGetDriverEntryPointByVersion;
static vt_cudaGetDriverEntryPointByVersion_t real_cudaGetDriverEntryPointByVersion_ptsz;

#define VT_REAL_OR_FAIL(name) VT_REAL_OR_RETURN(name, cudaErrorInitializationError)

#define VT_ALLOC_DONE(c, api, kind, r, addr, size, stream) \
    vt_hook_alloc_done(&(c), api, kind, (r) == cudaSuccess, (int)(r), \
                       (r) == cudaErrorMemoryAllocation, addr, size, stream, -2)

/* ---- allocation ---- */

/* Plain allocation shims (vt_hooks.h VT_ALLOC_SHIM) record through this: no stream. */
#define VT_SHIM_DONE(c, api, kind, r, addr, size) VT_ALLOC_DONE(c, api, kind, r, addr, size, 0)

VT_ALLOC_SHIM(cudaError_t, cudaMalloc, VT_KIND_DEVICE, (void **devPtr, size_t size), (devPtr, size), devPtr, size);

static cudaError_t vt__h_cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    VT_REAL_OR_FAIL(cudaMallocPitch);
    vt_call c;
    vt_call_begin(&c, 1);
    cudaError_t r = real_cudaMallocPitch(devPtr, pitch, width, height);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, "cudaMallocPitch", VT_KIND_DEVICE, r, r ? 0 : (uint64_t)(uintptr_t)*devPtr,
                      r ? (uint64_t)width * height : (uint64_t)*pitch * height, 0);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaMallocPitch);

static cudaError_t vt__h_cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    VT_REAL_OR_FAIL(cudaMalloc3D);
    vt_call c;
    vt_call_begin(&c, 1);
    cudaError_t r = real_cudaMalloc3D(pitchedDevPtr, extent);
    int e = errno;
    if (c.rec) {
        uint64_t size = r ? (uint64_t)extent.width * extent.height * extent.depth
                          : (uint64_t)pitchedDevPtr->pitch * extent.height * extent.depth;
        VT_ALLOC_DONE(c, "cudaMalloc3D", VT_KIND_DEVICE, r, r ? 0 : (uint64_t)(uintptr_t)pitchedDevPtr->ptr, size, 0);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaMalloc3D);

VT_ALLOC_SHIM(cudaError_t, cudaMallocManaged, VT_KIND_MANAGED, (void **devPtr, size_t size, unsigned int flags),
              (devPtr, size, flags), devPtr, size);

VT_ALLOC_SHIM(cudaError_t, cudaMallocHost, VT_KIND_HOST_PINNED, (void **ptr, size_t size), (ptr, size), ptr, size);

VT_ALLOC_SHIM(cudaError_t, cudaHostAlloc, VT_KIND_HOST_PINNED, (void **pHost, size_t size, unsigned int flags),
              (pHost, size, flags), pHost, size);

/* always_inline: the stack is captured in the exported hook\'s own frame (vt_hooks.h) */
static inline __attribute__((always_inline)) cudaError_t vt__malloc_async(vt_cudaMallocAsync_t real, const char *api, void **devPtr,
                                    size_t size, cudaStream_t stream)
{
    vt_call c;
    vt_call_begin(&c, 1);
    cudaError_t r = real(devPtr, size, stream);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, api, VT_KIND_ASYNC, r, r ? 0 : (uint64_t)(uintptr_t)*devPtr, size, (uint64_t)(uintptr_t)stream);
    vt_call_end(&c);
    errno = e;
    return r;
}

static cudaError_t vt__h_cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaMallocAsync);
    return vt__malloc_async(real_cudaMallocAsync, "cudaMallocAsync", devPtr, size, stream);
}
VT_EXPORT_ALIAS(cudaMallocAsync);

static cudaError_t vt__h_cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaMallocAsync_ptsz);
    return vt__malloc_async(real_cudaMallocAsync_ptsz, "cudaMallocAsync_ptsz", devPtr, size, stream);
}
VT_EXPORT_ALIAS(cudaMallocAsync_ptsz);

/* always_inline: the stack is captured in the exported hook\'s own frame (vt_hooks.h) */
static inline __attribute__((always_inline)) cudaError_t vt__malloc_pool(vt_cudaMallocFromPoolAsync_t real, const char *api, void **ptr,
                                   size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    vt_call c;
    vt_call_begin(&c, 1);
    cudaError_t r = real(ptr, size, pool, stream);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, api, VT_KIND_ASYNC, r, r ? 0 : (uint64_t)(uintptr_t)*ptr, size, (uint64_t)(uintptr_t)stream);
    vt_call_end(&c);
    errno = e;
    return r;
}

static cudaError_t vt__h_cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaMallocFromPoolAsync);
    return vt__malloc_pool(real_cudaMallocFromPoolAsync, "cudaMallocFromPoolAsync", ptr, size, pool, stream);
}
VT_EXPORT_ALIAS(cudaMallocFromPoolAsync);

static cudaError_t vt__h_cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaMallocFromPoolAsync_ptsz);
    return vt__malloc_pool(real_cudaMallocFromPoolAsync_ptsz, "cudaMallocFromPoolAsync_ptsz", ptr, size, pool, stream);
}
VT_EXPORT_ALIAS(cudaMallocFromPoolAsync_ptsz);

/* ---- free ---- */

VT_HOOK_FRONT(cudaError_t, cudaFree, (void *devPtr), (devPtr))
{
    VT_REAL_OR_FAIL(cudaFree);
    VT_FREE_BODY(cudaError_t, (uintptr_t)devPtr, cudaSuccess, real_cudaFree(devPtr));
}

VT_HOOK_FRONT(cudaError_t, cudaFreeHost, (void *ptr), (ptr))
{
    VT_REAL_OR_FAIL(cudaFreeHost);
    VT_FREE_BODY(cudaError_t, (uintptr_t)ptr, cudaSuccess, real_cudaFreeHost(ptr));
}

static cudaError_t vt__free_async(vt_cudaFreeAsync_t real, void *p, cudaStream_t stream)
{
    VT_FREE_BODY(cudaError_t, (uintptr_t)p, cudaSuccess, real(p, stream));
}

static cudaError_t vt__h_cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaFreeAsync);
    return vt__free_async(real_cudaFreeAsync, devPtr, stream);
}
VT_EXPORT_ALIAS(cudaFreeAsync);

static cudaError_t vt__h_cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
    VT_REAL_OR_FAIL(cudaFreeAsync_ptsz);
    return vt__free_async(real_cudaFreeAsync_ptsz, devPtr, stream);
}
VT_EXPORT_ALIAS(cudaFreeAsync_ptsz);

/* Trimming returns pool memory to the system: pool-reserved bytes change (the writer
 * re-reads them), live allocations do not. */
static cudaError_t vt__h_cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep)
{
    VT_REAL_OR_FAIL(cudaMemPoolTrimTo);
    VT_PASS_BODY(cudaError_t, cudaSuccess, real_cudaMemPoolTrimTo(pool, minBytesToKeep), (void)0);
}
VT_EXPORT_ALIAS(cudaMemPoolTrimTo);

/* The program resets its current device: every ordinary allocation of that device's
 * primary context is gone (stream-ordered pool memory survives, as in the driver). */
static cudaError_t vt__h_cudaDeviceReset(void)
{
    VT_REAL_OR_FAIL(cudaDeviceReset);
    vt_call c;
    vt_call_begin(&c, 0);
    uint64_t ctx = 0;
    int dev = c.rec ? vt_hook_device(&ctx) : -1;
    uint64_t before = vt_core_next_seq();
    cudaError_t r = real_cudaDeviceReset();
    int e = errno;
    if (r == cudaSuccess) {
        vt_hook_ctx_changed();
        if (c.rec && dev >= 0)
            vt_core_drop_context(dev, 0, before);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaDeviceReset);

/* ---- driver entry points handed out by the runtime ---- */

static cudaError_t vt__entry(vt_cudaGetDriverEntryPoint_t real, const char *symbol, void **funcPtr,
                             unsigned long long flags, enum cudaDriverEntryPointQueryResult *st)
{
    cudaError_t r = real(symbol, funcPtr, flags, st);
    if (r == cudaSuccess && funcPtr && *funcPtr)
        *funcPtr = vt_resolve_swap(*funcPtr);
    return r;
}

static cudaError_t vt__h_cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                                 enum cudaDriverEntryPointQueryResult *st)
{
    VT_REAL_OR_FAIL(cudaGetDriverEntryPoint);
    return vt__entry(real_cudaGetDriverEntryPoint, symbol, funcPtr, flags, st);
}
VT_EXPORT_ALIAS(cudaGetDriverEntryPoint);

static cudaError_t vt__h_cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                      enum cudaDriverEntryPointQueryResult *st)
{
    VT_REAL_OR_FAIL(cudaGetDriverEntryPoint_ptsz);
    return vt__entry(real_cudaGetDriverEntryPoint_ptsz, symbol, funcPtr, flags, st);
}
VT_EXPORT_ALIAS(cudaGetDriverEntryPoint_ptsz);

static cudaError_t vt__entry_v(vt_cudaGetDriverEntryPointByVersion_t real, const char *symbol, void **funcPtr,
                               unsigned int ver, unsigned long long flags, enum cudaDriverEntryPointQueryResult *st)
{
    cudaError_t r = real(symbol, funcPtr, ver, flags, st);
    if (r == cudaSuccess && funcPtr && *funcPtr)
        *funcPtr = vt_resolve_swap(*funcPtr);
    return r;
}

static cudaError_t vt__h_cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int ver,
                                                          unsigned long long flags,
                                                          enum cudaDriverEntryPointQueryResult *st)
{
    VT_REAL_OR_FAIL(cudaGetDriverEntryPointByVersion);
    return vt__entry_v(real_cudaGetDriverEntryPointByVersion, symbol, funcPtr, ver, flags, st);
}
VT_EXPORT_ALIAS(cudaGetDriverEntryPointByVersion);

static cudaError_t vt__h_cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int ver,
                                                               unsigned long long flags,
                                                               enum cudaDriverEntryPointQueryResult *st)
{
    VT_REAL_OR_FAIL(cudaGetDriverEntryPointByVersion_ptsz);
    return vt__entry_v(real_cudaGetDriverEntryPointByVersion_ptsz, symbol, funcPtr, ver, flags, st);
}
VT_EXPORT_ALIAS(cudaGetDriverEntryPointByVersion_ptsz);

#define VT_ENTRY(n) {#n, (void **)&real_##n, (void *)vt__h_##n, NULL}
#define VT_ENTRY_F(n) {#n, (void **)&real_##n, (void *)vt__h_##n, (void **)&vt__fwd_##n}   /* fronted */
const vt_hook_entry vt__runtime_hooks[] = {
    VT_ENTRY_F(cudaMalloc),
    VT_ENTRY(cudaMallocPitch),
    VT_ENTRY(cudaMalloc3D),
    VT_ENTRY_F(cudaMallocManaged),
    VT_ENTRY_F(cudaMallocHost),
    VT_ENTRY_F(cudaHostAlloc),
    VT_ENTRY_F(cudaFree),
    VT_ENTRY_F(cudaFreeHost),
    VT_ENTRY(cudaMallocAsync),
    VT_ENTRY(cudaMallocAsync_ptsz),
    VT_ENTRY(cudaMallocFromPoolAsync),
    VT_ENTRY(cudaMallocFromPoolAsync_ptsz),
    VT_ENTRY(cudaFreeAsync),
    VT_ENTRY(cudaFreeAsync_ptsz),
    VT_ENTRY(cudaMemPoolTrimTo),
    VT_ENTRY(cudaDeviceReset),
    VT_ENTRY(cudaGetDriverEntryPoint),
    VT_ENTRY(cudaGetDriverEntryPoint_ptsz),
    VT_ENTRY(cudaGetDriverEntryPointByVersion),
    VT_ENTRY(cudaGetDriverEntryPointByVersion_ptsz),
};
const size_t vt__n_runtime_hooks = sizeof vt__runtime_hooks / sizeof vt__runtime_hooks[0];
