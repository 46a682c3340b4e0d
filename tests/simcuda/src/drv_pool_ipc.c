/*
 * drv_pool_ipc.c - sharing stream-ordered pools between processes (cuda.h "Stream
 * Ordered Memory Allocator": cuMemPoolExportToShareableHandle,
 * cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer,
 * CUDA 13.0).
 *
 * Design (docs/simcuda.md "Pools shared between processes"): a pool created with
 * handleTypes CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR backs each chunk it takes with
 * the device's export memfd (drv_ipc.c), at the chunk's arena offset. Its shareable
 * handle is a new descriptor of that memfd (the caller owns it, and passes it to
 * another process, e.g. over a Unix socket with SCM_RIGHTS). The importer's pool
 * keeps its own duplicate of the descriptor; it makes no allocations (cuda.h). A
 * pointer's export data (64 bytes, struct sim_ipc_handle) holds the arena offset and
 * size of the allocation and the memfd's st_dev/st_ino; cuMemPoolImportPointer maps
 * those pages from the imported pool's descriptor into an allocation of kind
 * SIM_KIND_IPC (ipc_pid -1), freed by cuMemFree_v2 or cuMemFreeAsync. Importing the
 * same pointer again while it is imported returns the same address.
 * Errors: CUDA_ERROR_INVALID_VALUE for a pool that is not exportable (handle type not
 * requested at creation, or imported), a handle type other than POSIX_FILE_DESCRIPTOR,
 * flags != 0, a descriptor that is not a memory object, a pointer that does not start
 * a live allocation of an exportable pool, export data of another pool or of no
 * simcuda pool.
 */
#define _GNU_SOURCE
#include "drv_internal.h"
#include "drv_ipc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t next_pool_export_id = 1;   /* guarded by sim_drv.lock */

CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool, CUmemAllocationHandleType handleType,
                                          unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    if (!handle_out || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    uint64_t sd, si;
    int fd;
    if (!sim_pool_valid_locked(pool) || pool->imported ||
        !(pool->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        r = CUDA_ERROR_INVALID_VALUE;
    else if ((fd = sim_ipc_device_fd_locked(pool->device, &sd, &si)) < 0 ||
             (fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *(int *)handle_out = fd;
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle, CUmemAllocationHandleType handleType,
                                            unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    if (!pool_out || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = (int)(intptr_t)handle;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    struct CUmemPoolHandle_st *p = NULL;
    int own = -1;
    if (r != CUDA_SUCCESS)
        goto out;
    p = calloc(1, sizeof *p);
    own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (!p || own < 0) {
        free(p);
        if (own >= 0)
            close(own);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    sim_pool_init_default(p, c->device);
    p->is_default = 0;
    p->imported = 1;
    p->handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    p->import_fd = own;
    p->import_dev = (uint64_t)st.st_dev;
    p->import_ino = (uint64_t)st.st_ino;
    p->next = sim_drv.pools;
    sim_drv.pools = p;
    *pool_out = p;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
    SIM_REQUIRE_INIT();
    if (!shareData_out)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    uintptr_t p = (uintptr_t)ptr;
    sim_alloc *a;
    uint64_t sd, si;
    int fd = -1;
    HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
    if (!a || a->kind != SIM_KIND_POOL || !(a->pool->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if ((fd = sim_ipc_device_fd_locked(a->device, &sd, &si)) < 0) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (!a->ipc_id)
        a->ipc_id = next_pool_export_id++;
    struct sim_ipc_handle h = {
        .magic = SIM_IPC_MAGIC, .pid = (uint32_t)getpid(), .fd = fd, .device = a->device,
        .st_dev = sd, .st_ino = si, .offset = a->addr - sim_drv.dev[a->device].base,
        .size = a->size, .id = a->ipc_id, .pool = (uint64_t)(uintptr_t)a->pool,
    };
    _Static_assert(sizeof h == sizeof *shareData_out, "export data is 64 bytes");
    memcpy(shareData_out, &h, sizeof h);
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{
    SIM_REQUIRE_INIT();
    if (!ptr_out || !shareData)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_ipc_handle h;
    memcpy(&h, shareData, sizeof h);
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (!sim_pool_valid_locked(pool) || !pool->imported || pool->import_fd < 0 || h.magic != SIM_IPC_MAGIC ||
        h.size == 0 || h.st_dev != pool->import_dev || h.st_ino != pool->import_ino) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    sim_alloc *a, *tmp;
    HASH_ITER(hh, sim_drv.allocs, a, tmp) {
        if (a->kind == SIM_KIND_IPC && a->ipc_pid < 0 && a->ipc_ino == h.st_ino && a->ipc_id == h.id &&
            a->addr - a->ipc_map == (h.offset & 4095)) {
            *ptr_out = (CUdeviceptr)a->addr; /* imported already */
            goto out;
        }
    }
    size_t len;
    uintptr_t addr;
    void *m = sim_ipc_map_fd(pool->import_fd, h.offset, h.size, &len, &addr);
    if (!m) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (!sim_ipc_add_import_locked(c, m, len, addr, h.size, -1, h.st_ino, h.id)) {
        munmap(m, len);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    *ptr_out = (CUdeviceptr)addr;
out:
    SIM_UNLOCK();
    return r;
}

/* ---- access of other devices to a pool (cuMemPoolSetAccess, cuMemPoolGetAccess):
 * the pool's own device always reads and writes; another device as set last
 * (CU_MEM_ACCESS_FLAGS_PROT_READ counts as read-write). A location that is not a
 * device: CUDA_ERROR_INVALID_VALUE; a device out of range: CUDA_ERROR_INVALID_DEVICE;
 * an unknown pool: CUDA_ERROR_INVALID_VALUE. ---- */

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    SIM_REQUIRE_INIT();
    if (!map && count)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = sim_pool_valid_locked(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || map[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (map[i].location.id < 0 || map[i].location.id >= sim_drv.ndev)
            r = CUDA_ERROR_INVALID_DEVICE;
    }
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
        uint64_t bit = (uint64_t)1 << map[i].location.id;
        if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE)
            pool->peer_access &= ~bit;
        else
            pool->peer_access |= bit;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    SIM_REQUIRE_INIT();
    if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    if (!sim_pool_valid_locked(memPool))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (location->id < 0 || location->id >= sim_drv.ndev)
        r = CUDA_ERROR_INVALID_DEVICE;
    else
        *flags = location->id == memPool->device || (memPool->peer_access >> location->id & 1)
                     ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    SIM_UNLOCK();
    return r;
}
