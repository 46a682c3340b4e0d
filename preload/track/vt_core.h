/* vt_core.h — the C-ABI seam between the hook shims and the tracker state.
 *
 * The core owns: the allocation table (vt_index.h keyed by address), VMM physical
 * allocations (keyed by CUmemGenericAllocationHandle) and their mappings (keyed by
 * virtual address), per device x kind totals with peaks, per-site totals keyed by
 * (stack id, kind, device), the step counter, the online leak detector and the scope
 * counter. It never calls CUDA, the loader, or stdio: hooks do that outside the lock
 * and hand the results in. A unit test drives it directly (no LD_PRELOAD).
 *
 * Sizes are bytes, times nanoseconds (CLOCK_MONOTONIC). Devices are CUDA ordinals
 * 0..VT_MAX_DEVICES-1; -1 means "unknown" (no current context); larger ordinals are
 * folded into -1. Thread safety: every function may be called from any thread; one
 * mutex (vt__core.lock) guards the tables; the hooks' events reach them through a
 * lock-free ring (vt_ring.h) that every locked call and every query applies first;
 * queries then read atomics without the lock.
 *
 * Failure: if the core cannot get memory for its own tables it latches tracking off
 * (vt_core_latch_off, one "vramtrace:" line) and every later call is a no-op;
 * the program is never affected.
 */
#ifndef VT_CORE_H
#define VT_CORE_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include "vt_format.h"
#include "vt_guard.h"
#include "vt_ring.h"

#define VT_MAX_DEVICES 64
#define VT_DEV_SLOTS   (VT_MAX_DEVICES + 1)   /* slot 0 = device -1 */

/* One allocation as the hook saw it (input of vt_core_alloc). */
typedef struct vt_alloc_info {
    uint64_t addr;      /* device/host pointer returned by CUDA                     */
    uint64_t size;      /* bytes the program asked for (pitch: pitch*height)        */
    uint64_t stream;    /* CUstream/cudaStream_t for stream-ordered kinds, else 0   */
    uint64_t ctx;       /* CUcontext current at the call (0 unknown)                */
    int      device;    /* CUDA ordinal or -1                                       */
    int      kind;      /* vt_kind                                                  */
    uint32_t stack;     /* vt_stack id (0 = none)                                   */
} vt_alloc_info;

/* What vt_core_take took out of the table: a copy of the allocation's record (the
 * record itself is recycled at once, so a successful free needs no second lock
 * hold), to put back with vt_core_restore if the real free fails. VMM release keeps
 * a pointer to its handle record instead (vt_core_vmm_*). Caller-owned, on the stack. */
typedef struct vt_taken {
    void    *rec;       /* opaque; NULL when nothing was taken                      */
    uint64_t addr, size, birth_ns, ctx_stream;
    uint32_t step;
    int32_t  tid;
    uint32_t drops;     /* vt_core_drop_context calls before the take (restore checks
                           whether one made since dropped this record)              */
    uint32_t misses;    /* vt_core_untracked_free calls before the take (restore
                           checks whether one since freed this address)             */
    uint8_t  missed;    /* take found no record of addr (t->addr set): if the real
                           free succeeds, say so with vt_core_untracked_free        */
    uint64_t ticket;    /* vt_core_post_free: ring position + 1 of the free's event
                           (0: none); what it takes is applied later, by the core   */
    int8_t   alive;     /* for vt_core_restore, set by the caller: 1 the driver says
                           an allocation still starts at addr, 0 it says none does,
                           -1 not known (vt_core_take sets -1)                       */
} vt_taken;

/* The event ring and the step counter (vt_core.c), read by the inline producers
 * below; nothing else touches them outside vt_core.c. */
extern vt_ring  vt__ring;
extern uint64_t vt__core_step;    /* atomic */
#define VT_FREE_DONE_SLOTS (2 * VT_RING_SLOTS)
extern uint64_t vt__free_done[VT_FREE_DONE_SLOTS];   /* by ticket - 1 (vt_core_free_done) */
/* Out-of-line parts of the producers. The ring is full: apply a chunk of its oldest
 * events (VT_ROOM_CHUNK, one short hold of the core lock) and claim again; after
 * many rounds without room, record synchronously (vt_core_alloc / vt_core_take; the
 * free then returns VT_TICKET_SYNC). errno kept. An event was given up by the drainer
 * (counted as dropped). The drain kick. */
