/* prog_cancelwait.c — pthread_cancel against threads that are inside the stack
 * capture (preload/capture/vt_cancel.h: the capture unwinds with cancellation enabled, and
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
 *   forksettle  3 rounds: thread S allocates from a stack never seen before and asks
 *            for a snapshot; writing that stack's record, libvramtrace calls dladdr,
 *            which this program exports: it holds S there for 40 ms, inside the
 *            writer's lock. main forks meanwhile, and 5 ms later thread A allocates
 *            from a new call site and stops inside libunwind (the dl_iterate_phdr stop
 *            above) until 3 ms after S's hold ended. A fork whose prepare waits for the
 *            capture in progress only AFTER it has the writer's lock (then A leaves
 *            libunwind before the fork) gives a child with stacks; one that looked
 *            before it waited for the lock (the order link-time optimisation once gave
 *            our two constructors) forks with A inside libunwind, and the child records
 *            without stacks (its file's header says "depth":0). Each child writes a
 *            snapshot and exits. Prints "forksettle: 3 forks, N children failed, A
 *            stopped inside libunwind K times".
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
static volatile double fs_hold_end;    /* forksettle: when S's hold in dladdr ended */
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
        while (!cancel_returned && now_ms() - t0 < stop_wait_ms &&
               !(fs_hold_end > 0 && now_ms() >= fs_hold_end + 3))
            ;                          /* no cancellation point while waiting */
        pthread_testcancel();          /* what libunwind's read() would be */
    }
    return real(cb, data);
}

typedef int (*dladdr_t)(const void *, Dl_info *);
static sem_t wblocked;                 /* forksettle: S is held inside the writer */
static int hold_writer;                /* atomic: the next dladdr from libvramtrace holds */

static int in_libvramtrace(void *ra, dladdr_t real)
{
    Dl_info di;
    return real(ra, &di) && di.dli_fname && strstr(di.dli_fname, "libvramtrace");
}

/* exported like dl_iterate_phdr above: libvramtrace's calls reach it */
__attribute__((visibility("default")))
int dladdr(const void *addr, Dl_info *info)
{
    static dladdr_t real;
    if (!real)
        real = (dladdr_t)dlsym(RTLD_NEXT, "dladdr");
    if (__atomic_load_n(&hold_writer, __ATOMIC_ACQUIRE) &&
        in_libvramtrace(__builtin_return_address(0), real) &&
        __atomic_exchange_n(&hold_writer, 0, __ATOMIC_ACQ_REL)) {
        sem_post(&wblocked);
        struct timespec d = {0, 40 * 1000000L};
        nanosleep(&d, NULL);
        fs_hold_end = now_ms();
    }
    return real(addr, info);
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

static void *fs_new_site_p;

/* S: a stack no capture made before (round r: r + 1 frames of fs_site), then a
 * snapshot, which must define it (and so calls dladdr inside the writer's lock) */
static __attribute__((noinline)) void fs_site(int r)
{
    if (r > 0) {
        fs_site(r - 1);
        __asm__ volatile("");
        return;
    }
    if (cudaMalloc(&fs_new_site_p, 512))
        fs_new_site_p = NULL;
}

static void *fs_snapper(void *arg)
{
    fs_site((int)(intptr_t)arg);
    __atomic_store_n(&hold_writer, 1, __ATOMIC_RELEASE);
    vramtrace_snapshot("forksettle");
    if (__atomic_exchange_n(&hold_writer, 0, __ATOMIC_ACQ_REL))
        sem_post(&wblocked);           /* nothing held (not traced): main goes on */
    return NULL;
}

/* A's call sites, one per round: libunwind meets each for the first time there */
#define FS_A_SITE(k)                                                  \
    static __attribute__((noinline)) void fs_a_site##k(void)          \
    {                                                                 \
        void *p;                                                      \
        if (cudaMalloc(&p, 256) == 0)                                 \
            cudaFree(p);                                              \
        __asm__ volatile("");                                         \
    }
FS_A_SITE(0)
FS_A_SITE(1)
FS_A_SITE(2)
static void (*const fs_a_sites[3])(void) = {fs_a_site0, fs_a_site1, fs_a_site2};
static sem_t fs_go;

static void *fs_a(void *arg)
{
    sem_wait(&fs_go);
    struct timespec d = {0, 5 * 1000000L};
    nanosleep(&d, NULL);               /* main is inside fork() by now */
    stopped = 0;
    armed = 1;
    fs_a_sites[(intptr_t)arg]();
    armed = 0;
    return (void *)(intptr_t)stopped;
}

static int run_forksettle(void)
{
    void *q;
    if (cudaMalloc(&q, 64)) return 1;  /* writer started */
    vramtrace_snapshot("start");       /* resolves the API here, not in a child */
    sem_init(&wblocked, 0, 0);
    sem_init(&fs_go, 0, 0);
    sem_init(&inside, 0, 0);
    stop_wait_ms = 2000;
    int failed = 0, rounds = 3, nstopped = 0;
    for (int r = 0; r < rounds; r++) {
        fs_hold_end = 0;
        pthread_t s, a;
        pthread_create(&s, NULL, fs_snapper, (void *)(intptr_t)(r + 1));
        sem_wait(&wblocked);           /* S is held inside the writer (or was not) */
        pthread_create(&a, NULL, fs_a, (void *)(intptr_t)r);
        sem_post(&fs_go);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);
            _exit(vramtrace_snapshot("child") ? 3 : 0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) failed++;
        void *was_stopped;
        pthread_join(a, &was_stopped);
        nstopped += was_stopped != NULL;
        pthread_join(s, NULL);
        if (fs_new_site_p) cudaFree(fs_new_site_p);
    }
    printf("forksettle: %d forks, %d children failed, A stopped inside libunwind %d times\n",
           rounds, failed, nstopped);
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
    if (!strcmp(m, "forksettle")) return run_forksettle();
    fprintf(stderr, "usage: prog_cancelwait inside|pending|result|loop|fork|forksettle\n");
    return 2;
}
