/*
 * drv_ipc.c - legacy interprocess memory handles of the simulated driver (cuda.h
 * "Interprocess communication": cuIpcGetMemHandle, cuIpcOpenMemHandle_v2,
 * cuIpcCloseMemHandle, CUDA 13.0), and the shared backing they (and exportable
 * pools, drv_pool_ipc.c) rest on.
 *
 * Design:
 *   - A device's arena is private anonymous memory. The first export of a device
 *     makes a memfd of arena_size bytes (sparse: it costs nothing until written);
 *     exporting an allocation copies the resident pages of its page-covering range
 *     into the memfd at the same arena offset and maps that memfd range over the
 *     range (MAP_SHARED | MAP_FIXED). The bytes are the same, now shared. Two
 *     exports that share a 4 KiB page share it consistently (same memfd, same
 *     offset). An exported range stays shared until the device goes; a freed
 *     extent's pages are punched out of the memfd (they read as zero again).
 *   - The 64-byte handle (struct sim_ipc_handle) says what an importer needs: the
 *     exporter's pid, the memfd's descriptor number there and its st_dev/st_ino
 *     (to tell it from a later file at that number), the arena offset, the size and
 *     an export id unique per allocation (a new allocation at a freed address gets
 *     a new one, as cuda.h promises).
 *   - An importer (any process of the same user: a fork child or an unrelated one)
 *     opens /proc/<pid>/fd/<fd>, checks st_dev/st_ino and maps the page-covering
 *     range MAP_SHARED at an address of its own; the record is an allocation of
 *     kind SIM_KIND_IPC owned by the current context, so copies, sets and pointer
 *     queries work on it. Opening the same handle again in the same context returns
 *     the same pointer and counts a reference; cuIpcCloseMemHandle takes one and
 *     unmaps at the last (cuda.h). Context teardown unmaps what is left.
 * Errors: a handle that is not ours, whose exporter is gone or whose memory object
 * cannot be opened: CUDA_ERROR_INVALID_HANDLE; a handle exported by the calling
 * process: CUDA_ERROR_INVALID_CONTEXT (the real driver refuses those too); Flags
 * other than 0 or CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: CUDA_ERROR_INVALID_VALUE; a
 * pointer that is not the base of a cuMemAlloc allocation (get) or of an opened
 * handle (close): CUDA_ERROR_INVALID_VALUE.
 * A forked child inherits the exported ranges MAP_SHARED: writes there are seen by
 * both (a real child cannot use its parent's context at all).
 */
#define _GNU_SOURCE
#include "drv_internal.h"
#include "drv_ipc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE ((uintptr_t)4096)

_Static_assert(sizeof(struct sim_ipc_handle) == CU_IPC_HANDLE_SIZE, "handle is 64 bytes");

static uint64_t next_export_id = 1;   /* guarded by sim_drv.lock */

int sim_ipc_device_fd_locked(int dev, uint64_t *st_dev, uint64_t *st_ino)
{
    sim_device *d = &sim_drv.dev[dev];
    if (d->ipc_fd < 0 || d->ipc_pid != (int)getpid()) {
        /* a fork child keeps its parent's object mapped where the parent shared
         * ranges, but exports its own memory through an object of its own */
        int fd = memfd_create("simcuda-ipc", MFD_CLOEXEC);
        if (fd < 0)
            return -1;
        if (ftruncate(fd, (off_t)d->arena_size) != 0) {
            close(fd);
            return -1;
        }
        d->ipc_fd = fd;
        d->ipc_pid = (int)getpid();
    }
    struct stat st;
    if (fstat(d->ipc_fd, &st) != 0)
        return -1;
    *st_dev = (uint64_t)st.st_dev;
    *st_ino = (uint64_t)st.st_ino;
    return d->ipc_fd;
}

