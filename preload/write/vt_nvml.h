/* vt_nvml.h — the NVML entry points vt_host.c looks up, as function types.
 *
 * libnvidia-ml.so.1 is never linked: vt_host.c dlopen's it on the writer thread and
 * looks these functions up by name. Types and constants come from
 * common/vt_nvml_types.h (nvml.h itself where it is installed); the signatures are
 * nvml.h's.
 */
#ifndef VT_NVML_H
#define VT_NVML_H

#include "vt_nvml_types.h"


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
