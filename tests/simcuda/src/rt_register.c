/*
 * rt_register.c - the entry points nvcc-generated host code calls
 * (crt/host_runtime.h and crt/device_functions.h of CUDA 13.0):
 * __cudaRegisterFatBinary[End], __cudaUnregisterFatBinary,
 * __cudaRegisterFunction, __cudaRegisterVar, __cudaRegisterManagedVar,
 * __cudaInitModule, __cudaPushCallConfiguration / __cudaPopCallConfiguration,
 * __cudaGetKernel, __cudaLaunchKernel[_ptsz], and cudaLaunchKernel[_ptsz].
 *
 * Design: registration records (the host-side launch function nvcc generates for a
 * kernel, as passed to __cudaRegisterFunction -> kernel name) in a list so that a
 * launch of an unregistered function fails with cudaErrorInvalidDeviceFunction
 * and a bad configuration with cudaErrorInvalidConfiguration, as on a GPU.
 * Kernels do NOTHING on the simulated device: device code is never run, so a
 * kernel's writes to memory do not happen (docs/simcuda.md). __managed__
 * variables get zeroed host memory. Registration never initialises the runtime
 * (the real one defers that too), so it works before main and after exit
 * teardown. The registry is guarded by reg_lock.
 */
#include "rt_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct rt_module {
    void *fatbin;               /* the __fatDeviceText wrapper nvcc passed */
    struct rt_module *next;
} rt_module;

typedef struct rt_function {    /* doubles as the cudaKernel_t handle */
    const void *host_fun;       /* host-side launch function (__cudaRegisterFunction's hostFun) */
    const char *name;           /* mangled device name (static storage of the program) */
    rt_module  *module;
    struct rt_function *next;
} rt_function;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_module   *modules;    /* guarded by reg_lock */
static rt_function *functions;  /* guarded by reg_lock */

void **__cudaRegisterFatBinary(void *fatCubin)
{
    rt_module *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->fatbin = fatCubin;
    pthread_mutex_lock(&reg_lock);
    m->next = modules;
    modules = m;
    pthread_mutex_unlock(&reg_lock);
    return (void **)m; /* first member is a void*: a valid void** handle */
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    rt_module *m = (rt_module *)fatCubinHandle;
    pthread_mutex_lock(&reg_lock);
    for (rt_function **pf = &functions; *pf;) {
        if ((*pf)->module == m) {
            rt_function *f = *pf;
            *pf = f->next;
            free(f);
        } else {
            pf = &(*pf)->next;
        }
    }
    for (rt_module **pm = &modules; *pm; pm = &(*pm)->next)
        if (*pm == m) {
            *pm = m->next;
            free(m);
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceFun; (void)thread_limit; (void)tid; (void)bid; (void)bDim; (void)gDim; (void)wSize;
    rt_function *f = calloc(1, sizeof *f);
    if (!f)
        return;
    f->host_fun = hostFun;
    f->name = deviceName;
    f->module = (rt_module *)fatCubinHandle;
    pthread_mutex_lock(&reg_lock);
    f->next = functions;
    functions = f;
    pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                       int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle; (void)hostVar; (void)deviceAddress; (void)deviceName;
    (void)ext; (void)size; (void)constant; (void)global;
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle; (void)deviceAddress; (void)deviceName; (void)ext; (void)constant; (void)global;
    if (hostVarPtrAddress && !*hostVarPtrAddress)
        *hostVarPtrAddress = calloc(1, size ? size : 1);
}

char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

/* ---- launch configuration stack (<<<...>>>) ---- */

typedef struct rt_config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} rt_config;

#define RT_CONFIG_DEPTH 16
static __thread rt_config tls_configs[RT_CONFIG_DEPTH];
static __thread int tls_nconfig;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
    if (tls_nconfig >= RT_CONFIG_DEPTH)
        return 1;
    rt_config *c = &tls_configs[tls_nconfig++];
    c->grid = gridDim;
    c->block = blockDim;
    c->shmem = sharedMem;
    c->stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (tls_nconfig == 0)
        return rt_ret(cudaErrorMissingConfiguration);
    rt_config *c = &tls_configs[--tls_nconfig];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}

static rt_function *find_by_host(const void *host_fun)
{
    rt_function *f;
    pthread_mutex_lock(&reg_lock);
    for (f = functions; f; f = f->next)
        if (f->host_fun == host_fun)
            break;
    pthread_mutex_unlock(&reg_lock);
    return f;
}

static int known_kernel(const rt_function *k)
{
    rt_function *f;
    pthread_mutex_lock(&reg_lock);
    for (f = functions; f; f = f->next)
        if (f == k)
            break;
    pthread_mutex_unlock(&reg_lock);
    return f != NULL;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (!kernel)
        return rt_ret(cudaErrorInvalidValue);
    rt_function *f = find_by_host(hostFun);
    if (!f)
        return rt_ret(cudaErrorInvalidDeviceFunction);
    *kernel = (cudaKernel_t)(void *)f;
    return cudaSuccess;
}

/* Validate and "run" a launch: kernels do nothing on the simulated device. */
static cudaError_t launch(int known, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, int ptsz)
{
    cudaError_t e = rt_ctx();
    if (e != cudaSuccess)
        return e;
    if (!known)
        return rt_ret(cudaErrorInvalidDeviceFunction);
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads || threads > 1024 || block.z > 64 || grid.y > 65535 ||
        grid.z > 65535 || shmem > 232448)
        return rt_ret(cudaErrorInvalidConfiguration);
    /* on a capturing stream the launch is a node of the capture's graph (an empty
     * node: kernels do nothing here) */
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph g = NULL;
    CUresult r = (ptsz ? rt_drv.cuStreamGetCaptureInfo_ptsz : rt_drv.cuStreamGetCaptureInfo)(stream, &st, NULL, &g,
                                                                                           NULL, NULL, NULL);
    if (r == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        CUgraphNode n;
        r = rt_drv.cuGraphAddEmptyNode(&n, g, NULL, 0);
    } else if (r == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else if (r == CUDA_SUCCESS) {
        r = (ptsz ? rt_drv.cuStreamQuery_ptsz : rt_drv.cuStreamQuery)(stream);
    }
    return rt_ret_cu(r);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    (void)args;
    return launch(known_kernel((rt_function *)(void *)kernel), gridDim, blockDim, sharedMem, stream, 0);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    (void)args;
    return launch(known_kernel((rt_function *)(void *)kernel), gridDim, blockDim, sharedMem, stream, 1);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    (void)args;
    return launch(find_by_host(func) != NULL, gridDim, blockDim, sharedMem, stream, 0);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    (void)args;
    return launch(find_by_host(func) != NULL, gridDim, blockDim, sharedMem, stream, 1);
}
