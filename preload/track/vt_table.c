/* vt_table.c — the allocation table: records, slabs, the address index, device x kind
 * and process totals, the ring drain that applies the hooks' events, the taken log
 * for failed frees, and context drops (contracts: vt_core.h, vt_core_fast.h).
 *
 * Records: one vt_rec (48 bytes) per live allocation, found by address through
 * vt__core.idx (vt_index.h). Records come from slabs of VT_SLAB with a free list of
 * ids, so a record costs no malloc header, never moves, and applying an allocation
 * rarely calls malloc; a record's id is slab number * VT_SLAB + index. A record
 * points at its site (vt_sites.c), so a free does no site lookup.
 *
 * Totals: per device slot x kind, live bytes and peak are kept as events are
 * applied; the count and total columns are sums of the sites', added up at
 * collection. Device and process live/peak, scope bytes, live count and the change
 * counter are stored with __atomic stores under the lock for the lock-free queries.
 *
 * The ring: the hooks do not take the lock. They post each allocation, and each free
 * before its real free, as an event in the ring (vt_core_fast.h), in one global
 * order. Whoever next takes the lock applies the events in that order first
 * (vt__lock -> vt__drain_all_locked, VT_DRAIN_CHUNK events per hold): every query and
 * snapshot, the writer thread (woken every VT_RING_KICK events), a synchronous call,
 * or a producer whose ring is full (vt__make_room). Applying an allocation finds its
 * site, takes a record, indexes it and counts it; applying a free finds, removes,
 * counts and recycles, and keeps a copy in the taken log (VT_TAKEN_LOG) so that a
 * failed real free can put it back (vt_core_restore with t->ticket). The synchronous
 * entry points (vt_core_alloc, vt_core_take, vt_core_restore) apply the ring first.
 *
 * Every change to the live list is also noted in the fragmentation journal
 * (vt__fj_note, vt_collect.c). A rise to a new peak of a device's or the process's
 * live bytes is handed to vt_peak.c (vt__peak_check), which may copy what is live.
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"
#include "vt_clock.h"
#include "vt_config.h"
#include "vt_log.h"
#include "vt_trace.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int vt__hash_oom;

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

/* What the ring's frees took, for a failed real free (under the core lock; outside
 * vt__core, whose initialiser puts it in .data, so that these zeroes stay in .bss):
 * taken_log by ticket % VT_TAKEN_LOG (site NULL: nothing); taken_late the entries a
 * newer event needed the slot of while their real free had not reported success
 * (failed, or still running), by n_late % VT_TAKEN_LATE, the oldest overwritten. */
static vt_taken_entry vt__taken_log[VT_TAKEN_LOG];
static vt_taken_entry vt__taken_late[VT_TAKEN_LATE];
static uint32_t vt__n_late;

void vt__table_after_fork(void)
{
    memset(vt__taken_log, 0, sizeof vt__taken_log);
    memset(vt__taken_late, 0, sizeof vt__taken_late);
    vt__n_late = 0;
}

/* The hooks' events (vt_ring.h), applied in ring order by whoever holds the lock. */
vt_ring vt__ring;
uint64_t vt__free_done[VT_FREE_DONE_SLOTS];   /* vt_core_free_done (vt_core_fast.h) */

/* ---- helpers under lock ---- */

void vt__oom_latch(void)
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
uint64_t vt__next_birth(uint64_t now)
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

/* Process-wide part of accounting: device and process live/peak, interval peak,
 * scope bytes, live count, change counter. delta is +size or -size. */
static inline void vt__acct_process(int slot, uint64_t size, uint64_t seq, int add, uint32_t step)
{
    uint64_t dl = add ? vt__core.dev_live[slot] + size : vt__core.dev_live[slot] - size;
    uint64_t tl = add ? vt__core.live_total + size : vt__core.live_total - size;
    __atomic_store_n(&vt__core.dev_live[slot], dl, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__core.live_total, tl, __ATOMIC_RELAXED);
    if (add) {
        /* a new peak: what is live now may be copied (vt_peak.c; seq is the
         * allocation's time) */
        if (dl > vt__core.dev_peak[slot]) {
            __atomic_store_n(&vt__core.dev_peak[slot], dl, __ATOMIC_RELAXED);
            vt__peak_check(slot, dl, seq, step);
        }
        if (tl > vt__core.peak_total) {
            __atomic_store_n(&vt__core.peak_total, tl, __ATOMIC_RELAXED);
            vt__peak_check(VT_DEV_SLOTS, tl, seq, step);
        }
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

/* The bytes of site s's size-byte record that count in the device's and the
 * process's totals: none of an ipc_import (another process owns that memory) or a
 * region (inside a heap allocation counted already): those count in their kind and
 * site only (vt_kind_in_totals). */
static inline uint64_t vt__own_bytes(const vt_site *s, uint64_t size)
{
    return vt_kind_in_totals(s->kind) ? size : 0;
}

/* Accounts size bytes becoming live at site s. restore: the bytes come back after a
 * failed free (undo the free counter instead of counting a new allocation). The
 * per device x kind count/total columns are sums of the sites' (vt_core_collect). */
static inline __attribute__((always_inline)) void vt__acct_add_inl(vt_site *s, uint64_t size,
                                                                    uint64_t seq, int restore,
                                                                    uint32_t step)
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
    vt__acct_process(s->slot, vt__own_bytes(s, size), seq, 1, step);
}

/* Out of line for the cold callers (restore, context drops, VMM); applying an event
 * inlines the _inl forms. */
__attribute__((noinline)) void vt__acct_add(vt_site *s, uint64_t size, uint64_t seq, int restore)
{
    vt__acct_add_inl(s, size, seq, restore,
                     (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED));
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
    vt__acct_process(s->slot, vt__own_bytes(s, size), seq, 0, 0);
}

__attribute__((noinline)) void vt__acct_sub(vt_site *s, uint64_t size, uint64_t seq)
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
    int kind = VT_KIND_OF(a->kind) < VT_KIND_COUNT && a->kind >= 0 ? VT_KIND_OF(a->kind)
                                                                   : VT_KIND_DEVICE;
    vt_site *s = vt__site_get(a->stack, VT_KIND_PACK(kind, VT_FLAGS_OF(a->kind)), a->device);
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
        if (vt__config.trace)
            vt__trace_note(VT_TRACE_FREE, now, o->addr, o->size, o->ctx_stream, o->site->device,
                           o->site->kind, o->site->stack);
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
    vt__acct_add_inl(s, r->size, r->birth_ns, 0, step);
    vt__fj_note(r->addr, r->size, kind, s->slot, 0);
    if (vt__config.trace)
        vt__trace_note(VT_TRACE_ALLOC, now, r->addr, r->size, r->ctx_stream, s->device, kind, s->stack);
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
 * site), or sets t->missed when there is none. kind_mask as vt_core_take. now: the
 * free's time (CLOCK_MONOTONIC ns) for the event trace, 0 = now. */
