/*
 * rt_init.c - loading the driver, resolving it, contexts and exit teardown of
 * the simulated runtime. See rt_internal.h for the design.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define RT_MAX_DEVICES 64

rt_driver rt_drv;

static pthread_once_t   rt_once = PTHREAD_ONCE_INIT;
static cudaError_t      rt_init_status = cudaSuccess;
static void            *rt_driver_handle;
static atomic_int       rt_unloading;
static pthread_mutex_t  rt_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext        rt_primary_ctx[RT_MAX_DEVICES]; /* guarded by rt_lock */
static int              rt_ndev;

static __thread int tls_device;

/* Exit-time teardown, registered by rt_init like the real runtime's. */
static void rt_teardown(void)
{
    atomic_store(&rt_unloading, 1);
    pthread_mutex_lock(&rt_lock);
    for (int d = 0; d < rt_ndev && d < RT_MAX_DEVICES; d++) {
        if (rt_primary_ctx[d]) {
            rt_drv.cuDevicePrimaryCtxRelease(d);
            rt_primary_ctx[d] = NULL;
        }
    }
    pthread_mutex_unlock(&rt_lock);
}

static void rt_init(void)
{
    rt_driver_handle = dlopen("libcuda.so.1", RTLD_NOW);
    if (!rt_driver_handle) {
        rt_init_status = cudaErrorInsufficientDriver;
        return;
    }
    /* The one and only dlsym: everything else comes through the resolver. */
    PFN_cuGetProcAddress_v12000 resolver =
        (PFN_cuGetProcAddress_v12000)dlsym(rt_driver_handle, "cuGetProcAddress_v2");
    if (!resolver) {
        rt_init_status = cudaErrorInsufficientDriver;
        return;
    }
    void *p = NULL;
    resolver("", &p, 0, 0, NULL); /* the real runtime's first probe */
    resolver("cuInit", &p, 2000, 0, NULL);
    rt_drv.cuInit = (PFN_cuInit_v2000)p;
    resolver("cuGetProcAddress", &p, 11030, 0, NULL);
    p = NULL;
    resolver("cuGetProcAddress", &p, 12000, 0, NULL);
    rt_drv.cuGetProcAddress = (PFN_cuGetProcAddress_v12000)p;
    if (!rt_drv.cuInit || !rt_drv.cuGetProcAddress) {
        rt_init_status = cudaErrorInsufficientDriver;
        return;
    }
#define X(field, name, ver, flags, type)                                        \
    p = NULL;                                                                   \
    rt_drv.cuGetProcAddress(name, &p, ver, flags, NULL);                        \
    if (!p) {                                                                   \
        fprintf(stderr, "simcuda runtime: driver lacks %s (%d, flags %d)\n",   \
                name, ver, (int)(flags));                                       \
        rt_init_status = cudaErrorInsufficientDriver;                           \
        return;                                                                 \
    }                                                                           \
    rt_drv.field = (type)p;
    RT_DRIVER_FUNCS(X)
#undef X
    CUresult r = rt_drv.cuInit(0);
    if (r != CUDA_SUCCESS) {
        rt_init_status = r == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice : rt_map(r);
        return;
    }
    int n = 0;
    rt_drv.cuDeviceGetCount(&n);
    rt_ndev = n < RT_MAX_DEVICES ? n : RT_MAX_DEVICES;
    if (rt_ndev == 0) {
        rt_init_status = cudaErrorNoDevice;
        return;
    }
    atexit(rt_teardown);
}

cudaError_t rt_begin(void)
{
    if (atomic_load(&rt_unloading))
        return rt_ret(cudaErrorCudartUnloading);
    pthread_once(&rt_once, rt_init);
    return rt_ret(rt_init_status);
}

int rt_current_device(void) { return tls_device; }
void rt_set_current_device(int dev) { tls_device = dev; }

cudaError_t rt_primary(int dev, CUcontext *ctx)
{
    if (dev < 0 || dev >= rt_ndev)
        return rt_ret(cudaErrorInvalidDevice);
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&rt_lock);
    if (!rt_primary_ctx[dev]) {
        CUresult r = rt_drv.cuDevicePrimaryCtxRetain(&rt_primary_ctx[dev], dev);
        if (r != CUDA_SUCCESS) {
            rt_primary_ctx[dev] = NULL;
            e = rt_map(r);
        }
    }
    *ctx = rt_primary_ctx[dev];
    pthread_mutex_unlock(&rt_lock);
    return rt_ret(e);
}

cudaError_t rt_ctx(void)
{
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    CUcontext cur = NULL;
    rt_drv.cuCtxGetCurrent(&cur);
    if (cur)
        return cudaSuccess;
    e = rt_primary(tls_device, &cur);
    if (e != cudaSuccess)
        return e;
    return rt_ret_cu(rt_drv.cuCtxSetCurrent(cur));
}

cudaError_t rt_reset_device(int dev)
{
    if (dev < 0 || dev >= rt_ndev)
        return rt_ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&rt_lock);
    CUcontext c = rt_primary_ctx[dev];
    pthread_mutex_unlock(&rt_lock);
    if (!c)
        return cudaSuccess; /* never used: nothing to reset */
    return rt_ret_cu(rt_drv.cuDevicePrimaryCtxReset(dev));
}
