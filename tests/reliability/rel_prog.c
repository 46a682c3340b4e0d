/* rel_prog.c — CUDA programs (shared runtime, simulated device) for the reliability
 * checks in check_reliability.py (issue 6). One scenario per run:
 *
 *   rel_prog family EXE      a parent with live allocations forks 3 children that
 *                            allocate and free their own and exit, a 4th child that
 *                            forks a grandchild, and a 5th child that execs
 *                            `EXE leaf` (a new traced program). Every process prints
 *                            "proc PID unfreed BYTES" (what it leaves live at exit).
 *   rel_prog leaf            allocates 3 blocks, frees 1, prints its "proc" line.
 *   rel_prog workload SEED   a fixed random sequence of allocations and frees of
 *                            every runtime kind; prints every call's result code and
 *                            a checksum, so runs with and without the preload can be
 *                            compared under SIMCUDA_FAIL_AT. Exit 0 always unless a
 *                            result is not a CUDA code the program expects.
 *   rel_prog crash SEED N    allocates/frees with step marks, then at operation N
 *                            (a moment chosen by the caller) dereferences NULL.
 *   rel_prog loop SEED       prints "ready", then allocates/frees with step marks
 *                            from 4 threads until killed.
 *   rel_prog execs           allocates once and returns (for the strace check).
 *   rel_prog dirgone DIR     allocates, removes DIR (the snapshot folder) while the
 *                            writer is running, keeps allocating, snapshots; prints
 *                            its results.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vramtrace.h"

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static void must(cudaError_t r, const char *what)
{
    if (r != cudaSuccess) {
        fprintf(stderr, "rel_prog: %s: %d\n", what, (int)r);
        exit(3);
    }
}

static void proc_line(unsigned long long unfreed)
{
    printf("proc %d unfreed %llu\n", (int)getpid(), unfreed);
    fflush(stdout);
}

/* A child's own work: n blocks, frees all but `keep` of them. Returns bytes left. */
static unsigned long long child_work(int id, int keep)
{
    void *p[8];
    unsigned long long left = 0;
    for (int i = 0; i < 8; i++)
        must(cudaMalloc(&p[i], (size_t)(1000 * (id + 1) + i)), "child cudaMalloc");
    for (int i = 0; i < 8; i++) {
        if (i < keep)
            left += (unsigned long long)(1000 * (id + 1) + i);
        else
            must(cudaFree(p[i]), "child cudaFree");
    }
    return left;
}

