/* vt_core.c — allocation table, VMM handles, per device x kind totals, per-site totals,
 * steps and the online leak detector (see vt_core.h for the contract).
 *
 * Data model
 *   vt_rec   one live allocation (48 bytes), found by address through `idx`
 *            (vt_index.h: 8-byte slots, open addressing). Records come from slabs
 *            (chunks of VT_SLAB records, a free list of ids) so a record costs no
 *            malloc header, never moves, and the hot path rarely calls malloc; a
 *            record's id is slab number * VT_SLAB + index.
 *   vt_vmm   one cuMemCreate physical allocation, uthash `vmms` keyed by handle; it
 *            carries its references (create, retains, releases), its mappings and
 *            the calls in flight that hold it (releases, maps): it is live memory
 *            while referenced, mapped or being mapped (vt__vmm_settle).
 *   vt_map   one cuMemMap mapping, uthash `maps` keyed by virtual address -> handle.
 *   vt_site  totals per (stack id, kind, device), uthash `sites` keyed by
 *            stack<<16 | kind<<8 | device+1, with a 64-entry direct-mapped cache in
 *            front (a program allocates from few sites at a time). Records point at
 *            their site, so a free does no site lookup.
 *   stats    per device slot x kind: live bytes and peak on the fast path; the
 *            count and total columns (live_count, alloc/free totals) are sums of the
 *            sites', added up at collection. Device live/peak, process live/peak.
 *
 * Fast path (issue 7 figure 1): the hooks do not take the lock. They hand each
 * allocation and each free (before its real free) to the core as an event in a
 * lock-free ring (vt_ring.h, vt_core_post_alloc_at / vt_core_post_free in vt_core.h),
 * in one global order. Whoever next takes the lock applies the events in that order
 * first (vt__lock -> vt__drain_all_locked, VT_DRAIN_CHUNK events per hold): every
 * query and snapshot, the writer thread (woken every VT_RING_KICK events), a
 * synchronous call, or a producer whose ring is full. Applying an allocation is the
 * old fast path (site, record, index, counters); applying a free finds, removes,
 * counts and recycles, and keeps a copy in the taken log (VT_TAKEN_LOG) so that a
 * failed real free can put it back (vt_core_restore with t->ticket). The synchronous
 * entry points (vt_core_alloc, vt_core_take, vt_core_restore) keep their contracts;
 * they apply the ring first.
 *
 * Locking: one lock, vt__core.lock (vt_lock.h, a futex mutex), guards every table and
 * counter; critical sections
 * are a hash operation and a few additions (a drain: up to VT_DRAIN_CHUNK events). Values that the client API reads without
 * the lock (live/peak/scope/changes) are written with __atomic stores under the lock
 * and read with __atomic loads. Nothing here calls CUDA, the loader or stdio.
 *
 * Fragmentation (vt_frag.h): the collector keeps every device's live ranges sorted
 * from one periodic collection to the next (vt__fc), and the core notes each range
 * that comes or goes in a journal (vt__fj_note: every path that changes the live
 * list or a VMM mapping, in apply order). A collection takes the journal in its first
 * hold (one instant, with the site rows) and merges it into the kept ranges without
 * the lock; the writer thread merges it between snapshots once it holds an eighth of
 * the live count (vt_core_frag_keep). The live list is copied and sorted again only
 * when there is no kept set: the first collection, a journal that overflowed, a set
 * dropped by a collection without fragmentation or by a memory failure.
 *
 * Leak detector (online, per site): each step snapshot closes a step. The site's
 * floor for that step is the smallest live value it had during the step. If the floor
 * rose compared with the previous step, growth_steps += 1 and growth_bytes += rise;
 * if it stayed or fell, both reset to 0 (a leak raises the floor at every step; churn
 * falls back). A site with growth_steps >= VRAMTRACE_LEAK_STEPS is reported.
 */
#define _GNU_SOURCE
#include "vt_core.h"
#include "vt_frag.h"
#include "vt_index.h"
#include "vt_lock.h"
#include "vt_ring.h"
#include "vt_config.h"
#include "vt_log.h"
#include "vt_mem.h"
#include "vt_guard.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint64_t vt__mix64(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static int vt__hash_oom;  /* set by uthash on a failed internal allocation (under lock) */

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
    uint64_t key;                 /* stack<<16 | kind<<8 | (device+1)              */
    uint32_t id;                  /* 1, 2, ... in creation order; never reused     */
    uint32_t stack;
    int16_t  kind, device;
    int16_t  slot;                /* device slot (vt__slot(device))                */
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
#define VT_TAKEN_LOG VT_RING_SLOTS   /* records taken by ring frees, kept for a failed
                                        free: one ring's worth of positions          */
#define VT_TAKEN_LATE 256   /* taken-log entries kept past their slot (taken_late) */
#define VT_DRAIN_CHUNK 512  /* ring events applied per hold of the core lock       */
#define VT_ROOM_CHUNK  256  /* ... by a producer that found the ring full            */
#define VT_ROOM_TRIES  64   /* rounds of room-making before it records synchronously */

/* What one ring free took (vt__apply_event), for its failed real free: 64 bytes. */
typedef struct vt_taken_entry {
    uint64_t ticket;              /* the free's ring position + 1                   */
    vt_site *site;                /* NULL: the free took nothing                    */
    uint64_t addr, size, birth_ns, ctx_stream;
    uint32_t step;
    int32_t  tid;
    uint32_t drops, misses;       /* as vt_taken                                    */
} vt_taken_entry;

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

static struct {
    vt_lock_t lock;
    int       inited;             /* atomic                                         */
    vt_index  idx;                /* live records by address (under lock)           */
    vt_vmm   *vmms;               /* under lock                                     */
    vt_map   *maps;               /* under lock                                     */
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
    uint8_t   meminfo_known[VT_DEV_SLOTS], pool_known[VT_DEV_SLOTS];
    uint64_t  mem_free[VT_DEV_SLOTS], mem_total[VT_DEV_SLOTS], pool_reserved[VT_DEV_SLOTS];
    /* fragmentation journal (vt__fj_note, vt_frag.h): every range that came or went
     * since the collector last took it, in the order applied (under lock) */
    uint64_t (*fj)[2];
    size_t    fj_n, fj_cap;
    int       fj_on;              /* 0: not kept (no kept set, or it overflowed)     */
} vt__core = { .lock = VT_LOCK_INIT, .free_id = VT_NO_ID };

/* The kept fragmentation set and the journal buffer the core does not hold: owned by
 * the collector that set busy (one at a time; vt_core_collect). */
static struct {
    int         busy;             /* atomic                                          */
    vt_frag_set set;
    uint64_t  (*spare)[2];        /* the next journal buffer, swapped with vt__core.fj */
    size_t      spare_cap;
    size_t      want;             /* journal entries to offer (grows on overflow)    */
} vt__fc;

uint64_t vt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int vt__slot(int device)
{
    return (device >= 0 && device < VT_MAX_DEVICES) ? device + 1 : 0;
}

static int vt__dev_of_slot(int slot)
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

void vt_core_lock_waits(vt_lock_waits *out, int reset)
{
    out->n = vt__tls.lock_waits;
    out->over_1ms = vt__tls.lock_waits_over_1ms;
    out->max_ns = vt__tls.lock_wait_max_ns;
    out->sum_ns = vt__tls.lock_wait_sum_ns;
    if (reset) {
        vt__tls.lock_waits = vt__tls.lock_waits_over_1ms = 0;
        vt__tls.lock_wait_max_ns = vt__tls.lock_wait_sum_ns = 0;
    }
}

static inline void vt__unlock(void)
{
    vt_unlock(&vt__core.lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    vt__tls.core--;
}

/* What the ring's frees took, for a failed real free (under the core lock; outside
 * vt__core, whose initialiser puts it in .data, so that these zeroes stay in .bss):
 * taken_log by ticket % VT_TAKEN_LOG (site NULL: nothing); taken_late the entries a
 * newer event needed the slot of while their real free had not reported success
 * (failed, or still running), by n_late % VT_TAKEN_LATE, the oldest overwritten. */
static vt_taken_entry vt__taken_log[VT_TAKEN_LOG];
static vt_taken_entry vt__taken_late[VT_TAKEN_LATE];
static uint32_t vt__n_late;

/* The hooks' events (vt_ring.h), applied in ring order by whoever holds the lock. */
vt_ring vt__ring;
uint64_t vt__core_step;   /* atomic: the step counter (vt_core_step)           */
uint64_t vt__free_done[VT_FREE_DONE_SLOTS];   /* vt_core_free_done (vt_core.h)   */
static void vt__drain_all_locked(void);

/* Takes the core lock and applies every ring event claimed before the call, so the
 * caller acts on (and reads) a state that includes every allocation and free that
 * returned to the program before it started. The events are applied
 * VT_DRAIN_CHUNK per hold, the lock released between holds (figure 5: a hold stays
 * short whatever the ring holds). */
static inline void vt__lock(void)
{
    vt__lock_raw();
    if (__builtin_expect(vt_ring_pending(&vt__ring), 0) && !vt__tls.no_sync)
        vt__drain_all_locked();
}

/* ---- lifecycle ---- */

int vt__core_state;   /* atomic: VT_CORE_OFF | VT_CORE_HOOKS_READY (vt_core.h)   */

int vt_core_init(void)
{
    if (!__atomic_load_n(&vt__core.inited, __ATOMIC_ACQUIRE)) {
        vt_config_load();
        if (__atomic_exchange_n(&vt__core.inited, 1, __ATOMIC_ACQ_REL) == 0) {
            if (vt__config.test_fail_alloc_at > 0)
                vt_mem_fail_at(vt__config.test_fail_alloc_at);
            if (vt__config.disable) {
                __atomic_or_fetch(&vt__core_state, VT_CORE_OFF, __ATOMIC_RELEASE);
            } else {
                vt__lock_raw();
                vt_ring_init(&vt__ring);   /* 1 MiB resident from here on */
                vt__unlock();
            }
        }
    }
    return (__atomic_load_n(&vt__core_state, __ATOMIC_ACQUIRE) & VT_CORE_OFF) ? -1 : 0;
}


void vt_core_hooks_ready(void)
{
    __atomic_or_fetch(&vt__core_state, VT_CORE_HOOKS_READY, __ATOMIC_RELEASE);
}

void vt_core_latch_off(const char *why)
{
    static int said;
    __atomic_or_fetch(&vt__core_state, VT_CORE_OFF, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL) == 0)
        vt_log(VT_LOG_WARN, "%s; tracking is off", why);
}

