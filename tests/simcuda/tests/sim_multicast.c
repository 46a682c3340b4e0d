/*
 * sim_multicast.c - multicast objects on the simulated driver (docs/simcuda.md
 * "Multicast objects"): granularity, the object's capacity charged at create and
 * returned after release and unmap, the team, bindings by handle and by address,
 * unbinding, and the error codes of each entry point. Linked against the simulated
 * libcuda.so.1 directly; two devices (SIMCUDA_DEVICES=2), SIMCUDA_MEM=1GiB.
 */
#include <cuda.h>
#include <string.h>

#include "sim_check.h"

int main(void)
{
    CUmulticastObjectProp mp;
    memset(&mp, 0, sizeof mp);
    mp.numDevices = 2;
    mp.size = 4 * MiB;
    size_t g = 0;
    CHECK_EQ(cuMulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_MINIMUM), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext ctx;
    CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 1), CUDA_SUCCESS);
    CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);   /* the object's memory goes to device 1 */

    CHECK_EQ(cuMulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_RECOMMENDED), CUDA_SUCCESS);
    CHECK_EQ(g, 2 * MiB);
    CHECK_EQ(cuMulticastGetGranularity(NULL, &mp, CU_MULTICAST_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMulticastGetGranularity(&g, NULL, CU_MULTICAST_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);

    CUmemGenericAllocationHandle mc = 0, mem0 = 0, mem1 = 0;
    CHECK_EQ(cuMulticastCreate(NULL, &mp), CUDA_ERROR_INVALID_VALUE);
    mp.size = 3 * MiB;
    CHECK_EQ(cuMulticastCreate(&mc, &mp), CUDA_ERROR_INVALID_VALUE);          /* not granular */
    mp.size = 4 * MiB;
    mp.numDevices = 3;
    CHECK_EQ(cuMulticastCreate(&mc, &mp), CUDA_ERROR_INVALID_VALUE);          /* 2 devices only */
    mp.numDevices = 2;
    mp.flags = 1;
    CHECK_EQ(cuMulticastCreate(&mc, &mp), CUDA_ERROR_INVALID_VALUE);
    mp.flags = 0;
    mp.handleTypes = CU_MEM_HANDLE_TYPE_WIN32;
    CHECK_EQ(cuMulticastCreate(&mc, &mp), CUDA_ERROR_NOT_SUPPORTED);
    mp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

    size_t free1, f, total;
    CHECK_EQ(cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastCreate(&mc, &mp), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(free1 - f, 4 * MiB);                                             /* charged to device 1 */

    CUmemAllocationProp pp;
    memset(&pp, 0, sizeof pp);
    pp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = 0;
    CHECK_EQ(cuMemCreate(&mem0, 4 * MiB, &pp, 0), CUDA_SUCCESS);
    pp.location.id = 1;
    CHECK_EQ(cuMemCreate(&mem1, 4 * MiB, &pp, 0), CUDA_SUCCESS);

    CHECK_EQ(cuMulticastAddDevice(mc, 2), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ(cuMulticastAddDevice(mc + 1000, 0), CUDA_ERROR_INVALID_VALUE);   /* unknown handle */
    CHECK_EQ(cuMulticastAddDevice(mem0, 0), CUDA_ERROR_INVALID_VALUE);        /* not multicast */
    CHECK_EQ(cuMulticastAddDevice(mc, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);          /* already added */
    CHECK_EQ(cuMulticastBindMem(mc, 0, mem0, 0, 4 * MiB, 0), CUDA_ERROR_ILLEGAL_STATE); /* team not whole */
    CHECK_EQ(cuMulticastAddDevice(mc, 1), CUDA_SUCCESS);

    CHECK_EQ(cuMulticastBindMem(mc, 0, mem0, 0, 4 * MiB, 1), CUDA_ERROR_INVALID_VALUE);     /* flags */
    CHECK_EQ(cuMulticastBindMem(mc, 0, mem0, 0, 6 * MiB, 0), CUDA_ERROR_INVALID_VALUE);     /* too big */
    CHECK_EQ(cuMulticastBindMem(mc, 2 * MiB, mem0, 0, 4 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMulticastBindMem(mc, 0, mc, 0, 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);       /* itself */
    CHECK_EQ(cuMulticastBindMem(mc, 0, mem0, 0, 4 * MiB, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastBindMem(mc, 2 * MiB, mem0, 0, 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE); /* overlaps */

    /* by address: device 1's memory mapped, bound through its address */
    CUdeviceptr va = 0;
    CHECK_EQ(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMemMap(va, 4 * MiB, 0, mem1, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastBindAddr(mc, 0, va + 4 * MiB, 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE); /* unmapped */
    CHECK_EQ(cuMulticastBindAddr(mc, 0, va, 4 * MiB, 0), CUDA_SUCCESS);

    CHECK_EQ(cuMulticastUnbind(mc, 0, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  /* not that size */
    CHECK_EQ(cuMulticastUnbind(mc, 5, 0, 4 * MiB), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ(cuMulticastUnbind(mc, 0, 0, 4 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastUnbind(mc, 0, 0, 4 * MiB), CUDA_ERROR_INVALID_VALUE);  /* gone */

    /* the object mapped, released while mapped: its memory stays until the unmap */
    CHECK_EQ(cuMemMap(va + 4 * MiB, 4 * MiB, 0, mc, 0), CUDA_SUCCESS);
    CHECK_EQ(cuMemRelease(mc), CUDA_SUCCESS);
    CHECK_EQ(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);          /* released */
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(free1 - f, 8 * MiB);                                             /* object + mem1 */
    CHECK_EQ(cuMemUnmap(va + 4 * MiB, 4 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(free1 - f, 4 * MiB);                                             /* mem1 only */
    CHECK_EQ(cuMemRelease(mc), CUDA_ERROR_INVALID_VALUE);

    CHECK_EQ(cuMemUnmap(va, 4 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cuMemRelease(mem1), CUDA_SUCCESS);
    CHECK_EQ(cuMemRelease(mem0), CUDA_SUCCESS);
    CHECK_EQ(cuMemAddressFree(va, 8 * MiB), CUDA_SUCCESS);
    CHECK_EQ(cuMemGetInfo(&f, &total), CUDA_SUCCESS);
    CHECK_EQ(f, free1);

    /* through the resolver, as the runtime finds it */
    void *p = NULL;
    CHECK_EQ(cuGetProcAddress_v2("cuMulticastCreate", &p, 13000, 0, NULL), CUDA_SUCCESS);
    CHECK(p == (void *)cuMulticastCreate);
    printf("sim_multicast ok\n");
    return 0;
}
