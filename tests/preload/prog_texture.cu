// prog_texture.cu - a texture program built by `nvcc -cudart shared` against the real
// CUDA 13 toolkit, run on the simulated pair under the preload (CTest
// preload_nvcc_texture): a texture object over a cudaMallocArray, a kernel that
// samples it, the copies in and out, the frees. Kernels do nothing on the simulated
// device, so the output keeps what was there; the array's own bytes round-trip.
// With VT_EXPECT_TRACKED=1 the live bytes are asserted after each create and free
// (the simulated driver's size of a 512 x 256 float array: 2048-byte rows, 524288).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "vramtrace.h"

#define CHECK(x)                                                                        \
    do {                                                                                \
        if (!(x)) {                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #x);      \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static bool tracked;
#define EXPECT_LIVE(v) CHECK(!tracked || vramtrace_live_bytes(-1) == (unsigned long long)(v))

__global__ void sample(float *out, cudaTextureObject_t tex, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 2.0f;
}

int main()
{
    tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    const int w = 512, h = 256;
    const size_t bytes = (size_t)w * h * sizeof(float);
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) == cudaSuccess);
    CHECK(cudaProfilerStart() == cudaSuccess);
    float *img = (float *)malloc(bytes), *back = (float *)malloc(bytes);
    for (int i = 0; i < w * h; i++)
        img[i] = (float)(i % 977);

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(desc.x == 32 && desc.f == cudaChannelFormatKindFloat);
    cudaArray_t arr = nullptr;
    CHECK(cudaMallocArray(&arr, &desc, w, h) == cudaSuccess);
    cudaArrayMemoryRequirements req;
    CHECK(cudaArrayGetMemoryRequirements(&req, arr, 0) == cudaSuccess);
    CHECK(req.size == 524288);
    EXPECT_LIVE(req.size);
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img, w * sizeof(float), w * sizeof(float), h,
                              cudaMemcpyHostToDevice) == cudaSuccess);

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr) == cudaSuccess);

    float *out = nullptr;
    CHECK(cudaMalloc(&out, bytes) == cudaSuccess);
    EXPECT_LIVE(req.size + bytes);
    CHECK(cudaMemset(out, 0, bytes) == cudaSuccess);
    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    sample<<<grid, block>>>(out, tex, w, h);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaMemcpy(back, out, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[w * h - 1] == 0.0f); // the kernel did not run: what a GPU would do differs here

    CHECK(cudaMemcpy2DFromArray(back, w * sizeof(float), arr, 0, 0, w * sizeof(float), h,
                                cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(memcmp(img, back, bytes) == 0);

    CHECK(cudaDestroyTextureObject(tex) == cudaSuccess);
    CHECK(cudaFreeArray(arr) == cudaSuccess);
    EXPECT_LIVE(bytes);
    CHECK(cudaFreeArray(arr) == cudaErrorInvalidResourceHandle);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    CHECK(cudaFree(out) == cudaSuccess);
    EXPECT_LIVE(0);
    CHECK(cudaProfilerStop() == cudaSuccess);
    free(img);
    free(back);
    printf("texture program on simcuda: ok\n");
    return 0;
}
