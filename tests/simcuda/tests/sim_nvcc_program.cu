// sim_nvcc_program.cu - a program compiled by `nvcc -cudart shared` against the
// real CUDA 13 toolkit runs on the simulated pair: allocate, copy, launch, free.
// Kernels do nothing on the simulated device, so the copy-back sees what was
// copied in, not what the kernel would have written.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                        \
    do {                                                                                \
        if (!(x)) {                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #x);      \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

__global__ void scale(float *v, int n, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= k;
}

int main()
{
    size_t freeb = 0, total = 0;
    CHECK(cudaMemGetInfo(&freeb, &total) == cudaSuccess);
    CHECK(total == (size_t)768 << 20); // SIMCUDA_MEM=768MiB: the simulated runtime is loaded
    int n = 1 << 20;
    float *h = (float *)malloc(n * sizeof(float));
    float *back = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    float *d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float)) == cudaSuccess);
    CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    scale<<<(n + 255) / 256, 256>>>(d, n, 2.0f);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    scale<<<1, 4096>>>(d, n, 2.0f); // too many threads per block
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaMemcpy(back, d, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(memcmp(h, back, n * sizeof(float)) == 0);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    float *a = nullptr;
    CHECK(cudaMallocAsync(&a, 1 << 20, s) == cudaSuccess);
    scale<<<4, 256, 0, s>>>(a, 1024, 1.0f);
    CHECK(cudaFreeAsync(a, s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaFree(d) == cudaSuccess);
    size_t free2 = 0;
    CHECK(cudaMemGetInfo(&free2, &total) == cudaSuccess);
    CHECK(free2 == freeb);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(prop.totalGlobalMem == total && prop.major == 9);
    printf("nvcc program on %s: ok\n", prop.name);
    free(h);
    free(back);
    return 0;
}
