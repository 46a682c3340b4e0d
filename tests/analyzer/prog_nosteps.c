/* prog_nosteps.c — a program that never marks a step and ends before any periodic
 * snapshot: a per-step-like temporary taken and given back 30 times, a buffer freed
 * at once and one left unfreed at exit. Its report has 0 steps (check_stumbles.py). */
#include <cuda_runtime.h>

static void *tmp;

static int work(void)
{
    if (cudaMalloc(&tmp, 4 << 20) != cudaSuccess) return 1;
    return cudaFree(tmp) != cudaSuccess;
}

int main(void)
{
    void *big, *keep;
    int failures = 0;
    for (int i = 0; i < 30; i++) failures += work();
    failures += cudaMalloc(&big, 64 << 20) != cudaSuccess;
    failures += cudaMalloc(&keep, 64 << 20) != cudaSuccess;   /* left unfreed at exit */
    failures += cudaFree(big) != cudaSuccess;
    return failures ? 1 : 0;
}
