/*
 * drv_internal.h - shared state of the simulated CUDA driver (libcuda.so.1).
 *
 * Design: one process-wide struct `sim_drv` guarded by one mutex (`sim_drv.lock`).
 * Every exported cu* entry point takes the lock for its whole body (the work is
 * memcpy-sized at most) and calls `*_locked` helpers, which assert nothing but
 * require the lock. Handles handed to the application (CUcontext, CUstream,
 * CUevent, CUmemoryPool) point at the structs below; they are validated by a
 * list lookup, never dereferenced blindly. Nothing is freed while a handle to it
 * may still be passed in except where CUDA itself says the handle is dead.
 *
 * Memory model (docs/simcuda.md):
 *   - each device owns one MAP_NORESERVE range of `arena_size` bytes (capacity
 *     minus the fixed context overhead); cuMemAlloc-family, managed and pool
 *     chunks are extents in it, placed first-fit by sim_arena;
 *   - VMM physical memory (cuMemCreate) is a memfd per handle; it counts against
 *     capacity via `vmm_bytes` but is not placed in the arena;
 *   - pinned host memory is anonymous mmap, tracked but not charged to a device;
 *   - registered host memory (cuMemHostRegister_v2) is the program's own range,
 *     tracked like pinned host memory (kind SIM_KIND_REGISTERED) but never
 *     mapped or unmapped by the driver.
 */
#ifndef SIMCUDA_DRV_INTERNAL_H
#define SIMCUDA_DRV_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <uthash.h>

#include "sim_arena.h"
#include "sim_env.h"

#define SIM_DRIVER_VERSION 13000           /* cuDriverGetVersion */
#define SIM_GRANULARITY    ((size_t)2 << 20) /* VMM/pool granularity, large-alloc alignment */
#define SIM_SMALL_ALIGN    ((size_t)256)   /* minimum device allocation alignment */
#define SIM_LARGE_THRESHOLD ((size_t)1 << 20) /* >= this: 2 MiB rounding */
#define SIM_CTX_OVERHEAD_MAX ((size_t)64 << 20) /* context overhead, bytes (capped at capacity/8) */

enum { SIM_MAGIC_CTX = 0x43545831u, SIM_MAGIC_STREAM = 0x53545231u,
       SIM_MAGIC_EVENT = 0x45564e31u, SIM_MAGIC_POOL = 0x504f4f31u,
       SIM_MAGIC_ARRAY = 0x41525231u, SIM_MAGIC_MIPMAP = 0x4d495031u };

/* CUcontext. Primary contexts are embedded in sim_device; created ones are
 * heap-allocated, kept on sim_drv.ctxs for handle validation, and marked dead
 * (never freed) by cuCtxDestroy. */
struct CUctx_st {
    uint32_t magic;
    int      device;
    int      primary;     /* 1 for the device's primary context */
    int      live;        /* created: until destroyed; primary: while refcount > 0 */
    unsigned refcount;    /* primary only: cuDevicePrimaryCtxRetain count */
    unsigned flags;
    struct CUctx_st *next;/* sim_drv.ctxs (created contexts only) */
};

struct sim_capture;   /* drv_graph.c: a stream capture in progress */

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    int      priority;
    struct sim_capture *cap; /* capture this stream takes part in, or NULL */
    struct CUstream_st *next;
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    int      recorded;
    uint64_t ns;          /* CLOCK_MONOTONIC at record time */
    struct sim_capture *cap; /* recorded in a capturing stream: waiting on it joins */
    struct CUevent_st *next;
};

/* A pool chunk: an extent of the device arena that a pool sub-allocates from. */
typedef struct sim_chunk {
    uintptr_t base;
    size_t    size;       /* bytes, multiple of SIM_GRANULARITY */
    sim_arena sub;
    struct sim_chunk *next;
} sim_chunk;

