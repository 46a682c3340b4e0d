/* vt_driver.c — vramtrace's own queries of the real CUDA driver (see vt_driver.h). */
#define _GNU_SOURCE
#include "vt_driver.h"

#include <cuda.h>
#include <errno.h>
#include <sched.h>
#include <string.h>

void *vt__drv_cuCtxGetCurrent;
void *vt__drv_cuCtxGetDevice;
static void *vt__drv_cuDevicePrimaryCtxGetState;
static void *vt__drv_cuDeviceGetDefaultMemPool;
static void *vt__drv_cuMemPoolGetAttribute;
static void *vt__drv_cuPointerGetAttribute;
static void *vt__drv_cuMemGetInfo_v2;
static void *vt__drv_cuMemGetAddressRange_v2;
static void *vt__drv_cuDeviceGetCount;
static void *vt__drv_cuDeviceGetUuid_v2;
static void *vt__drv_cuArrayGetMemoryRequirements;
static void *vt__drv_cuMipmappedArrayGetMemoryRequirements;
static void *vt__drv_cuArray3DGetDescriptor_v2;
static void *vt__drv_cuMipmappedArrayGetLevel;
static void *vt__drv_cuStreamGetCaptureInfo_v3;
static void *vt__drv_cuDeviceGetGraphMemAttribute;

const vt_driver_fn vt__driver_fns[] = {
    {"cuCtxGetCurrent", &vt__drv_cuCtxGetCurrent},
    {"cuCtxGetDevice", &vt__drv_cuCtxGetDevice},
    {"cuDevicePrimaryCtxGetState", &vt__drv_cuDevicePrimaryCtxGetState},
    {"cuDeviceGetDefaultMemPool", &vt__drv_cuDeviceGetDefaultMemPool},
    {"cuMemPoolGetAttribute", &vt__drv_cuMemPoolGetAttribute},
    {"cuPointerGetAttribute", &vt__drv_cuPointerGetAttribute},
    {"cuMemGetInfo_v2", &vt__drv_cuMemGetInfo_v2},
    {"cuMemGetAddressRange_v2", &vt__drv_cuMemGetAddressRange_v2},
    {"cuDeviceGetCount", &vt__drv_cuDeviceGetCount},
    {"cuDeviceGetUuid_v2", &vt__drv_cuDeviceGetUuid_v2},
    {"cuArrayGetMemoryRequirements", &vt__drv_cuArrayGetMemoryRequirements},
    {"cuMipmappedArrayGetMemoryRequirements", &vt__drv_cuMipmappedArrayGetMemoryRequirements},
    {"cuArray3DGetDescriptor_v2", &vt__drv_cuArray3DGetDescriptor_v2},
    {"cuMipmappedArrayGetLevel", &vt__drv_cuMipmappedArrayGetLevel},
    {"cuStreamGetCaptureInfo_v3", &vt__drv_cuStreamGetCaptureInfo_v3},
    {"cuDeviceGetGraphMemAttribute", &vt__drv_cuDeviceGetGraphMemAttribute},
};
const size_t vt__n_driver_fns = sizeof vt__driver_fns / sizeof vt__driver_fns[0];

uint32_t vt__ctx_gen = 1;
static uint64_t vt__pool_devs;   /* atomic: bit d = stream-ordered activity on device d */

#define VT_DRV(fn) __atomic_load_n(&vt__drv_##fn, __ATOMIC_ACQUIRE)

void vt_driver_ctx_changed(void)
{
    __atomic_add_fetch(&vt__ctx_gen, 1, __ATOMIC_ACQ_REL);
}

int vt_driver_meminfo(uint64_t *free_bytes, uint64_t *total_bytes)
{
    CUresult (*f)(size_t *, size_t *) = VT_DRV(cuMemGetInfo_v2);
    size_t fr = 0, to = 0;
    int e = errno;
    int ok = f && f(&fr, &to) == CUDA_SUCCESS;
    errno = e;
    if (!ok)
        return -1;
    *free_bytes = fr;
    *total_bytes = to;
    return 0;
}

void vt_driver_pool_seen(int device)
{
    /* read first: every stream-ordered allocation calls this, and a locked RMW on
     * one shared line would bounce it between the allocating threads */
    if (device >= 0 && device < 64 &&
        !(__atomic_load_n(&vt__pool_devs, __ATOMIC_RELAXED) & (1ull << device)))
        __atomic_or_fetch(&vt__pool_devs, 1ull << device, __ATOMIC_RELAXED);
}

uint64_t vt_driver_pool_devices(void)
{
    return __atomic_load_n(&vt__pool_devs, __ATOMIC_RELAXED);
}

/* The noted pools. A slot is free when pool == 0 and busy == 0. note and forget
 * change slots under vt__pools_lock (a spin lock: a few loads and stores); the
 * writer's sample marks the slots it reads busy under it, asks the driver without
 * it, then unmarks them. */
