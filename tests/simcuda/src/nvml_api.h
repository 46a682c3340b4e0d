/*
 * nvml_api.h - the NVML declarations the simulated libnvidia-ml.so.1 implements,
 * and the driver's query that feeds it.
 *
 * Names, values and signatures are those of NVIDIA's nvml.h (NVML API reference,
 * CUDA 12/13); nvml.h itself is not part of the CUDA toolkit installed here, so the
 * few declarations used are copied (preload/vt_nvml.h carries the same copy for the
 * reader side). When nvml.h is on the include path it is used instead, so the
 * signatures are checked against the real header.
 */
#ifndef SIMCUDA_NVML_API_H
#define SIMCUDA_NVML_API_H

#include <cuda.h>
#include <stddef.h>

#if defined(__has_include)
#if __has_include(<nvml.h>)
#include <nvml.h>
#define SIM_HAVE_NVML_H 1
#endif
#endif

#ifndef SIM_HAVE_NVML_H
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlProcessInfo_st {
    unsigned int       pid;
    unsigned long long usedGpuMemory;
    unsigned int       gpuInstanceId;
    unsigned int       computeInstanceId;
} nvmlProcessInfo_t;

typedef enum nvmlMemoryErrorType_enum {
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
    NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
    NVML_VOLATILE_ECC = 0,
    NVML_AGGREGATE_ECC = 1,
    NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

typedef enum nvmlPageRetirementCause_enum {
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
    NVML_PAGE_RETIREMENT_CAUSE_COUNT
} nvmlPageRetirementCause_t;

#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#endif /* !SIM_HAVE_NVML_H */

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
