/* vt_core_fast.h — the hooks' fast path into the core: inline producers that hand an
 * allocation or a free to the core through the event ring (vt_ring.h) without taking
 * the core lock. Included by the hook shims (preload/interpose/vt_hooks.h) and the
 * unit tests and benchmarks that drive that path; not by the writer.
 *
 * The core applies the events, in the one ring order of every hook's events, the
 * next time anyone takes its lock (a snapshot, a query, the writer thread's drain, a
 * synchronous call). Every query and collection first applies what was claimed before
 * it, so a caller never sees a state older than its own calls.
 *
 * Every function here: any thread, lock-free, no system call but clock_gettime
 * (vDSO; none where events are stamped from the TSC, vt_clock.h), keeps errno. The caller has checked vt_core_hooks_record (the core checks
 * vt_core_enabled again when it applies the event).
 */
#ifndef VT_CORE_FAST_H
#define VT_CORE_FAST_H

#include <stdint.h>
#include "vt_clock.h"
#include "vt_core.h"
#include "vt_guard.h"
#include "vt_ring.h"

/* vt__core_state bit: the preload finished initialising (vt_core_hooks_ready). */
#define VT_CORE_HOOKS_READY 2
/* 1 when hooks record: the preload is initialised and tracking is on. One relaxed
 * load and compare (every hooked call asks). */
static inline int vt_core_hooks_record(void)
{
    return __atomic_load_n(&vt__core_state, __ATOMIC_RELAXED) == VT_CORE_HOOKS_READY;
}

/* The core's state the producers touch (defined in preload/track/; nothing outside
 * the core writes them). */
extern vt_ring  vt__ring;                /* the event ring                          */
extern uint64_t vt__core_step;           /* the step counter (atomic)               */
#define VT_FREE_DONE_SLOTS (2 * VT_RING_SLOTS)
extern uint64_t vt__free_done[VT_FREE_DONE_SLOTS];   /* by ticket - 1 (vt_core_free_done) */

/* Out-of-line parts of the producers (vt_table.c). _full_alloc / _full_free: the ring
 * is full: apply its VT_ROOM_CHUNK oldest events (one short hold of the core lock)
 * and claim again; after VT_ROOM_TRIES rounds without room, record synchronously
 * (vt_core_alloc / vt_core_take). _lost: the drainer gave up the event's slot (counted
 * as dropped). _kick: calls the drain kick (vt_core_set_drain_kick). errno kept. */
void vt__post_full_alloc(uint64_t now, uint64_t addr, uint64_t size, uint64_t ctx_stream,
                         int device, int kind, uint32_t stack);
uint64_t vt__post_full_free(uint64_t addr, vt_taken *t);
void vt__post_lost(void);
void vt__post_kick(void);

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

/* One try of vt_core_post_alloc_at stamped now (vt_clock_stamp): 1 posted, 0 the ring
 * is full. */
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

/* After a successful allocation: hands it to the core (addr, size bytes of kind on
 * device, stack id; ctx_stream: the CUstream of a stream-ordered allocation, else the
 * CUcontext current at the call). When the ring is full it makes room itself
 * (vt__post_full_alloc). Every VT_RING_KICK events it calls the drain kick. */
static inline __attribute__((always_inline)) void vt_core_post_alloc_at(
    uint64_t addr, uint64_t size, uint64_t ctx_stream, int device, int kind, uint32_t stack)
{
    uint64_t now = vt_clock_stamp();   /* before the claim: no call between claim and publish */
    if (__builtin_expect(!vt__post_alloc_try(now, addr, size, ctx_stream, device, kind, stack), 0))
        vt__post_full_alloc(now, addr, size, ctx_stream, device, kind, stack);
}

/* vt_core_post_free's result when the ring stayed full: the free was taken
 * synchronously into *t (vt_core_take). */
#define VT_TICKET_SYNC UINT64_MAX

/* One try of vt_core_post_free: its ticket, or 0 when the ring is full. */
static inline __attribute__((always_inline)) uint64_t vt__post_free_try(uint64_t addr)
{
    uint64_t pos;
    /* stamped only when the trace wants each free's time (vt_clock.h) */
    uint64_t now = __builtin_expect(__atomic_load_n(&vt__clock_stamp_frees, __ATOMIC_RELAXED), 0)
                       ? vt_clock_stamp() : 0;
    vt_ev *e = vt__post_claim(addr, VT_EV_FREE, &pos);
    if (__builtin_expect(!e, 0))
        return 0;
    e->now_ns = now;
    vt__post_publish(e, pos);   /* lost: a failed free's restore finds no taken record */
    return pos + 1;
}

/* BEFORE the real free (a concurrent allocation that gets the same address is ordered
 * after it): hands "addr is being freed" to the core. Returns the free's ticket, its
 * ring position + 1: if the real free fails, vt_core_restore with t->ticket set to it
 * puts back what the event took; if it succeeds, vt_core_free_done(ticket). When the
 * ring stayed full through VT_ROOM_TRIES rounds of making room: VT_TICKET_SYNC, and
 * a synchronous vt_core_take filled *t (a miss is remembered at once,
 * vt_core_untracked_free, as a ring free does when applied); *t is written only then. */
static inline __attribute__((always_inline)) uint64_t vt_core_post_free(uint64_t addr, vt_taken *t)
{
    uint64_t ticket = vt__post_free_try(addr);
    if (__builtin_expect(ticket != 0, 1))
        return ticket;
    return vt__post_full_free(addr, t);
}

/* The real free of a ring free succeeded (ticket from vt_core_post_free; 0 and
 * VT_TICKET_SYNC are ignored harmlessly): the record its event took will never be put back, so the core may
 * reuse its taken-log entry at once (without this call the entry is kept aside,
 * taken_late, when the slot is needed). One release store. */
static inline __attribute__((always_inline)) void vt_core_free_done(uint64_t ticket)
{
    __atomic_store_n(&vt__free_done[(ticket - 1) & (VT_FREE_DONE_SLOTS - 1)], ticket, __ATOMIC_RELEASE);
}

/* The real free after a synchronous vt_core_take succeeded: nothing is left to do
 * (the take already recycled the record); clears t->rec. No lock. */
static inline void vt_core_commit(vt_taken *t) { t->rec = NULL; }

#endif /* VT_CORE_FAST_H */
