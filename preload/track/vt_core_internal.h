/* vt_core_internal.h — state and helpers shared by the core's files (vt_core.c,
 * vt_table.c, vt_sites.c, vt_vmm.c, vt_collect.c); nothing outside preload/track/
 * includes it. The public contract is vt_core.h; the hooks' inline producers are
 * vt_core_fast.h.
 *
 * State: one struct, vt__core (defined in vt_core.c), each field annotated with how it
 * is accessed: "under lock" (vt__core.lock held), "atomic" (__atomic loads/stores,
 * any thread), "atomic store under lock" (written under the lock, read lock-free).
 * The lock is taken with vt__lock (applies the ring's pending events first) or
 * vt__lock_raw (does not), released with vt__unlock.
 */
#ifndef VT_CORE_INTERNAL_H
#define VT_CORE_INTERNAL_H

#include <errno.h>
#include <stdint.h>

#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_frag.h"
#include "vt_guard.h"
#include "vt_index.h"
#include "vt_lock.h"
#include "vt_mem.h"
#include "vt_ring.h"

/* uthash over vt_mem, with a non-fatal out-of-memory: every table of the core uses
 * these settings (one definition, so every file hashes alike). */
static inline uint64_t vt__mix64(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

extern int vt__hash_oom;  /* set by uthash on a failed internal allocation (under lock) */

#undef HASH_NONFATAL_OOM
#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) vt_mem_alloc(sz)
#define uthash_free(p, sz) vt_mem_free(p)
#define uthash_nonfatal_oom(obj) (vt__hash_oom = 1)
#define HASH_FUNCTION(keyptr, keylen, hashv) \
    do { (void)(keylen); (hashv) = (unsigned)vt__mix64(*(const uint64_t *)(keyptr)); } while (0)
#include <uthash.h>

#define VT_SLAB 1024

typedef struct vt_site {
    uint64_t key;                 /* stack<<16 | packed kind<<8 | device slot      */
    uint32_t id;                  /* 1, 2, ... in creation order; never reused     */
    uint32_t stack;
    int16_t  kind, device;        /* kind: vt_kind, without its flags              */
    int16_t  slot;                /* device slot (vt__slot(device))                */
    uint8_t  flags;               /* VT_FLAG_* (common/vt_format.h)                 */
    uint64_t live_bytes, live_count;
    uint64_t interval_peak;       /* max live since the previous collection        */
    uint64_t step_min;            /* min live since the previous step boundary     */
    uint64_t alloc_total, alloc_bytes_total, free_total;
    uint64_t prev_floor;          /* floor of the previous step                    */
    uint64_t growth_bytes;
    uint32_t growth_steps;
    uint8_t  floor_valid, dirty, warned;
    UT_hash_handle hh;
} vt_site;

typedef struct vt_rec {
    uint64_t addr;                /* key; on the free list: the next free id       */
    uint64_t size;
    uint64_t birth_ns;            /* also the sequence (strictly increasing)       */
    uint64_t ctx_stream;          /* CUstream for VT_KIND_ASYNC, else the CUcontext */
    vt_site *site;                /* NULL: not in the table (free list)            */
    uint32_t step;
    int32_t  tid;
} vt_rec;

#define VT_NO_ID UINT32_MAX
#define VT_SITE_CACHE 64
#define VT_DROP_LOG 8       /* context teardowns remembered for vt_core_restore */
#define VT_MISS_LOG 16      /* untracked successful frees remembered for it        */

struct vt_map;
typedef struct vt_vmm {
    uint64_t handle;              /* key                                           */
    uint64_t size;
    uint64_t va;                  /* lowest mapped address, 0 while unmapped       */
    uint64_t birth_ns, seq;
    vt_site *site;
    uint32_t step;
    int32_t  tid;
    uint32_t maps;                /* live mappings                                 */
    uint32_t refs;                /* 1 at cuMemCreate, +1 per cuMemRetainAllocation-
                                     Handle, -1 per cuMemRelease (from before its real
                                     call; a failed one gives it back)             */
    uint32_t pending;             /* cuMemRelease calls in flight (vt_taken.rec until
                                     vt_core_vmm_commit/_restore): not freed       */
    uint32_t mapping;             /* cuMemMap / cuMemRetainAllocationHandle calls in
                                     flight (vt_core_vmm_map_begin, _hold_at until
                                     _map_end): live meanwhile                     */
    struct vt_map *mlist;         /* its mappings (vt_map.sib_*)                   */
    uint8_t  counted;             /* counted as live memory                        */
    uint8_t  orphan;              /* out of the table (its handle was created again
                                     while a release was in flight): the last
                                     commit/restore frees it                       */
    UT_hash_handle hh;
} vt_vmm;

typedef struct vt_map {
    uint64_t va;                  /* key                                           */
    uint64_t size;
    uint64_t handle;
    struct vt_map *sib_next, *sib_prev;   /* the same allocation's mappings        */
    UT_hash_handle hh;
} vt_map;

/* A heap the program announced (vt_region.h): a range of its own memory that it
 * sub-allocates. */
typedef struct vt_heap {
    uint64_t handle;              /* key: the interposer's handle                   */
    uint64_t base, size;
    UT_hash_handle hh;
} vt_heap;

/* A region announced inside a heap (vt_region.h), counted at its site. */
typedef struct vt_region {
    uint64_t addr;                /* key                                            */
    uint64_t size;
    uint64_t heap;                /* its heap's handle (0: the process-wide heap)   */
    uint64_t birth_ns;            /* also the sequence                              */
    vt_site *site;
    uint32_t step;
    int32_t  tid;
    UT_hash_handle hh;
} vt_region;

/* The core's state (vt_core.c). */
typedef struct vt_core_state {
    vt_lock_t lock;
    int       inited;             /* atomic                                         */
    vt_index  idx;                /* live records by address (under lock)           */
    vt_vmm   *vmms;               /* under lock                                     */
    vt_map   *maps;               /* under lock                                     */
    vt_heap  *heaps;              /* under lock (vt_region.c)                       */
    vt_region *regions;           /* under lock (vt_region.c)                       */
    vt_site  *sites;              /* under lock                                     */
    uint32_t  free_id;            /* slab free list head, VT_NO_ID if empty (lock)  */
    vt_site  *site_cache[VT_SITE_CACHE];      /* under lock                          */
    vt_rec  **slabs;              /* every record slab, in creation order (under lock) */
    size_t    n_slabs, cap_slabs; /* under lock                                     */
    int       waiters;            /* atomic: threads blocked in vt__lock            */
    uint64_t  next_seq;           /* lowest birth_ns the next record may get: under
                                     lock (atomic read)                              */
    uint32_t  drops;              /* vt_core_drop_context calls so far (under lock)  */
    uint32_t  misses;             /* vt_core_untracked_free calls so far (lock)      */
    uint64_t  miss_log[VT_MISS_LOG]; /* their addresses, by misses % VT_MISS_LOG    */
    struct { uint64_t ctx, before; int slot; } drop_log[VT_DROP_LOG]; /* the last ones,
                                     by drops % VT_DROP_LOG (under lock)             */
    int       step_marked;        /* atomic                                         */
    uint64_t  changes;            /* atomic store under lock                        */
    uint64_t  live_count;         /* atomic store under lock                        */
    uint64_t  n_sites;            /* under lock                                     */
    uint64_t  dropped;            /* atomic                                         */
    uint64_t  ring_full;          /* atomic: vt__make_room calls (vt_core_ring_full_total) */
    uint64_t  live_total, peak_total;         /* atomic store under lock            */
    uint64_t  ipeak_total;                    /* under lock: max live_total since the
                                                 last vt_core_peak_interval_take    */
    uint64_t  scope_seq, scope_bytes;         /* atomic store under lock            */
    uint64_t  dev_live[VT_DEV_SLOTS], dev_peak[VT_DEV_SLOTS]; /* atomic store under lock */
    vt_kind_stats ks[VT_DEV_SLOTS][VT_KIND_COUNT];           /* under lock           */
    uint8_t   dev_active[VT_DEV_SLOTS];                      /* under lock           */
    uint8_t   meminfo_known[VT_DEV_SLOTS];
    uint8_t   pool_known[VT_DEV_SLOTS];     /* 0 never sampled, 1 reserve, 2 reserve and use */
    uint64_t  mem_free[VT_DEV_SLOTS], mem_total[VT_DEV_SLOTS], pool_reserved[VT_DEV_SLOTS];
    uint64_t  mem_changes[VT_DEV_SLOTS];    /* changes when mem_free/total were set (lock) */
    uint8_t   graph_known[VT_DEV_SLOTS];                     /* under lock           */
    uint64_t  graph_reserved[VT_DEV_SLOTS], graph_used[VT_DEV_SLOTS]; /* under lock  */
    uint64_t  pool_used[VT_DEV_SLOTS];      /* sampled USED_MEM_CURRENT (pool_known 2)  */
    /* what was live at the peaks (vt_peak.c): per device slot, then the process's
     * at VT_DEV_SLOTS (under lock) */
    vt_peak_comp pk[VT_DEV_SLOTS + 1];
    uint64_t  pk_gen;             /* copies taken so far, all compositions: atomic
                                     store under lock                               */
    uint64_t  pk_due_bytes[VT_DEV_SLOTS + 1];  /* a peak this high is copied (lock) */
    uint64_t  pk_due_ns[VT_DEV_SLOTS + 1];     /* ... and any new peak from then on */
    /* fragmentation journal (vt__fj_note, vt_frag.h): every range that came or went
     * since the collector last took it, in the order applied (under lock) */
    uint64_t (*fj)[2];
    size_t    fj_n, fj_cap;
    int       fj_on;              /* 0: not kept (no kept set, or it overflowed)     */
} vt_core_state;
extern vt_core_state vt__core;

/* Device slot of a CUDA ordinal: 0 for -1 (unknown) and ordinals out of range,
 * ordinal + 1 otherwise; and back. */
static inline int vt__slot(int device)
{
    return (device >= 0 && device < VT_MAX_DEVICES) ? device + 1 : 0;
}

static inline int vt__dev_of_slot(int slot)
{
    return slot - 1;
}

/* Takes the core lock. A thread that finds it held counts itself in
 * vt__core.waiters until it has it, so that vt_core_collect, which copies the live
 * list in chunks, can let every blocked hook through between two chunks (a plain
 * mutex lets the releasing thread take the lock straight back). The uncontended
 * cost is one compare-and-swap. */
static inline void vt__lock_raw(void)
{
    /* this thread is in the core from before it tries the lock until after it has
     * released it (vt__sync: a signal handler on this thread must not take it) */
    vt__tls.core++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(vt_lock_try(&vt__core.lock), 1))
        return;
    __atomic_add_fetch(&vt__core.waiters, 1, __ATOMIC_RELAXED);
    uint64_t t0 = vt_now_ns();   /* contended only: a vDSO clock read beside a futex wait */
    vt_lock_slow(&vt__core.lock);
    uint64_t waited = vt_now_ns() - t0;
    vt__tls.lock_waits++;
    vt__tls.lock_waits_over_1ms += waited > 1000000;
    vt__tls.lock_wait_sum_ns += waited;
    if (waited > vt__tls.lock_wait_max_ns)
        vt__tls.lock_wait_max_ns = waited;
    __atomic_sub_fetch(&vt__core.waiters, 1, __ATOMIC_RELAXED);
}

