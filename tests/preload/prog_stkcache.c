/* prog_stkcache.c — randomized call paths for the stack cache (CTest preload_stkcache,
 * run with VRAMTRACE_STACK_CHECK=1: the preload compares every stack its cache gives
 * with a full unwind and prints the counts at exit; the test fails on any difference).
 *
 * Each thread descends through a random path of small recursive functions (pairs with
 * identical bodies, so two paths can reach the same stack pointer at the leaf through
 * different return addresses; some built without frame pointers, one with a VLA of
 * varying size), allocates at the leaf, and repeats a path a few times (so the cache
 * hits) before it draws a new one. Along the way: siglongjmp out of deep frames and a
 * new descent to the same depths; raise() of a signal whose handler allocates (a
 * capture in a handler, through the signal frame); an interval timer whose handler
 * scribbles on the stack below it; short-lived threads; a fork whose child allocates
 * on. STK_TSAN=1 (the ThreadSanitizer build) leaves out the thread exits (libunwind's
 * thread-exit destructor runs after TSan finished the thread and crashes its runtime)
 * and the fork (TSan aborts a child forked with threads running): workers park.
 * Usage: prog_stkcache [iterations per thread]. Prints "stkcache program: ok".
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 4
#define MAXPATH  64

typedef struct job {
    uint64_t rng;
    int      path[MAXPATH];
    int      len;
    int      jmp_at;          /* level that set jb, -1: none */
    sigjmp_buf jb;
} job;

static __thread job *cur;
static long allocs;              /* atomic */

static uint64_t rnd(job *j)
{
    j->rng ^= j->rng << 13; j->rng ^= j->rng >> 7; j->rng ^= j->rng << 17;
    return j->rng;
}

static void leaf_alloc(void)
{
    void *p = NULL;
    long k = __atomic_load_n(&allocs, __ATOMIC_RELAXED);
    if (cudaMalloc(&p, 256 + (size_t)(k & 7) * 256) != cudaSuccess || !p) {
        fprintf(stderr, "CHECK failed: cudaMalloc\n");
        exit(1);
    }
    __atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
    cudaFree(p);
}

static void on_usr2(int sig)
{
    (void)sig;
    leaf_alloc();             /* a capture through the signal frame */
}

static void on_alrm(int sig)
{
    (void)sig;
    volatile char junk[512];  /* stale data below the interrupted frame */
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 37);
}

static void step(int level);

#define VT_FN(name, attr, pad)                                                     \
    attr __attribute__((noinline)) static void name(int level)                    \
    {                                                                             \
        volatile char buf[pad];                                                   \
        buf[0] = (char)level;                                                     \
        step(level + 1);                                                          \
        buf[pad - 1] = buf[0];                                                    \
    }
VT_FN(fa, , 16)
VT_FN(fa2, , 16)              /* fa's twin: same frame, other return addresses */
VT_FN(fb, __attribute__((optimize("omit-frame-pointer"))), 48)
VT_FN(fb2, __attribute__((optimize("omit-frame-pointer"))), 48)
VT_FN(fc, , 200)

__attribute__((noinline)) static void fvla(int level)
{
    volatile char v[8 + (cur->path[level] >> 3) * 16];   /* size varies with the path */
    v[0] = (char)level;
    step(level + 1);
    v[sizeof v - 1] = v[0];
}

__attribute__((noinline)) static void fjmp(int level)
{
    job *j = cur;
    if (j->jmp_at < 0) {
        j->jmp_at = level;
        if (sigsetjmp(j->jb, 1)) {
            /* back here from deep down: descend again through another path */
            j->jmp_at = -2;
            for (int i = level + 1; i < j->len; i++)
                j->path[i] = (int)(rnd(j) % 64);
            step(level + 1);
            return;
        }
    }
    step(level + 1);
}

static void step(int level)
{
    job *j = cur;
    if (level >= j->len) {
        leaf_alloc();
        int r = (int)(rnd(j) % 16);
        if (r == 0)
            raise(SIGUSR2);
        if (r == 1 && j->jmp_at >= 0)
            siglongjmp(j->jb, 1);
        leaf_alloc();     /* after the handler ran, at this depth */
        return;
    }
    switch (j->path[level] & 7) {
    case 0: case 1: fa(level); break;
    case 2: fa2(level); break;
    case 3: fb(level); break;
    case 4: fb2(level); break;
    case 5: fc(level); break;
    case 6: fvla(level); break;
    default: fjmp(level); break;
    }
}

static void run(job *j, int iters)
{
    cur = j;
    for (int it = 0; it < iters; it++) {
        if (it % 8 == 0) {            /* a new path; kept for 8 rounds */
            j->len = 4 + (int)(rnd(j) % (MAXPATH - 4));
            for (int i = 0; i < j->len; i++)
                j->path[i] = (int)(rnd(j) % 64);
        } else if (it % 8 == 5) {     /* the same depth, one level changed */
            int i = (int)(rnd(j) % (uint64_t)j->len);
            j->path[i] = (int)(rnd(j) % 64);
        }
        j->jmp_at = -1;
        step(0);
    }
}

static void *thread_main(void *arg)
{
    run(arg, 10);
    return NULL;
}

static int iters = 400;
static int no_exit;
static int workers_done;      /* atomic */

static void *worker(void *arg)
{
    run(arg, iters);
    __atomic_fetch_add(&workers_done, 1, __ATOMIC_RELEASE);
    while (no_exit)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = atoi(argv[1]);
    no_exit = getenv("STK_TSAN") != NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_alrm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval tv = { { 0, 2000 }, { 0, 2000 } };
    setitimer(ITIMER_REAL, &tv, NULL);

    leaf_alloc();   /* activation first: until it is done other threads' calls only forward */
    static job jobs[NTHREADS + 1];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
        pthread_create(&th[i], NULL, worker, &jobs[i]);
    }
    /* short-lived threads: a cache made and freed at each exit */
    if (!no_exit)
        for (int k = 0; k < 8; k++) {
            static job sj[8];
            pthread_t t;
            sj[k].rng = 0x1234567ULL + (uint64_t)k;
            pthread_create(&t, NULL, thread_main, &sj[k]);
            pthread_join(t, NULL);
        }
    jobs[NTHREADS].rng = 0xdeadbeefULL;
    run(&jobs[NTHREADS], iters / 2);
    /* the workers finish (under TSan they park: see the top) */
    if (no_exit)
        while (__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE) < NTHREADS)
            usleep(10000);
    else
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(th[i], NULL);
    /* fork once no other thread is inside the (simulated) CUDA library, whose locks a
     * child would inherit held: the child keeps this thread's cache and allocates on */
    if (!no_exit) {
        pid_t pid = fork();
        if (pid == 0) {
            run(&jobs[NTHREADS], iters / 4);
            _exit(0);   /* the parent's line alone reports the counts (a mismatch warns at once) */
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "CHECK failed: fork child\n");
            return 1;
        }
    }
    run(&jobs[NTHREADS], iters / 2);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("stkcache program: ok (%ld allocations)\n", __atomic_load_n(&allocs, __ATOMIC_RELAXED));
    fflush(stdout);
    if (no_exit)
        exit(0);   /* ends the parked workers */
    return 0;
}
