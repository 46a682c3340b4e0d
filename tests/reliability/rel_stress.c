/* rel_stress.c — many threads allocating and freeing every kind at random while the
 * writer snapshots every few milliseconds and another thread floods the process with
 * SIGUSR1 (each one a full "signal" snapshot). Run under LD_PRELOAD=libvramtrace.so on
 * the simulated device (CTest reliability_threads, issue 6 item 1).
 *
 *   rel_stress [THREADS [OPS_PER_THREAD]]     defaults 16 x 50000; env REL_SCALE
 *                                              (percent, default 100) scales OPS
 *
 * Each thread keeps 32 slots; an operation frees the slot's allocation if it holds
 * one, else allocates with one of: cudaMalloc, cudaMallocPitch, cudaMallocManaged,
 * cudaMallocHost, cudaHostAlloc, cudaMallocAsync, cudaMallocFromPoolAsync, and the
 * driver's cuMemAlloc_v2 obtained with cudaGetDriverEntryPointByVersion. The program
 * keeps its own count of live bytes (pitch allocations count pitch x height, as the
 * tracer does) and, with VT_EXPECT_TRACKED=1, compares it with
 * vramtrace_live_bytes(-1) at the end, with every thread's allocations still live,
 * and again after freeing everything (0).
 * Prints "ops N signals S live L" and exits 0 when every CUDA call succeeded and the
 * counts agree; 1 otherwise. Without the preload the signal storm is skipped (the
 * default action of SIGUSR1 would end the process) and the counts are not compared.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

#define SLOTS 32

static int nthreads = 16;
static long nops = 50000;
static int failures;            /* atomic */
static int stop_storm;          /* atomic */
static long signals_sent;
static cudaMemPool_t pool;
typedef CUresult (*drv_alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*drv_free_t)(CUdeviceptr);
static drv_alloc_t drv_alloc;
static drv_free_t drv_free;

typedef struct {
    void *p[SLOTS];
    uint64_t size[SLOTS];        /* bytes the tracer counts */
    int how[SLOTS];              /* how it was allocated (chooses the free) */
    uint64_t live;
    long ops;
} tstate;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static void fail(const char *what, int code)
{
    fprintf(stderr, "rel_stress: %s failed: %d\n", what, code);
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

static void release(tstate *t, int i)
{
    int r = 0;
    switch (t->how[i]) {
    case 0: case 1: case 2: r = cudaFree(t->p[i]); break;
    case 3: case 4: r = cudaFreeHost(t->p[i]); break;
    case 5: case 6: r = cudaFreeAsync(t->p[i], 0); break;
    case 7: r = drv_free((CUdeviceptr)(uintptr_t)t->p[i]); break;
    }
    if (r)
        fail("free", r);
    t->live -= t->size[i];
    t->p[i] = NULL;
}

static void take(tstate *t, int i, uint64_t *s)
{
    size_t n = 1 + rng(s) % 65536;
    int how = (int)(rng(s) % 8);
    int r = 0;
    void *p = NULL;
    uint64_t counted = n;
    switch (how) {
    case 0: r = cudaMalloc(&p, n); break;
    case 1: {
        size_t pitch = 0, h = 1 + n % 7;
        r = cudaMallocPitch(&p, &pitch, n / h + 1, h);
        counted = (uint64_t)pitch * h;
        break;
    }
    case 2: r = cudaMallocManaged(&p, n, cudaMemAttachGlobal); break;
    case 3: r = cudaMallocHost(&p, n); break;
    case 4: r = cudaHostAlloc(&p, n, cudaHostAllocDefault); break;
    case 5: r = cudaMallocAsync(&p, n, 0); break;
    case 6: r = cudaMallocFromPoolAsync(&p, n, pool, 0); break;
    case 7: {
        CUdeviceptr d = 0;
        r = drv_alloc(&d, n);
        p = (void *)(uintptr_t)d;
        break;
    }
    }
    if (r) {
        fail("allocation", r);
        return;
    }
    t->p[i] = p;
    t->size[i] = counted;
    t->how[i] = how;
    t->live += counted;
}

static void *worker(void *arg)
{
    tstate *t = arg;
    uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)arg;
    if (cudaSetDevice(0))   /* makes the primary context current for the driver calls */
        fail("cudaSetDevice", 1);
    for (long k = 0; k < nops; k++) {
        int i = (int)(rng(&s) % SLOTS);
        if (t->p[i])
            release(t, i);
        else
            take(t, i, &s);
        t->ops++;
    }
    return NULL;
}

static void *storm(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 2000000};   /* every 2 ms */
    while (!__atomic_load_n(&stop_storm, __ATOMIC_ACQUIRE)) {
        kill(getpid(), SIGUSR1);
        signals_sent++;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    if (argc > 1) nthreads = atoi(argv[1]);
    if (argc > 2) nops = atol(argv[2]);
    const char *sc = getenv("REL_SCALE");
    if (sc && atoi(sc) > 0)
        nops = nops * atoi(sc) / 100;
    if (nthreads < 1 || nthreads > 256 || nops < 1) {
        fprintf(stderr, "usage: rel_stress [THREADS(1-256) [OPS]]\n");
        return 2;
    }
    void *warm;
    if (cudaMalloc(&warm, 1) || cudaFree(warm)) {   /* the preload installs its handler here */
        fprintf(stderr, "rel_stress: no device\n");
        return 1;
    }
    enum cudaDriverEntryPointQueryResult q;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) ||
        cudaGetDriverEntryPointByVersion("cuMemAlloc", (void **)&drv_alloc, 12000, cudaEnableDefault, &q) ||
        cudaGetDriverEntryPointByVersion("cuMemFree", (void **)&drv_free, 12000, cudaEnableDefault, &q) ||
        !drv_alloc || !drv_free) {
        fprintf(stderr, "rel_stress: set-up failed\n");
        return 1;
    }
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    int have_handler = !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;

    tstate *ts = calloc((size_t)nthreads, sizeof *ts);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    pthread_t st;
    int storming = have_handler && pthread_create(&st, NULL, storm, NULL) == 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker, &ts[i])) {
            fprintf(stderr, "rel_stress: pthread_create failed\n");
            return 1;
        }
    uint64_t live = 0;
    long ops = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        live += ts[i].live;
        ops += ts[i].ops;
    }
    if (storming) {
        __atomic_store_n(&stop_storm, 1, __ATOMIC_RELEASE);
        pthread_join(st, NULL);
    }
    cudaStreamSynchronize(0);
    if (tracked && vramtrace_live_bytes(-1) != live) {
        fprintf(stderr, "rel_stress: tracer live bytes %llu, program's own count %llu\n",
                (unsigned long long)vramtrace_live_bytes(-1), (unsigned long long)live);
        failures++;
    }
    printf("ops %ld signals %ld live %llu\n", ops, signals_sent, (unsigned long long)live);
    if (tracked && vramtrace_snapshot("before-free") != 0) {
        fprintf(stderr, "rel_stress: manual snapshot failed\n");
        failures++;
    }
    for (int t = 0; t < nthreads; t++)
        for (int i = 0; i < SLOTS; i++)
            if (ts[t].p[i])
                release(&ts[t], i);
    if (tracked && vramtrace_live_bytes(-1) != 0) {
        fprintf(stderr, "rel_stress: %llu bytes live after freeing everything\n",
                (unsigned long long)vramtrace_live_bytes(-1));
        failures++;
    }
    free(ts);
    free(th);
    return failures ? 1 : 0;
}