void vt__post_full_alloc(uint64_t now, uint64_t addr, uint64_t size, uint64_t ctx_stream,
                         int device, int kind, uint32_t stack);
uint64_t vt__post_full_free(uint64_t addr, vt_taken *t);
void vt__post_lost(void);
void vt__post_kick(void);

/* ---- lifecycle ---- */

/* Initialises the core (idempotent, thread-safe). Reads vt__config for the test
 * failure injection. Returns 0, or -1 if the core is latched off. */
int  vt_core_init(void);
/* 1 while tracking is on (not disabled, not latched off). Lock-free, inline: one
 * relaxed load (it is asked on every hooked call). */
extern int vt__core_state;
#define VT_CORE_OFF         1   /* latched off, or VRAMTRACE_DISABLE                 */
#define VT_CORE_HOOKS_READY 2   /* the preload finished initialising (vt_lifecycle.c) */
static inline int vt_core_enabled(void)
{
    return !(__atomic_load_n(&vt__core_state, __ATOMIC_RELAXED) & VT_CORE_OFF);
}
/* 1 when hooks record: the preload is initialised and tracking is on. One relaxed
 * load and compare (every hooked call asks). */
static inline int vt_core_hooks_record(void)
{
    return __atomic_load_n(&vt__core_state, __ATOMIC_RELAXED) == VT_CORE_HOOKS_READY;
}
/* The preload finished initialising (vt_preload_init, after its ready flag). */
void vt_core_hooks_ready(void);
/* Latches tracking off for good; the first caller prints one line
 * "vramtrace: <why>; tracking is off". Thread-safe, idempotent. */
void vt_core_latch_off(const char *why);
/* Fork child: empties every table (the parent's records are not the child's). Call
 * only from a pthread_atfork child handler, single-threaded. */
void vt_core_after_fork_child(void);
/* pthread_atfork prepare/parent: hold the core lock across fork. */
void vt_core_fork_prepare(void);
void vt_core_fork_parent(void);

/* ---- events (hooks) ---- */

/* Records a successful allocation. Returns 0, or -1 when not recorded (tracking off,
 * or the table ran out of memory, which latches off). A second record at a live
 * address replaces the old one (the old one is counted as freed: CUDA reused it). */
int  vt_core_alloc(const vt_alloc_info *a);
/* The hooks' fast path (issue 7 figure 1): hands an allocation (addr, size bytes of
 * kind on device, stack id, ctx_stream: the CUstream of a stream-ordered allocation,
 * else the CUcontext current at the call) to the core through
 * the event ring (vt_ring.h) without taking the core lock; the core applies it, in
 * the one order of every hook's events, the next time anyone takes the lock (a
 * snapshot, a query, the writer thread's drain, a synchronous call). Every query and
 * collection first applies what was claimed before it, so a caller never sees a state
 * older than its own calls. When the ring is full it applies a chunk of the oldest
 * events itself and claims again (vt__post_full_alloc). Every VT_RING_KICK events it calls the drain kick
 * (vt_core_set_drain_kick). The caller has checked vt_core_enabled (the core checks
 * again when it applies the event). Any thread; lock-free; no system call; keeps
 * errno. Inline (every allocation hook). */
/* Publishes the event claimed at pos (a lost slot counts as dropped) and, every
 * VT_RING_KICK events, wakes the drainer. */
static inline __attribute__((always_inline)) void vt__post_publish(vt_ev *e, uint64_t pos)
{
    if (__builtin_expect(!vt_ring_publish(e, pos), 0))
        vt__post_lost();
    else if (__builtin_expect(((pos + 1) & (VT_RING_KICK - 1)) == 0, 0))
        vt__post_kick();
}
/* Claims the next position (*pos) and stores the event's address and op; NULL when
 * the ring is full (nothing claimed). The caller fills the rest and publishes. */