void vt_core_fork_prepare(void) { vt__lock_raw(); }   /* events stay in the ring */
void vt_core_fork_parent(void)  { vt__unlock(); }

void vt_core_after_fork_child(void)
{
    /* The inherited records are the parent's; their memory is left as it is (the
     * child's copy-on-write image) rather than walked and freed. */
    vt_lock_init(&vt__core.lock);
    vt__tls.core = 0;   /* the forking thread held it across fork */
    vt_ring_discard(&vt__ring);   /* the parent's events, and slots its threads claimed */
    memset(&vt__core.idx, 0, sizeof vt__core.idx);
    vt__core.vmms = NULL;
    vt__core.maps = NULL;
    vt__core.sites = NULL;
    vt__core.free_id = VT_NO_ID;
    memset(vt__core.site_cache, 0, sizeof vt__core.site_cache);
    vt__core.slabs = NULL;
    vt__core.n_slabs = vt__core.cap_slabs = 0;
    vt__core.waiters = 0;
    vt__core.n_sites = 0;
    vt__core.drops = 0;
    vt__core.misses = 0;
    memset(vt__taken_log, 0, sizeof vt__taken_log);
    memset(vt__taken_late, 0, sizeof vt__taken_late);
    vt__n_late = 0;
    vt__core.live_count = 0;
    vt__core_step = 0;
    vt__core.step_marked = 0;
    vt__core.changes = 0;
    vt__core.live_total = vt__core.peak_total = vt__core.ipeak_total = 0;
    vt__core.scope_seq = vt__core.scope_bytes = 0;
    memset(vt__core.dev_live, 0, sizeof vt__core.dev_live);
    memset(vt__core.dev_peak, 0, sizeof vt__core.dev_peak);
    memset(vt__core.ks, 0, sizeof vt__core.ks);
    memset(vt__core.dev_active, 0, sizeof vt__core.dev_active);
    memset(vt__core.meminfo_known, 0, sizeof vt__core.meminfo_known);
    memset(vt__core.pool_known, 0, sizeof vt__core.pool_known);
    /* the journal and the kept set: the parent's (a collector may have held them
     * across fork); left as they are, and started over */
    vt__core.fj = NULL;
    __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);
    vt__core.fj_cap = 0;
    vt__core.fj_on = 0;
    memset(&vt__fc, 0, sizeof vt__fc);
}

/* ---- helpers under lock ---- */

static void vt__oom_latch(void)
{
    vt__hash_oom = 0;
    __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
    vt_core_latch_off("out of memory for the allocation table");
}

static inline vt_rec *vt__rec_at(uint32_t id)
{
    return &vt__core.slabs[id / VT_SLAB][id % VT_SLAB];
}

static uint64_t vt__rec_addr(uint32_t id)
{
    return vt__rec_at(id)->addr;
}

static uint32_t vt__rec_new_slab(void);

/* A free record id (its record's fields are garbage), or VT_NO_ID out of memory. */
static inline uint32_t vt__rec_new(void)
{
    uint32_t id = vt__core.free_id;
    if (__builtin_expect(id == VT_NO_ID, 0)) {
        id = vt__rec_new_slab();
        if (id == VT_NO_ID)
            return VT_NO_ID;
    }
    vt__core.free_id = (uint32_t)vt__rec_at(id)->addr;
    return id;
}

/* Adds a slab of VT_SLAB records to the free list; its first id, or VT_NO_ID. */
static uint32_t vt__rec_new_slab(void)
{
    uint32_t id;
    {
        if (vt__core.n_slabs == vt__core.cap_slabs) {  /* the registry the collector walks */
            size_t cap = vt__core.cap_slabs ? vt__core.cap_slabs * 2 : 64;
            if (cap * VT_SLAB >= VT_NO_ID)
                return VT_NO_ID;
            vt_rec **p = vt_mem_alloc(cap * sizeof *p);
            if (!p)
                return VT_NO_ID;
            if (vt__core.n_slabs)
                memcpy(p, vt__core.slabs, vt__core.n_slabs * sizeof *p);
            vt_mem_free(vt__core.slabs);
            vt__core.slabs = p;
            vt__core.cap_slabs = cap;
        }
        vt_rec *slab = vt_mem_alloc(sizeof(vt_rec) * VT_SLAB);
        if (!slab)
            return VT_NO_ID;
        uint32_t base = (uint32_t)(vt__core.n_slabs * VT_SLAB);
        vt__core.slabs[vt__core.n_slabs++] = slab;
        for (int i = VT_SLAB - 1; i >= 0; i--) {
            slab[i].site = NULL;   /* not in the table */
            slab[i].addr = vt__core.free_id;
            vt__core.free_id = base + (uint32_t)i;
        }
        id = vt__core.free_id;
    }
    return id;
}

/* Puts record id on the free list. site == NULL marks a slab record that is not in
 * the table: the chunked copy skips it. */
static void vt__rec_put(uint32_t id)
{
    vt_rec *r = vt__rec_at(id);
    r->site = NULL;
    r->addr = vt__core.free_id;
    vt__core.free_id = id;
}

/* Birth time and sequence of a new record (under the lock): strictly increasing. */
static uint64_t vt__next_birth(uint64_t now)
{
    uint64_t b = now > vt__core.next_seq ? now : vt__core.next_seq;
    __atomic_store_n(&vt__core.next_seq, b + 1, __ATOMIC_RELAXED);
    return b;
}

/* Allocation record id at addr, with its index slot, or VT_NO_ID. */
static inline uint32_t vt__rec_find(uint64_t addr, uint32_t *slot)
{
    return vt_index_find(&vt__core.idx, addr, vt__rec_addr, slot);
}

static vt_site *vt__site_lookup(uint64_t key, vt_site **c);

/* The site of (stack, kind, device), created on first use; NULL out of memory.
 * Inline part: the direct-mapped cache. */
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

static vt_site *vt__site_lookup(uint64_t key, vt_site **c)
{
    int slot = (int)(key & 0xff), kind = (int)((key >> 8) & 0xff);
    uint32_t stack = (uint32_t)(key >> 16);
    vt_site *s;
    HASH_FIND(hh, vt__core.sites, &key, sizeof key, s);
    if (!s) {
        s = vt_mem_calloc(sizeof *s);
        if (!s)
            return NULL;
        s->key = key;
        s->stack = stack;
        s->kind = (int16_t)kind;
        s->slot = (int16_t)slot;
        s->device = (int16_t)vt__dev_of_slot(slot);
        HASH_ADD(hh, vt__core.sites, key, sizeof s->key, s);
        if (vt__hash_oom) {
            vt_mem_free(s);
            return NULL;
        }
        s->id = (uint32_t)++vt__core.n_sites;   /* sites are never removed (fork starts over) */
        vt__core.dev_active[slot] = 1;
    }
    *c = s;
    return s;
}

static void vt__bump_changes(void)
{
    __atomic_store_n(&vt__core.changes, vt__core.changes + 1, __ATOMIC_RELAXED);
}

/* Under lock: the range [addr, addr+size) of device slot came (gone = 0) or went
 * (gone = 1), for the kept fragmentation set (vt_frag.h; a VMM mapping is its own
 * key). Ranges that do not count for fragmentation (pinned host memory, address 0)
 * are not noted. A full journal stops it: the next periodic collection copies the
 * live list again (vt_core_collect). */