static inline __attribute__((always_inline)) void vt__apply_take(uint64_t addr, unsigned kind_mask,
                                                                  vt_taken *t, uint64_t now)
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
        if (vt__config.trace)
            vt__trace_note(VT_TRACE_FREE, now ? now : vt_now_ns(), r->addr, r->size, r->ctx_stream,
                           s->device, s->kind, s->stack);
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
        if (vt__apply_alloc(&a, vt_clock_ns(e->now_ns), e->tid, e->step) < 0)
            __atomic_add_fetch(&vt__core.dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    /* VT_EV_FREE: what it takes is kept in the taken log for a failed real free */
    l->ticket = pos + 1;
    if (!vt_core_enabled())
        return;
    vt_taken t = {NULL};
    vt__apply_take(e->addr, 0, &t, e->now_ns ? vt_clock_ns(e->now_ns) : 0);
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
/* The drain target (ring position) of the latest calibration point (under the lock). */
static uint64_t vt__calibrated_for;

/* noinline: one function applies every event (bench/vt_bench.py counts it) */
static __attribute__((noinline)) int vt__drain_locked(uint64_t target, unsigned budget)
{
    unsigned spins = 0;
    uint64_t since = 0;
    int calibrated = 0;
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
        if (!calibrated) {   /* the stamps of what is applied now lie just before this */
            /* once per target: the next chunks of one drain were stamped before the
             * point its first chunk took (a point between them would leave them
             * outside the conversion's latest segment) */
            if (target != vt__calibrated_for) {
                vt_clock_calibrate();
                vt__calibrated_for = target;
            }
            calibrated = 1;
        }
        vt__apply_event(e, pos);
        vt_ring_done(&vt__ring, e);
    }
    return 0;
}

void vt__drain_all_locked(void)
{
    uint64_t target = __atomic_load_n(&vt__ring.head, __ATOMIC_ACQUIRE);
    while (vt__drain_locked(target, VT_DRAIN_CHUNK)) {
        vt__unlock();
        vt__yield_to_waiters();   /* a snapshot or a query waiting goes first */
        vt__lock_raw();
    }
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
 * (what bounds a waiting producer's stall), then the producer claims again. */
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
    kind = kind < 0 ? -1 : VT_KIND_OF(kind);
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
    vt__apply_take(addr, kind_mask, t, 0);
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
    if (vt__config.trace)   /* the free the trace holds did not happen: alive again */
        vt__trace_note(VT_TRACE_ALLOC, vt_now_ns(), r->addr, r->size, r->ctx_stream, s->device, s->kind,
                       s->stack);
}

/* Takes the lock and applies the ring up to a ring free's own event (claimed before
 * the real free), not beyond (later frees must not push its entry out of the log
 * first); returns its taken-log entry, or NULL when no longer kept. The caller
 * unlocks. */
static vt_taken_entry *vt__taken_find_locked(uint64_t ticket)
{
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
    return l;
}

int vt_core_taken_kind(const vt_taken *t)
{
    int kind = -1;
    if (t->ticket) {
        vt_taken_entry *l = vt__taken_find_locked(t->ticket);
        if (l && l->site)
            kind = l->site->kind;
        vt__unlock();
    } else if (t->rec) {
        kind = ((const vt_site *)t->rec)->kind;   /* the site, set by the take */
    }
    return kind;
}

void vt_core_restore(vt_taken *t)
{
    if (t->ticket) {   /* a ring free: what its event took is in the taken log */
        uint64_t ticket = t->ticket;
        t->ticket = 0;
        vt_taken_entry *l = vt__taken_find_locked(ticket);
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


vt_site *vt__site_of_live(uint64_t addr)
{
    uint32_t slot, id = vt__rec_find(addr, &slot);
    return id == VT_NO_ID ? NULL : vt__rec_at(id)->site;
}

int vt_core_live_kind(uint64_t addr)
{
    if (vt__no_lock_here())
        return -2;
    vt__lock();
    uint32_t slot, id = vt__rec_find(addr, &slot);
    int kind = id == VT_NO_ID || !vt__rec_at(id)->site ? -1 : vt__rec_at(id)->site->kind;
    vt__unlock();
    return kind;
}
