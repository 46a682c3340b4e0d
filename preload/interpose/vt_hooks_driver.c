/* vt_hooks_driver.c — shims over the CUDA driver API (cuda.h, CUDA 13): allocation,
 * free, VMM, context teardown, memory info, and the cuGetProcAddress resolvers.
 *
 * Reached three ways: PLT interposition (a program linked with -lcuda), our dlsym
 * override (dlsym(handle, "cuMemAlloc_v2")), and our cuGetProcAddress/_v2 wrappers
 * (the CUDA runtime, shared or static, and cudaGetDriverEntryPoint*). Only the
 * outermost hooked call on a thread records (vt_guard.h). Every shim returns the real
 * CUresult unchanged and preserves errno; when the real function cannot be found it
 * returns CUDA_ERROR_NOT_INITIALIZED without doing anything.
 */
#define _GNU_SOURCE
#include "vt_hooks.h"
#include "vt_resolve.h"
#include "vt_writer.h"

#include <cuda.h>
#undef cuGetProcAddress

/* ---- one typedef + one real_ pointer per hooked function ---- */
typedef CUresult (*vt_cuMemAlloc_v2_t)(CUdeviceptr *, size_t);
typedef CUresult (*vt_cuMemAllocPitch_v2_t)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
typedef CUresult (*vt_cuMemAllocManaged_t)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*vt_cuMemAllocHost_v2_t)(void **, size_t);
typedef CUresult (*vt_cuMemHostAlloc_t)(void **, size_t, unsigned int);
typedef CUresult (*vt_cuMemFree_v2_t)(CUdeviceptr);
typedef CUresult (*vt_cuMemFreeHost_t)(void *);
typedef CUresult (*vt_cuMemAllocAsync_t)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*vt_cuMemAllocFromPoolAsync_t)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*vt_cuMemFreeAsync_t)(CUdeviceptr, CUstream);
typedef CUresult (*vt_cuMemCreate_t)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*vt_cuMemRelease_t)(CUmemGenericAllocationHandle);
typedef CUresult (*vt_cuMemMap_t)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*vt_cuMemUnmap_t)(CUdeviceptr, size_t);
typedef CUresult (*vt_cuMemRetainAllocationHandle_t)(CUmemGenericAllocationHandle *, void *);
typedef CUresult (*vt_cuMemAddressReserve_t)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*vt_cuMemAddressFree_t)(CUdeviceptr, size_t);
typedef CUresult (*vt_cuCtxDestroy_v2_t)(CUcontext);
typedef CUresult (*vt_cuDevicePrimaryCtxReset_v2_t)(CUdevice);
typedef CUresult (*vt_cuDevicePrimaryCtxRelease_v2_t)(CUdevice);
typedef CUresult (*vt_cuMemGetInfo_v2_t)(size_t *, size_t *);
typedef CUresult (*vt_cuGetProcAddress_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*vt_cuGetProcAddress_v2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static vt_cuMemAlloc_v2_t              real_cuMemAlloc_v2;
static vt_cuMemAllocPitch_v2_t         real_cuMemAllocPitch_v2;
static vt_cuMemAllocManaged_t          real_cuMemAllocManaged;
static vt_cuMemAllocHost_v2_t          real_cuMemAllocHost_v2;
static vt_cuMemHostAlloc_t             real_cuMemHostAlloc;
static vt_cuMemFree_v2_t               real_cuMemFree_v2;
static vt_cuMemFreeHost_t              real_cuMemFreeHost;
static vt_cuMemAllocAsync_t            real_cuMemAllocAsync;
static vt_cuMemAllocAsync_t            real_cuMemAllocAsync_ptsz;
static vt_cuMemAllocFromPoolAsync_t    real_cuMemAllocFromPoolAsync;
static vt_cuMemAllocFromPoolAsync_t    real_cuMemAllocFromPoolAsync_ptsz;
static vt_cuMemFreeAsync_t             real_cuMemFreeAsync;
static vt_cuMemFreeAsync_t             real_cuMemFreeAsync_ptsz;
static vt_cuMemCreate_t                real_cuMemCreate;
static vt_cuMemRelease_t               real_cuMemRelease;
static vt_cuMemMap_t                   real_cuMemMap;
static vt_cuMemUnmap_t                 real_cuMemUnmap;
static vt_cuMemRetainAllocationHandle_t real_cuMemRetainAllocationHandle;
static vt_cuMemAddressReserve_t        real_cuMemAddressReserve;
static vt_cuMemAddressFree_t           real_cuMemAddressFree;
static vt_cuCtxDestroy_v2_t            real_cuCtxDestroy_v2;
static vt_cuDevicePrimaryCtxReset_v2_t real_cuDevicePrimaryCtxReset_v2;
static vt_cuDevicePrimaryCtxRelease_v2_t real_cuDevicePrimaryCtxRelease_v2;
static vt_cuMemGetInfo_v2_t            real_cuMemGetInfo_v2;
static vt_cuGetProcAddress_t           real_cuGetProcAddress;
static vt_cuGetProcAddress_v2_t        real_cuGetProcAddress_v2;

#define VT_REAL_OR_FAIL(name) VT_REAL_OR_RETURN(name, CUDA_ERROR_NOT_INITIALIZED)

int vt_hook_meminfo(uint64_t *free_bytes, uint64_t *total_bytes)
{
    vt_cuMemGetInfo_v2_t f = __atomic_load_n(&real_cuMemGetInfo_v2, __ATOMIC_ACQUIRE);
    size_t fr = 0, to = 0;
    if (!f || f(&fr, &to) != CUDA_SUCCESS)
        return -1;
    *free_bytes = fr;
    *total_bytes = to;
    return 0;
}

/* ---- allocation ---- */

#define VT_ALLOC_DONE(c, api, kind, r, addr, size, stream, dev) \
    vt_hook_alloc_done(&(c), api, kind, (r) == CUDA_SUCCESS, (int)(r), \
                       (r) == CUDA_ERROR_OUT_OF_MEMORY, addr, size, stream, dev)

/* Plain allocation shims (vt_hooks.h VT_ALLOC_SHIM) record through this: no stream, the current context's device. */
#define VT_SHIM_DONE(c, api, kind, r, addr, size) VT_ALLOC_DONE(c, api, kind, r, addr, size, 0, -2)

VT_ALLOC_SHIM(CUresult, cuMemAlloc_v2, VT_KIND_DEVICE, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize),
                  dptr, bytesize);

