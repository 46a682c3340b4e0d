/* vt_cuda_driver.c — the driver shims that fit no shape of the hook table
 * (vt_hook_table.h rows of family DRV, shape HAND): VMM handles and mappings (multicast
 * objects included), context
 * teardown (implicit frees), memory info. Follows cuda.h of CUDA 13.
 *
 * Every shim returns the real CUresult unchanged and preserves errno; when the real
 * function cannot be found it returns CUDA_ERROR_NOT_INITIALIZED without doing
 * anything. Only the outermost hooked call on a thread records (vt_guard.h).
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"
#include "vt_resolve.h"

#define VT_REAL_OR_RETURN_DRV(name) VT_REAL_OR_RETURN(name, VT_NOTREADY_DRV)

/* A failed allocation of a hand-written shim: counted (and an "oom" snapshot for an
 * out-of-memory result), as the ALLOC shape does. */
#define VT_ALLOC_FAILED(c, api, kind, r, size, dev) \
    vt_hook_alloc_done(&(c), api, kind, 0, (int)(r), (r) == CUDA_ERROR_OUT_OF_MEMORY, 0, size, 0, dev)

/* ---- VMM: memory is cuMemCreate'd handles; address space is not memory ---- */

/* After a handle-creating call (cuMemCreate, cuMulticastCreate) on the outermost
 * level with tracking on: the handle recorded as size bytes of kind vmm with flags
 * (VT_KIND_PACK) on dev (VT_DEVICE_CURRENT: the current context's), or the failure
 * counted. */
static void vt__vmm_created(vt_call *c, const char *api, CUresult r, uint64_t handle, size_t size, int dev,
                            int flags)
{
    if (r == CUDA_SUCCESS) {
        vt_hook_start();
        if (dev == VT_DEVICE_CURRENT) {
            uint64_t ctx;
            dev = vt_driver_device_current(&ctx);
        }
        vt_core_vmm_create(handle, size, dev, c->stack, flags);
    } else {
        VT_ALLOC_FAILED(*c, api, VT_KIND_PACK(VT_KIND_VMM, flags), r, size, dev);
    }
}

CUresult vt__h_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                  const CUmemAllocationProp *prop, unsigned long long flags)
{
    VT_REAL_OR_RETURN_DRV(cuMemCreate);
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuMemCreate(handle, size, prop, flags);
    int e = errno;
    if (c.rec) {
        int dev = (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) ? prop->location.id : -1;
        vt__vmm_created(&c, "cuMemCreate", r, r == CUDA_SUCCESS ? (uint64_t)*handle : 0, size, dev, 0);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemCreate);

/* A multicast object (NVLS) is a VMM handle: its prop->size bytes are live until it is
 * released (cuMemRelease) and unmapped, counted as vmm with the multicast flag on the
 * device of the current context (the object names no device; the caller's context is
 * the one it is made for). */
CUresult vt__h_cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop)
{
    VT_REAL_OR_RETURN_DRV(cuMulticastCreate);
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuMulticastCreate(mcHandle, prop);
    int e = errno;
    if (c.rec) {
        size_t size = prop ? prop->size : 0;
        vt__vmm_created(&c, "cuMulticastCreate", r, r == CUDA_SUCCESS ? (uint64_t)*mcHandle : 0, size,
                        VT_DEVICE_CURRENT, VT_FLAG_MULTICAST);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMulticastCreate);

CUresult vt__h_cuMemRelease(CUmemGenericAllocationHandle handle)
{
    VT_REAL_OR_RETURN_DRV(cuMemRelease);
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
CUresult vt__h_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                               CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    VT_REAL_OR_RETURN_DRV(cuMemMap);
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
CUresult vt__h_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    VT_REAL_OR_RETURN_DRV(cuMemRetainAllocationHandle);
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
        vt_driver_ctx_changed();
        if (t->drop && (ctx || device >= 0))
            vt_core_drop_context(device, ctx, t->before);
    }
    vt_call_end(&t->c);
}

/* The body of a teardown shim: CALL between vt__teardown_begin (with the hook's own
 * return address: a macro, so that it is the hook's) and vt__teardown_end; DESTROYED,
 * evaluated after the call with r its result, says whether the context is gone.
 * Result and errno are CALL's. */
#define VT__TEARDOWN_BODY(CALL, DESTROYED, device, ctx)                  \
    vt__teardown t;                                                      \
    vt__teardown_begin(&t, __builtin_return_address(0));                 \
    CUresult r = CALL;                                                   \
    int e = errno;                                                       \
    vt__teardown_end(&t, (DESTROYED), device, ctx);                      \
    errno = e;                                                           \
    return r

CUresult vt__h_cuCtxDestroy_v2(CUcontext ctx)
{
    VT_REAL_OR_RETURN_DRV(cuCtxDestroy_v2);
    VT__TEARDOWN_BODY(real_cuCtxDestroy_v2(ctx), r == CUDA_SUCCESS && ctx, -1, (uint64_t)(uintptr_t)ctx);
}
VT_EXPORT_ALIAS(cuCtxDestroy_v2);

CUresult vt__h_cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    VT_REAL_OR_RETURN_DRV(cuDevicePrimaryCtxReset_v2);
    VT__TEARDOWN_BODY(real_cuDevicePrimaryCtxReset_v2(dev), r == CUDA_SUCCESS, dev, 0);
}
VT_EXPORT_ALIAS(cuDevicePrimaryCtxReset_v2);

/* Only the LAST release destroys the primary context: the driver is asked after it. */
CUresult vt__h_cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    VT_REAL_OR_RETURN_DRV(cuDevicePrimaryCtxRelease_v2);
    VT__TEARDOWN_BODY(real_cuDevicePrimaryCtxRelease_v2(dev),
                      r == CUDA_SUCCESS && vt_driver_primary_ctx_active(dev) == 0, dev, 0);
}
VT_EXPORT_ALIAS(cuDevicePrimaryCtxRelease_v2);

CUresult vt__h_cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    VT_REAL_OR_RETURN_DRV(cuMemGetInfo_v2);
    vt_call c;
    vt_call_begin(&c, 0);
    CUresult r = real_cuMemGetInfo_v2(free_bytes, total_bytes);
    int e = errno;
    if (c.rec && r == CUDA_SUCCESS && free_bytes && total_bytes) {
        uint64_t ctx;
        int dev = vt_driver_device_current(&ctx);
        vt_core_set_meminfo(dev, *free_bytes, *total_bytes);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemGetInfo_v2);
