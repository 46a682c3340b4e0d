/* rel_race.c — adversarial programs for the allocation fast path (vt_core / vt_index /
 * vt_lock): races between frees that fail, re-allocation, snapshots, fork, cancellation
 * and context resets. Run under LD_PRELOAD=libvramtrace.so on the simulated device by
 * check_reliability.py (CTest reliability_race_*). One scenario per run:
 *
 *   rel_race failfree T OPS  T threads allocate (cudaMalloc / cudaMallocHost) and free
 *                            at random; a third of the frees first go the wrong way
 *                            (cudaFreeHost of a device pointer, cudaFree of an interior
 *                            pointer: each must fail exactly as without the preload;
 *                            no double free, another thread may own the address by
 *                            then), while one thread
 *                            snapshots and another sends SIGUSR1. Live bytes must be
 *                            exact at the end and 0 after freeing everything.
 *   rel_race grow N          N live 256-byte allocations at once (the index grows past
 *                            2^20 slots for N > 786,432), a manual snapshot, then frees
 *                            every other one, reallocates them, frees all: exact.
 *   rel_race cancel T        T threads loop cudaMalloc / cudaFree (and now and then
 *                            vramtrace_snapshot / vramtrace_step) with deferred
 *                            cancellation (their only cancellation point is
 *                            pthread_testcancel between calls); they are cancelled one
 *                            by one while the others go on. Live bytes must equal the
 *                            cancelled threads' leftovers (a cancellation inside a
 *                            hook would lose or keep one), then the main thread goes on.
 *   rel_race fork T K        T threads allocate from ever new call stacks while the main
 *                            thread forks K children (between two CUDA calls of each
 *                            thread: simcuda is not fork-safe) with snapshots and a
 *                            SIGUSR1 storm running; each child (alarm 20 s) allocates
 *                            from new stacks, checks its own live bytes, snapshots and
 *                            exits 0; the parent waits for every child.
 *   rel_race reset T R       T threads churn while the main thread resets the primary
 *                            context R times (cudaDeviceReset); frees of pointers that
 *                            a reset took fail. After a final reset live bytes are 0.
 *   rel_race dfree R         R rounds: the main thread allocates, two threads free the
 *                            same pointer at once (exactly one free succeeds), a third
 *                            stalls them at random moments with SIGUSR2. No
 *                            bytes may stay live (a record taken by the losing free
 *                            must not be put back when its real free fails).
 *   rel_race sigquery N      N cudaMalloc (+ cudaFree) + vramtrace_live_bytes on the main
 *                            thread while another churns and a third sends it SIGUSR2
 *                            every 50 us, whose handler calls vramtrace_live_bytes
 *                            (lands inside hooks and inside the main thread's own
 *                            query), and in turn the rest of the client API (peak,
 *                            peak interval, scope begin/leaked, step, snapshot): no
 *                            hang, no slow handler, live bytes exact.
 *   rel_race twofail R       two threads each call cudaFreeHost on the same live
 *                            device pointer R times (all fail): it stays live.
 *   rel_race failloop S      2 threads free their own live pointer with the wrong API
 *                            for S seconds (all fail) while 2 threads churn: both
 *                            pointers stay live (a failed free's record survives the
 *                            ring laps that go by before its thread restores it).
 *   rel_race errno           every hooked API, success and failure, with errno set to a
 *                            marker before the call: prints errno after each (must match
 *                            a run without the preload).
 * Prints "ok ..." and exits 0, or "FAIL: ..." on stderr and exits 1. Without
 * VT_EXPECT_TRACKED=1 the tracker's numbers are not compared.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

static int tracked;
static int stop;                /* atomic */
static int failures;            /* atomic */

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static void failf(const char *what, long a, long b)
{
    fprintf(stderr, "FAIL: %s (%ld vs %ld)\n", what, a, b);
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

static void check_live(const char *what, uint64_t want)
{
    if (!tracked)
        return;
    uint64_t got = vramtrace_live_bytes(-1);
    if (got != want)
        failf(what, (long)got, (long)want);
}

/* ---- background noise: snapshots and SIGUSR1 ---- */

static void *snapper(void *a)
{
    (void)a;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        vramtrace_snapshot("race");
        usleep(500);
    }
    return NULL;
}

