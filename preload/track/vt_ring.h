/* vt_ring.h — the event ring: allocations and frees that the hooks hand to the core
 * without taking its lock.
 *
 * Design: a bounded multi-producer, single-consumer queue in ONE global order (the
 * producer side of D. Vyukov's bounded MPMC queue, 1024cores.net, "Bounded MPMC
 * queue"). A producer claims position p with one compare-and-swap on `head`, fills
 * slot p % VT_RING_SLOTS and publishes it; the consumer — whoever holds the core lock
 * (vt_table.c) — applies events strictly in position order. Positions are a total
 * order of the program's allocations and frees: a free's event is claimed BEFORE its
 * real free and an allocation's AFTER its real allocation, so a reused address is
 * always freed before it is allocated again in ring order.
 *
 * Slot turn (one word per slot; vt_ring_init sets slot i's to i): for position p,
 *   p                      the slot is free for p's producer,
 *   p + 1                  p's event is published (the consumer may apply it),
 *   p + VT_RING_SLOTS      applied (= free for the next round's position).
 * A producer that finds its slot still holding an older round's event (turn < p)
 * claims nothing: the ring is full, and the caller makes room (applies the oldest
 * events itself) instead of waiting. Publishing is a compare-and-swap from p to p + 1
 * so that the consumer can give up on a slot whose producer never publishes (a thread
 * that died between claim and publish): it moves the turn from p to
 * p + VT_RING_SLOTS and the late producer's publish then fails (the event is counted
 * as dropped).
 *
 * Between claim and publish a producer only stores the event's fields: no call, no
 * lock, no system call. A consumer that meets a claimed but unpublished slot waits
 * (spin, then sched_yield) a bounded time for it.
 *
 * Memory: VT_RING_SLOTS * 64 bytes (1 MiB), static; resident once vt_ring_init has
 * numbered the slots (at the core's start). Thread safety: producers on any thread;
 * the consumer functions only under the core lock. Fork: vt_ring_discard in the
 * child (one thread) marks every slot from tail to head applied.
 */
#ifndef VT_RING_H
#define VT_RING_H

#include <stdint.h>

#define VT_RING_SLOTS 16384ull         /* power of two                              */
#define VT_RING_KICK  4096u            /* producers wake the drainer every this many */

enum { VT_EV_ALLOC = 1, VT_EV_FREE = 2 };

/* One event: 64 bytes, one cache line (producers on different threads never share
 * a line). ALLOC: a successful allocation as the hook saw it (vt_alloc_info) with its
 * time, thread and step. FREE: a free about to be forwarded (addr). */
typedef struct vt_ev {
    uint64_t turn;          /* see the header comment (atomic)                     */
    uint64_t addr;
    uint64_t size;          /* ALLOC: bytes                                         */
    uint64_t ctx_stream;    /* ALLOC: the CUstream of a stream-ordered allocation,
                               else the CUcontext current at the call (the record's
                               column)                                              */
    uint64_t now_ns;        /* ALLOC: the hook's stamp (vt_clock_stamp: TSC ticks or
                               CLOCK_MONOTONIC ns; the core converts it); FREE: the
                               same when vt__clock_stamp_frees, else 0              */
    uint32_t stack;         /* ALLOC: stack id                                      */
    int32_t  tid;           /* ALLOC: thread (gettid)                               */
    uint32_t step;          /* ALLOC: the core's step when the hook ran            */
    int32_t  device;        /* ALLOC: CUDA ordinal or -1                            */
    uint8_t  op;            /* VT_EV_*                                              */
    uint8_t  kind;          /* ALLOC: vt_kind                                       */
} __attribute__((aligned(64))) vt_ev;

typedef struct vt_ring {
    vt_ev    ev[VT_RING_SLOTS];                   /* first: a slot's address is one
                                                     shift and add from the ring's   */
    uint64_t head __attribute__((aligned(64)));   /* next position to claim (atomic)  */
    uint64_t tail __attribute__((aligned(64)));   /* next position to apply: written
                                                     under the core lock, read atomic */
    int      inited;                              /* vt_ring_init done (atomic)       */
} vt_ring;