static inline void vt__unlock(void)
{
    vt_unlock(&vt__core.lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    vt__tls.core--;
}

/* Under lock (vt_trace.c): one applied event noted for the event trace (VRAMTRACE_TRACE
 * on; the caller checks): op VT_TRACE_ALLOC or _FREE, time CLOCK_MONOTONIC ns, kind a
 * vt_kind without flags. Never blocks nor does I/O; a full buffer counts it lost. */
void vt__trace_note(int op, uint64_t now, uint64_t addr, uint64_t size, uint64_t stream,
                    int device, int kind, uint32_t stack);

/* Under lock: applies every ring event claimed before the call, VT_DRAIN_CHUNK per
 * hold, releasing the lock between holds (vt_table.c). */
void vt__drain_all_locked(void);
/* Without the lock: lets every thread blocked in vt__lock_raw take the lock before
 * the caller takes it again, for at most VT_COLLECT_YIELD_NS (vt_core.c). */
#define VT_COLLECT_YIELD_NS 2000000ull
void vt__yield_to_waiters(void);


/* Takes the core lock and applies every ring event claimed before the call, so the
 * caller acts on (and reads) a state that includes every allocation and free that
 * returned to the program before it started. The events are applied
 * VT_DRAIN_CHUNK per hold, the lock released between holds (a hold stays short
 * whatever the ring holds). */
static inline void vt__lock(void)
{
    vt__lock_raw();
    if (__builtin_expect(vt_ring_pending(&vt__ring), 0) && !vt__tls.no_sync)
        vt__drain_all_locked();
}

/* 1 when this thread must not take the core lock or apply the ring: it already is
 * in the core (a signal handler that interrupted it), or a client call was made
 * inside a hook (vt__tls.no_sync). */
static inline int vt__no_lock_here(void)
{
    return vt__tls.core != 0 || vt__tls.no_sync != 0;
}


/* Brings every query up to date with the events claimed so far (lock-free when the
 * ring is empty); errno kept. */
static inline void vt__sync(void)
{
    if (!vt_ring_pending(&vt__ring))
        return;
    /* Not from inside the core's own code on this thread (a signal handler that
     * interrupted a lock holder), nor for a client query made inside a hook
     * (vt__tls.no_sync, vt_api.c: a handler that interrupted one, whose own event may
     * be half written, or the real CUDA call under it, with the C library's locks
     * held): the state as last applied, as the lock-free counters always are. */
    if (vt__no_lock_here())
        return;
    int e = errno;
    vt__lock();
    vt__unlock();
    errno = e;
}

/* Under lock: counts one change (vt_core_changes). */
static inline void vt__bump_changes(void)
{
    __atomic_store_n(&vt__core.changes, vt__core.changes + 1, __ATOMIC_RELAXED);
}

/* 1 when memory of kind at addr is part of the device's fragmentation (vt_frag.h):
 * device memory the process owns at a device address. Not pinned host memory, not
 * another process's memory mapped here (ipc_import), not an array (its address is
 * its handle, not where its memory lies), not a region (inside an allocation that
 * counts already), not address 0 (an unmapped VMM allocation). */
static inline int vt__frag_counts(int kind, uint64_t addr)
{
    return addr && kind != VT_KIND_HOST_PINNED && vt_kind_in_totals(kind) && kind != VT_KIND_ARRAY;
}

/* Under lock: the range [addr, addr+size) of device slot came (gone = 0) or went
 * (gone = 1), for the kept fragmentation set (vt_frag.h; a VMM mapping is its own
 * key). Ranges that do not count (vt__frag_counts) are not noted. A full journal stops it: the next periodic collection copies the
 * live list again (vt_core_collect). */
static inline void vt__fj_note(uint64_t addr, uint64_t size, int kind, int slot, int gone)
{
    if (!vt__core.fj_on || !vt__frag_counts(kind, addr))
        return;
    if (vt__core.fj_n == vt__core.fj_cap) {
        vt__core.fj_on = 0;
        return;
    }
    uint64_t *e = vt__core.fj[vt__core.fj_n];
    e[0] = addr;
    e[1] = vt_frag_meta(size, kind == VT_KIND_VMM, slot, gone);
    __atomic_store_n(&vt__core.fj_n, vt__core.fj_n + 1, __ATOMIC_RELAXED);   /* vt_core_frag_keep */
}

/* The address a VMM allocation counts at for fragmentation: its first mapping while
 * it is counted, else 0 (as the live-list copy, vt__collect_live). */
static inline uint64_t vt__vmm_range(const vt_vmm *v)
{
    return v->counted ? v->va : 0;
}


/* ---- vt_table.c ---- */

/* Under lock: the table ran out of memory: counts the record as dropped and latches
 * tracking off. */
void vt__oom_latch(void);
/* Under lock: birth time and sequence of a new record, strictly increasing (ns). */
uint64_t vt__next_birth(uint64_t now);
/* Under lock: size bytes become live at site s (restore: they come back after a
 * failed free: the free counter is undone instead of counting an allocation), or
 * cease to be live. seq: the allocation's sequence (scope accounting). */
void vt__acct_add(vt_site *s, uint64_t size, uint64_t seq, int restore);
void vt__acct_sub(vt_site *s, uint64_t size, uint64_t seq);
/* Fork child: forgets the taken log (vt_core_after_fork_child). */
void vt__table_after_fork(void);
/* Under lock: the site of the live record that starts at addr, or NULL. */
vt_site *vt__site_of_live(uint64_t addr);

/* ---- vt_sites.c ---- */

/* Under lock: the site of key (stack<<16 | packed kind<<8 | device slot), created on first
 * use and stored in the cache entry *c; NULL out of memory. */
vt_site *vt__site_lookup(uint64_t key, vt_site **c);

/* Under lock: the site of (stack, kind, device), created on first use; NULL out of
 * memory. kind is packed with its flags (VT_KIND_PACK). Inline part: the
 * direct-mapped cache. */
static inline vt_site *vt__site_get(uint32_t stack, int kind, int device)
{
    int slot = vt__slot(device);
    uint64_t key = ((uint64_t)stack << 16) | ((uint64_t)kind << 8) | (uint64_t)slot;
    vt_site **c = &vt__core.site_cache[(key * 0x9e3779b97f4a7c15ull) >> 58];
    vt_site *s = *c;
    if (__builtin_expect(s && s->key == key, 1))
        return s;
    return vt__site_lookup(key, c);
}

/* Under lock: copies the site rows into c->sites (room for vt__core.n_sites) and the
 * per device x kind count and total columns (sums of the sites') into c->devs; on
 * VT_COLLECT_STEP closes the step of every site for the leak detector. */
void vt__sites_collect(vt_collect *c, unsigned flags, int leak_steps);

/* ---- vt_peak.c ---- */

/* Under lock: copies the composition of device slot (the process's when slot is
 * VT_DEV_SLOTS), whose total just reached the new peak `total` at time now_ns during
 * step (the event's counter), and sets when the next copy is due. */
void vt__peak_rise(int slot, uint64_t total, uint64_t now_ns, uint32_t step);
/* Under lock, from the accounting of a rise to a new peak: copies when the hysteresis
 * says so (vt_peak.c); otherwise costs two compares. */
static inline void vt__peak_check(int slot, uint64_t total, uint64_t now_ns, uint32_t step)
{
    if (__builtin_expect(total >= vt__core.pk_due_bytes[slot] || now_ns >= vt__core.pk_due_ns[slot], 0))
        vt__peak_rise(slot, total, now_ns, step);
}
/* Under lock: copies the compositions taken so far into c->peaks (room for
 * VT_DEV_SLOTS + 1 given by the caller in c->peaks). */
void vt__peak_collect(vt_collect *c);
/* Fork child: forgets every composition (the child's sites are numbered afresh). */
void vt__peak_after_fork(void);

/* ---- vt_collect.c ---- */

/* Fork child: forgets the kept fragmentation set and its journal buffers (the
 * parent's; left as they are). */
void vt__collect_after_fork(void);

#endif /* VT_CORE_INTERNAL_H */
