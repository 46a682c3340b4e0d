/*
 * nvml_bridge.c - the simulated driver's answer to the simulated NVML
 * (cuSimcudaDeviceMemory, see nvml_api.h).
 *
 * Design: a real NVML reads the device's memory from the kernel driver, whatever
 * process or context uses it. The simulated device lives inside the process, so the
 * simulated NVML asks the simulated driver through this one extra export (named cu*
 * so that libcuda.map exports it; no real driver has it). The figures are the ones
 * cuMemGetInfo_v2 reports from a context on the device, taken under the driver lock.
 */
#include "drv_internal.h"
#include "nvml_api.h"

CUresult cuSimcudaDeviceMemory(CUdevice dev, size_t *used, size_t *total, int *contexts)
{
    SIM_REQUIRE_INIT();
    if (!used || !total || !contexts)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    sim_device *d = &sim_drv.dev[dev];
    *total = d->capacity;
    *used = d->capacity - (sim_device_free_locked(d));
    int n = d->primary.live ? 1 : 0;
    for (struct CUctx_st *c = sim_drv.ctxs; c; c = c->next)
        if (c->live && c->device == dev)
            n++;
    *contexts = n;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}
