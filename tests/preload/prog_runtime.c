/* prog_runtime.c — a CUDA program on the SHARED runtime (simulated libcudart.so.13),
 * run by the preload tests with and without LD_PRELOAD=libvramtrace.so.
 *
 *   prog_runtime SCENARIO
 *
 * With VT_EXPECT_TRACKED=1 each scenario asserts the tracer's numbers exactly through
 * the client API (vramtrace_live_bytes etc., include/vramtrace.h); without it the
 * scenario only runs (the API then returns 0). Exit 0 = every check held.
 * Scenarios: kinds churn leak reset pool threads errors entry snap exit fork loop vmm
 * heldsnap hostreg privpool hostregflag exitworkers leakstatic drvpool multicast
 * stepleaks.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* cudaGetDriverEntryPoint is tested */

/* _ptsz entry points exported by libcudart (declared by cuda_runtime_api.h only in
 * per-thread-default-stream builds). */
extern cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
extern cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);
extern cudaError_t cudaMallocFromPoolAsync_ptsz(void **, size_t, cudaMemPool_t, cudaStream_t);

static int tracked;
static int failures;

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define OK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)e_); failures++; } } while (0)
#define EXPECT_LIVE(v) do { unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v); \
    if (tracked && got_ != want_) { fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); failures++; } } while (0)

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

/* Every runtime allocator once: exactly one record each. */
static void scenario_kinds(void)
{
    void *p[10];
    size_t pitch = 0;
    struct cudaPitchedPtr pp;
    cudaMemPool_t pool;
    uint64_t want = 0;
    OK(cudaMalloc(&p[0], 1000)); want += 1000;
    OK(cudaMallocPitch(&p[1], &pitch, 100, 10)); want += (uint64_t)pitch * 10;
    struct cudaExtent ext = {64, 4, 2};
    OK(cudaMalloc3D(&pp, ext)); p[2] = pp.ptr; want += (uint64_t)pp.pitch * 4 * 2;
    OK(cudaMallocManaged(&p[3], 300, cudaMemAttachGlobal)); want += 300;
    OK(cudaMallocHost(&p[4], 200)); want += 200;
    OK(cudaHostAlloc(&p[5], 100, cudaHostAllocDefault)); want += 100;
    OK(cudaMallocAsync(&p[6], 4096, 0)); want += 4096;
    OK(cudaMallocAsync_ptsz(&p[7], 8192, 0)); want += 8192;
    OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    OK(cudaMallocFromPoolAsync(&p[8], 512, pool, 0)); want += 512;
    OK(cudaMallocFromPoolAsync_ptsz(&p[9], 256, pool, 0)); want += 256;
    EXPECT_LIVE(want);
    printf("kinds_bytes %llu\n", (unsigned long long)want);
    CHECK(vramtrace_snapshot("kinds") == 0 || !tracked);
    for (int i = 0; i < 4; i++)
        OK(cudaFree(p[i]));
    OK(cudaFreeHost(p[4]));
    OK(cudaFreeHost(p[5]));
    OK(cudaFreeAsync(p[6], 0));
    OK(cudaFreeAsync_ptsz(p[7], 0));
    OK(cudaFreeAsync(p[8], 0));
    OK(cudaFreeAsync_ptsz(p[9], 0));
    EXPECT_LIVE(0);
    if (tracked)
        CHECK(vramtrace_peak_bytes(-1) == want);
}

static void scenario_churn(void)
{
    void *keep[10];
    uint64_t want = 0;
    for (int i = 0; i < 2000; i++) {
        void *a, *b;
        size_t sa = 1 + rng(&rng_state) % 100000, sb = 1 + rng(&rng_state) % 5000;
        OK(cudaMalloc(&a, sa));
        OK(cudaMalloc(&b, sb));
        OK(cudaFree(a));
        if (i % 200 == 0) {
            keep[i / 200] = b;
            want += sb;
        } else {
            OK(cudaFree(b));
        }
    }
    EXPECT_LIVE(want);
    for (int i = 0; i < 10; i++)
        OK(cudaFree(keep[i]));
    EXPECT_LIVE(0);
}

/* exported (-rdynamic) so the leak warning can name it */
__attribute__((noinline, visibility("default"))) void leaky_step(void **out);
__attribute__((noinline, visibility("default"))) void leaky_step(void **out)
{
    void *tmp;
    OK(cudaMalloc(out, 1 << 20));   /* leaked */
    OK(cudaMalloc(&tmp, 4 << 20));  /* temporary */
    OK(cudaFree(tmp));
}

/* A static function (in .symtab only, not exported): the online leak warning names
 * it from the binary's symbol table (check_preload.py leakstatic). */
static __attribute__((noinline)) void grow_static_cache(void **out)
{
    OK(cudaMalloc(out, 1 << 20));   /* leaked */
    __asm__ volatile("" ::: "memory");
}

static void scenario_leakstatic(void)
{
    void *leaked[12];
    for (int s = 0; s < 12; s++) {
        grow_static_cache(&leaked[s]);
        vramtrace_step();
    }
    EXPECT_LIVE(12ull << 20);
}