/* CUmemoryPool (and cudaMemPool_t, the same struct type). */
struct CUmemPoolHandle_st {
    uint32_t  magic;
    int       device;
    int       is_default;
    int       destroyed;  /* cuMemPoolDestroy called; memory goes once unused */
    uint64_t  release_threshold; /* bytes kept at sync points */
    int       reuse_follow_event, reuse_opportunistic, reuse_internal;
    size_t    reserved, reserved_high; /* bytes of chunks held */
    size_t    used, used_high;         /* bytes of live allocations (spans) */
    sim_chunk *chunks;
    unsigned  handle_types;            /* CUmemAllocationHandleType bits (cuMemPoolCreate) */
    uint64_t  peer_access;             /* bit d: device d may read and write (cuMemPoolSetAccess) */
    int       imported;                /* made by cuMemPoolImportFromShareableHandle */
    int       import_fd;               /* imported: the exporter's memory object (own dup) */
    uint64_t  import_dev, import_ino;  /* imported: its fstat st_dev, st_ino */
    struct CUmemPoolHandle_st *next;   /* sim_drv.pools (created pools) */
};

enum sim_alloc_kind { SIM_KIND_DEVICE = 1, SIM_KIND_MANAGED, SIM_KIND_HOST, SIM_KIND_POOL,
                      SIM_KIND_REGISTERED, SIM_KIND_IPC };
/* Page-locked host memory: allocated by the driver (HOST) or registered (REGISTERED). */
#define SIM_KIND_IS_HOST(k) ((k) == SIM_KIND_HOST || (k) == SIM_KIND_REGISTERED)
/* An opened legacy IPC handle: freed by cuIpcCloseMemHandle only (an imported pool
 * pointer, ipc_pid -1, is freed by cuMemFree_v2 / cuMemFreeAsync). */
#define SIM_IS_IPC_HANDLE(a) ((a)->kind == SIM_KIND_IPC && (a)->ipc_pid >= 0)

/* One live allocation, keyed by its start address. */
typedef struct sim_alloc {
    uintptr_t addr;
    size_t    size;       /* requested bytes */
    size_t    span;       /* bytes placed (rounded) */
    int       kind;
    int       device;     /* -1 for pinned host and registered host */
    unsigned  flags;      /* host alloc / host register flags, managed attach flags */
    struct CUctx_st *ctx; /* owning context (not for POOL) */
    struct CUmemPoolHandle_st *pool; /* POOL only */
    sim_chunk *chunk;     /* POOL only */
    uint64_t  ipc_id;     /* DEVICE: export id once cuIpcGetMemHandle ran (0: never);
                             IPC: the exporter's id of the opened allocation */
    uint64_t  ipc_ino;    /* IPC: inode of the exporter's memory object (with ipc_pid,
                             ipc_id: what makes two opens the same handle) */
    int       ipc_pid;    /* IPC: exporting process; -1 for an imported pool pointer */
    unsigned  ipc_refs;   /* IPC: cuIpcOpenMemHandle count in ctx (cuIpcCloseMemHandle takes one) */
    uintptr_t ipc_map;    /* IPC: start of the page-aligned mapping (span bytes) */
    UT_hash_handle hh;
} sim_alloc;

/* VMM physical allocation (CUmemGenericAllocationHandle = id). */
typedef struct sim_phys {
    uint64_t id;
    int      fd;          /* memfd backing the pages */
    size_t   size;
    int      device;
    unsigned refs;        /* handle references (cuMemCreate, cuMemRetainAllocationHandle) */
    unsigned maps;        /* live cuMemMap mappings */
    unsigned handle_types;/* CUmemAllocationProp.requestedHandleTypes (exportable as) */
    int      imported;    /* cuMemImportFromShareableHandle: another process's memory,
                             not charged to this process's device */
    struct sim_mcast *mc; /* a multicast object (cuMulticastCreate): its team and
                             bindings (drv_multicast.c); NULL for cuMemCreate memory */
    UT_hash_handle hh;
} sim_phys;

/* ---- drv_multicast.c ---- */
/* Frees a multicast object's team and bindings (phys->mc), when its handle goes.
 * Lock held. */
void sim_mcast_free_locked(sim_phys *p);
/* drv_vmm.c: frees a handle's memory once it is released and unmapped. Lock held. */
void phys_maybe_destroy_locked(sim_phys *p);

