/* training_loop.cu — a training-loop shaped CUDA program with one planted leak.
 *
 * The shape of a real job: weights allocated once at setup, activation buffers
 * allocated and freed every step (churn), an optimizer state that grows during
 * the first steps and then stays (plateau), and a bug: remember_batch() keeps a
 * 3 MiB per-step history buffer alive forever (the leak, 3 MiB/step).
 * Steps are marked with vramtrace_step() from include/vramtrace.h; without the
 * preload that call does nothing.
 *
 * Built with `nvcc -cudart shared` (so the runtime is interposable and the
 * simulated device in tests/simcuda can stand in); it also compiles as plain C
 * (without the kernel) where nvcc is absent.
 *
 * Usage: training_loop [STEPS]   (default 40). Exit 0 on success, 1 on a CUDA error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "vramtrace.h"

#define MiB (1024UL * 1024UL)
#define HISTORY_BYTES (3 * MiB)        /* the leak: kept every step */
#define ACTIVATION_BYTES (64 * MiB)    /* per-step temporary */
#define WEIGHT_BYTES (256 * MiB)
#define OPT_CHUNK_BYTES (32 * MiB)     /* optimizer state grows in steps 0..2 */
#define OPT_CHUNKS 3
#define MAX_STEPS 1000

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

#ifdef __CUDACC__
__global__ void train_kernel(float *act, const float *w, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) act[i] = act[i] * 0.5f + w[i % 1024];
}
#endif

static void *history[MAX_STEPS];
static void *opt_state[OPT_CHUNKS];

__attribute__((noinline)) static float *alloc_weights(void)
{
    float *w = NULL;
    CHECK(cudaMalloc((void **)&w, WEIGHT_BYTES));
    CHECK(cudaMemset(w, 0, 4096));
    return w;
}

__attribute__((noinline)) static void forward_backward(const float *w)
{
    float *act = NULL, *grad = NULL;
    CHECK(cudaMalloc((void **)&act, ACTIVATION_BYTES));
    CHECK(cudaMalloc((void **)&grad, ACTIVATION_BYTES / 4));
#ifdef __CUDACC__
    train_kernel<<<64, 256>>>(act, w, 64 * 256);
    CHECK(cudaGetLastError());
#else
    (void)w;
#endif
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(grad));
    CHECK(cudaFree(act));
}

__attribute__((noinline)) static void optimizer_step(int step)
{
    /* Adam-like state materialises lazily over the first steps, then stays. */
    if (step < OPT_CHUNKS)
        CHECK(cudaMalloc(&opt_state[step], OPT_CHUNK_BYTES));
}

__attribute__((noinline)) static void remember_batch(int step)
{
    /* BUG: a per-step copy of the batch statistics kept "for logging". */
    CHECK(cudaMalloc(&history[step], HISTORY_BYTES));
    CHECK(cudaMemset(history[step], 0, 256));
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    if (steps < 1 || steps > MAX_STEPS) {
        fprintf(stderr, "usage: %s [STEPS 1..%d]\n", argv[0], MAX_STEPS);
        return 2;
    }
    float *w = alloc_weights();
    for (int s = 0; s < steps; s++) {
        forward_backward(w);
        optimizer_step(s);
        remember_batch(s);
        vramtrace_step();
    }
    for (int i = 0; i < OPT_CHUNKS && i < steps; i++)
        CHECK(cudaFree(opt_state[i]));
    CHECK(cudaFree(w));
    printf("training_loop: %d steps done\n", steps);
    return 0;
}
