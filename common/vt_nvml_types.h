/* vt_nvml_types.h — the NVML types and constants vramtrace uses, one copy for both
 * sides: the reader (preload/write/vt_host.c, through preload/write/vt_nvml.h) and the simulated
 * libnvidia-ml.so.1 (tests/simcuda/src/nvml_api.h).
 *
 * Names and values are NVIDIA's nvml.h (NVML API reference, CUDA 12/13): nvmlReturn_t
 * values, nvmlMemory_t, nvmlProcessInfo_t as taken by
 * nvmlDeviceGetComputeRunningProcesses_v3, nvmlMemoryErrorType_t,
 * nvmlEccCounterType_t, nvmlPageRetirementCause_t. nvml.h is not part of every CUDA
 * toolkit install; when it is on the include path it is used instead, so these are
 * checked against the real header there. Header-only, no state.
 */
#ifndef VT_NVML_TYPES_H
#define VT_NVML_TYPES_H

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

#endif /* VT_NVML_TYPES_H */