/* VMM reserved address range (cuMemAddressReserve). */
typedef struct sim_reserve {
    uintptr_t base;
    size_t    size;
    UT_hash_handle hh;
} sim_reserve;

/* One cuMemMap mapping. */
typedef struct sim_map {
    uintptr_t addr;
    size_t    size;
    size_t    offset;     /* into the physical allocation */
    sim_phys *phys;
    int       prot;       /* PROT_* set by cuMemSetAccess (PROT_NONE until then) */
    UT_hash_handle hh;
} sim_map;

/* CUarray and CUmipmappedArray (drv_array.c). A plain array or a mipmapped array owns
 * one extent of the device arena (`addr`, `span`: the driver-chosen size that
 * cuArrayGetMemoryRequirements reports); a mipmap's level arrays (parent != NULL) are
 * views into their parent's extent, freed with it. All live ones, levels included,
 * are on sim_drv.arrays (handles are validated by a list lookup). Owned by the
 * context current at creation, freed by its teardown. */
typedef struct sim_array {
    uint32_t  magic;      /* SIM_MAGIC_ARRAY (CUarray) or SIM_MAGIC_MIPMAP (CUmipmappedArray) */
    CUDA_ARRAY3D_DESCRIPTOR desc; /* as created (a level: its own extent) */
    unsigned  levels;     /* mipmap: number of levels; else 1 */
    size_t    elem;       /* bytes per element (format size x channels) */
    size_t    pitch;      /* bytes per row, padded to SIM_ARRAY_ROW_ALIGN (not for a mipmap) */
    size_t    rows;       /* rows per slice: height, or 1 */
    size_t    slices;     /* depth or layers (6 per cubemap), or 1 */
    uintptr_t addr;       /* first byte (a level: inside its parent's extent) */
    size_t    span;       /* bytes placed in the arena (a level: its own bytes) */
    size_t    align;      /* placement alignment, bytes */
    int       device;
    struct CUctx_st  *ctx;
    struct sim_array *parent;  /* a level array: its mipmap */
    struct sim_array **level;  /* a mipmap: its `levels` level arrays */
    struct sim_array *next;    /* sim_drv.arrays */
} sim_array;
#define SIM_ARRAY_ROW_ALIGN ((size_t)512) /* CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT */

typedef struct sim_device {
    size_t    capacity;   /* bytes (cuDeviceTotalMem) */
    size_t    overhead;   /* fixed context overhead, bytes */
    size_t    arena_size; /* capacity - overhead */
    uintptr_t base;       /* start of the device range (2 MiB aligned) */
    void     *map;        /* mmap result, for munmap */
    size_t    map_len;
    sim_arena arena;
    size_t    vmm_bytes;  /* physical VMM bytes (cuMemCreate) */
    int       ipc_fd;     /* memfd of arena_size bytes backing exported ranges of the
                             arena (drv_ipc.c), -1 until the first cuIpcGetMemHandle */
    int       ipc_pid;    /* process that made ipc_fd (a fork child makes its own) */
    /* graph memory (drv_graph.c): virtual addresses of allocation nodes come from
     * their own PROT_NONE range (gva), made on the first node; physical memory is
     * the graph pool's reserve, charged to capacity like vmm_bytes */
    void     *gva_map;
    size_t    gva_len;
    uintptr_t gva_base;
    sim_arena gva;
    size_t    graph_reserved, graph_reserved_high; /* bytes of the graph pool */
    size_t    graph_used, graph_used_high;         /* bytes associated with graphs (drv_graph.c) */
    struct CUctx_st primary;
    struct CUmemPoolHandle_st default_pool;
    struct CUmemPoolHandle_st *current_pool; /* cuDeviceSetMemPool */
} sim_device;

