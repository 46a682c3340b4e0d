/*
 * drv_memory.c - ordinary device, managed and pinned host memory of the
 * simulated driver, plus memcpy/memset and pointer queries (cuda.h "Memory
 * Management", CUDA 13.0).
 *
 * Placement rule (docs/simcuda.md): a request below 1 MiB is rounded up to a
 * multiple of 256 bytes and aligned to 256; a request of 1 MiB or more is rounded
 * up to 2 MiB and aligned to 2 MiB. cuMemGetInfo_v2 reports
 *   free  = capacity - overhead - placed bytes - VMM physical bytes
 *   total = capacity
 * where overhead is the fixed context overhead min(64 MiB, capacity/8).
 * Pinned host memory (cuMemAllocHost_v2, cuMemHostAlloc) is an anonymous mmap per
 * allocation; it is not charged to any device but is owned by the context.
 * Registered host memory (cuMemHostRegister_v2) is a range of the program's own
 * memory, recorded the same way (kind SIM_KIND_REGISTERED) and owned by the context,
 * but never mapped, unmapped or charged by the driver; cuMemHostUnregister (or the
 * context's teardown) only forgets it.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

size_t sim_span_for(size_t size, size_t *align)
{
    if (size >= SIM_LARGE_THRESHOLD) {
        *align = SIM_GRANULARITY;
        return (size + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
    }
    *align = SIM_SMALL_ALIGN;
    return (size + SIM_SMALL_ALIGN - 1) & ~(SIM_SMALL_ALIGN - 1);
}

int sim_fail_next_locked(void)
{
    uint64_t n = ++sim_drv.alloc_count;
    for (unsigned i = 0; i < sim_drv.env.nfail; i++)
        if (sim_drv.env.fail_at[i] == n)
            return 1;
    return 0;
}

int sim_device_place_locked(int dev, size_t span, size_t align, uintptr_t *addr)
{
    sim_device *d = &sim_drv.dev[dev];
    if (span > sim_device_free_locked(d))
        return -1;
    size_t off;
    if (sim_arena_alloc(&d->arena, span, align, &off) != 0)
        return -1;
    *addr = d->base + off;
    return 0;
}

void sim_device_unplace_locked(int dev, uintptr_t addr, size_t span)
{
    sim_device *d = &sim_drv.dev[dev];
    /* Give back only the pages wholly inside the extent: a partial page may
     * hold a neighbour's bytes. Freed pages read as zero when reused. */
    uintptr_t lo = (addr + 4095) & ~(uintptr_t)4095, hi = (addr + span) & ~(uintptr_t)4095;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
    sim_ipc_unplace_locked(dev, addr, span);
    sim_arena_free(&d->arena, addr - d->base, span);
}

int sim_device_of_addr(uintptr_t p)
{
    for (int i = 0; i < sim_drv.ndev; i++)
        if (p >= sim_drv.dev[i].base && p < sim_drv.dev[i].base + sim_drv.dev[i].arena_size)
            return i;
    return -1;
}

void sim_alloc_release_locked(sim_alloc *a)
{
    HASH_DEL(sim_drv.allocs, a);
    switch (a->kind) {
    case SIM_KIND_DEVICE:
    case SIM_KIND_MANAGED:
        sim_device_unplace_locked(a->device, a->addr, a->span);
        break;
    case SIM_KIND_HOST:
        munmap((void *)a->addr, a->span);
        break;
    case SIM_KIND_REGISTERED:
        break; /* the program's memory: only the record goes */
    case SIM_KIND_IPC:
        sim_ipc_release_locked(a);
        break;
    case SIM_KIND_POOL:
        sim_pool_free_locked(a); /* frees nothing of `a` itself */
        break;
    }
    free(a);
}

sim_alloc *sim_alloc_find_locked(uintptr_t p, size_t len)
{
    sim_alloc *a;
    HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
    if (a)
        return len <= a->size ? a : NULL;
    sim_alloc *tmp;
    HASH_ITER(hh, sim_drv.allocs, a, tmp) {
        if (p >= a->addr && p - a->addr < a->size)
            return len <= a->size - (p - a->addr) ? a : NULL;
    }
    return NULL;
}