static CUresult vt__h_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t width,
                                         size_t height, unsigned int elem)
{
    VT_REAL_OR_FAIL(cuMemAllocPitch_v2);
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuMemAllocPitch_v2(dptr, pPitch, width, height, elem);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, "cuMemAllocPitch_v2", VT_KIND_DEVICE, r, r ? 0 : (uint64_t)*dptr,
                      r ? (uint64_t)width * height : (uint64_t)*pPitch * height, 0, -2);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemAllocPitch_v2);

VT_ALLOC_SHIM(CUresult, cuMemAllocManaged, VT_KIND_MANAGED, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags),
              (dptr, bytesize, flags), dptr, bytesize);

VT_ALLOC_SHIM(CUresult, cuMemAllocHost_v2, VT_KIND_HOST_PINNED, (void **pp, size_t bytesize), (pp, bytesize),
                  pp, bytesize);

VT_ALLOC_SHIM(CUresult, cuMemHostAlloc, VT_KIND_HOST_PINNED, (void **pp, size_t bytesize, unsigned int flags),
              (pp, bytesize, flags), pp, bytesize);

/* always_inline: the stack is captured in the exported hook\'s own frame (vt_hooks.h) */
static inline __attribute__((always_inline)) CUresult vt__alloc_async(vt_cuMemAllocAsync_t real, const char *api, CUdeviceptr *dptr,
                                size_t bytesize, CUstream stream)
{
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real(dptr, bytesize, stream);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, api, VT_KIND_ASYNC, r, r ? 0 : (uint64_t)*dptr, bytesize, (uint64_t)(uintptr_t)stream, -2);
    vt_call_end(&c);
    errno = e;
    return r;
}

static CUresult vt__h_cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemAllocAsync);
    return vt__alloc_async(real_cuMemAllocAsync, "cuMemAllocAsync", dptr, bytesize, stream);
}
VT_EXPORT_ALIAS(cuMemAllocAsync);

static CUresult vt__h_cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemAllocAsync_ptsz);
    return vt__alloc_async(real_cuMemAllocAsync_ptsz, "cuMemAllocAsync_ptsz", dptr, bytesize, stream);
}
VT_EXPORT_ALIAS(cuMemAllocAsync_ptsz);

