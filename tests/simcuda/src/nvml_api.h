/*
 * nvml_api.h - the NVML declarations the simulated libnvidia-ml.so.1 implements,
 * and the driver's query that feeds it.
 *
 * Names, values and signatures are those of NVIDIA's nvml.h (NVML API reference,
 * CUDA 12/13). The types come from common/vt_nvml_types.h, shared with the reader
 * side (nvml.h itself where it is installed, so the signatures below are then
 * checked against the real header).
 */
#ifndef SIMCUDA_NVML_API_H
#define SIMCUDA_NVML_API_H

#include <cuda.h>
#include <stddef.h>

#include "vt_nvml_types.h"   /* common/: the one copy of the nvml.h types */

/* The entry points (nvml.h signatures). */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char  *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int *pageCount, unsigned long long *addresses);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred);

/* Simulated driver (libcuda.so.1, nvml_bridge.c), not part of the CUDA API: the
 * device's memory as cuMemGetInfo_v2 would report it from any context on it —
 * *used = capacity - free, *total = capacity — and how many contexts are alive on
 * it (primary + created). Works without a current context. Returns CUDA_SUCCESS,
 * CUDA_ERROR_NOT_INITIALIZED or CUDA_ERROR_INVALID_DEVICE. Thread-safe (driver lock). */
CUresult cuSimcudaDeviceMemory(CUdevice dev, size_t *used, size_t *total, int *contexts);

/* Internal to the simulated NVML (nvml_device.c <-> nvml_ecc.c). */
struct nvmlDevice_st { unsigned index; };
int      sim_nvml_ready(void);            /* nvmlInit_v2 succeeded and not shut down */
int      sim_nvml_device_index(nvmlDevice_t d); /* index or -1 for a bad handle     */
unsigned long long sim_nvml_ms_since_init(void);

#endif
