/* locallib.c — a plugin linked against the CUDA runtime and driver, for
 * prog_locallib: the program dlopen's it RTLD_LOCAL and links no CUDA library itself
 * (a Python extension module imported the default way, a plugin loaded privately).
 * Its calls bind to the preload's hooks (first in the global scope); the real
 * functions are only in the plugin's own dependency scope, never reachable through
 * RTLD_NEXT. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define PLUGIN __attribute__((visibility("default")))   /* the project builds hidden */

PLUGIN int plugin_runtime_alloc(void **p, size_t bytes) { return (int)cudaMalloc(p, bytes); }
PLUGIN int plugin_runtime_free(void *p) { return (int)cudaFree(p); }
PLUGIN int plugin_driver_alloc(unsigned long long *p, size_t bytes)
{
    CUdeviceptr d = 0;
    int r = (int)cuMemAlloc(&d, bytes);
    *p = (unsigned long long)d;
    return r;
}
/* cuInit, the primary context of device 0 made current: none of them hooked */
PLUGIN int plugin_driver_init(void)
{
    CUcontext ctx = NULL;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDevicePrimaryCtxRetain(&ctx, 0);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    return (int)r;
}
PLUGIN int plugin_driver_free(unsigned long long p) { return (int)cuMemFree((CUdeviceptr)p); }

/* A plugin registers its entry points from its constructor when the program offers a
 * registry (prog_locallib --deepbind-registry): the program then calls them without
 * any dlsym after its dlopen. */
extern void prog_locallib_register(void *ralloc, void *rfree, void *dalloc, void *dfree) __attribute__((weak));
__attribute__((constructor)) static void locallib_register(void)
{
    if (prog_locallib_register)
        prog_locallib_register((void *)plugin_runtime_alloc, (void *)plugin_runtime_free,
                               (void *)plugin_driver_alloc, (void *)plugin_driver_free);
}

/* The address this plugin's own references give a loader or C library function
 * (name: dlsym, dlopen, dlerror, pthread_cancel): what its calls reach. */
PLUGIN void *plugin_fn_addr(const char *name)
{
    if (!strcmp(name, "dlsym")) return (void *)dlsym;
    if (!strcmp(name, "dlopen")) return (void *)dlopen;
    if (!strcmp(name, "dlerror")) return (void *)dlerror;
    if (!strcmp(name, "pthread_cancel")) return (void *)pthread_cancel;
    return NULL;
}