typedef struct sim_driver {
    pthread_mutex_t lock;
    int         initialized;   /* cuInit succeeded */
    CUresult    init_result;   /* result of the first cuInit */
    sim_env     env;
    int         ndev;
    sim_device  dev[SIM_MAX_DEVICES];
    uint64_t    alloc_count;   /* allocation calls so far (SIMCUDA_FAIL_AT) */
    uint64_t    next_phys_id;
    sim_alloc  *allocs;        /* hash by addr */
    sim_phys   *phys;          /* hash by id */
    sim_reserve *reserves;     /* hash by base */
    sim_map    *maps;          /* hash by addr */
    struct CUctx_st *ctxs;     /* created contexts */
    struct CUstream_st *streams;
    struct CUevent_st *events;
    struct CUmemPoolHandle_st *pools; /* created pools */
    sim_array  *arrays;        /* live arrays, mipmaps and their levels */
    struct sim_texobj *texobjs;/* live texture and surface objects (drv_texture.c) */
    uint64_t    next_texobj;   /* last texture/surface object id handed out */
} sim_driver;

extern sim_driver sim_drv;

#define SIM_LOCK()   pthread_mutex_lock(&sim_drv.lock)
#define SIM_UNLOCK() pthread_mutex_unlock(&sim_drv.lock)

/* ---- drv_context.c ---- */
/* The calling thread's current context, or NULL. */
struct CUctx_st *sim_ctx_current(void);
/* Current context if live: CUDA_SUCCESS; else CUDA_ERROR_INVALID_CONTEXT. Lock held. */
CUresult sim_ctx_require_locked(struct CUctx_st **out);
/* Is `c` a known live context? Lock held. */
int sim_ctx_valid_locked(struct CUctx_st *c);
/* Free every ordinary allocation (device, managed, pinned host) and every
 * stream/event of `c`. Pool allocations survive. Lock held. */
void sim_ctx_scrub_locked(struct CUctx_st *c);

/* ---- drv_memory.c ---- */
size_t sim_span_for(size_t size, size_t *align);
/* 1 if this allocation call must fail (SIMCUDA_FAIL_AT). Counts the call. Lock held. */
int sim_fail_next_locked(void);
/* Place `span` bytes on device `dev`, honouring vmm_bytes. 0 ok, -1 OOM. Lock held. */
int sim_device_place_locked(int dev, size_t span, size_t align, uintptr_t *addr);
/* Give an extent back to the device arena and drop its pages. Lock held. */
void sim_device_unplace_locked(int dev, uintptr_t addr, size_t span);
/* Remove and free one allocation record and its memory (any kind). Lock held. */
void sim_alloc_release_locked(sim_alloc *a);
/* Find the allocation containing [p, p+len); NULL if none. Lock held. */
sim_alloc *sim_alloc_find_locked(uintptr_t p, size_t len);
/* Device index whose arena contains p, or -1. */
int sim_device_of_addr(uintptr_t p);
/* Check that [p, p+len) is usable device-side memory (allocation or mapped VMM
 * with access). Returns CUDA_SUCCESS or CUDA_ERROR_INVALID_VALUE. Lock held. */
CUresult sim_check_device_range_locked(uintptr_t p, size_t len);
/* Like above but also accepts plain host memory outside any simulated range. */
CUresult sim_check_any_range_locked(uintptr_t p, size_t len);

/* ---- drv_array.c ---- */
/* The live array (mip = 0: CUarray, levels included) or mipmapped array (mip = 1)
 * whose handle is h, or NULL. Lock held. */
sim_array *sim_array_find_locked(const void *h, int mip);
/* Free every array and mipmap owned by c (context teardown). Lock held. */
void sim_arrays_scrub_locked(struct CUctx_st *c);
/* Free the texture and surface objects of c (context teardown). Lock held. */
void sim_texobjs_scrub_locked(struct CUctx_st *c);
/* Forget texture and surface objects over array a (its destroy). Lock held. */
void sim_texobjs_forget_array_locked(const sim_array *a);

/* ---- drv_pool.c ---- */
void sim_pool_init_default(struct CUmemPoolHandle_st *p, int dev);
/* Release unused chunks of every pool of `dev` down to each pool's release
 * threshold (what a real pool does at synchronisation points). Lock held. */