static void scenario_leak(void)
{
    void *leaked[20];
    vramtrace_scope_begin();
    for (int s = 0; s < 20; s++) {
        leaky_step(&leaked[s]);
        vramtrace_step();
        usleep(10000);              /* let the writer close each step on its own */
    }
    EXPECT_LIVE(20ull << 20);
    if (tracked)
        CHECK(vramtrace_scope_leaked_bytes() == 20ull << 20);
    OK(cudaFree(leaked[0]));
    if (tracked)
        CHECK(vramtrace_scope_leaked_bytes() == 19ull << 20);
}

static void scenario_reset(void)
{
    void *d[3], *h, *a[2];
    OK(cudaMalloc(&d[0], 100));
    OK(cudaMalloc(&d[1], 200));
    OK(cudaMallocManaged(&d[2], 300, cudaMemAttachGlobal));
    OK(cudaMallocHost(&h, 50));
    OK(cudaMallocAsync(&a[0], 1000, 0));
    OK(cudaMallocAsync(&a[1], 2000, 0));
    EXPECT_LIVE(3650);
    OK(cudaDeviceReset());
    EXPECT_LIVE(3000);             /* pool memory survives the reset */
    cudaError_t stale = cudaFree(d[0]);
    printf("stale_free %d\n", (int)stale);
    EXPECT_LIVE(3000);
    void *n;
    OK(cudaMalloc(&n, 10));
    EXPECT_LIVE(3010);
    OK(cudaFree(n));
    OK(cudaFreeAsync(a[0], 0));
    OK(cudaFreeAsync(a[1], 0));
    EXPECT_LIVE(0);
}

/* Pool allocations across a reset, then more pool traffic. */
static void scenario_pool(void)
{
    void *a[8];
    uint64_t want = 0;
    for (int i = 0; i < 8; i++) {
        OK(cudaMallocAsync(&a[i], 4096u * (i + 1), 0));
        want += 4096u * (i + 1);
    }
    void *d;
    OK(cudaMalloc(&d, 777));
    EXPECT_LIVE(want + 777);
    OK(cudaDeviceReset());
    EXPECT_LIVE(want);
    for (int i = 0; i < 8; i += 2) {
        OK(cudaFreeAsync(a[i], 0));
        want -= 4096u * (i + 1);
    }
    EXPECT_LIVE(want);
    cudaMemPool_t pool;
    OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    OK(cudaMemPoolTrimTo(pool, 0));
    EXPECT_LIVE(want);
    for (int i = 1; i < 8; i += 2)
        OK(cudaFreeAsync(a[i], 0));
    EXPECT_LIVE(0);
}

/* A pool the program creates (cudaMemPoolCreate on device 0, release threshold
 * 64 MiB so that freed memory stays reserved): 8 MiB from it, freed, the stream
 * synchronised, a step mark; the pool destroyed, a second mark. The check
 * (check_preload.py privpool) reads the two step snapshots: the first counts the
 * pool's reserve in device 0's pool_reserved_bytes, the second does not. */
static void scenario_privpool(void)
{
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    OK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = 64u << 20;
    OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    void *p;
    OK(cudaMallocFromPoolAsync(&p, 8u << 20, pool, 0));
    EXPECT_LIVE(8u << 20);
    OK(cudaFreeAsync(p, 0));
    OK(cudaStreamSynchronize(0));
    EXPECT_LIVE(0);
    vramtrace_step();
    OK(cudaMemPoolDestroy(pool));
    vramtrace_step();
}

/* An RMM-style private pool through the driver API: cuMemPoolCreate with a release
 * threshold of 64 MiB (freed memory stays reserved), 8 MiB and 4 MiB + 100 bytes from
 * it (cuMemAllocFromPoolAsync), freed one after the other (cuMemFreeAsync), then
 * cuMemPoolDestroy. A step after each event; before each step the driver's own
 * RESERVED_MEM_CURRENT and USED_MEM_CURRENT of the pool are printed
 * ("drvpool step N reserved R used U"; the use is the pool's rounded bytes, not the
 * 100 extra). check_preload.py drvpool compares device 0's pool_reserved_bytes and
 * pool_used_bytes of the step snapshots with them: the reserve stays while the use
 * goes down (retention), and after the destroy the pool counts nowhere. */
static void drvpool_step(CUmemoryPool pool, int n)
{
    cuuint64_t r = 0, u = 0;
    if (pool) {
        CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &r) == CUDA_SUCCESS);
        CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u) == CUDA_SUCCESS);
    }
    printf("drvpool step %d reserved %llu used %llu\n", n, (unsigned long long)r, (unsigned long long)u);
    fflush(stdout);
    vramtrace_step();
}

