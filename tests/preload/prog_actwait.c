/* prog_actwait.c — hooked calls that meet the preload's activation in progress on
 * another thread (preload/interpose/vt_lifecycle.c vt_preload_activate).
 *
 * Thread A makes the process's first CUDA call; its activation warms libunwind, whose
 * first unwind calls dl_iterate_phdr through its PLT: this program exports its own,
 * which holds A there (only A, only from libunwind, at most HOLD_MS) and tells main.
 *
 * usage: prog_actwait MODE
 *   fork   main forks while A is held inside the activation. The child (one thread:
 *          A is not there) allocates 1 MiB: its allocation must be recorded
 *          (vramtrace_live_bytes) and must not wait for an activation nobody runs.
 *          Prints "child: recorded yes|no, waited N ms".
 *   count  thread B allocates 3 times while A is held (longer than the preload waits):
 *          B's first call waits for the activation at most its bound, then B's calls
 *          forward unrecorded; after A's activation ended B frees them. Prints
 *          "count: B waited N ms".
 *   countfork  as count, then a child forked afterwards exits at once (exit(3)): it
 *          lost no call, so only the parent's exit line counts them.
 *   stagger as count, and thread C allocates 150 ms after B began to wait: once B's
 *          wait ran out, C's ends too. Prints "stagger: C waited N ms".
 *   dlopen main dlopens argv[2] (actwait_ctor.c: its constructor allocates, the
 *          loader's lock held) while A is held: bounded, no deadlock. Prints
 *          "dlopen: loaded in N ms".
 *   signal A's own signal handler allocates while A is held: it must not wait for
 *          the activation it interrupted. Prints "signal: handler's call took N ms".
 *   api    main calls every vramtrace_* function while A is held: none may wait for
 *          the activation past its bound. Prints "api: slowest N ms".
 * Prints "held inside activation: yes|no" (yes only under the preload with
 * VRAMTRACE_DEPTH > 0). Exit status 0 unless a call failed. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
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

#define HOLD_MS 1500
static sem_t held;                 /* A is held inside the activation, or its call returned */
static volatile int release_a;     /* main lets A go on */
static volatile int was_held;
static int a_done;                 /* A's first call returned */
static __thread int armed;         /* this thread's next libunwind call holds */

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

__attribute__((visibility("default")))
int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    static iter_t real;
    if (!real)
        real = (iter_t)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (armed && from_libunwind(__builtin_return_address(0))) {
        armed = 0;
        was_held = 1;
        sem_post(&held);
        double t0 = now_ms();
        while (!release_a && now_ms() - t0 < HOLD_MS)
            ;
    }
    return real(cb, data);
}

static void *thread_a(void *arg)
{
    (void)arg;
    void *p = NULL;
    armed = 1;
    cudaError_t r = cudaMalloc(&p, 4096);
    armed = 0;
    __atomic_store_n(&a_done, 1, __ATOMIC_RELEASE);
    if (!was_held)
        sem_post(&held);
    if (r != cudaSuccess)
        return (void *)1;
    return cudaFree(p) == cudaSuccess ? NULL : (void *)1;
}

static int sig_done, sig_ms;
static void on_usr1(int sig)
{
    (void)sig;
    void *p = NULL;
    double t0 = now_ms();
    if (cudaMalloc(&p, 4096) == cudaSuccess)
        cudaFree(p);
    sig_ms = (int)(now_ms() - t0 + 0.5);
    __atomic_store_n(&sig_done, 1, __ATOMIC_RELEASE);
}

