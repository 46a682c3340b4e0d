/*
 * drv_multicast.c - multicast objects of the simulated driver (cuda.h "Multicast
 * Object Management", CUDA 13.0): cuMulticastCreate, cuMulticastAddDevice,
 * cuMulticastBindMem, cuMulticastBindAddr, cuMulticastUnbind,
 * cuMulticastGetGranularity.
 *
 * Design:
 *   cuMulticastCreate   a VMM handle (sim_phys, with mc set) whose memfd of `size`
 *                       bytes stands for the multicast object's own memory: charged
 *                       to the device of the calling thread's current context
 *                       (device 0 without one) like cuMemCreate memory; mapped with
 *                       cuMemMap, released with cuMemRelease, freed when released
 *                       and unmapped (drv_vmm.c)
 *   cuMulticastAddDevice adds a device to the team (numDevices at most)
 *   cuMulticastBindMem / BindAddr  records a binding of cuMemCreate memory (by handle,
 *                       or by an address of a cuMemMap mapping) on that memory's
 *                       device; binding needs the whole team added
 *   cuMulticastUnbind   removes the binding with that device, offset and size
 * A binding holds no reference on the bound memory (its own handle and mappings
 * keep it); the bound memory is counted by its cuMemCreate only.
 * Granularity (minimum and recommended): 2 MiB, as for VMM memory.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_MC_MAX_BINDS 64

typedef struct sim_mc_bind {
    int      device;
    size_t   mc_offset, size;
    uint64_t mem;          /* the bound handle's id */
} sim_mc_bind;

struct sim_mcast {
    unsigned    num_devices;
    uint64_t    added;     /* bit d: device d is in the team */
    unsigned    nbinds;
    sim_mc_bind binds[SIM_MC_MAX_BINDS];
};

static int mc_aligned(size_t v) { return (v & (SIM_GRANULARITY - 1)) == 0; }

void sim_mcast_free_locked(sim_phys *p)
{
    free(p->mc);
    p->mc = NULL;
}

/* The multicast object `handle`, or NULL (unknown, released, or not multicast). */
static sim_phys *mc_find_locked(CUmemGenericAllocationHandle handle)
{
    uint64_t id = handle;
    sim_phys *p;
    HASH_FIND(hh, sim_drv.phys, &id, sizeof id, p);
    return p && p->mc && p->refs > 0 ? p : NULL;
}

