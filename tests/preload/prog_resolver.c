/* prog_resolver.c — reaches the driver the way the CUDA runtime (shared or static)
 * does: dlopen("libcuda.so.1") + ONE dlsym(handle, "cuGetProcAddress_v2"), then every
 * entry point through that resolver by base name + ABI version (+ PTDS flag). It links
 * against neither libcudart nor libcuda. Stands in for an `nvcc -cudart static`
 * program (docs/cuda-interposition.md).
 *
 *   prog_resolver          run the checks (exact numbers with VT_EXPECT_TRACKED=1)
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

#undef cuGetProcAddress
static int failures, tracked;
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define EXPECT_LIVE(v) do { unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v); \
    if (tracked && got_ != want_) { fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); failures++; } } while (0)

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static gpa_t gpa;

static void *get(const char *name, int ver, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = gpa(name, &p, ver, flags, &st);
    if (r != CUDA_SUCCESS || !p) {
        fprintf(stderr, "cuGetProcAddress(%s, %d, %llu) = %d\n", name, ver, (unsigned long long)flags, (int)r);
        failures++;
    }
    return p;
}

int main(void)
{
    tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
        return 2;
    }
    gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    CHECK(gpa != NULL);
    if (!gpa)
        return 1;
    /* the runtime's self-lookup of the resolver */
    gpa_t self = (gpa_t)get("cuGetProcAddress", 12000, 0);
    CHECK(self != NULL);
    if (self)
        gpa = self;
    /* a name that does not exist: SUCCESS with NULL, or an error — kept as is */
    void *none = (void *)1;
    CUdriverProcAddressQueryResult st;
    CUresult rnone = gpa("cuDoesNotExist", &none, 12000, 0, &st);
    CHECK(rnone != CUDA_SUCCESS || none == NULL);

    CUresult (*init)(unsigned) = (CUresult (*)(unsigned))get("cuInit", 2000, 0);
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult (*)(CUcontext *, CUdevice))get("cuDevicePrimaryCtxRetain", 7000, 0);
    CUresult (*setcur)(CUcontext) = (CUresult (*)(CUcontext))get("cuCtxSetCurrent", 4000, 0);
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))get("cuMemAlloc", 3020, 0);
    CUresult (*fr)(CUdeviceptr) = (CUresult (*)(CUdeviceptr))get("cuMemFree", 3020, 0);
    CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned) =
        (CUresult (*)(CUdeviceptr *, size_t *, size_t, size_t, unsigned))get("cuMemAllocPitch", 3020, 0);
    CUresult (*hostalloc)(void **, size_t, unsigned) = (CUresult (*)(void **, size_t, unsigned))get("cuMemHostAlloc", 2020, 0);
    CUresult (*freehost)(void *) = (CUresult (*)(void *))get("cuMemFreeHost", 2000, 0);
    CUresult (*managed)(CUdeviceptr *, size_t, unsigned) = (CUresult (*)(CUdeviceptr *, size_t, unsigned))get("cuMemAllocManaged", 6000, 0);
    typedef CUresult (*aalloc_t)(CUdeviceptr *, size_t, CUstream);
    typedef CUresult (*afree_t)(CUdeviceptr, CUstream);
    aalloc_t aalloc = (aalloc_t)get("cuMemAllocAsync", 11020, 0);
    aalloc_t aalloc_ptsz = (aalloc_t)get("cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    afree_t afree = (afree_t)get("cuMemFreeAsync", 11020, 0);
    afree_t afree_ptsz = (afree_t)get("cuMemFreeAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
        (CUresult (*)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))get("cuMemAddressReserve", 10020, 0);
    CUresult (*vafree)(CUdeviceptr, size_t) = (CUresult (*)(CUdeviceptr, size_t))get("cuMemAddressFree", 10020, 0);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long) =
        (CUresult (*)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long))get("cuMemCreate", 10020, 0);
    CUresult (*release)(CUmemGenericAllocationHandle) = (CUresult (*)(CUmemGenericAllocationHandle))get("cuMemRelease", 10020, 0);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) =
        (CUresult (*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long))get("cuMemMap", 10020, 0);
    CUresult (*unmap)(CUdeviceptr, size_t) = (CUresult (*)(CUdeviceptr, size_t))get("cuMemUnmap", 10020, 0);
    if (failures)
        return 1;
    CHECK(aalloc != aalloc_ptsz);   /* the PTDS variant is a different function */
    CHECK(afree != afree_ptsz);

    CUcontext ctx;
    CHECK(init(0) == CUDA_SUCCESS);
    CHECK(retain(&ctx, 0) == CUDA_SUCCESS);
    CHECK(setcur(ctx) == CUDA_SUCCESS);

    CUdeviceptr d1, d2, d3, d4, m;
    size_t p = 0;
    void *hp;
    CHECK(alloc(&d1, 1000) == CUDA_SUCCESS);
    CHECK(pitch(&d2, &p, 100, 7, 4) == CUDA_SUCCESS);
    CHECK(hostalloc(&hp, 64, 0) == CUDA_SUCCESS);
    CHECK(managed(&m, 128, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CHECK(aalloc(&d3, 4096, NULL) == CUDA_SUCCESS);
    CHECK(aalloc_ptsz(&d4, 8192, NULL) == CUDA_SUCCESS);
    uint64_t want = 1000 + (uint64_t)p * 7 + 64 + 128 + 4096 + 8192;
    EXPECT_LIVE(want);

    /* VMM: 64 GiB of address space is not memory; cuMemCreate is */
    CUdeviceptr va = 0;
    CHECK(reserve(&va, 64ull << 30, 0, 0, 0) == CUDA_SUCCESS);
    EXPECT_LIVE(want);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle hdl;
    CHECK(create(&hdl, 2 << 20, &prop, 0) == CUDA_SUCCESS);
    EXPECT_LIVE(want + (2 << 20));
    CHECK(map(va, 2 << 20, 0, hdl, 0) == CUDA_SUCCESS);
    CHECK(release(hdl) == CUDA_SUCCESS);     /* still mapped: still memory */
    EXPECT_LIVE(want + (2 << 20));
    if (tracked)
        CHECK(vramtrace_snapshot("resolver") == 0);
    CHECK(unmap(va, 2 << 20) == CUDA_SUCCESS);
    EXPECT_LIVE(want);
    CHECK(vafree(va, 64ull << 30) == CUDA_SUCCESS);

    CHECK(fr(d1) == CUDA_SUCCESS);
    CHECK(fr(d2) == CUDA_SUCCESS);
    CHECK(freehost(hp) == CUDA_SUCCESS);
    CHECK(fr(m) == CUDA_SUCCESS);
    CHECK(afree(d3, NULL) == CUDA_SUCCESS);
    CHECK(afree_ptsz(d4, NULL) == CUDA_SUCCESS);
    EXPECT_LIVE(0);
    /* unknown pointer: forwarded, nothing counted */
    CUresult bogus = fr((CUdeviceptr)0xdead0000ull);
    printf("bogus_free %d\n", (int)bogus);
    EXPECT_LIVE(0);
    if (tracked)
        CHECK(vramtrace_peak_bytes(-1) == want + (2 << 20));
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
