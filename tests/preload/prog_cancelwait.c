/* prog_cancelwait.c — pthread_cancel against threads that are inside the stack
 * capture (preload/vt_cancel.h: the capture unwinds with cancellation enabled, and
 * libvramtrace's pthread_cancel waits for such unwinds before it cancels anything).
 *
 * usage: prog_cancelwait MODE
 *   inside   thread A allocates; this program's own dl_iterate_phdr (exported: libunwind
 *            calls it through its PLT on a frame-cache miss) stops A INSIDE libunwind
 *            (once, only when called from libunwind), tells main, and then reaches a
 *            cancellation point there (pthread_testcancel, as libunwind's own read()
 *            would) after main's pthread_cancel has returned, or after 300 ms. main
 *            cancels A meanwhile. A must die at its own cancellation point AFTER its
 *            cudaMalloc returned: "A alloc returned: yes". An interposer that did not
 *            wait (or no guard at all) lets the cancel act inside libunwind: "no".
 *   pending  A is cancelled while it has cancellation disabled, enables it and
 *            allocates: the capture must run guarded, so the same stop inside libunwind
 *            does not kill A there ("A alloc returned: yes").
 *   result   pthread_cancel of a thread blocked in pause(): returns 0, errno untouched,
 *            join gives PTHREAD_CANCELED (same output with and without the preload).
 *   loop     30 times: a thread allocates and frees in a loop (stacks on), main cancels
 *            it after 0-3 ms and allocates itself; no hang, every thread cancelled,
 *            nothing left live.
 *   fork     A is stopped inside libunwind (counted as an unguarded unwind in the
 *            parent) while main forks. The child has no such unwind: its first
 *            pthread_cancel (of a thread blocked in pause()) must not wait for A's
 *            ("child cancel: fast"; without the fork-child handler it waits the full
 *            second of VT_CANCEL_WAIT_NS: "slow"). A is released after the child ended.
 * Prints "stopped inside libunwind: yes|no" (inside, pending) on stderr: yes only under
 * the preload with VRAMTRACE_DEPTH > 0. Exit status 0 unless a call failed. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "vramtrace.h"

static sem_t inside;                   /* A is stopped in libunwind, or its call returned */
static sem_t ready, cancelled;
static volatile int cancel_returned;   /* main's pthread_cancel returned */
static volatile int alloc_returned;    /* A's cudaMalloc returned */
static volatile int alloc_rc = -1;     /* and its result */
static volatile int stopped;           /* the stop inside libunwind happened */
static __thread int armed;             /* this thread's next libunwind call stops */
static int stop_wait_ms = 300;         /* how long the stop lasts at most */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int from_libunwind(void *ra)
{
    Dl_info di;
    return dladdr(ra, &di) && di.dli_fname && strstr(di.dli_fname, "libunwind");
}

typedef int (*iter_t)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

/* default visibility: the build hides symbols by default, and this one must be in the
 * dynamic symbol table for libunwind's call to reach it */
__attribute__((visibility("default")))
int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    static iter_t real;
    if (!real)
        real = (iter_t)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (armed && from_libunwind(__builtin_return_address(0))) {
        armed = 0;
        stopped = 1;
        sem_post(&inside);
        double t0 = now_ms();
        while (!cancel_returned && now_ms() - t0 < stop_wait_ms)
            ;                          /* no cancellation point while waiting */
        pthread_testcancel();          /* what libunwind's read() would be */
    }
    return real(cb, data);
}

static int mode_pending;
static int mode_fork;                  /* A returns after its allocation (no cancel) */

static __attribute__((noinline)) void *thread_a(void *arg)
{
    (void)arg;
    if (mode_pending) {
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        sem_post(&ready);
        sem_wait(&cancelled);          /* cancelled now, pending */
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    }
    void *p = NULL;
    armed = 1;
    int rc = cudaMalloc(&p, 4096);
    armed = 0;
    alloc_rc = rc;
    alloc_returned = 1;
    if (!stopped)
        sem_post(&inside);             /* not traced (or depth 0): nothing stopped */
    if (mode_fork)
        return NULL;
    for (;;)
        pthread_testcancel();          /* A's own cancellation point */
    return NULL;
}

