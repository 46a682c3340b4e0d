/* prog_arrays.c — CUDA arrays and mipmapped arrays through the SHARED runtime and the
 * driver (simulated libcudart.so.13 / libcuda.so.1), run by the preload tests with and
 * without LD_PRELOAD=libvramtrace.so.
 *
 *   prog_arrays SCENARIO      (runtime | driver | reset | leak)
 *
 * Every CUDA call whose result matters prints "label result errno" on stdout (errno
 * set to 4242 before it: the preload must leave it so), so that check_arrays.py can
 * compare a run with the preload to one without. With VT_EXPECT_TRACKED=1 the tracer's
 * live bytes are asserted exactly after each create, free and reset (client API,
 * include/vramtrace.h): an array counts the driver's memory requirements, or, when
 * SIMCUDA_ARRAY_REQUIREMENTS=strict makes the simulated driver answer as a real one
 * does for ordinary arrays (no size), its logical size. Without the preload the same
 * scenario checks the simulated device: sizes (rows padded to 512 bytes, the span
 * rounding of docs/simcuda.md), free memory, copies through arrays, texture and
 * surface objects. Exit 0 = every check held.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* cudaMemcpyToArray is tested */

static int tracked, strict, failures;

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define EXPECT_LIVE(v) do { unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v); \
    if (tracked && got_ != want_) { fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); failures++; } } while (0)
#define SENTINEL 4242
/* Runs call with errno = SENTINEL, prints label, result and errno, checks the result. */
#define CALL(label, call, want) do {                                                        \
        errno = SENTINEL;                                                                   \
        int r_ = (int)(call), e_ = errno;                                                   \
        printf("%s %d errno %d\n", label, r_, e_);                                          \
        if (r_ != (int)(want)) {                                                            \
            fprintf(stderr, "%s:%d: %s = %d, expected %d\n", __FILE__, __LINE__, #call, r_, \
                    (int)(want));                                                           \
            failures++;                                                                     \
        }                                                                                   \
        CHECK(e_ == SENTINEL);                                                              \
    } while (0)

static size_t free_now(void)
{
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t) == cudaSuccess);
    return f;
}

/* What the tracer must count for an array: the simulated driver's size (span, pinned
 * here to the layout of docs/simcuda.md) or, in strict mode, the logical size. */
static uint64_t counted(uint64_t span, uint64_t logical)
{
    return strict ? logical : span;
}

/* The driver's answer for a runtime array, checked against the layout; in strict mode
 * the real driver's answer for an ordinary array: invalid value. */
static void expect_req(const char *label, cudaArray_t a, uint64_t span)
{
    struct cudaArrayMemoryRequirements q;
    memset(&q, 0, sizeof q);
    cudaError_t r = cudaArrayGetMemoryRequirements(&q, a, 0);
    printf("%s_req %d size %llu\n", label, (int)r, (unsigned long long)q.size);
    CHECK(strict ? r == cudaErrorInvalidValue : r == cudaSuccess && q.size == span);
    cudaGetLastError();
}

