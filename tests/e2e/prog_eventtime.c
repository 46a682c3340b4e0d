/* prog_eventtime.c — allocations and frees whose times the program knows: each call
 * is bracketed by two CLOCK_MONOTONIC reads, printed as
 *   <op> <addr hex> <before_ns> <after_ns>     (op: A = cudaMalloc, F = cudaFree)
 * so that check_eventtime.py can hold every event-trace record to its call's interval.
 * Two threads; between calls each waits 0..300 us (busy) and every 16th pair sleeps
 * 3 ms, so the preload's writer drains between a free and the next calls.
 * Before the threads, one unprinted pair of 1 byte activates the preload (not with
 * --no-warm-up: the two threads' first calls then meet the activation).
 * Usage: prog_eventtime PAIRS_PER_THREAD [--no-warm-up]. Exit 0, or 1 on a CUDA error.
 *
 * Built as prog_eventtime_slew (VT_SLEW): the program exports its own clock_gettime,
 * which every caller in the process reaches (the preload's included), and which from
 * one moment on runs CLOCK_MONOTONIC 500 ppm fast, as the kernel does while NTP slews
 * it (the TSC keeps its rate). With --slew: after the warm-up, 300 ms at the true rate,
 * one unprinted pair and a query (the preload applies it: a calibration point), then the
 * slew begins and the threads make their pairs 50 ms apart (the writer's drains, a
 * second apart, fall while it lasts). With --slew-burst the same, the pairs at the
 * usual pace (run with VRAMTRACE_INTERVAL_MS=0 and fewer events than the ring's kick:
 * one drain at exit applies them all, in several holds of the core lock). */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int pairs;
static int slow;   /* --slew: pairs 50 ms apart */

#ifdef VT_SLEW
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "vramtrace.h"
#define SLEW_PPM 500
static uint64_t slew_from;   /* CLOCK_MONOTONIC ns (true) the slew begins; 0: none */
static int (*real_gettime)(clockid_t, struct timespec *);

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec *ts)
{
    int (*f)(clockid_t, struct timespec *) = __atomic_load_n(&real_gettime, __ATOMIC_ACQUIRE);
    int r = f ? f(id, ts) : (int)syscall(SYS_clock_gettime, id, ts);
    uint64_t from = __atomic_load_n(&slew_from, __ATOMIC_ACQUIRE);
    if (r == 0 && id == CLOCK_MONOTONIC && from) {
        uint64_t m = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
        if (m > from)
            m += (m - from) * SLEW_PPM / 1000000;
        ts->tv_sec = (time_t)(m / 1000000000ull);
        ts->tv_nsec = (long)(m % 1000000000ull);
    }
    return r;
}
#endif
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_us(unsigned us)
{
    uint64_t until = now_ns() + us * 1000ull;
    while (now_ns() < until)
        ;
}

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < pairs; i++) {
        void *p = NULL;
        size_t size = 4096u << (rand_r(&seed) % 8);
        uint64_t a0 = now_ns();
        cudaError_t r = cudaMalloc(&p, size);
        uint64_t a1 = now_ns();
        if (r != cudaSuccess)
            return (void *)1;
        spin_us(rand_r(&seed) % 300);
        uint64_t f0 = now_ns();
        r = cudaFree(p);
        uint64_t f1 = now_ns();
        if (r != cudaSuccess)
            return (void *)1;
        pthread_mutex_lock(&out_lock);
        printf("A %llx %llu %llu\nF %llx %llu %llu\n", (unsigned long long)(uintptr_t)p,
               (unsigned long long)a0, (unsigned long long)a1, (unsigned long long)(uintptr_t)p,
               (unsigned long long)f0, (unsigned long long)f1);
        pthread_mutex_unlock(&out_lock);
        if (slow) {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        } else if (i % 16 == 15) {
            struct timespec ts = {0, 3000000};
            nanosleep(&ts, NULL);
        } else {
            spin_us(rand_r(&seed) % 300);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pairs = argc > 1 ? atoi(argv[1]) : 100;
    /* the first CUDA call activates the preload: made alone, so that no other
     * thread's call is forwarded unrecorded while it does (vt_preload_activate) */
    void *warm = NULL;
    if (!(argc > 2 && !strcmp(argv[2], "--no-warm-up")) &&
        (cudaMalloc(&warm, 1) != cudaSuccess || cudaFree(warm) != cudaSuccess))
        return 1;
#ifdef VT_SLEW
    __atomic_store_n(&real_gettime, (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime"),
                     __ATOMIC_RELEASE);
    if (argc > 2 && (!strcmp(argv[2], "--slew") || !strcmp(argv[2], "--slew-burst"))) {
        slow = !strcmp(argv[2], "--slew");
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        void *p = NULL;
        if (cudaMalloc(&p, 1) != cudaSuccess || cudaFree(p) != cudaSuccess)
            return 1;
        (void)vramtrace_live_bytes(-1);   /* applies the pair: a calibration point */
        __atomic_store_n(&slew_from, now_ns(), __ATOMIC_RELEASE);
    }
#endif
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        void *rv;
        pthread_join(t[i], &rv);
        bad |= rv != NULL;
    }
    fflush(stdout);
    return bad;
}
