/* prog_iofault — a training loop whose snapshot folder has a write fault in the
 * middle of the run, for the iofault_* tests (tests/iofault/check_iofault.py).
 *
 * Every step allocates a 1 MiB batch it never frees (a planted leak, site remember:
 * exactly 1 MiB/step) and a 4 MiB scratch buffer it frees, marks the step and sleeps
 * SLEEP_MS. At step AT the fault begins, at step UNTIL it ends:
 *   full   FILLER is written with 64 KiB blocks until the file system is full
 *          (ENOSPC), and removed at step UNTIL;
 *   rmdir  the folder $VRAMTRACE_OUTPUT is removed with everything in it at step AT
 *          (UNTIL unused);
 *   none   nothing (the untraced and traced runs compare their output).
 *
 * Usage: prog_iofault MODE STEPS AT UNTIL SLEEP_MS [FILLER]. Prints one line per
 * fault action and "done STEPS steps"; exit status 0, 1 on a CUDA error, 2 on bad
 * usage or a fault action that failed. */
#define _XOPEN_SOURCE 700
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Fills the file system of path: 0 when it ended full (ENOSPC), else -1. */
static int fill(const char *path)
{
    static char block[65536];
    memset(block, 'x', sizeof block);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    for (;;) {
        ssize_t w = write(fd, block, sizeof block);
        if (w > 0) continue;
        int e = errno;
        if (w < 0 && e == EINTR) continue;
        /* the last few bytes: a page at a time, then one byte at a time */
        for (size_t n = 4096; n; n = n > 1 ? n / 2 : 0)
            while (write(fd, block, n) > 0) {}
        close(fd);
        return w < 0 && e == ENOSPC ? 0 : -1;
    }
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    if (argc < 6) return 2;
    const char *mode = argv[1];
    int steps = atoi(argv[2]), at = atoi(argv[3]), until = atoi(argv[4]), sleep_ms = atoi(argv[5]);
    const char *filler = argc > 6 ? argv[6] : NULL;
    if (steps < 1 || steps > 4096) return 2;
    struct timespec nap = { sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L };
    for (int i = 0; i < steps; i++) {
        if (i == at && !strcmp(mode, "full")) {
            if (!filler || fill(filler) < 0) return 2;
            printf("filled at step %d\n", i);
        }
        if (i == until && !strcmp(mode, "full")) {
            if (unlink(filler) < 0) return 2;
            printf("freed at step %d\n", i);
        }
        if (i == at && !strcmp(mode, "rmdir")) {
            const char *dir = getenv("VRAMTRACE_OUTPUT");
            if (!dir || nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0) return 2;
            printf("removed the folder at step %d\n", i);
        }
        if (remember(i) || scratch()) return 1;
        vramtrace_step();
        nanosleep(&nap, NULL);
    }
    printf("done %d steps\n", steps);
    return 0;
}
