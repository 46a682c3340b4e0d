/* vt_writer.h — the snapshot writer: one JSON Lines file per process, a writer thread
 * for periodic/signal snapshots and the writing of step snapshots, and synchronous
 * writes for oom/manual/exit.
 *
 * The file (rules in vt_file.h and docs/snapshot-format.md) is created lazily by
 * vt_writer_start (the first CUDA allocation call), so a process that never touches
 * CUDA writes nothing. Each record is formatted whole in memory (vt_encode.h) and
 * written with one write(2). A write fault (disk full, EIO, the file removed) does not
 * stop tracking: the snapshots are counted until the writer thread can write again,
 * then a "gap" record says what was lost (vt_writer.c "Write faults").
 *
 * Every snapshot has two halves: its collection (the core's copy, vt_core_collect,
 * and the other figures of that instant), serialised by the writer's collection lock,
 * and its writing (encoding and write(2)), serialised by the output lock. Records are
 * written in the order they were collected.
 *
 * Thread safety: all functions may be called from any thread. Lock order: start lock,
 * output lock, collection lock, the step queue's (vt_stepq.h), the core lock (held
 * only while vt_core_collect copies). Nothing here is called on the hook fast path
 * except vt_writer_start (one atomic load after the first call). vt_writer_kick_step
 * runs on the thread that marks a step (vramtrace_step), not in a hook.
 */
#ifndef VT_WRITER_H
#define VT_WRITER_H

#include <stdint.h>

#include "vt_encode.h"   /* vt_oom_info */
#include "vt_format.h"   /* vt_trigger */

/* Creates the output file (header record), starts the writer thread and installs the
 * snapshot signal handler. Idempotent. Returns 0 when the file is open, -1 otherwise
 * (tracking latched off, or already failed). */
int  vt_writer_start(void);
/* 1 once vt_writer_start succeeded (and not failed since). */
int  vt_writer_started(void);

/* Takes a "step" snapshot now (vramtrace_step every N marks), so no step is merged
 * with the next: asks the real driver, on this thread, for the current device's
 * free/total memory and the device UUIDs, collects the snapshot on this thread (the
 * core's copy, the leak detector's step, the IPC rows and annotations of now) and
 * queues it for the writer thread, which encodes and writes it (vt_stepq.h); returns
 * without waiting for the write. With VT_STEPQ_MAX steps queued and not yet written it
 * first waits for the writer thread to take one. With no writer thread (it failed to
 * start or has ended), or no memory to queue the step, it writes the record itself
 * before returning. Records keep the order of collection: a snapshot written by
 * another thread (manual, OOM, exit) comes after every step collected before it.
 * No-op before the file exists. Keeps errno. */
void vt_writer_kick_step(void);
/* Wakes the writer thread to apply the core's ring events (vt_core_drain); the
 * core's drain kick (vt_core_set_drain_kick, set when the writer starts), called by a
 * hook every VT_RING_KICK events (vt_ring.h). No-op before the writer started.
 * Async-signal-safe (sem_post); keeps errno. */
void vt_writer_kick_drain(void);
/* Has the writer thread collect and write a "step" snapshot (instead of
 * vt_writer_kick_step's collection on the calling thread): for a vramtrace_step()
 * made inside a hook or the writer on its thread (a signal handler), where nothing may
 * take our locks. Async-signal-safe; keeps errno. Marks that come faster than the
 * writer wakes merge into one snapshot. */
void vt_writer_post_step(void);
/* Counts one NVTX mark that the marks' rate bound kept from being a snapshot
 * (interpose/vt_nvtx.c): the exit record says how many there were in the whole run
 * ("nvtx_marks_not_written"), so those after the last written mark are not lost.
 * Any thread; async-signal-safe (one atomic add); a fork child starts at 0. */
void vt_writer_mark_not_written(void);

/* For a process ending without exit() (_exit, _Exit): waits until the writer thread
 * has written the step snapshots queued so far and, with the event trace on
 * (VRAMTRACE_TRACE=1), the events the hooks noted before this call, at most max_ns
 * nanoseconds; not at all when nothing is queued and the trace is off, the writer thread has ended, this thread holds the
 * writer's locks or the core's (a signal handler), or the caller is a vfork child (not
 * the process that queued them). Async-signal-safe (atomic loads, sem_post, nanosleep); keeps
 * errno. */
void vt_writer_flush_steps(uint64_t max_ns);

/* 1 when this thread takes or holds the writer's output or collection lock (a signal
 * handler that interrupted a snapshot on its thread): the client API must then take
 * none of them (vt_writer_post_step; vramtrace_snapshot answers -EAGAIN).
 * Async-signal-safe (initial-exec TLS). */
int  vt_writer_busy_here(void);

/* Writes a snapshot now on the calling thread, after the step snapshots queued before
 * it (written first, by this thread). trigger: VT_TRIG_MANUAL (label may be NULL) or
 * another trigger of vt_format.h (its label NULL). Returns 0 after the record is
 * written, or a negative errno: -ECANCELED tracking is off, -EIO the write failed,
 * -ENOMEM. */
int  vt_writer_snapshot(vt_trigger trigger, const char *label);

/* Periodic snapshots the writer thread wrote since the last reset, their total and
 * longest duration in nanoseconds (from taking the output lock to the record written;
 * skipped ones, with nothing changed, are not counted). For the benchmarks
 * (bench/bench_core.c). reset != 0 zeroes the counters as it reads them (the three
 * are read one after the other, not as one instant). Thread-safe. */
void vt_writer_periodic_stats(uint64_t *n, uint64_t *sum_ns, uint64_t *max_ns, int reset);

/* Records an OOM: the first OOM of each size class (power-of-two bucket of the
 * requested size: class = bit length of requested) writes an "oom" snapshot at once
 * on the calling thread (after the queued step snapshots, as vt_writer_snapshot). Returns 0 written, 1 not written (class already seen or
 * tracking off), negative errno on error. */
int  vt_writer_oom(const vt_oom_info *o);

/* Exit path (called from the preload's destructor, after the program's own exit-time
 * frees): stops the writer thread, writes the step snapshots still queued, then the
 * "exit" snapshot. */
void vt_writer_exit(void);

/* The preload's exit marker (an atexit handler registered at the first allocation,
 * so it runs before the CUDA runtime's teardown): asks the driver for the device
 * UUIDs one last time (only in a process that started its own writer), then marks
 * that exit has begun (vt_state_exit_begin): from then on the writer and the host
 * sampler make no CUDA call. */
void vt_writer_exit_marker(void);

/* Test seam: when set, every snapshot that is written calls it with its trigger's
 * name first thing while it holds the writer's output lock, on the thread writing it
 * (a queued step: the writer thread), after the snapshot was collected. The unit
 * tests hold that lock through it (tests/preload/test_core.c,
 * test_writer_drains_while_held, test_writer_step_not_waiting). NULL outside tests; set and cleared with atomic
 * stores (the writer thread reads it). */
extern void (*vt_writer_test_held)(const char *trigger);

/* Path of the current output file ("" if none). For tests and the exit message. */
const char *vt_writer_path(void);

/* Fork steps, called by the library's one pthread_atfork registration
 * (interpose/vt_lifecycle.c): prepare takes the start, output and collection locks and
 * the step queue's (in that order), parent releases them. The child re-initialises
 * them, drops the parent's queued steps, closes the parent's file descriptor (only if
 * the number still refers to that file) and starts over: no writer thread, no file
 * until its own first CUDA allocation call. */
void vt_writer_fork_prepare(void);
void vt_writer_fork_parent(void);
void vt_writer_fork_child(void);

#endif /* VT_WRITER_H */