/* always_inline: the stack is captured in the exported hook\'s own frame (vt_hooks.h) */
static inline __attribute__((always_inline)) CUresult vt__alloc_pool(vt_cuMemAllocFromPoolAsync_t real, const char *api, CUdeviceptr *dptr,
                               size_t bytesize, CUmemoryPool pool, CUstream stream)
{
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real(dptr, bytesize, pool, stream);
    int e = errno;
    if (c.rec)
        VT_ALLOC_DONE(c, api, VT_KIND_ASYNC, r, r ? 0 : (uint64_t)*dptr, bytesize, (uint64_t)(uintptr_t)stream, -2);
    vt_call_end(&c);
    errno = e;
    return r;
}

static CUresult vt__h_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemAllocFromPoolAsync);
    return vt__alloc_pool(real_cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", dptr, bytesize, pool, stream);
}
VT_EXPORT_ALIAS(cuMemAllocFromPoolAsync);

static CUresult vt__h_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemAllocFromPoolAsync_ptsz);
    return vt__alloc_pool(real_cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync_ptsz", dptr, bytesize, pool, stream);
}
VT_EXPORT_ALIAS(cuMemAllocFromPoolAsync_ptsz);

/* ---- free ---- */

VT_HOOK_FRONT(CUresult, cuMemFree_v2, (CUdeviceptr dptr), (dptr))
{
    VT_REAL_OR_FAIL(cuMemFree_v2);
    VT_FREE_BODY(CUresult, dptr, CUDA_SUCCESS, real_cuMemFree_v2(dptr));
}

static CUresult vt__h_cuMemFreeHost(void *p)
{
    VT_REAL_OR_FAIL(cuMemFreeHost);
    VT_FREE_BODY(CUresult, (uintptr_t)p, CUDA_SUCCESS, real_cuMemFreeHost(p));
}
VT_EXPORT_ALIAS(cuMemFreeHost);

static CUresult vt__free_async(vt_cuMemFreeAsync_t real, CUdeviceptr dptr, CUstream stream)
{
    VT_FREE_BODY(CUresult, dptr, CUDA_SUCCESS, real(dptr, stream));
}

static CUresult vt__h_cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemFreeAsync);
    return vt__free_async(real_cuMemFreeAsync, dptr, stream);
}
VT_EXPORT_ALIAS(cuMemFreeAsync);

static CUresult vt__h_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    VT_REAL_OR_FAIL(cuMemFreeAsync_ptsz);
    return vt__free_async(real_cuMemFreeAsync_ptsz, dptr, stream);
}
VT_EXPORT_ALIAS(cuMemFreeAsync_ptsz);

/* ---- VMM: memory is cuMemCreate'd handles; address space is not memory ---- */

static CUresult vt__h_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                  const CUmemAllocationProp *prop, unsigned long long flags)
{
    VT_REAL_OR_FAIL(cuMemCreate);
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuMemCreate(handle, size, prop, flags);
    int e = errno;
    if (c.rec) {
        int dev = (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) ? prop->location.id : -1;
        if (r == CUDA_SUCCESS) {
            vt_hook_start();
            vt_core_vmm_create((uint64_t)*handle, size, dev, c.stack);
        } else {
            VT_ALLOC_DONE(c, "cuMemCreate", VT_KIND_VMM, r, 0, size, 0, dev);
        }
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemCreate);

static CUresult vt__h_cuMemRelease(CUmemGenericAllocationHandle handle)
{
    VT_REAL_OR_FAIL(cuMemRelease);
    vt_call c;
    vt_taken t = {NULL};
    vt_call_begin(&c, 0);
    if (c.rec)
        vt_core_vmm_release((uint64_t)handle, &t);
    CUresult r = real_cuMemRelease(handle);
    int e = errno;
    if (t.rec) {
        if (r == CUDA_SUCCESS)
            vt_core_vmm_commit(&t);
        else
            vt_core_vmm_restore(&t);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemRelease);

/* The handle is held live from before the real call (a cuMemRelease of it racing on
 * another thread must not see it unmapped), the mapping recorded after it. */
static CUresult vt__h_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                               CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    VT_REAL_OR_FAIL(cuMemMap);
    VT_NESTED_FORWARD(1, real_cuMemMap(ptr, size, offset, handle, flags));
    vt_call c;
    vt_call_begin(&c, 0);
    int began = c.rec && vt_core_vmm_map_begin((uint64_t)handle);
    CUresult r = real_cuMemMap(ptr, size, offset, handle, flags);
    int e = errno;
    if (c.rec)
        vt_core_vmm_map_end((uint64_t)ptr, size, (uint64_t)handle, began, r == CUDA_SUCCESS);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemMap);

/* The allocation mapped at addr is held live across the real call (an unmap and a
 * release of it racing on another thread), the reference counted after it. */
static CUresult vt__h_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    VT_REAL_OR_FAIL(cuMemRetainAllocationHandle);
    VT_NESTED_FORWARD(1, real_cuMemRetainAllocationHandle(handle, addr));
    vt_call c;
    vt_call_begin(&c, 0);
    uint64_t held = 0;
    int hold = c.rec && vt_core_vmm_hold_at((uint64_t)(uintptr_t)addr, &held);
    CUresult r = real_cuMemRetainAllocationHandle(handle, addr);
    int e = errno;
    if (c.rec && r == CUDA_SUCCESS && handle)
        vt_core_vmm_retain((uint64_t)*handle);
    if (hold)
        vt_core_vmm_map_end(0, 0, held, 1, 0);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemRetainAllocationHandle);