static void *storm(void *a)
{
    (void)a;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        kill(getpid(), SIGUSR1);
        usleep(1000);
    }
    return NULL;
}

static pthread_t noise[2];
static int n_noise;

static void noise_start(void)
{
    pthread_create(&noise[n_noise++], NULL, snapper, NULL);
    if (tracked)  /* without the preload SIGUSR1 would end the process */
        pthread_create(&noise[n_noise++], NULL, storm, NULL);
}

static void noise_stop(void)
{
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < n_noise; i++)
        pthread_join(noise[i], NULL);
    n_noise = 0;
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
}

/* Starts the noise threads, then nt workers fn(state i), the states `stride` bytes
 * apart in `states`, each state's 64-bit seed (at seed_off) set to mul * (i + add)
 * first. Returns the threads (calloc'd; the caller joins them). */
static pthread_t *start_workers(int nt, void *states, size_t stride, size_t seed_off,
                                void *(*fn)(void *), uint64_t mul, uint64_t add)
{
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    noise_start();
    for (int i = 0; i < nt; i++) {
        char *state = (char *)states + (size_t)i * stride;
        uint64_t seed = mul * ((uint64_t)i + add);
        memcpy(state + seed_off, &seed, sizeof seed);
        pthread_create(&th[i], NULL, fn, state);
    }
    return th;
}

/* ---- failfree ---- */

#define SLOTS 64
static long ff_ops = 20000;

typedef struct {
    void *p[SLOTS];
    size_t size[SLOTS];
    int host[SLOTS];
    uint64_t live, seed;
} ffstate;

static void *ff_thread(void *a)
{
    ffstate *t = a;
    for (long op = 0; op < ff_ops; op++) {
        int i = (int)(rng(&t->seed) % SLOTS);
        int r;
        if (!t->p[i]) {
            size_t sz = 256 + (size_t)(rng(&t->seed) % 65536);
            int host = rng(&t->seed) % 4 == 0;
            r = host ? cudaMallocHost(&t->p[i], sz) : cudaMalloc(&t->p[i], sz);
            if (r) { failf("alloc", r, 0); t->p[i] = NULL; continue; }
            t->size[i] = sz;
            t->host[i] = host;
            t->live += sz;
            continue;
        }
        switch (rng(&t->seed) % 6) {
        case 0:  /* the wrong free first */
            r = t->host[i] ? cudaFree((char *)t->p[i] + 1) : cudaFreeHost(t->p[i]);
            if (r == cudaSuccess) failf("wrong free succeeded", r, 0);
            break;
        case 1:  /* an interior pointer */
            r = t->host[i] ? cudaFreeHost((char *)t->p[i] + 16) : cudaFree((char *)t->p[i] + 16);
            if (r == cudaSuccess) failf("interior free succeeded", r, 0);
            break;
        default:
            break;
        }
        r = t->host[i] ? cudaFreeHost(t->p[i]) : cudaFree(t->p[i]);
        if (r) failf("free", r, 0);
        t->live -= t->size[i];
        t->p[i] = NULL;
    }
    return NULL;
}

static int run_failfree(int nt)
{
    ffstate *st = calloc((size_t)nt, sizeof *st);
    pthread_t *th = start_workers(nt, st, sizeof *st, offsetof(ffstate, seed), ff_thread,
                                  0x9e3779b97f4a7c15ull, 1);
    uint64_t live = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(th[i], NULL);
        live += st[i].live;
    }
    noise_stop();
    check_live("failfree: live bytes with every thread's leftovers", live);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < SLOTS; j++)
            if (st[i].p[j]) {
                int r = st[i].host[j] ? cudaFreeHost(st[i].p[j]) : cudaFree(st[i].p[j]);
                if (r) failf("final free", r, 0);
            }
    check_live("failfree: live bytes after freeing everything", 0);
    printf("ok failfree threads %d ops %ld live %llu\n", nt, ff_ops, (unsigned long long)live);
    return 0;
}

