/* batch_cache.c — the program under a leak regression test (examples/ci).
 *
 * Each step uploads a batch into a 4 MiB device buffer and frees it. With
 * BATCH_CACHE_BUG=1 (the regression "put back"), every step also keeps a 2 MiB
 * device copy that is never freed. `vramtrace run --check --max-growth 1MiB`
 * passes on the fixed program and fails (exit 1) on the buggy one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "vramtrace.h"

static void *kept[256];

__attribute__((noinline)) static int upload_batch(int step, int bug)
{
    void *buf = NULL;
    if (cudaMalloc(&buf, 4 << 20) != cudaSuccess) return -1;
    if (bug && cudaMalloc(&kept[step], 2 << 20) != cudaSuccess) return -1;
    return cudaFree(buf) == cudaSuccess ? 0 : -1;
}

int main(void)
{
    const char *b = getenv("BATCH_CACHE_BUG");
    int bug = b && *b == '1';
    for (int s = 0; s < 30; s++) {
        if (upload_batch(s, bug) != 0) { fprintf(stderr, "batch_cache: CUDA error\n"); return 1; }
        vramtrace_step();
    }
    printf("batch_cache: 30 steps (bug %s)\n", bug ? "on" : "off");
    return 0;
}