static inline void vt__fj_note(uint64_t addr, uint64_t size, int kind, int slot, int gone)
{
    if (!vt__core.fj_on || kind == VT_KIND_HOST_PINNED || !addr)
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

/* Under lock: notes the change of v's range from before (vt__vmm_range earlier). */
static void vt__fj_vmm(const vt_vmm *v, uint64_t before)
{
    uint64_t now = vt__vmm_range(v);
    if (now == before)
        return;
    if (before)
        vt__fj_note(before, v->size, VT_KIND_VMM, v->site->slot, 1);
    if (now)
        vt__fj_note(now, v->size, VT_KIND_VMM, v->site->slot, 0);
}

/* Process-wide part of accounting: device and process live/peak, interval peak,
 * scope bytes, live count, change counter. delta is +size or -size. */
static inline void vt__acct_process(int slot, uint64_t size, uint64_t seq, int add)
{
    uint64_t dl = add ? vt__core.dev_live[slot] + size : vt__core.dev_live[slot] - size;
    uint64_t tl = add ? vt__core.live_total + size : vt__core.live_total - size;
    __atomic_store_n(&vt__core.dev_live[slot], dl, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__core.live_total, tl, __ATOMIC_RELAXED);
    if (add) {
        if (dl > vt__core.dev_peak[slot])
            __atomic_store_n(&vt__core.dev_peak[slot], dl, __ATOMIC_RELAXED);
        if (tl > vt__core.peak_total)
            __atomic_store_n(&vt__core.peak_total, tl, __ATOMIC_RELAXED);
        if (tl > vt__core.ipeak_total)
            __atomic_store_n(&vt__core.ipeak_total, tl, __ATOMIC_RELAXED);
    }
    /* scope_seq / scope_bytes / ipeak_total are also read, and the scope restarted,
     * without the lock by a client call made in a signal handler (vt__no_lock_here) */
    if (seq >= __atomic_load_n(&vt__core.scope_seq, __ATOMIC_RELAXED)) {
        uint64_t sb = __atomic_load_n(&vt__core.scope_bytes, __ATOMIC_RELAXED);
        __atomic_store_n(&vt__core.scope_bytes, add ? sb + size : sb - size, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&vt__core.live_count, vt__core.live_count + (add ? 1 : (uint64_t)-1),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&vt__core.changes, vt__core.changes + 1, __ATOMIC_RELAXED);
}

/* Accounts size bytes becoming live at site s. restore: the bytes come back after a
 * failed free (undo the free counter instead of counting a new allocation). The
 * per device x kind count/total columns are sums of the sites' (vt_core_collect). */
static inline __attribute__((always_inline)) void vt__acct_add_inl(vt_site *s, uint64_t size,
                                                                    uint64_t seq, int restore)
{
    vt_kind_stats *k = &vt__core.ks[s->slot][s->kind];
    uint64_t kl = k->live_bytes + size;
    k->live_bytes = kl;
    if (kl > k->peak_bytes)
        k->peak_bytes = kl;
    uint64_t sl = s->live_bytes + size;
    s->live_bytes = sl;
    s->live_count++;
    if (sl > s->interval_peak)
        s->interval_peak = sl;
    if (restore) {
        s->free_total--;
    } else {
        s->alloc_total++;
        s->alloc_bytes_total += size;
    }
    s->dirty = 1;
    vt__acct_process(s->slot, size, seq, 1);
}

/* Out of line for the cold callers (restore, VMM); the allocation and free paths
 * inline the _inl forms (issue 7 figure 1). */
static __attribute__((noinline)) void vt__acct_add(vt_site *s, uint64_t size, uint64_t seq, int restore)
{
    vt__acct_add_inl(s, size, seq, restore);
}

/* Accounts size bytes of site s ceasing to be live (a free or an implicit free). */
static inline __attribute__((always_inline)) void vt__acct_sub_inl(vt_site *s, uint64_t size,
                                                                    uint64_t seq)
{
    vt__core.ks[s->slot][s->kind].live_bytes -= size;
    uint64_t sl = s->live_bytes - size;
    s->live_bytes = sl;
    s->live_count--;
    s->free_total++;
    if (sl < s->step_min)
        s->step_min = sl;
    s->dirty = 1;
    vt__acct_process(s->slot, size, seq, 0);
}

static __attribute__((noinline)) void vt__acct_sub(vt_site *s, uint64_t size, uint64_t seq)
{
    vt__acct_sub_inl(s, size, seq);
}

/* ---- events ---- */

/* Under lock: records allocation a, seen by thread tid at time now during step.
 * 0, or -1 (tracking off, or out of memory: latched off). */
static inline __attribute__((always_inline)) int vt__apply_alloc(const vt_alloc_info *a,
                                                                  uint64_t now, int tid,
                                                                  uint32_t step)
{
    if (!vt_core_enabled())
        return -1;
    int kind = (a->kind >= 0 && a->kind < VT_KIND_COUNT) ? a->kind : VT_KIND_DEVICE;
    vt_site *s = vt__site_get(a->stack, kind, a->device);
    uint32_t id = s ? vt__rec_new() : VT_NO_ID;
    if (id == VT_NO_ID) {
        vt__oom_latch();
        return -1;
    }
    uint32_t old;
    int up = vt_index_upsert(&vt__core.idx, a->addr, id, vt__rec_addr, &old);
    if (up < 0) {
        vt__rec_put(id);
        vt__oom_latch();
        return -1;
    }
    if (up > 0) {  /* CUDA handed this address out again: its free was not seen */
        vt_rec *o = vt__rec_at(old);
        vt__fj_note(o->addr, o->size, o->site->kind, o->site->slot, 1);
        vt__acct_sub(o->site, o->size, o->birth_ns);
        vt__rec_put(old);
    }
    vt_rec *r = vt__rec_at(id);
    r->addr = a->addr;
    r->size = a->size;
    r->birth_ns = vt__next_birth(now);
    r->ctx_stream = kind == VT_KIND_ASYNC ? a->stream : a->ctx;
    r->site = s;
    r->step = step;
    r->tid = tid;
    vt__acct_add_inl(s, r->size, r->birth_ns, 0);
    vt__fj_note(r->addr, r->size, kind, s->slot, 0);
    return 0;
}

int vt_core_alloc(const vt_alloc_info *a)
{
    if (!vt_core_enabled()) {
        __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
        return -1;
    }
    uint64_t now = vt_now_ns();
    int tid = vt_guard_tid();
    uint32_t step = (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    vt__lock();
    int rc = vt__apply_alloc(a, now, tid, step);
    vt__unlock();
    return rc;
}

/* Under lock: takes the live record at addr out of the table into *t (t->rec = its
 * site), or sets t->missed when there is none. kind_mask as vt_core_take. */
static inline __attribute__((always_inline)) void vt__apply_take(uint64_t addr, unsigned kind_mask,
                                                                  vt_taken *t)
{
    uint32_t slot;
    uint32_t id = vt__rec_find(addr, &slot);
    if (id == VT_NO_ID) {
        t->missed = 1;
        t->addr = addr;
        return;
    }
    vt_rec *r = vt__rec_at(id);
    vt_site *s = r->site;
    if (kind_mask == 0 || (kind_mask & (1u << s->kind))) {
        vt_index_remove_slot(&vt__core.idx, slot);
        vt__acct_sub_inl(s, r->size, r->birth_ns);
        vt__fj_note(r->addr, r->size, s->kind, s->slot, 1);
        t->rec = s;
        t->addr = r->addr;
        t->size = r->size;
        t->birth_ns = r->birth_ns;
        t->ctx_stream = r->ctx_stream;
        t->step = r->step;
        t->tid = r->tid;
        t->drops = vt__core.drops;
        t->misses = vt__core.misses;
        vt__rec_put(id);
    }
}

/* ---- the event ring (vt_ring.h): producers, and the drain under the lock ---- */

static void vt__apply_event(vt_ev *e, uint64_t pos)
{
    /* The taken-log entry of the event one ring earlier at this position's slot is
     * retired now, whatever this event is. Its free's own success report is still in
     * vt__free_done (two rings long: the position that would overwrite it cannot be
     * claimed before this event is applied); without one, its thread may still need
     * the entry (a failed free preempted before vt_core_restore): kept aside. */
    vt_taken_entry *l = &vt__taken_log[pos % VT_TAKEN_LOG];
    if (l->site && __atomic_load_n(&vt__free_done[(l->ticket - 1) & (VT_FREE_DONE_SLOTS - 1)],
                                   __ATOMIC_ACQUIRE) != l->ticket)
        vt__taken_late[vt__n_late++ % VT_TAKEN_LATE] = *l;
    l->site = NULL;
    l->ticket = 0;
    if (e->op == VT_EV_ALLOC) {
        vt_alloc_info a = {e->addr, e->size, e->ctx_stream, e->ctx_stream, e->device, e->kind,
                           e->stack};
        if (vt__apply_alloc(&a, e->now_ns, e->tid, e->step) < 0)
            __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    /* VT_EV_FREE: what it takes is kept in the taken log for a failed real free */
    l->ticket = pos + 1;
    if (!vt_core_enabled())
        return;
    vt_taken t = {NULL};
    vt__apply_take(e->addr, 0, &t);
    if (t.rec) {
        l->site = t.rec;
        l->addr = t.addr;
        l->size = t.size;
        l->birth_ns = t.birth_ns;
        l->ctx_stream = t.ctx_stream;
        l->step = t.step;
        l->tid = t.tid;
        l->drops = t.drops;
        l->misses = t.misses;
    } else if (t.missed) {
        /* as vt_core_untracked_free: consulted by a restore of this address only when
         * the driver cannot tell whether it is still allocated (vt_taken.alive) */
        vt__core.miss_log[vt__core.misses++ % VT_MISS_LOG] = e->addr;
    }
}

/* Under lock: applies ring events in order until position target or budget events;
 * returns 1 when events before target remain. A claimed slot that is not published
 * yet is waited for: its producer is between claim and publish, storing fields (no
 * call, no lock), so it is normally there after a few spins; a producer that was
 * preempted there (an overloaded machine, a low-priority thread) may take a while,
 * so the wait goes spin -> sched_yield -> 50 us sleeps, and only after
 * VT_SLOT_WAIT_NS is the slot given up (the producer died there, or a signal handler
 * on its thread blocks) and its event counted as dropped. */
#define VT_SLOT_WAIT_NS 10000000000ull   /* 10 s */

/* 50 us asleep through the raw system call: nanosleep(3) is a cancellation point (a
 * thread cancelled here would die holding the core lock); errno kept. */
static void vt__nap(void)
{
    int e = errno;
    struct timespec ts = {0, 50000};
    syscall(SYS_nanosleep, &ts, NULL);
    errno = e;
}
/* noinline: one function applies every event (bench/vt_bench.py counts it) */
static __attribute__((noinline)) int vt__drain_locked(uint64_t target, unsigned budget)
{
    unsigned spins = 0;
    uint64_t since = 0;
    while (__atomic_load_n(&vt__ring.tail, __ATOMIC_RELAXED) < target) {
        if (!budget--)
            return 1;
        int claimed;
        uint64_t pos = vt__ring.tail;
        vt_ev *e = vt_ring_peek(&vt__ring, &claimed);
        if (!e) {
            if (!claimed)
                return 0;
            budget++;
            if (++spins < 128)
                continue;
            if (spins < 128 + 1000) {
                sched_yield();
                continue;
            }
            uint64_t now = vt_now_ns();
            if (!since)
                since = now;
            if (now - since < VT_SLOT_WAIT_NS) {
                vt__nap();
                continue;
            }
            if (vt_ring_skip(&vt__ring))
                __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
            spins = 0;
            since = 0;
            continue;
        }
        spins = 0;
        since = 0;
        vt__apply_event(e, pos);
        vt_ring_done(&vt__ring, e);
    }
    return 0;
}

static void vt__yield_to_waiters(void);

static void vt__drain_all_locked(void)
{
    uint64_t target = __atomic_load_n(&vt__ring.head, __ATOMIC_ACQUIRE);
    while (vt__drain_locked(target, VT_DRAIN_CHUNK)) {
        vt__unlock();
        vt__yield_to_waiters();   /* a snapshot or a query waiting goes first */
        vt__lock_raw();
    }
}

/* Brings every query up to date with the events claimed so far (lock-free when the
 * ring is empty). */
static inline void vt__sync(void)
{
    if (!vt_ring_pending(&vt__ring))
        return;
    /* Not from inside the core's own code on this thread (a signal handler that
     * interrupted a lock holder), nor for a client query made inside a hook
     * (vt__tls.no_sync, vt_api.c: a handler that interrupted one, whose own event may
     * be half written, or the real CUDA call under it, with the C library's locks
     * held): the state as last applied, as the lock-free counters always were. */
    if (vt__tls.core != 0 || vt__tls.no_sync != 0)   /* vt__no_lock_here */
        return;
    int e = errno;
    vt__lock();
    vt__unlock();
    errno = e;
}

void vt_core_drain(void)
{
    vt__sync();
}

static void (*vt__drain_kick)(void);   /* atomic: vt_core_set_drain_kick */

void vt_core_set_drain_kick(void (*kick)(void))
{
    __atomic_store_n(&vt__drain_kick, kick, __ATOMIC_RELEASE);
}

void vt__post_kick(void)
{
    void (*k)(void) = __atomic_load_n(&vt__drain_kick, __ATOMIC_ACQUIRE);
    if (k)
        k();
}

/* The ring is full: one hold of the lock applies the VT_ROOM_CHUNK oldest events
 * (what a waiting producer pays: figure 5), then the producer claims again. */
static void vt__make_room(void)
{
    __atomic_add_fetch(&vt__core.ring_full, 1, __ATOMIC_RELAXED);
    vt__lock_raw();
    vt_ring_init(&vt__ring);   /* a core used before vt_core_init: numbered now */
    vt__drain_locked(__atomic_load_n(&vt__ring.head, __ATOMIC_ACQUIRE), VT_ROOM_CHUNK);
    vt__unlock();
}

void vt__post_full_alloc(uint64_t now, uint64_t addr, uint64_t size, uint64_t ctx_stream,
                         int device, int kind, uint32_t stack)
{
    int err = errno;   /* the lock may wait, a drain may allocate */
    for (int i = 0; i < VT_ROOM_TRIES; i++) {
        vt__make_room();
        if (vt__post_alloc_try(now, addr, size, ctx_stream, device, kind, stack))
            goto out;
    }
    vt_alloc_info a = {addr, size, ctx_stream, ctx_stream, device, kind, stack};
    vt_core_alloc(&a);
out:
    errno = err;
}

uint64_t vt__post_full_free(uint64_t addr, vt_taken *t)
{
    int err = errno;
    uint64_t ticket = 0;
    for (int i = 0; i < VT_ROOM_TRIES && !ticket; i++) {
        vt__make_room();
        ticket = vt__post_free_try(addr);
    }
    if (!ticket) {
        /* as a ring free: a miss is remembered at once (a concurrent failed free of
         * the same address must not put its record back), whatever the real free does */
        if (!vt_core_take(addr, 0, t) && t->missed)
            vt_core_untracked_free(addr);
        t->missed = 0;
        ticket = VT_TICKET_SYNC;
    }
    errno = err;
    return ticket;
}

void vt__post_lost(void)
{
    __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
}

void vt_core_alloc_failed(int device, int kind, int oom)
{
    if (!vt_core_enabled() || kind < 0 || kind >= VT_KIND_COUNT)
        return;
    vt__lock();
    int slot = vt__slot(device);
    vt__core.ks[slot][kind].failed_total++;
    if (oom)
        vt__core.ks[slot][kind].oom_total++;
    vt__core.dev_active[slot] = 1;
    vt__bump_changes();
    vt__unlock();
}

int vt_core_take(uint64_t addr, unsigned kind_mask, vt_taken *t)
{
    t->rec = NULL;
    t->missed = 0;
    t->ticket = 0;
    t->alive = -1;
    if (!vt_core_enabled())
        return 0;
    vt__lock();
    vt__apply_take(addr, kind_mask, t);
    vt__unlock();
    return t->rec != NULL;
}

/* Under lock: 1 when a vt_core_drop_context made since the take of *t would have
 * dropped the taken record (same rule as the drop itself). More teardowns than the
 * log remembers during one free: counted as dropped. */
static int vt__dropped_since(const vt_taken *t, const vt_site *s)
{
    uint32_t since = vt__core.drops - t->drops;
    if (!since || s->kind == VT_KIND_ASYNC || s->kind == VT_KIND_VMM)
        return 0;
    if (since > VT_DROP_LOG)
        return 1;
    for (uint32_t g = t->drops; g != vt__core.drops; g++) {
        const __typeof__(vt__core.drop_log[0]) *d = &vt__core.drop_log[g % VT_DROP_LOG];
        if (t->birth_ns < d->before && (d->ctx ? t->ctx_stream == d->ctx : s->slot == d->slot))
            return 1;
    }
    return 0;
}

/* Under lock: 1 when a free of t->addr that found no record succeeded since the take
 * of *t (vt_core_untracked_free). More than the log remembers: not known, 0. */
static int vt__freed_since(const vt_taken *t)
{
    uint32_t since = vt__core.misses - t->misses;
    if (!since || since > VT_MISS_LOG)
        return 0;
    for (uint32_t g = t->misses; g != vt__core.misses; g++)
        if (vt__core.miss_log[g % VT_MISS_LOG] == t->addr)
            return 1;
    return 0;
}

void vt_core_untracked_free(uint64_t addr)
{
    vt__lock();
    vt__core.miss_log[vt__core.misses++ % VT_MISS_LOG] = addr;
    vt__unlock();
}

/* Under lock: puts the record taken into *t (site s) back, unless it must not come
 * back (see vt_core_restore). */
static void vt__restore_locked(const vt_taken *t, vt_site *s)
{
    if (vt__rec_find(t->addr, NULL) != VT_NO_ID)
        return;  /* the address was handed out again meanwhile: keep the newer */
    if (vt__dropped_since(t, s))
        return;  /* its context was torn down meanwhile: the memory is gone */
    if (t->alive == 0)
        return;  /* the driver says nothing is allocated there any more */
    if (t->alive < 0 && vt__freed_since(t))
        return;  /* not known; a concurrent free of the same pointer missed: gone */
    uint32_t id = vt__rec_new();
    if (id == VT_NO_ID || vt_index_insert(&vt__core.idx, t->addr, id) < 0) {
        if (id != VT_NO_ID)
            vt__rec_put(id);
        vt__oom_latch();
        return;
    }
    vt_rec *r = vt__rec_at(id);
    r->addr = t->addr;
    r->size = t->size;
    r->birth_ns = t->birth_ns;
    r->ctx_stream = t->ctx_stream;
    r->site = s;
    r->step = t->step;
    r->tid = t->tid;
    vt__acct_add(s, r->size, r->birth_ns, 1);
    vt__fj_note(r->addr, r->size, s->kind, s->slot, 0);
}

void vt_core_restore(vt_taken *t)
{
    if (t->ticket) {   /* a ring free: what its event took is in the taken log */
        uint64_t ticket = t->ticket;
        t->ticket = 0;
        /* apply the ring up to the free's own event (claimed before the real free),
         * not beyond: later frees must not push its entry out of the log first */
        vt__lock_raw();
        while (vt__drain_locked(ticket, VT_DRAIN_CHUNK)) {
            vt__unlock();
            vt__lock_raw();
        }
        vt_taken_entry *l = &vt__taken_log[(ticket - 1) % VT_TAKEN_LOG];
        if (l->ticket != ticket) {
            l = NULL;
            for (uint32_t i = 0; i < VT_TAKEN_LATE && !l; i++)
                if (vt__taken_late[i].ticket == ticket)
                    l = &vt__taken_late[i];
        }
        if (!l) {
            /* more late entries than kept since: not known, not restored */
            __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
        } else if (l->site) {
            vt_taken r = {NULL};
            r.addr = l->addr;
            r.size = l->size;
            r.birth_ns = l->birth_ns;
            r.ctx_stream = l->ctx_stream;
            r.step = l->step;
            r.tid = l->tid;
            r.drops = l->drops;
            r.misses = l->misses;
            r.alive = t->alive;
            vt_site *s = l->site;
            l->site = NULL;
            l->ticket = 0;
            vt__restore_locked(&r, s);
        }
        vt__unlock();
        t->rec = NULL;
        return;
    }
    vt_site *s = t->rec;
    if (!s)
        return;
    t->rec = NULL;
    vt__lock();
    vt__restore_locked(t, s);
    vt__unlock();
}

uint64_t vt_core_next_seq(void)
{
    vt__sync();
    return __atomic_load_n(&vt__core.next_seq, __ATOMIC_RELAXED);
}

uint64_t vt_core_drop_context(int device, uint64_t ctx, uint64_t before_seq)
{
    if (!vt_core_enabled())
        return 0;
    uint64_t n = 0;
    int slot = vt__slot(device);
    vt__lock();
    /* remembered for a free in flight (taken, real free not returned yet): if its real
     * free fails because this teardown took the memory, vt_core_restore must not put
     * the record back */
    uint32_t li = vt__core.drops++ % VT_DROP_LOG;
    vt__core.drop_log[li].ctx = ctx;
    vt__core.drop_log[li].before = before_seq;
    vt__core.drop_log[li].slot = slot;
    for (size_t sl = 0; sl < vt__core.n_slabs; sl++) {
        vt_rec *slab = vt__core.slabs[sl];
        for (uint32_t i = 0; i < VT_SLAB; i++) {
            vt_rec *r = &slab[i];
            vt_site *s = r->site;
            if (!s || s->kind == VT_KIND_ASYNC || s->kind == VT_KIND_VMM || r->birth_ns >= before_seq)
                continue;
            if (ctx ? r->ctx_stream != ctx : s->slot != slot)
                continue;
            uint32_t islot = 0;
            uint32_t id = (uint32_t)(sl * VT_SLAB) + i;
            if (vt__rec_find(r->addr, &islot) != id)
                continue;  /* cannot happen: every record with a site is indexed */
            vt_index_remove_slot(&vt__core.idx, islot);
            vt__acct_sub(s, r->size, r->birth_ns);
            vt__fj_note(r->addr, r->size, s->kind, s->slot, 1);
            vt__rec_put(id);
            n++;
        }
    }
    vt__unlock();
    return n;
}

/* ---- VMM ---- */

/* Under lock: counts v as live memory while it is referenced, mapped or being
 * mapped, and stops counting it when none of these holds (a failed release or a
 * map that raced a release counts it again: restore = the free counter is undone);
 * notes its range's change (before: vt__vmm_range earlier); frees it when it is not
 * live and no release in flight holds it. Returns v, or NULL when freed. */
static vt_vmm *vt__vmm_settle(vt_vmm *v, uint64_t before)
{
    int live = v->refs > 0 || v->maps > 0 || v->mapping > 0;
    if (live && !v->counted) {
        v->counted = 1;
        vt__acct_add(v->site, v->size, v->seq, 1);
    } else if (!live && v->counted) {
        v->counted = 0;
        vt__acct_sub(v->site, v->size, v->seq);
    }
    vt__fj_vmm(v, before);
    if (live || v->pending)
        return v;
    HASH_DELETE(hh, vt__core.vmms, v);
    vt_mem_free(v);
    return NULL;
}

int vt_core_vmm_create(uint64_t handle, uint64_t size, int device, uint32_t stack)
{
    if (!vt_core_enabled())
        return -1;
    uint64_t now = vt_now_ns();
    int tid = vt_guard_tid();
    int rc = 0;
    vt__lock();
    vt_site *s = vt__site_get(stack, VT_KIND_VMM, device);
    vt_vmm *v = s ? vt_mem_calloc(sizeof *v) : NULL;
    if (!v) {
        vt__oom_latch();
        rc = -1;
        goto out;
    }
    vt_vmm *old;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, old);
    if (old) {   /* the driver gave the value out again: the old one is gone, with
                  * any mapping still listed for it (its unmap not tracked yet: a late
                  * one must not end the new allocation's mappings) */
        for (vt_map *m = old->mlist, *next; m; m = next) {
            next = m->sib_next;
            HASH_DELETE(hh, vt__core.maps, m);
            vt_mem_free(m);
        }
        old->mlist = NULL;
        HASH_DELETE(hh, vt__core.vmms, old);
        if (vt__vmm_range(old))
            vt__fj_note(old->va, old->size, VT_KIND_VMM, old->site->slot, 1);
        if (old->counted)
            vt__acct_sub(old->site, old->size, old->seq);
        old->counted = 0;
        if (old->pending)
            old->orphan = 1;   /* its release's commit/restore frees it */
        else
            vt_mem_free(old);
    }
    v->handle = handle;
    v->size = size;
    v->birth_ns = vt__next_birth(now);
    v->seq = v->birth_ns;
    v->site = s;
    v->step = (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    v->tid = tid;
    v->refs = 1;
    v->counted = 1;
    HASH_ADD(hh, vt__core.vmms, handle, sizeof v->handle, v);
    if (vt__hash_oom) {
        vt_mem_free(v);
        vt__oom_latch();
        rc = -1;
        goto out;
    }
    vt__acct_add(s, size, v->seq, 0);
out:
    vt__unlock();
    return rc;
}

/* Adds one to the reference count (ref = 1: a retain) or to the calls in flight
 * (ref = 0: a map beginning) of handle's allocation, under the lock. 1 when the
 * handle is known. */
static int vt__vmm_add(uint64_t handle, int ref)
{
    if (!vt_core_enabled())
        return 0;
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v) {
        uint64_t before = vt__vmm_range(v);
        if (ref)
            v->refs++;
        else
            v->mapping++;
        vt__vmm_settle(v, before);
    }
    vt__unlock();
    return v != NULL;
}

void vt_core_vmm_retain(uint64_t handle)
{
    vt__vmm_add(handle, 1);
}

int vt_core_vmm_release(uint64_t handle, vt_taken *t)
{
    t->rec = NULL;
    if (!vt_core_enabled())
        return 0;
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v && v->refs > 0) {   /* none left: a release too many, the driver refuses it */
        uint64_t before = vt__vmm_range(v);
        v->refs--;
        v->pending++;
        t->rec = vt__vmm_settle(v, before);   /* kept: pending */
    }
    vt__unlock();
    return t->rec != NULL;
}

/* Under lock: the release in flight that held v has returned; gave_back: it failed
 * (its reference is given back). */
static void vt__vmm_release_done(vt_vmm *v, int gave_back)
{
    v->pending--;
    if (v->orphan) {
        if (!v->pending)
            vt_mem_free(v);   /* its handle was created again: this one is history */
        return;
    }
    uint64_t before = vt__vmm_range(v);
    if (gave_back)
        v->refs++;
    vt__vmm_settle(v, before);
}

void vt_core_vmm_restore(vt_taken *t)
{
    vt_vmm *v = t->rec;
    if (!v)
        return;
    t->rec = NULL;
    vt__lock();
    vt__vmm_release_done(v, 1);
    vt__unlock();
}

void vt_core_vmm_commit(vt_taken *t)
{
    vt_vmm *v = t->rec;
    if (!v)
        return;
    t->rec = NULL;
    vt__lock();
    vt__vmm_release_done(v, 0);
    vt__unlock();
}

/* Under lock: the lowest address at which v is still mapped, or 0 (its own
 * mappings: usually one or two). */
static uint64_t vt__vmm_lowest_va(const vt_vmm *v)
{
    uint64_t lo = 0;
    for (const vt_map *m = v->mlist; m; m = m->sib_next)
        if (!lo || m->va < lo)
            lo = m->va;
    return lo;
}

/* Under lock: mapping m is gone (unmapped, or displaced by a new mapping at its
 * address): takes it out of the table and frees it; its allocation loses a mapping
 * (and may be gone: vt__vmm_settle). */
static void vt__unmap_one(vt_map *m)
{
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &m->handle, sizeof m->handle, v);
    HASH_DELETE(hh, vt__core.maps, m);
    if (m->sib_prev)
        m->sib_prev->sib_next = m->sib_next;
    else if (v && v->mlist == m)
        v->mlist = m->sib_next;
    if (m->sib_next)
        m->sib_next->sib_prev = m->sib_prev;
    uint64_t va = m->va;
    vt_mem_free(m);
    vt__bump_changes();
    if (!v)
        return;
    uint64_t before = vt__vmm_range(v);
    if (v->maps)
        v->maps--;
    if (v->va == va)
        v->va = v->maps ? vt__vmm_lowest_va(v) : 0;
    vt__vmm_settle(v, before);
}

int vt_core_vmm_map_begin(uint64_t handle)
{
    return vt__vmm_add(handle, 0);
}

void vt_core_vmm_map_end(uint64_t va, uint64_t size, uint64_t handle, int began, int ok)
{
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v && ok && vt_core_enabled()) {
        vt_map *old;
        HASH_FIND(hh, vt__core.maps, &va, sizeof va, old);
        if (old) {
            vt__unmap_one(old);   /* its unmap was not seen: gone now */
            /* that may have ended v itself (the same handle, released, with no map
             * in flight) */
            HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
        }
        vt_map *m = v ? vt_mem_calloc(sizeof *m) : NULL;
        if (v && !m) {
            vt__oom_latch();
        } else if (m) {
            m->va = va;
            m->size = size;
            m->handle = handle;
            HASH_ADD(hh, vt__core.maps, va, sizeof m->va, m);
            if (vt__hash_oom) {
                vt_mem_free(m);
                vt__oom_latch();
            } else {
                uint64_t before = vt__vmm_range(v);
                m->sib_next = v->mlist;
                if (v->mlist)
                    v->mlist->sib_prev = m;
                v->mlist = m;
                v->maps++;
                if (!v->va || va < v->va)
                    v->va = va;
                vt__bump_changes();
                v = vt__vmm_settle(v, before);
            }
        }
    }
    if (v && began && v->mapping) {
        uint64_t before = vt__vmm_range(v);
        v->mapping--;
        vt__vmm_settle(v, before);
    }
    vt__unlock();
}

