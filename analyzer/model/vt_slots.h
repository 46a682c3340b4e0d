/* vt_slots.h — step slots: what keeps a process's per-step series bounded.
 *
 * A process keeps at most vt_slot_limit() step slots: vt_process.steps,
 * step_total, step_time and every site's vt_point series are indexed by slot,
 * not by step. A slot covers slot_width consecutive folded steps (every slot but
 * the last exactly that many, the last up to that many); its step number is the
 * first step it covers. When a new step needs a slot and the limit is reached,
 * adjacent pairs of slots are merged (vt_slots_coarsen) and the width doubles, so
 * between limit/2 and limit slots remain. A site's values in a slot: live = the
 * minimum over the slot's steps (the floor, so a suffix minimum over slots is the
 * exact floor at each slot's first step), peak = the maximum, nfree = the frees
 * summed plus, once slots hold several steps, one for each give-back of its steps
 * (a step whose peak is above its live bytes, or whose live bytes are below the
 * step before's, that one in the slot before or not), saturating at UINT32_MAX;
 * so a slot's peak above its live bytes is no give-back (growth inside the slot
 * has it too), and a slot gave memory back when its nfree is not 0
 * (vt_series.h, vt_series.bucketed). The process's total live bytes and time of a slot
 * are those of the slot's last step (so the last step's are exact), and
 * vt_process.total_max is the largest total of any step. Width 1 (a run that
 * never reached the limit) is the unbucketed series: a slot is a step.
 * Single-threaded; the caller owns p.
 */
#ifndef VT_SLOTS_H
#define VT_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "vt_model.h"

/* Slots kept per process unless VT_SLOTS_ENV says otherwise. */
#define VT_SLOTS_DEFAULT 2048
/* Environment variable overriding the limit (tests force coarsening with it): a
 * number >= 4, rounded down to an even one; anything else is ignored. */
#define VT_SLOTS_ENV "VRAMTRACE_ANALYZER_SLOTS"

/* The slot limit in force (VT_SLOTS_ENV or VT_SLOTS_DEFAULT): even, >= 4. */
size_t vt_slot_limit(void);

/* Steps folded into slot i of p (i < p->nsteps). */
uint64_t vt_slot_steps(const vt_process *p, size_t i);

/* Index of the first slot of p whose steps all come after the first nsteps steps
 * folded, rounded up: the fewest leading slots that hold at least nsteps steps
 * (p->nsteps when the slots hold fewer). Identity when p->slot_width is 1. */
size_t vt_slots_for_steps(const vt_process *p, uint64_t nsteps);

/* The steps p's run had, as reports count them: the steps folded, each point of a
 * size cap's summary (vt_process.has_summary) counted as the steps it stands for
 * (its records, at most the span of its step numbers). */
uint64_t vt_process_steps(const vt_process *p);

/* Steps folded into the slots before slot i (i <= p->nsteps). */
uint64_t vt_steps_before_slot(const vt_process *p, size_t i);

/* Merges adjacent pairs of p's slots (the last one alone when their number is
 * odd): the slot arrays and every site's series; doubles p->slot_width. Not while
 * a step is open (the fold calls it between steps, when every slot is full). */
void vt_slots_coarsen(vt_process *p);

/* The series points of a run set together stay under a budget: after a file is
 * folded, the process with the most points is coarsened (vt_slots_coarsen) until
 * the loaded processes' points sum to at most the budget, or none has more than
 * VT_SLOTS_MIN slots left. 24 bytes a point: the default is 48 MiB of series. */
#define VT_POINTS_DEFAULT ((size_t)2 << 20)
#define VT_POINTS_ENV "VRAMTRACE_ANALYZER_POINTS"   /* a number >= 1 overrides it (tests) */
#define VT_SLOTS_MIN 64

/* Points of every site's series of p. */
size_t vt_process_points(const vt_process *p);
/* VT_POINTS_ENV, else VT_POINTS_DEFAULT. */
size_t vt_points_budget(void);
/* Coarsens procs[0..n) until their points fit budget (see above). */
void vt_slots_fit(vt_process **procs, size_t n, size_t budget);

#endif /* VT_SLOTS_H */
