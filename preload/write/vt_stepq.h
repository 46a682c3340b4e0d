/* vt_stepq.h — the step queue: snapshots collected on the thread that marks a step
 * (vramtrace_step), waiting for the writer thread to encode and write them.
 *
 * A bounded FIFO of at most VT_STEPQ_MAX collected snapshots (vt_pending). The thread
 * that marks a step reserves a slot first (vt_stepq_reserve: waits while the queue is
 * full), then collects under the writer's collection lock and fills the slot in the
 * same hold (vt_stepq_push), so the queue's order is the order of collection. Whoever
 * holds the writer's output lock pops from the head (vt_stepq_pop) and writes: the
 * writer thread, or a thread that writes a snapshot of its own (manual, OOM, exit)
 * and first writes the steps collected before it.
 *
 * Full queue: the thread marking a step waits for the writer to take one (every step
 * stays a point of the step curve, never merged), until the queue is closed. Closed
 * (no writer thread: it failed to start, left its loop, the process is exiting, a
 * fork child): vt_stepq_reserve returns 0 at once and wakes every waiter, and the
 * caller writes its step itself. The wait takes no lock of the writer's: the writer
 * thread never waits for a thread that marks steps, so the wait ends.
 *
 * Ownership: a pushed vt_pending is the queue's until popped, then the popper's
 * (vt_pending_free). Thread safety: every function is thread-safe (one mutex of its
 * own, a leaf: taken under the writer's locks, never the other way round); not
 * async-signal-safe.
 */
#ifndef VT_STEPQ_H
#define VT_STEPQ_H

#include <stddef.h>

#include "vt_annot.h"    /* vt_annot_entry */
#include "vt_buf.h"
#include "vt_core.h"     /* vt_collect */
#include "vt_format.h"   /* vt_trigger */

#define VT_STEPQ_MAX 8   /* collected snapshots waiting at most (~45 KiB each, plus rows) */

/* One collected snapshot: what the record says, taken at one instant. */
typedef struct vt_pending {
    vt_trigger trigger;
    uint64_t   time_ns;  /* CLOCK_MONOTONIC ns at the collection: the record's time_ns */
    vt_collect c;        /* the core's copy (owned)                                     */
    vt_buf     extra;    /* the record's members read at collection besides the core's:
                            the IPC rows, already encoded (owned)                       */
    vt_annot_entry *annot; /* the gauges at the collection, nannot of them (malloc'ed, owned;
                              formatted when written)                                    */
    int        nannot;
} vt_pending;

/* Frees p's arrays and buffer, then p itself when it was malloc'ed (heap != 0). */
void vt_pending_free(vt_pending *p, int heap);

/* Reserves a slot, waiting while VT_STEPQ_MAX slots are filled or reserved. Returns 1
 * (pair with vt_stepq_push), or 0 when the queue is closed (nothing reserved). */
int  vt_stepq_reserve(void);
/* Fills the slot this thread reserved with p (malloc'ed; the queue owns it), or gives
 * the slot back when p is NULL. Called under the writer's collection lock. */
void vt_stepq_push(vt_pending *p);
/* The oldest pushed snapshot (the caller owns it), or NULL when none. Wakes a thread
 * waiting for a slot. Called under the writer's output lock. */
vt_pending *vt_stepq_pop(void);
/* How many are pushed and not popped. */
size_t vt_stepq_count(void);
/* Called by the popper once a popped snapshot is written (or dropped). */
void vt_stepq_written(void);
/* How many were pushed and are not written yet (popped ones being written included).
 * Lock-free: async-signal-safe. */
int  vt_stepq_unwritten(void);
/* 1 while the queue is open. Lock-free: async-signal-safe. */
int  vt_stepq_is_open(void);

/* Opens the queue (the writer thread runs) or closes it (open == 0): closing wakes
 * every thread waiting for a slot; what is queued stays queued. */
void vt_stepq_set_open(int open);

/* For tests and the benchmarks: pushed and not popped, and threads waiting for a slot
 * now. */
void vt_stepq_stats(size_t *queued, int *waiting);

/* Fork steps (the writer's, after its own locks): prepare takes the queue's mutex,
 * parent releases it; the child re-initialises it and frees what is queued (the
 * parent's records; the child starts with none, closed). */
void vt_stepq_fork_prepare(void);
void vt_stepq_fork_parent(void);
void vt_stepq_fork_child(void);

#endif /* VT_STEPQ_H */
