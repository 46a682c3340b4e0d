/* prog_cappeak.c — a peak made by a site that holds nothing at any step, then the
 * output folder removed, then many steps under a small size cap (tests/cap,
 * check_cappeak.sh).
 *
 * Usage: prog_cappeak STEPS AT. Each step takes and gives back a scratch buffer and
 * keeps 4 KiB (hold: a leak of 4,096 bytes per step); at step 10, spike() takes and
 * gives back 8 GiB inside the step (the peak: named only by the peak composition);
 * at step AT the folder $VRAMTRACE_OUTPUT is removed (the writer creates the file
 * again). Prints "done"; exit 0, 1 when a CUDA call fails.
 */
#define _XOPEN_SOURCE 700
#include <cuda_runtime_api.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vramtrace.h"

static int remove_one(const char *p, const struct stat *s, int flag, struct FTW *w)
{
    (void)s;
    (void)flag;
    (void)w;
    return remove(p);
}

__attribute__((noinline)) static int spike(void)
{
    void *p;
    if (cudaMalloc(&p, (size_t)8 << 30) != cudaSuccess) return -1;
    return cudaFree(p) == cudaSuccess ? 0 : -1;
}

__attribute__((noinline)) static int hold(size_t n)
{
    void *p;
    return cudaMalloc(&p, n) == cudaSuccess ? 0 : -1;
}

__attribute__((noinline)) static int scratch(size_t n)
{
    void *p;
    if (cudaMalloc(&p, n) != cudaSuccess) return -1;
    return cudaFree(p) == cudaSuccess ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: prog_cappeak STEPS AT\n");
        return 2;
    }
    int steps = atoi(argv[1]), at = atoi(argv[2]);
    const char *out = getenv("VRAMTRACE_OUTPUT");
    struct timespec nap = {0, 1000000};
    for (int i = 0; i < steps; i++) {
        if (i == 10 && spike() < 0) return 1;
        if (i == at && out) nftw(out, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        if (scratch((size_t)(1 << 20) * (1 + i % 3)) < 0 || hold(4096) < 0) return 1;
        vramtrace_step();
        nanosleep(&nap, NULL);
    }
    printf("done\n");
    return 0;
}