static int scenario_family(const char *exe)
{
    void *a, *b;
    must(cudaMalloc(&a, 1 << 20), "parent cudaMalloc");       /* unfreed by the parent */
    must(cudaMallocHost(&b, 4096), "parent cudaMallocHost");  /* freed after the children */
    vramtrace_step();
    pid_t kids[5];
    for (int k = 0; k < 5; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 4;
        if (pid > 0) {
            kids[k] = pid;
            continue;
        }
        /* child k */
        if (k < 3) {
            unsigned long long left = child_work(k, k);   /* child 0 leaves nothing */
            proc_line(left);
            exit(0);
        }
        if (k == 3) {
            /* fork again (the grandchild allocates; this child never does) */
            pid_t g = fork();
            if (g == 0) {
                proc_line(child_work(7, 2));
                exit(0);
            }
            int st;
            waitpid(g, &st, 0);
            exit(WIFEXITED(st) ? WEXITSTATUS(st) : 5);
        }
        execl(exe, exe, "leaf", (char *)NULL);
        _exit(6);
    }
    int bad = 0;
    for (int k = 0; k < 5; k++) {
        int st;
        waitpid(kids[k], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    must(cudaFreeHost(b), "parent cudaFreeHost");
    proc_line(1 << 20);
    return bad ? 1 : 0;
}

static int scenario_leaf(void)
{
    void *p[3];
    must(cudaMalloc(&p[0], 777), "leaf");
    must(cudaMallocManaged(&p[1], 3333, cudaMemAttachGlobal), "leaf");
    must(cudaMallocAsync(&p[2], 55555, 0), "leaf");
    must(cudaFree(p[1]), "leaf free");
    proc_line(777 + 55555);
    return 0;
}

static int scenario_workload(uint64_t seed)
{
    void *held[64] = {0};
    int how[64];
    uint64_t s = seed * 2654435761u + 1, sum = 0;
    int ok = 0, oom = 0;
    for (int i = 0; i < 600; i++) {
        int slot = (int)(rng(&s) % 64);
        cudaError_t r;
        if (held[slot]) {
            r = how[slot] < 2 ? cudaFree(held[slot]) : how[slot] < 3 ? cudaFreeHost(held[slot])
                                                                      : cudaFreeAsync(held[slot], 0);
            held[slot] = NULL;
        } else {
            size_t n = 1 + rng(&s) % 200000;
            how[slot] = (int)(rng(&s) % 4);
            void *p = NULL;
            r = how[slot] == 0 ? cudaMalloc(&p, n) : how[slot] == 1 ? cudaMallocManaged(&p, n, cudaMemAttachGlobal)
              : how[slot] == 2 ? cudaMallocHost(&p, n) : cudaMallocAsync(&p, n, 0);
            if (r == cudaSuccess)
                held[slot] = p;
            else if (r == cudaErrorMemoryAllocation)
                oom++, cudaGetLastError();
            else
                return 1;
        }
        ok += r == cudaSuccess;
        sum = sum * 31 + (uint64_t)r;
        if (i % 50 == 49)
            vramtrace_snapshot("workload");   /* full live lists: fills a small disk */
        printf("%d", (int)r);
    }
    for (int i = 0; i < 64; i++)
        if (held[i])
            sum = sum * 31 + (uint64_t)(how[i] < 2 ? cudaFree(held[i]) : how[i] < 3 ? cudaFreeHost(held[i])
                                                                                     : cudaFreeAsync(held[i], 0));
    printf("\nok %d oom %d sum %llu\n", ok, oom, (unsigned long long)sum);
    return 0;
}

static void churn_step(uint64_t *s, void **keep, int nkeep, long i)
{
    void *p;
    if (cudaMalloc(&p, 1 + rng(s) % 100000) == cudaSuccess) {
        int slot = (int)(i % nkeep);
        if (keep[slot])
            cudaFree(keep[slot]);
        keep[slot] = p;
    }
}

static int scenario_crash(uint64_t seed, long at)
{
    void *keep[64] = {0};
    uint64_t s = seed * 977 + 3;
    for (long i = 0;; i++) {
        churn_step(&s, keep, 64, i);
        if (i % 50 == 0)
            vramtrace_step();
        if (i % 500 == 0)
            vramtrace_snapshot("tick");
        if (i == at) {
            /* a genuine fault: a store into a PROT_NONE page (not UB that a
             * sanitizer would stop first) */
            volatile int *np = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            np[(rng(&s) % 1024)] = 1;
        }
    }
    return 0;
}

static void *loop_thread(void *arg)
{
    uint64_t s = (uint64_t)(uintptr_t)arg * 7919 + 1;
    void *keep[64] = {0};
    for (long i = 0;; i++) {
        churn_step(&s, keep, 64, i);
        if (i % 97 == 0)
            vramtrace_step();
    }
    return NULL;
}

static int scenario_loop(uint64_t seed)
{
    void *w;
    must(cudaMalloc(&w, 1), "loop");
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, loop_thread, (void *)(uintptr_t)(seed * 4 + (uint64_t)i + 1));
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
    return 0;
}

static int rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    return rmdir(dir);
}

static int scenario_dirgone(const char *dir)
{
    void *p[100];
    must(cudaMalloc(&p[0], 100), "dirgone");
    vramtrace_step();
    int rm = rm_tree(dir);
    for (int i = 1; i < 100; i++) {
        must(cudaMalloc(&p[i], (size_t)(100 + i)), "dirgone");
        if (i % 10 == 0) {
            vramtrace_step();
            usleep(5000);
        }
    }
    int snap = vramtrace_snapshot("after-rm");
    for (int i = 0; i < 100; i++)
        must(cudaFree(p[i]), "dirgone free");
    (void)snap;   /* 0 or an error with the preload, 0 without: not printed */
    printf("removed %d allocations 100\n", rm);
    return 0;
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "";
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (!strcmp(s, "family") && argc > 2) return scenario_family(argv[2]);
    if (!strcmp(s, "leaf")) return scenario_leaf();
    if (!strcmp(s, "workload")) return scenario_workload(seed);
    if (!strcmp(s, "crash") && argc > 3) return scenario_crash(seed, atol(argv[3]));
    if (!strcmp(s, "loop")) return scenario_loop(seed);
    if (!strcmp(s, "dirgone") && argc > 2) return scenario_dirgone(argv[2]);
    if (!strcmp(s, "execs")) {
        void *p;
        must(cudaMalloc(&p, 10), "execs");
        vramtrace_snapshot("x");
        return 0;
    }
    fprintf(stderr, "usage: rel_prog family EXE|leaf|workload SEED|crash SEED N|loop SEED|dirgone DIR|execs\n");
    return 2;
}
