/*
 * sim_env.h - configuration of the simulated CUDA device from the environment.
 *
 * Design: read once (at cuInit) into a plain struct; nothing here is locked
 * because the struct is written once under the driver lock and read-only after.
 *
 * Variables (documented in docs/simcuda.md):
 *   SIMCUDA_MEM      per-device capacity in bytes; suffixes K/M/G/T, KiB/MiB/GiB/TiB
 *                    (binary) and KB/MB/GB/TB (decimal). Default 16 GiB.
 *   SIMCUDA_DEVICES  number of devices, 1..SIM_MAX_DEVICES. Default 1. 0 means "no
 *                    device": cuInit returns CUDA_ERROR_NO_DEVICE.
 *   SIMCUDA_FAIL_AT  comma-separated list of 1-based allocation ordinals that fail
 *                    with out-of-memory (CUDA_ERROR_OUT_OF_MEMORY). E.g. "3" or "3,7".
 */
#ifndef SIMCUDA_SIM_ENV_H
#define SIMCUDA_SIM_ENV_H

#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_DEVICES 16
#define SIM_MAX_FAIL_AT 32
#define SIM_DEFAULT_MEM ((size_t)16 << 30)

typedef struct sim_env {
    size_t   capacity;              /* bytes per device */
    int      devices;               /* device count */
    unsigned nfail;                 /* entries used in fail_at */
    uint64_t fail_at[SIM_MAX_FAIL_AT]; /* 1-based allocation ordinals that fail */
} sim_env;

/* Parse a size like "2GiB", "512M", "1000000". Returns 0 and sets *out on
 * success, -1 on a malformed string or overflow. Thread-safe (pure). */
int sim_parse_size(const char *s, size_t *out);

/* Fill *env from the process environment. Malformed values are reported once on
 * stderr ("simcuda: ...") and replaced by defaults. Not thread-safe: call under
 * the driver lock. */
void sim_env_load(sim_env *env);

#endif
