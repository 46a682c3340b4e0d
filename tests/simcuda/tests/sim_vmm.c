/*
 * sim_vmm.c - virtual memory management on the simulated driver: reserving
 * address space costs no capacity, cuMemCreate does, mapped memory is real
 * (readable/writable after cuMemSetAccess), and physical memory outlives
 * cuMemRelease until the last cuMemUnmap. Linked against the simulated
 * libcuda.so.1 directly. SIMCUDA_MEM=1GiB.
 */
#include <cuda.h>
#include <string.h>

#include "sim_check.h"

int main(void)
{
    CHECK_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext ctx;
    CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    CHECK_EQ(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
    CHECK_EQ(gran, 2 * MiB);

    size_t free0, f, total;
    CHECK_EQ(cuMemGetInfo(&free0, &total), CUDA_SUCCESS);

    CUdeviceptr va = 0;
    CHECK_EQ(cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(f, free0);                                   /* VA costs nothing */

    CUmemGenericAllocationHandle h;
    CHECK_EQ(cuMemCreate(&h, 3 * MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE); /* not granular */
    CHECK_EQ(cuMemCreate(&h, 4 * MiB, &prop, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(free0 - f, 4 * MiB);

    CHECK_EQ(cuMemMap(va + 2 * MiB, 4 * MiB, 0, h, 0), CUDA_SUCCESS);
    unsigned char buf[256];
    memset(buf, 0x5a, sizeof buf);
    CHECK_EQ(cuMemcpyHtoD(va + 2 * MiB, buf, sizeof buf), CUDA_ERROR_INVALID_VALUE); /* no access yet */
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_EQ(cuMemSetAccess(va + 2 * MiB, 4 * MiB, &acc, 1), CUDA_SUCCESS);
    CHECK_EQ(cuMemcpyHtoD(va + 2 * MiB + 4 * MiB - sizeof buf, buf, sizeof buf), CUDA_SUCCESS);
    CHECK_EQ(cuMemsetD8(va + 2 * MiB, 0x11, 1024), CUDA_SUCCESS);
    CHECK_EQ(((unsigned char *)(uintptr_t)va)[2 * MiB + 1023], 0x11); /* real, host-visible pages */

    /* release while mapped: memory and its capacity stay until the unmap */
    CHECK_EQ(cuMemRelease(h), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(free0 - f, 4 * MiB);
    memset(buf, 0, sizeof buf);
    CHECK_EQ(cuMemcpyDtoH(buf, va + 2 * MiB + 4 * MiB - sizeof buf, sizeof buf), CUDA_SUCCESS);
    CHECK_EQ(buf[0], 0x5a);
    CHECK_EQ(buf[255], 0x5a);
    CHECK_EQ(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);          /* no reference left */

    CHECK_EQ(cuMemAddressFree(va, 64 * MiB), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    CHECK_EQ(cuMemUnmap(va + 2 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE); /* partial */
    CHECK_EQ(cuMemUnmap(va + 2 * MiB, 4 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(f, free0);                                           /* now it is gone */
    CHECK_EQ(cuMemcpyDtoH(buf, va + 2 * MiB, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemAddressFree(va, 64 * MiB), CUDA_SUCCESS);

    /* capacity is enforced for physical memory */
    CHECK_EQ(cuMemCreate(&h, 2048 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    printf("vmm: ok\n");
    return 0;
}