static CUresult vt__h_cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    VT_REAL_OR_FAIL(cuMemUnmap);
    VT_PASS_BODY(CUresult, CUDA_SUCCESS, real_cuMemUnmap(ptr, size), vt_core_vmm_unmap((uint64_t)ptr, size));
}
VT_EXPORT_ALIAS(cuMemUnmap);

/* Address reservations are not memory: forwarded, counted nowhere. Hooked so that a
 * driver that implements them with other hooked calls is not double counted. */
static CUresult vt__h_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                          CUdeviceptr addr, unsigned long long flags)
{
    VT_REAL_OR_FAIL(cuMemAddressReserve);
    VT_PASS_BODY(CUresult, CUDA_SUCCESS, real_cuMemAddressReserve(ptr, size, alignment, addr, flags), (void)0);
}
VT_EXPORT_ALIAS(cuMemAddressReserve);

static CUresult vt__h_cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    VT_REAL_OR_FAIL(cuMemAddressFree);
    VT_PASS_BODY(CUresult, CUDA_SUCCESS, real_cuMemAddressFree(ptr, size), (void)0);
}
VT_EXPORT_ALIAS(cuMemAddressFree);

/* ---- implicit frees: context teardown ---- */

/* One context teardown call (cuCtxDestroy_v2, cuDevicePrimaryCtxReset_v2, the last
 * cuDevicePrimaryCtxRelease_v2). Whether it frees the program's records is decided
 * before the real call: only when this is the outermost hooked call and not the CUDA
 * runtime tearing itself down at exit (vt_hook_is_runtime_teardown on the hook's
 * return address); only records made before the call (sequence < before) drop. */
typedef struct vt__teardown {
    vt_call  c;
    int      drop;
    uint64_t before;
} vt__teardown;

static void vt__teardown_begin(vt__teardown *t, void *caller)
{
    vt_call_begin(&t->c, 0);
    t->drop = t->c.rec && !vt_hook_is_runtime_teardown(caller);
    t->before = vt_core_next_seq();
}

/* destroyed: the context is gone. Drops that context's (ctx != 0) or that device's
 * (ctx == 0) ordinary records when the call is the program's. */
static void vt__teardown_end(vt__teardown *t, int destroyed, int device, uint64_t ctx)
{
    if (destroyed) {
        vt_hook_ctx_changed();
        if (t->drop && (ctx || device >= 0))
            vt_core_drop_context(device, ctx, t->before);
    }
    vt_call_end(&t->c);
}

static CUresult vt__h_cuCtxDestroy_v2(CUcontext ctx)
{
    VT_REAL_OR_FAIL(cuCtxDestroy_v2);
    vt__teardown t;
    vt__teardown_begin(&t, __builtin_return_address(0));
    CUresult r = real_cuCtxDestroy_v2(ctx);
    int e = errno;
    vt__teardown_end(&t, r == CUDA_SUCCESS && ctx, -1, (uint64_t)(uintptr_t)ctx);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuCtxDestroy_v2);

static CUresult vt__h_cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    VT_REAL_OR_FAIL(cuDevicePrimaryCtxReset_v2);
    vt__teardown t;
    vt__teardown_begin(&t, __builtin_return_address(0));
    CUresult r = real_cuDevicePrimaryCtxReset_v2(dev);
    int e = errno;
    vt__teardown_end(&t, r == CUDA_SUCCESS, dev, 0);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuDevicePrimaryCtxReset_v2);

