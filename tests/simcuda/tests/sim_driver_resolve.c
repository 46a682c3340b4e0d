/*
 * sim_driver_resolve.c - resolves the simulated driver exactly the way the
 * (static or dynamic) CUDA 13 runtime does: dlopen("libcuda.so.1"), ONE
 * dlsym(handle, "cuGetProcAddress_v2"), then everything through the resolver
 * by base name + ABI version; allocates through the returned cuMemAlloc_v2.
 * Links against neither simulated library.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string.h>

#include "sim_check.h"

static PFN_cuGetProcAddress_v12000 gpa;

static void *get(const char *name, int ver, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = 99;
    CHECK_EQ(gpa(name, &p, ver, flags, &st), CUDA_SUCCESS);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(p != NULL);
    return p;
}

/* Name of the exported symbol at address p (dladdr, not dlsym). */
static const char *symname(void *p)
{
    Dl_info info;
    CHECK(dladdr(p, &info) != 0 && info.dli_sname);
    return info.dli_sname;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(h != NULL);
    gpa = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
    CHECK(gpa != NULL);

    /* self-lookup: the resolver hands out itself (12000) and the 4-arg v1 (11030) */
    PFN_cuGetProcAddress_v12000 self = get("cuGetProcAddress", 12000, 0);
    CHECK(strcmp(symname((void *)self), "cuGetProcAddress_v2") == 0);
    CHECK(strcmp(symname(get("cuGetProcAddress", 11030, 0)), "cuGetProcAddress") == 0);
    gpa = self;

    /* base name + ABI version picks the versioned symbol */
    CHECK(strcmp(symname(get("cuMemAlloc", 3020, 0)), "cuMemAlloc_v2") == 0);
    CHECK(strcmp(symname(get("cuMemAlloc", 13000, 0)), "cuMemAlloc_v2") == 0);
    CHECK(strcmp(symname(get("cuCtxCreate", 12050, 0)), "cuCtxCreate_v4") == 0);
    CHECK(strcmp(symname(get("cuDevicePrimaryCtxRelease", 11000, 0)), "cuDevicePrimaryCtxRelease_v2") == 0);
    /* per-thread default stream flag */
    CHECK(strcmp(symname(get("cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)),
                 "cuMemAllocAsync_ptsz") == 0);
    CHECK(strcmp(symname(get("cuMemAllocAsync", 11020, 0)), "cuMemAllocAsync") == 0);
    CHECK(strcmp(symname(get("cuMemcpyHtoD", 3020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)),
                 "cuMemcpyHtoD_v2_ptds") == 0);
    /* no per-thread variant: the legacy one */
    CHECK(strcmp(symname(get("cuMemFree", 3020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)), "cuMemFree_v2") == 0);

    /* unknown names: SUCCESS + NULL; too-new version: INVALID_VALUE; too-old: NULL */
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = 99;
    CHECK_EQ(gpa("cuNoSuchFunction", &p, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK_EQ(gpa("", &p, 0, 0, NULL), CUDA_SUCCESS);
    CHECK_EQ(gpa("cuMemAlloc", &p, 99000, 0, &st), CUDA_ERROR_INVALID_VALUE);
    p = (void *)1;
    CHECK_EQ(gpa("cuMemCreate", &p, 9000, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

    PFN_cuInit_v2000 init = get("cuInit", 2000, 0);
    PFN_cuMemAlloc_v3020 alloc = get("cuMemAlloc", 3020, 0);
    PFN_cuMemFree_v3020 mfree = get("cuMemFree", 3020, 0);
    PFN_cuMemGetInfo_v3020 info = get("cuMemGetInfo", 3020, 0);
    PFN_cuDevicePrimaryCtxRetain_v7000 retain = get("cuDevicePrimaryCtxRetain", 7000, 0);
    PFN_cuCtxSetCurrent_v4000 setcur = get("cuCtxSetCurrent", 4000, 0);
    PFN_cuMemcpyHtoD_v3020 htod = get("cuMemcpyHtoD", 3020, 0);
    PFN_cuMemcpyDtoH_v3020 dtoh = get("cuMemcpyDtoH", 3020, 0);
    PFN_cuDevicePrimaryCtxRelease_v11000 release = get("cuDevicePrimaryCtxRelease", 11000, 0);

    CUdeviceptr d = 0;
    CHECK_EQ(alloc(&d, 1024), CUDA_ERROR_NOT_INITIALIZED); /* before cuInit */
    CHECK_EQ(init(0), CUDA_SUCCESS);
    CHECK_EQ(alloc(&d, 1024), CUDA_ERROR_INVALID_CONTEXT); /* no current context */
    CUcontext ctx;
    CHECK_EQ(retain(&ctx, 0), CUDA_SUCCESS);
    CHECK_EQ(setcur(ctx), CUDA_SUCCESS);

    size_t free0, total, free1;
    CHECK_EQ(info(&free0, &total), CUDA_SUCCESS);
    CHECK_EQ(total, 1024 * MiB);                    /* SIMCUDA_MEM=1GiB */
    CHECK_EQ(free0, total - 64 * MiB);              /* fixed context overhead */
    CHECK_EQ(alloc(&d, 3 * MiB + 1), CUDA_SUCCESS); /* >= 1 MiB: 2 MiB granularity */
    CHECK(d % (2 * MiB) == 0);
    CHECK_EQ(info(&free1, &total), CUDA_SUCCESS);
    CHECK_EQ(free0 - free1, 4 * MiB);

    unsigned char in[4096], out[4096];
    for (int i = 0; i < 4096; i++)
        in[i] = (unsigned char)(i * 7);
    CHECK_EQ(htod(d + 100, in, sizeof in), CUDA_SUCCESS);
    memset(out, 0, sizeof out);
    CHECK_EQ(dtoh(out, d + 100, sizeof out), CUDA_SUCCESS);
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_EQ(dtoh(out, d + 3 * MiB, 4096), CUDA_ERROR_INVALID_VALUE); /* past the requested size */

    CHECK_EQ(mfree(d), CUDA_SUCCESS);
    CHECK_EQ(mfree(d), CUDA_ERROR_INVALID_VALUE); /* double free */
    CHECK_EQ(info(&free1, &total), CUDA_SUCCESS);
    CHECK_EQ(free1, free0);
    CHECK_EQ(release(0), CUDA_SUCCESS);
    printf("driver resolve: ok\n");
    return 0;
}