static volatile int b_bad;
static int stagger;   /* mode stagger: C, not B, lets A go on */
static void *thread_b(void *arg)
{
    (void)arg;
    void *p[3] = {NULL, NULL, NULL};
    double t0 = now_ms();
    for (int i = 0; i < 3; i++)
        if (cudaMalloc(&p[i], 8192) != cudaSuccess)
            b_bad = 1;
    printf("count: B waited %d ms\n", (int)(now_ms() - t0 + 0.5));
    if (!stagger)
        release_a = 1;
    while (!__atomic_load_n(&a_done, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < 3; i++)
        if (p[i] && cudaFree(p[i]) != cudaSuccess)
            b_bad = 1;
    return NULL;
}

/* stagger: C allocates 150 ms after B began waiting; prints how long C's call took */
static void *thread_c(void *arg)
{
    (void)arg;
    void *p = NULL;
    double t0 = now_ms();
    if (cudaMalloc(&p, 8192) != cudaSuccess)
        b_bad = 1;
    printf("stagger: C waited %d ms\n", (int)(now_ms() - t0 + 0.5));
    release_a = 1;
    while (!__atomic_load_n(&a_done, __ATOMIC_ACQUIRE))
        ;
    if (p && cudaFree(p) != cudaSuccess)
        b_bad = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fork";
    sem_init(&held, 0, 0);
    pthread_t a;
    pthread_create(&a, NULL, thread_a, NULL);
    sem_wait(&held);
    int bad = 0;
    if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            void *q = NULL;
            double t0 = now_ms();
            cudaError_t r = cudaMalloc(&q, 1 << 20);
            double t1 = now_ms();
            uint64_t live = vramtrace_live_bytes(-1);
            printf("child: recorded %s, waited %d ms\n", live >= (1u << 20) ? "yes" : "no",
                   (int)(t1 - t0 + 0.5));
            fflush(stdout);
            if (r != cudaSuccess || cudaFree(q) != cudaSuccess)
                _exit(1);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (!strcmp(mode, "count") || !strcmp(mode, "countfork")) {
        pthread_t b;
        pthread_create(&b, NULL, thread_b, NULL);
        pthread_join(b, NULL);
        bad |= b_bad;
    }
    if (!strcmp(mode, "stagger")) {
        pthread_t b, c;
        stagger = 1;
        pthread_create(&b, NULL, thread_b, NULL);
        struct timespec ts = {0, 150000000};
        nanosleep(&ts, NULL);
        pthread_create(&c, NULL, thread_c, NULL);
        pthread_join(b, NULL);
        pthread_join(c, NULL);
        bad |= b_bad;
    }
    if (!strcmp(mode, "dlopen") && argc > 2) {   /* B dlopens argv[2], whose constructor allocates */
        double t0 = now_ms();
        void *h = dlopen(argv[2], RTLD_NOW);
        printf("dlopen: %s in %d ms\n", h ? "loaded" : dlerror(), (int)(now_ms() - t0 + 0.5));
        bad |= h == NULL;
    }
    if (!strcmp(mode, "countfork")) {   /* a child that lost nothing, exiting normally */
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0)
            exit(0);
        int st = 0;
        waitpid(pid, &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (!strcmp(mode, "signal")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
        pthread_kill(a, SIGUSR1);
        while (!__atomic_load_n(&sig_done, __ATOMIC_ACQUIRE))
            ;
        printf("signal: handler's call took %d ms\n", sig_ms);
    }
    if (!strcmp(mode, "api")) {
        double worst = 0, t0;
        vramtrace_peak_info info;
        vramtrace_peak_site sites[4];
#define TIME(call) (t0 = now_ms(), (void)(call), worst = now_ms() - t0 > worst ? now_ms() - t0 : worst)
        TIME((vramtrace_step(), 0));
        TIME(vramtrace_snapshot("held"));
        TIME(vramtrace_live_bytes(-1));
        TIME(vramtrace_peak_bytes(-1));
        TIME((vramtrace_scope_begin(), 0));
        TIME(vramtrace_scope_leaked_bytes());
        TIME(vramtrace_annotate("k", 1.0));
        TIME(vramtrace_peak_interval_bytes());
        TIME(vramtrace_enabled());
        TIME(vramtrace_peak_sites(0, &info, sites, 4));
        printf("api: slowest %d ms\n", (int)(worst + 0.5));
    }
    release_a = 1;
    void *rv;
    pthread_join(a, &rv);
    bad |= rv != NULL;
    fprintf(stderr, "held inside activation: %s\n", was_held ? "yes" : "no");
    return bad;
}