int vt_core_vmm_hold_at(uint64_t addr, uint64_t *handle)
{
    if (!vt_core_enabled())
        return 0;
    int held = 0;
    vt__lock();
    vt_map *m;
    HASH_FIND(hh, vt__core.maps, &addr, sizeof addr, m);
    vt_vmm *v = NULL;
    if (m)
        HASH_FIND(hh, vt__core.vmms, &m->handle, sizeof m->handle, v);
    if (v) {
        uint64_t before = vt__vmm_range(v);
        v->mapping++;
        vt__vmm_settle(v, before);
        *handle = v->handle;
        held = 1;
    }
    vt__unlock();
    return held;
}

void vt_core_vmm_map(uint64_t va, uint64_t size, uint64_t handle)
{
    vt_core_vmm_map_end(va, size, handle, 0, 1);
}

void vt_core_vmm_unmap(uint64_t va, uint64_t size)
{
    if (!vt_core_enabled())
        return;
    vt__lock();
    /* the mappings side by side from va, found by address (one cuMemUnmap may span
     * several: PyTorch's expandable segments shrink so) */
    uint64_t at = va;
    int covered = 0;
    for (;;) {
        vt_map *m;
        HASH_FIND(hh, vt__core.maps, &at, sizeof at, m);
        if (!m)
            break;
        uint64_t next = m->va + m->size;
        vt__unmap_one(m);
        if (next - va >= size || next <= at) {
            covered = 1;
            break;
        }
        at = next;
    }
    if (!covered && size && at != va) {
        /* a gap on the way: every mapping that starts in [va, va + size) (a walk of
         * every mapping; not when nothing is tracked at va: a mapping of a handle
         * that is not tracked, e.g. imported, whose unmap would cost that walk under
         * the lock each time) */
        vt_map *m, *tmp;
        HASH_ITER(hh, vt__core.maps, m, tmp) {
            if (m->va - va < size)
                vt__unmap_one(m);
        }
    }
    vt__unlock();
}