/* ---- grow ---- */

static int run_grow(long n)
{
    void **p = calloc((size_t)n, sizeof *p);
    for (long i = 0; i < n; i++)
        if (cudaMalloc(&p[i], 256)) { failf("grow alloc", i, n); return 1; }
    check_live("grow: all live", (uint64_t)n * 256);
    vramtrace_snapshot("grown");
    for (long i = 0; i < n; i += 2)
        if (cudaFree(p[i])) { failf("grow free", i, n); return 1; }
    check_live("grow: half live", (uint64_t)(n / 2) * 256);
    for (long i = 0; i < n; i += 2)
        if (cudaMalloc(&p[i], 512)) { failf("grow realloc", i, n); return 1; }
    check_live("grow: realloc", (uint64_t)(n / 2) * 256 + (uint64_t)((n + 1) / 2) * 512);
    for (long i = 0; i < n; i++)
        if (cudaFree(p[i])) { failf("grow final free", i, n); return 1; }
    check_live("grow: none live", 0);
    printf("ok grow %ld\n", n);
    return 0;
}

/* ---- cancel ---- */

typedef struct {
    uint64_t live;   /* bytes this thread holds, exact at every pthread_testcancel */
    uint64_t seed;
    void *p[8];
    size_t size[8];
} cstate;

static void *cancel_thread(void *a)
{
    cstate *t = a;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    for (;;) {
        int i = (int)(rng(&t->seed) % 8);
        if (t->p[i]) {
            if (cudaFree(t->p[i])) failf("cancel free", 0, 0);
            t->live -= t->size[i];
            t->p[i] = NULL;
        } else {
            size_t sz = 256 * (1 + (size_t)(rng(&t->seed) % 64));
            if (cudaMalloc(&t->p[i], sz) == cudaSuccess) {
                t->size[i] = sz;
                t->live += sz;
            } else {
                failf("cancel alloc", 0, 0);
                t->p[i] = NULL;
            }
        }
        uint64_t r = rng(&t->seed) % 64;
        if (r == 0)           /* the API's own paths, cancelled too */
            vramtrace_snapshot("in-cancel");
        else if (r == 1)
            vramtrace_step();
        else if (r == 2)
            (void)vramtrace_live_bytes(-1);
        pthread_testcancel();
    }
    return NULL;
}

static int run_cancel(int nt)
{
    cstate *st = calloc((size_t)nt, sizeof *st);
    pthread_t *th = start_workers(nt, st, sizeof *st, offsetof(cstate, seed), cancel_thread,
                                  0x2545f4914f6cdd1dull, 7);
    uint64_t live = 0;
    for (int i = 0; i < nt; i++) {
        usleep(20000);
        pthread_cancel(th[i]);
        void *r;
        pthread_join(th[i], &r);
        if (r != PTHREAD_CANCELED) failf("thread not cancelled", i, 0);
        live += st[i].live;
    }
    noise_stop();
    check_live("cancel: live bytes = the cancelled threads' leftovers", live);
    void *q;
    if (cudaMalloc(&q, 4096)) failf("main alloc after cancel", 0, 0);
    check_live("cancel: main alloc", live + 4096);
    if (cudaFree(q)) failf("main free after cancel", 0, 0);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < 8; j++)
            if (st[i].p[j] && cudaFree(st[i].p[j])) failf("cancel final free", i, j);
    check_live("cancel: none live", 0);
    if (tracked && vramtrace_snapshot("after-cancel") != 0) failf("snapshot after cancel", 0, 0);
    printf("ok cancel threads %d\n", nt);
    return 0;
}

/* ---- fork ---- */

