/* prog_rtonly.c — a program linked with the CUDA runtime only (the simulated
 * libcudart.so.13), which loads the driver itself with dlopen, as real programs built
 * with `nvcc -cudart shared` do: cudaMalloc of 1 MiB, one step mark
 * (vramtrace_step, looked up at run time: the program runs without the preload too),
 * cudaFree. Prints "malloc rc=N". Exit 0 when both calls returned cudaSuccess. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *p = NULL;
    cudaError_t r = cudaMalloc(&p, 1 << 20);
    printf("malloc rc=%d\n", (int)r);
    void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "vramtrace_step");
    if (step)
        step();
    cudaError_t f = cudaFree(p);
    return r == cudaSuccess && f == cudaSuccess ? 0 : 1;
}