static struct {
    uint64_t pool;     /* atomic: the handle, 0 = free */
    int      device;
    int      busy;     /* samples in flight (under vt__pools_lock) */
} vt__pools[VT_DRIVER_POOLS];
static int vt__pools_lock;   /* atomic spin lock */

static void vt__pools_enter(void)
{
    while (__atomic_exchange_n(&vt__pools_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void vt__pools_leave(void)
{
    __atomic_store_n(&vt__pools_lock, 0, __ATOMIC_RELEASE);
}

void vt_driver_pool_note(uint64_t pool, int device)
{
    if (!pool || device < 0 || device >= 64)
        return;
    vt_driver_pool_seen(device);
    for (int i = 0; i < VT_DRIVER_POOLS; i++)
        if (__atomic_load_n(&vt__pools[i].pool, __ATOMIC_ACQUIRE) == pool)
            return;
    vt__pools_enter();
    int free_slot = -1, known = 0;
    for (int i = 0; i < VT_DRIVER_POOLS && !known; i++) {
        if (vt__pools[i].pool == pool)
            known = 1;
        else if (free_slot < 0 && vt__pools[i].pool == 0 && vt__pools[i].busy == 0)
            free_slot = i;
    }
    if (!known && free_slot >= 0) {
        vt__pools[free_slot].device = device;
        __atomic_store_n(&vt__pools[free_slot].pool, pool, __ATOMIC_RELEASE);
    }
    vt__pools_leave();
}

int vt_driver_pool_forget(uint64_t pool)
{
    if (!pool)
        return -1;
    int slot = -1, device = -1;
    vt__pools_enter();
    for (int i = 0; i < VT_DRIVER_POOLS && slot < 0; i++)
        if (vt__pools[i].pool == pool) {
            slot = i;
            device = vt__pools[i].device;
            __atomic_store_n(&vt__pools[i].pool, 0, __ATOMIC_RELEASE);
        }
    vt__pools_leave();
    if (slot < 0)
        return -1;
    /* a sample that read the handle before it went: at most one driver query */
    for (;;) {
        vt__pools_enter();
        int busy = vt__pools[slot].busy;
        vt__pools_leave();
        if (!busy)
            break;
        sched_yield();
    }
    return device;
}

void vt_driver_after_fork_child(void)
{
    memset(vt__pools, 0, sizeof vt__pools);
    __atomic_store_n(&vt__pools_lock, 0, __ATOMIC_RELEASE);
}

/* One pool's reserve and use, added to the sums. */
static void vt__pool_add(CUresult (*getattr)(CUmemoryPool, CUmemPool_attribute, void *), CUmemoryPool pool,
                         uint64_t *reserved, int *known, uint64_t *used, int *used_known)
{
    cuuint64_t v = 0;
    if (getattr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) != CUDA_SUCCESS)
        return;
    *reserved += (uint64_t)v;
    *known = 1;
    v = 0;
    if (getattr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v) == CUDA_SUCCESS) {
        *used += (uint64_t)v;
        *used_known = 1;
    }
}

int vt_driver_pool_sample(int device, uint64_t *reserved, uint64_t *used, int *used_known)
{
    CUresult (*getpool)(CUmemoryPool *, CUdevice) = VT_DRV(cuDeviceGetDefaultMemPool);
    CUresult (*getattr)(CUmemoryPool, CUmemPool_attribute, void *) = VT_DRV(cuMemPoolGetAttribute);
    if (!getattr)
        return -1;
    int e = errno, known = 0, uknown = 0;
    uint64_t total = 0, in_use = 0;
    CUmemoryPool def = NULL;
    if (getpool && getpool(&def, device) == CUDA_SUCCESS && def)
        vt__pool_add(getattr, def, &total, &known, &in_use, &uknown);
    int slots[VT_DRIVER_POOLS], n = 0;
    uint64_t handles[VT_DRIVER_POOLS];
    vt__pools_enter();
    for (int i = 0; i < VT_DRIVER_POOLS; i++)
        if (vt__pools[i].pool && vt__pools[i].device == device &&
            vt__pools[i].pool != (uint64_t)(uintptr_t)def) {
            vt__pools[i].busy++;
            slots[n] = i;
            handles[n++] = vt__pools[i].pool;
        }
    vt__pools_leave();
    for (int k = 0; k < n; k++)
        vt__pool_add(getattr, (CUmemoryPool)(uintptr_t)handles[k], &total, &known, &in_use, &uknown);
    vt__pools_enter();
    for (int k = 0; k < n; k++)
        vt__pools[slots[k]].busy--;
    vt__pools_leave();
    errno = e;
    if (!known)
        return -1;
    *reserved = total;
    *used = in_use;
    *used_known = uknown;
    return 0;
}

int vt_driver_primary_ctx_active(int device)
{
    CUresult (*st)(CUdevice, unsigned int *, int *) = VT_DRV(cuDevicePrimaryCtxGetState);
    if (!st)
        return -1;
    int e = errno;
    unsigned int flags = 0;
    int active = 1;
    CUresult r = st(device, &flags, &active);
    errno = e;
    return r == CUDA_SUCCESS ? active != 0 : -1;
}

int vt_driver_still_allocated(uint64_t addr)
{
    CUresult (*f)(void *, CUpointer_attribute, CUdeviceptr) = VT_DRV(cuPointerGetAttribute);
    if (!f)
        return -1;
    int e = errno;
    CUdeviceptr start = 0;
    CUresult r = f(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)addr);
    errno = e;
    if (r == CUDA_SUCCESS)
        return start == (CUdeviceptr)addr;
    return r == CUDA_ERROR_INVALID_VALUE ? 0 : -1;
}

