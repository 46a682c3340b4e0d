/* prog_eventtime.c — allocations and frees whose times the program knows: each call
 * is bracketed by two CLOCK_MONOTONIC reads, printed as
 *   <op> <addr hex> <before_ns> <after_ns>     (op: A = cudaMalloc, F = cudaFree)
 * so that check_eventtime.py can hold every event-trace record to its call's interval.
 * Two threads; between calls each waits 0..300 us (busy) and every 16th pair sleeps
 * 3 ms, so the preload's writer drains between a free and the next calls.
 * Before the threads, one unprinted pair of 1 byte activates the preload (not with
 * --no-warm-up: the two threads' first calls then meet the activation).
 * Usage: prog_eventtime PAIRS_PER_THREAD [--no-warm-up]. Exit 0, or 1 on a CUDA error. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int pairs;
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
        if (i % 16 == 15) {
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