CUresult sim_check_device_range_locked(uintptr_t p, size_t len)
{
    if (sim_alloc_find_locked(p, len) || sim_map_find_locked(p, len) || sim_graph_range_live_locked(p, len))
        return CUDA_SUCCESS;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_check_any_range_locked(uintptr_t p, size_t len)
{
    if (sim_check_device_range_locked(p, len) == CUDA_SUCCESS)
        return CUDA_SUCCESS;
    if (sim_device_of_addr(p) >= 0)
        return CUDA_ERROR_INVALID_VALUE; /* inside a device range but not allocated */
    sim_reserve *r, *tmp;
    HASH_ITER(hh, sim_drv.reserves, r, tmp)
        if (p >= r->base && p < r->base + r->size)
            return CUDA_ERROR_INVALID_VALUE; /* reserved VA without a usable mapping */
    return CUDA_SUCCESS; /* ordinary (pageable) host memory */
}

/* Allocate `size` bytes of device-arena memory of `kind` in the current context. */
static CUresult device_alloc(CUdeviceptr *dptr, size_t size, int kind, unsigned flags)
{
    SIM_REQUIRE_INIT();
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (sim_fail_next_locked()) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    size_t align, span = sim_span_for(size, &align);
    if (span < size) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    sim_alloc *a = calloc(1, sizeof *a);
    uintptr_t addr;
    if (!a || sim_device_place_locked(c->device, span, align, &addr) != 0) {
        free(a);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    a->addr = addr;
    a->size = size;
    a->span = span;
    a->kind = kind;
    a->device = c->device;
    a->flags = flags;
    a->ctx = c;
    HASH_ADD(hh, sim_drv.allocs, addr, sizeof a->addr, a);
    *dptr = (CUdeviceptr)addr;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return device_alloc(dptr, bytesize, SIM_KIND_DEVICE, 0);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (WidthInBytes + 511) & ~(size_t)511; /* texture pitch alignment 512 */
    if (Height > (size_t)-1 / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = device_alloc(dptr, pitch * Height, SIM_KIND_DEVICE, 0);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return device_alloc(dptr, bytesize, SIM_KIND_MANAGED, flags);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        uintptr_t p = (uintptr_t)dptr;
        sim_alloc *a;
        HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
        if (!a)
            r = sim_graph_free_outside_locked(p);
        else if (SIM_KIND_IS_HOST(a->kind) || SIM_IS_IPC_HANDLE(a))
            r = CUDA_ERROR_INVALID_VALUE; /* an opened IPC handle goes by cuIpcCloseMemHandle */
        else
            sim_alloc_release_locked(a);
    }
    SIM_UNLOCK();
    return r;
}

static CUresult host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!pp || bytesize == 0 ||
        (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (sim_fail_next_locked()) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    size_t span = (bytesize + 4095) & ~(size_t)4095;
    void *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sim_alloc *a = calloc(1, sizeof *a);
    if (m == MAP_FAILED || !a) {
        if (m != MAP_FAILED)
            munmap(m, span);
        free(a);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    a->addr = (uintptr_t)m;
    a->size = bytesize;
    a->span = span;
    a->kind = SIM_KIND_HOST;
    a->device = -1;
    a->flags = flags;
    a->ctx = c;
    HASH_ADD(hh, sim_drv.allocs, addr, sizeof a->addr, a);
    *pp = m;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return host_alloc(pp, bytesize, 0);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    return host_alloc(pp, bytesize, Flags);
}

/* Releases the host allocation of kind that starts at p (a current context required);
 * notfound when p starts none of that kind. */
static CUresult host_release(void *p, int kind, CUresult notfound)
{
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        uintptr_t k = (uintptr_t)p;
        sim_alloc *a;
        HASH_FIND(hh, sim_drv.allocs, &k, sizeof k, a);
        if (!a || a->kind != kind)
            r = notfound;
        else
            sim_alloc_release_locked(a);
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemFreeHost(void *p)
{
    SIM_REQUIRE_INIT();
    return host_release(p, SIM_KIND_HOST, CUDA_ERROR_INVALID_VALUE);
}

/* 1 if [p, p + len) meets memory the driver owns: a device range or a VMM
 * reservation (not host memory a program may register). Lock held. */
static int meets_driver_range_locked(uintptr_t p, size_t len)
{
    for (int i = 0; i < sim_drv.ndev; i++)
        if (p < sim_drv.dev[i].base + sim_drv.dev[i].arena_size && sim_drv.dev[i].base < p + len)
            return 1;
    sim_reserve *v, *tmp;
    HASH_ITER(hh, sim_drv.reserves, v, tmp)
        if (p < v->base + v->size && v->base < p + len)
            return 1;
    return 0;
}

/* cuMemHostRegister_v2 (cuda.h maps cuMemHostRegister to it; the resolver hands it
 * out for "cuMemHostRegister" from 6050): records [p, p + bytesize) as page-locked
 * host memory of the current context. NULL p, size 0, unknown flags, a range that
 * wraps or meets a device range or VMM reservation: CUDA_ERROR_INVALID_VALUE;
 * CU_MEMHOSTREGISTER_READ_ONLY: CUDA_ERROR_NOT_SUPPORTED (the device reports
 * CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED 0); a range that overlaps
 * registered or pinned host memory: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED. A
 * call that passes these checks counts for SIMCUDA_FAIL_AT. The memory itself is
 * not touched. */
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    SIM_REQUIRE_INIT();
    const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                           CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    uintptr_t lo = (uintptr_t)p;
    if (!p || bytesize == 0 || (Flags & ~known) || bytesize > UINTPTR_MAX - lo)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (Flags & CU_MEMHOSTREGISTER_READ_ONLY) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    if (meets_driver_range_locked(lo, bytesize)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    sim_alloc *a, *tmp;
    HASH_ITER(hh, sim_drv.allocs, a, tmp) {
        if (SIM_KIND_IS_HOST(a->kind) && lo < a->addr + a->size && a->addr < lo + bytesize) {
            r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
            goto out;
        }
    }
    if (sim_fail_next_locked()) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    a = calloc(1, sizeof *a);
    if (!a) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    a->addr = lo;
    a->size = bytesize;
    a->span = bytesize;
    a->kind = SIM_KIND_REGISTERED;
    a->device = -1;
    a->flags = Flags;
    a->ctx = c;
    HASH_ADD(hh, sim_drv.allocs, addr, sizeof a->addr, a);
out:
    SIM_UNLOCK();
    return r;
}

/* cuMemHostUnregister: forgets the registered range that starts at p (any context may
 * unregister it). NULL: CUDA_ERROR_INVALID_VALUE; p that does not start a registered
 * range (inside one, pinned memory of cuMemHostAlloc, anything else):
 * CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED. */
CUresult cuMemHostUnregister(void *p)
{
    SIM_REQUIRE_INIT();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return host_release(p, SIM_KIND_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    SIM_REQUIRE_INIT();
    if (!pdptr || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_alloc *a = sim_alloc_find_locked((uintptr_t)p, 1);
    CUresult r = (a && SIM_KIND_IS_HOST(a->kind)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: same address */
    SIM_UNLOCK();
    return r;
}

CUresult cuMemGetInfo_v2(size_t *free_, size_t *total)
{
    SIM_REQUIRE_INIT();
    if (!free_ || !total)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        sim_device *d = &sim_drv.dev[c->device];
        *free_ = sim_device_free_locked(d);
        *total = d->capacity;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    sim_alloc *a = sim_alloc_find_locked((uintptr_t)dptr, 1);
    CUresult r = CUDA_ERROR_NOT_FOUND;
    if (a && !SIM_KIND_IS_HOST(a->kind)) {
        if (pbase)
            *pbase = (CUdeviceptr)a->addr;
        if (psize)
            *psize = a->size;
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    SIM_REQUIRE_INIT();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    uintptr_t p = (uintptr_t)ptr;
    sim_alloc *a = sim_alloc_find_locked(p, 1);
    sim_map *m = a ? NULL : sim_map_find_locked(p, 1);
    CUresult r = CUDA_SUCCESS;
    if (!a && !m) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    int dev = a ? a->device : m->phys->device;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a && a->kind != SIM_KIND_POOL ? a->ctx : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = a && SIM_KIND_IS_HOST(a->kind) ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = ptr;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a && (SIM_KIND_IS_HOST(a->kind) || a->kind == SIM_KIND_MANAGED))
            *(void **)data = (void *)p;
        else
            r = CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned *)data = a && a->kind == SIM_KIND_MANAGED;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = dev < 0 ? 0 : dev;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a ? (CUdeviceptr)a->addr : (CUdeviceptr)m->addr;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a ? a->size : m->size;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(unsigned *)data = 1;
        break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = a && a->kind == SIM_KIND_POOL ? a->pool : NULL;
        break;
    default:
        r = CUDA_ERROR_NOT_SUPPORTED;
    }
out:
    SIM_UNLOCK();
    return r;
}

/* ---- copies and sets: executed synchronously on the calling thread ---- */

enum { SIDE_DEVICE = 1, SIDE_HOST = 2, SIDE_ANY = 3 };

/* A copy or set on a capturing stream is a graph node (nothing runs now). */
#define SIM_CAPTURE_NOOP(s)                                    \
    do {                                                       \
        SIM_REQUIRE_INIT();                                    \
        SIM_LOCK();                                            \
        if (sim_stream_capturing_locked(s)) {                  \
            CUresult r_ = sim_capture_noop_locked(s);          \
            SIM_UNLOCK();                                      \
            return r_;                                         \
        }                                                      \
        SIM_UNLOCK();                                          \
    } while (0)

static CUresult do_copy(uintptr_t dst, int dst_side, uintptr_t src, int src_side, size_t n)
{
    SIM_REQUIRE_INIT();
    if (n == 0)
        return CUDA_SUCCESS;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS && dst_side != SIDE_HOST)
        r = dst_side == SIDE_DEVICE ? sim_check_device_range_locked(dst, n) : sim_check_any_range_locked(dst, n);
    if (r == CUDA_SUCCESS && src_side != SIDE_HOST)
        r = src_side == SIDE_DEVICE ? sim_check_device_range_locked(src, n) : sim_check_any_range_locked(src, n);
    SIM_UNLOCK();
    if (r == CUDA_SUCCESS) {
        if (!dst || !src)
            return CUDA_ERROR_INVALID_VALUE;
        memmove((void *)dst, (const void *)src, n);
    }
    return r;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    return do_copy(dst, SIDE_ANY, src, SIDE_ANY, ByteCount);
}
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    return do_copy(dst, SIDE_ANY, src, SIDE_ANY, ByteCount);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dst, SIDE_ANY, src, SIDE_ANY, ByteCount);
}
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dst, SIDE_ANY, src, SIDE_ANY, ByteCount);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return do_copy(dstDevice, SIDE_DEVICE, (uintptr_t)srcHost, SIDE_HOST, ByteCount);
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return do_copy(dstDevice, SIDE_DEVICE, (uintptr_t)srcHost, SIDE_HOST, ByteCount);
}
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return do_copy((uintptr_t)dstHost, SIDE_HOST, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return do_copy((uintptr_t)dstHost, SIDE_HOST, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    return do_copy(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    return do_copy(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dstDevice, SIDE_DEVICE, (uintptr_t)srcHost, SIDE_HOST, ByteCount);
}
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dstDevice, SIDE_DEVICE, (uintptr_t)srcHost, SIDE_HOST, ByteCount);
}
CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy((uintptr_t)dstHost, SIDE_HOST, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy((uintptr_t)dstHost, SIDE_HOST, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE, ByteCount);
}
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_copy(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE, ByteCount);
}