static int run_inside(int pending)
{
    mode_pending = pending;
    void *q;
    if (cudaMalloc(&q, 64)) return 1;  /* the process's first allocation: writer started */
    sem_init(&inside, 0, 0); sem_init(&ready, 0, 0); sem_init(&cancelled, 0, 0);
    pthread_t a;
    pthread_create(&a, NULL, thread_a, NULL);
    if (pending) {
        sem_wait(&ready);
        printf("cancel rc=%d\n", pthread_cancel(a));
        cancel_returned = 1;
        sem_post(&cancelled);
        sem_wait(&inside);
    } else {
        sem_wait(&inside);
        printf("cancel rc=%d\n", pthread_cancel(a));
        cancel_returned = 1;
    }
    void *r;
    pthread_join(a, &r);
    printf("A %s\n", r == PTHREAD_CANCELED ? "cancelled" : "finished");
    printf("A alloc returned: %s (rc=%d)\n", alloc_returned ? "yes" : "no", alloc_rc);
    fprintf(stderr, "stopped inside libunwind: %s\n", stopped ? "yes" : "no");
    void *z;
    int rc = cudaMalloc(&z, 8192);
    printf("main cudaMalloc rc=%d free rc=%d\n", rc, rc ? -1 : (int)cudaFree(z));
    printf("main free rc=%d\n", (int)cudaFree(q));
    return 0;
}

static void *blocked(void *arg)
{
    (void)arg;
    sem_post(&ready);
    for (;;)
        pause();
    return NULL;
}

static int run_result(void)
{
    sem_init(&ready, 0, 0);
    void *q;
    if (cudaMalloc(&q, 64)) return 1;
    pthread_t t;
    pthread_create(&t, NULL, blocked, NULL);
    sem_wait(&ready);
    errno = 1234;
    int rc = pthread_cancel(t);
    int e = errno;
    void *r;
    int jr = pthread_join(t, &r);
    printf("cancel rc=%d errno=%d join rc=%d %s\n", rc, e, jr,
           r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled");
    /* a second cancel of the same (still joinable) thread: glibc answers 0 too */
    pthread_t t2;
    pthread_create(&t2, NULL, blocked, NULL);
    sem_wait(&ready);
    printf("cancel rc=%d\n", pthread_cancel(t2));
    printf("cancel again rc=%d\n", pthread_cancel(t2));
    pthread_join(t2, &r);
    printf("t2 %s\n", r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled");
    printf("free rc=%d\n", (int)cudaFree(q));
    return 0;
}

static int run_fork(void)
{
    mode_fork = 1;
    stop_wait_ms = 10000;              /* A stays inside libunwind until the child ended */
    void *q;
    if (cudaMalloc(&q, 64)) return 1;
    sem_init(&inside, 0, 0); sem_init(&ready, 0, 0);
    pthread_t a;
    pthread_create(&a, NULL, thread_a, NULL);
    sem_wait(&inside);                 /* A is inside libunwind (traced), or done */
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, blocked, NULL);
        sem_wait(&ready);
        double t0 = now_ms();
        int rc = pthread_cancel(t);
        double d = now_ms() - t0;
        void *r;
        pthread_join(t, &r);
        void *p;
        int ar = cudaMalloc(&p, 4096);
        int fr = ar ? -1 : (int)cudaFree(p);
        printf("child cancel rc=%d: %s, %s; malloc rc=%d free rc=%d\n", rc, d < 500 ? "fast" : "slow",
               r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled", ar, fr);
        fprintf(stderr, "child cancel took %.1f ms\n", d);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cancel_returned = 1;               /* releases A */
    pthread_join(a, NULL);
    printf("child exit %d; A alloc returned: %s (rc=%d)\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           alloc_returned ? "yes" : "no", alloc_rc);
    fprintf(stderr, "stopped inside libunwind: %s\n", stopped ? "yes" : "no");
    printf("main free rc=%d\n", (int)cudaFree(q));
    return 0;
}

static void *churn(void *arg)
{
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    for (;;) {
        void *p;
        if (cudaMalloc(&p, 4096) == 0)
            cudaFree(p);
        pthread_testcancel();          /* the thread's only cancellation point */
    }
    return NULL;
}

static int run_loop(void)
{
    int bad = 0;
    for (int i = 0; i < 30; i++) {
        pthread_t t;
        pthread_create(&t, NULL, churn, NULL);
        struct timespec d = {0, (long)(i % 4) * 1000000L};
        nanosleep(&d, NULL);
        if (pthread_cancel(t)) bad++;
        void *r;
        pthread_join(t, &r);
        if (r != PTHREAD_CANCELED) bad++;
        void *p;
        if (cudaMalloc(&p, 1024) || cudaFree(p)) bad++;
    }
    printf("loop: 30 threads cancelled, %d failures, live %llu\n", bad,
           (unsigned long long)vramtrace_live_bytes(-1));
    return bad != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "inside"))  return run_inside(0);
    if (!strcmp(m, "pending")) return run_inside(1);
    if (!strcmp(m, "result"))  return run_result();
    if (!strcmp(m, "loop"))    return run_loop();
    if (!strcmp(m, "fork"))    return run_fork();
    fprintf(stderr, "usage: prog_cancelwait inside|pending|result|loop|fork\n");
    return 2;
}