static void scenario_drvpool(void)
{
    OK(cudaSetDevice(0));   /* the primary context, current */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemoryPool pool;
    CHECK(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
    cuuint64_t threshold = 64u << 20;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) == CUDA_SUCCESS);
    CUdeviceptr a = 0, b = 0;
    CHECK(cuMemAllocFromPoolAsync(&a, 8u << 20, pool, NULL) == CUDA_SUCCESS);
    CHECK(cuMemAllocFromPoolAsync(&b, (4u << 20) + 100, pool, NULL) == CUDA_SUCCESS);
    EXPECT_LIVE((12u << 20) + 100);
    drvpool_step(pool, 1);
    CHECK(cuMemFreeAsync(a, NULL) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(NULL) == CUDA_SUCCESS);
    EXPECT_LIVE((4u << 20) + 100);
    drvpool_step(pool, 2);
    CHECK(cuMemFreeAsync(b, NULL) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(NULL) == CUDA_SUCCESS);
    EXPECT_LIVE(0);
    drvpool_step(pool, 3);
    CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    drvpool_step(NULL, 4);
    /* a pool no longer known is forwarded: the driver's own answer */
    CHECK(cuMemPoolDestroy(pool) == CUDA_ERROR_INVALID_VALUE);
}

#define NTHREADS 8
#define NOPS 10000
static uint64_t thread_live[NTHREADS];

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
    void *held[64] = {0};
    size_t size[64] = {0};
    uint64_t live = 0;
    for (int i = 0; i < NOPS; i++) {
        int slot = (int)(rng(&s) % 64);
        if (held[slot]) {
            if (cudaFree(held[slot]) != cudaSuccess)
                failures++;
            live -= size[slot];
            held[slot] = NULL;
        } else {
            size[slot] = 1 + rng(&s) % 65536;
            int async = rng(&s) % 4 == 0;
            cudaError_t e = async ? cudaMallocAsync(&held[slot], size[slot], 0)
                                  : cudaMalloc(&held[slot], size[slot]);
            if (e != cudaSuccess) {
                failures++;
                held[slot] = NULL;
            } else {
                live += size[slot];
            }
        }
    }
    thread_live[t] = live;
    return NULL;
}

static void scenario_threads(void)
{
    pthread_t th[NTHREADS];
    void *warm;
    OK(cudaMalloc(&warm, 1));
    OK(cudaFree(warm));
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    uint64_t want = 0;
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        want += thread_live[t];
    }
    printf("threads_live %llu\n", (unsigned long long)want);
    EXPECT_LIVE(want);
}

/* Return codes and errno of interesting cases, printed for a with/without diff. */
static void scenario_errors(void)
{
    void *p = NULL, *q = NULL;
    errno = 1234;
    cudaError_t r = cudaMalloc(&p, 1 << 20);
    printf("malloc_ok %d errno %d\n", (int)r, errno);
    errno = 1235;
    r = cudaMalloc(&q, (size_t)1 << 62);
    printf("malloc_oom %d errno %d null %d\n", (int)r, errno, q == NULL);
    cudaGetLastError();
    errno = 1236;
    r = cudaFree(NULL);
    printf("free_null %d errno %d\n", (int)r, errno);
    errno = 1237;
    r = cudaFree((void *)(uintptr_t)0xdeadbeef000ull);
    printf("free_bogus %d errno %d\n", (int)r, errno);
    cudaGetLastError();
    errno = 1238;
    r = cudaFreeHost((void *)(uintptr_t)0xdeadbeef000ull);
    printf("freehost_bogus %d errno %d\n", (int)r, errno);
    cudaGetLastError();
    errno = 1239;
    r = cudaDeviceReset();
    printf("reset %d errno %d\n", (int)r, errno);
    errno = 1240;
    r = cudaFree(p);
    printf("free_stale %d errno %d\n", (int)r, errno);
    cudaGetLastError();
    errno = 1241;
    r = cudaFree(p);
    printf("free_stale_again %d errno %d\n", (int)r, errno);
    cudaGetLastError();
    size_t fr = 0, to = 0;
    errno = 1242;
    r = cudaMemGetInfo(&fr, &to);
    printf("meminfo %d errno %d total %zu\n", (int)r, errno, to);
    errno = 1243;
    void *a = NULL;
    r = cudaMallocAsync(&a, (size_t)1 << 62, 0);
    printf("async_oom %d errno %d\n", (int)r, errno);
    cudaGetLastError();
    EXPECT_LIVE(0);
}

/* An allocation of (size_t)-1 fails with out of memory: the OOM snapshot's
 * requested_bytes is clamped to 2^63-1 (docs/snapshot-format.md "Records"), so every
 * reader with signed 64-bit integers still reads the file (check_preload.py hugeoom). */
static void scenario_hugeoom(void)
{
    void *p = NULL, *q = NULL;
    cudaError_t r = cudaMalloc(&q, 4096);
    printf("malloc_ok %d\n", (int)r);
    errno = 1250;
    r = cudaMalloc(&p, (size_t)-1);
    printf("malloc_max %d errno %d null %d\n", (int)r, errno, p == NULL);
    cudaGetLastError();
    r = cudaFree(q);
    printf("free %d\n", (int)r);
    EXPECT_LIVE(0);
}