static CUresult mc_check_prop(const CUmulticastObjectProp *prop)
{
    if (!prop || prop->numDevices == 0 || prop->flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->handleTypes & ~(unsigned long long)(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
        return CUDA_ERROR_NOT_SUPPORTED;
    return CUDA_SUCCESS;
}

CUresult cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
                                   CUmulticastGranularity_flags option)
{
    SIM_REQUIRE_INIT();
    if (!granularity || (option != CU_MULTICAST_GRANULARITY_MINIMUM && option != CU_MULTICAST_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = mc_check_prop(prop);
    if (r == CUDA_SUCCESS)
        *granularity = SIM_GRANULARITY;
    return r;
}

CUresult cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop)
{
    SIM_REQUIRE_INIT();
    if (!mcHandle)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = mc_check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    if (prop->size == 0 || !mc_aligned(prop->size) || prop->numDevices > (unsigned)sim_drv.ndev)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *cur = sim_ctx_current();
    SIM_LOCK();
    int dev = cur && sim_ctx_valid_locked(cur) ? cur->device : 0;
    sim_device *d = &sim_drv.dev[dev];
    sim_phys *p = NULL;
    if (sim_fail_next_locked() || prop->size > d->arena_size - d->arena.used - d->vmm_bytes) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    p = calloc(1, sizeof *p);
    struct sim_mcast *mc = p ? calloc(1, sizeof *mc) : NULL;
    int fd = mc ? memfd_create("simcuda-multicast", MFD_CLOEXEC) : -1;
    if (fd < 0 || ftruncate(fd, (off_t)prop->size) != 0) {
        if (fd >= 0)
            close(fd);
        free(mc);
        free(p);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    mc->num_devices = prop->numDevices;
    p->id = sim_drv.next_phys_id++;
    p->fd = fd;
    p->size = prop->size;
    p->device = dev;
    p->refs = 1;
    p->mc = mc;
    d->vmm_bytes += prop->size;
    HASH_ADD(hh, sim_drv.phys, id, sizeof p->id, p);
    *mcHandle = p->id;
out:
    SIM_UNLOCK();
    return r;
}

static unsigned team_size(const struct sim_mcast *mc)
{
    return (unsigned)__builtin_popcountll(mc->added);
}

CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    sim_phys *p = mc_find_locked(mcHandle);
    CUresult r = CUDA_SUCCESS;
    if (!p || (p->mc->added & (1ull << dev)) || team_size(p->mc) >= p->mc->num_devices)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        p->mc->added |= 1ull << dev;
    SIM_UNLOCK();
    return r;
}

/* Binds [memOffset, memOffset + size) of mem at mcOffset of the multicast object. */
static CUresult bind_locked(sim_phys *p, size_t mcOffset, sim_phys *mem, size_t memOffset, size_t size)
{
    struct sim_mcast *mc = p->mc;
    if (!mem || mem->mc || mem->refs == 0 || size == 0 || !mc_aligned(size) || !mc_aligned(mcOffset) ||
        !mc_aligned(memOffset) || mcOffset > p->size || size > p->size - mcOffset ||
        memOffset > mem->size || size > mem->size - memOffset)
        return CUDA_ERROR_INVALID_VALUE;
    if (team_size(mc) < mc->num_devices)
        return CUDA_ERROR_ILLEGAL_STATE;   /* the real driver blocks until the team is whole */
    if (!(mc->added & (1ull << mem->device)))
        return CUDA_ERROR_INVALID_DEVICE;
    for (unsigned i = 0; i < mc->nbinds; i++) {
        const sim_mc_bind *b = &mc->binds[i];
        if (b->device == mem->device && mcOffset < b->mc_offset + b->size && b->mc_offset < mcOffset + size)
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (mc->nbinds == SIM_MC_MAX_BINDS)
        return CUDA_ERROR_OUT_OF_MEMORY;
    mc->binds[mc->nbinds++] = (sim_mc_bind){mem->device, mcOffset, size, mem->id};
    return CUDA_SUCCESS;
}

CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                            CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
                            unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_phys *p = mc_find_locked(mcHandle), *mem = NULL;
    uint64_t id = memHandle;
    HASH_FIND(hh, sim_drv.phys, &id, sizeof id, mem);
    CUresult r = p ? bind_locked(p, mcOffset, mem, memOffset, size) : CUDA_ERROR_INVALID_VALUE;
    SIM_UNLOCK();
    return r;
}

CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset, CUdeviceptr memptr,
                             size_t size, unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_phys *p = mc_find_locked(mcHandle);
    uintptr_t a = (uintptr_t)memptr;
    sim_map *m, *tmp, *hit = NULL;
    HASH_ITER(hh, sim_drv.maps, m, tmp)
        if (a >= m->addr && a - m->addr < m->size)
            hit = m;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (p && hit && size <= hit->size - (a - hit->addr))
        r = bind_locked(p, mcOffset, hit->phys, hit->offset + (a - hit->addr), size);
    SIM_UNLOCK();
    return r;
}

CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset, size_t size)
{
    SIM_REQUIRE_INIT();
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    sim_phys *p = mc_find_locked(mcHandle);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; p && i < p->mc->nbinds; i++) {
        sim_mc_bind *b = &p->mc->binds[i];
        if (b->device == dev && b->mc_offset == mcOffset && b->size == size) {
            *b = p->mc->binds[--p->mc->nbinds];
            r = CUDA_SUCCESS;
            break;
        }
    }
    SIM_UNLOCK();
    return r;
}
