/* bench_alloc.c — the workload side of the preload benchmarks: a CUDA
 * program that allocates and frees through one of the two paths vramtrace hooks, run
 * untraced and traced (LD_PRELOAD=libvramtrace.so) by bench/vt_bench.py, which
 * divides the two.
 *
 * Design: every measured loop lives in a function named bench_measured_* so that
 * `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=bench_measured_*`
 * counts exactly the loop (inclusive of everything it calls: hooks, libunwind, the
 * simulated or real CUDA). Before the loop the program warms every path (first
 * allocation starts the writer, libunwind fills its caches), so one-time costs stay
 * outside the count. The allocation call sits at the bottom of a recursion of
 * `--frames F` functions so that stacks of depth 8..64 are really that deep.
 *
 * Paths (CUDA 13, ../shared/docs/cuda-interposition.md):
 *   runtime   cudaMalloc / cudaFree of the shared runtime (libcudart.so.13); under the
 *             preload the runtime hook records and the driver hook it reaches through
 *             the resolver only forwards.
 *   driver    dlopen("libcuda.so.1") + dlsym(cuGetProcAddress_v2) + cuMemAlloc_v2 /
 *             cuMemFree_v2 resolved through it (what a static runtime does).
 *
 * Usage (sizes in bytes, counts are calls):
 *   bench_alloc pairs runtime|driver N [--frames F] [--base B] [--idle-thread 1]
 *                                                     N alloc+free pairs of 256 B, B
 *                                                     (default 1) 1 MiB allocations live;
 *                                                     --idle-thread 1 first starts a
 *                                                     thread that only waits, as the
 *                                                     tracer's writer thread does (glibc
 *                                                     takes its multi-threaded malloc and
 *                                                     mutex paths once a second thread
 *                                                     exists)
 *   bench_alloc unw D N [--frames F]                  N bare unw_backtrace(D) at the
 *                                                     same call site (floor of fig. 2)
 *   bench_alloc live N [--frames F]                   N live 256 B allocations (one
 *                                                     site), prints VmRSS/VmHWM kB
 *   bench_alloc threads T N                           T threads x N pairs, prints
 *                                                     pairs per second (wall)
 *   bench_alloc train STEPS ALLOCS SPIN [--frames F]  training loop: ALLOCS allocations
 *                                                     per step from 8 sites, SPIN busy
 *                                                     iterations per step standing in
 *                                                     for kernel time, vramtrace_step()
 *   bench_alloc churn PAIRS SPIN [--async 1]          PAIRS alloc+free pairs, SPIN busy
 *                                                     iterations after each; --async 1:
 *                                                     cudaMallocAsync/cudaFreeAsync pairs
 *                                                     on the legacy default stream
 *   bench_alloc calibrate NS                          prints the busy iterations that
 *                                                     take about NS nanoseconds
 *   bench_alloc steplat STEPS GAP_US                  vramtrace_step() latency: STEPS
 *                                                     steps, each allocating and freeing
 *                                                     from 8 sites (one of them keeps one
 *                                                     64 KiB allocation a step), then
 *                                                     sleeping GAP_US (the step's kernel
 *                                                     time: the writer thread's turn);
 *                                                     prints the mean, median, 99th
 *                                                     percentile and longest call in us
 * Output: one line "key=value ..." on stdout. Exit 0, 1 on a CUDA error, 2 usage.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <libunwind.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "vramtrace.h"

#undef cuGetProcAddress

#define PAIR_BYTES 256

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*drv_alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*drv_free_t)(CUdeviceptr);

static drv_alloc_t drv_alloc;
static drv_free_t  drv_free;
static volatile uint64_t sink;

static void die(const char *what, int r)
{
    fprintf(stderr, "bench_alloc: %s failed (%d)\n", what, r);
    exit(1);
}

/* Busy work standing in for kernel time the host waits for; not optimised away. */
__attribute__((noinline)) static void spin(uint64_t iters)
{
    uint64_t x = sink;
    for (uint64_t i = 0; i < iters; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static void driver_setup(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_alloc: dlopen libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa)
        die("dlsym cuGetProcAddress_v2", 0);
    CUdriverProcAddressQueryResult st;
    void *p = NULL;
#define GET(var, name, ver) do { p = NULL; if (gpa(name, &p, ver, 0, &st) != CUDA_SUCCESS || !p) die(name, 0); var = p; } while (0)
    CUresult (*init)(unsigned);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*setcur)(CUcontext);
    GET(init, "cuInit", 2000);
    GET(retain, "cuDevicePrimaryCtxRetain", 7000);
    GET(setcur, "cuCtxSetCurrent", 4000);
    GET(drv_alloc, "cuMemAlloc", 3020);
    GET(drv_free, "cuMemFree", 3020);
#undef GET
    CUcontext ctx;
    int r;
    if ((r = init(0)) != CUDA_SUCCESS) die("cuInit", r);
    if ((r = retain(&ctx, 0)) != CUDA_SUCCESS) die("cuDevicePrimaryCtxRetain", r);
    if ((r = setcur(ctx)) != CUDA_SUCCESS) die("cuCtxSetCurrent", r);
}

