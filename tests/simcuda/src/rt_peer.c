/*
 * rt_peer.c - peer access and occupancy of the simulated runtime
 * (cuda_runtime_api.h "Peer Device Memory Access" and "Occupancy", CUDA 13.0): what
 * multi-process samples call besides memory (docs/simcuda.md).
 *
 *   cudaDeviceCanAccessPeer      1 for two different valid devices (every simulated
 *                                device shares the host's memory), 0 for the same;
 *                                an invalid device: cudaErrorInvalidDevice
 *   cudaDeviceEnablePeerAccess   from the current device to peerDevice; flags must be
 *                                0 (cudaErrorInvalidValue); the current device itself
 *                                or an invalid one: cudaErrorInvalidDevice; twice:
 *                                cudaErrorPeerAccessAlreadyEnabled
 *   cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
 *                                min(32, 2048 / blockSize) blocks (the Hopper-like
 *                                device's thread and block limits per SM); blockSize
 *                                outside 1..1024 or unknown flags: cudaErrorInvalidValue
 * Thread safety: the enabled pairs are a bit set per device under peer_lock.
 */
#include "rt_internal.h"

#include <pthread.h>
#include <stdint.h>

static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t peer_enabled[64];   /* [device] bit p: access to peer p enabled */

static int device_count(void)
{
    int n = 0;
    return rt_drv.cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
}

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (!canAccessPeer)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    int n = device_count();
    if (device < 0 || device >= n || peerDevice < 0 || peerDevice >= n)
        return rt_ret(cudaErrorInvalidDevice);
    *canAccessPeer = device != peerDevice;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    cudaError_t e = rt_ctx();
    if (e != cudaSuccess)
        return e;
    if (flags != 0)
        return rt_ret(cudaErrorInvalidValue);
    int dev = rt_current_device(), n = device_count();
    if (peerDevice < 0 || peerDevice >= n || peerDevice == dev || peerDevice >= 64 || dev >= 64)
        return rt_ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&peer_lock);
    int already = (int)(peer_enabled[dev] >> peerDevice & 1);
    peer_enabled[dev] |= (uint64_t)1 << peerDevice;
    pthread_mutex_unlock(&peer_lock);
    return already ? rt_ret(cudaErrorPeerAccessAlreadyEnabled) : cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    (void)func;
    (void)dynamicSMemSize;
    if (!numBlocks || blockSize <= 0 || blockSize > 1024 ||
        (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return rt_ret(cudaErrorInvalidValue);
    int b = 2048 / blockSize;
    *numBlocks = b > 32 ? 32 : b;
    return cudaSuccess;
}