static inline __attribute__((always_inline)) vt_ev *vt__post_claim(uint64_t addr, uint8_t op,
                                                                    uint64_t *pos)
{
    vt_ev *e = vt_ring_claim(&vt__ring, pos);
    if (__builtin_expect(e != NULL, 1)) {
        e->addr = addr;
        e->op = op;
    }
    return e;
}
static inline __attribute__((always_inline)) int vt__post_alloc_try(
    uint64_t now, uint64_t addr, uint64_t size, uint64_t ctx_stream, int device, int kind,
    uint32_t stack)
{
    uint64_t pos;
    vt_ev *e = vt__post_claim(addr, VT_EV_ALLOC, &pos);
    if (__builtin_expect(!e, 0))
        return 0;
    e->size = size;
    e->ctx_stream = ctx_stream;
    e->now_ns = now;
    e->stack = stack;
    e->tid = vt_guard_tid();
    e->step = (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    e->device = device;
    e->kind = (uint8_t)kind;
    vt__post_publish(e, pos);
    return 1;
}
static inline __attribute__((always_inline)) void vt_core_post_alloc_at(
    uint64_t addr, uint64_t size, uint64_t ctx_stream, int device, int kind, uint32_t stack)
{
    struct timespec ts;   /* before the claim: nothing is kept in registers across it */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (__builtin_expect(!vt__post_alloc_try(now, addr, size, ctx_stream, device, kind, stack), 0))
        vt__post_full_alloc(now, addr, size, ctx_stream, device, kind, stack);
}
/* The same from a vt_alloc_info (its stream for VT_KIND_ASYNC, else its ctx). */
static inline __attribute__((always_inline)) void vt_core_post_alloc(const vt_alloc_info *a)
{
    vt_core_post_alloc_at(a->addr, a->size, a->kind == VT_KIND_ASYNC ? a->stream : a->ctx,
                          a->device, a->kind, a->stack);
}
/* The free counterpart, called BEFORE the real free (a concurrent allocation that
 * gets the same address is ordered after it): hands "addr is being freed" to the core.
 * Returns the free's ticket: its ring position + 1 (if the real free fails,
 * vt_core_restore with t->ticket set to it puts back what the event took); or, after
 * the ring stayed full through many attempts to make room (vt__post_full_free),
 * VT_TICKET_SYNC: a synchronous vt_core_take filled *t (t->rec as there; a miss is
 * remembered at once, vt_core_untracked_free, as a ring free does when applied).
 * *t is only written on that path. Keeps errno. Inline (every free hook). */
#define VT_TICKET_SYNC UINT64_MAX
static inline __attribute__((always_inline)) uint64_t vt__post_free_try(uint64_t addr)
{
    uint64_t pos;
    vt_ev *e = vt__post_claim(addr, VT_EV_FREE, &pos);
    if (__builtin_expect(!e, 0))
        return 0;
    vt__post_publish(e, pos);   /* lost: a failed free's restore finds no taken record */
    return pos + 1;
}
static inline __attribute__((always_inline)) uint64_t vt_core_post_free(uint64_t addr, vt_taken *t)
{
    uint64_t ticket = vt__post_free_try(addr);
    if (__builtin_expect(ticket != 0, 1))
        return ticket;
    return vt__post_full_free(addr, t);
}
/* The real free of a ring free (ticket from vt_core_post_free; 0 and VT_TICKET_SYNC
 * are ignored harmlessly) succeeded: the record its event took will never be put
 * back. Only lets the core reuse the taken-log entry at once; a free that does not
 * say so keeps its entry (taken_late) when a free one ring later needs the slot.
 * One store; any thread. */
static inline __attribute__((always_inline)) void vt_core_free_done(uint64_t ticket)
{
    __atomic_store_n(&vt__free_done[(ticket - 1) & (VT_FREE_DONE_SLOTS - 1)], ticket, __ATOMIC_RELEASE);
}
/* Sets the function the producers call every VT_RING_KICK events to have the ring
 * drained soon (the writer: vt_writer_kick_drain, which wakes its thread; it must be
 * async-signal-safe and keep errno). NULL: none (queries and full rings drain). */
void vt_core_set_drain_kick(void (*kick)(void));
/* Applies every ring event claimed so far (the writer thread, when woken every
 * VT_RING_KICK events). Takes the core lock, VT_DRAIN_CHUNK events per hold. */
void vt_core_drain(void);
/* Counts a failed allocation of kind on device; oom != 0 when it failed with
 * out-of-memory (cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY). */
void vt_core_alloc_failed(int device, int kind, int oom);
/* Removes the live record at addr (a free about to be forwarded). Returns 1 and fills
 * *t if addr was live, 0 if unknown (stale or foreign: count nothing). kind_mask
 * (bit per vt_kind, 0 = any) limits which kinds this free may release. */
int  vt_core_take(uint64_t addr, unsigned kind_mask, vt_taken *t);
/* A free whose vt_core_take found nothing (t->missed) succeeded: the address was
 * live after all — its record taken out by a concurrent free of the same pointer
 * (a double free race of the program) whose real free will fail. That free's
 * vt_core_restore must not put the record back: the memory is gone. */
void vt_core_untracked_free(uint64_t addr);
/* The real free failed: puts the taken record back with its counters undone (for a
 * ring free, t->ticket: the record its event took, kept in a log of one ring's worth
 * of positions; older is counted as dropped); not when t->alive is 0 (the driver says
 * nothing is allocated at the address any more)
 * (unless the address was handed out again meanwhile: the newer record stays; or a
 * context teardown since the take, vt_core_drop_context, would have dropped it: the
 * memory went with the context, which is why the free failed; or, when t->alive is
 * -1, another thread's free of the same address succeeded since or, for a ring free,
 * missed since, vt_core_untracked_free). */
void vt_core_restore(vt_taken *t);
/* The real free succeeded: nothing is left to do (vt_core_take already recycled the
 * record); clears *t. No lock, no call into the core. */
static inline void vt_core_commit(vt_taken *t) { t->rec = NULL; }
/* Implicit free: drops every ordinary record (device, managed, host_pinned; never
 * async pool memory or VMM) with sequence < before_seq that belongs to ctx (ctx != 0)
 * or, when ctx == 0, to device. Returns the number of records dropped. */
uint64_t vt_core_drop_context(int device, uint64_t ctx, uint64_t before_seq);
/* Sequence number the next allocation will get (for vt_core_drop_context). The
 * sequence of an allocation is its birth_ns, made strictly increasing under the core
 * lock (birth = max(CLOCK_MONOTONIC now, previous birth + 1)). */
uint64_t vt_core_next_seq(void);

/* VMM (cuMemCreate / cuMemRetainAllocationHandle / cuMemRelease / cuMemMap /
 * cuMemUnmap; CUDA driver API "Virtual Memory Management"). Physical memory is live
 * from create until every reference is released (create and each retain give one,
 * each release takes one) AND every mapping is unmapped; a cuMemMap in flight keeps
 * it live too (a release racing a map of the same handle on another thread). */
int  vt_core_vmm_create(uint64_t handle, uint64_t size, int device, uint32_t stack);
/* After a successful cuMemRetainAllocationHandle: one more reference. */
void vt_core_vmm_retain(uint64_t handle);
/* Before cuMemRetainAllocationHandle(addr): holds live the allocation mapped at addr
 * (a mapping that starts there), so that an unmap and release racing on another
 * thread do not end it before the retain is counted. 1 and *handle when held: end
 * the hold with vt_core_vmm_map_end(0, 0, *handle, 1, 0) after the retain. */
int  vt_core_vmm_hold_at(uint64_t addr, uint64_t *handle);
/* Before cuMemRelease: takes a reference (freeing the memory if it was the last and
 * nothing is mapped). Returns 1 and *t if the handle was known with a reference
 * left; the entry then stays until vt_core_vmm_commit (the real call succeeded) or
 * vt_core_vmm_restore (it failed: the reference is given back), whatever other
 * threads do to it meanwhile. */
int  vt_core_vmm_release(uint64_t handle, vt_taken *t);
void vt_core_vmm_restore(vt_taken *t);
void vt_core_vmm_commit(vt_taken *t);
/* cuMemMap: _begin before the real call (1 when the handle is known: pass it as
 * began), _end after it with ok = it succeeded. A map at an address that still has
 * a mapping (its unmap was not seen) ends that mapping first. vt_core_vmm_map is
 * _end(va, size, handle, 0, 1) alone. */
int  vt_core_vmm_map_begin(uint64_t handle);
void vt_core_vmm_map_end(uint64_t va, uint64_t size, uint64_t handle, int began, int ok);
void vt_core_vmm_map(uint64_t va, uint64_t size, uint64_t handle);
/* After a successful cuMemUnmap: ends every mapping that starts in [va, va + size)
 * (one call may span several mappings side by side); size 0: the one at va. */
void vt_core_vmm_unmap(uint64_t va, uint64_t size);

/* Driver-reported memory of device (cuMemGetInfo_v2). */
void vt_core_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes);
/* Stream-ordered pool reserved bytes of device (cuMemPoolGetAttribute RESERVED_MEM_CURRENT). */
void vt_core_set_pool_reserved(int device, uint64_t reserved);

