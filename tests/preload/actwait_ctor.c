/* actwait_ctor.c — a library whose constructor allocates (prog_actwait dlopen: the
 * constructor runs with the loader's lock held, while another thread's first CUDA call
 * is activating the preload). Prints "ctor: cudaMalloc rc=N in M ms". */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((constructor)) static void actwait_ctor(void)
{
    void *p = NULL;
    double t0 = now_ms();
    int rc = (int)cudaMalloc(&p, 65536);
    printf("ctor: cudaMalloc rc=%d in %d ms\n", rc, (int)(now_ms() - t0 + 0.5));
    fflush(stdout);
}
