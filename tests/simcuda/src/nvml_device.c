/*
 * nvml_device.c - the simulated libnvidia-ml.so.1: init, devices, memory, processes.
 *
 * Design: NVML's view of the simulated CUDA device(s). nvmlInit_v2 initialises the
 * simulated driver (cuInit; a real NVML talks to the kernel driver instead) and
 * counts its devices; NVML index i is CUDA ordinal i (no CUDA_VISIBLE_DEVICES
 * reordering is simulated) and the UUID is cuDeviceGetUuid_v2's, formatted as NVML
 * and nvidia-smi print it ("GPU-" + 8-4-4-4-12 lowercase hex digits).
 * nvmlDeviceGetMemoryInfo reports the simulated device's memory exactly as
 * cuMemGetInfo_v2 would (used = capacity - free, the context overhead included);
 * nvmlDeviceGetComputeRunningProcesses_v3 lists this process, with all of that used
 * memory, while any context is alive on the device (the simulated device has no
 * other process). SIMCUDA_NVML=off makes nvmlInit_v2 fail with
 * NVML_ERROR_DRIVER_NOT_LOADED (a machine whose NVML cannot start). ECC and row
 * remapping: nvml_ecc.c. Thread safety: the init state is atomic; everything else
 * asks the driver, which locks.
 *
 * SIMCUDA_NVML_CTOR_CUDA=1 (for tests of whoever loads NVML): the library's
 * constructor has a thread of its own make a CUDA allocation (cudaMalloc and cudaFree
 * of 1 MiB, found by the constructor with dlsym(RTLD_DEFAULT): the program's runtime,
 * or a preload's hooks of it; the thread itself calls nothing of the loader's) and
 * waits for that thread up to SIM_NVML_CTOR_WAIT_MS, while the
 * loading thread holds the loader's lock: a library whose initialisation waits for
 * CUDA work on another thread. A wait that times out says so on stderr ("simnvml:
 * ..."), then the constructor returns (the thread finishes on its own).
 */
#define _GNU_SOURCE
#include "nvml_api.h"
#include "sim_env.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIM_NVML_CTOR_WAIT_MS 3000

/* The program's cudaMalloc and cudaFree, looked up by the constructor (dlsym takes the
 * loader's lock: on the loading thread, which holds it already). */
static int (*sim_rt_malloc)(void **, size_t);
static int (*sim_rt_free)(void *);

/* The constructor's thread: one allocation and its free through the program's runtime. */
static void *sim_nvml_ctor_cuda(void *arg)
{
    (void)arg;
    int (*rt_malloc)(void **, size_t) = sim_rt_malloc;
    int (*rt_free)(void *) = sim_rt_free;
    void *p = NULL;
    if (rt_malloc && rt_free && rt_malloc(&p, 1u << 20) == 0)
        rt_free(p);
    return NULL;
}

