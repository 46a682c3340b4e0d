/* prog_zcut — a small training loop for the compressed-stream tests: every step
 * allocates a 1 MiB batch it never frees (a planted leak, site remember) and a
 * 4 MiB scratch buffer it frees; after the last step it writes a manual snapshot
 * (vramtrace_snapshot: on disk when it returns) and prints "size N", the bytes of
 * its snapshot file at that moment: everything after N is the exit's writes.
 *
 * Usage: prog_zcut STEPS (run under the preload with VRAMTRACE_OUTPUT set to a
 * fresh folder and VRAMTRACE_INTERVAL_MS=0). Exit status 0, 1 on a CUDA error. */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramtrace.h"

static void *batches[4096];

__attribute__((noinline)) static int remember(int i)
{
    return cudaMalloc(&batches[i], 1 << 20) != cudaSuccess;
}

__attribute__((noinline)) static int scratch(void)
{
    void *p;
    if (cudaMalloc(&p, 4 << 20) != cudaSuccess) return 1;
    return cudaFree(p) != cudaSuccess;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 50;
    if (steps < 1 || steps > 4096) return 1;
    for (int i = 0; i < steps; i++) {
        if (remember(i) || scratch()) return 1;
        vramtrace_step();
    }
    if (vramtrace_snapshot("last") != 0) return 1;
    const char *dir = getenv("VRAMTRACE_OUTPUT");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return 1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0) printf("size %lld %s\n", (long long)st.st_size, e->d_name);
    }
    closedir(d);
    return 0;
}