static void pair_rt(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, PAIR_BYTES);
    if (e != cudaSuccess) die("cudaMalloc", e);
    if ((e = cudaFree(p)) != cudaSuccess) die("cudaFree", e);
}

static void pair_drv(void)
{
    CUdeviceptr d = 0;
    CUresult r = drv_alloc(&d, PAIR_BYTES);
    if (r != CUDA_SUCCESS) die("cuMemAlloc_v2", r);
    if ((r = drv_free(d)) != CUDA_SUCCESS) die("cuMemFree_v2", r);
}

/* ---- measured loops (names matched by callgrind --toggle-collect) ---- */

__attribute__((noinline)) void bench_measured_pairs(void (*pair)(void), long n)
{
    for (long i = 0; i < n; i++)
        pair();
}

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define BENCH_NVTX 1
/* n NVTX push/pop pairs of a range named "inner" (the NVTX front door's per-call
 * cost: no tool, the injection without a step range, with one that does not match). */
__attribute__((noinline)) void bench_measured_nvtx(long n)
{
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("inner");
        nvtxRangePop();
    }
}
#endif

__attribute__((noinline)) void bench_measured_unw(int depth, long n)
{
    void *buf[300];
    for (long i = 0; i < n; i++)
        sink += (uint64_t)unw_backtrace(buf, depth);
}

/* ---- recursion: F frames between main and the allocation call ---- */

typedef struct job {
    const char *mode;
    void (*pair)(void);
    long n;
    int depth;
    int base;           /* live allocations kept during the loop (--base, default 1) */
    void *keep[64];
} job;

static void run_job(job *j);

__attribute__((noinline)) static void nest(job *j, int frames)
{
    if (frames > 0)
        nest(j, frames - 1);
    else
        run_job(j);
    sink++;   /* keeps the call a call (no tail call) */
}

static void run_job(job *j)
{
    if (!strcmp(j->mode, "pairs")) {
        /* Live allocations that stay (a program's weights): the table is never empty,
         * as in a real job (uthash frees its bucket array when the last item goes). */
        for (int i = 0; i < j->base && i < 64; i++) {
            cudaError_t e = cudaMalloc(&j->keep[i], 1 << 20);
            if (e != cudaSuccess) die("cudaMalloc", e);
        }
        for (int i = 0; i < 200; i++)   /* warm: writer start, libunwind caches */
            j->pair();
        bench_measured_pairs(j->pair, j->n);
        for (int i = 0; i < j->base && i < 64; i++)
            cudaFree(j->keep[i]);
    } else if (!strcmp(j->mode, "unw")) {
        void *buf[300];
        for (int i = 0; i < 200; i++)
            sink += (uint64_t)unw_backtrace(buf, j->depth);
        bench_measured_unw(j->depth, j->n);
    }
}

/* ---- live allocations, RSS ---- */

static int live_mode(long n)
{
    void **ptrs = calloc((size_t)n, sizeof *ptrs);
    if (!ptrs)
        die("calloc", 0);
    pair_rt();   /* runtime + tracer initialised before the first reading */
    long rss0 = status_kb("VmRSS");
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        cudaError_t e = cudaMalloc(&ptrs[i], PAIR_BYTES);
        if (e != cudaSuccess) die("cudaMalloc", e);
    }
    uint64_t t1 = now_ns();
    long rss1 = status_kb("VmRSS"), hwm = status_kb("VmHWM");
    printf("live=%ld rss0_kb=%ld rss_kb=%ld hwm_kb=%ld alloc_ns=%llu\n", n, rss0, rss1, hwm,
           (unsigned long long)(t1 - t0));
    fflush(stdout);
    for (long i = 0; i < n; i++)
        cudaFree(ptrs[i]);
    free(ptrs);
    return 0;
}

/* ---- threads ---- */

typedef struct tjob { long n; } tjob;

static void *thread_main(void *arg)
{
    tjob *t = arg;
    for (long i = 0; i < t->n; i++)
        pair_rt();
    return NULL;
}