static CUresult vt__h_cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    VT_REAL_OR_FAIL(cuDevicePrimaryCtxRelease_v2);
    vt__teardown t;
    vt__teardown_begin(&t, __builtin_return_address(0));
    CUresult r = real_cuDevicePrimaryCtxRelease_v2(dev);
    int e = errno;
    int destroyed = 0;
    if (r == CUDA_SUCCESS) {
        /* Only the LAST release destroys the primary context: ask the driver. */
        typedef CUresult (*state_t)(CUdevice, unsigned int *, int *);
        state_t st = (state_t)__atomic_load_n(&vt__drv_cuDevicePrimaryCtxGetState, __ATOMIC_ACQUIRE);
        unsigned int flags = 0;
        int active = 1;
        destroyed = st && st(dev, &flags, &active) == CUDA_SUCCESS && !active;
    }
    vt__teardown_end(&t, destroyed, dev, 0);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuDevicePrimaryCtxRelease_v2);

static CUresult vt__h_cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    VT_REAL_OR_FAIL(cuMemGetInfo_v2);
    vt_call c;
    vt_call_begin(&c, 0);
    CUresult r = real_cuMemGetInfo_v2(free_bytes, total_bytes);
    int e = errno;
    if (c.rec && r == CUDA_SUCCESS && free_bytes && total_bytes) {
        uint64_t ctx;
        int dev = vt_hook_device(&ctx);
        vt_core_set_meminfo(dev, *free_bytes, *total_bytes);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemGetInfo_v2);

/* ---- resolvers: real first, keep NULL and errors, swap only exact matches ---- */

static CUresult vt__h_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                          cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    VT_REAL_OR_FAIL(cuGetProcAddress_v2);
    CUresult r = real_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = vt_resolve_swap(*pfn);
    return r;
}
VT_EXPORT_ALIAS(cuGetProcAddress_v2);

static CUresult vt__h_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    VT_REAL_OR_FAIL(cuGetProcAddress);
    CUresult r = real_cuGetProcAddress(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = vt_resolve_swap(*pfn);
    return r;
}
VT_EXPORT_ALIAS(cuGetProcAddress);

#define VT_ENTRY(n) {#n, (void **)&real_##n, (void *)vt__h_##n, NULL}
#define VT_ENTRY_F(n) {#n, (void **)&real_##n, (void *)vt__h_##n, (void **)&vt__fwd_##n}   /* fronted */
const vt_hook_entry vt__driver_hooks[] = {
    VT_ENTRY_F(cuMemAlloc_v2),
    VT_ENTRY(cuMemAllocPitch_v2),
    VT_ENTRY_F(cuMemAllocManaged),
    VT_ENTRY_F(cuMemAllocHost_v2),
    VT_ENTRY_F(cuMemHostAlloc),
    VT_ENTRY_F(cuMemFree_v2),
    VT_ENTRY(cuMemFreeHost),
    VT_ENTRY(cuMemAllocAsync),
    VT_ENTRY(cuMemAllocAsync_ptsz),
    VT_ENTRY(cuMemAllocFromPoolAsync),
    VT_ENTRY(cuMemAllocFromPoolAsync_ptsz),
    VT_ENTRY(cuMemFreeAsync),
    VT_ENTRY(cuMemFreeAsync_ptsz),
    VT_ENTRY(cuMemCreate),
    VT_ENTRY(cuMemRelease),
    VT_ENTRY(cuMemMap),
    VT_ENTRY(cuMemUnmap),
    VT_ENTRY(cuMemRetainAllocationHandle),
    VT_ENTRY(cuMemAddressReserve),
    VT_ENTRY(cuMemAddressFree),
    VT_ENTRY(cuCtxDestroy_v2),
    VT_ENTRY(cuDevicePrimaryCtxReset_v2),
    VT_ENTRY(cuDevicePrimaryCtxRelease_v2),
    VT_ENTRY(cuMemGetInfo_v2),
    VT_ENTRY(cuGetProcAddress),
    VT_ENTRY(cuGetProcAddress_v2),
};
const size_t vt__n_driver_hooks = sizeof vt__driver_hooks / sizeof vt__driver_hooks[0];
