/*
 * rt_memory.c - device, managed and pinned host memory, copies and sets of the
 * simulated runtime (cuda_runtime_api.h "Memory Management", CUDA 13.0).
 *
 * Every allocation and free goes through a driver pointer from the resolver:
 *   cudaMalloc            -> cuMemAlloc_v2          cudaFree      -> cuMemFree_v2
 *   cudaMallocPitch/3D    -> cuMemAllocPitch_v2
 *   cudaMallocManaged     -> cuMemAllocManaged
 *   cudaMallocHost        -> cuMemHostAlloc(flags 0) cudaFreeHost -> cuMemFreeHost
 *   cudaHostAlloc         -> cuMemHostAlloc(flags)
 *   cudaHostRegister      -> cuMemHostRegister_v2   cudaHostUnregister -> cuMemHostUnregister
 * Copies pick the typed driver copy by cudaMemcpyKind, so a device pointer that
 * is not live memory fails with cudaErrorInvalidValue. Units are bytes.
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuMemAlloc(&d, size);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaFree(void *devPtr)
{
    RT_CTX_OR_RETURN();
    if (!devPtr)
        return cudaSuccess; /* cudaFree(0): initialises the context, frees nothing */
    return rt_ret_cu(rt_drv.cuMemFree((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    if (!devPtr || !pitch)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    if (width == 0 || height == 0) {
        *devPtr = NULL;
        *pitch = 0;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuMemAllocPitch(&d, pitch, width, height, 16);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    if (!pitchedDevPtr)
        return rt_ret(cudaErrorInvalidValue);
    size_t rows = extent.height * extent.depth;
    if (extent.depth && rows / extent.depth != extent.height)
        return rt_ret(cudaErrorInvalidValue);
    void *p = NULL;
    size_t pitch = 0;
    cudaError_t e = cudaMallocPitch(&p, &pitch, extent.width, rows);
    if (e == cudaSuccess) {
        pitchedDevPtr->ptr = p;
        pitchedDevPtr->pitch = pitch;
        pitchedDevPtr->xsize = extent.width;
        pitchedDevPtr->ysize = extent.height;
    }
    return e;
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    if (!devPtr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuMemAllocManaged(&d, size, flags);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    if (size == 0) {
        *pHost = NULL;
        return cudaSuccess;
    }
    /* cudaHostAlloc{Portable,Mapped,WriteCombined} == CU_MEMHOSTALLOC_* values */
    return rt_ret_cu(rt_drv.cuMemHostAlloc(pHost, size, flags));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
    RT_CTX_OR_RETURN();
    if (!ptr)
        return cudaSuccess;
    return rt_ret_cu(rt_drv.cuMemFreeHost(ptr));
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    if (!ptr || size == 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    /* cudaHostRegister{Portable,Mapped,IoMemory,ReadOnly} == CU_MEMHOSTREGISTER_* values */
    return rt_ret_cu(rt_drv.cuMemHostRegister(ptr, size, flags));
}

cudaError_t cudaHostUnregister(void *ptr)
{
    if (!ptr)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemHostUnregister(ptr));
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuMemHostGetDevicePointer(&d, pHost, flags);
    if (r == CUDA_SUCCESS)
        *pDevice = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemGetInfo(free, total));
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    if (!attributes)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
    unsigned type = 0, managed = 0;
    int ordinal = 0;
    memset(attributes, 0, sizeof *attributes);
    if (rt_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS) {
        attributes->type = cudaMemoryTypeUnregistered; /* plain host memory: not an error */
        attributes->device = -2;
        attributes->hostPointer = (void *)ptr;
        return cudaSuccess;
    }
    rt_drv.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    rt_drv.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    attributes->device = ordinal;
    if (managed) {
        attributes->type = cudaMemoryTypeManaged;
        attributes->devicePointer = attributes->hostPointer = (void *)ptr;
    } else if (type == CU_MEMORYTYPE_HOST) {
        attributes->type = cudaMemoryTypeHost;
        attributes->devicePointer = attributes->hostPointer = (void *)ptr;
    } else {
        attributes->type = cudaMemoryTypeDevice;
        attributes->devicePointer = (void *)ptr;
    }
    return cudaSuccess;
}

/* ---- copies ---- */

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, int ptds)
{
    RT_CTX_OR_RETURN();
    if (count == 0)
        return cudaSuccess;
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
    switch (kind) {
    case cudaMemcpyHostToHost:
        if (!dst || !src)
            return rt_ret(cudaErrorInvalidValue);
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return rt_ret_cu((ptds ? rt_drv.cuMemcpyHtoD_ptds : rt_drv.cuMemcpyHtoD)(d, src, count));
    case cudaMemcpyDeviceToHost:
        return rt_ret_cu((ptds ? rt_drv.cuMemcpyDtoH_ptds : rt_drv.cuMemcpyDtoH)(dst, s, count));
    case cudaMemcpyDeviceToDevice:
        return rt_ret_cu((ptds ? rt_drv.cuMemcpyDtoD_ptds : rt_drv.cuMemcpyDtoD)(d, s, count));
    case cudaMemcpyDefault:
        return rt_ret_cu((ptds ? rt_drv.cuMemcpy_ptds : rt_drv.cuMemcpy)(d, s, count));
    default:
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    }
}

static cudaError_t copy_async(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                              cudaStream_t st, int ptsz)
{
    RT_CTX_OR_RETURN();
    if (count == 0)
        return cudaSuccess;
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
    switch (kind) {
    case cudaMemcpyHostToHost:
        if (!dst || !src)
            return rt_ret(cudaErrorInvalidValue);
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return rt_ret_cu((ptsz ? rt_drv.cuMemcpyHtoDAsync_ptsz : rt_drv.cuMemcpyHtoDAsync)(d, src, count, st));
    case cudaMemcpyDeviceToHost:
        return rt_ret_cu((ptsz ? rt_drv.cuMemcpyDtoHAsync_ptsz : rt_drv.cuMemcpyDtoHAsync)(dst, s, count, st));
    case cudaMemcpyDeviceToDevice:
        return rt_ret_cu((ptsz ? rt_drv.cuMemcpyDtoDAsync_ptsz : rt_drv.cuMemcpyDtoDAsync)(d, s, count, st));
    case cudaMemcpyDefault:
        return rt_ret_cu((ptsz ? rt_drv.cuMemcpyAsync_ptsz : rt_drv.cuMemcpyAsync)(d, s, count, st));
    default:
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    }
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, 0);
}
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, 1);
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy_async(dst, src, count, kind, stream, 0);
}
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    return copy_async(dst, src, count, kind, stream, 1);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemsetD8((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count));
}
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemsetD8_ptds((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count));
}
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemsetD8Async((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count, stream));
}
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemsetD8Async_ptsz((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count,
                                                 stream));
}