int sim_ipc_share_range_locked(int dev, uintptr_t addr, size_t len)
{
    sim_device *d = &sim_drv.dev[dev];
    uint64_t sd, si;
    int fd = sim_ipc_device_fd_locked(dev, &sd, &si);
    if (fd < 0)
        return -1;
    uintptr_t lo = addr & ~(PAGE - 1), hi = (addr + len + PAGE - 1) & ~(PAGE - 1);
    size_t npages = (hi - lo) / PAGE;
    unsigned char *vec = malloc(npages ? npages : 1);
    if (!vec)
        return -1;
    /* copy the pages that hold bytes (untouched ones read as zero either way) */
    if (mincore((void *)lo, hi - lo, vec) != 0)
        memset(vec, 1, npages);
    for (size_t i = 0; i < npages; i++) {
        if (!(vec[i] & 1))
            continue;
        uintptr_t p = lo + i * PAGE;
        if (pwrite(fd, (void *)p, PAGE, (off_t)(p - d->base)) != (ssize_t)PAGE) {
            free(vec);
            return -1;
        }
    }
    free(vec);
    if (mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             (off_t)(lo - d->base)) == MAP_FAILED)
        return -1;
    return 0;
}

void sim_ipc_unplace_locked(int dev, uintptr_t addr, size_t span)
{
    sim_device *d = &sim_drv.dev[dev];
    if (d->ipc_fd < 0)
        return;
    uintptr_t lo = (addr + PAGE - 1) & ~(PAGE - 1), hi = (addr + span) & ~(PAGE - 1);
    if (hi > lo)
        fallocate(d->ipc_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(lo - d->base),
                  (off_t)(hi - lo));
}

void *sim_ipc_map_fd(int fd, uint64_t offset, uint64_t size, size_t *map_len, uintptr_t *addr)
{
    uint64_t lo = offset & ~(uint64_t)(PAGE - 1), hi = (offset + size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    void *m = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)lo);
    if (m == MAP_FAILED)
        return NULL;
    *map_len = hi - lo;
    *addr = (uintptr_t)m + (offset - lo);
    return m;
}

void sim_ipc_release_locked(sim_alloc *a)
{
    munmap((void *)a->ipc_map, a->span);
}

sim_alloc *sim_ipc_add_import_locked(struct CUctx_st *c, void *map, size_t map_len, uintptr_t addr,
                                     uint64_t size, int pid, uint64_t ino, uint64_t id)
{
    sim_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->addr = addr;
    a->size = size;
    a->span = map_len;
    a->kind = SIM_KIND_IPC;
    a->device = c->device;
    a->ctx = c;
    a->ipc_pid = pid;
    a->ipc_ino = ino;
    a->ipc_id = id;
    a->ipc_refs = 1;
    a->ipc_map = (uintptr_t)map;
    HASH_ADD(hh, sim_drv.allocs, addr, sizeof a->addr, a);
    return a;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    uintptr_t p = (uintptr_t)dptr;
    sim_alloc *a;
    HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
    if (!a || a->kind != SIM_KIND_DEVICE) {
        r = CUDA_ERROR_INVALID_VALUE; /* only the base of cuMemAlloc memory exports */
        goto out;
    }
    uint64_t sd, si;
    int fd = sim_ipc_device_fd_locked(a->device, &sd, &si);
    if (fd < 0) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (!a->ipc_id) {
        if (sim_ipc_share_range_locked(a->device, a->addr, a->span) != 0) {
            r = CUDA_ERROR_MAP_FAILED;
            goto out;
        }
        a->ipc_id = next_export_id++;
    }
    struct sim_ipc_handle h = {
        .magic = SIM_IPC_MAGIC, .pid = (uint32_t)getpid(), .fd = fd, .device = a->device,
        .st_dev = sd, .st_ino = si, .offset = a->addr - sim_drv.dev[a->device].base,
        .size = a->size, .id = a->ipc_id,
    };
    memcpy(pHandle, &h, sizeof h);
out:
    SIM_UNLOCK();
    return r;
}

/* Opens /proc/<pid>/fd/<fd> and checks it is the memory object (st_dev, st_ino) the
 * exporter named: the descriptor, or -1. */
