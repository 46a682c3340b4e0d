/* bench_multigpu.c — a data-parallel training job on several devices, the shape of
 * one rank of a multi-GPU run, for the bytes-per-step figure of the snapshot stream
 * (bench/vt_bench.py --figures 12) and the compact-records test (tests/compact).
 *
 *   bench_multigpu STEPS [DEVICES [STEP_US]]   (DEVICES default 8; the simulated
 *                          device needs SIMCUDA_DEVICES >= DEVICES; STEP_US: sleep
 *                          this many microseconds in each step, default 0)
 *
 * Setup: weights on every device, allocated once; device 0's weights exported for
 * another process (cudaIpcGetMemHandle, as a job that shares memory does). Each step, on every device: five
 * temporaries (activations, gradients, a workspace, a communication buffer, a
 * scratch buffer) allocated and freed, each from its own call site: 5 x DEVICES
 * sites change per step; and one growing per-step log buffer on device 0 (kept: a
 * slow leak, one more changing site). With 8 devices: 41 sites change per step. Every
 * step ends with vramtrace_step(). Exit 0, or 1 on a CUDA error (with a line on
 * stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "vramtrace.h"

#define MiB (1024UL * 1024UL)
#define MAX_DEVICES 16
#define MAX_STEPS 100000

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

static void *logs[MAX_STEPS];

/* One temporary of `bytes`, allocated and freed; noinline so each caller below is
 * its own call site (its own stack). */
__attribute__((noinline)) static void temp(size_t bytes)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaFree(p));
}

__attribute__((noinline)) static void activations(void) { void *p; CHECK(cudaMalloc(&p, 64 * MiB)); CHECK(cudaFree(p)); }
__attribute__((noinline)) static void gradients(void) { void *p; CHECK(cudaMalloc(&p, 16 * MiB)); CHECK(cudaFree(p)); }
__attribute__((noinline)) static void workspace(void) { void *p; CHECK(cudaMalloc(&p, 8 * MiB)); CHECK(cudaFree(p)); }
__attribute__((noinline)) static void comm_buffer(void) { void *p; CHECK(cudaMalloc(&p, 32 * MiB)); CHECK(cudaFree(p)); }
__attribute__((noinline)) static void scratch(void) { temp(2 * MiB); }

__attribute__((noinline)) static void log_step(int step)
{
    /* kept: 64 KiB per step on device 0 */
    CHECK(cudaMalloc(&logs[step], 64 * 1024));
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 100;
    int ndev = argc > 2 ? atoi(argv[2]) : 8;
    long step_us = argc > 3 ? atol(argv[3]) : 0;
    if (steps < 0 || steps > MAX_STEPS || ndev < 1 || ndev > MAX_DEVICES) {
        fprintf(stderr, "usage: bench_multigpu STEPS(0..%d) [DEVICES(1..%d)]\n", MAX_STEPS, MAX_DEVICES);
        return 2;
    }
    int have = 0;
    CHECK(cudaGetDeviceCount(&have));
    if (have < ndev) {
        fprintf(stderr, "bench_multigpu: %d devices asked, %d visible\n", ndev, have);
        return 1;
    }
    void *weights[MAX_DEVICES];
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&weights[d], 256 * MiB));
    }
    cudaIpcMemHandle_t handle;
    CHECK(cudaSetDevice(0));
    CHECK(cudaIpcGetMemHandle(&handle, weights[0]));
    for (int s = 0; s < steps; s++) {
        for (int d = 0; d < ndev; d++) {
            CHECK(cudaSetDevice(d));
            activations();
            gradients();
            workspace();
            comm_buffer();
            scratch();
        }
        CHECK(cudaSetDevice(0));
        log_step(s);
        if (step_us > 0) {
            struct timespec ts = { step_us / 1000000, (step_us % 1000000) * 1000 };
            nanosleep(&ts, NULL);
        }
        vramtrace_step();
    }
    for (int s = 0; s < steps; s++)
        CHECK(cudaFree(logs[s]));
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaFree(weights[d]));
    }
    return 0;
}