static int threads_mode(int nt, long n)
{
    pthread_t th[64];
    tjob tj = { n };
    if (nt < 1 || nt > 64)
        return 2;
    pair_rt();
    uint64_t t0 = now_ns();
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, thread_main, &tj);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    uint64_t t1 = now_ns();
    double s = (double)(t1 - t0) / 1e9;
    printf("threads=%d pairs=%ld wall_s=%.6f pairs_per_s=%.0f\n", nt, n * nt, s, (double)(n * nt) / s);
    return 0;
}

/* ---- training loop and churn (vt_bench.py --figures 3) ---- */

#define SITE(k) __attribute__((noinline)) static void *site_##k(size_t b) \
    { void *p = NULL; cudaError_t e = cudaMalloc(&p, b); if (e) die("cudaMalloc", e); return p; }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static void *(*const sites[8])(size_t) = { site_0, site_1, site_2, site_3, site_4, site_5, site_6, site_7 };

typedef struct train { long steps, allocs; uint64_t spin; } train;

__attribute__((noinline)) static void train_run(train *t)
{
    void *w = sites[0](64 << 20);
    void **tmp = calloc((size_t)t->allocs, sizeof *tmp);
    for (long s = 0; s < t->steps; s++) {
        for (long i = 0; i < t->allocs; i++)       /* forward: activations */
            tmp[i] = sites[1 + i % 7]((size_t)(4096 << (i % 8)));
        spin(t->spin);                            /* "kernels" */
        for (long i = t->allocs - 1; i >= 0; i--) /* backward frees them */
            cudaFree(tmp[i]);
        vramtrace_step();
    }
    cudaFree(w);
    free(tmp);
}

__attribute__((noinline)) static void train_nest(train *t, int frames)
{
    if (frames > 0)
        train_nest(t, frames - 1);
    else
        train_run(t);
    sink++;
}

#define ASITE(k) __attribute__((noinline)) static void *asite_##k(size_t b) \
    { void *p = NULL; cudaError_t e = cudaMallocAsync(&p, b, 0); if (e) die("cudaMallocAsync", e); return p; }
ASITE(0) ASITE(1) ASITE(2) ASITE(3) ASITE(4) ASITE(5) ASITE(6) ASITE(7)
static void *(*const asites[8])(size_t) = { asite_0, asite_1, asite_2, asite_3, asite_4, asite_5, asite_6, asite_7 };

/* The churn with stream-ordered pairs (cudaMallocAsync/cudaFreeAsync on the legacy
 * default stream), as PyTorch's cudaMallocAsync backend makes them. */
__attribute__((noinline)) static void churn_async_run(long pairs, uint64_t spin_iters)
{
    for (long i = 0; i < pairs; i++) {
        void *p = asites[i & 7]((size_t)(512 << (i & 7)));
        spin(spin_iters);
        cudaError_t e = cudaFreeAsync(p, 0);
        if (e) die("cudaFreeAsync", e);
    }
}

__attribute__((noinline)) static void churn_run(long pairs, uint64_t spin_iters)
{
    for (long i = 0; i < pairs; i++) {
        void *p = sites[i & 7]((size_t)(512 << (i & 7)));
        spin(spin_iters);
        cudaFree(p);
    }
}

/* ---- vramtrace_step() latency with a slow disk (vt_bench.py --figures 8) ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

__attribute__((noinline)) static int steplat_mode(long steps, long gap_us)
{
    if (steps < 1 || gap_us < 0)
        return 2;
    uint64_t *lat = calloc((size_t)steps, sizeof *lat);
    void **kept = calloc((size_t)steps, sizeof *kept);
    if (!lat || !kept)
        return 1;
    void *w = sites[0](64 << 20);
    vramtrace_step();   /* warm: the first step defines the stacks */
    struct timespec gap = { gap_us / 1000000, (gap_us % 1000000) * 1000 };
    for (long s = 0; s < steps; s++) {
        void *tmp[16];
        for (int i = 0; i < 16; i++)
            tmp[i] = sites[1 + i % 6]((size_t)(4096 << (i % 8)));
        kept[s] = sites[7](64 << 10);   /* one site grows every step */
        for (int i = 15; i >= 0; i--)
            cudaFree(tmp[i]);
        nanosleep(&gap, NULL);
        uint64_t t0 = now_ns();
        vramtrace_step();
        lat[s] = now_ns() - t0;
    }
    for (long s = 0; s < steps; s++)
        cudaFree(kept[s]);
    cudaFree(w);
    uint64_t sum = 0;
    for (long s = 0; s < steps; s++)
        sum += lat[s];
    qsort(lat, (size_t)steps, sizeof *lat, cmp_u64);
    printf("mode=steplat steps=%ld gap_us=%ld step_mean_us=%.3f step_p50_us=%.3f step_p99_us=%.3f "
           "step_max_us=%.3f\n", steps, gap_us, (double)sum / (double)steps / 1e3,
           (double)lat[steps / 2] / 1e3, (double)lat[(steps * 99) / 100 < steps ? (steps * 99) / 100 : steps - 1] / 1e3,
           (double)lat[steps - 1] / 1e3);
    free(lat);
    free(kept);
    return 0;
}