__attribute__((constructor)) static void sim_nvml_ctor(void)
{
    const char *v = getenv("SIMCUDA_NVML_CTOR_CUDA");
    if (!v || strcmp(v, "1") != 0)
        return;
    sim_rt_malloc = (int (*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
    sim_rt_free = (int (*)(void *))dlsym(RTLD_DEFAULT, "cudaFree");
    pthread_t t;
    if (pthread_create(&t, NULL, sim_nvml_ctor_cuda, NULL) != 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += SIM_NVML_CTOR_WAIT_MS / 1000;
    if (pthread_timedjoin_np(t, NULL, &until) == ETIMEDOUT) {
        fprintf(stderr, "simnvml: the constructor's CUDA thread is still blocked after %d ms "
                        "(the thread loading NVML holds a lock it waits for)\n", SIM_NVML_CTOR_WAIT_MS);
        pthread_detach(t);
    }
}

static int sim_nvml_refs;                          /* atomic: nvmlInit_v2 - nvmlShutdown */
static unsigned sim_nvml_count;                    /* devices, set by the first init     */
static unsigned long long sim_nvml_init_ms;        /* CLOCK_MONOTONIC ms of the first init */
static struct nvmlDevice_st sim_nvml_devs[SIM_MAX_DEVICES];

static unsigned long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
}

int sim_nvml_ready(void)
{
    return __atomic_load_n(&sim_nvml_refs, __ATOMIC_ACQUIRE) > 0;
}

unsigned long long sim_nvml_ms_since_init(void)
{
    return now_ms() - __atomic_load_n(&sim_nvml_init_ms, __ATOMIC_ACQUIRE);
}

int sim_nvml_device_index(nvmlDevice_t d)
{
    if (!d || d < sim_nvml_devs || d >= sim_nvml_devs + sim_nvml_count)
        return -1;
    return (int)(d - sim_nvml_devs);
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *off = getenv("SIMCUDA_NVML");
    if (off && (!strcmp(off, "off") || !strcmp(off, "0")))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (cuInit(0) != CUDA_SUCCESS)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    int n = 0;
    if (cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return NVML_ERROR_UNKNOWN;
    if (n > SIM_MAX_DEVICES)
        n = SIM_MAX_DEVICES;
    unsigned long long zero = 0;
    __atomic_compare_exchange_n(&sim_nvml_init_ms, &zero, now_ms(), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        sim_nvml_devs[i].index = (unsigned)i;
    __atomic_store_n(&sim_nvml_count, (unsigned)n, __ATOMIC_RELEASE);
    __atomic_add_fetch(&sim_nvml_refs, 1, __ATOMIC_ACQ_REL);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    int r = __atomic_load_n(&sim_nvml_refs, __ATOMIC_ACQUIRE);
    while (r > 0 && !__atomic_compare_exchange_n(&sim_nvml_refs, &r, r - 1, 0, __ATOMIC_ACQ_REL,
                                                 __ATOMIC_ACQUIRE))
        ;
    return r > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:                  return "Success";
    case NVML_ERROR_UNINITIALIZED:      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:   return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:          return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:  return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:  return "Driver Not Loaded";
    default:                            return "Unknown Error";
    }
}

#define SIM_NVML_REQUIRE_INIT() do { if (!sim_nvml_ready()) return NVML_ERROR_UNINITIALIZED; } while (0)

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    SIM_NVML_REQUIRE_INIT();
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = __atomic_load_n(&sim_nvml_count, __ATOMIC_ACQUIRE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    SIM_NVML_REQUIRE_INIT();
    if (!device || index >= __atomic_load_n(&sim_nvml_count, __ATOMIC_ACQUIRE))
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &sim_nvml_devs[index];
    return NVML_SUCCESS;
}

/* "GPU-" + the CUDA UUID in 8-4-4-4-12 lowercase hex. */
static int uuid_string(unsigned idx, char *out, size_t cap)
{
    CUuuid u;
    if (cuDeviceGetUuid_v2(&u, (CUdevice)idx) != CUDA_SUCCESS)
        return -1;
    const unsigned char *b = (const unsigned char *)u.bytes;
    int n = snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                     b[13], b[14], b[15]);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    SIM_NVML_REQUIRE_INIT();
    int i = sim_nvml_device_index(device);
    if (i < 0 || !uuid)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (length < 41)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    return uuid_string((unsigned)i, uuid, length) == 0 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    SIM_NVML_REQUIRE_INIT();
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = __atomic_load_n(&sim_nvml_count, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        char s[64];
        if (uuid_string(i, s, sizeof s) == 0 && !strcmp(s, uuid)) {
            *device = &sim_nvml_devs[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    SIM_NVML_REQUIRE_INIT();
    int i = sim_nvml_device_index(device);
    if (i < 0 || !index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    SIM_NVML_REQUIRE_INIT();
    int i = sim_nvml_device_index(device);
    if (i < 0 || !memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t used = 0, total = 0;
    int ctxs = 0;
    if (cuSimcudaDeviceMemory((CUdevice)i, &used, &total, &ctxs) != CUDA_SUCCESS)
        return NVML_ERROR_UNKNOWN;
    memory->total = total;
    memory->used = used;
    memory->free = total - used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    SIM_NVML_REQUIRE_INIT();
    int i = sim_nvml_device_index(device);
    if (i < 0 || !infoCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t used = 0, total = 0;
    int ctxs = 0;
    if (cuSimcudaDeviceMemory((CUdevice)i, &used, &total, &ctxs) != CUDA_SUCCESS)
        return NVML_ERROR_UNKNOWN;
    unsigned need = ctxs > 0 ? 1 : 0;
    if (*infoCount < need) {
        *infoCount = need;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (need && !infos)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (need) {
        infos[0].pid = (unsigned)getpid();
        infos[0].usedGpuMemory = used;
        infos[0].gpuInstanceId = 0xFFFFFFFFu;     /* no MIG */
        infos[0].computeInstanceId = 0xFFFFFFFFu;
    }
    *infoCount = need;
    return NVML_SUCCESS;
}
