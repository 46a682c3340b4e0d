/*
 * rt_internal.h - shared state of the simulated CUDA runtime (libcudart.so.13).
 *
 * Design (mirrors the real cudart 13, see docs/simcuda.md):
 *   - on the first runtime call, rt_init dlopen()s "libcuda.so.1" (RTLD_NOW),
 *     makes exactly one dlsym(handle, "cuGetProcAddress_v2"), and fetches every
 *     driver entry point through that resolver by base name + ABI version; it
 *     looks up "cuGetProcAddress" itself (12000) and uses THAT pointer from then
 *     on; stream-ordered calls are looked up a second time with
 *     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (the *_ptsz fields);
 *   - the runtime never references a cu* symbol directly: every allocation goes
 *     through a pointer the resolver returned (what lets an interposer see it);
 *   - each thread has a current device (default 0); a runtime call binds the
 *     device's primary context (cuDevicePrimaryCtxRetain once per device per
 *     process) unless the thread already has a current context;
 *   - rt_init registers an exit handler (atexit) that marks the runtime
 *     unloading and releases every retained primary context through the driver;
 *     afterwards calls return cudaErrorCudartUnloading.
 * Thread safety: init is pthread_once; per-device retain under rt_lock; the
 * driver pointer table is written once before any reader sees it.
 */
#ifndef SIMCUDA_RT_INTERNAL_H
#define SIMCUDA_RT_INTERNAL_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#define RT_DEFAULT 0
#define RT_PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

