/* vt_driver.h — every question vramtrace asks the real CUDA driver for its own use:
 * the device of the current context, free/total memory, a pool's reserve, whether a
 * primary context is still active, whether an address is still allocated.
 *
 * The real driver functions come from the interpose layer's resolver
 * (vt_resolve.c fills vt__driver_fns[] from the same objects as the hooked functions:
 * RTLD_NEXT, a privately opened driver, a plugin's own scope). Until one is found its
 * query answers "not known". Follows the CUDA Driver API (cuda.h, CUDA 13): "Context
 * Management", "Memory Management", "Graph Management", "Stream Ordered Memory Allocator", "Unified
 * Addressing". The driver's types are spelt as their C ABI here (CUcontext a pointer,
 * CUdevice and CUresult int, CUDA_SUCCESS 0), so this header needs no cuda.h.
 *
 * Every query returns values and stores nothing in the core; callers decide what to
 * record. Thread-safe (atomic slots; the per-thread context cache is thread-local).
 * None takes a lock of ours; the caller must hold none either (the driver may call
 * back into hooked functions, which the caller's depth guard then only forwards).
 */
#ifndef VT_DRIVER_H
#define VT_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include "vt_guard.h"

/* One real driver function vramtrace calls for itself, by exported name. */
typedef struct vt_driver_fn {
    const char *name;   /* "cuCtxGetCurrent"             */
    void      **slot;   /* the real function, NULL until found (atomic) */
} vt_driver_fn;
extern const vt_driver_fn vt__driver_fns[];
extern const size_t       vt__n_driver_fns;

extern void    *vt__drv_cuCtxGetCurrent;   /* atomic; read inline below */
extern void    *vt__drv_cuCtxGetDevice;
extern uint32_t vt__ctx_gen;               /* atomic: bumps when any context dies */

/* Device (and CUcontext, in *ctx_out, 0 when none) current on this thread: one real
 * cuCtxGetCurrent and a compare with the thread's cached (context, generation) on the
 * common path; on a miss the real cuCtxGetDevice. Returns the ordinal, or -1 (no
 * context, or the driver is not known yet). Inline: every allocation hook calls it
 * right after the real call, when the allocating context is current. */
static inline __attribute__((always_inline)) int vt_driver_device_current(uint64_t *ctx_out)
{
    void *ctx = 0;
    *ctx_out = 0;
    typedef int (*get_current_t)(void **);
    typedef int (*get_device_t)(int *);
    get_current_t get_current = (get_current_t)__atomic_load_n(&vt__drv_cuCtxGetCurrent, __ATOMIC_ACQUIRE);
    uint32_t gen = __atomic_load_n(&vt__ctx_gen, __ATOMIC_ACQUIRE);
    if (__builtin_expect(get_current != 0, 1) && get_current(&ctx) == 0) {
        if (!ctx)
            return -1;
        *ctx_out = (uint64_t)(uintptr_t)ctx;
        if (__builtin_expect(vt__tls.ctx == (uint64_t)(uintptr_t)ctx && vt__tls.ctx_gen == gen, 1))
            return vt__tls.ctx_device;
    }
    get_device_t get_device = (get_device_t)__atomic_load_n(&vt__drv_cuCtxGetDevice, __ATOMIC_ACQUIRE);
    int dev = -1;
    if (!get_device || get_device(&dev) != 0)
        return -1;
    if (ctx) {
        vt__tls.ctx = (uint64_t)(uintptr_t)ctx;
        vt__tls.ctx_device = dev;
        vt__tls.ctx_gen = gen;
    }
    return dev;
}

/* A context was destroyed or reset: every thread's cached context -> device is stale. */
void vt_driver_ctx_changed(void);

/* cuMemGetInfo_v2 of the current context: free and total bytes. 0, or -1 (no
 * driver, no context, or an error). Preserves errno. */
int vt_driver_meminfo(uint64_t *free_bytes, uint64_t *total_bytes);

/* Notes stream-ordered allocation activity on device (0..63; others ignored), so that
 * vt_driver_pool_devices lists it. Async-signal-safe (one atomic or). */
void vt_driver_pool_seen(int device);
/* Bit d set: device d has had stream-ordered allocations. */
uint64_t vt_driver_pool_devices(void);
/* The stream-ordered pools of device, sampled: its default pool
 * (cuDeviceGetDefaultMemPool) and every pool noted with vt_driver_pool_note, each
 * asked with cuMemPoolGetAttribute RESERVED_MEM_CURRENT (bytes the pool holds from
 * the device) and USED_MEM_CURRENT (bytes of it handed out and not freed); *reserved
 * and *used are the sums over the pools that answered each. Returns 0 when some pool
 * answered the reserve (*used_known: 1 when some pool answered the use too), -1 when
 * none did. Preserves errno. Called by the writer only; it holds no lock of ours
 * across the driver calls. */