static CUresult do_set(uintptr_t dst, unsigned value, size_t elem, size_t n)
{
    SIM_REQUIRE_INIT();
    if (n == 0)
        return CUDA_SUCCESS;
    if (n > (size_t)-1 / elem)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS)
        r = sim_check_device_range_locked(dst, n * elem);
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS)
        return r;
    if (elem == 1) {
        memset((void *)dst, (int)(value & 0xff), n);
    } else if (elem == 2) {
        uint16_t *p = (uint16_t *)dst;
        for (size_t i = 0; i < n; i++)
            p[i] = (uint16_t)value;
    } else {
        uint32_t *p = (uint32_t *)dst;
        for (size_t i = 0; i < n; i++)
            p[i] = value;
    }
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) { return do_set(dstDevice, uc, 1, N); }
CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) { return do_set(dstDevice, uc, 1, N); }
CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) { return do_set(dstDevice, us, 2, N); }
CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) { return do_set(dstDevice, ui, 4, N); }
CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N) { return do_set(dstDevice, ui, 4, N); }
CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_set(dstDevice, uc, 1, N);
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_set(dstDevice, uc, 1, N);
}
CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_set(dstDevice, ui, 4, N);
}
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    SIM_CAPTURE_NOOP(hStream);
    return do_set(dstDevice, ui, 4, N);
}
