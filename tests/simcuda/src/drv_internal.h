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
       SIM_MAGIC_EVENT = 0x45564e31u, SIM_MAGIC_POOL = 0x504f4f31u };

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

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    int      priority;
    struct CUstream_st *next;
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    int      recorded;
    uint64_t ns;          /* CLOCK_MONOTONIC at record time */
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
    struct CUmemPoolHandle_st *next;   /* sim_drv.pools (created pools) */
};

enum sim_alloc_kind { SIM_KIND_DEVICE = 1, SIM_KIND_MANAGED, SIM_KIND_HOST, SIM_KIND_POOL,
                      SIM_KIND_REGISTERED };
/* Page-locked host memory: allocated by the driver (HOST) or registered (REGISTERED). */
#define SIM_KIND_IS_HOST(k) ((k) == SIM_KIND_HOST || (k) == SIM_KIND_REGISTERED)

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

typedef struct sim_device {
    size_t    capacity;   /* bytes (cuDeviceTotalMem) */
    size_t    overhead;   /* fixed context overhead, bytes */
    size_t    arena_size; /* capacity - overhead */
    uintptr_t base;       /* start of the device range (2 MiB aligned) */
    void     *map;        /* mmap result, for munmap */
    size_t    map_len;
    sim_arena arena;
    size_t    vmm_bytes;  /* physical VMM bytes (cuMemCreate) */
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

/* ---- drv_pool.c ---- */
void sim_pool_init_default(struct CUmemPoolHandle_st *p, int dev);
/* Release unused chunks of every pool of `dev` down to each pool's release
 * threshold (what a real pool does at synchronisation points). Lock held. */
void sim_pools_settle_locked(int dev);
/* Free a pool allocation record (used by cuMemFree_v2 and cuMemFreeAsync). */
void sim_pool_free_locked(sim_alloc *a);

/* ---- drv_vmm.c ---- */
/* Mapped VMM range containing [p,p+len) with the needed access, or NULL. */
sim_map *sim_map_find_locked(uintptr_t p, size_t len);

/* ---- drv_stream.c ---- */
/* Resolve a stream argument (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * handle) to its context. CUDA_ERROR_INVALID_HANDLE for an unknown handle,
 * CUDA_ERROR_INVALID_CONTEXT when NULL is given and no context is current. */
CUresult sim_stream_ctx_locked(CUstream s, struct CUctx_st **ctx);

/* ---- drv_device.c ---- */
/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded. */
#define SIM_REQUIRE_INIT() do { if (!sim_drv.initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

#endif
