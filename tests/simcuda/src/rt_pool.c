/*
 * rt_pool.c - stream-ordered allocation and memory pools of the simulated
 * runtime (cuda_runtime_api.h "Stream Ordered Memory Allocator", CUDA 13.0).
 * Each call forwards to the driver pointer of the same name; the *_ptsz
 * exports use the pointers looked up with the per-thread-stream flag.
 * cudaMemPoolAttr and cudaMemPoolProps have the driver's values and layout
 * semantics; props are converted field by field.
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

static cudaError_t malloc_async(void **devPtr, size_t size, cudaMemPool_t pool, cudaStream_t s, int ptsz)
{
    if (!devPtr)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUdeviceptr d = 0;
    CUresult r;
    if (pool)
        r = (ptsz ? rt_drv.cuMemAllocFromPoolAsync_ptsz : rt_drv.cuMemAllocFromPoolAsync)(&d, size, pool, s);
    else
        r = (ptsz ? rt_drv.cuMemAllocAsync_ptsz : rt_drv.cuMemAllocAsync)(&d, size, s);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return malloc_async(devPtr, size, NULL, hStream, 0);
}
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    return malloc_async(devPtr, size, NULL, hStream, 1);
}
cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    if (!memPool)
        return rt_ret(cudaErrorInvalidValue);
    return malloc_async(ptr, size, memPool, stream, 0);
}
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    if (!memPool)
        return rt_ret(cudaErrorInvalidValue);
    return malloc_async(ptr, size, memPool, stream, 1);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemFreeAsync((CUdeviceptr)(uintptr_t)devPtr, hStream));
}
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemFreeAsync_ptsz((CUdeviceptr)(uintptr_t)devPtr, hStream));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceGetDefaultMemPool(memPool, device));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceGetMemPool(memPool, device));
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDeviceSetMemPool(device, memPool));
}

static cudaError_t location_device(const struct cudaMemLocation *loc, enum cudaMemAllocationType type, int *dev)
{
    if (!loc || type != cudaMemAllocationTypePinned || loc->type != cudaMemLocationTypeDevice)
        return rt_ret(cudaErrorInvalidValue);
    *dev = loc->id;
    return cudaSuccess;
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type)
{
    int dev = 0;
    cudaError_t e = location_device(location, type, &dev);
    return e != cudaSuccess ? e : cudaDeviceGetDefaultMemPool(memPool, dev);
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                              enum cudaMemAllocationType type)
{
    int dev = 0;
    cudaError_t e = location_device(location, type, &dev);
    return e != cudaSuccess ? e : cudaDeviceGetMemPool(memPool, dev);
}

cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, enum cudaMemAllocationType type,
                              cudaMemPool_t memPool)
{
    int dev = 0;
    cudaError_t e = location_device(location, type, &dev);
    return e != cudaSuccess ? e : cudaDeviceSetMemPool(dev, memPool);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    if (!memPool || !poolProps)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = (CUmemAllocationType)poolProps->allocType;
    p.handleTypes = (CUmemAllocationHandleType)poolProps->handleTypes;
    p.location.type = (CUmemLocationType)poolProps->location.type;
    p.location.id = poolProps->location.id;
    p.win32SecurityAttributes = poolProps->win32SecurityAttributes;
    p.maxSize = poolProps->maxSize;
    p.usage = poolProps->usage;
    return rt_ret_cu(rt_drv.cuMemPoolCreate(memPool, &p));
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuMemPoolDestroy(memPool));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuMemPoolTrimTo(memPool, minBytesToKeep));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuMemPoolSetAttribute(memPool, (CUmemPool_attribute)attr, value));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuMemPoolGetAttribute(memPool, (CUmemPool_attribute)attr, value));
}