/* X(field, base name, ABI version, lookup flags, PFN type) */
#define RT_DRIVER_FUNCS(X) \
    X(cuDriverGetVersion, "cuDriverGetVersion", 2020, RT_DEFAULT, PFN_cuDriverGetVersion_v2020) \
    X(cuDeviceGet, "cuDeviceGet", 2000, RT_DEFAULT, PFN_cuDeviceGet_v2000) \
    X(cuDeviceGetCount, "cuDeviceGetCount", 2000, RT_DEFAULT, PFN_cuDeviceGetCount_v2000) \
    X(cuDeviceGetName, "cuDeviceGetName", 2000, RT_DEFAULT, PFN_cuDeviceGetName_v2000) \
    X(cuDeviceTotalMem, "cuDeviceTotalMem", 3020, RT_DEFAULT, PFN_cuDeviceTotalMem_v3020) \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, RT_DEFAULT, PFN_cuDeviceGetAttribute_v2000) \
    X(cuDeviceGetUuid, "cuDeviceGetUuid", 11040, RT_DEFAULT, PFN_cuDeviceGetUuid_v11040) \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, RT_DEFAULT, PFN_cuDevicePrimaryCtxRetain_v7000) \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, RT_DEFAULT, PFN_cuDevicePrimaryCtxRelease_v11000) \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 11000, RT_DEFAULT, PFN_cuDevicePrimaryCtxReset_v11000) \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 4000, RT_DEFAULT, PFN_cuCtxSetCurrent_v4000) \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 4000, RT_DEFAULT, PFN_cuCtxGetCurrent_v4000) \
    X(cuCtxGetDevice, "cuCtxGetDevice", 2000, RT_DEFAULT, PFN_cuCtxGetDevice_v2000) \
    X(cuCtxSynchronize, "cuCtxSynchronize", 2000, RT_DEFAULT, PFN_cuCtxSynchronize_v2000) \
    X(cuMemAlloc, "cuMemAlloc", 3020, RT_DEFAULT, PFN_cuMemAlloc_v3020) \
    X(cuMemAllocPitch, "cuMemAllocPitch", 3020, RT_DEFAULT, PFN_cuMemAllocPitch_v3020) \
    X(cuMemFree, "cuMemFree", 3020, RT_DEFAULT, PFN_cuMemFree_v3020) \
    X(cuMemGetInfo, "cuMemGetInfo", 3020, RT_DEFAULT, PFN_cuMemGetInfo_v3020) \
    X(cuMemAllocManaged, "cuMemAllocManaged", 6000, RT_DEFAULT, PFN_cuMemAllocManaged_v6000) \
    X(cuMemHostAlloc, "cuMemHostAlloc", 2020, RT_DEFAULT, PFN_cuMemHostAlloc_v2020) \
    X(cuMemFreeHost, "cuMemFreeHost", 2000, RT_DEFAULT, PFN_cuMemFreeHost_v2000) \
    X(cuMemHostRegister, "cuMemHostRegister", 6050, RT_DEFAULT, PFN_cuMemHostRegister_v6050) \
    X(cuMemHostUnregister, "cuMemHostUnregister", 4000, RT_DEFAULT, PFN_cuMemHostUnregister_v4000) \
    X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer", 3020, RT_DEFAULT, PFN_cuMemHostGetDevicePointer_v3020) \
    X(cuPointerGetAttribute, "cuPointerGetAttribute", 4000, RT_DEFAULT, PFN_cuPointerGetAttribute_v4000) \
    X(cuMemcpy, "cuMemcpy", 4000, RT_DEFAULT, PFN_cuMemcpy_v4000) \
    X(cuMemcpy_ptds, "cuMemcpy", 4000, RT_PTDS, PFN_cuMemcpy_v7000_ptds) \
    X(cuMemcpyHtoD, "cuMemcpyHtoD", 3020, RT_DEFAULT, PFN_cuMemcpyHtoD_v3020) \
    X(cuMemcpyHtoD_ptds, "cuMemcpyHtoD", 3020, RT_PTDS, PFN_cuMemcpyHtoD_v7000_ptds) \
    X(cuMemcpyDtoH, "cuMemcpyDtoH", 3020, RT_DEFAULT, PFN_cuMemcpyDtoH_v3020) \
    X(cuMemcpyDtoH_ptds, "cuMemcpyDtoH", 3020, RT_PTDS, PFN_cuMemcpyDtoH_v7000_ptds) \
    X(cuMemcpyDtoD, "cuMemcpyDtoD", 3020, RT_DEFAULT, PFN_cuMemcpyDtoD_v3020) \
    X(cuMemcpyDtoD_ptds, "cuMemcpyDtoD", 3020, RT_PTDS, PFN_cuMemcpyDtoD_v7000_ptds) \
    X(cuMemcpyAsync, "cuMemcpyAsync", 4000, RT_DEFAULT, PFN_cuMemcpyAsync_v4000) \
    X(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 4000, RT_PTDS, PFN_cuMemcpyAsync_v7000_ptsz) \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync", 3020, RT_DEFAULT, PFN_cuMemcpyHtoDAsync_v3020) \
    X(cuMemcpyHtoDAsync_ptsz, "cuMemcpyHtoDAsync", 3020, RT_PTDS, PFN_cuMemcpyHtoDAsync_v7000_ptsz) \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync", 3020, RT_DEFAULT, PFN_cuMemcpyDtoHAsync_v3020) \
    X(cuMemcpyDtoHAsync_ptsz, "cuMemcpyDtoHAsync", 3020, RT_PTDS, PFN_cuMemcpyDtoHAsync_v7000_ptsz) \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync", 3020, RT_DEFAULT, PFN_cuMemcpyDtoDAsync_v3020) \
    X(cuMemcpyDtoDAsync_ptsz, "cuMemcpyDtoDAsync", 3020, RT_PTDS, PFN_cuMemcpyDtoDAsync_v7000_ptsz) \
    X(cuMemsetD8, "cuMemsetD8", 3020, RT_DEFAULT, PFN_cuMemsetD8_v3020) \
    X(cuMemsetD8_ptds, "cuMemsetD8", 3020, RT_PTDS, PFN_cuMemsetD8_v7000_ptds) \
    X(cuMemsetD8Async, "cuMemsetD8Async", 3020, RT_DEFAULT, PFN_cuMemsetD8Async_v3020) \
    X(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 3020, RT_PTDS, PFN_cuMemsetD8Async_v7000_ptsz) \
    X(cuMemAllocAsync, "cuMemAllocAsync", 11020, RT_DEFAULT, PFN_cuMemAllocAsync_v11020) \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, RT_PTDS, PFN_cuMemAllocAsync_v11020_ptsz) \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, RT_DEFAULT, PFN_cuMemAllocFromPoolAsync_v11020) \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, RT_PTDS, PFN_cuMemAllocFromPoolAsync_v11020_ptsz) \
    X(cuMemFreeAsync, "cuMemFreeAsync", 11020, RT_DEFAULT, PFN_cuMemFreeAsync_v11020) \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, RT_PTDS, PFN_cuMemFreeAsync_v11020_ptsz) \
    X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020, RT_DEFAULT, PFN_cuDeviceGetDefaultMemPool_v11020) \
    X(cuDeviceGetMemPool, "cuDeviceGetMemPool", 11020, RT_DEFAULT, PFN_cuDeviceGetMemPool_v11020) \
    X(cuDeviceSetMemPool, "cuDeviceSetMemPool", 11020, RT_DEFAULT, PFN_cuDeviceSetMemPool_v11020) \
    X(cuMemPoolCreate, "cuMemPoolCreate", 11020, RT_DEFAULT, PFN_cuMemPoolCreate_v11020) \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", 11020, RT_DEFAULT, PFN_cuMemPoolDestroy_v11020) \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", 11020, RT_DEFAULT, PFN_cuMemPoolTrimTo_v11020) \
    X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", 11020, RT_DEFAULT, PFN_cuMemPoolSetAttribute_v11020) \
    X(cuMemPoolGetAttribute, "cuMemPoolGetAttribute", 11020, RT_DEFAULT, PFN_cuMemPoolGetAttribute_v11020) \
    X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 5050, RT_DEFAULT, PFN_cuStreamCreateWithPriority_v5050) \
    X(cuStreamDestroy, "cuStreamDestroy", 4000, RT_DEFAULT, PFN_cuStreamDestroy_v4000) \
    X(cuStreamSynchronize, "cuStreamSynchronize", 2000, RT_DEFAULT, PFN_cuStreamSynchronize_v2000) \
    X(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 2000, RT_PTDS, PFN_cuStreamSynchronize_v7000_ptsz) \
    X(cuStreamQuery, "cuStreamQuery", 2000, RT_DEFAULT, PFN_cuStreamQuery_v2000) \
    X(cuStreamQuery_ptsz, "cuStreamQuery", 2000, RT_PTDS, PFN_cuStreamQuery_v7000_ptsz) \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", 3020, RT_DEFAULT, PFN_cuStreamWaitEvent_v3020) \
    X(cuStreamWaitEvent_ptsz, "cuStreamWaitEvent", 3020, RT_PTDS, PFN_cuStreamWaitEvent_v7000_ptsz) \
    X(cuEventCreate, "cuEventCreate", 2000, RT_DEFAULT, PFN_cuEventCreate_v2000) \
    X(cuEventRecord, "cuEventRecord", 2000, RT_DEFAULT, PFN_cuEventRecord_v2000) \
    X(cuEventRecord_ptsz, "cuEventRecord", 2000, RT_PTDS, PFN_cuEventRecord_v7000_ptsz) \
    X(cuEventQuery, "cuEventQuery", 2000, RT_DEFAULT, PFN_cuEventQuery_v2000) \
    X(cuEventSynchronize, "cuEventSynchronize", 2000, RT_DEFAULT, PFN_cuEventSynchronize_v2000) \
    X(cuEventElapsedTime, "cuEventElapsedTime", 12080, RT_DEFAULT, PFN_cuEventElapsedTime_v12080) \
    X(cuEventDestroy, "cuEventDestroy", 4000, RT_DEFAULT, PFN_cuEventDestroy_v4000) \
    X(cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags", 11000, RT_DEFAULT, PFN_cuDevicePrimaryCtxSetFlags_v11000) \
    X(cuArrayCreate, "cuArrayCreate", 3020, RT_DEFAULT, PFN_cuArrayCreate_v3020) \
    X(cuArray3DCreate, "cuArray3DCreate", 3020, RT_DEFAULT, PFN_cuArray3DCreate_v3020) \
    X(cuArray3DGetDescriptor, "cuArray3DGetDescriptor", 3020, RT_DEFAULT, PFN_cuArray3DGetDescriptor_v3020) \
    X(cuArrayDestroy, "cuArrayDestroy", 2000, RT_DEFAULT, PFN_cuArrayDestroy_v2000) \
    X(cuMipmappedArrayCreate, "cuMipmappedArrayCreate", 5000, RT_DEFAULT, PFN_cuMipmappedArrayCreate_v5000) \
    X(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", 5000, RT_DEFAULT, PFN_cuMipmappedArrayDestroy_v5000) \
    X(cuMipmappedArrayGetLevel, "cuMipmappedArrayGetLevel", 5000, RT_DEFAULT, PFN_cuMipmappedArrayGetLevel_v5000) \
    X(cuArrayGetMemoryRequirements, "cuArrayGetMemoryRequirements", 11060, RT_DEFAULT, PFN_cuArrayGetMemoryRequirements_v11060) \
    X(cuMipmappedArrayGetMemoryRequirements, "cuMipmappedArrayGetMemoryRequirements", 11060, RT_DEFAULT, PFN_cuMipmappedArrayGetMemoryRequirements_v11060) \
    X(cuMemcpy2D, "cuMemcpy2D", 3020, RT_DEFAULT, PFN_cuMemcpy2D_v3020) \
    X(cuMemcpy3D, "cuMemcpy3D", 3020, RT_DEFAULT, PFN_cuMemcpy3D_v3020) \
    X(cuTexObjectCreate, "cuTexObjectCreate", 5000, RT_DEFAULT, PFN_cuTexObjectCreate_v5000) \
    X(cuTexObjectDestroy, "cuTexObjectDestroy", 5000, RT_DEFAULT, PFN_cuTexObjectDestroy_v5000) \
    X(cuSurfObjectCreate, "cuSurfObjectCreate", 5000, RT_DEFAULT, PFN_cuSurfObjectCreate_v5000) \
    X(cuSurfObjectDestroy, "cuSurfObjectDestroy", 5000, RT_DEFAULT, PFN_cuSurfObjectDestroy_v5000) \
    X(cuLaunchHostFunc, "cuLaunchHostFunc", 10000, RT_DEFAULT, PFN_cuLaunchHostFunc_v10000) \
    X(cuLaunchHostFunc_ptsz, "cuLaunchHostFunc", 10000, RT_PTDS, PFN_cuLaunchHostFunc_v10000_ptsz) \
    X(cuStreamBeginCapture, "cuStreamBeginCapture", 10010, RT_DEFAULT, PFN_cuStreamBeginCapture_v10010) \
    X(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", 10010, RT_PTDS, PFN_cuStreamBeginCapture_v10010_ptsz) \
    X(cuStreamEndCapture, "cuStreamEndCapture", 10000, RT_DEFAULT, PFN_cuStreamEndCapture_v10000) \
    X(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 10000, RT_PTDS, PFN_cuStreamEndCapture_v10000_ptsz) \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", 10000, RT_DEFAULT, PFN_cuStreamIsCapturing_v10000) \
    X(cuStreamIsCapturing_ptsz, "cuStreamIsCapturing", 10000, RT_PTDS, PFN_cuStreamIsCapturing_v10000_ptsz) \
    X(cuStreamGetCaptureInfo, "cuStreamGetCaptureInfo", 12030, RT_DEFAULT, PFN_cuStreamGetCaptureInfo_v12030) \
    X(cuStreamGetCaptureInfo_ptsz, "cuStreamGetCaptureInfo", 12030, RT_PTDS, PFN_cuStreamGetCaptureInfo_v12030_ptsz) \
    X(cuGraphCreate, "cuGraphCreate", 10000, RT_DEFAULT, PFN_cuGraphCreate_v10000) \
    X(cuGraphDestroy, "cuGraphDestroy", 10000, RT_DEFAULT, PFN_cuGraphDestroy_v10000) \
    X(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040, RT_DEFAULT, PFN_cuGraphAddMemAllocNode_v11040) \
    X(cuGraphAddMemFreeNode, "cuGraphAddMemFreeNode", 11040, RT_DEFAULT, PFN_cuGraphAddMemFreeNode_v11040) \
    X(cuGraphAddEmptyNode, "cuGraphAddEmptyNode", 10000, RT_DEFAULT, PFN_cuGraphAddEmptyNode_v10000) \
    X(cuGraphAddHostNode, "cuGraphAddHostNode", 10000, RT_DEFAULT, PFN_cuGraphAddHostNode_v10000) \
    X(cuGraphGetNodes, "cuGraphGetNodes", 10000, RT_DEFAULT, PFN_cuGraphGetNodes_v10000) \
    X(cuGraphClone, "cuGraphClone", 10000, RT_DEFAULT, PFN_cuGraphClone_v10000) \
    X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, RT_DEFAULT, PFN_cuGraphInstantiateWithFlags_v11040) \
    X(cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams", 12000, RT_DEFAULT, PFN_cuGraphInstantiateWithParams_v12000) \
    X(cuGraphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 12000, RT_PTDS, PFN_cuGraphInstantiateWithParams_v12000_ptsz) \
    X(cuGraphUpload, "cuGraphUpload", 11010, RT_DEFAULT, PFN_cuGraphUpload_v11010) \
    X(cuGraphUpload_ptsz, "cuGraphUpload", 11010, RT_PTDS, PFN_cuGraphUpload_v11010_ptsz) \
    X(cuGraphLaunch, "cuGraphLaunch", 10000, RT_DEFAULT, PFN_cuGraphLaunch_v10000) \
    X(cuGraphLaunch_ptsz, "cuGraphLaunch", 10000, RT_PTDS, PFN_cuGraphLaunch_v10000_ptsz) \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", 10000, RT_DEFAULT, PFN_cuGraphExecDestroy_v10000) \
    X(cuDeviceGraphMemTrim, "cuDeviceGraphMemTrim", 11040, RT_DEFAULT, PFN_cuDeviceGraphMemTrim_v11040) \
    X(cuDeviceGetGraphMemAttribute, "cuDeviceGetGraphMemAttribute", 11040, RT_DEFAULT, PFN_cuDeviceGetGraphMemAttribute_v11040) \
    X(cuDeviceSetGraphMemAttribute, "cuDeviceSetGraphMemAttribute", 11040, RT_DEFAULT, PFN_cuDeviceSetGraphMemAttribute_v11040) \
    RT_DRIVER_FUNCS_IPC(X)