void sim_pools_settle_locked(int dev);
/* Free a pool allocation record (used by cuMemFree_v2 and cuMemFreeAsync). */
void sim_pool_free_locked(sim_alloc *a);
/* Is p a pool handle that may be used (created and not destroyed, or a default)? */
int sim_pool_valid_locked(struct CUmemPoolHandle_st *p);

/* ---- drv_ipc.c ---- */
/* An extent of device dev's arena is given back: its pages in the device's export
 * memfd (if any) are dropped too, so freed memory reads as zero. Lock held. */
void sim_ipc_unplace_locked(int dev, uintptr_t addr, size_t span);
/* Unmaps an imported mapping (kind SIM_KIND_IPC); the record is the caller's. */
void sim_ipc_release_locked(sim_alloc *a);

/* ---- drv_vmm.c ---- */
/* Mapped VMM range containing [p,p+len) with the needed access, or NULL. */
sim_map *sim_map_find_locked(uintptr_t p, size_t len);

/* Bytes of device d still free for placement: capacity minus overhead, arena
 * extents, VMM physical memory and the graph pool's reserve. Lock held. */
static inline size_t sim_device_free_locked(const sim_device *d)
{
    return d->arena_size - d->arena.used - d->vmm_bytes - d->graph_reserved;
}

/* ---- drv_graph.c ---- */
struct CUgraph_st;
/* A new empty graph / destroy one (its allocation nodes' addresses go once nothing
 * holds them). Lock held. */
CUresult sim_graph_new_locked(struct CUgraph_st **out);
void sim_graph_free_locked(struct CUgraph_st *g);
/* Nodes a capture adds: an allocation node of size bytes on device (*dptr: its
 * fixed address; counts as an allocation call for SIMCUDA_FAIL_AT), a free node of
 * dptr, an empty node (fn NULL) or a host node. Lock held. */
CUresult sim_graph_add_alloc_locked(struct CUgraph_st *g, size_t size, int device, CUdeviceptr *dptr);
CUresult sim_graph_add_free_locked(struct CUgraph_st *g, CUdeviceptr dptr);
CUresult sim_graph_add_plain_locked(struct CUgraph_st *g, CUhostFn fn, void *user);
/* cuMemFree_v2 / cuMemFreeAsync of an address that is no ordinary allocation:
 * CUDA_SUCCESS when it is a live graph allocation that may be freed outside its
 * graph (it is unmapped), else CUDA_ERROR_INVALID_VALUE. Lock held. */
CUresult sim_graph_free_outside_locked(uintptr_t p);
/* Is [p, p+len) inside a live (mapped) graph allocation? Lock held. */
int sim_graph_range_live_locked(uintptr_t p, size_t len);

/* ---- drv_capture.c ---- */
/* Is s (a known stream, or NULL/legacy/per-thread) taking part in a capture? */
int sim_stream_capturing_locked(CUstream s);
/* Operations on a capturing stream become graph nodes instead of running:
 * an allocation node (*dptr: its fixed address), a free node, or a node that
 * does nothing when launched (copies, sets, kernels). Lock held; the stream is
 * capturing (sim_stream_capturing_locked). */
CUresult sim_capture_alloc_locked(CUstream s, size_t size, int device, CUdeviceptr *dptr);
CUresult sim_capture_free_locked(CUstream s, CUdeviceptr dptr);
CUresult sim_capture_noop_locked(CUstream s);
/* The capture of s is invalid from now on (an unsupported call was made). */
void sim_capture_invalidate_locked(CUstream s);
/* An operation that is not allowed while s captures: s's capture is invalidated
 * and the caller returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED. Lock NOT held. */
int sim_capture_refuses(CUstream s);

/* ---- drv_stream.c ---- */
/* Resolve a stream argument (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * handle) to its context. CUDA_ERROR_INVALID_HANDLE for an unknown handle,
 * CUDA_ERROR_INVALID_CONTEXT when NULL is given and no context is current. */
CUresult sim_stream_ctx_locked(CUstream s, struct CUctx_st **ctx);

/* ---- drv_device.c ---- */
/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded. */
#define SIM_REQUIRE_INIT() do { if (!sim_drv.initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

#endif
