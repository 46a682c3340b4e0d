/* driver_leak.c — a driver-API program that finds the driver the way a
 * statically linked CUDA runtime does, and leaks through cuMemAlloc_v2.
 *
 * Like libcudart_static.a (docs/cuda-interposition.md §1): dlopen("libcuda.so.1"),
 * exactly one dlsym(handle, "cuGetProcAddress_v2"), and every other entry point
 * fetched through that resolver by base name + ABI version ("cuMemAlloc", 3020
 * selects cuMemAlloc_v2). Each step allocates a 1 MiB scratch buffer (freed) and
 * a 512 KiB cache entry that is never freed (the leak, 512 KiB/step). Steps are
 * marked through vramtrace_step(), resolved with dlsym(RTLD_DEFAULT) so the
 * program runs unchanged without the preload.
 *
 * Usage: driver_leak [STEPS] (default 30). Exit 0 on success, 1 on error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);
typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_ctx_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

static get_proc_fn get_proc;

static void *resolve(const char *name, int version)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    if (get_proc(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || !p) {
        fprintf(stderr, "driver_leak: cannot resolve %s\n", name);
        exit(1);
    }
    return p;
}

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "driver_leak: %s failed: %d\n", #x, (int)r_); exit(1); } } while (0)

static alloc_fn mem_alloc;
static free_fn mem_free;
static CUdeviceptr cache[10000];

__attribute__((noinline)) static void scratch_work(void)
{
    CUdeviceptr d;
    CK(mem_alloc(&d, 1 << 20));
    CK(mem_free(d));
}

__attribute__((noinline)) static void cache_insert(int step)
{
    CK(mem_alloc(&cache[step], 512 << 10));   /* never freed */
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 30;
    if (steps < 1 || steps > 10000) return 2;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "driver_leak: %s\n", dlerror()); return 1; }
    get_proc = (get_proc_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!get_proc) { fprintf(stderr, "driver_leak: no cuGetProcAddress_v2\n"); return 1; }

    CK(((init_fn)resolve("cuInit", 2000))(0));
    CUdevice dev; CUcontext ctx;
    CK(((dev_get_fn)resolve("cuDeviceGet", 2000))(&dev, 0));
    CK(((retain_fn)resolve("cuDevicePrimaryCtxRetain", 7000))(&ctx, dev));
    CK(((set_ctx_fn)resolve("cuCtxSetCurrent", 4000))(ctx));
    mem_alloc = (alloc_fn)resolve("cuMemAlloc", 3020);
    mem_free = (free_fn)resolve("cuMemFree", 3020);

    void (*step_mark)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "vramtrace_step");
    for (int s = 0; s < steps; s++) {
        scratch_work();
        cache_insert(s);
        if (step_mark) step_mark();
    }
    printf("driver_leak: %d steps, %d KiB left allocated\n", steps, steps * 512);
    return 0;
}
