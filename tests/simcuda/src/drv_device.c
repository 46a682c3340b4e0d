/*
 * drv_device.c - cuInit and device queries of the simulated driver.
 *
 * Follows the CUDA Driver API "Initialization", "Version Management" and
 * "Device Management" sections of cuda.h (CUDA 13.0). cuInit reads the
 * environment (sim_env.h), then reserves one address range per device with
 * mmap(MAP_NORESERVE): pages cost nothing until touched, and madvise(DONTNEED)
 * hands them back on free. The device looks like a Hopper-class part
 * (compute capability 9.0); attributes not listed return 0.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

sim_driver sim_drv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static CUresult init_devices_locked(void)
{
    sim_env_load(&sim_drv.env);
    if (sim_drv.env.devices == 0)
        return CUDA_ERROR_NO_DEVICE;
    sim_drv.next_phys_id = 0x5100000000ULL;
    for (int i = 0; i < sim_drv.env.devices; i++) {
        sim_device *d = &sim_drv.dev[i];
        d->capacity = sim_drv.env.capacity & ~(SIM_SMALL_ALIGN - 1);
        d->overhead = d->capacity / 8 < SIM_CTX_OVERHEAD_MAX ? (d->capacity / 8) & ~(SIM_GRANULARITY - 1)
                                                             : SIM_CTX_OVERHEAD_MAX;
        d->arena_size = d->capacity - d->overhead;
        d->map_len = d->arena_size + SIM_GRANULARITY;
        d->map = mmap(NULL, d->map_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (d->map == MAP_FAILED) {
            fprintf(stderr, "simcuda: cannot reserve %zu bytes for device %d\n", d->map_len, i);
            d->map = NULL;
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        d->ipc_fd = -1;
        d->base = ((uintptr_t)d->map + SIM_GRANULARITY - 1) & ~(uintptr_t)(SIM_GRANULARITY - 1);
        if (sim_arena_init(&d->arena, d->arena_size))
            return CUDA_ERROR_OUT_OF_MEMORY;
        d->primary.magic = SIM_MAGIC_CTX;
        d->primary.device = i;
        d->primary.primary = 1;
        sim_pool_init_default(&d->default_pool, i);
        d->current_pool = &d->default_pool;
        sim_drv.ndev = i + 1;
    }
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    if (!sim_drv.initialized && sim_drv.init_result == CUDA_SUCCESS) {
        CUresult r = init_devices_locked();
        if (r == CUDA_SUCCESS)
            sim_drv.initialized = 1;
        else
            sim_drv.init_result = r;
    }
    CUresult r = sim_drv.initialized ? CUDA_SUCCESS : sim_drv.init_result;
    SIM_UNLOCK();
    return r;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    SIM_REQUIRE_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = sim_drv.ndev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    SIM_REQUIRE_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "simcuda simulated device %d", dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid->bytes, 0, sizeof uuid->bytes);
    memcpy(uuid->bytes, "simcuda-dev", 11);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = sim_drv.dev[dev].capacity;
    return CUDA_SUCCESS;
}

/* Attribute values of the simulated device (a Hopper-like part). */
static int attribute_value(CUdevice_attribute a, int dev)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return dev + 1;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    default: return 0;
    }
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *pi = attribute_value(attrib, dev);
    return CUDA_SUCCESS;
}