void vt_core_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes)
{
    vt__lock();
    int slot = vt__slot(device);
    vt__core.meminfo_known[slot] = 1;
    vt__core.dev_active[slot] = 1;
    vt__core.mem_free[slot] = free_bytes;
    vt__core.mem_total[slot] = total_bytes;
    vt__unlock();
}

void vt_core_set_pool_reserved(int device, uint64_t reserved)
{
    vt__lock();
    int slot = vt__slot(device);
    vt__core.pool_known[slot] = 1;
    vt__core.pool_reserved[slot] = reserved;
    vt__unlock();
}

/* ---- steps and queries ---- */

uint64_t vt_core_step(void)
{
    __atomic_store_n(&vt__core.step_marked, 1, __ATOMIC_RELAXED);
    return __atomic_add_fetch(&vt__core_step, 1, __ATOMIC_RELAXED);
}

int vt_core_advance_unmarked_step(void)
{
    if (__atomic_load_n(&vt__core.step_marked, __ATOMIC_RELAXED))
        return 0;
    __atomic_add_fetch(&vt__core_step, 1, __ATOMIC_RELAXED);
    return 1;
}

uint64_t vt_core_live_bytes(int device)
{
    vt__sync();
    if (device < 0)
        return __atomic_load_n(&vt__core.live_total, __ATOMIC_RELAXED);
    if (device >= VT_MAX_DEVICES)
        return 0;
    return __atomic_load_n(&vt__core.dev_live[device + 1], __ATOMIC_RELAXED);
}

