/*
 * drv_procaddress.c - the driver entry point resolver: cuGetProcAddress_v2
 * (CUDA 12.0 form, 5 arguments) and cuGetProcAddress (CUDA 11.3 form, 4
 * arguments), following cuda.h "Driver Entry Point Access" (CUDA 13.0).
 *
 * Design: one static table maps (base name, first CUDA version of this ABI) to
 * the exported function, plus its per-thread-default-stream variant (_ptds /
 * _ptsz) where one exists. A lookup picks the entry with the highest version
 * <= cudaVersion; CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM picks the
 * per-thread variant when there is one. As documented for the real driver:
 *   - an unknown name returns CUDA_SUCCESS, *pfn = NULL,
 *     status CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
 *   - a name whose first ABI is newer than cudaVersion returns CUDA_SUCCESS,
 *     *pfn = NULL, status CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
 *   - cudaVersion newer than the driver (13000) returns CUDA_ERROR_INVALID_VALUE.
 * Older ABIs this simulation does not implement (e.g. the 32-bit cuMemAlloc of
 * CUDA 2.0) are listed with a NULL function and resolve to SUCCESS + NULL.
 * The table is read-only: thread-safe, and usable before cuInit.
 */
#include "drv_internal.h"

#include <string.h>

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
/* Legacy-stream names cuda.h only declares under __CUDA_API_VERSION_INTERNAL. */
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);

/* Per-thread-stream variants (declared here; cuda.h declares them only when
 * CUDA_API_PER_THREAD_DEFAULT_STREAM is defined). */
CUresult cuMemcpy_ptds();
CUresult cuMemcpyAsync_ptsz();
CUresult cuMemcpyHtoD_v2_ptds();
CUresult cuMemcpyDtoH_v2_ptds();
CUresult cuMemcpyDtoD_v2_ptds();
CUresult cuMemcpyHtoDAsync_v2_ptsz();
CUresult cuMemcpyDtoHAsync_v2_ptsz();
CUresult cuMemcpyDtoDAsync_v2_ptsz();
CUresult cuMemsetD8_v2_ptds();
CUresult cuMemsetD32_v2_ptds();
CUresult cuMemsetD8Async_ptsz();
CUresult cuMemsetD32Async_ptsz();
CUresult cuMemAllocAsync_ptsz();
CUresult cuMemFreeAsync_ptsz();
CUresult cuMemAllocFromPoolAsync_ptsz();
CUresult cuStreamSynchronize_ptsz();
CUresult cuStreamQuery_ptsz();
CUresult cuStreamWaitEvent_ptsz();
CUresult cuEventRecord_ptsz();
CUresult cuLaunchKernel_ptsz();
CUresult cuLaunchHostFunc_ptsz();
CUresult cuStreamBeginCapture_v2_ptsz();
CUresult cuStreamEndCapture_ptsz();
CUresult cuStreamIsCapturing_ptsz();
CUresult cuStreamGetCaptureInfo_v3_ptsz();
CUresult cuGraphInstantiateWithParams_ptsz();
CUresult cuGraphUpload_ptsz();
CUresult cuGraphLaunch_ptsz();
CUresult cuLaunchCooperativeKernel_ptsz();
CUresult cuStreamAddCallback_ptsz();

typedef struct proc_entry {
    const char *name;  /* base name, e.g. "cuMemAlloc" */
    int         version; /* first CUDA version of this ABI, e.g. 3020 */
    void       *fn;    /* exported function (NULL: ABI not simulated) */
    void       *ptds;  /* per-thread default stream variant, or NULL */
} proc_entry;

#define E(n, v, f) {n, v, (void *)(f), NULL}
#define P(n, v, f, p) {n, v, (void *)(f), (void *)(p)}
#define OLD(n, v) {n, v, NULL, NULL}