/* Numbers the slots (slot i free for position i) on first use; idempotent. Call
 * before any producer (the core does, at vt_core_init) and under the consumer's lock;
 * a producer that finds a slot not numbered sees the ring full. */
static inline void vt_ring_init(vt_ring *r)
{
    if (__atomic_load_n(&r->inited, __ATOMIC_ACQUIRE))
        return;
    for (uint64_t i = 1; i < VT_RING_SLOTS; i++)
        __atomic_store_n(&r->ev[i].turn, i, __ATOMIC_RELAXED);
    __atomic_store_n(&r->inited, 1, __ATOMIC_RELEASE);
}

/* Claims the next position: returns its slot and *pos, or NULL when the ring is full
 * (nothing claimed). Lock-free; any thread. */
static inline __attribute__((always_inline)) vt_ev *vt_ring_claim(vt_ring *r, uint64_t *pos)
{
    uint64_t p = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    for (;;) {
        vt_ev *e = &r->ev[p & (VT_RING_SLOTS - 1)];
        uint64_t turn = __atomic_load_n(&e->turn, __ATOMIC_ACQUIRE);
        if (turn == p) {
            if (__atomic_compare_exchange_n(&r->head, &p, p + 1, 1, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                *pos = p;
                return e;
            }
        } else if (turn < p) {
            return NULL;          /* an older round's event is still there: full     */
        } else {
            p = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
        }
    }
}

/* Publishes the event claimed at pos (fields stored). Returns 1, or 0 when the
 * consumer gave up on the slot meanwhile (the event is lost; count it). */
static inline __attribute__((always_inline)) int vt_ring_publish(vt_ev *e, uint64_t pos)
{
    uint64_t want = pos;
    return __atomic_compare_exchange_n(&e->turn, &want, pos + 1, 0, __ATOMIC_RELEASE,
                                       __ATOMIC_RELAXED);
}

/* 1 when some claimed position is not applied yet (any thread; a hint). */
static inline int vt_ring_pending(const vt_ring *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) !=
           __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

/* Consumer (under the core lock): the event at position tail when it is published,
 * else NULL (empty, or claimed and not published yet: *claimed = 1). */
static inline vt_ev *vt_ring_peek(vt_ring *r, int *claimed)
{
    uint64_t t = r->tail;
    *claimed = 0;
    if (t == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE))
        return NULL;
    vt_ev *e = &r->ev[t & (VT_RING_SLOTS - 1)];
    if (__atomic_load_n(&e->turn, __ATOMIC_ACQUIRE) == t + 1)
        return e;
    *claimed = 1;
    return NULL;
}

/* Consumer: the event at tail (from vt_ring_peek) is applied; frees its slot. */
static inline void vt_ring_done(vt_ring *r, vt_ev *e)
{
    uint64_t t = r->tail;
    __atomic_store_n(&e->turn, t + VT_RING_SLOTS, __ATOMIC_RELEASE);
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
}

/* Consumer: gives up on the claimed, unpublished slot at tail. Returns 1 when it was
 * skipped (its producer's publish will fail), 0 when it got published meanwhile
 * (peek again). */
static inline int vt_ring_skip(vt_ring *r)
{
    uint64_t t = r->tail;
    vt_ev *e = &r->ev[t & (VT_RING_SLOTS - 1)];
    uint64_t want = t;
    if (!__atomic_compare_exchange_n(&e->turn, &want, t + VT_RING_SLOTS, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
    return 1;
}

/* Fork child, one thread: every event from tail to head is the parent's; marks each
 * slot applied without applying it (published or not). */
static inline void vt_ring_discard(vt_ring *r)
{
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    for (uint64_t t = r->tail; t != h; t++)
        __atomic_store_n(&r->ev[t & (VT_RING_SLOTS - 1)].turn, t + VT_RING_SLOTS,
                         __ATOMIC_RELAXED);
    __atomic_store_n(&r->tail, h, __ATOMIC_RELAXED);
}

#endif /* VT_RING_H */
