/*
 * drv_extmem.c - external memory of the simulated driver (cuda.h "External Resource
 * Interoperability": cuImportExternalMemory, cuExternalMemoryGetMappedBuffer,
 * cuDestroyExternalMemory, CUDA 13.0), for the opaque file descriptors another API
 * (Vulkan's VK_KHR_external_memory_fd) hands out; simcuda takes any regular file or
 * memfd as such a descriptor.
 *
 * Design: an import (struct CUextMemory_st, kept on a list for handle validation)
 * takes ownership of the descriptor on success, as cuda.h says, and closes it at
 * cuDestroyExternalMemory. A mapped buffer maps [offset, offset + size) of it
 * (MAP_SHARED, its covering pages) as an allocation of kind SIM_KIND_IPC of the
 * current context (ipc_pid -2), freed with cuMemFree_v2 as cuda.h requires; a buffer
 * outlives the destroy of its object until it is freed (cuda.h: "must be explicitly
 * freed"). Nothing is charged to the device: the memory belongs to the other API.
 * Errors: a type other than CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD:
 * CUDA_ERROR_NOT_SUPPORTED; size 0, flags other than 0 / CUDA_EXTERNAL_MEMORY_DEDICATED,
 * a descriptor that is not an open regular file, or a size beyond the file:
 * CUDA_ERROR_INVALID_VALUE; an unknown or destroyed object: CUDA_ERROR_INVALID_HANDLE;
 * a buffer with flags != 0, size 0, or beyond the object: CUDA_ERROR_INVALID_VALUE.
 */
#define _GNU_SOURCE
#include "drv_internal.h"
#include "drv_ipc.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIM_MAGIC_EXTMEM 0x45584d31u

struct CUextMemory_st {
    uint32_t magic;
    int      fd;          /* owned from a successful import */
    uint64_t size;        /* bytes (the descriptor's size) */
    uint64_t st_ino;
    struct CUextMemory_st *next;
};

static struct CUextMemory_st *extmems;   /* guarded by sim_drv.lock */

static int extmem_valid_locked(struct CUextMemory_st *e)
{
    for (struct CUextMemory_st *p = extmems; p; p = p->next)
        if (p == e)
            return 1;
    return 0;
}

CUresult cuImportExternalMemory(CUexternalMemory *extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc)
{
    SIM_REQUIRE_INIT();
    if (!extMem_out || !memHandleDesc)
        return CUDA_ERROR_INVALID_VALUE;
    if (memHandleDesc->type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct stat st;
    int fd = memHandleDesc->handle.fd;
    if (memHandleDesc->size == 0 || (memHandleDesc->flags & ~(unsigned)CUDA_EXTERNAL_MEMORY_DEDICATED) ||
        fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || memHandleDesc->size > (uint64_t)st.st_size)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        struct CUextMemory_st *e = calloc(1, sizeof *e);
        if (!e) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e->magic = SIM_MAGIC_EXTMEM;
            e->fd = fd;   /* ownership moves to the driver */
            e->size = memHandleDesc->size;
            e->st_ino = (uint64_t)st.st_ino;
            e->next = extmems;
            extmems = e;
            *extMem_out = e;
        }
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
                                         const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc)
{
    SIM_REQUIRE_INIT();
    if (!devPtr || !bufferDesc)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (!extmem_valid_locked(extMem)) {
        r = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (bufferDesc->flags != 0 || bufferDesc->size == 0 || bufferDesc->offset > extMem->size ||
        bufferDesc->size > extMem->size - bufferDesc->offset) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    size_t len;
    uintptr_t addr;
    void *m = sim_ipc_map_fd(extMem->fd, bufferDesc->offset, bufferDesc->size, &len, &addr);
    if (!m) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (!sim_ipc_add_import_locked(c, m, len, addr, bufferDesc->size, -2, extMem->st_ino, bufferDesc->offset)) {
        munmap(m, len);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    *devPtr = (CUdeviceptr)addr;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuDestroyExternalMemory(CUexternalMemory extMem)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUextMemory_st **pp = &extmems; *pp; pp = &(*pp)->next) {
        if (*pp == extMem) {
            *pp = extMem->next;
            close(extMem->fd);   /* mapped buffers keep their pages until cuMemFree */
            extMem->magic = 0;
            free(extMem);
            r = CUDA_SUCCESS;
            break;
        }
    }
    SIM_UNLOCK();
    return r;
}
