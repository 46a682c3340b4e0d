/* prog_peak.c — what was live at the peak (simulated device).
 *
 *   prog_peak steps   long-lived weights, a per-step activation buffer and a cache
 *                     that keeps 1 MiB per step; in step PEAK_STEP (only) a
 *                     peak_only_buffer of PEAK_ONLY bytes is allocated and freed
 *                     inside the step: it makes the peak of the run and is gone at exit.
 *                     Checks vramtrace_peak_sites against the exact sizes.
 *   prog_peak twodev  weights on device 0, peak_only_buffer on device 1 (needs
 *                     SIMCUDA_DEVICES=2).
 *   prog_peak ramp N  a base buffer, then N buffers of RAMP_STEP bytes kept: N rising
 *                     peaks. Prints "copies C base B top T" where C counts the
 *                     distinct copied peaks seen through vramtrace_peak_sites after
 *                     every allocation (each query applies the pending events).
 * Exit status 0, or 1 with a line saying what was wrong.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

#define MiB (1024ull * 1024ull)
#define WEIGHTS (256 * MiB)
#define ACTIVATIONS (64 * MiB)
#define PEAK_ONLY (300 * MiB + 12345)
#define PEAK_STEP 12
#define STEPS 20
#define RAMP_BASE (1024 * MiB)
#define RAMP_STEP (1 * MiB)

/* a macro, so that each site's first frame is the function below that uses it */
#define MUST_ALLOC(n)                                                          \
    do {                                                                       \
        void *p_ = NULL;                                                       \
        if (cudaMalloc(&p_, (n)) != cudaSuccess) {                             \
            fprintf(stderr, "prog_peak: cudaMalloc(%zu) failed\n", (size_t)(n)); \
            exit(1);                                                           \
        }                                                                      \
        return p_;                                                             \
    } while (0)

__attribute__((noinline)) void *alloc_weights(void) { MUST_ALLOC(WEIGHTS); }
__attribute__((noinline)) void *alloc_activations(void) { MUST_ALLOC(ACTIVATIONS); }
__attribute__((noinline)) void *cache_keep(void) { MUST_ALLOC(MiB); }
__attribute__((noinline)) void *peak_only_buffer(void) { MUST_ALLOC(PEAK_ONLY); }
__attribute__((noinline)) void *ramp_alloc(size_t n) { MUST_ALLOC(n); }

static int check_api(void)
{
    vramtrace_peak_info info;
    vramtrace_peak_site sites[VRAMTRACE_PEAK_TOP];
    int n = vramtrace_peak_sites(0, &info, sites, VRAMTRACE_PEAK_TOP);
    uint64_t want = WEIGHTS + ACTIVATIONS + PEAK_ONLY + PEAK_STEP * MiB;
    if (!vramtrace_enabled())
        return 0;   /* without the tracer: nothing to check */
    if (n < 4 || info.peak_bytes != want || sites[0].bytes != PEAK_ONLY || sites[1].bytes != WEIGHTS ||
        sites[2].bytes != ACTIVATIONS || sites[3].bytes != PEAK_STEP * MiB || info.step != PEAK_STEP) {
        fprintf(stderr, "prog_peak: vramtrace_peak_sites: n %d peak %llu (want %llu) step %llu first %llu\n", n,
                (unsigned long long)info.peak_bytes, (unsigned long long)want, (unsigned long long)info.step,
                n > 0 ? (unsigned long long)sites[0].bytes : 0ull);
        return 1;
    }
    if (vramtrace_peak_sites(-1, &info, sites, 2) != 2 || info.peak_bytes != want || info.n_sites != 4) {
        fprintf(stderr, "prog_peak: the process's composition differs\n");
        return 1;
    }
    if (vramtrace_peak_sites(0, NULL, sites, 1) != -22) {
        fprintf(stderr, "prog_peak: a NULL info is not -EINVAL\n");
        return 1;
    }
    printf("api: peak %llu step %llu sites %d\n", (unsigned long long)info.peak_bytes,
           (unsigned long long)info.step, n);
    return 0;
}

static int steps(void)
{
    void *w = alloc_weights();
    void *cache[STEPS];
    for (int s = 1; s <= STEPS; s++) {   /* the work of step s; its mark ends it */
        cache[s - 1] = cache_keep();
        void *act = alloc_activations();
        if (s == PEAK_STEP) {
            void *p = peak_only_buffer();
            cudaFree(p);
        }
        cudaFree(act);
        vramtrace_step();
    }
    int rc = check_api();
    for (int s = 0; s < STEPS; s++)
        cudaFree(cache[s]);
    cudaFree(w);
    return rc;
}

static int ramp(int n)
{
    void *base = ramp_alloc(RAMP_BASE);
    void **keep = calloc((size_t)n, sizeof *keep);
    vramtrace_peak_info info;
    uint64_t last = 0, copies = 0;
    for (int i = 0; i < n; i++) {
        keep[i] = ramp_alloc(RAMP_STEP);
        vramtrace_peak_sites(-1, &info, NULL, 0);
        if (info.peak_bytes != last) {
            copies++;
            last = info.peak_bytes;
        }
    }
    printf("copies %llu base %llu top %llu last %llu\n", (unsigned long long)copies,
           (unsigned long long)RAMP_BASE, (unsigned long long)(RAMP_BASE + (uint64_t)n * RAMP_STEP),
           (unsigned long long)last);
    for (int i = 0; i < n; i++)
        cudaFree(keep[i]);
    cudaFree(base);
    free(keep);
    return 0;
}

/* Two devices (SIMCUDA_DEVICES=2): weights kept on device 0, a peak_only_buffer of
 * PEAK_ONLY bytes allocated and freed on device 1. */
static int twodev(void)
{
    cudaSetDevice(0);
    void *w = alloc_weights();
    cudaSetDevice(1);
    void *p = peak_only_buffer();
    cudaFree(p);
    vramtrace_step();
    cudaSetDevice(0);
    cudaFree(w);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "twodev"))
        return twodev();
    if (argc > 1 && !strcmp(argv[1], "ramp"))
        return ramp(argc > 2 ? atoi(argv[2]) : 1000);
    return steps();
}
