/*
 * sim_exit_teardown.c - the runtime registers its exit teardown when it
 * initialises. An atexit handler registered BEFORE that runs after the
 * teardown: runtime calls then fail with cudaErrorCudartUnloading, and the
 * primary context has been released through the driver (inactive, its
 * allocations freed). The handler reports through _exit status.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim_check.h"

static void after_runtime_teardown(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, 1024);
    if (e != cudaErrorCudartUnloading) {
        fprintf(stderr, "cudaMalloc after teardown returned %d\n", (int)e);
        _exit(2);
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    PFN_cuDevicePrimaryCtxGetState_v7000 state =
        h ? (PFN_cuDevicePrimaryCtxGetState_v7000)dlsym(h, "cuDevicePrimaryCtxGetState") : NULL;
    unsigned flags = 0;
    int active = 1;
    if (!state || state(0, &flags, &active) != CUDA_SUCCESS || active != 0) {
        fprintf(stderr, "primary context still active after teardown\n");
        _exit(3);
    }
    printf("exit teardown: ok\n");
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    atexit(after_runtime_teardown); /* before the runtime initialises */
    void *p = NULL;
    CHECK_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess); /* runtime init: registers its teardown */
    return 7; /* never the exit status: the handler _exits */
}