/* Allocates from a call stack `depth` frames deeper than the caller (new stacks). */
static __attribute__((noinline)) int deep_alloc(int depth, void **p, size_t sz)
{
    if (depth > 0) {
        int r = deep_alloc(depth - 1, p, sz);
        __asm__ volatile("" ::: "memory");   /* no tail call */
        return r;
    }
    return cudaMalloc(p, sz);
}

/* simcuda's driver lock is not fork-safe (no pthread_atfork; nor is real CUDA usable
 * in a forked child): the hammer threads hold this read lock around each CUDA call and
 * fork takes it for writing, so the driver is idle at fork. The tracer's own state is
 * not: its writer, the snapshot thread and the SIGUSR1 storm keep the core lock and
 * the writer busy while the main thread forks. */
static pthread_rwlock_t cuda_rw = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static void *fork_thread(void *a)
{
    uint64_t seed = (uintptr_t)a * 0x9e3779b97f4a7c15ull + 1;
    void *p[16] = {0};
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        int i = (int)(rng(&seed) % 16);
        pthread_rwlock_rdlock(&cuda_rw);
        if (p[i]) {
            cudaFree(p[i]);
            p[i] = NULL;
        } else if (deep_alloc((int)(rng(&seed) % 40), &p[i], 4096)) {
            p[i] = NULL;
        }
        pthread_rwlock_unlock(&cuda_rw);
    }
    for (int i = 0; i < 16; i++)
        if (p[i])
            cudaFree(p[i]);
    return NULL;
}

static int run_fork(int nt, int k)
{
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, fork_thread, (void *)(uintptr_t)(i + 1));
    int bad = 0;
    noise_start();
    for (int c = 0; c < k; c++) {
        usleep(2000);
        pthread_rwlock_wrlock(&cuda_rw);
        pid_t pid = fork();
        if (pid != 0)
            pthread_rwlock_unlock(&cuda_rw);
        if (pid == 0) {
            alarm(20);
            void *p[6];
            for (int i = 0; i < 6; i++)
                if (deep_alloc(41 + c % 7 + i, &p[i], 8192)) _exit(2);
            if (tracked && vramtrace_live_bytes(-1) != 6 * 8192) _exit(3);
            if (tracked && vramtrace_snapshot("child") != 0) _exit(4);
            for (int i = 0; i < 6; i++)
                if (cudaFree(p[i])) _exit(5);
            if (tracked && vramtrace_live_bytes(-1) != 0) _exit(6);
            _exit(0);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid) { bad++; continue; }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "FAIL: child %d: status 0x%x%s\n", c, st,
                    WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? " (hung: deadlock)" : "");
            bad++;
        }
    }
    noise_stop();
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    check_live("fork: parent live after its threads freed everything", 0);
    if (bad)
        __atomic_add_fetch(&failures, bad, __ATOMIC_RELAXED);
    printf("ok fork threads %d children %d\n", nt, k);
    return 0;
}

/* ---- reset ---- */

static void *reset_thread(void *a)
{
    uint64_t seed = (uintptr_t)a * 0x9e3779b97f4a7c15ull + 3;
    void *p[16] = {0};
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        int i = (int)(rng(&seed) % 16);
        if (p[i]) {
            cudaFree(p[i]);   /* fails when a reset took it: fine */
            p[i] = NULL;
        } else if (cudaMalloc(&p[i], 256 * (1 + rng(&seed) % 16))) {
            p[i] = NULL;
        }
    }
    return NULL;
}

static int run_reset(int nt, int resets)
{
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    noise_start();
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, reset_thread, (void *)(uintptr_t)(i + 1));
    for (int r = 0; r < resets; r++) {
        usleep(3000);
        cudaDeviceReset();
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    noise_stop();
    if (cudaDeviceReset()) failf("final reset", 0, 0);
    check_live("reset: live bytes after the final reset", 0);
    void *q;
    if (cudaMalloc(&q, 1024)) failf("alloc after reset", 0, 0);
    check_live("reset: one allocation after the reset", 1024);
    cudaFree(q);
    check_live("reset: none", 0);
    printf("ok reset threads %d resets %d\n", nt, resets);
    return 0;
}

