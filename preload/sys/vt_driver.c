/* vt_driver.c — vramtrace's own queries of the real CUDA driver (see vt_driver.h). */
#define _GNU_SOURCE
#include "vt_driver.h"

#include <cuda.h>
#include <errno.h>
#include <string.h>

void *vt__drv_cuCtxGetCurrent;
void *vt__drv_cuCtxGetDevice;
static void *vt__drv_cuDevicePrimaryCtxGetState;
static void *vt__drv_cuDeviceGetDefaultMemPool;
static void *vt__drv_cuMemPoolGetAttribute;
static void *vt__drv_cuPointerGetAttribute;
static void *vt__drv_cuMemGetInfo_v2;
static void *vt__drv_cuDeviceGetCount;
static void *vt__drv_cuDeviceGetUuid_v2;

const vt_driver_fn vt__driver_fns[] = {
    {"cuCtxGetCurrent", &vt__drv_cuCtxGetCurrent},
    {"cuCtxGetDevice", &vt__drv_cuCtxGetDevice},
    {"cuDevicePrimaryCtxGetState", &vt__drv_cuDevicePrimaryCtxGetState},
    {"cuDeviceGetDefaultMemPool", &vt__drv_cuDeviceGetDefaultMemPool},
    {"cuMemPoolGetAttribute", &vt__drv_cuMemPoolGetAttribute},
    {"cuPointerGetAttribute", &vt__drv_cuPointerGetAttribute},
    {"cuMemGetInfo_v2", &vt__drv_cuMemGetInfo_v2},
    {"cuDeviceGetCount", &vt__drv_cuDeviceGetCount},
    {"cuDeviceGetUuid_v2", &vt__drv_cuDeviceGetUuid_v2},
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
    if (device >= 0 && device < 64)
        __atomic_or_fetch(&vt__pool_devs, 1ull << device, __ATOMIC_RELAXED);
}

uint64_t vt_driver_pool_devices(void)
{
    return __atomic_load_n(&vt__pool_devs, __ATOMIC_RELAXED);
}

int vt_driver_pool_reserved(int device, uint64_t *reserved)
{
    CUresult (*getpool)(CUmemoryPool *, CUdevice) = VT_DRV(cuDeviceGetDefaultMemPool);
    CUresult (*getattr)(CUmemoryPool, CUmemPool_attribute, void *) = VT_DRV(cuMemPoolGetAttribute);
    if (!getpool || !getattr)
        return -1;
    int e = errno;
    CUmemoryPool pool = NULL;
    cuuint64_t v = 0;
    int ok = getpool(&pool, device) == CUDA_SUCCESS && pool &&
             getattr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) == CUDA_SUCCESS;
    errno = e;
    if (!ok)
        return -1;
    *reserved = (uint64_t)v;
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
