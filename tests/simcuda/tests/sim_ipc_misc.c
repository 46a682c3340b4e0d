/*
 * sim_ipc_misc.c - what multi-process samples call besides memory, on the simulated
 * device (docs/simcuda.md): interprocess event handles, a pool's access by other
 * devices, peer access and occupancy, with their error codes; and an IPC memory
 * handle refused in the process that exported it. Two simulated devices.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_check.h"

int main(void)
{
    /* events: only interprocess events without timing export; a handle opens in
     * another process, not in this one */
    cudaEvent_t plain, ipc;
    CHECK_EQ(cudaEventCreate(&plain), cudaSuccess);
    CHECK_EQ(cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
    cudaIpcEventHandle_t eh;
    CHECK_EQ(cudaIpcGetEventHandle(&eh, plain), cudaErrorInvalidValue);
    CHECK_EQ(cudaIpcGetEventHandle(&eh, ipc), cudaSuccess);
    cudaEvent_t opened;
    CHECK_EQ(cudaIpcOpenEventHandle(&opened, eh), cudaErrorDeviceUninitialized);
    pid_t child = fork();
    if (child == 0) {
        int ok = cudaIpcOpenEventHandle(&opened, eh) == cudaSuccess && cudaEventSynchronize(opened) == cudaSuccess &&
                 cudaEventDestroy(opened) == cudaSuccess;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cudaIpcEventHandle_t junk;
    memset(&junk, 0x5a, sizeof junk);
    CHECK_EQ(cudaIpcOpenEventHandle(&opened, junk), cudaErrorInvalidResourceHandle);

    /* IPC memory: the exporter cannot open its own handle */
    void *p;
    CHECK_EQ(cudaMalloc(&p, MiB), cudaSuccess);
    cudaIpcMemHandle_t mh;
    CHECK_EQ(cudaIpcGetMemHandle(&mh, p), cudaSuccess);
    void *q;
    CHECK_EQ(cudaIpcOpenMemHandle(&q, mh, cudaIpcMemLazyEnablePeerAccess), cudaErrorDeviceUninitialized);
    CHECK_EQ(cudaFree(p), cudaSuccess);

    /* pool access: its own device always; device 1 once granted */
    cudaMemPool_t pool;
    CHECK_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
    struct cudaMemLocation loc = {cudaMemLocationTypeDevice, 1};
    enum cudaMemAccessFlags f;
    CHECK_EQ(cudaMemPoolGetAccess(&f, pool, &loc), cudaSuccess);
    CHECK_EQ(f, cudaMemAccessFlagsProtNone);
    struct cudaMemAccessDesc d = {{cudaMemLocationTypeDevice, 1}, cudaMemAccessFlagsProtReadWrite};
    CHECK_EQ(cudaMemPoolSetAccess(pool, &d, 1), cudaSuccess);
    CHECK_EQ(cudaMemPoolGetAccess(&f, pool, &loc), cudaSuccess);
    CHECK_EQ(f, cudaMemAccessFlagsProtReadWrite);
    loc.id = 0;
    CHECK_EQ(cudaMemPoolGetAccess(&f, pool, &loc), cudaSuccess);
    CHECK_EQ(f, cudaMemAccessFlagsProtReadWrite);
    d.location.id = 7;
    CHECK_EQ(cudaMemPoolSetAccess(pool, &d, 1), cudaErrorInvalidDevice);

    /* peers and occupancy */
    int can = -1;
    CHECK_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
    CHECK_EQ(can, 1);
    CHECK_EQ(cudaDeviceCanAccessPeer(&can, 0, 0), cudaSuccess);
    CHECK_EQ(can, 0);
    CHECK_EQ(cudaDeviceCanAccessPeer(&can, 0, 5), cudaErrorInvalidDevice);
    CHECK_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
    CHECK_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    CHECK_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    CHECK_EQ(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
    int blocks = 0;
    CHECK_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, (const void *)main, 256, 0, 0), cudaSuccess);
    CHECK_EQ(blocks, 8);
    CHECK_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, (const void *)main, 2048, 0, 0),
             cudaErrorInvalidValue);
    printf("ok\n");
    return 0;
}