uint64_t vt_core_peak_bytes(int device)
{
    vt__sync();
    if (device < 0)
        return __atomic_load_n(&vt__core.peak_total, __ATOMIC_RELAXED);
    if (device >= VT_MAX_DEVICES)
        return 0;
    return __atomic_load_n(&vt__core.dev_peak[device + 1], __ATOMIC_RELAXED);
}

/* 1 when this thread must not take the core lock or apply the ring: it already is
 * in the core (a signal handler that interrupted it), or a client call was made
 * inside a hook (vt__tls.no_sync). */
static inline int vt__no_lock_here(void)
{
    return vt__tls.core != 0 || vt__tls.no_sync != 0;
}

uint64_t vt_core_peak_interval_take(void)
{
    if (vt__no_lock_here()) {   /* from the applied state; the interval goes on */
        uint64_t live = __atomic_load_n(&vt__core.live_total, __ATOMIC_RELAXED);
        uint64_t ip = __atomic_load_n(&vt__core.ipeak_total, __ATOMIC_RELAXED);
        return ip > live ? ip : live;
    }
    vt__lock();
    uint64_t live = vt__core.live_total;
    uint64_t r = vt__core.ipeak_total > live ? vt__core.ipeak_total : live;
    __atomic_store_n(&vt__core.ipeak_total, live, __ATOMIC_RELAXED);
    vt__unlock();
    return r;
}