/* Driver entry points handed out by the runtime are tracked, PTDS variants kept. */
static void scenario_entry(void)
{
    typedef CUresult (*alloc_t)(CUdeviceptr *, size_t);
    typedef CUresult (*free_t)(CUdeviceptr);
    typedef CUresult (*aalloc_t)(CUdeviceptr *, size_t, CUstream);
    typedef CUresult (*afree_t)(CUdeviceptr, CUstream);
    alloc_t alloc = NULL, alloc2 = NULL;
    free_t fr = NULL;
    aalloc_t aalloc = NULL, aalloc_ptsz = NULL;
    afree_t afree_ptsz = NULL;
    enum cudaDriverEntryPointQueryResult st;
    void *warm;
    OK(cudaMalloc(&warm, 1));
    OK(cudaFree(warm));
    OK(cudaGetDriverEntryPoint("cuMemAlloc", (void **)&alloc, cudaEnableDefault, &st));
    OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", (void **)&alloc2, 12000, cudaEnableDefault, &st));
    OK(cudaGetDriverEntryPointByVersion("cuMemFree", (void **)&fr, 12000, cudaEnableDefault, &st));
    OK(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", (void **)&aalloc, 12000, cudaEnableDefault, &st));
    OK(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", (void **)&aalloc_ptsz, 12000,
                                        cudaEnablePerThreadDefaultStream, &st));
    OK(cudaGetDriverEntryPointByVersion("cuMemFreeAsync", (void **)&afree_ptsz, 12000,
                                        cudaEnablePerThreadDefaultStream, &st));
    CHECK(alloc && alloc2 && fr && aalloc && aalloc_ptsz && afree_ptsz);
    if (!(alloc && alloc2 && fr && aalloc && aalloc_ptsz && afree_ptsz))
        return;
    CHECK(aalloc != aalloc_ptsz);   /* the per-thread-stream variant stays distinct */
    CUdeviceptr d1, d2, d3;
    CHECK(alloc(&d1, 111) == CUDA_SUCCESS);
    CHECK(alloc2(&d2, 222) == CUDA_SUCCESS);
    CHECK(aalloc_ptsz(&d3, 333, NULL) == CUDA_SUCCESS);
    EXPECT_LIVE(666);
    CHECK(fr(d1) == CUDA_SUCCESS);
    CHECK(fr(d2) == CUDA_SUCCESS);
    CHECK(afree_ptsz(d3, NULL) == CUDA_SUCCESS);
    EXPECT_LIVE(0);
}

/* Registered host memory: two malloc'd buffers through cudaHostRegister, one through
 * the driver's cuMemHostRegister (cuda.h maps the name to cuMemHostRegister_v2). Each
 * registered range is `size` bytes of host_pinned memory from register to unregister,
 * whichever API unregisters it; a second registration of a registered range and the
 * unregistration of a pointer that starts no registered range fail and change
 * nothing; errno is the program's across every call. Every result is printed, so a
 * run without the preload can be compared with one under it. */
#define HOSTREG_ERRNO 4242
#define HOSTREG(label, call, want) do {                                                     \
        errno = HOSTREG_ERRNO;                                                              \
        int r_ = (int)(call), e_ = errno;                                                   \
        printf("%s %d errno %d\n", label, r_, e_);                                          \
        if (r_ != (int)(want)) {                                                            \
            fprintf(stderr, "%s:%d: %s = %d, expected %d\n", __FILE__, __LINE__, #call, r_, \
                    (int)(want));                                                           \
            failures++;                                                                     \
        }                                                                                   \
        CHECK(e_ == HOSTREG_ERRNO);                                                         \
    } while (0)