/* ---- steps and queries (client API) ---- */

/* Marks a step (vramtrace_step). Returns the new step number (first mark -> 1). */
uint64_t vt_core_step(void);
/* Periodic snapshot of a program that never marks steps: advances the step counter
 * and returns 1 (this snapshot closes a step); returns 0 once steps are marked. */
int      vt_core_advance_unmarked_step(void);
uint64_t vt_core_live_bytes(int device);   /* device -1: all devices              */
uint64_t vt_core_peak_bytes(int device);   /* device -1: peak of the process total */
/* Highest process live bytes since the previous call (or since start), then starts a
 * new interval at the live bytes of now. Does not change vt_core_peak_bytes. Takes the
 * core lock briefly; thread-safe. */
uint64_t vt_core_peak_interval_take(void);
void     vt_core_scope_begin(void);
uint64_t vt_core_scope_leaked_bytes(void);
uint64_t vt_core_changes(void);            /* bumps on every alloc/free/drop       */
uint64_t vt_core_live_count(void);
/* The same two without applying the ring's pending events first (the periodic
 * snapshot's decisions: events still in the ring count at the next one). */
uint64_t vt_core_changes_applied(void);
uint64_t vt_core_live_count_applied(void);
uint64_t vt_core_dropped_records(void);    /* allocations not recorded (latched)   */
/* How many times a hook found the event ring full and applied the oldest events
 * itself under the core lock (vt__make_room) since the start: the program outran the
 * writer thread's draining. Any thread; no lock; does not apply pending events. */