void vt_core_scope_begin(void)
{
    if (vt__no_lock_here()) {   /* from the applied state, without the lock */
        __atomic_store_n(&vt__core.scope_seq, __atomic_load_n(&vt__core.next_seq, __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&vt__core.scope_bytes, 0, __ATOMIC_RELAXED);
        return;
    }
    vt__lock();
    __atomic_store_n(&vt__core.scope_seq, vt__core.next_seq, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__core.scope_bytes, 0, __ATOMIC_RELAXED);
    vt__unlock();
}

uint64_t vt_core_scope_leaked_bytes(void)
{
    vt__sync();
    return __atomic_load_n(&vt__core.scope_bytes, __ATOMIC_RELAXED);
}

uint64_t vt_core_changes(void)
{
    vt__sync();
    return __atomic_load_n(&vt__core.changes, __ATOMIC_RELAXED);
}

uint64_t vt_core_changes_applied(void)
{
    return __atomic_load_n(&vt__core.changes, __ATOMIC_RELAXED);
}

uint64_t vt_core_live_count_applied(void)
{
    return __atomic_load_n(&vt__core.live_count, __ATOMIC_RELAXED);
}

uint64_t vt_core_live_count(void)
{
    vt__sync();
    return __atomic_load_n(&vt__core.live_count, __ATOMIC_RELAXED);
}

uint64_t vt_core_ring_full_total(void)
{
    return __atomic_load_n(&vt__core.ring_full, __ATOMIC_RELAXED);
}

uint64_t vt_core_dropped_records(void)
{
    vt__sync();
    return __atomic_load_n(&vt__core.dropped, __ATOMIC_RELAXED);
}

/* ---- collection ---- */

void vt_collect_free(vt_collect *c)
{
    free(c->sites);
    free(c->allocs);
    c->sites = NULL;
    c->allocs = NULL;
    c->n_sites = c->n_allocs = 0;
}

/* Chunked copy of the live list (VT_COLLECT_ALLOCS) and of the ranges that
 * fragmentation needs (VT_COLLECT_FRAG).
 *
 * Records live in slabs that never move or go away (vt__core.slabs), so the copy
 * walks the slabs in order, taking the records that are in the table (site !=
 * NULL), several slabs per lock hold: a hold ends after the slab during which it
 * reached VT_COLLECT_HOLD_NS, or when the copy has no room for one more slab (room
 * is made outside the lock). Between holds the lock is released and every hook
 * that blocked on it is let through first (vt__yield_to_waiters).
 *
 * A periodic snapshot that wants fragmentation but not the live list copies only
 * (start, size, device slot) of each range that counts for fragmentation (17 bytes,
 * no site fields but the kind and slot) instead of a whole row (64 bytes: kind,
 * device, stack, step, birth, tid, stream): about 3x more records per hold, so 200,000
 * live allocations take ~5 holds instead of 28, and no row array is written and read
 * back. 0.25 ms per hold: a hook waits at most that (plus one slab, ~20 us of rows),
 * well under issue 7's 1 ms, and each gap costs the collector a handoff to the
 * waiting hooks (a wake-up and a reschedule on a loaded machine), so holds are not
 * made shorter than they need to be. */
#define VT_COLLECT_HOLD_NS  250000ull    /* a hold copies slabs until this long has passed */
#define VT_COLLECT_YIELD_NS 2000000ull   /* at most this long per gap for waiters */

static void vt__unlock_timed(uint64_t held_since, vt_collect *c)
{
    uint64_t d = vt_now_ns() - held_since;
    vt__unlock();
    if (d > c->lock_hold_max_ns)
        c->lock_hold_max_ns = d;
    c->lock_holds++;
}

/* Without the lock: lets every thread blocked in vt__lock take the lock before the
 * collector takes it again (bounded by VT_COLLECT_YIELD_NS; a waiter decrements the
 * count as soon as it holds the lock). */
static void vt__yield_to_waiters(void)
{
    if (!__atomic_load_n(&vt__core.waiters, __ATOMIC_RELAXED))
        return;
    uint64_t until = vt_now_ns() + VT_COLLECT_YIELD_NS;
    while (__atomic_load_n(&vt__core.waiters, __ATOMIC_RELAXED) && vt_now_ns() < until)
        sched_yield();
}

/* Makes room for `more` rows after c->n_allocs (without the lock). 0 or -1. */
static int vt__rows_reserve(vt_collect *c, size_t *cap, size_t more)
{
    if (c->n_allocs + more <= *cap)
        return 0;
    size_t n = c->n_allocs + more;
    n += n / 8 + 64;
    vt_alloc_row *p = realloc(c->allocs, n * sizeof *p);
    if (!p)
        return -1;
    c->allocs = p;
    *cap = n;
    return 0;
}

/* The ranges fragmentation is computed from: every live allocation but pinned host
 * memory and unmapped VMM (address 0), with its device slot. Owned by the collector. */
typedef struct vt__ranges {
    uint64_t (*r)[2];   /* start, size */
    uint8_t   *slot;    /* device slot (vt__slot) of each */
    size_t     n, cap;
} vt__ranges;

static int vt__ranges_reserve(vt__ranges *g, size_t more)
{
    if (g->n + more <= g->cap)
        return 0;
    size_t n = g->n + more;
    n += n / 8 + 64;
    uint64_t (*r)[2] = realloc(g->r, n * sizeof *r);
    if (!r)
        return -1;
    g->r = r;
    uint8_t *sl = realloc(g->slot, n);
    if (!sl)
        return -1;
    g->slot = sl;
    g->cap = n;
    return 0;
}

static void vt__ranges_free(vt__ranges *g)
{
    free(g->r);
    free(g->slot);
    memset(g, 0, sizeof *g);
}

static inline void vt__range_add(vt__ranges *g, uint64_t addr, uint64_t size, int kind, int slot)
{
    if (kind == VT_KIND_HOST_PINNED || !addr)
        return;
    g->r[g->n][0] = addr;
    g->r[g->n][1] = vt_frag_size_tag(size, kind == VT_KIND_VMM);
    g->slot[g->n] = (uint8_t)slot;
    g->n++;
}

static void vt__row_of_rec(vt_alloc_row *a, const vt_rec *r)
{
    a->addr = r->addr;
    a->size = r->size;
    a->kind = r->site->kind;
    a->device = r->site->device;
    a->stack = r->site->stack;
    a->step = r->step;
    a->birth_ns = r->birth_ns;
    a->tid = r->tid;
    a->stream = r->site->kind == VT_KIND_ASYNC ? r->ctx_stream : 0;
}

static void vt__row_of_vmm(vt_alloc_row *a, const vt_vmm *v)
{
    a->addr = v->va;
    a->size = v->size;
    a->kind = VT_KIND_VMM;
    a->device = v->site->device;
    a->stack = v->site->stack;
    a->step = v->step;
    a->birth_ns = v->birth_ns;
    a->tid = v->tid;
    a->stream = 0;
}

/* Copies the live records, several slabs per hold (see above), then the counted VMM
 * allocations (one hold: there are few): as rows into c->allocs (room *cap) when g
 * is NULL, else as ranges into g. Called without the lock. 0, or -1 out of memory. */
static int vt__collect_live(vt_collect *c, size_t *cap, vt__ranges *g)
{
    for (size_t next = 0;;) {
        /* room for one slab at least, so that every hold makes progress */
        if (g ? vt__ranges_reserve(g, VT_SLAB) : vt__rows_reserve(c, cap, VT_SLAB))
            return -1;
        vt__lock_raw();   /* rows as of the first hold: no ring events between */
        uint64_t t0 = vt_now_ns();
        while (next < vt__core.n_slabs) {
            const vt_rec *slab = vt__core.slabs[next++];
            size_t room;
            if (g) {
                for (int i = 0; i < VT_SLAB; i++) {
                    const vt_site *s = slab[i].site;
                    if (s)
                        vt__range_add(g, slab[i].addr, slab[i].size, s->kind, s->slot);
                }
                room = g->cap - g->n;
            } else {
                for (int i = 0; i < VT_SLAB; i++)
                    if (slab[i].site)
                        vt__row_of_rec(&c->allocs[c->n_allocs++], &slab[i]);
                room = *cap - c->n_allocs;
            }
            if (room < VT_SLAB || vt_now_ns() - t0 >= VT_COLLECT_HOLD_NS)
                break;
        }
        int more = next < vt__core.n_slabs;
        vt__unlock_timed(t0, c);
        if (!more)
            break;
        vt__yield_to_waiters();
    }
    for (int attempt = 0;; attempt++) {
        vt__lock_raw();   /* rows as of the first hold: no ring events between */
        uint64_t t0 = vt_now_ns();
        size_t nv = HASH_COUNT(vt__core.vmms);
        if (g ? g->n + nv <= g->cap : c->n_allocs + nv <= *cap) {
            vt_vmm *v, *vtmp;
            HASH_ITER(hh, vt__core.vmms, v, vtmp) {
                if (!v->counted)
                    continue;
                if (g)
                    vt__range_add(g, v->va, v->size, VT_KIND_VMM, v->site->slot);
                else
                    vt__row_of_vmm(&c->allocs[c->n_allocs++], v);
            }
            vt__unlock_timed(t0, c);
            return 0;
        }
        vt__unlock_timed(t0, c);
        if (attempt > 8 || (g ? vt__ranges_reserve(g, nv + nv / 4 + 16)
                              : vt__rows_reserve(c, cap, nv + nv / 4 + 16)) < 0)
            return -1;
    }
}

/* Fragmentation of every device in c from g (without the lock): groups the ranges
 * by device slot in place (American flag sort: each misplaced range is swapped
 * straight to its group; with one device, one vectorised read of the slots finds
 * there is nothing to group), then sorts each group and measures its gaps. Same
 * result as vt_fragmentation on each device's ranges: the value does not depend on
 * the order of equal starts. With set: every group, sorted, is loaded into it as
 * well (set->valid = 1 when all of them fit). */
static void vt__frag_devices(vt_collect *c, vt__ranges *g, vt_frag_set *set)
{
    size_t cnt[VT_DEV_SLOTS] = { 0 }, start[VT_DEV_SLOTS], next[VT_DEV_SLOTS];
    uint8_t mixed = 0;
    for (size_t i = 0; i < g->n; i++)
        mixed |= (uint8_t)(g->slot[i] ^ g->slot[0]);
    if (!mixed && g->n) {
        cnt[g->slot[0]] = g->n;
    } else {
        for (size_t i = 0; i < g->n; i++)
            cnt[g->slot[i]]++;
    }
    size_t off = 0, most = 0;
    for (int s = 0; s < VT_DEV_SLOTS; s++) {
        start[s] = next[s] = off;
        off += cnt[s];
        if (cnt[s] > most)
            most = cnt[s];
    }
    for (int s = 0; mixed && s < VT_DEV_SLOTS; s++) {
        while (next[s] < start[s] + cnt[s]) {
            size_t i = next[s];
            int t = g->slot[i];
            if (t == s) {
                next[s]++;
                continue;
            }
            size_t j = next[t]++;
            uint64_t a = g->r[i][0], z = g->r[i][1];
            g->r[i][0] = g->r[j][0];
            g->r[i][1] = g->r[j][1];
            g->r[j][0] = a;
            g->r[j][1] = z;
            g->slot[i] = g->slot[j];
            g->slot[j] = (uint8_t)t;
        }
    }
    /* scratch for the largest group; without it, qsort */
    void *scratch = most >= 64 ? malloc(vt_frag_scratch_bytes(most)) : NULL;
    double value[VT_DEV_SLOTS];
    int loaded = set != NULL;
    if (set)
        vt_frag_set_reset(set);
    for (int s = 0; s < VT_DEV_SLOTS; s++) {
        if (!cnt[s])
            continue;
        uint64_t (*sorted)[2] = vt_frag_sort(g->r + start[s], cnt[s], scratch);
        value[s] = vt_frag_sorted((const uint64_t (*)[2])sorted, cnt[s]);
        if (loaded && vt_frag_set_load(set, s, (const uint64_t (*)[2])sorted, cnt[s]) < 0)
            loaded = 0;
    }
    if (set)
        set->valid = loaded;
    for (int i = 0; i < c->n_devs; i++) {
        int s = vt__slot(c->devs[i].device);
        c->devs[i].fragmentation = cnt[s] < 2 ? 0.0 : value[s];   /* no gap: 0, as vt_fragmentation */
    }
    free(scratch);
}

#define VT_FC_WAIT_NS 20000000ull   /* 20 ms */

/* Takes vt__fc (busy = 1): at once, or within wait_ns (sched_yield between tries).
 * 1 when taken, else 0. */
static int vt__fc_acquire(uint64_t wait_ns)
{
    if (!__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
        return 1;
    if (!wait_ns)
        return 0;
    uint64_t until = vt_now_ns() + wait_ns;
    do {
        sched_yield();
        if (!__atomic_load_n(&vt__fc.busy, __ATOMIC_RELAXED) &&
            !__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
            return 1;
    } while (vt_now_ns() < until);
    return 0;
}

/* Journal sizes, in entries (16 bytes each), from the live count L: the journal
 * offered to the core holds L/4 + 16,384 (two of them exist: 8 bytes per live
 * allocation), and the writer merges it once it holds L/8 + 8,192 (half that), so
 * that it overflows only when a burst outruns the writer. */
#define VT_FJ_ROOM(live) ((size_t)(live) / 4 + 16384)
#define VT_FJ_KEEP(live) ((size_t)(live) / 8 + 8192)

/* Makes the collector's spare journal buffer hold the entries to offer the core:
 * VT_FJ_ROOM, or more after an overflow (vt__fc.want). Without the lock. 0, or -1
 * out of memory. */
static int vt__fc_reserve(void)
{
    size_t want = VT_FJ_ROOM(vt_core_live_count_applied());
    if (want < vt__fc.want)
        want = vt__fc.want;
    if (vt__fc.spare_cap >= want)
        return 0;
    free(vt__fc.spare);
    vt__fc.spare = malloc(want * sizeof *vt__fc.spare);
    vt__fc.spare_cap = vt__fc.spare ? want : 0;
    return vt__fc.spare ? 0 : -1;
}

/* Under lock, by the collector holding vt__fc: hands the core the spare buffer as a
 * new, empty journal and keeps the old one as the spare (its vt__core.fj_n entries,
 * returned, are what changed since the previous take). *was_on: the old journal
 * was complete. A journal that stopped full (fj_on = 0 with a kept set) asks for
 * twice the room next time, up to 2 x live + 65,536 (past that a full copy is the
 * cheaper way). */
static size_t vt__fj_take(int *was_on)
{
    uint64_t (*old)[2] = vt__core.fj;
    size_t n = vt__core.fj_n, cap = vt__core.fj_cap;
    *was_on = vt__core.fj_on;
    if (!vt__core.fj_on && vt__fc.set.valid && cap) {
        size_t most = 2 * (size_t)vt__core.live_count + 65536;
        vt__fc.want = 2 * cap < most ? 2 * cap : most;
    }
    vt__core.fj = vt__fc.spare;
    vt__core.fj_cap = vt__fc.spare_cap;
    __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);   /* read by vt_core_frag_keep */
    vt__core.fj_on = vt__core.fj != NULL;
    vt__fc.spare = old;
    vt__fc.spare_cap = cap;
    return n;
}

void vt_core_frag_keep(void)
{
    size_t n = __atomic_load_n(&vt__core.fj_n, __ATOMIC_RELAXED);
    if (n < VT_FJ_KEEP(vt_core_live_count_applied()))
        return;
    if (__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
        return;   /* a collection is using it */
    if (vt__fc.set.valid && vt__fc_reserve() == 0) {
        int whole;
        vt__lock_raw();
        n = vt__fj_take(&whole);
        vt__unlock();
        if (!whole || vt_frag_set_apply(&vt__fc.set, vt__fc.spare, n) < 0)
            vt_frag_set_reset(&vt__fc.set);   /* the next collection copies */
    }
    __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
}

int vt_core_collect(vt_collect *c, unsigned flags, int leak_steps)
{
    memset(c, 0, sizeof *c);
    int want_rows = (flags & VT_COLLECT_ALLOCS) != 0;
    int want_ranges = (flags & VT_COLLECT_FRAG) && !want_rows;   /* ranges only */
    /* The kept fragmentation set (vt_frag.h), when no other collector holds it: a
     * collection of ranges only brings it up to date from the journal, and a
     * collection without fragmentation drops it (and stops the journal). A
     * collection of the live list leaves both alone. A collection of ranges waits
     * for the writer's merge (vt_core_frag_keep: a few ms, holding no lock) rather
     * than copy the live list; for at most VT_FC_WAIT_NS (another collector may hold
     * it for a full copy), then it copies without the set. */
    int fc = !want_rows && vt__fc_acquire(want_ranges ? VT_FC_WAIT_NS : 0);
    if (fc && want_ranges && vt__fc_reserve() < 0) {
        __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
        fc = 0;
    }
    size_t fj_n = 0;
    int fj_whole = 0;
    uint64_t (*fj_drop)[2] = NULL;
    size_t cap_sites = 0;
    uint64_t t0 = 0;
    for (int attempt = 0;; attempt++) {
        if (flags & VT_COLLECT_APPLIED)
            vt__lock_raw();
        else
            vt__lock();   /* applies every ring event claimed before the collection */
        t0 = vt_now_ns();
        size_t need_sites = vt__core.n_sites;
        if (need_sites <= cap_sites)
            break;  /* keep the lock */
        vt__unlock_timed(t0, c);
        free(c->sites);
        c->sites = NULL;
        if (attempt > 8) {
            if (fc)
                __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
            return -1;
        }
        cap_sites = need_sites + need_sites / 4 + 16;
        c->sites = malloc(cap_sites * sizeof *c->sites);
        if (!c->sites) {
            if (fc)
                __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
            return -1;
        }
    }
    /* lock held */
    if (fc && want_ranges) {
        fj_n = vt__fj_take(&fj_whole);   /* this instant's journal; a new one starts */
    } else if (fc) {
        fj_drop = vt__core.fj;   /* no fragmentation wanted: no journal (freed below) */
        vt__core.fj = NULL;
        __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);
        vt__core.fj_cap = 0;
        vt__core.fj_on = 0;
    }
    c->step = __atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    c->step_marked = __atomic_load_n(&vt__core.step_marked, __ATOMIC_RELAXED);
    c->changes = vt__core.changes;
    c->dropped_records = __atomic_load_n(&vt__core.dropped, __ATOMIC_RELAXED);
    for (int slot = 0; slot < VT_DEV_SLOTS; slot++) {
        if (!vt__core.dev_active[slot])
            continue;
        vt_dev_stats *d = &c->devs[c->n_devs++];
        d->device = vt__dev_of_slot(slot);
        d->meminfo_known = vt__core.meminfo_known[slot];
        d->free_bytes = vt__core.mem_free[slot];
        d->total_bytes = vt__core.mem_total[slot];
        d->live_bytes = vt__core.dev_live[slot];
        d->peak_bytes = vt__core.dev_peak[slot];
        d->pool_known = vt__core.pool_known[slot];
        d->pool_reserved_bytes = vt__core.pool_reserved[slot];
        d->pool_used_bytes = vt__core.ks[slot][VT_KIND_ASYNC].live_bytes;
        d->fragmentation = -1.0;
        memcpy(d->kinds, vt__core.ks[slot], sizeof d->kinds);
    }
    /* count/total columns per device slot x kind: sums of the sites' */
    static struct { uint64_t live_count, alloc_total, alloc_bytes_total, free_total; }
        sum[VT_DEV_SLOTS][VT_KIND_COUNT];   /* under the lock: one collector at a time */
    memset(sum, 0, sizeof sum);
    vt_site *s, *stmp;
    HASH_ITER(hh, vt__core.sites, s, stmp) {
        sum[s->slot][s->kind].live_count += s->live_count;
        sum[s->slot][s->kind].alloc_total += s->alloc_total;
        sum[s->slot][s->kind].alloc_bytes_total += s->alloc_bytes_total;
        sum[s->slot][s->kind].free_total += s->free_total;
        if (flags & VT_COLLECT_STEP) {
            uint64_t floor = s->step_min;
            if (s->floor_valid && floor > s->prev_floor) {
                s->growth_steps++;
                s->growth_bytes += floor - s->prev_floor;
            } else {
                s->growth_steps = 0;
                s->growth_bytes = 0;
            }
            s->prev_floor = floor;
            s->floor_valid = 1;
            s->step_min = s->live_bytes;
        }
        int warn = leak_steps > 0 && s->growth_steps >= (uint32_t)leak_steps;
        if (s->live_bytes || s->dirty || warn) {
            vt_site_row *row = &c->sites[c->n_sites++];
            row->id = s->id;
            row->stack = s->stack;
            row->kind = s->kind;
            row->device = s->device;
            row->live_bytes = s->live_bytes;
            row->live_count = s->live_count;
            row->interval_peak_bytes = s->interval_peak;
            row->alloc_total = s->alloc_total;
            row->alloc_bytes_total = s->alloc_bytes_total;
            row->free_total = s->free_total;
            row->growth_steps = s->growth_steps;
            row->growth_bytes = s->growth_bytes;
            row->leak_warn = warn;
            row->leak_new = warn && !s->warned;
            if (warn)
                s->warned = 1;
        }
        s->dirty = 0;
        s->interval_peak = s->live_bytes;
    }
    for (int i = 0; i < c->n_devs; i++) {
        int slot = vt__slot(c->devs[i].device);
        for (int k = 0; k < VT_KIND_COUNT; k++) {
            c->devs[i].kinds[k].live_count = sum[slot][k].live_count;
            c->devs[i].kinds[k].alloc_total = sum[slot][k].alloc_total;
            c->devs[i].kinds[k].alloc_bytes_total = sum[slot][k].alloc_bytes_total;
            c->devs[i].kinds[k].free_total = sum[slot][k].free_total;
        }
    }
    size_t cap_rows = (want_rows || want_ranges) ? vt__core.live_count + HASH_COUNT(vt__core.vmms) : 0;
    vt__unlock_timed(t0, c);

    vt__ranges g = { 0 };
    if (want_rows) {
        cap_rows += cap_rows / 8 + 64;
        c->allocs = malloc(cap_rows * sizeof *c->allocs);
        if (!c->allocs || vt__collect_live(c, &cap_rows, NULL) < 0) {
            /* totals and sites stay valid; the rows are dropped */
            free(c->allocs);
            c->allocs = NULL;
            c->n_allocs = 0;
            flags &= ~(unsigned)VT_COLLECT_FRAG;
            c->rows_failed = 1;
        } else if ((flags & VT_COLLECT_FRAG) && vt__ranges_reserve(&g, c->n_allocs) == 0) {
            for (size_t j = 0; j < c->n_allocs; j++) {
                const vt_alloc_row *a = &c->allocs[j];
                vt__range_add(&g, a->addr, a->size, a->kind, vt__slot(a->device));
            }
        } else {
            flags &= ~(unsigned)VT_COLLECT_FRAG;   /* no memory: not computed (-1) */
        }
    } else if (want_ranges && fc && fj_whole && vt__fc.set.valid &&
               vt_frag_set_apply(&vt__fc.set, vt__fc.spare, fj_n) == 0) {
        /* the kept set plus the journal: the ranges as of the first hold */
        for (int i = 0; i < c->n_devs; i++)
            c->devs[i].fragmentation = vt_frag_set_value(&vt__fc.set, vt__slot(c->devs[i].device));
        c->frag_from_journal = 1;
        flags &= ~(unsigned)VT_COLLECT_FRAG;   /* done */
    } else if (want_ranges) {
        /* a full copy (the journal, restarted at the first hold, holds every change
         * made while it runs: the kept set loaded from it is brought up to date by
         * the next collection whatever the copy saw of those) */
        if (vt__ranges_reserve(&g, cap_rows + cap_rows / 8 + 64) < 0 || vt__collect_live(c, NULL, &g) < 0) {
            flags &= ~(unsigned)VT_COLLECT_FRAG;
            c->rows_failed = 1;
        }
    }
    if (flags & VT_COLLECT_FRAG)
        vt__frag_devices(c, &g, fc && want_ranges ? &vt__fc.set : NULL);
    else if (fc && want_ranges && !c->frag_from_journal)
        vt_frag_set_reset(&vt__fc.set);   /* not loaded: the next collection copies */
    vt__ranges_free(&g);
    if (fc && !want_ranges) {
        free(fj_drop);
        free(vt__fc.spare);
        vt__fc.spare = NULL;
        vt__fc.spare_cap = 0;
        vt__fc.want = 0;
        vt_frag_set_free(&vt__fc.set);
    }
    if (fc)
        __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
    return 0;
}