/* cuDeviceComputeCapability is deprecated in cuda.h but still exported and resolved. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const proc_entry table[] = {
    E("cuInit", 2000, cuInit),
    E("cuDriverGetVersion", 2020, cuDriverGetVersion),
    E("cuGetProcAddress", 11030, cuGetProcAddress),
    E("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    E("cuGetErrorString", 6000, cuGetErrorString),
    E("cuGetErrorName", 6000, cuGetErrorName),
    /* devices */
    E("cuDeviceGet", 2000, cuDeviceGet),
    E("cuDeviceGetCount", 2000, cuDeviceGetCount),
    E("cuDeviceGetName", 2000, cuDeviceGetName),
    OLD("cuDeviceGetUuid", 9020),
    E("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    OLD("cuDeviceTotalMem", 2000),
    E("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    E("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    /* contexts */
    OLD("cuCtxCreate", 2000), OLD("cuCtxCreate", 3020), OLD("cuCtxCreate", 11040),
    E("cuCtxCreate", 12050, cuCtxCreate_v4),
    OLD("cuCtxDestroy", 2000),
    E("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    E("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    OLD("cuCtxPushCurrent", 2000),
    E("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    OLD("cuCtxPopCurrent", 2000),
    E("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    E("cuCtxGetDevice", 2000, cuCtxGetDevice),
    E("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    E("cuCtxSynchronize", 2000, cuCtxSynchronize),
    E("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    E("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    OLD("cuDevicePrimaryCtxRelease", 7000),
    E("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    OLD("cuDevicePrimaryCtxReset", 7000),
    E("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    E("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    OLD("cuDevicePrimaryCtxSetFlags", 7000),
    E("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
    /* ordinary memory */
    OLD("cuMemAlloc", 2000),
    E("cuMemAlloc", 3020, cuMemAlloc_v2),
    OLD("cuMemAllocPitch", 2000),
    E("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    OLD("cuMemFree", 2000),
    E("cuMemFree", 3020, cuMemFree_v2),
    OLD("cuMemGetInfo", 2000),
    E("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    E("cuMemAllocManaged", 6000, cuMemAllocManaged),
    OLD("cuMemAllocHost", 2000),
    E("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    E("cuMemHostAlloc", 2020, cuMemHostAlloc),
    E("cuMemFreeHost", 2000, cuMemFreeHost),
    OLD("cuMemHostRegister", 4000),
    E("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    E("cuMemHostUnregister", 4000, cuMemHostUnregister),
    OLD("cuMemHostGetDevicePointer", 2020),
    E("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    OLD("cuMemGetAddressRange", 2000),
    E("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    E("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
    /* copies and sets */
    P("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds),
    P("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
    OLD("cuMemcpyHtoD", 2000),
    P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    OLD("cuMemcpyDtoH", 2000),
    P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    OLD("cuMemcpyDtoD", 2000),
    P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    OLD("cuMemcpyHtoDAsync", 2000),
    P("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    OLD("cuMemcpyDtoHAsync", 2000),
    P("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    OLD("cuMemcpyDtoDAsync", 3000),
    P("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    OLD("cuMemsetD8", 2000),
    P("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    OLD("cuMemsetD16", 2000),
    E("cuMemsetD16", 3020, cuMemsetD16_v2),
    OLD("cuMemsetD32", 2000),
    P("cuMemsetD32", 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
    P("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
    P("cuMemsetD32Async", 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz),
    /* arrays, mipmapped arrays, rectangular copies, texture and surface objects */
    OLD("cuArrayCreate", 2000),
    E("cuArrayCreate", 3020, cuArrayCreate_v2),
    OLD("cuArray3DCreate", 2000),
    E("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    OLD("cuArrayGetDescriptor", 2000),
    E("cuArrayGetDescriptor", 3020, cuArrayGetDescriptor_v2),
    OLD("cuArray3DGetDescriptor", 2000),
    E("cuArray3DGetDescriptor", 3020, cuArray3DGetDescriptor_v2),
    E("cuArrayDestroy", 2000, cuArrayDestroy),
    E("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    E("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    E("cuMipmappedArrayGetLevel", 5000, cuMipmappedArrayGetLevel),
    E("cuArrayGetMemoryRequirements", 11060, cuArrayGetMemoryRequirements),
    E("cuMipmappedArrayGetMemoryRequirements", 11060, cuMipmappedArrayGetMemoryRequirements),
    OLD("cuMemcpy2D", 2000),
    E("cuMemcpy2D", 3020, cuMemcpy2D_v2),
    OLD("cuMemcpy2DUnaligned", 2000),
    E("cuMemcpy2DUnaligned", 3020, cuMemcpy2DUnaligned_v2),
    OLD("cuMemcpy2DAsync", 2000),
    E("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2),
    OLD("cuMemcpy3D", 2000),
    E("cuMemcpy3D", 3020, cuMemcpy3D_v2),
    OLD("cuMemcpy3DAsync", 2000),
    E("cuMemcpy3DAsync", 3020, cuMemcpy3DAsync_v2),
    E("cuTexObjectCreate", 5000, cuTexObjectCreate),
    E("cuTexObjectDestroy", 5000, cuTexObjectDestroy),
    E("cuSurfObjectCreate", 5000, cuSurfObjectCreate),
    E("cuSurfObjectDestroy", 5000, cuSurfObjectDestroy),
    /* stream-ordered allocation and pools */
    P("cuMemAllocAsync", 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz),
    E("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    E("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
    E("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool),
    E("cuMemGetDefaultMemPool", 13000, cuMemGetDefaultMemPool),
    E("cuMemGetMemPool", 13000, cuMemGetMemPool),
    E("cuMemSetMemPool", 13000, cuMemSetMemPool),
    E("cuMemPoolCreate", 11020, cuMemPoolCreate),
    E("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    E("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
    E("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
    E("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
    /* virtual memory management */
    E("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    E("cuMemCreate", 10020, cuMemCreate),
    E("cuMemRelease", 10020, cuMemRelease),
    E("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
    E("cuMemAddressReserve", 10020, cuMemAddressReserve),
    E("cuMemAddressFree", 10020, cuMemAddressFree),
    E("cuMemMap", 10020, cuMemMap),
    E("cuMulticastCreate", 12010, cuMulticastCreate),
    E("cuMulticastAddDevice", 12010, cuMulticastAddDevice),
    E("cuMulticastBindMem", 12010, cuMulticastBindMem),
    E("cuMulticastBindAddr", 12010, cuMulticastBindAddr),
    E("cuMulticastUnbind", 12010, cuMulticastUnbind),
    E("cuMulticastGetGranularity", 12010, cuMulticastGetGranularity),
    E("cuMemUnmap", 10020, cuMemUnmap),
    E("cuMemSetAccess", 10020, cuMemSetAccess),
    /* streams, events, launches */
    E("cuStreamCreate", 2000, cuStreamCreate),
    E("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    OLD("cuStreamDestroy", 2000),
    E("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    P("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    P("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz),
    P("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    E("cuEventCreate", 2000, cuEventCreate),
    P("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
    E("cuEventQuery", 2000, cuEventQuery),
    E("cuEventSynchronize", 2000, cuEventSynchronize),
    E("cuEventElapsedTime", 2000, cuEventElapsedTime),
    E("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    OLD("cuEventDestroy", 2000),
    E("cuEventDestroy", 4000, cuEventDestroy_v2),
    P("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    /* interprocess memory (drv_ipc.c) */
    E("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
    OLD("cuIpcOpenMemHandle", 4010),
    E("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
    E("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    E("cuIpcGetEventHandle", 4010, cuIpcGetEventHandle),
    E("cuIpcOpenEventHandle", 4010, cuIpcOpenEventHandle),
    /* pools shared between processes (drv_pool_ipc.c) */
    E("cuMemPoolExportToShareableHandle", 11020, cuMemPoolExportToShareableHandle),
    E("cuMemPoolImportFromShareableHandle", 11020, cuMemPoolImportFromShareableHandle),
    E("cuMemPoolExportPointer", 11020, cuMemPoolExportPointer),
    E("cuMemPoolImportPointer", 11020, cuMemPoolImportPointer),
    E("cuMemPoolSetAccess", 11020, cuMemPoolSetAccess),
    E("cuMemPoolGetAccess", 11020, cuMemPoolGetAccess),
    /* VMM shareable handles (drv_vmm.c) */
    E("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle),
    E("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle),
    /* external memory (drv_extmem.c) */
    E("cuImportExternalMemory", 10000, cuImportExternalMemory),
    E("cuExternalMemoryGetMappedBuffer", 10000, cuExternalMemoryGetMappedBuffer),
    E("cuDestroyExternalMemory", 10000, cuDestroyExternalMemory),
    P("cuLaunchHostFunc", 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
    /* stream capture, graphs, graph memory */
    OLD("cuStreamBeginCapture", 10000),
    P("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz),
    P("cuStreamEndCapture", 10000, cuStreamEndCapture, cuStreamEndCapture_ptsz),
    P("cuStreamIsCapturing", 10000, cuStreamIsCapturing, cuStreamIsCapturing_ptsz),
    OLD("cuStreamGetCaptureInfo", 10010),
    OLD("cuStreamGetCaptureInfo", 11030),
    P("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz),
    E("cuGraphCreate", 10000, cuGraphCreate),
    E("cuGraphDestroy", 10000, cuGraphDestroy),
    E("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode),
    E("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode),
    E("cuGraphMemAllocNodeGetParams", 11040, cuGraphMemAllocNodeGetParams),
    E("cuGraphMemFreeNodeGetParams", 11040, cuGraphMemFreeNodeGetParams),
    E("cuGraphAddEmptyNode", 10000, cuGraphAddEmptyNode),
    OLD("cuGraphAddKernelNode", 10000),
    E("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2),
    E("cuGraphAddMemcpyNode", 10000, cuGraphAddMemcpyNode),
    E("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode),
    E("cuGraphAddHostNode", 10000, cuGraphAddHostNode),
    E("cuGraphGetNodes", 10000, cuGraphGetNodes),
    E("cuGraphNodeGetType", 10000, cuGraphNodeGetType),
    E("cuGraphClone", 10000, cuGraphClone),
    OLD("cuGraphInstantiate", 10000),
    OLD("cuGraphInstantiate", 11000),
    E("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    P("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz),
    P("cuGraphUpload", 11010, cuGraphUpload, cuGraphUpload_ptsz),
    P("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz),
    E("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    E("cuDeviceGraphMemTrim", 11040, cuDeviceGraphMemTrim),
    E("cuDeviceGetGraphMemAttribute", 11040, cuDeviceGetGraphMemAttribute),
    E("cuDeviceSetGraphMemAttribute", 11040, cuDeviceSetGraphMemAttribute),
    /* modules, functions, JIT linker (drv_module.c) */
    E("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    E("cuModuleLoadData", 2000, cuModuleLoadData),
    E("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    E("cuModuleUnload", 2000, cuModuleUnload),
    E("cuModuleGetFunction", 2000, cuModuleGetFunction),
    OLD("cuModuleGetGlobal", 2000),
    E("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    E("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    E("cuFuncSetCacheConfig", 3000, cuFuncSetCacheConfig),
    OLD("cuLinkCreate", 5050),
    E("cuLinkCreate", 6050, cuLinkCreate_v2),
    OLD("cuLinkAddData", 5050),
    E("cuLinkAddData", 6050, cuLinkAddData_v2),
    OLD("cuLinkAddFile", 5050),
    E("cuLinkAddFile", 6050, cuLinkAddFile_v2),
    E("cuLinkComplete", 5050, cuLinkComplete),
    E("cuLinkDestroy", 5050, cuLinkDestroy),
    E("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor),
    E("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000,
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    E("cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize),
    E("cuOccupancyMaxPotentialBlockSizeWithFlags", 7000, cuOccupancyMaxPotentialBlockSizeWithFlags),
    P("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
    /* host callbacks (drv_callback.c) */
    P("cuStreamAddCallback", 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz),
};
#pragma GCC diagnostic pop

static CUresult resolve(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    if (cudaVersion > SIM_DRIVER_VERSION ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    const proc_entry *best = NULL;
    int found = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, symbol) != 0)
            continue;
        found = 1;
        if (table[i].version <= cudaVersion && (!best || table[i].version > best->version))
            best = &table[i];
    }
    *pfn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (found && !best) {
        st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    } else if (best && best->fn) {
        *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptds ? best->ptds : best->fn;
        st = CU_GET_PROC_ADDRESS_SUCCESS;
    }
    if (status)
        *status = st;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    return resolve(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return resolve(symbol, pfn, cudaVersion, flags, NULL);
}