static void *idle_main(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int int_arg(int argc, char **argv, const char *name, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return atoi(argv[i + 1]);
    return def;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: see the top of bench/bench_alloc.c\n");
        return 2;
    }
    const char *mode = argv[1];
    int frames = int_arg(argc, argv, "--frames", 16);
    if (!strcmp(mode, "pairs") && argc >= 4) {
        job j = { "pairs", NULL, atol(argv[3]), 0, int_arg(argc, argv, "--base", 1), { 0 } };
        if (int_arg(argc, argv, "--idle-thread", 0)) {
            pthread_t idle;
            if (pthread_create(&idle, NULL, idle_main, NULL) != 0)
                return 1;
            pthread_detach(idle);
        }
        if (!strcmp(argv[2], "runtime")) {
            j.pair = pair_rt;
        } else if (!strcmp(argv[2], "driver")) {
            driver_setup();
            j.pair = pair_drv;
        } else {
            return 2;
        }
        uint64_t t0 = now_ns();
        nest(&j, frames);
        printf("mode=pairs path=%s n=%ld ns_per_pair=%.1f\n", argv[2], j.n,
               (double)(now_ns() - t0) / (double)(j.n ? j.n : 1));
        return 0;
    }
    if (!strcmp(mode, "unw") && argc >= 4) {
        job j = { "unw", NULL, atol(argv[3]), atoi(argv[2]), 0, { 0 } };
        if (j.depth < 1 || j.depth > 256)
            return 2;
        pair_rt();
        nest(&j, frames);
        printf("mode=unw depth=%d n=%ld\n", j.depth, j.n);
        return 0;
    }
#ifdef BENCH_NVTX
    if (!strcmp(mode, "nvtx")) {
        long n = atol(argv[2]);
        pair_rt();                /* the process's first CUDA call: the tracer is active */
        nvtxRangePushA("warm");   /* NVTX initialises (loads the injection) here */
        nvtxRangePop();
        uint64_t t0 = now_ns();
        bench_measured_nvtx(n);
        printf("mode=nvtx n=%ld ns_per_pair=%.1f\n", n, (double)(now_ns() - t0) / (double)(n ? n : 1));
        return 0;
    }
#endif
    if (!strcmp(mode, "live"))
        return live_mode(atol(argv[2]));
    if (!strcmp(mode, "threads") && argc >= 4)
        return threads_mode(atoi(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "train") && argc >= 5) {
        train t = { atol(argv[2]), atol(argv[3]), strtoull(argv[4], NULL, 10) };
        if (t.steps < 1 || t.allocs < 1)
            return 2;
        uint64_t t0 = now_ns();
        train_nest(&t, frames);
        printf("mode=train steps=%ld allocs_per_step=%ld wall_ns=%llu\n", t.steps, t.allocs,
               (unsigned long long)(now_ns() - t0));
        return 0;
    }
    if (!strcmp(mode, "churn") && argc >= 4) {
        long pairs = atol(argv[2]);
        uint64_t sp = strtoull(argv[3], NULL, 10);
        int async = int_arg(argc, argv, "--async", 0);
        uint64_t t0 = now_ns();
        if (async)
            churn_async_run(pairs, sp);
        else
            churn_run(pairs, sp);
        uint64_t dt = now_ns() - t0;
        printf("mode=churn%s pairs=%ld wall_ns=%llu pairs_per_s=%.0f\n", async ? "async" : "", pairs,
               (unsigned long long)dt, (double)pairs * 1e9 / (double)dt);
        return 0;
    }
    if (!strcmp(mode, "steplat") && argc >= 4)
        return steplat_mode(atol(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "calibrate")) {
        uint64_t target = strtoull(argv[2], NULL, 10), iters = 1000000;
        uint64_t best = UINT64_MAX;
        for (int r = 0; r < 5; r++) {
            uint64_t t0 = now_ns();
            spin(iters);
            uint64_t dt = now_ns() - t0;
            if (dt < best)
                best = dt;
        }
        printf("iters=%llu\n", (unsigned long long)((double)iters * (double)target / (double)best));
        return 0;
    }
    return 2;
}