int vt_driver_pool_sample(int device, uint64_t *reserved, uint64_t *used, int *used_known);

/* The pools the program creates or allocates from (cudaMemPoolCreate, cuMemPoolCreate,
 * *MallocFromPoolAsync): at most VT_DRIVER_POOLS at once; more are not sampled.
 * vt_driver_pool_note(pool, device) notes pool (a CUmemoryPool / cudaMemPool_t) on
 * device (0..63; anything else: ignored) and marks the device for vt__refresh; a pool
 * already noted is left as it is. Cheap when the pool is already noted (lock-free
 * scan). vt_driver_pool_forget(pool), BEFORE the real destroy: takes it out and waits
 * until no sample of it is in flight, so the writer never asks the driver about a
 * destroyed pool; returns the device it was noted on, or -1 when it was not noted
 * (re-note it with that device if the destroy fails). Thread-safe; neither calls the
 * driver. */
#define VT_DRIVER_POOLS 64
void vt_driver_pool_note(uint64_t pool, int device);
int  vt_driver_pool_forget(uint64_t pool);
/* Fork child (one thread): the parent's pools mean nothing here; forgets them all. */
void vt_driver_after_fork_child(void);

/* Whether device's primary context is still active (cuDevicePrimaryCtxGetState):
 * 1 active, 0 not (the last release destroyed it), -1 not known. Preserves errno. */
int vt_driver_primary_ctx_active(int device);

/* Whether an allocation still starts at addr (cuPointerGetAttribute
 * CU_POINTER_ATTRIBUTE_RANGE_START_ADDR; the driver answers CUDA_ERROR_INVALID_VALUE
 * for an address no allocation holds): 1 yes, 0 no, -1 not known. Preserves errno. */
int vt_driver_still_allocated(uint64_t addr);

/* The driver's own size of a CUDA array (mipmapped 0: a CUarray / cudaArray_t) or
 * mipmapped array (mipmapped 1) on device: cuArrayGetMemoryRequirements /
 * cuMipmappedArrayGetMemoryRequirements ("Memory Management"; a real driver answers
 * only for arrays created with CUDA_ARRAY3D_DEFERRED_MAPPING). 1 and *size in bytes
 * when it answered with a size, 0 when it says the handle is no live array
 * (CUDA_ERROR_INVALID_HANDLE), -1 otherwise (not known, or no answer). Preserves
 * errno. */
int vt_driver_array_requirements(uint64_t handle, int mipmapped, int device, uint64_t *size);
/* Whether handle is still a live CUDA array or mipmapped array
 * (cuArray3DGetDescriptor_v2, else cuMipmappedArrayGetLevel of level 0): 1 yes, 0
 * both say CUDA_ERROR_INVALID_HANDLE, -1 not known. For a failed array free only
 * (the handle was one the driver gave). Preserves errno. */
int vt_driver_array_alive(uint64_t handle);
/* Bytes from addr to the end of the allocation that holds it (cuMemGetAddressRange_v2,
 * "Memory Management"): what an imported mapping the hook saw only as a pointer
 * spans. 0 and *size, or -1 when not known. Preserves errno. */
int vt_driver_range_size(uint64_t addr, uint64_t *size);

/* Number of CUDA devices the driver sees (cuDeviceGetCount), or -1 when not known.
 * Preserves errno. */
int vt_driver_device_count(void);
/* The 16 bytes of device's UUID (cuDeviceGetUuid_v2, "Device Management"). 0, or -1
 * when not known. Preserves errno. */
int vt_driver_device_uuid(int device, unsigned char uuid[16]);

/* Whether stream (a CUstream / cudaStream_t) is capturing (cuStreamGetCaptureInfo_v3,
 * "Stream Management"): 1 and *graph (the CUgraph being captured) when its capture is
 * active, 0 when it is not capturing (or its capture is invalidated), -1 not known.
 * Preserves errno. */
int vt_driver_capture_graph(uint64_t stream, uint64_t *graph);
/* The graph memory pool of device (cuDeviceGetGraphMemAttribute, "Graph
 * Management"): *reserved RESERVED_MEM_CURRENT, *used USED_MEM_CURRENT. 0, or -1
 * when not known. Preserves errno. Called by the writer only. */
int vt_driver_graph_mem(int device, uint64_t *reserved, uint64_t *used);

#endif /* VT_DRIVER_H */
