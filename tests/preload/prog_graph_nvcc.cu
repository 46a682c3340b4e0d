// prog_graph_nvcc.cu - a program built by `nvcc -cudart shared` against the real
// CUDA 13 toolkit that captures a stream into a graph: cudaMallocAsync, a kernel,
// cudaFreeAsync of a temporary, and an allocation the graph keeps. Run on the
// simulated pair under the preload (VT_EXPECT_TRACKED=1): nothing is counted while
// capturing, each launch counts the kept allocation (kind graph) and not the
// temporary, and cudaFree of the kept allocation ends it. Prints
// "graph nvcc program: ok" when every check held.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "vramtrace.h"

static int tracked, failures;

#define CHECK(x)                                                                        \
    do {                                                                                \
        if (!(x)) {                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #x);      \
            failures++;                                                                 \
        }                                                                               \
    } while (0)
#define LIVE(v) CHECK(!tracked || vramtrace_live_bytes(-1) == (unsigned long long)(v))

__global__ void fill(float *v, int n, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = k;
}

int main()
{
    tracked = getenv("VT_EXPECT_TRACKED") && atoi(getenv("VT_EXPECT_TRACKED"));
    CHECK(!tracked || vramtrace_enabled());
    const int n = 1 << 18;                       // 1 MiB of floats
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    float *tmp = nullptr, *kept = nullptr;
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK(cudaMallocAsync(&tmp, n * sizeof(float), s) == cudaSuccess);
    CHECK(cudaMallocAsync(&kept, 3 * n * sizeof(float), s) == cudaSuccess);
    fill<<<n / 256, 256, 0, s>>>(tmp, n, 1.0f);
    CHECK(cudaGetLastError() == cudaSuccess);
    fill<<<n / 256, 256, 0, s>>>(kept, n, 2.0f);
    CHECK(cudaFreeAsync(tmp, s) == cudaSuccess);
    LIVE(0);                                     // captured: nothing allocated yet
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch) == cudaSuccess);
    LIVE(0);
    for (int i = 0; i < 3; i++) {
        CHECK(cudaGraphLaunch(x, s) == cudaSuccess);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess);
        LIVE(3 * n * sizeof(float));             // the kept allocation, once
    }
    CHECK(cudaGraphExecDestroy(x) == cudaSuccess);
    CHECK(cudaGraphDestroy(g) == cudaSuccess);
    LIVE(3 * n * sizeof(float));                 // destruction frees nothing
    CHECK(cudaFree(kept) == cudaSuccess);
    LIVE(0);
    unsigned long long reserved = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved) == cudaSuccess);
    CHECK(reserved >= 4ull * n * sizeof(float));  // kept by the graph pool until trimmed
    CHECK(cudaDeviceGraphMemTrim(0) == cudaSuccess);
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved) == cudaSuccess);
    CHECK(reserved == 0);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    if (!failures)
        printf("graph nvcc program: ok\n");
    return failures ? 1 : 0;
}