int sim_ipc_open_peer_fd(uint32_t pid, int32_t fd, uint64_t st_dev, uint64_t st_ino)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f < 0)
        return -1;
    struct stat st;
    if (fstat(f, &st) != 0 || (uint64_t)st.st_dev != st_dev || (uint64_t)st.st_ino != st_ino) {
        close(f);
        return -1;
    }
    return f;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    SIM_REQUIRE_INIT();
    if (!pdptr || (Flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_ipc_handle h;
    memcpy(&h, &handle, sizeof h);
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        goto out;
    if (h.magic != SIM_IPC_MAGIC || h.size == 0) {
        r = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (h.pid == (uint32_t)getpid()) {
        r = CUDA_ERROR_INVALID_CONTEXT; /* a process cannot open its own handle */
        goto out;
    }
    sim_alloc *a, *tmp;
    HASH_ITER(hh, sim_drv.allocs, a, tmp) {
        if (a->kind == SIM_KIND_IPC && a->ctx == c && a->ipc_pid == (int)h.pid &&
            a->ipc_ino == h.st_ino && a->ipc_id == h.id) {
            a->ipc_refs++;   /* opened already in this context: same pointer */
            *pdptr = (CUdeviceptr)a->addr;
            goto out;
        }
    }
    int fd = sim_ipc_open_peer_fd(h.pid, h.fd, h.st_dev, h.st_ino);
    if (fd < 0) {
        r = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    size_t len;
    uintptr_t addr;
    void *m = sim_ipc_map_fd(fd, h.offset, h.size, &len, &addr);
    close(fd);
    if (!m) {
        r = CUDA_ERROR_MAP_FAILED;
        goto out;
    }
    if (!sim_ipc_add_import_locked(c, m, len, addr, h.size, (int)h.pid, h.st_ino, h.id)) {
        munmap(m, len);
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    *pdptr = (CUdeviceptr)addr;
out:
    SIM_UNLOCK();
    return r;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        uintptr_t p = (uintptr_t)dptr;
        sim_alloc *a;
        HASH_FIND(hh, sim_drv.allocs, &p, sizeof p, a);
        if (!a || a->kind != SIM_KIND_IPC || a->ipc_pid < 0)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (--a->ipc_refs == 0)
            sim_alloc_release_locked(a);
    }
    SIM_UNLOCK();
    return r;
}

/* ---- interprocess events (cuIpcGetEventHandle, cuIpcOpenEventHandle) ----
 * Work is synchronous on this device, so an event is always complete: the handle
 * only names the exporter (magic, pid, event) and an opened event is a new event of
 * the current context, created CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, freed
 * by cuEventDestroy. An event created without both flags: CUDA_ERROR_INVALID_VALUE;
 * an unknown one: CUDA_ERROR_INVALID_HANDLE; a handle that is not simcuda's:
 * CUDA_ERROR_INVALID_HANDLE; one of the calling process: CUDA_ERROR_INVALID_CONTEXT. */

#define SIM_IPC_EVENT_MAGIC 0x54564553u   /* "SEVT" */

struct sim_ipc_event {
    uint32_t magic, pid;
    uint64_t event;
};

CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    SIM_REQUIRE_INIT();
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUevent_st *e = sim_drv.events; e; e = e->next) {
        if (e != event)
            continue;
        const unsigned need = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
        if ((e->flags & need) != need) {
            r = CUDA_ERROR_INVALID_VALUE;
        } else {
            struct sim_ipc_event h = {SIM_IPC_EVENT_MAGIC, (uint32_t)getpid(), (uint64_t)(uintptr_t)e};
            memset(pHandle, 0, sizeof *pHandle);
            memcpy(pHandle, &h, sizeof h);
            r = CUDA_SUCCESS;
        }
        break;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    SIM_REQUIRE_INIT();
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_ipc_event h;
    memcpy(&h, &handle, sizeof h);
    if (h.magic != SIM_IPC_EVENT_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (h.pid == (uint32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuEventCreate(phEvent, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING);
}