/* ---- dfree ---- */

/* Two threads free the same pointer at the same moment (a double free race of the
 * program: CUDA lets exactly one succeed). Whichever wins, nothing stays live. */
static pthread_barrier_t df_bar;
static void *volatile df_ptr;
static int df_rounds = 3000;
static int df_ok[2];

static void *df_thread(void *a)
{
    int me = (int)(uintptr_t)a;
    for (int r = 0; r < df_rounds; r++) {
        pthread_barrier_wait(&df_bar);      /* main allocated df_ptr */
        if (cudaFree(df_ptr) == cudaSuccess)
            df_ok[me]++;
        pthread_barrier_wait(&df_bar);      /* both frees returned */
    }
    return NULL;
}

/* Jitter: SIGUSR2 at random moments stalls a freeing thread for ~50 us wherever it
 * is (between the tracker's take and the real free, too), so the other free can
 * overtake it. */
static void df_stall(int sig)
{
    (void)sig;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 50000);
}

static pthread_t df_th[2];

static void *df_jitter(void *a)
{
    uint64_t seed = 77;
    (void)a;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        pthread_kill(df_th[rng(&seed) & 1], SIGUSR2);
        usleep(20 + (useconds_t)(rng(&seed) % 200));
    }
    return NULL;
}

static int run_dfree(int rounds)
{
    if (rounds > 0)
        df_rounds = rounds;
    pthread_t *th = df_th, jit;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = df_stall;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
    pthread_barrier_init(&df_bar, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, df_thread, (void *)(uintptr_t)i);
    pthread_create(&jit, NULL, df_jitter, NULL);
    for (int r = 0; r < df_rounds; r++) {
        void *p;
        if (cudaMalloc(&p, 4096)) { failf("dfree alloc", r, 0); return 1; }
        df_ptr = p;
        pthread_barrier_wait(&df_bar);
        pthread_barrier_wait(&df_bar);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(jit, NULL);
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
    if (df_ok[0] + df_ok[1] != df_rounds) failf("dfree: frees that succeeded", df_ok[0] + df_ok[1], df_rounds);
    check_live("dfree: live bytes after every pointer was freed once", 0);
    printf("ok dfree rounds %d\n", df_rounds);
    return 0;
}

/* ---- sigquery ---- */

/* A signal handler asks vramtrace_live_bytes while its thread is anywhere: inside an
 * allocation or free hook (between the ring claim and publish, or in the real CUDA
 * call with the C library's locks held) or inside a query of its own that holds the
 * core lock. The handler must return promptly (it gets the state as last applied)
 * and nothing may be lost. */
static volatile uint64_t sq_sink;
static int sq_stop;   /* atomic */
static uint64_t sq_worst_ns;
static unsigned sq_n;
static void sq_handler(int sig)
{
    (void)sig;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    sq_sink += vramtrace_live_bytes(-1);
    switch (sq_n++ % 6) {   /* the rest of the client API, in turn */
    case 0: sq_sink += vramtrace_peak_bytes(-1); break;
    case 1: sq_sink += vramtrace_peak_interval_bytes(); break;
    case 2: vramtrace_scope_begin(); break;
    case 3: sq_sink += vramtrace_scope_leaked_bytes(); break;
    case 4: vramtrace_step(); break;
    default: if (sq_n % 60 == 5) sq_sink += (uint64_t)vramtrace_snapshot("sigquery"); break;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint64_t d = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)(b.tv_nsec - a.tv_nsec);
    if (d > sq_worst_ns)
        sq_worst_ns = d;
}
static pthread_t sq_main;
static void *sq_kicker(void *a)
{
    (void)a;
    while (!__atomic_load_n(&sq_stop, __ATOMIC_ACQUIRE)) {
        pthread_kill(sq_main, SIGUSR2);
        usleep(50);
    }
    return NULL;
}
/* cudaMalloc + cudaFree of 256 bytes until *stop (an int, atomic) is set: the
 * background churn of the sigquery and failloop modes. */
static void *churn_until(void *stop)
{
    while (!__atomic_load_n((int *)stop, __ATOMIC_ACQUIRE)) {
        void *q;
        if (cudaMalloc(&q, 256) == cudaSuccess)
            cudaFree(q);
    }
    return NULL;
}
static int run_sigquery(long iters)
{
    sq_main = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sq_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
    pthread_t k, ch;
    pthread_create(&ch, NULL, churn_until, &sq_stop);
    pthread_create(&k, NULL, sq_kicker, NULL);
    void *held[64];
    int nh = 0;
    uint64_t want = 0;
    for (long i = 0; i < iters; i++) {
        void *p;
        if (cudaMalloc(&p, 1024) != cudaSuccess) { failf("sigquery alloc", i, 0); break; }
        if (nh < 64 && i % 97 == 0) { held[nh++] = p; want += 1024; }
        else cudaFree(p);
        sq_sink += vramtrace_live_bytes(-1);   /* the handler may land in this one */
    }
    __atomic_store_n(&sq_stop, 1, __ATOMIC_RELEASE);
    pthread_join(k, NULL);
    pthread_join(ch, NULL);
    signal(SIGUSR2, SIG_IGN);
    check_live("sigquery: live bytes with the held blocks", want);
    for (int i = 0; i < nh; i++)
        cudaFree(held[i]);
    check_live("sigquery: live bytes after freeing them", 0);
    if (sq_worst_ns > 2000000000ull)
        failf("sigquery: slowest handler (ms)", (long)(sq_worst_ns / 1000000), 2000);
    printf("ok sigquery iterations %ld slowest handler %.3f ms\n", iters, sq_worst_ns / 1e6);
    return 0;
}

/* ---- twofail ---- */

/* Two threads free the same live pointer with the wrong API at once, again and
 * again: both frees fail, so it must stay live (the free that took the record puts
 * it back, the one that found nothing does nothing). */
static void *tf_ptr;
static int tf_rounds = 20000, tf_succeeded;
static void *tf_thread(void *a)
{
    (void)a;
    for (int r = 0; r < tf_rounds; r++)
        if (cudaFreeHost(tf_ptr) == cudaSuccess)
            __atomic_add_fetch(&tf_succeeded, 1, __ATOMIC_RELAXED);
    return NULL;
}
static int run_twofail(int rounds)
{
    if (rounds > 0)
        tf_rounds = rounds;
    if (cudaMalloc(&tf_ptr, 1 << 20)) { failf("twofail alloc", 0, 0); return 1; }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, tf_thread, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    if (tf_succeeded) failf("twofail: wrong-API frees that succeeded", tf_succeeded, 0);
    check_live("twofail: live bytes (the pointer was never freed)", 1 << 20);
    cudaFree(tf_ptr);
    check_live("twofail: live bytes after its real free", 0);
    printf("ok twofail rounds %d\n", tf_rounds);
    return 0;
}

/* ---- failloop ---- */

/* F threads free their own live pointer with the wrong API over and over (every free
 * fails, so each must stay live) while C threads churn cudaMalloc/cudaFree: the failed
 * frees' records must come back although many ring laps of other events go by while
 * their threads wait for the CPU. */
static int fl_stop;   /* atomic */
static void *fl_fail(void *a)
{
    void **p = a;
    while (!__atomic_load_n(&fl_stop, __ATOMIC_ACQUIRE))
        if (cudaFreeHost(*p) == cudaSuccess)
            failf("failloop: a wrong-API free succeeded", 1, 0);
    return NULL;
}
static int run_failloop(int secs)
{
    enum { F = 2, C = 2 };
    static void *held[F];
    pthread_t th[F + C];
    for (int i = 0; i < F; i++) {
        if (cudaMalloc(&held[i], 4096)) { failf("failloop alloc", i, 0); return 1; }
        pthread_create(&th[i], NULL, fl_fail, &held[i]);
    }
    for (int i = 0; i < C; i++)
        pthread_create(&th[F + i], NULL, churn_until, &fl_stop);
    sleep((unsigned)secs);
    __atomic_store_n(&fl_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < F + C; i++)
        pthread_join(th[i], NULL);
    check_live("failloop: live bytes (the failing threads' pointers)", F * 4096);
    for (int i = 0; i < F; i++)
        cudaFree(held[i]);
    check_live("failloop: live bytes after their real frees", 0);
    printf("ok failloop %d s\n", secs);
    return 0;
}

/* ---- errno ---- */

#define E(call) do { errno = 4242; int r_ = (int)(call); printf("%-48s rc %d errno %d\n", #call, r_, errno); } while (0)

static int run_errno(void)
{
    void *d = NULL, *h = NULL, *m = NULL, *a = NULL;
    size_t pitch;
    CUdeviceptr dp = 0;
    E(cudaMalloc(&d, 4096));
    E(cudaMallocHost(&h, 4096));
    E(cudaMallocManaged(&m, 4096, cudaMemAttachGlobal));
    E(cudaMallocPitch(&a, &pitch, 100, 10));
    E(cudaFree(a));
    E(cudaMallocAsync(&a, 4096, 0));
    E(cudaFreeAsync(a, 0));
    E(cuMemAlloc_v2(&dp, 4096));
    E(cuMemFree_v2(dp));
    E(cuMemFree_v2(dp));                      /* double free */
    E(cudaFreeHost(d));                       /* wrong free of a tracked pointer */
    E(cudaFree((char *)d + 8));               /* interior pointer */
    E(cudaFree(d));
    E(cudaFree(d));                           /* double free */
    E(cudaFreeHost(h));
    E(cudaFreeHost(h));
    E(cudaFree(m));
    E(cudaFree((void *)0x1234));              /* foreign pointer */
    E(cudaFree(NULL));
    E(cudaMalloc(&d, (size_t)1 << 50));       /* out of memory */
    E(cudaMalloc(NULL, 16));                  /* invalid argument */
    E(cudaMalloc(&d, 0));
    E(cudaFree(d));
    E(cudaDeviceReset());
    printf("ok errno\n");
    return 0;
}

int main(int argc, char **argv)
{
    tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;
    void *warm;
    cudaMalloc(&warm, 256);   /* context and writer up before the threads */
    cudaFree(warm);
    int rc;
    if (!strcmp(mode, "failfree")) {
        if (b > 0) ff_ops = b;
        rc = run_failfree(a > 0 ? (int)a : 8);
    } else if (!strcmp(mode, "grow")) {
        rc = run_grow(a > 0 ? a : 1100000);
    } else if (!strcmp(mode, "cancel")) {
        rc = run_cancel(a > 0 ? (int)a : 8);
    } else if (!strcmp(mode, "fork")) {
        rc = run_fork(a > 0 ? (int)a : 4, b > 0 ? (int)b : 20);
    } else if (!strcmp(mode, "reset")) {
        rc = run_reset(a > 0 ? (int)a : 4, b > 0 ? (int)b : 20);
    } else if (!strcmp(mode, "dfree")) {
        rc = run_dfree((int)a);
    } else if (!strcmp(mode, "errno")) {
        rc = run_errno();
    } else if (!strcmp(mode, "sigquery")) {
        rc = run_sigquery(a > 0 ? a : 200000);
    } else if (!strcmp(mode, "twofail")) {
        rc = run_twofail((int)a);
    } else if (!strcmp(mode, "failloop")) {
        rc = run_failloop(a > 0 ? (int)a : 2);
    } else {
        fprintf(stderr, "usage: rel_race failfree|grow|cancel|fork|reset|dfree|errno|sigquery|twofail|failloop [A [B]]\n");
        return 2;
    }
    return rc || __atomic_load_n(&failures, __ATOMIC_RELAXED) ? 1 : 0;
}