uint64_t vt_core_ring_full_total(void);

/* ---- snapshots (writer) ---- */

typedef struct vt_kind_stats {
    uint64_t live_bytes, live_count, peak_bytes;
    uint64_t alloc_total, free_total, failed_total, alloc_bytes_total;
    uint64_t oom_total;           /* failed with out-of-memory (subset of failed_total) */
} vt_kind_stats;

typedef struct vt_dev_stats {
    int           device;
    int           meminfo_known, pool_known;
    uint64_t      free_bytes, total_bytes;
    uint64_t      live_bytes, peak_bytes;
    uint64_t      pool_reserved_bytes, pool_used_bytes;
    double        fragmentation;           /* < 0: not computed                    */
    vt_kind_stats kinds[VT_KIND_COUNT];
} vt_dev_stats;

typedef struct vt_site_row {
    uint32_t id;                           /* the site's id: 1, 2, ... per process, never reused */
    uint32_t stack;
    int      kind, device;
    uint64_t live_bytes, live_count, interval_peak_bytes;
    uint64_t alloc_total, alloc_bytes_total, free_total;
    uint32_t growth_steps;
    uint64_t growth_bytes;
    int      leak_warn;                    /* at/above the leak threshold          */
    int      leak_new;                     /* crossed it in this collection        */
} vt_site_row;

typedef struct vt_alloc_row {              /* docs/snapshot-format.md "allocations" */
    uint64_t addr, size;
    int      kind, device;
    uint32_t stack;
    uint64_t step, birth_ns;
    int      tid;
    uint64_t stream;
} vt_alloc_row;

enum {
    VT_COLLECT_STEP   = 1,  /* this snapshot ends a step: run the leak detector     */
    VT_COLLECT_ALLOCS = 2,  /* copy every live allocation                          */
    VT_COLLECT_FRAG   = 4,  /* compute fragmentation per device                    */
    VT_COLLECT_APPLIED = 8, /* the state as applied so far: do not apply the ring's
                               pending events first (periodic snapshots: the writer
                               applies them as they come, every VT_RING_KICK)      */
};