/* ---- runtime: create, copy, objects, errors, free ---- */
static void scenario_runtime(void)
{
    struct cudaChannelFormatDesc f1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    struct cudaChannelFormatDesc u8 = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    struct cudaChannelFormatDesc f2 = cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindFloat);
    struct cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    struct cudaChannelFormatDesc bad3 = cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindUnsigned);
    CHECK(f1.x == 32 && f1.y == 0 && f1.f == cudaChannelFormatKindFloat);
    CALL("init", cudaFree(NULL), cudaSuccess);
    EXPECT_LIVE(0);
    size_t free0 = free_now();
    uint64_t want = 0;

    /* 2D float 1000 x 100: rows 4000 -> 4096 bytes; 409600 placed (logical 400000) */
    cudaArray_t a2d = NULL;
    CALL("malloc_2d", cudaMallocArray(&a2d, &f1, 1000, 100, 0), cudaSuccess);
    want += counted(409600, 400000);
    EXPECT_LIVE(want);
    expect_req("a2d", a2d, 409600);
    CHECK(free0 - free_now() == 409600);

    /* 1D uchar 1000 (height 0), surface load/store: one row of 1024 bytes */
    cudaArray_t a1d = NULL;
    CALL("malloc_1d", cudaMallocArray(&a1d, &u8, 1000, 0, cudaArraySurfaceLoadStore), cudaSuccess);
    want += counted(1024, 1000);
    EXPECT_LIVE(want);
    expect_req("a1d", a1d, 1024);

    /* layered float2 300 x 200, 4 layers: rows 2400 -> 2560; 2048000 -> 2 MiB placed */
    cudaArray_t a3d = NULL;
    struct cudaExtent e3 = {300, 200, 4};
    CALL("malloc_3d", cudaMalloc3DArray(&a3d, &f2, e3, cudaArrayLayered), cudaSuccess);
    want += counted(2u << 20, 1920000);
    EXPECT_LIVE(want);
    expect_req("a3d", a3d, 2u << 20);
    struct cudaChannelFormatDesc gd;
    struct cudaExtent ge;
    unsigned gf = 0;
    CALL("info_3d", cudaArrayGetInfo(&gd, &ge, &gf, a3d), cudaSuccess);
    CHECK(gd.x == 32 && gd.y == 32 && gd.z == 0 && gd.f == cudaChannelFormatKindFloat);
    CHECK(ge.width == 300 && ge.height == 200 && ge.depth == 4 && gf == cudaArrayLayered);
    CHECK(free0 - free_now() == 409600 + 1024 + (2u << 20));

    /* mipmapped uchar4 256 x 256, 9 levels: 392704 placed (logical 349524) */
    cudaMipmappedArray_t mip = NULL;
    struct cudaExtent em = {256, 256, 0};
    CALL("malloc_mip", cudaMallocMipmappedArray(&mip, &u4, em, 9, 0), cudaSuccess);
    want += counted(392704, 349524);
    EXPECT_LIVE(want);
    struct cudaArrayMemoryRequirements mq;
    memset(&mq, 0, sizeof mq);
    cudaError_t mr = cudaMipmappedArrayGetMemoryRequirements(&mq, mip, 0);
    printf("mip_req %d size %llu\n", (int)mr, (unsigned long long)mq.size);
    CHECK(strict ? mr == cudaErrorInvalidValue : mr == cudaSuccess && mq.size == 392704);
    cudaGetLastError();
    cudaArray_t lvl = NULL;
    CALL("mip_level_8", cudaGetMipmappedArrayLevel(&lvl, mip, 8), cudaSuccess);
    CALL("mip_level_9", cudaGetMipmappedArrayLevel(&lvl, mip, 9), cudaErrorInvalidValue);
    CHECK(free0 - free_now() == 409600 + 1024 + (2u << 20) + 392704);

    /* copies through the arrays keep the bytes */
    float *img = malloc(1000 * 100 * sizeof(float)), *back = calloc(1000 * 100, sizeof(float));
    for (int i = 0; i < 1000 * 100; i++)
        img[i] = (float)i * 0.5f;
    CALL("to_array_2d", cudaMemcpy2DToArray(a2d, 0, 0, img, 4000, 4000, 100, cudaMemcpyHostToDevice), cudaSuccess);
    CALL("from_array_2d", cudaMemcpy2DFromArray(back, 4000, a2d, 0, 0, 4000, 100, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(memcmp(img, back, 400000) == 0);
    memset(back, 0, 400000);
    CALL("to_array_linear", cudaMemcpyToArray(a2d, 8, 2, img, 40000, cudaMemcpyHostToDevice), cudaSuccess);
    CALL("from_array_linear", cudaMemcpyFromArray(back, a2d, 8, 2, 40000, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(memcmp(img, back, 40000) == 0);
    CALL("to_array_past_end", cudaMemcpy2DToArray(a2d, 0, 90, img, 4000, 4000, 20, cudaMemcpyHostToDevice),
         cudaErrorInvalidValue);
    CALL("to_array_wrong_kind", cudaMemcpy2DToArray(a2d, 0, 0, img, 4000, 4000, 1, cudaMemcpyDeviceToHost),
         cudaErrorInvalidMemcpyDirection);
    struct cudaMemcpy3DParms p3;
    memset(&p3, 0, sizeof p3);
    p3.srcPtr.ptr = img;
    p3.srcPtr.pitch = 300 * 8;
    p3.srcPtr.xsize = 300;
    p3.srcPtr.ysize = 40;
    p3.dstArray = a3d;
    p3.extent.width = 300;   /* elements of the array */
    p3.extent.height = 40;
    p3.extent.depth = 4;
    p3.kind = cudaMemcpyHostToDevice;
    CALL("to_array_3d", cudaMemcpy3D(&p3), cudaSuccess);
    memset(&p3, 0, sizeof p3);
    memset(back, 0, 400000);
    p3.srcArray = a3d;
    p3.dstPtr.ptr = back;
    p3.dstPtr.pitch = 300 * 8;
    p3.dstPtr.ysize = 40;
    p3.extent.width = 300;
    p3.extent.height = 40;
    p3.extent.depth = 4;
    p3.kind = cudaMemcpyDeviceToHost;
    CALL("from_array_3d", cudaMemcpy3D(&p3), cudaSuccess);
    CHECK(memcmp(img, back, 300 * 8 * 40 * 4) == 0);
    free(img);
    free(back);

    /* texture and surface objects over the arrays */
    struct cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a2d;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex = 0;
    CALL("tex_create", cudaCreateTextureObject(&tex, &res, &td, NULL), cudaSuccess);
    cudaSurfaceObject_t surf = 0;
    CALL("surf_no_ldst", cudaCreateSurfaceObject(&surf, &res), cudaErrorInvalidValue);
    res.res.array.array = a1d;
    CALL("surf_create", cudaCreateSurfaceObject(&surf, &res), cudaSuccess);
    CALL("surf_destroy", cudaDestroySurfaceObject(surf), cudaSuccess);
    CALL("tex_destroy", cudaDestroyTextureObject(tex), cudaSuccess);
    cudaGetLastError();
    EXPECT_LIVE(want);

    /* failures: counted, nothing recorded; a failed free of a live array's handle
     * (as the wrong type) leaves its record */
    cudaArray_t x = NULL;
    CALL("malloc_width0", cudaMallocArray(&x, &f1, 0, 10, 0), cudaErrorInvalidValue);
    CALL("malloc_3channels", cudaMallocArray(&x, &bad3, 10, 10, 0), cudaErrorInvalidValue);
    struct cudaChannelFormatDesc f4 = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
    CALL("malloc_oom", cudaMallocArray(&x, &f4, 1 << 20, 1 << 20, 0), cudaErrorMemoryAllocation);
    CALL("free_unknown", cudaFreeArray((cudaArray_t)&x), cudaErrorInvalidResourceHandle);
    CALL("free_array_as_mip", cudaFreeMipmappedArray((cudaMipmappedArray_t)a2d), cudaErrorInvalidResourceHandle);
    CALL("free_mip_as_array", cudaFreeArray((cudaArray_t)mip), cudaErrorInvalidResourceHandle);
    CALL("free_level", cuArrayDestroy((CUarray)lvl), CUDA_ERROR_INVALID_VALUE);
    CALL("free_null", cudaFreeArray(NULL), cudaSuccess);
    cudaGetLastError();
    EXPECT_LIVE(want);

    /* frees through the other kind's API fail and take nothing away: an array handle
     * given to cudaFree, a device pointer given to cudaFreeArray */
    void *dp = NULL;
    CALL("malloc_cross", cudaMalloc(&dp, 1 << 20), cudaSuccess);
    CALL("cudaFree_of_array", cudaFree((void *)a2d), cudaErrorInvalidValue);
    cudaGetLastError();
    CALL("cudaFreeArray_of_pointer", cudaFreeArray((cudaArray_t)dp), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    EXPECT_LIVE(want + (1 << 20));
    CALL("free_cross", cudaFree(dp), cudaSuccess);
    EXPECT_LIVE(want);

    /* frees: one record each, whichever layer frees it */
    CALL("free_2d", cudaFreeArray(a2d), cudaSuccess);
    want -= counted(409600, 400000);
    EXPECT_LIVE(want);
    CALL("free_2d_again", cudaFreeArray(a2d), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    EXPECT_LIVE(want);
    CALL("free_1d_drv", cuArrayDestroy((CUarray)a1d), CUDA_SUCCESS);
    want -= counted(1024, 1000);
    EXPECT_LIVE(want);
    CALL("free_3d", cudaFreeArray(a3d), cudaSuccess);
    want -= counted(2u << 20, 1920000);
    EXPECT_LIVE(want);
    CALL("free_mip", cudaFreeMipmappedArray(mip), cudaSuccess);
    EXPECT_LIVE(0);
    CHECK(free_now() == free0);
    if (tracked)
        CHECK(vramtrace_peak_bytes(-1) == counted(409600 + 1024 + (2u << 20) + 392704,
                                                  400000 + 1000 + 1920000 + 349524) + (1 << 20));
    printf("runtime peak %llu\n", (unsigned long long)counted(409600 + 1024 + (2u << 20) + 392704,
                                                               400000 + 1000 + 1920000 + 349524) + (1 << 20));
}

/* ---- driver: create, describe, free (also through the runtime) ---- */
static void scenario_driver(void)
{
    CALL("init", cudaFree(NULL), cudaSuccess);   /* the primary context, current for the driver */
    size_t free0 = free_now();
    uint64_t want = 0;
    /* ushort2 100 x 64: rows 400 -> 512; 32768 (logical 25600) */
    CUDA_ARRAY_DESCRIPTOR d2 = {100, 64, CU_AD_FORMAT_UNSIGNED_INT16, 2};
    CUarray a = NULL;
    CALL("create_2d", cuArrayCreate(&a, &d2), CUDA_SUCCESS);
    want += counted(32768, 25600);
    EXPECT_LIVE(want);
    CUDA_ARRAY_DESCRIPTOR g2;
    CALL("describe_2d", cuArrayGetDescriptor(&g2, a), CUDA_SUCCESS);
    CHECK(g2.Width == 100 && g2.Height == 64 && g2.NumChannels == 2);
    /* float 64^3: rows 256 -> 512; exactly 2 MiB (logical 1 MiB) */
    CUDA_ARRAY3D_DESCRIPTOR d3 = {64, 64, 64, CU_AD_FORMAT_FLOAT, 1, 0};
    CUarray b = NULL;
    CALL("create_3d", cuArray3DCreate(&b, &d3), CUDA_SUCCESS);
    want += counted(2u << 20, 1u << 20);
    EXPECT_LIVE(want);
    CUDA_ARRAY3D_DESCRIPTOR g3;
    CALL("describe_3d", cuArray3DGetDescriptor(&g3, b), CUDA_SUCCESS);
    CALL("describe_3d_as_2d", cuArrayGetDescriptor(&g2, b), CUDA_ERROR_INVALID_VALUE);
    /* 1D layered uchar 1000, 3 layers: one 1024-byte row a layer, 3072 (logical 3000) */
    CUDA_ARRAY3D_DESCRIPTOR dl = {1000, 0, 3, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED};
    CUarray l1 = NULL;
    CALL("create_1d_layered", cuArray3DCreate(&l1, &dl), CUDA_SUCCESS);
    EXPECT_LIVE(want + counted(3072, 3000));
    CALL("destroy_1d_layered", cuArrayDestroy(l1), CUDA_SUCCESS);
    EXPECT_LIVE(want);
    dl.Flags = 0;
    CALL("create_1d_with_depth", cuArray3DCreate(&l1, &dl), CUDA_ERROR_INVALID_VALUE);
    /* float4 64 x 32, 100 levels asked, 7 made: 49152 (logical 43696) */
    CUDA_ARRAY3D_DESCRIPTOR dm = {64, 32, 0, CU_AD_FORMAT_FLOAT, 4, 0};
    CUmipmappedArray m = NULL;
    CALL("create_mip", cuMipmappedArrayCreate(&m, &dm, 100), CUDA_SUCCESS);
    want += counted(49152, 43696);
    EXPECT_LIVE(want);
    CUarray l6 = NULL, l7 = NULL;
    CALL("level_6", cuMipmappedArrayGetLevel(&l6, m, 6), CUDA_SUCCESS);
    CALL("level_7", cuMipmappedArrayGetLevel(&l7, m, 7), CUDA_ERROR_INVALID_VALUE);
    CUDA_ARRAY_MEMORY_REQUIREMENTS q;
    memset(&q, 0, sizeof q);
    CUresult qr = cuMipmappedArrayGetMemoryRequirements(&q, m, 0);
    printf("mip_req %d size %llu\n", (int)qr, (unsigned long long)q.size);
    CHECK(strict ? qr == CUDA_ERROR_INVALID_VALUE : qr == CUDA_SUCCESS && q.size == 49152);
    CALL("req_bad_handle", cuArrayGetMemoryRequirements(&q, (CUarray)&q, 0), CUDA_ERROR_INVALID_HANDLE);
    CHECK(free0 - free_now() == 32768 + (2u << 20) + 49152);

    /* deferred mapping: a layout, no memory (0 bytes counted); the driver sizes it
     * even in strict mode, as a real one does */
    CUDA_ARRAY3D_DESCRIPTOR dd = {64, 64, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_DEFERRED_MAPPING};
    CUarray def = NULL;
    CALL("create_deferred", cuArray3DCreate(&def, &dd), CUDA_SUCCESS);
    EXPECT_LIVE(want);
    CHECK(free0 - free_now() == 32768 + (2u << 20) + 49152);
    memset(&q, 0, sizeof q);
    CALL("req_deferred", cuArrayGetMemoryRequirements(&q, def, 0), CUDA_SUCCESS);
    CHECK(q.size == 32768);
    float row[64] = {0};
    CUDA_MEMCPY2D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_HOST;
    cp.srcHost = row;
    cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    cp.dstArray = def;
    cp.WidthInBytes = sizeof row;
    cp.Height = 1;
    CALL("copy_to_deferred", cuMemcpy2D(&cp), CUDA_ERROR_INVALID_VALUE);
    CALL("destroy_deferred", cuArrayDestroy(def), CUDA_SUCCESS);
    EXPECT_LIVE(want);

    /* failures */
    CUarray x = NULL;
    CALL("create_null_desc", cuArrayCreate(&x, NULL), CUDA_ERROR_INVALID_VALUE);
    CUDA_ARRAY3D_DESCRIPTOR ds = {64, 64, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SPARSE};
    CALL("create_sparse", cuArray3DCreate(&x, &ds), CUDA_ERROR_NOT_SUPPORTED);
    CUDA_ARRAY3D_DESCRIPTOR dc = {64, 32, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP};
    CALL("create_cubemap_not_square", cuArray3DCreate(&x, &dc), CUDA_ERROR_INVALID_VALUE);
    CALL("destroy_unknown", cuArrayDestroy((CUarray)&x), CUDA_ERROR_INVALID_HANDLE);
    CALL("destroy_mip_as_array", cuArrayDestroy((CUarray)m), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_LIVE(want);

    /* frees, across the layers */
    CALL("free_2d_rt", cudaFreeArray((cudaArray_t)a), cudaSuccess);
    want -= counted(32768, 25600);
    EXPECT_LIVE(want);
    CALL("destroy_3d", cuArrayDestroy(b), CUDA_SUCCESS);
    want -= counted(2u << 20, 1u << 20);
    EXPECT_LIVE(want);
    CALL("destroy_3d_again", cuArrayDestroy(b), CUDA_ERROR_INVALID_HANDLE);
    CALL("destroy_mip", cuMipmappedArrayDestroy(m), CUDA_SUCCESS);
    EXPECT_LIVE(0);
    CHECK(free_now() == free0);
    cudaGetLastError();
}

/* ---- a device reset frees every array of the device's primary context ---- */
static void scenario_reset(void)
{
    struct cudaChannelFormatDesc f1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t a = NULL, b = NULL;
    cudaMipmappedArray_t m = NULL;
    void *d = NULL;
    CALL("malloc_a", cudaMallocArray(&a, &f1, 1000, 100, 0), cudaSuccess);
    struct cudaExtent e = {256, 256, 0};
    CALL("malloc_mip", cudaMallocMipmappedArray(&m, &f1, e, 0, 0), cudaSuccess); /* 0 levels: 1 */
    CUDA_ARRAY_DESCRIPTOR d2 = {100, 64, CU_AD_FORMAT_UNSIGNED_INT16, 2};
    CALL("create_b", cuArrayCreate((CUarray *)&b, &d2), CUDA_SUCCESS);
    CALL("malloc_device", cudaMalloc(&d, 5000), cudaSuccess);
    /* mip: 256 floats = 1024 bytes a row, 262144 (logical 262144) */
    EXPECT_LIVE(counted(409600, 400000) + 262144 + counted(32768, 25600) + 5000);
    CALL("reset", cudaDeviceReset(), cudaSuccess);
    EXPECT_LIVE(0);
    CALL("free_after_reset", cudaFreeArray(a), cudaErrorInvalidResourceHandle);
    CALL("destroy_after_reset", cuArrayDestroy((CUarray)b), CUDA_ERROR_INVALID_HANDLE);
    cudaGetLastError();
    EXPECT_LIVE(0);
    CALL("malloc_again", cudaMallocArray(&a, &f1, 1000, 100, 0), cudaSuccess);
    EXPECT_LIVE(counted(409600, 400000));
    CALL("free_again", cudaFreeArray(a), cudaSuccess);
    EXPECT_LIVE(0);
}

/* exported (-rdynamic) so that the report can name it: one array leaked a step */
__attribute__((noinline, visibility("default"))) void leaky_array_step(cudaArray_t *out);
__attribute__((noinline, visibility("default"))) void leaky_array_step(cudaArray_t *out)
{
    struct cudaChannelFormatDesc f1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t tmp = NULL;
    struct cudaExtent e = {64, 64, 64};
    CHECK(cudaMallocArray(out, &f1, 1000, 100, 0) == cudaSuccess);   /* leaked */
    CHECK(cudaMalloc3DArray(&tmp, &f1, e, 0) == cudaSuccess);        /* temporary */
    CHECK(cudaFreeArray(tmp) == cudaSuccess);
}

static void scenario_leak(void)
{
    cudaArray_t leaked[20];
    for (int s = 0; s < 20; s++) {
        leaky_array_step(&leaked[s]);
        vramtrace_step();
        usleep(10000);              /* let the writer close each step on its own */
    }
    EXPECT_LIVE(20 * counted(409600, 400000));
    printf("leak_bytes_per_step %llu\n", (unsigned long long)counted(409600, 400000));
}

int main(int argc, char **argv)
{
    tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    strict = getenv("SIMCUDA_ARRAY_REQUIREMENTS") && !strcmp(getenv("SIMCUDA_ARRAY_REQUIREMENTS"), "strict");
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "runtime")) scenario_runtime();
    else if (!strcmp(s, "driver")) scenario_driver();
    else if (!strcmp(s, "reset")) scenario_reset();
    else if (!strcmp(s, "leak")) scenario_leak();
    else {
        fprintf(stderr, "usage: %s runtime|driver|reset|leak\n", argv[0]);
        return 2;
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