static void scenario_hostreg(void)
{
    const size_t sa = 10000, sb = 3000, sc = (1u << 20) + 123;
    char *a = malloc(sa), *b = malloc(sb), *c = malloc(sc), *u = malloc(64);
    CHECK(a && b && c && u);
    if (!(a && b && c && u))
        return;
    OK(cudaFree(NULL));             /* the primary context, current for the driver calls */
    EXPECT_LIVE(0);

    HOSTREG("register_a", cudaHostRegister(a, sa, cudaHostRegisterDefault), cudaSuccess);
    EXPECT_LIVE(sa);
    HOSTREG("register_b", cudaHostRegister(b, sb, cudaHostRegisterPortable), cudaSuccess);
    EXPECT_LIVE(sa + sb);
    HOSTREG("register_c_drv", cuMemHostRegister(c, sc, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
    EXPECT_LIVE(sa + sb + sc);
    memset(a, 1, sa);               /* still the program's memory */
    memset(c, 2, sc);

    /* registered again: the same range, a range inside one, through either API */
    HOSTREG("again_a", cudaHostRegister(a, sa, cudaHostRegisterDefault), cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaGetLastError() == cudaErrorHostMemoryAlreadyRegistered);
    EXPECT_LIVE(sa + sb + sc);
    HOSTREG("again_c_drv", cuMemHostRegister(c, sc, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    HOSTREG("again_inside_b", cudaHostRegister(b + 100, 50, 0), cudaErrorHostMemoryAlreadyRegistered);
    cudaGetLastError();
    EXPECT_LIVE(sa + sb + sc);

    /* invalid arguments: no pointer, no bytes */
    HOSTREG("register_null", cudaHostRegister(NULL, 100, 0), cudaErrorInvalidValue);
    HOSTREG("register_empty", cudaHostRegister(u, 0, 0), cudaErrorInvalidValue);
    HOSTREG("register_empty_drv", cuMemHostRegister(u, 0, 0), CUDA_ERROR_INVALID_VALUE);
    HOSTREG("unregister_null_drv", cuMemHostUnregister(NULL), CUDA_ERROR_INVALID_VALUE);
    cudaGetLastError();
    EXPECT_LIVE(sa + sb + sc);

    /* unregister what starts no registered range: unknown memory, the inside of one */
    HOSTREG("unregister_unknown", cudaHostUnregister(u), cudaErrorHostMemoryNotRegistered);
    CHECK(cudaGetLastError() == cudaErrorHostMemoryNotRegistered);
    HOSTREG("unregister_inside_a", cudaHostUnregister(a + 16), cudaErrorHostMemoryNotRegistered);
    HOSTREG("unregister_unknown_drv", cuMemHostUnregister(u), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    cudaGetLastError();
    EXPECT_LIVE(sa + sb + sc);

    /* unregister, each range by its start; b through the other API */
    HOSTREG("unregister_a", cudaHostUnregister(a), cudaSuccess);
    EXPECT_LIVE(sb + sc);
    HOSTREG("unregister_a_again", cudaHostUnregister(a), cudaErrorHostMemoryNotRegistered);
    cudaGetLastError();
    EXPECT_LIVE(sb + sc);
    HOSTREG("unregister_c_drv", cuMemHostUnregister(c), CUDA_SUCCESS);
    EXPECT_LIVE(sb);
    HOSTREG("unregister_b_drv", cuMemHostUnregister(b), CUDA_SUCCESS);
    EXPECT_LIVE(0);

    /* the same address registered again is a new record */
    HOSTREG("reregister_a", cudaHostRegister(a, 512, cudaHostRegisterDefault), cudaSuccess);
    EXPECT_LIVE(512);
    HOSTREG("unregister_a_last", cudaHostUnregister(a), cudaSuccess);
    EXPECT_LIVE(0);
    if (tracked)
        CHECK(vramtrace_peak_bytes(-1) == sa + sb + sc);
    CHECK(a[sa - 1] == 1 && c[sc - 1] == 2);
    free(a);
    free(b);
    free(c);
    free(u);
}

/* Registered and allocated pinned host memory left live at exit: 10000 bytes
 * registered through cudaHostRegister, 3000 allocated by cudaMallocHost
 * (check_preload.py hostregflag reads the flags in the exit snapshot). */
static void scenario_hostregflag(void)
{
    static char buf[10000];
    void *h = NULL;
    OK(cudaHostRegister(buf, sizeof buf, cudaHostRegisterDefault));
    OK(cudaMallocHost(&h, 3000));
    EXPECT_LIVE(sizeof buf + 3000);
}

static volatile sig_atomic_t dummy;

/* Every snapshot trigger once; the test script checks the file. */
static void scenario_snap(void)
{
    void *p[6];
    for (int s = 0; s < 3; s++) {
        OK(cudaMalloc(&p[s], 1000u * (s + 1)));
        vramtrace_step();
        usleep(30000);
    }
    OK(cudaMalloc(&p[5], 1));       /* a change since the last step snapshot ...      */
    OK(cudaFree(p[5]));
    usleep(150000);                 /* ... so periodic snapshots (VRAMTRACE_INTERVAL_MS=50) */
    raise(SIGUSR1);                 /* signal snapshot */
    usleep(100000);
    void *big = NULL;
    cudaError_t r = cudaMalloc(&big, (size_t)1 << 62);  /* oom snapshot */
    CHECK(r == cudaErrorMemoryAllocation);
    CHECK(vramtrace_snapshot("manual-one") == 0 || !tracked);
    OK(cudaMalloc(&p[3], 5));
    OK(cudaMallocHost(&p[4], 6));
    OK(cudaFree(p[0]));
    /* p[1], p[2], p[3], p[4] stay: 2000 + 3000 + 5 + 6 unfreed at exit */
}

/* A manual snapshot of a long live list while periodic ones fall due
 * (VRAMTRACE_INTERVAL_MS=10 in this test's environment): the writer thread waits for
 * the output lock asleep, trying again every 5 ms, so its CPU time while the manual
 * snapshot is written stays a small part of that time (a retry that slept until the
 * periodic deadline already past spun at ~100 % of a core). Other threads than this
 * one and the writer: none (the simulated CUDA starts none). */
static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void scenario_heldsnap(void)
{
    enum { N = 100000 };
    void **p = malloc(N * sizeof *p);
    CHECK(p != NULL);
    if (!p)
        return;
    for (int i = 0; i < N; i++)
        OK(cudaMalloc(&p[i], 256));
    usleep(50000);
    double wall = 0, other = 0;
    for (int round = 0; round < 3; round++) {
        double w0 = clock_s(CLOCK_MONOTONIC), p0 = clock_s(CLOCK_PROCESS_CPUTIME_ID),
               t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        CHECK(vramtrace_snapshot("long live list") == 0 || !tracked);
        wall += clock_s(CLOCK_MONOTONIC) - w0;
        other += (clock_s(CLOCK_PROCESS_CPUTIME_ID) - p0) - (clock_s(CLOCK_THREAD_CPUTIME_ID) - t0);
    }
    fprintf(stderr, "heldsnap: 3 manual snapshots of %d live took %.3f s; other threads' CPU %.3f s\n",
            N, wall, other);
    if (tracked)
        CHECK(other < wall / 4);
    for (int i = 0; i < N; i++)
        OK(cudaFree(p[i]));
    free(p);
}

static void *exit_ptr;
static void free_at_exit(void)
{
    cudaError_t r = cudaFree(exit_ptr);
    if (r != cudaSuccess)
        fprintf(stderr, "atexit cudaFree: %d\n", (int)r);
}

/* Unfreed at exit = live after the program's own exit-time frees; what the runtime
 * reclaims in its teardown still counts. */
static void scenario_exit(void)
{
    void *a, *b;
    OK(cudaMalloc(&a, 4000));
    OK(cudaMalloc(&exit_ptr, 70000));
    atexit(free_at_exit);           /* registered after the runtime initialised */
    OK(cudaMalloc(&b, 300));
    OK(cudaMallocAsync(&a, 20, 0));
    EXPECT_LIVE(74320);
    /* exit: 4000 + 300 + 20 unfreed */
}

/* fork: the child reports only its own allocations. */
static void scenario_fork(void)
{
    void *parent;
    OK(cudaMalloc(&parent, 1 << 20));
    EXPECT_LIVE(1 << 20);
    pid_t pid = fork();
    if (pid == 0) {
        failures = 0;
        EXPECT_LIVE(0);             /* inherited records are not the child's */
        void *c1, *c2;
        OK(cudaMalloc(&c1, 12345));
        OK(cudaMalloc(&c2, 55));
        OK(cudaFree(c2));
        EXPECT_LIVE(12345);
        exit(failures ? 1 : 0);     /* c1 unfreed in the child */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_LIVE(1 << 20);
    void *p2;
    OK(cudaMalloc(&p2, 10));
    OK(cudaFree(p2));
    EXPECT_LIVE(1 << 20);
}

/* Workers that end with _exit holding memory, as Python multiprocessing and pool
 * workers do: two children started by exec (CUDA is not used across fork), each
 * takes 3 MiB, marks 5 steps, allocates and frees 1 MiB and calls _exit(0) (no exit record). The parent frees
 * what it took and exits normally (check_preload.py exitworkers). */
static void scenario_exitworkers(const char *self)
{
    void *p;
    OK(cudaMalloc(&p, 1 << 20));
    pid_t w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = fork();
        if (w[i] == 0) {
            execl(self, self, "exitworker_child", (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < 2; i++) {
        int status = 0;
        CHECK(w[i] > 0 && waitpid(w[i], &status, 0) == w[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    OK(cudaFree(p));
    EXPECT_LIVE(0);
}

static void scenario_exitworker_child(void)
{
    void *p, *q;
    OK(cudaMalloc(&p, 3 << 20));
    for (int s = 0; s < 5; s++)
        vramtrace_step();
    EXPECT_LIVE(3 << 20);
    fflush(stdout);
    OK(cudaMalloc(&q, 1 << 20));    /* after the last step: only the event trace has it */
    OK(cudaFree(q));
    _exit(failures ? 1 : 0);
}

/* Runs until killed: churn and steps (the SIGKILL test). */
static void scenario_loop(void)
{
    void *keep[256] = {0};
    printf("ready\n");
    fflush(stdout);
    for (unsigned i = 0;; i++) {
        void *p;
        if (cudaMalloc(&p, 1 + rng(&rng_state) % 100000) == cudaSuccess) {
            unsigned slot = i % 256;
            if (keep[slot])
                cudaFree(keep[slot]);
            keep[slot] = p;
        }
        if (i % 64 == 0)
            vramtrace_step();
    }
}

/* The driver's VMM calls as PyTorch's expandable segments make them: handles mapped
 * side by side into one reservation, then the tail unmapped in ONE cuMemUnmap and
 * the handles released (the shrink), grown and shrunk again; then a release and the
 * unmap of the handle's last mapping on two threads at once (either order frees it). */
#define VMM_SEG (2u << 20)
static CUmemGenericAllocationHandle vmm_h;
static CUdeviceptr vmm_va;
static pthread_barrier_t vmm_go, vmm_done;
static int vmm_stop;

static void *vmm_unmapper(void *arg)
{
    CUcontext ctx = arg;
    cuCtxSetCurrent(ctx);
    for (;;) {
        pthread_barrier_wait(&vmm_go);
        if (vmm_stop)
            return NULL;
        cuMemUnmap(vmm_va, VMM_SEG);
        pthread_barrier_wait(&vmm_done);
    }
}

/* Multicast objects (NVLS): cuMulticastCreate's object is vmm memory with the
 * multicast flag, live until released and unmapped; binding cuMemCreate memory into it
 * counts nothing more. Exact live bytes after each event; every code is the driver's
 * (the same without the preload, errors included). A second object of 2 MiB is never
 * released: the planted leak (check_preload.py multicast reads the exit snapshot). */
#define MC_CHECK(call, want) do { CUresult r_ = (call); if (r_ != (want)) { fprintf(stderr, "%s:%d: %s = %d, expected %d\n", __FILE__, __LINE__, #call, (int)r_, (int)(want)); failures++; } } while (0)
/* Planted per-step leaks of two paths (check_preload.py stepleaks): each of 12 steps
 * registers a new 65536-byte host buffer and never unregisters it (host_pinned,
 * flag registered), and creates a 2 MiB multicast object and never releases it
 * (vmm, flag multicast); the report must find both at their exact bytes per step. */
static __attribute__((noinline)) void register_step_buffer(void)
{
    void *buf = malloc(65536);
    OK(cudaHostRegister(buf, 65536, cudaHostRegisterDefault));   /* leaked */
}

static __attribute__((noinline)) void multicast_step_object(void)
{
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof prop);
    prop.numDevices = 1;
    prop.size = 2u << 20;
    CUmemGenericAllocationHandle mc = 0;
    if (cuMulticastCreate(&mc, &prop) != CUDA_SUCCESS)   /* leaked */
        failures++;
}

static void scenario_stepleaks(void)
{
    OK(cudaSetDevice(0));
    for (int s = 0; s < 12; s++) {
        register_step_buffer();
        multicast_step_object();
        vramtrace_step();
    }
    EXPECT_LIVE(12ull * (65536 + (2u << 20)));
}

static void scenario_multicast(void)
{
    const size_t MiB = 1u << 20;
    OK(cudaSetDevice(0));
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof prop);
    prop.numDevices = 1;
    prop.size = 4 * MiB;
    size_t g = 0;
    MC_CHECK(cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM), CUDA_SUCCESS);
    CHECK(g == 2 * MiB);
    MC_CHECK(cuMulticastGetGranularity(&g, &prop, (CUmulticastGranularity_flags)7), CUDA_ERROR_INVALID_VALUE);
    CUmemGenericAllocationHandle mc = 0, mc2 = 0, phys = 0;
    prop.size = 3 * MiB;   /* not a multiple of the granularity: refused, nothing counted */
    MC_CHECK(cuMulticastCreate(&mc, &prop), CUDA_ERROR_INVALID_VALUE);
    EXPECT_LIVE(0);
    prop.size = 4 * MiB;
    MC_CHECK(cuMulticastCreate(&mc, &prop), CUDA_SUCCESS);
    EXPECT_LIVE(4 * MiB);
    MC_CHECK(cuMulticastAddDevice(mc, 0), CUDA_SUCCESS);
    MC_CHECK(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);   /* team already whole */
    CUmemAllocationProp pp;
    memset(&pp, 0, sizeof pp);
    pp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = 0;
    MC_CHECK(cuMemCreate(&phys, 4 * MiB, &pp, 0), CUDA_SUCCESS);
    EXPECT_LIVE(8 * MiB);
    MC_CHECK(cuMulticastBindMem(mc, 0, phys, 0, 4 * MiB, 0), CUDA_SUCCESS);
    EXPECT_LIVE(8 * MiB);
    CUdeviceptr va = 0;
    MC_CHECK(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0), CUDA_SUCCESS);
    MC_CHECK(cuMemMap(va, 4 * MiB, 0, mc, 0), CUDA_SUCCESS);
    MC_CHECK(cuMemMap(va + 4 * MiB, 4 * MiB, 0, phys, 0), CUDA_SUCCESS);
    MC_CHECK(cuMulticastBindAddr(mc, 0, va + 4 * MiB, 4 * MiB, 0), CUDA_ERROR_INVALID_VALUE);   /* bound */
    MC_CHECK(cuMulticastUnbind(mc, 0, 0, 4 * MiB), CUDA_SUCCESS);
    MC_CHECK(cuMulticastBindAddr(mc, 0, va + 4 * MiB, 4 * MiB, 0), CUDA_SUCCESS);
    EXPECT_LIVE(8 * MiB);
    MC_CHECK(cuMemRelease(mc), CUDA_SUCCESS);   /* still mapped: still live */
    EXPECT_LIVE(8 * MiB);
    MC_CHECK(cuMemUnmap(va, 4 * MiB), CUDA_SUCCESS);
    EXPECT_LIVE(4 * MiB);
    /* a released object is no longer known: forwarded, the driver's answers */
    MC_CHECK(cuMemRelease(mc), CUDA_ERROR_INVALID_VALUE);
    MC_CHECK(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);
    MC_CHECK(cuMulticastUnbind(mc, 0, 0, 4 * MiB), CUDA_ERROR_INVALID_VALUE);
    MC_CHECK(cuMemUnmap(va + 4 * MiB, 4 * MiB), CUDA_SUCCESS);
    MC_CHECK(cuMemRelease(phys), CUDA_SUCCESS);
    MC_CHECK(cuMemAddressFree(va, 8 * MiB), CUDA_SUCCESS);
    EXPECT_LIVE(0);
    vramtrace_step();
    prop.size = 2 * MiB;   /* the planted leak */
    MC_CHECK(cuMulticastCreate(&mc2, &prop), CUDA_SUCCESS);
    EXPECT_LIVE(2 * MiB);
    vramtrace_step();
}

static void scenario_vmm(void)
{
    void *plain;
    OK(cudaMalloc(&plain, 1 << 20));   /* a runtime allocation beside the VMM ones */
    CUcontext ctx;
    CHECK(cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx);
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
    CUdeviceptr va = 0;
    CHECK(cuMemAddressReserve(&va, 16 * (size_t)VMM_SEG, 0, 0, 0) == CUDA_SUCCESS);
    CUmemGenericAllocationHandle h[6];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 6; i++) {
            CHECK(cuMemCreate(&h[i], VMM_SEG, &prop, 0) == CUDA_SUCCESS);
            CHECK(cuMemMap(va + (size_t)i * VMM_SEG, VMM_SEG, 0, h[i], 0) == CUDA_SUCCESS);
        }
        EXPECT_LIVE((1 << 20) + 6ull * VMM_SEG);
        /* shrink: the last four in one call, then the first two in one call */
        CHECK(cuMemUnmap(va + 2 * (size_t)VMM_SEG, 4 * (size_t)VMM_SEG) == CUDA_SUCCESS);
        for (int i = 2; i < 6; i++)
            CHECK(cuMemRelease(h[i]) == CUDA_SUCCESS);
        EXPECT_LIVE((1 << 20) + 2ull * VMM_SEG);
        CHECK(cuMemUnmap(va, 2 * (size_t)VMM_SEG) == CUDA_SUCCESS);
        for (int i = 0; i < 2; i++)
            CHECK(cuMemRelease(h[i]) == CUDA_SUCCESS);
        EXPECT_LIVE(1 << 20);
    }
    /* cuMemRetainAllocationHandle: a second reference keeps it after one release */
    CUmemGenericAllocationHandle again = 0;
    CHECK(cuMemCreate(&h[0], VMM_SEG, &prop, 0) == CUDA_SUCCESS);
    CHECK(cuMemMap(va, VMM_SEG, 0, h[0], 0) == CUDA_SUCCESS);
    CHECK(cuMemRetainAllocationHandle(&again, (void *)va) == CUDA_SUCCESS && again == h[0]);
    CHECK(cuMemRelease(h[0]) == CUDA_SUCCESS);
    CHECK(cuMemUnmap(va, VMM_SEG) == CUDA_SUCCESS);
    EXPECT_LIVE((1 << 20) + (uint64_t)VMM_SEG);
    CHECK(cuMemRelease(again) == CUDA_SUCCESS);
    EXPECT_LIVE(1 << 20);
    /* release and unmap of one handle at once */
    vmm_va = va;
    pthread_barrier_init(&vmm_go, NULL, 2);
    pthread_barrier_init(&vmm_done, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, vmm_unmapper, ctx);
    for (int i = 0; i < 2000; i++) {
        CHECK(cuMemCreate(&vmm_h, VMM_SEG, &prop, 0) == CUDA_SUCCESS);
        CHECK(cuMemMap(va, VMM_SEG, 0, vmm_h, 0) == CUDA_SUCCESS);
        pthread_barrier_wait(&vmm_go);
        CHECK(cuMemRelease(vmm_h) == CUDA_SUCCESS);
        pthread_barrier_wait(&vmm_done);
    }
    vmm_stop = 1;
    pthread_barrier_wait(&vmm_go);
    pthread_join(t, NULL);
    EXPECT_LIVE(1 << 20);
    CHECK(cuMemAddressFree(va, 16 * (size_t)VMM_SEG) == CUDA_SUCCESS);
    OK(cudaFree(plain));
    EXPECT_LIVE(0);
}

int main(int argc, char **argv)
{
    tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "kinds")) scenario_kinds();
    else if (!strcmp(s, "churn")) scenario_churn();
    else if (!strcmp(s, "privpool")) scenario_privpool();
    else if (!strcmp(s, "hostregflag")) scenario_hostregflag();
    else if (!strcmp(s, "exitworkers")) scenario_exitworkers(argv[0]);
    else if (!strcmp(s, "exitworker_child")) scenario_exitworker_child();
    else if (!strcmp(s, "drvpool")) scenario_drvpool();
    else if (!strcmp(s, "stepleaks")) scenario_stepleaks();
    else if (!strcmp(s, "leak")) scenario_leak();
    else if (!strcmp(s, "leakstatic")) scenario_leakstatic();
    else if (!strcmp(s, "reset")) scenario_reset();
    else if (!strcmp(s, "pool")) scenario_pool();
    else if (!strcmp(s, "threads")) scenario_threads();
    else if (!strcmp(s, "errors")) scenario_errors();
    else if (!strcmp(s, "hugeoom")) scenario_hugeoom();
    else if (!strcmp(s, "entry")) scenario_entry();
    else if (!strcmp(s, "snap")) scenario_snap();
    else if (!strcmp(s, "exit")) scenario_exit();
    else if (!strcmp(s, "fork")) scenario_fork();
    else if (!strcmp(s, "loop")) scenario_loop();
    else if (!strcmp(s, "vmm")) scenario_vmm();
    else if (!strcmp(s, "multicast")) scenario_multicast();
    else if (!strcmp(s, "heldsnap")) scenario_heldsnap();
    else if (!strcmp(s, "hostreg")) scenario_hostreg();
    else {
        fprintf(stderr, "usage: %s kinds|churn|leak|reset|pool|threads|errors|hugeoom|entry|snap|exit|fork|loop|vmm|heldsnap|hostreg\n", argv[0]);
        return 2;
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
