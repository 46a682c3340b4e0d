/* prog_monitor.c — a CUDA program with known figures, for the monitoring_* tests
 * (Prometheus textfile and the snapshots' "host" object), run under LD_PRELOAD on the
 * simulated device (tests/simcuda) with the simulated NVML.
 *
 *   prog_monitor prom   VRAMTRACE_PROMETHEUS=DIR, VRAMTRACE_INTERVAL_MS=100,
 *                       SIMCUDA_MEM=1GiB: 5 marked steps, each keeping 1 MiB
 *                       (cudaMalloc) and freeing a 256 KiB temporary; then 2 MiB
 *                       managed, 64 KiB pinned host, 1 MiB cudaMallocAsync kept, one
 *                       failed 1 TiB cudaMalloc (out of memory). Waits 450 ms, copies
 *                       DIR/vramtrace_<host>_<pid>.prom to DIR/running.prom, frees the
 *                       managed block and exits (the rest stays unfreed).
 *                       check_monitoring.py prom checks both files.
 *   prog_monitor peakfree [nonvml]
 *                       VRAMTRACE_PROMETHEUS=DIR, a long VRAMTRACE_HOST_INTERVAL_MS:
 *                       keeps 2 MiB, allocates 200 MiB, waits (at most 10 s) until the
 *                       textfile shows an NVML sample that saw the 200 MiB (nonvml: no
 *                       wait), frees them, marks a step (cuMemGetInfo read there),
 *                       copies the textfile to DIR/afterfree.prom, frees the 2 MiB and
 *                       exits at once (no NVML sample, no cuMemGetInfo after the frees).
 *   prog_monitor steps N SLEEP_MS
 *                       N marked steps, each allocating a new 1 MiB block and freeing
 *                       the previous one, SLEEP_MS apart (the host/ECC test; 0 = no
 *                       sleep at all, the thread never yields: the UUID check).
 * Exit status 0 unless a CUDA call that must succeed failed.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

#define MIB (1024ul * 1024ul)

static int failures;
#define OK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)e_); failures++; } } while (0)

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    int in = open(from, O_RDONLY);
    if (in < 0)
        return -1;
    ssize_t n = read(in, buf, sizeof buf);
    close(in);
    if (n <= 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0)
        return -1;
    int rc = write(out, buf, (size_t)n) == n ? 0 : -1;
    close(out);
    return rc;
}

static void *kept[64];

static int run_prom(void)
{
    const char *dir = getenv("VRAMTRACE_PROMETHEUS");
    if (!dir) {
        fprintf(stderr, "prog_monitor prom: VRAMTRACE_PROMETHEUS is not set\n");
        return 2;
    }
    for (int i = 0; i < 5; i++) {
        void *tmp = NULL;
        OK(cudaMalloc(&kept[i], MIB));
        OK(cudaMalloc(&tmp, 256 * 1024));
        OK(cudaFree(tmp));
        vramtrace_step();
    }
    void *managed = NULL, *pinned = NULL, *async = NULL, *huge = NULL;
    OK(cudaMallocManaged(&managed, 2 * MIB, cudaMemAttachGlobal));
    OK(cudaMallocHost(&pinned, 64 * 1024));
    OK(cudaMallocAsync(&async, MIB, 0));
    if (cudaMalloc(&huge, (size_t)1 << 40) == cudaSuccess) {
        fprintf(stderr, "a 1 TiB cudaMalloc succeeded on a 1 GiB device\n");
        failures++;
    }
    cudaGetLastError();
    sleep_ms(450);
    char from[4096], to[4096];
    char host[256] = ""; gethostname(host, sizeof host - 1);   /* vramtrace_<host>_<pid>.prom */
    snprintf(from, sizeof from, "%s/vramtrace_%s_%d.prom", dir, host, (int)getpid());
    snprintf(to, sizeof to, "%s/running.prom", dir);
    if (copy_file(from, to) < 0) {
        fprintf(stderr, "no textfile %s while running\n", from);
        failures++;
    }
    /* idle: no allocation, no step; the file is still rewritten each interval */
    sleep_ms(450);
    snprintf(to, sizeof to, "%s/running2.prom", dir);
    if (copy_file(from, to) < 0) {
        fprintf(stderr, "no textfile %s while running (idle)\n", from);
        failures++;
    }
    OK(cudaFree(managed));
    printf("pid %d\n", (int)getpid());
    return failures ? 1 : 0;
}

/* The value of the first sample of metric `name` in the textfile at path, or -1. */
static double prom_value(const char *path, const char *name)
{
    char buf[65536];
    int in = open(path, O_RDONLY);
    if (in < 0)
        return -1;
    ssize_t n = read(in, buf, sizeof buf - 1);
    close(in);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    size_t len = strlen(name);
    for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, name, len) || (l[len] != '{' && l[len] != ' '))
            continue;
        char *sp = strchr(l, ' ');
        if (sp)
            return strtod(sp + 1, NULL);
    }
    return -1;
}

static int run_peakfree(int nvml)
{
    const char *dir = getenv("VRAMTRACE_PROMETHEUS");
    if (!dir) {
        fprintf(stderr, "prog_monitor peakfree: VRAMTRACE_PROMETHEUS is not set\n");
        return 2;
    }
    char path[4096], to[4096];
    char host[256] = ""; gethostname(host, sizeof host - 1);
    snprintf(path, sizeof path, "%s/vramtrace_%s_%d.prom", dir, host, (int)getpid());
    void *small = NULL, *big = NULL;
    OK(cudaMalloc(&small, 2 * MIB));
    OK(cudaMalloc(&big, 200 * MIB));
    int seen = 0;
    for (int i = 0; nvml && i < 1000 && !seen; i++) {
        seen = prom_value(path, "vramtrace_process_memory_used_bytes") >= (double)(202 * MIB);
        if (!seen)
            sleep_ms(10);
    }
    if (nvml && !seen) {
        fprintf(stderr, "no NVML sample with the 200 MiB in %s within 10 s\n", path);
        failures++;
    }
    OK(cudaFree(big));
    vramtrace_step();
    snprintf(to, sizeof to, "%s/afterfree.prom", dir);
    sleep_ms(30);   /* the writer thread writes the step's figures */
    if (copy_file(path, to) < 0) {
        fprintf(stderr, "no textfile %s after the free\n", path);
        failures++;
    }
    OK(cudaFree(small));
    printf("pid %d\n", (int)getpid());
    return failures ? 1 : 0;
}

static int run_steps(int n, long ms)
{
    void *prev = NULL;
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        OK(cudaMalloc(&p, MIB));
        if (prev)
            OK(cudaFree(prev));
        prev = p;
        vramtrace_step();
        if (ms > 0)   /* 0: never yields (no nanosleep), like a busy training loop */
            sleep_ms(ms);
    }
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "prom"))
        return run_prom();
    if (argc >= 2 && !strcmp(argv[1], "peakfree"))
        return run_peakfree(!(argc >= 3 && !strcmp(argv[2], "nonvml")));
    if (argc >= 4 && !strcmp(argv[1], "steps"))
        return run_steps(atoi(argv[2]), atol(argv[3]));
    fprintf(stderr, "usage: prog_monitor prom | peakfree | steps N SLEEP_MS\n");
    return 2;
}