/* interprocess memory (rt_ipc.c) */
#define RT_DRIVER_FUNCS_IPC(X) \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", 4010, RT_DEFAULT, PFN_cuIpcGetMemHandle_v4010) \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", 11000, RT_DEFAULT, PFN_cuIpcOpenMemHandle_v11000) \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 4010, RT_DEFAULT, PFN_cuIpcCloseMemHandle_v4010) \
    X(cuMemPoolExportToShareableHandle, "cuMemPoolExportToShareableHandle", 11020, RT_DEFAULT, PFN_cuMemPoolExportToShareableHandle_v11020) \
    X(cuMemPoolImportFromShareableHandle, "cuMemPoolImportFromShareableHandle", 11020, RT_DEFAULT, PFN_cuMemPoolImportFromShareableHandle_v11020) \
    X(cuMemPoolExportPointer, "cuMemPoolExportPointer", 11020, RT_DEFAULT, PFN_cuMemPoolExportPointer_v11020) \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer", 11020, RT_DEFAULT, PFN_cuMemPoolImportPointer_v11020) \
    X(cuImportExternalMemory, "cuImportExternalMemory", 10000, RT_DEFAULT, PFN_cuImportExternalMemory_v10000) \
    X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer", 10000, RT_DEFAULT, PFN_cuExternalMemoryGetMappedBuffer_v10000) \
    X(cuDestroyExternalMemory, "cuDestroyExternalMemory", 10000, RT_DEFAULT, PFN_cuDestroyExternalMemory_v10000) \
    X(cuIpcGetEventHandle, "cuIpcGetEventHandle", 4010, RT_DEFAULT, PFN_cuIpcGetEventHandle_v4010) \
    X(cuIpcOpenEventHandle, "cuIpcOpenEventHandle", 4010, RT_DEFAULT, PFN_cuIpcOpenEventHandle_v4010) \
    X(cuMemPoolSetAccess, "cuMemPoolSetAccess", 11020, RT_DEFAULT, PFN_cuMemPoolSetAccess_v11020) \
    X(cuMemPoolGetAccess, "cuMemPoolGetAccess", 11020, RT_DEFAULT, PFN_cuMemPoolGetAccess_v11020)

