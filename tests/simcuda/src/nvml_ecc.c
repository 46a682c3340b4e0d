/*
 * nvml_ecc.c - the simulated NVML's memory-error counters: ECC counts, page
 * retirement and row remapping.
 *
 * Design: a healthy board by default (every count 0). For tests, the environment
 * makes errors appear, on every simulated device:
 *   SIMCUDA_ECC_SBE=N            corrected (single-bit) ECC errors
 *   SIMCUDA_ECC_DBE=N            uncorrected (double-bit) ECC errors
 *   SIMCUDA_ECC_RISE_AFTER_MS=T  the counts read 0 until T ms after the first
 *                                nvmlInit_v2, then N ("ECC rises during the run")
 * Volatile and aggregate counters read the same values (a board whose history
 * starts with this run). Like a Hopper GPU, the device remaps rows instead of
 * retiring pages: nvmlDeviceGetRetiredPages returns NVML_ERROR_NOT_SUPPORTED, and
 * nvmlDeviceGetRemappedRows reports one uncorrectable row remap per double-bit error,
 * pending (until a GPU reset) while there is any. Malformed values are reported once
 * on stderr ("simcuda: ...") and read as 0.
 */
#define _GNU_SOURCE
#include "nvml_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long env_count(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || !end || *end || *v == '-') {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_ACQ_REL))
            fprintf(stderr, "simcuda: %s=%s is not a count; using 0\n", name, v);
        return 0;
    }
    return n;
}

/* The count of kind (0 corrected, 1 uncorrected) now. */
static unsigned long long ecc_now(int uncorrected)
{
    if (sim_nvml_ms_since_init() < env_count("SIMCUDA_ECC_RISE_AFTER_MS"))
        return 0;
    return env_count(uncorrected ? "SIMCUDA_ECC_DBE" : "SIMCUDA_ECC_SBE");
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
    if (!sim_nvml_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (sim_nvml_device_index(device) < 0 || !eccCounts ||
        (errorType != NVML_MEMORY_ERROR_TYPE_CORRECTED && errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
        (counterType != NVML_VOLATILE_ECC && counterType != NVML_AGGREGATE_ECC))
        return NVML_ERROR_INVALID_ARGUMENT;
    *eccCounts = ecc_now(errorType == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int *pageCount, unsigned long long *addresses)
{
    (void)cause;
    (void)addresses;
    if (!sim_nvml_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (sim_nvml_device_index(device) < 0 || !pageCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;   /* Ampere and later remap rows instead */
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
    if (!sim_nvml_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (sim_nvml_device_index(device) < 0 || !corrRows || !uncRows || !isPending || !failureOccurred)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long dbe = ecc_now(1);
    *corrRows = 0;
    *uncRows = (unsigned)(dbe > 0xFFFFFFFFull ? 0xFFFFFFFFull : dbe);
    *isPending = dbe > 0;
    *failureOccurred = 0;
    return NVML_SUCCESS;
}
