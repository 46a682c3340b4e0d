/*
 * sim_runtime_api.c - the wider runtime surface on the simulated device:
 * versions, devices (SIMCUDA_DEVICES=2), error names, driver entry points
 * (answered by the runtime's self-looked-up cuGetProcAddress), pitch/3D,
 * managed and pinned memory, pointer attributes, streams and events, and a
 * driver-created context whose destruction frees its allocations.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <string.h>

#include "sim_check.h"

/* cudaGetDriverEntryPoint is deprecated in CUDA 13 but still exported and used. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char *symname(void *p)
{
    Dl_info info;
    CHECK(dladdr(p, &info) != 0 && info.dli_sname);
    return info.dli_sname;
}

int main(void)
{
    int v = 0;
    CHECK_EQ(cudaRuntimeGetVersion(&v), cudaSuccess);
    CHECK_EQ(v, 13000);
    CHECK_EQ(cudaDriverGetVersion(&v), cudaSuccess);
    CHECK_EQ(v, 13000);
    CHECK_EQ(cudaGetDeviceCount(&v), cudaSuccess);
    CHECK_EQ(v, 2);
    CHECK(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
    CHECK(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
    CHECK(strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code") == 0);
    CHECK_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
    CHECK_EQ(cudaGetLastError(), cudaErrorInvalidDevice);

    /* device 1 has its own capacity and accounting */
    size_t f0, f1, total;
    CHECK_EQ(cudaMemGetInfo(&f0, &total), cudaSuccess);
    CHECK_EQ(cudaSetDevice(1), cudaSuccess);
    CHECK_EQ(cudaGetDevice(&v), cudaSuccess);
    CHECK_EQ(v, 1);
    void *on1 = NULL;
    CHECK_EQ(cudaMalloc(&on1, 10 * MiB), cudaSuccess);
    CHECK_EQ(cudaMemGetInfo(&f1, &total), cudaSuccess);
    CHECK_EQ(f0 - f1, 10 * MiB);
    struct cudaPointerAttributes pa;
    CHECK_EQ(cudaPointerGetAttributes(&pa, on1), cudaSuccess);
    CHECK_EQ(pa.type, cudaMemoryTypeDevice);
    CHECK_EQ(pa.device, 1);
    CHECK_EQ(cudaFree(on1), cudaSuccess);
    CHECK_EQ(cudaSetDevice(0), cudaSuccess);

    /* driver entry points */
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult st;
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &st), cudaSuccess);
    CHECK_EQ(st, cudaDriverEntryPointSuccess);
    CHECK(strcmp(symname(fn), "cuMemAlloc_v2") == 0);
    CHECK_EQ(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000, cudaEnablePerThreadDefaultStream, &st),
             cudaSuccess);
    CHECK(strcmp(symname(fn), "cuMemAllocAsync_ptsz") == 0);
    CHECK_EQ(cudaGetDriverEntryPoint("cuNoSuchThing", &fn, cudaEnableDefault, &st), cudaSuccess);
    CHECK(fn == NULL);
    CHECK_EQ(st, cudaDriverEntryPointSymbolNotFound);

    /* pitch, 3D, managed, pinned */
    void *p = NULL;
    size_t pitch = 0;
    CHECK_EQ(cudaMallocPitch(&p, &pitch, 1000, 10), cudaSuccess);
    CHECK_EQ(pitch, 1024);
    CHECK_EQ(cudaFree(p), cudaSuccess);
    struct cudaPitchedPtr pp;
    struct cudaExtent ext = {100, 4, 3};
    CHECK_EQ(cudaMalloc3D(&pp, ext), cudaSuccess);
    CHECK_EQ(pp.pitch, 512);
    CHECK_EQ(pp.ysize, 4);
    CHECK_EQ(cudaFree(pp.ptr), cudaSuccess);
    int *m = NULL;
    CHECK_EQ(cudaMallocManaged((void **)&m, 4096, cudaMemAttachGlobal), cudaSuccess);
    m[1023] = 42; /* host-accessible */
    CHECK_EQ(cudaPointerGetAttributes(&pa, m), cudaSuccess);
    CHECK_EQ(pa.type, cudaMemoryTypeManaged);
    CHECK_EQ(cudaFree(m), cudaSuccess);
    void *h = NULL;
    CHECK_EQ(cudaHostAlloc(&h, 8192, cudaHostAllocMapped), cudaSuccess);
    void *hd = NULL;
    CHECK_EQ(cudaHostGetDevicePointer(&hd, h, 0), cudaSuccess);
    CHECK(hd == h);
    CHECK_EQ(cudaFree(h), cudaErrorInvalidValue); /* pinned host memory is not cudaFree'd */
    CHECK_EQ(cudaFreeHost(h), cudaSuccess);
    int local = 0;
    CHECK_EQ(cudaPointerGetAttributes(&pa, &local), cudaSuccess);
    CHECK_EQ(pa.type, cudaMemoryTypeUnregistered);

    /* copies validate device pointers; bad direction is reported */
    char buf[64] = {0};
    CHECK_EQ(cudaMemcpy(buf, (void *)0x10, 8, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CHECK_EQ(cudaMemcpy(buf, buf + 8, 8, (enum cudaMemcpyKind)17), cudaErrorInvalidMemcpyDirection);

    /* streams and events */
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CHECK_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    CHECK_EQ(cudaEventCreate(&e0), cudaSuccess);
    CHECK_EQ(cudaEventCreate(&e1), cudaSuccess);
    CHECK_EQ(cudaEventRecord(e0, s), cudaSuccess);
    void *d = NULL;
    CHECK_EQ(cudaMallocAsync(&d, 4096, s), cudaSuccess);
    CHECK_EQ(cudaMemsetAsync(d, 7, 4096, s), cudaSuccess);
    CHECK_EQ(cudaMemcpyAsync(buf, d, sizeof buf, cudaMemcpyDeviceToHost, s), cudaSuccess);
    CHECK_EQ(buf[63], 7);
    CHECK_EQ(cudaFreeAsync(d, s), cudaSuccess);
    CHECK_EQ(cudaEventRecord(e1, s), cudaSuccess);
    CHECK_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float ms = -1;
    CHECK_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
    CHECK(ms >= 0);
    CHECK_EQ(cudaStreamQuery(s), cudaSuccess);
    CHECK_EQ(cudaEventDestroy(e0), cudaSuccess);
    CHECK_EQ(cudaEventDestroy(e1), cudaSuccess);
    CHECK_EQ(cudaStreamDestroy(s), cudaSuccess);

    struct cudaDeviceProp prop;
    CHECK_EQ(cudaGetDeviceProperties(&prop, 1), cudaSuccess);
    CHECK_EQ(prop.totalGlobalMem, total);
    CHECK_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, 0), cudaSuccess);
    CHECK_EQ(v, 1);

    /* a created context owns its allocations; destroying it frees them */
    PFN_cuCtxCreate_v12050 ctx_create;
    PFN_cuCtxDestroy_v4000 ctx_destroy;
    PFN_cuMemAlloc_v3020 mem_alloc;
    PFN_cuMemFree_v3020 mem_free;
    CHECK_EQ(cudaGetDriverEntryPoint("cuCtxCreate", (void **)&ctx_create, cudaEnableDefault, NULL), cudaSuccess);
    CHECK_EQ(cudaGetDriverEntryPoint("cuCtxDestroy", (void **)&ctx_destroy, cudaEnableDefault, NULL), cudaSuccess);
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAlloc", (void **)&mem_alloc, cudaEnableDefault, NULL), cudaSuccess);
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemFree", (void **)&mem_free, cudaEnableDefault, NULL), cudaSuccess);
    CUcontext c;
    CHECK_EQ(ctx_create(&c, NULL, 0, 0), CUDA_SUCCESS); /* pushed: now current */
    CUdeviceptr dp;
    CHECK_EQ(mem_alloc(&dp, 20 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cudaMemGetInfo(&f1, &total), cudaSuccess); /* the runtime uses the current context */
    CHECK_EQ(f0 - f1, 20 * MiB);
    CHECK_EQ(ctx_destroy(c), CUDA_SUCCESS);
    /* destroy popped c: the runtime's primary context is current again, and it
       does not own dp, which the destroy freed */
    CHECK_EQ(mem_free(dp), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cudaMemGetInfo(&f1, &total), cudaSuccess);
    CHECK_EQ(f1, f0);
    CHECK_EQ(cudaFree((void *)(uintptr_t)dp), cudaErrorInvalidValue);
    printf("runtime api: ok\n");
    return 0;
}
