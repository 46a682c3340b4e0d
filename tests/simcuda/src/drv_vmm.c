/*
 * drv_vmm.c - virtual memory management of the simulated driver (cuda.h
 * "Virtual Memory Management", CUDA 13.0).
 *
 * Design:
 *   cuMemCreate        memfd of `size` bytes; charges device capacity (vmm_bytes)
 *   cuMemAddressReserve mmap(PROT_NONE, NORESERVE) aligned range; charges nothing
 *   cuMemMap           mmap(MAP_SHARED|MAP_FIXED) of the memfd into a reservation,
 *                      PROT_NONE until cuMemSetAccess grants read/write
 *   cuMemUnmap         replaces whole mappings by PROT_NONE anonymous memory
 *   cuMemRelease       drops a handle reference
 *   cuMemExportToShareableHandle  a new descriptor of the memfd (POSIX_FILE_DESCRIPTOR,
 *                      when requested at cuMemCreate); the caller owns it
 *   cuMemImportFromShareableHandle a handle of its own on the memfd behind a
 *                      descriptor another process exported (size: the file's),
 *                      not charged to this process's device; each import is a new
 *                      handle with one reference
 * Physical memory (and its capacity) is freed only when the handle is released
 * AND no mapping remains, as cuda.h documents for cuMemRelease. Sizes, offsets
 * and addresses must be multiples of the 2 MiB granularity.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int aligned(size_t v) { return (v & (SIM_GRANULARITY - 1)) == 0; }

void phys_maybe_destroy_locked(sim_phys *p)
{
    if (p->refs == 0 && p->maps == 0) {
        HASH_DEL(sim_drv.phys, p);
        sim_mcast_free_locked(p);
        close(p->fd);
        if (!p->imported)
            sim_drv.dev[p->device].vmm_bytes -= p->size;
        free(p);
    }
}

sim_map *sim_map_find_locked(uintptr_t p, size_t len)
{
    sim_map *m, *tmp;
    HASH_ITER(hh, sim_drv.maps, m, tmp) {
        if (p >= m->addr && p - m->addr < m->size)
            return (m->prot & PROT_WRITE) && len <= m->size - (p - m->addr) ? m : NULL;
    }
    return NULL;
}

static CUresult prop_device(const CUmemAllocationProp *prop, int *dev)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id < 0 || prop->location.id >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = prop->location.id;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    SIM_REQUIRE_INIT();
    int dev;
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = prop_device(prop, &dev);
    if (r == CUDA_SUCCESS)
        *granularity = SIM_GRANULARITY;
    return r;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    int dev;
    if (!handle || size == 0 || !aligned(size) || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = prop_device(prop, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED; /* Win32 and fabric handles: not on this device */
    SIM_LOCK();
    sim_device *d = &sim_drv.dev[dev];
    sim_phys *p = NULL;
    if (sim_fail_next_locked() || size > sim_device_free_locked(d)) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    p = calloc(1, sizeof *p);
    int fd = p ? memfd_create("simcuda-vmm", MFD_CLOEXEC) : -1;
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        free(p);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    p->id = sim_drv.next_phys_id++;
    p->fd = fd;
    p->size = size;
    p->device = dev;
    p->refs = 1;
    p->handle_types = (unsigned)prop->requestedHandleTypes;
    d->vmm_bytes += size;
    HASH_ADD(hh, sim_drv.phys, id, sizeof p->id, p);
    *handle = p->id;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    uint64_t id = handle;
    sim_phys *p;
    HASH_FIND(hh, sim_drv.phys, &id, sizeof id, p);
    CUresult r = CUDA_SUCCESS;
    if (!p || p->refs == 0) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        p->refs--;
        phys_maybe_destroy_locked(p);
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    SIM_REQUIRE_INIT();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_map *m, *tmp, *hit = NULL;
    uintptr_t a = (uintptr_t)addr;
    HASH_ITER(hh, sim_drv.maps, m, tmp)
        if (a >= m->addr && a - m->addr < m->size)
            hit = m;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (hit && hit->phys->refs > 0) {
        hit->phys->refs++;
        *handle = hit->phys->id;
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    (void)addr; /* the hint is not honoured, as the driver is allowed to */
    SIM_REQUIRE_INIT();
    if (!ptr || size == 0 || !aligned(size) || flags != 0 ||
        (alignment && (alignment & (alignment - 1))))
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > SIM_GRANULARITY ? alignment : SIM_GRANULARITY;
    size_t len = size + align;
    void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
    if (base > (uintptr_t)m)
        munmap(m, base - (uintptr_t)m);
    uintptr_t end = (uintptr_t)m + len;
    if (end > base + size)
        munmap((void *)(base + size), end - (base + size));
    sim_reserve *r = calloc(1, sizeof *r);
    if (!r) {
        munmap((void *)base, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    r->base = base;
    r->size = size;
    SIM_LOCK();
    HASH_ADD(hh, sim_drv.reserves, base, sizeof r->base, r);
    SIM_UNLOCK();
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    uintptr_t base = (uintptr_t)ptr;
    sim_reserve *r;
    HASH_FIND(hh, sim_drv.reserves, &base, sizeof base, r);
    CUresult res = CUDA_SUCCESS;
    if (!r || r->size != size) {
        res = CUDA_ERROR_INVALID_VALUE;
    } else {
        sim_map *m, *tmp;
        HASH_ITER(hh, sim_drv.maps, m, tmp)
            if (m->addr >= base && m->addr < base + size)
                res = CUDA_ERROR_INVALID_VALUE; /* still mapped: cuMemUnmap first */
        if (res == CUDA_SUCCESS) {
            HASH_DEL(sim_drv.reserves, r);
            munmap((void *)r->base, r->size);
            free(r);
        }
    }
    SIM_UNLOCK();
    return res;
}

static sim_reserve *reserve_containing_locked(uintptr_t p, size_t len)
{
    sim_reserve *r, *tmp;
    HASH_ITER(hh, sim_drv.reserves, r, tmp)
        if (p >= r->base && p - r->base < r->size && len <= r->size - (p - r->base))
            return r;
    return NULL;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    uintptr_t a = (uintptr_t)ptr;
    if (size == 0 || flags != 0 || !aligned(size) || !aligned(offset) || !aligned(a))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    uint64_t id = handle;
    sim_phys *p;
    HASH_FIND(hh, sim_drv.phys, &id, sizeof id, p);
    if (!p || p->refs == 0 || offset > p->size || size > p->size - offset ||
        !reserve_containing_locked(a, size)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    sim_map *m, *tmp;
    HASH_ITER(hh, sim_drv.maps, m, tmp)
        if (a < m->addr + m->size && m->addr < a + size) {
            r = CUDA_ERROR_INVALID_VALUE; /* overlaps an existing mapping */
            goto out;
        }
    m = calloc(1, sizeof *m);
    if (!m || mmap((void *)a, size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset) == MAP_FAILED) {
        free(m);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    m->addr = a;
    m->size = size;
    m->offset = offset;
    m->phys = p;
    m->prot = PROT_NONE;
    p->maps++;
    HASH_ADD(hh, sim_drv.maps, addr, sizeof m->addr, m);
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    SIM_REQUIRE_INIT();
    uintptr_t a = (uintptr_t)ptr;
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    /* The range must consist of whole mappings and contain at least one. */
    size_t covered = 0;
    int partial = 0;
    sim_map *m, *tmp;
    HASH_ITER(hh, sim_drv.maps, m, tmp) {
        if (a < m->addr + m->size && m->addr < a + size) {
            if (m->addr < a || m->addr + m->size > a + size)
                partial = 1;
            else
                covered += m->size;
        }
    }
    if (partial || covered != size) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    HASH_ITER(hh, sim_drv.maps, m, tmp) {
        if (m->addr >= a && m->addr + m->size <= a + size) {
            mmap((void *)m->addr, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
            HASH_DEL(sim_drv.maps, m);
            m->phys->maps--;
            phys_maybe_destroy_locked(m->phys);
            free(m);
        }
    }
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    SIM_REQUIRE_INIT();
    uintptr_t a = (uintptr_t)ptr;
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            desc[i].location.id < 0 || desc[i].location.id >= sim_drv.ndev)
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            prot = PROT_READ | PROT_WRITE;
        else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ && prot == PROT_NONE)
            prot = PROT_READ;
        else if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                 desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ)
            return CUDA_ERROR_INVALID_VALUE;
    }
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    size_t covered = 0;
    sim_map *m, *tmp;
    HASH_ITER(hh, sim_drv.maps, m, tmp)
        if (m->addr >= a && m->addr + m->size <= a + size)
            covered += m->size;
    if (covered != size) {
        r = CUDA_ERROR_INVALID_VALUE; /* the whole range must be mapped */
        goto out;
    }
    HASH_ITER(hh, sim_drv.maps, m, tmp)
        if (m->addr >= a && m->addr + m->size <= a + size) {
            mprotect((void *)m->addr, m->size, prot);
            m->prot = prot;
        }
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    if (!shareableHandle || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    uint64_t id = handle;
    sim_phys *p;
    HASH_FIND(hh, sim_drv.phys, &id, sizeof id, p);
    CUresult r = CUDA_SUCCESS;
    int fd;
    if (!p || p->refs == 0 || !(p->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        r = CUDA_ERROR_INVALID_VALUE; /* not requested at cuMemCreate */
    else if ((fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0)) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *(int *)shareableHandle = fd;
    SIM_UNLOCK();
    return r;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    SIM_REQUIRE_INIT();
    if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = (int)(intptr_t)osHandle;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || !aligned((size_t)st.st_size))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c = sim_ctx_current();
    sim_phys *p = calloc(1, sizeof *p);
    int own = p ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    CUresult r = CUDA_SUCCESS;
    if (own < 0) {
        free(p);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    p->id = sim_drv.next_phys_id++;
    p->fd = own;
    p->size = (size_t)st.st_size;
    p->device = c && sim_ctx_valid_locked(c) ? c->device : 0;
    p->refs = 1;
    p->handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    p->imported = 1;
    HASH_ADD(hh, sim_drv.phys, id, sizeof p->id, p);
    *handle = p->id;
out:
    SIM_UNLOCK();
    return r;
}