typedef struct rt_driver {
    PFN_cuInit_v2000 cuInit;
    PFN_cuGetProcAddress_v12000 cuGetProcAddress; /* from the self-lookup */
#define X(field, name, ver, flags, type) type field;
    RT_DRIVER_FUNCS(X)
#undef X
} rt_driver;

/* Driver entry points; valid after a successful rt_begin(). Read-only then. */
extern rt_driver rt_drv;

/* Initialise the runtime once (driver load + resolve + cuInit + atexit).
 * Returns cudaSuccess, cudaErrorCudartUnloading after exit teardown, or the
 * init failure (cudaErrorInsufficientDriver when libcuda.so.1 cannot be
 * loaded or lacks an entry point, cudaErrorNoDevice, ...). Records the error
 * as the thread's last error. Thread-safe. */
cudaError_t rt_begin(void);
/* rt_begin() plus: make sure a context is current on this thread (the current
 * device's primary context unless one already is). Thread-safe. */
cudaError_t rt_ctx(void);
/* The calling thread's current device (cudaSetDevice), default 0. */
int rt_current_device(void);
void rt_set_current_device(int dev);
/* Retain (once per process) device `dev`'s primary context and return it. */
cudaError_t rt_primary(int dev, CUcontext *ctx);
/* cudaDeviceReset support: reset `dev`'s primary context (no-op if never used). */
cudaError_t rt_reset_device(int dev);

/* ---- rt_array.c ---- */
/* The driver's format and channel count of a runtime channel descriptor (1, 2 or 4
 * channels of equal width; signed, unsigned or float kinds): 0, or -1 for one the
 * simulated device does not take. */
int rt_channel_format(const struct cudaChannelFormatDesc *d, CUarray_format *fmt, unsigned *channels);

/* ---- rt_error.c ---- */
/* CUresult -> cudaError_t, as the real runtime maps them. */
cudaError_t rt_map(CUresult r);
/* Record a non-success error as the thread's last error; returns `e`. */
cudaError_t rt_ret(cudaError_t e);
/* rt_ret(rt_map(r)). */
cudaError_t rt_ret_cu(CUresult r);

#endif
