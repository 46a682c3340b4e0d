/*
 * sim_module.c - modules, functions and the JIT linker of the simulated driver
 * (drv_module.c), the way Numba's ctypes binding drives them: link PTX, load the
 * linked image, look functions up, read attributes, launch, unload; and the error
 * codes of each entry point.
 * Links the simulated driver directly.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim_check.h"

static int called;
static CUstream called_stream;
static void CUDA_CB on_done(CUstream s, CUresult status, void *user)
{
    called += status == CUDA_SUCCESS && user == &called;
    called_stream = s;
}

static size_t smem_for(int block) { return (size_t)block * 64; }

static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry touch(.param .u64 touch_param_0)\n{\n  ret;\n}\n"
    ".visible .entry touch_more (.param .u64 p)\n{\n  ret;\n}\n";

int main(void)
{
    CUmodule m;
    CUlinkState ls;
    CUfunction f, g;
    /* before cuInit */
    CHECK_EQ(cuModuleLoadData(&m, ptx), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_EQ(cuLinkCreate(0, NULL, NULL, &ls), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_EQ(cuInit(0), CUDA_SUCCESS);
    /* no current context */
    CHECK_EQ(cuModuleLoadData(&m, ptx), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ(cuLinkCreate(0, NULL, NULL, &ls), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx;
    CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    CHECK_EQ(cuCtxPushCurrent(ctx), CUDA_SUCCESS);

    int major = 0, minor = -1;   /* deprecated, still exported: Numba 0.56 lists it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK_EQ(cuDeviceComputeCapability(&major, &minor, 0), CUDA_SUCCESS);
    CHECK_EQ(major, 9);
    CHECK_EQ(minor, 0);
    CHECK_EQ(cuDeviceComputeCapability(&major, &minor, 7), CUDA_ERROR_INVALID_DEVICE);
#pragma GCC diagnostic pop

    /* link: options as Numba passes them; no input -> invalid value */
    char info[256] = "", err[256] = "";
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_TARGET_FROM_CUCONTEXT};
    void *vals[] = {info, (void *)sizeof info, err, (void *)sizeof err, (void *)1};
    CHECK_EQ(cuLinkCreate(5, opts, vals, &ls), CUDA_SUCCESS);
    void *cubin = NULL;
    size_t size = 0;
    CHECK_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, "not ptx", 7, "x", 0, NULL, NULL), CUDA_ERROR_INVALID_PTX);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_NVVM, (void *)ptx, sizeof ptx, "x", 0, NULL, NULL), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_NUM_INPUT_TYPES, (void *)ptx, sizeof ptx, "x", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, 0, "x", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, "/nonexistent/k.ptx", 0, NULL, NULL), CUDA_ERROR_FILE_NOT_FOUND);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx), "k.ptx", 0, NULL, NULL), CUDA_SUCCESS);
    CHECK_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);
    CHECK(cubin != NULL && size > strlen(ptx));

    /* load the linked image; entries by name */
    CHECK_EQ(cuModuleLoadDataEx(&m, cubin, 5, opts, vals), CUDA_SUCCESS);
    CHECK_EQ(cuLinkDestroy(ls), CUDA_SUCCESS);
    CHECK_EQ(cuLinkDestroy(ls), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(cuModuleGetFunction(&f, m, "touch"), CUDA_SUCCESS);
    CHECK_EQ(cuModuleGetFunction(&g, m, "touch"), CUDA_SUCCESS);
    CHECK(f == g);
    CHECK_EQ(cuModuleGetFunction(&g, m, "touch_more"), CUDA_SUCCESS);
    CHECK(f != g);
    CHECK_EQ(cuModuleGetFunction(&g, m, "tou"), CUDA_ERROR_NOT_FOUND);
    CHECK_EQ(cuModuleGetFunction(&g, m, NULL), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr gp;
    size_t gbytes;
    CHECK_EQ(cuModuleGetGlobal(&gp, &gbytes, m, "touch"), CUDA_ERROR_NOT_FOUND);
    int v = -1;
    CHECK_EQ(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
    CHECK_EQ(v, 1024);
    CHECK_EQ(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_SUCCESS);
    CHECK_EQ(v, 0);
    CHECK_EQ(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1), CUDA_SUCCESS);
    CHECK_EQ(cuFuncSetCacheConfig(f, (CUfunc_cache)9), CUDA_ERROR_INVALID_VALUE);

    /* launch: accepted, does nothing */
    CUdeviceptr d;
    CHECK_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    CHECK_EQ(cuMemsetD8(d, 7, 4096), CUDA_SUCCESS);
    void *args[] = {&d};
    CHECK_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
    CHECK_EQ(((unsigned char *)(uintptr_t)d)[100], 7);

    /* occupancy: no registers or static memory; 2048 threads, 32 blocks per SM */
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 256, 0), CUDA_SUCCESS);
    CHECK_EQ(v, 8);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 32, 0), CUDA_SUCCESS);
    CHECK_EQ(v, 32);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 256, 100000), CUDA_SUCCESS);
    CHECK_EQ(v, 2);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 1025, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&v, f, 64, 0, 2), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, (CUfunction)&v, 64, 0), CUDA_ERROR_INVALID_HANDLE);
    int grid = 0, block = 0;
    CHECK_EQ(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0), CUDA_SUCCESS);
    CHECK_EQ(block, 1024);
    CHECK_EQ(grid, 2 * 132);
    CHECK_EQ(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 100), CUDA_SUCCESS);
    CHECK_EQ(block, 64);            /* 32 blocks of 64 fill the SM; 21 of 96 do not */
    CHECK_EQ(grid, 32 * 132);
    CHECK_EQ(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smem_for, 0, 0), CUDA_SUCCESS);
    CHECK(block > 0 && grid > 0);

    /* cooperative launch: the grid must be co-resident */
    CHECK_EQ(cuLaunchCooperativeKernel(f, 132 * 8, 1, 1, 256, 1, 1, 0, NULL, args), CUDA_SUCCESS);
    CHECK_EQ(cuLaunchCooperativeKernel(f, 132 * 8 + 1, 1, 1, 256, 1, 1, 0, NULL, args),
             CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    CHECK_EQ(cuLaunchCooperativeKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, args), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)&v, args), CUDA_ERROR_INVALID_HANDLE);

    /* host callback: runs at once, in this thread */
    CUstream st;
    CHECK_EQ(cuStreamCreate(&st, 0), CUDA_SUCCESS);
    CHECK_EQ(cuStreamAddCallback(st, on_done, &called, 0), CUDA_SUCCESS);
    CHECK_EQ(called, 1);
    CHECK(called_stream == st);
    CHECK_EQ(cuStreamAddCallback(st, on_done, &called, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuStreamAddCallback(st, NULL, &called, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuStreamAddCallback((CUstream)&v, on_done, &called, 0), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(called, 1);
    CHECK_EQ(cuStreamDestroy(st), CUDA_SUCCESS);

    /* unload: the module and its functions are gone */
    CHECK_EQ(cuModuleUnload(m), CUDA_SUCCESS);
    CHECK_EQ(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(cuModuleGetFunction(&g, m, "touch"), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);

    /* images: garbage refused, binary images take any name */
    CHECK_EQ(cuModuleLoadData(&m, "garbage"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_EQ(cuModuleLoadData(&m, ""), CUDA_ERROR_INVALID_IMAGE);
    CHECK_EQ(cuModuleLoadData(&m, NULL), CUDA_ERROR_INVALID_VALUE);
    static const unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    CHECK_EQ(cuModuleLoadData(&m, elf), CUDA_SUCCESS);
    CHECK_EQ(cuModuleGetFunction(&f, m, "anything"), CUDA_SUCCESS);
    CHECK_EQ(cuModuleUnload(m), CUDA_SUCCESS);

    /* a cubin input makes cuLinkComplete hand back a binary image */
    CHECK_EQ(cuLinkCreate(0, NULL, NULL, &ls), CUDA_SUCCESS);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, "nope", 4, "x", 0, NULL, NULL), CUDA_ERROR_INVALID_IMAGE);
    CHECK_EQ(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, (void *)elf, sizeof elf, "x", 0, NULL, NULL), CUDA_SUCCESS);
    char path[] = "/tmp/sim_module_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, ptx, strlen(ptx)), strlen(ptx));
    close(fd);
    CHECK_EQ(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, path, 0, NULL, NULL), CUDA_SUCCESS);
    unlink(path);
    CHECK_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);
    CHECK(memcmp(cubin, "\x7f" "ELF", 4) == 0);
    CHECK_EQ(cuLinkDestroy(ls), CUDA_SUCCESS);

    CHECK_EQ(cuMemFree(d), CUDA_SUCCESS);
    CHECK_EQ(cuCtxPopCurrent(&ctx), CUDA_SUCCESS);
    printf("sim_module: ok\n");
    return 0;
}
