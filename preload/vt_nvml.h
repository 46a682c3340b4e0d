/* vt_nvml.h — the few NVML declarations vt_host.c uses, with NVML's own names.
 *
 * libnvidia-ml.so.1 is never linked: vt_host.c dlopen's it on the writer thread and
 * looks these functions up by name. When the CUDA toolkit ships nvml.h (it lives in
 * /usr/local/cuda/include on full installs) that header is used; otherwise the
 * declarations below are copied from it (NVML API reference, "nvml.h", CUDA 12/13:
 * nvmlReturn_t values, nvmlMemory_t, nvmlProcessInfo_t as taken by
 * nvmlDeviceGetComputeRunningProcesses_v3, nvmlMemoryErrorType_t,
 * nvmlEccCounterType_t, nvmlPageRetirementCause_t). The simulated NVML
 * (tests/simcuda/src/nvml_api.h) carries the same copy; both must match nvml.h.
 */
#ifndef VT_NVML_H
#define VT_NVML_H

#if defined(__has_include)
#if __has_include(<nvml.h>)
#include <nvml.h>
#define VT_HAVE_NVML_H 1
#endif
#endif

#ifndef VT_HAVE_NVML_H
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
    unsigned long long total;   /* bytes */
    unsigned long long free;    /* bytes */
    unsigned long long used;    /* bytes */
} nvmlMemory_t;

typedef struct nvmlProcessInfo_st {
    unsigned int       pid;
    unsigned long long usedGpuMemory;      /* bytes, or NVML_VALUE_NOT_AVAILABLE */
    unsigned int       gpuInstanceId;
    unsigned int       computeInstanceId;
} nvmlProcessInfo_t;

typedef enum nvmlMemoryErrorType_enum {
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,      /* ECC: single-bit errors */
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,    /* ECC: double-bit errors */
    NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
    NVML_VOLATILE_ECC = 0,     /* since the driver loaded */
    NVML_AGGREGATE_ECC = 1,    /* lifetime of the board   */
    NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

typedef enum nvmlPageRetirementCause_enum {
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
    NVML_PAGE_RETIREMENT_CAUSE_COUNT
} nvmlPageRetirementCause_t;

#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#endif /* !VT_HAVE_NVML_H */

/* Function types of the entry points looked up (signatures from nvml.h). */
typedef nvmlReturn_t (*vt_nvmlInit_v2_t)(void);
typedef nvmlReturn_t (*vt_nvmlDeviceGetCount_v2_t)(unsigned int *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetHandleByIndex_v2_t)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetHandleByUUID_t)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetUUID_t)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*vt_nvmlDeviceGetMemoryInfo_t)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetComputeRunningProcesses_v3_t)(nvmlDevice_t, unsigned int *,
                                                                     nvmlProcessInfo_t *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetTotalEccErrors_t)(nvmlDevice_t, nvmlMemoryErrorType_t,
                                                         nvmlEccCounterType_t, unsigned long long *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetRetiredPages_t)(nvmlDevice_t, nvmlPageRetirementCause_t,
                                                       unsigned int *, unsigned long long *);
typedef nvmlReturn_t (*vt_nvmlDeviceGetRemappedRows_t)(nvmlDevice_t, unsigned int *, unsigned int *,
                                                       unsigned int *, unsigned int *);

#endif /* VT_NVML_H */
