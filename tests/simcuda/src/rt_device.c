/*
 * rt_device.c - device management of the simulated runtime
 * (cuda_runtime_api.h "Device Management" and "Version Management").
 *   cudaDeviceReset       -> cuDevicePrimaryCtxReset_v2 of the current device:
 *                            frees its ordinary allocations, not pool memory
 *   cudaDeviceSynchronize -> cuCtxSynchronize
 *   cudaGetDeviceProperties fills struct cudaDeviceProp from driver attributes.
 */
#include "rt_internal.h"

#include <cuda_profiler_api.h>

#include <string.h>

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e == cudaErrorInsufficientDriver) {
        *driverVersion = 0; /* "0 if no driver is installed" */
        return cudaSuccess;
    }
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuDriverGetVersion(driverVersion));
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return rt_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess) {
        *count = 0;
        return e;
    }
    return rt_ret_cu(rt_drv.cuDeviceGetCount(count));
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUcontext c;
    e = rt_primary(device, &c);
    if (e != cudaSuccess)
        return e;
    rt_set_current_device(device);
    return rt_ret_cu(rt_drv.cuCtxSetCurrent(c));
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUcontext cur = NULL;
    rt_drv.cuCtxGetCurrent(&cur);
    if (cur) {
        CUdevice d;
        if (rt_drv.cuCtxGetDevice(&d) == CUDA_SUCCESS) {
            *device = d;
            return cudaSuccess;
        }
    }
    *device = rt_current_device();
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    int dev = 0;
    cudaGetDevice(&dev);
    return rt_reset_device(dev);
}

cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = rt_ctx();
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuCtxSynchronize());
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    /* cudaDeviceAttr values equal CUdevice_attribute values */
    return rt_ret_cu(rt_drv.cuDeviceGetAttribute(value, (CUdevice_attribute)attr, device));
}

static int attr(CUdevice_attribute a, int dev)
{
    int v = 0;
    rt_drv.cuDeviceGetAttribute(&v, a, dev);
    return v;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUdevice d;
    CUresult r = rt_drv.cuDeviceGet(&d, device);
    if (r != CUDA_SUCCESS)
        return rt_ret_cu(r);
    memset(prop, 0, sizeof *prop);
    rt_drv.cuDeviceGetName(prop->name, sizeof prop->name, d);
    rt_drv.cuDeviceGetUuid((CUuuid *)&prop->uuid, d);
    rt_drv.cuDeviceTotalMem(&prop->totalGlobalMem, d);
    prop->sharedMemPerBlock = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, d);
    prop->regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, d);
    prop->warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, d);
    prop->memPitch = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH, d);
    prop->maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d);
    prop->maxThreadsDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, d);
    prop->maxThreadsDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, d);
    prop->maxThreadsDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, d);
    prop->maxGridSize[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, d);
    prop->maxGridSize[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, d);
    prop->maxGridSize[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, d);
    prop->totalConstMem = (size_t)attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, d);
    prop->major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    prop->minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    prop->textureAlignment = (size_t)attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, d);
    prop->texturePitchAlignment = (size_t)attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, d);
    prop->multiProcessorCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    prop->integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED, d);
    prop->canMapHostMemory = attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, d);
    prop->concurrentKernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, d);
    prop->pciBusID = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    prop->asyncEngineCount = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, d);
    prop->unifiedAddressing = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d);
    prop->memoryBusWidth = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d);
    prop->l2CacheSize = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d);
    prop->maxThreadsPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d);
    prop->streamPrioritiesSupported = attr(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, d);
    prop->sharedMemPerMultiprocessor = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, d);
    prop->regsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, d);
    prop->managedMemory = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, d);
    prop->concurrentManagedAccess = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, d);
    prop->computePreemptionSupported = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, d);
    prop->cooperativeLaunch = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, d);
    prop->sharedMemPerBlockOptin = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d);
    prop->maxBlocksPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, d);
    prop->reservedSharedMemPerBlock = (size_t)attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, d);
    prop->hostRegisterSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, d);
    prop->memoryPoolsSupported = attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d);
    prop->memoryPoolSupportedHandleTypes = (unsigned)attr(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, d);
    return cudaSuccess;
}

/* cudaSetDeviceFlags: the flags of the current device's primary context
 * (cuDevicePrimaryCtxSetFlags_v2). Unknown bits, or more than one scheduling
 * policy: cudaErrorInvalidValue. cudaDeviceMapHost is always in effect (unified
 * addressing) and is accepted. */
cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    const unsigned known = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
                           cudaDeviceSyncMemops;
    unsigned sched = flags & cudaDeviceScheduleMask;
    if ((flags & ~known) || (sched & (sched - 1)))
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    int dev = 0;
    cudaGetDevice(&dev);
    return rt_ret_cu(rt_drv.cuDevicePrimaryCtxSetFlags(dev, flags));
}

/* Profiler control (cuda_profiler_api.h): there is no profiler; both succeed once
 * the runtime is initialised. */
cudaError_t cudaProfilerStart(void)
{
    return rt_begin();
}

cudaError_t cudaProfilerStop(void)
{
    return rt_begin();
}
