/*
 * rt_ipc.c - interprocess memory of the simulated runtime (cuda_runtime_api.h
 * "Memory Management": cudaIpcGetMemHandle, cudaIpcOpenMemHandle,
 * cudaIpcCloseMemHandle, CUDA 13.0). Each forwards to the driver through the
 * resolver's pointer (cuIpcGetMemHandle, cuIpcOpenMemHandle_v2,
 * cuIpcCloseMemHandle) in the current device's primary context; the driver's
 * semantics and errors apply (docs/simcuda.md "IPC"), mapped as the real runtime
 * maps them (CUDA_ERROR_INVALID_HANDLE: cudaErrorInvalidResourceHandle,
 * CUDA_ERROR_INVALID_CONTEXT: cudaErrorDeviceUninitialized, CUDA_ERROR_MAP_FAILED:
 * cudaErrorMapBufferObjectFailed).
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle), "same 64 bytes");

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    if (!handle)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUipcMemHandle h;
    CUresult r = rt_drv.cuIpcGetMemHandle(&h, (CUdeviceptr)(uintptr_t)devPtr);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return rt_ret_cu(r);
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    if (!devPtr)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUipcMemHandle h;
    memcpy(&h, &handle, sizeof h);
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuIpcOpenMemHandle(&d, h, flags);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuIpcCloseMemHandle((CUdeviceptr)(uintptr_t)devPtr));
}

/* ---- pools shared between processes (driver: drv_pool_ipc.c) ---- */

cudaError_t cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                               enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuMemPoolExportToShareableHandle(shareableHandle, memPool,
                                                             (CUmemAllocationHandleType)handleType, flags));
}

cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                 enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemPoolImportFromShareableHandle(memPool, shareableHandle,
                                                               (CUmemAllocationHandleType)handleType, flags));
}

_Static_assert(sizeof(struct cudaMemPoolPtrExportData) == sizeof(CUmemPoolPtrExportData), "same 64 bytes");

cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *exportData, void *ptr)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuMemPoolExportPointer((CUmemPoolPtrExportData *)exportData,
                                                   (CUdeviceptr)(uintptr_t)ptr));
}

cudaError_t cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool, struct cudaMemPoolPtrExportData *exportData)
{
    if (!ptr)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUdeviceptr d = 0;
    CUresult r = rt_drv.cuMemPoolImportPointer(&d, memPool, (CUmemPoolPtrExportData *)exportData);
    if (r == CUDA_SUCCESS)
        *ptr = (void *)(uintptr_t)d;
    return rt_ret_cu(r);
}

/* ---- external memory (driver: drv_extmem.c); the runtime's structs are copied
 * field by field into the driver's ---- */

cudaError_t cudaImportExternalMemory(cudaExternalMemory_t *extMem_out, const struct cudaExternalMemoryHandleDesc *memHandleDesc)
{
    if (!extMem_out || !memHandleDesc)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
    memset(&d, 0, sizeof d);
    d.type = (CUexternalMemoryHandleType)memHandleDesc->type;
    if (memHandleDesc->type == cudaExternalMemoryHandleTypeOpaqueFd)
        d.handle.fd = memHandleDesc->handle.fd;
    else
        d.handle.win32.handle = memHandleDesc->handle.win32.handle;
    d.size = memHandleDesc->size;
    d.flags = memHandleDesc->flags;
    CUexternalMemory e = NULL;
    CUresult r = rt_drv.cuImportExternalMemory(&e, &d);
    if (r == CUDA_SUCCESS)
        *extMem_out = (cudaExternalMemory_t)e;
    return rt_ret_cu(r);
}

cudaError_t cudaExternalMemoryGetMappedBuffer(void **devPtr, cudaExternalMemory_t extMem,
                                              const struct cudaExternalMemoryBufferDesc *bufferDesc)
{
    if (!devPtr || !bufferDesc)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC d;
    memset(&d, 0, sizeof d);
    d.offset = bufferDesc->offset;
    d.size = bufferDesc->size;
    d.flags = bufferDesc->flags;
    CUdeviceptr p = 0;
    CUresult r = rt_drv.cuExternalMemoryGetMappedBuffer(&p, (CUexternalMemory)extMem, &d);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)p;
    return rt_ret_cu(r);
}

cudaError_t cudaDestroyExternalMemory(cudaExternalMemory_t extMem)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDestroyExternalMemory((CUexternalMemory)extMem));
}

/* ---- interprocess events and pool access (driver: drv_ipc.c, drv_pool_ipc.c) ---- */

_Static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle), "same 64 bytes");

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    if (!handle)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUipcEventHandle h;
    CUresult r = rt_drv.cuIpcGetEventHandle(&h, (CUevent)event);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return rt_ret_cu(r);
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    if (!event)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUipcEventHandle h;
    memcpy(&h, &handle, sizeof h);
    CUevent e = NULL;
    CUresult r = rt_drv.cuIpcOpenEventHandle(&e, h);
    if (r == CUDA_SUCCESS)
        *event = (cudaEvent_t)e;
    return rt_ret_cu(r);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList, size_t count)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    _Static_assert(sizeof(struct cudaMemAccessDesc) == sizeof(CUmemAccessDesc), "same layout");
    return rt_ret_cu(rt_drv.cuMemPoolSetAccess((CUmemoryPool)memPool, (const CUmemAccessDesc *)descList, count));
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool, struct cudaMemLocation *location)
{
    if (!flags || !location)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUmemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = (CUmemLocationType)location->type;
    loc.id = location->id;
    CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUresult r = rt_drv.cuMemPoolGetAccess(&f, (CUmemoryPool)memPool, &loc);
    if (r == CUDA_SUCCESS)
        *flags = (enum cudaMemAccessFlags)f;
    return rt_ret_cu(r);
}