typedef struct vt_collect {
    uint64_t      step;
    int           step_marked;
    uint64_t      changes;
    uint64_t      dropped_records;
    int           n_devs;
    vt_dev_stats  devs[VT_DEV_SLOTS];      /* devices with any activity            */
    vt_site_row  *sites;    size_t n_sites;   /* owned; vt_collect_free            */
    vt_alloc_row *allocs;   size_t n_allocs;  /* owned; only with VT_COLLECT_ALLOCS */
    int           rows_failed;             /* rows wanted but no memory for them:
                                              allocs NULL, fragmentation not computed */
    uint64_t      lock_hold_max_ns;        /* longest single hold of the core lock
                                              during this collection (ns)           */
    uint64_t      lock_holds;              /* how many times it took the lock       */
    int           frag_from_journal;       /* fragmentation came from the kept set
                                              and the journal (no copy of the live
                                              list; vt_frag.h)                      */
} vt_collect;

/* Copies the state for one snapshot (flags: VT_COLLECT_*), resets each site's
 * interval peak, and on VT_COLLECT_STEP advances the leak detector with leak
 * threshold leak_steps. Sites listed: live > 0 or changed since the previous
 * collection.
 *
 * Ring: unless VT_COLLECT_APPLIED, the first hold applies every event the hooks
 * claimed before the call (vt_ring.h), so the copy includes every allocation and free
 * that returned before it; the later holds apply none (the rows are the state as of
 * the first hold, plus whatever producers that found the ring full applied meanwhile).
 *
 * Consistency: the step, counters, per device x kind totals and site rows are copied
 * in ONE hold of the core lock (one instant; about 11 ns per site). Allocation rows
 * (VT_COLLECT_ALLOCS) are copied afterwards, several record slabs per hold (a hold
 * ends once it has lasted 0.25 ms), with the lock released between holds, so no hook
 * waits for the whole live list; VT_COLLECT_FRAG without VT_COLLECT_ALLOCS takes the
 * fragmentation journal in the first hold and merges it into the kept sorted ranges
 * (vt_frag.h; c->frag_from_journal = 1: the ranges as of that hold), or, with no kept
 * set (the first such collection, an overflowed journal, another collector using the
 * set), copies the same way only (start, size, device) of each allocation and loads
 * the set from them. Each row
 * or range is one allocation's state at one instant; an allocation live during the
 * whole collection is listed exactly once; one allocated or freed while the rows are
 * copied may or may not be listed (the rows can then
 * differ from the totals by those allocations). c->lock_hold_max_ns reports the
 * longest hold. Returns 0, or -1 (no memory for the site copy: *c is empty). When
 * only the rows (or ranges) cannot get memory it returns 0 with c->rows_failed = 1
 * (fragmentation then not computed: < 0). */
int  vt_core_collect(vt_collect *c, unsigned flags, int leak_steps);
void vt_collect_free(vt_collect *c);

/* Background upkeep of the kept fragmentation set (vt_frag.h), for the writer thread
 * after each drain: when the journal of ranges that came and went since the set was
 * last brought up to date holds an eighth of the live count (plus 8,192) or more,
 * takes it (one short hold of the core lock) and merges it into the set without the
 * lock, so that the next periodic collection merges only what changed since. Does
 * nothing while a collection holds the set, or when there is no set (it is made by
 * the first collection with VT_COLLECT_FRAG and dropped by one without). Memory
 * failure: the set is dropped (the next collection copies the live list again).
 * Thread-safe; never blocks on anything but the core lock. */
void vt_core_frag_keep(void);

/* Fragmentation of a set of [addr, addr+size) ranges: 1 - largest gap / sum of gaps
 * between consecutive ranges (sorted by address); 0 with fewer than two gaps' worth
 * (no gap). Sorts rows in place. Exposed for unit tests. */
double vt_fragmentation(uint64_t (*ranges)[2], size_t n);

/* The calling thread's waits for the core lock since its previous call with
 * reset != 0, or since the thread started: how many times it found the lock held,
 * how many of those waits took over 1 ms, the longest and their total (ns; a wait is
 * the time from finding the lock held to holding it, so one that the scheduler
 * stretched counts whole). What a hook waits on a snapshot or the writer (issue 7
 * figure 5); a hook takes the lock only when the event ring is full or for a VMM
 * call. Per thread; no lock; timed on the contended path only. */
typedef struct vt_lock_waits {
    uint64_t n;
    uint64_t over_1ms;
    uint64_t max_ns;
    uint64_t sum_ns;
} vt_lock_waits;
void vt_core_lock_waits(vt_lock_waits *out, int reset);

/* Monotonic clock in ns. */
uint64_t vt_now_ns(void);

#endif /* VT_CORE_H */
