/*
 * drv_ipc.h - what the simulated driver's IPC files share (drv_ipc.c: legacy handles
 * and the device's shared backing; drv_pool_ipc.c: pool export and import). Every
 * *_locked function needs sim_drv.lock.
 */
#ifndef SIMCUDA_DRV_IPC_H
#define SIMCUDA_DRV_IPC_H

#include "drv_internal.h"

#define SIM_IPC_MAGIC 0x43504953u   /* "SIPC" */

/* The 64 bytes of a CUipcMemHandle (and of a CUmemPoolPtrExportData), as this
 * driver fills them. */
struct sim_ipc_handle {
    uint32_t magic;
    uint32_t pid;       /* exporting process */
    int32_t  fd;        /* the memory object's descriptor in the exporter */
    int32_t  device;
    uint64_t st_dev;    /* fstat of that object: tells it from a later file */
    uint64_t st_ino;
    uint64_t offset;    /* bytes from the start of the object */
    uint64_t size;      /* bytes of the allocation */
    uint64_t id;        /* export id: unique per allocation in the exporter */
    uint64_t pool;      /* pool pointers: the exporting pool (its id); else 0 */
};

/* The device's export memfd (made on first use), with its st_dev/st_ino: the
 * descriptor, or -1. */
int sim_ipc_device_fd_locked(int dev, uint64_t *st_dev, uint64_t *st_ino);
/* Makes [addr, addr + len) of dev's arena (its covering pages) shared through the
 * export memfd, keeping its bytes. 0, or -1. */
int sim_ipc_share_range_locked(int dev, uintptr_t addr, size_t len);
/* Maps [offset, offset + size) of fd (its covering pages) read-write, shared. The
 * mapping (NULL on failure), its length and the address of byte `offset`. */
void *sim_ipc_map_fd(int fd, uint64_t offset, uint64_t size, size_t *map_len, uintptr_t *addr);
/* Records an imported mapping in context c (one reference). */
sim_alloc *sim_ipc_add_import_locked(struct CUctx_st *c, void *map, size_t map_len, uintptr_t addr,
                                     uint64_t size, int pid, uint64_t ino, uint64_t id);
/* /proc/<pid>/fd/<fd>, checked to be (st_dev, st_ino): a descriptor, or -1. */
int sim_ipc_open_peer_fd(uint32_t pid, int32_t fd, uint64_t st_dev, uint64_t st_ino);

#endif