int vt_driver_array_requirements(uint64_t handle, int mipmapped, int device, uint64_t *size)
{
    typedef CUresult (*req_t)(CUDA_ARRAY_MEMORY_REQUIREMENTS *, void *, CUdevice);
    req_t f = mipmapped ? (req_t)VT_DRV(cuMipmappedArrayGetMemoryRequirements)
                        : (req_t)VT_DRV(cuArrayGetMemoryRequirements);
    if (!f || !handle || device < 0)
        return -1;
    int e = errno;
    CUDA_ARRAY_MEMORY_REQUIREMENTS q;
    memset(&q, 0, sizeof q);
    CUresult r = f(&q, (void *)(uintptr_t)handle, device);
    errno = e;
    if (r == CUDA_SUCCESS && q.size) {
        *size = q.size;
        return 1;
    }
    return r == CUDA_ERROR_INVALID_HANDLE ? 0 : -1;
}

int vt_driver_array_alive(uint64_t handle)
{
    CUresult (*desc)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray) = VT_DRV(cuArray3DGetDescriptor_v2);
    CUresult (*level)(CUarray *, CUmipmappedArray, unsigned int) = VT_DRV(cuMipmappedArrayGetLevel);
    if (!desc || !level)
        return -1;
    int e = errno;
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUarray l = NULL;
    CUresult r1 = desc(&d, (CUarray)(uintptr_t)handle), r2 = CUDA_ERROR_INVALID_HANDLE;
    if (r1 != CUDA_SUCCESS)
        r2 = level(&l, (CUmipmappedArray)(uintptr_t)handle, 0);
    errno = e;
    if (r1 == CUDA_SUCCESS || r2 == CUDA_SUCCESS)
        return 1;
    return r1 == CUDA_ERROR_INVALID_HANDLE && r2 == CUDA_ERROR_INVALID_HANDLE ? 0 : -1;
}

int vt_driver_range_size(uint64_t addr, uint64_t *size)
{
    CUresult (*f)(CUdeviceptr *, size_t *, CUdeviceptr) = VT_DRV(cuMemGetAddressRange_v2);
    if (!f)
        return -1;
    int e = errno;
    CUdeviceptr base = 0;
    size_t n = 0;
    CUresult r = f(&base, &n, (CUdeviceptr)addr);
    errno = e;
    if (r != CUDA_SUCCESS || base > (CUdeviceptr)addr || n < (size_t)(addr - base))
        return -1;
    *size = n - (addr - base);
    return 0;
}

int vt_driver_device_count(void)
{
    CUresult (*f)(int *) = VT_DRV(cuDeviceGetCount);
    if (!f)
        return -1;
    int e = errno, n = 0;
    CUresult r = f(&n);
    errno = e;
    return r == CUDA_SUCCESS ? n : -1;
}

int vt_driver_device_uuid(int device, unsigned char uuid[16])
{
    CUresult (*f)(CUuuid *, CUdevice) = VT_DRV(cuDeviceGetUuid_v2);
    if (!f)
        return -1;
    int e = errno;
    CUuuid u;
    CUresult r = f(&u, device);
    errno = e;
    if (r != CUDA_SUCCESS)
        return -1;
    memcpy(uuid, u.bytes, 16);
    return 0;
}

int vt_driver_capture_graph(uint64_t stream, uint64_t *graph)
{
    CUresult (*f)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **,
                  const CUgraphEdgeData **, size_t *) = VT_DRV(cuStreamGetCaptureInfo_v3);
    if (!f)
        return -1;
    int e = errno;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph g = NULL;
    CUresult r = f((CUstream)(uintptr_t)stream, &st, NULL, &g, NULL, NULL, NULL);
    errno = e;
    if (r != CUDA_SUCCESS)
        return -1;
    if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return 0;
    *graph = (uint64_t)(uintptr_t)g;
    return 1;
}

int vt_driver_graph_mem(int device, uint64_t *reserved, uint64_t *used)
{
    CUresult (*f)(CUdevice, CUgraphMem_attribute, void *) = VT_DRV(cuDeviceGetGraphMemAttribute);
    if (!f)
        return -1;
    int e = errno;
    cuuint64_t res = 0, use = 0;
    int ok = f(device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &res) == CUDA_SUCCESS &&
             f(device, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &use) == CUDA_SUCCESS;
    errno = e;
    if (!ok)
        return -1;
    *reserved = res;
    *used = use;
    return 0;
}
