/* vt_writer.c — the snapshot writer: when a snapshot is taken, what it collects, and
 * the thread that takes the periodic ones (see vt_writer.h, docs/snapshot-format.md).
 *
 * Design: one stream per process. vt_writer_start creates the file (vt_file.h) and
 * writes the header. Every snapshot has two halves. Its collection
 * (vt__collect_locked, under vt__w.coll_lock): the trigger's policy (vt__policy) says
 * what to ask of the core, whose copy (vt_core_collect) is taken with the record's
 * other figures of that instant. Its writing (vt__write_locked, under vt__w.out_lock):
 * the copy is turned into the module, stack and site records the file does not define
 * yet, then the snapshot record (vt_encode.h), each appended whole (vt_file_append);
 * after the record the Prometheus textfile is updated (vt_prom.h) and new leak
 * warnings are logged. Records are written in the order they were collected: a step
 * snapshot is collected by the thread that marks it and queued (vt_stepq.h, pushed
 * under coll_lock, so in that order); whoever holds out_lock pops and writes them, and
 * a snapshot collected under coll_lock first writes the queued ones collected before
 * it (vt__snapshot_locked). Each record's site delta is against the record before it
 * in the file, which is the collection before it.
 *
 * The writer thread sleeps on a semaphore (sem_post is async-signal-safe, so the
 * signal handler can wake it) with a deadline for the periodic snapshot, and writes
 * the queued step snapshots when a step wakes it. OOM, manual and exit snapshots are
 * collected and written by the calling thread: an OOM often precedes a crash, and
 * vramtrace_snapshot() returns after the record is on disk. Steps are only collected
 * by the thread that marks them (every step is a point of the curve however fast
 * steps come, and a slow disk does not slow the program's steps; a full queue makes
 * the step wait for the writer thread). The writer thread never waits for another
 * thread's snapshot: its own take out_lock with trylock and retry every
 * VT_W_RETRY_NS (vt__own_snapshot, vt__write_queued), so it keeps applying the hooks'
 * ring events while another thread writes a long list.
 *
 * Delta and complete records (format version 4): periodic and step snapshots list only
 * the sites whose row changed since the previous snapshot of this stream
 * (vt_sitediff.h), only the device figures and gauges that changed (vt_encode_last,
 * vt_annot_format) and the host signals only after a new sample (vt_host_measure,
 * VRAMTRACE_HOST_INTERVAL_MS); start, signal, OOM, manual and exit snapshots are
 * complete, so a single such record is readable on its own, and so is the first
 * record of a file: whatever starts, reopens or rewrites a file, or may have lost a
 * record, calls vt__next_record_complete. All records go through out_lock in the
 * order of collection, so "previous" is the previous record in the file.
 *
 * Write faults (disk full, EIO, quota, the file or folder removed; vt_file.h): a
 * failed append opens a gap (vt__w.gap, under out_lock) instead of latching tracking
 * off. Collection goes on as before (the core, the leak detector, the step queue's
 * bound), but every snapshot written during the gap is only counted (records, first
 * and last step and time) and freed. The writer thread tries vt_file_resume at its
 * wake-ups, 100 ms after the fault and then each time twice as long, at most 10 s
 * (never on a program's thread; the exit path tries once more, as it writes the last
 * record). A resumed file gets a "gap" record first (after a new header when the file
 * had to be created again), then the next snapshot is complete (vt__next_record_complete).
 * Definitions written in an append that failed are taken back
 * (vt_encode_defs_mark/undo), so the same file never defines one twice; a new file
 * defines everything again.
 *
 * Steps: without vramtrace_step() marks, each periodic snapshot that is written closes
 * a step (the core's step counter advances); periodic snapshots are skipped when
 * nothing changed since the previous snapshot. With marks, a "step" snapshot is
 * written every VRAMTRACE_STEP_EVERY marks and only those close steps for the online
 * leak detector.
 */
#define _GNU_SOURCE
#include "vt_writer.h"
#include "vt_tracefile.h"
#include "vt_trace.h"
#include "vt_frames.h"
#include "vt_guard.h"
#include "vt_driver.h"
#include "vt_annot.h"
#include "vt_buf.h"
#include "vt_cap.h"
#include "vt_config.h"
#include "vt_core.h"
#include "vt_graph.h"
#include "vt_encode.h"
#include "vt_file.h"
#include "vt_format.h"
#include "vt_host.h"
#include "vt_leakwarn.h"
#include "vt_log.h"
#include "vt_elfsym.h"
#include "vt_modules.h"
#include "vt_prom.h"
#include "vt_sitediff.h"
#include "vt_stack.h"
#include "vt_state.h"
#include "vt_stepq.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VT_FRAG_MAX_LIVE 262144   /* periodic fragmentation only up to this many live */


static struct {
    pthread_mutex_t start_lock;   /* serialises start / fork                            */
    pthread_mutex_t out_lock;     /* serialises records and per-file state below        */
    pthread_mutex_t coll_lock;    /* serialises collections (and the step queue's
                                     pushes): the order of collection is the order of
                                     the records; taken under out_lock, never the other
                                     way round                                          */
    vt_file   file;               /* fd, dev, ino under out_lock; path under start_lock,
                                     then constant                                      */
    pthread_t thread;
    int       thread_running;     /* under start_lock                                    */
    pthread_t self;               /* the writer thread, as it sees itself               */
    int       self_known;         /* atomic: self is set                                */
    sem_t     wake;               /* posted by kicks, the signal handler, stop          */
    volatile sig_atomic_t sig_pending;
    int       step_pending;       /* atomic                                             */
    uint64_t  trace_req, trace_done;   /* atomic: requests to write the event trace so far
                                     (vt_writer_flush_steps), and the last one the
                                     writer thread has served                          */
    int       stop;               /* atomic                                             */
    uint64_t  seq;                /* under out_lock: last snapshot sequence number      */
    uint64_t  last_changes;       /* under coll_lock: core changes at the last collection */
    uint64_t  collected;          /* under coll_lock: collections for this file          */
    uint64_t  oom_classes;        /* atomic: size classes already written (bit i)       */
    vt_encode_defs defs;          /* under out_lock: stacks and sites this file defines */
    uint64_t  peak_written[VT_DEV_SLOTS + 1];  /* under out_lock: the generation of each
                                                  peak composition this file has (0 none;
                                                  vt_encode_peaks)                     */
    vt_buf    buf;                /* under out_lock                                      */
    vt_sitediff sites;            /* under out_lock: previous record's site rows (delta) */
    vt_encode_last last;          /* under out_lock: what the previous record said of the
                                     devices, seq, step_marked (delta)                  */
    vt_annot_vals annot;          /* under out_lock: the gauges the file says last       */
    vt_buf    ipc_last;           /* under out_lock: the IPC rows the file says last     */
    vt_host_sample host;          /* under out_lock: the latest host sample             */
    vt_cap    cap;                /* under out_lock: the size cap's history (vt_cap.h)   */
    char     *header;             /* under out_lock: the file's header line (malloc), for
                                     a rewrite under the cap; NULL = none kept           */
    size_t    header_len;
    uint64_t  per_n, per_sum_ns, per_max_ns;   /* atomic: periodic snapshots the writer
                                                  thread wrote, and how long each took */
    int       sig;                /* signal installed (0 none)                          */
    pid_t     pid;                /* the process that started the writer (atomic)       */
    uint64_t  start_ns;           /* under start_lock, then constant: the file's name and
                                     header (a file created again keeps them)           */
    struct {                      /* a write fault not resumed yet; under out_lock
                                     (active also read atomically by the writer loop)  */
        int      active;
        int      faults, resumed; /* gaps opened and ended in this process: the first of
                                     each is a warning, later ones only at VRAMTRACE_LOG=info */
        vt_encode_gap g;          /* what was lost; g.error points to file.why          */
        uint64_t retry_at, backoff_ns;   /* CLOCK_MONOTONIC ns                          */
    } gap;
} vt__w = {
    .start_lock = PTHREAD_MUTEX_INITIALIZER,
    .out_lock = PTHREAD_MUTEX_INITIALIZER,
    .coll_lock = PTHREAD_MUTEX_INITIALIZER,
    .file = { .fd = -1 },
};

static uint64_t vt__marks_not_written;   /* atomic: vt_writer_mark_not_written's count */

/* What a trigger's snapshot is. periodic: of the state as the writer applied it (the
 * ring's events are applied every VT_RING_KICK of them; every other trigger applies
 * them first), skipped when nothing changed, and closes a step when the program marks
 * none. step: closes a marked step. allocs: lists every live allocation (and computes
 * fragmentation whatever the live count). delta: lists only the changed sites. */
static const struct vt__policy {
    unsigned char periodic, step, allocs, delta;
} vt__policy[VT_TRIG_COUNT] = {
    [VT_TRIG_START]    = { 0, 0, 0, 0 },
    [VT_TRIG_PERIODIC] = { 1, 0, 0, 1 },
    [VT_TRIG_STEP]     = { 0, 1, 0, 1 },
    [VT_TRIG_SIGNAL]   = { 0, 0, 1, 0 },
    [VT_TRIG_OOM]      = { 0, 0, 1, 0 },
    [VT_TRIG_EXIT]     = { 0, 0, 1, 0 },
    [VT_TRIG_MANUAL]   = { 0, 0, 1, 0 },
};

static uint64_t vt__realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 on the writer thread. */
static int vt__on_writer_thread(void)
{
    return __atomic_load_n(&vt__w.self_known, __ATOMIC_ACQUIRE) && pthread_equal(vt__w.self, pthread_self());
}

/* The next record written is complete: every site row, every device with all its
 * figures, the host signals (a sample taken then, NVML included) and every
 * annotation, as a reader needs after a file is started, reopened or rewritten, or
 * after a record that may not have reached the file. Clears what the writer
 * remembers of the previous record (vt_sitediff, vt_encode_last, the written
 * gauges, the peak compositions written, the NVML sample written). Under out_lock (or before the writer runs). */
static void vt__next_record_complete(void)
{
    vt_sitediff_reset(&vt__w.sites);
    vt_encode_last_reset(&vt__w.last);
    vt__w.annot.n = 0;
    memset(vt__w.peak_written, 0, sizeof vt__w.peak_written);
    vt_host_new_file();
}

#define VT_GAP_FIRST_NS 100000000ull     /* first retry 100 ms after a write fault */
#define VT_GAP_MAX_NS   10000000000ull   /* back-off doubles up to 10 s            */

/* A write fault (vt__w.file.err, .why): opens the gap, or, when a retry failed,
 * doubles the back-off. Under out_lock. */
static void vt__gap_fault(void)
{
    uint64_t now = vt_now_ns();
    if (!vt__w.gap.active) {
        memset(&vt__w.gap.g, 0, sizeof vt__w.gap.g);
        vt__w.gap.backoff_ns = VT_GAP_FIRST_NS;
        __atomic_store_n(&vt__w.gap.active, 1, __ATOMIC_RELEASE);
        vt_log(vt__w.gap.faults++ ? VT_LOG_INFO : VT_LOG_WARN,
               "cannot write %s: %s; tracing goes on in memory and writing resumes when the file can be written "
               "again", vt__w.file.path, vt__w.file.why);
    } else if ((vt__w.gap.backoff_ns *= 2) > VT_GAP_MAX_NS) {
        vt__w.gap.backoff_ns = VT_GAP_MAX_NS;
    }
    vt__w.gap.g.err = vt__w.file.err;
    vt__w.gap.g.error = vt__w.file.why;
    __atomic_store_n(&vt__w.gap.retry_at, now + vt__w.gap.backoff_ns, __ATOMIC_RELAXED);   /* read by the loop */
}

/* A snapshot collected and not written (the gap). Under out_lock. */
static void vt__gap_lost(const vt_pending *pd)
{
    vt_encode_gap *g = &vt__w.gap.g;
    uint64_t t = pd->time_ns ? pd->time_ns : vt_now_ns();
    if (!g->records++)
        g->first_ns = t;
    g->last_ns = t;
    if (!g->has_steps) {
        g->has_steps = 1;
        g->first_step = pd->c.step;
    }
    g->last_step = pd->c.step;
}

/* Appends the buffer (whole records) to the file. Returns 0, -ENOMEM (the buffer ran
 * out of memory: nothing written), or -EIO (a write fault opens or prolongs the gap,
 * vt__gap_fault; a compression failure has latched tracking off). Empties the buffer.
 * Under out_lock. */
static int vt__flush(void)
{
    vt_buf *b = &vt__w.buf;
    int rc;
    if (b->oom)
        rc = -ENOMEM;
    else if (vt__w.file.fd < 0 && !vt__w.file.err)
        rc = -EIO;
    else if ((rc = vt_file_append(&vt__w.file, b->p, b->len)) < 0) {
        if (vt_core_enabled() && vt__w.file.err)
            vt__gap_fault();
        else
            vt_state_set_writer(VT_STATE_WRITER_FAILED);
        rc = -EIO;
    }
    vt_buf_reset(b);
    return rc;
}

void (*vt_writer_test_held)(const char *trigger);   /* vt_writer.h: tests only */

/* This thread holds (or is taking) the writer's output or collection lock
 * (vt__tls.writing): a signal handler that interrupted it must not take them
 * (vt_writer_busy_here). */
#define VT_W_BUSY_BEGIN vt__tls.writing++
#define VT_W_BUSY_END   vt__tls.writing--

static void vt__out_lock(void)
{
    VT_W_BUSY_BEGIN;
    pthread_mutex_lock(&vt__w.out_lock);
}

/* 1 when out_lock was taken; else 0 (held elsewhere). */
static int vt__out_trylock(void)
{
    VT_W_BUSY_BEGIN;
    if (pthread_mutex_trylock(&vt__w.out_lock) == 0)
        return 1;
    VT_W_BUSY_END;
    return 0;
}

static void vt__out_unlock(void)
{
    pthread_mutex_unlock(&vt__w.out_lock);
    VT_W_BUSY_END;
}

int vt_writer_busy_here(void)
{
    return vt__tls.writing != 0;
}

/* The collection half of a snapshot: what the trigger's policy (vt__policy) asks of
 * the core, copied at this instant (vt_core_collect), and the record's other members
 * read at the same moment (IPC rows, annotations) into pd. Returns 1 collected, 0
 * skipped (a periodic one with nothing changed since the previous collection),
 * -ECANCELED (tracking off or no file) or -ENOMEM (pd is then empty). Under
 * coll_lock. */
static int vt__collect_locked(vt_pending *pd, vt_trigger trigger)
{
    pd->trigger = trigger;
    pd->time_ns = 0;
    memset(&pd->c, 0, sizeof pd->c);
    vt_buf_init(&pd->extra);
    pd->annot = NULL;
    pd->nannot = 0;
    if (!vt_core_enabled() || !vt_writer_started())
        return -ECANCELED;
    const struct vt__policy *p = &vt__policy[trigger];
    uint64_t changes = p->periodic ? vt_core_changes_applied() : vt_core_changes();
    if (p->periodic && changes == vt__w.last_changes && vt__w.collected > 0)
        return 0;  /* nothing changed: skipped */
    unsigned flags = p->periodic ? VT_COLLECT_APPLIED : 0;
    if (p->step)
        flags |= VT_COLLECT_STEP;
    if (p->periodic && vt_core_advance_unmarked_step())
        flags |= VT_COLLECT_STEP;
    if (p->allocs)
        flags |= VT_COLLECT_ALLOCS | VT_COLLECT_FRAG;
    else if ((p->periodic ? vt_core_live_count_applied() : vt_core_live_count()) <= VT_FRAG_MAX_LIVE)
        flags |= VT_COLLECT_FRAG;
    if (vt_core_collect(&pd->c, flags, vt__config.leak_steps) < 0) {
        memset(&pd->c, 0, sizeof pd->c);
        return -ENOMEM;
    }
    pd->time_ns = vt_now_ns();
    vt__w.last_changes = pd->c.changes;
    vt__w.collected++;
    vt_encode_ipc(&pd->extra);
    pd->annot = vt_annot_copy(&pd->nannot);
    return 1;
}

/* The stack and site records the peak compositions that this record will carry
 * (those not yet in the file, vt_encode_peaks) need. */
static void vt__define_peak_sites(vt_buf *b, const vt_collect *c)
{
    for (size_t i = 0; i < c->n_peaks; i++) {
        const vt_peak_comp *p = &c->peaks[i];
        if (p->gen == vt__w.peak_written[vt_encode_peak_index(p->device)])
            continue;
        for (uint32_t k = 0; k < p->n; k++) {
            const vt_peak_site *t = &p->top[k];
            vt_site_row r = { .id = t->id, .stack = t->stack, .kind = t->kind,
                              .device = t->device, .flags = t->flags };
            vt_encode_stack_def(b, &vt__w.defs, r.stack);
            vt_encode_site_def(b, &vt__w.defs, &r);
        }
    }
}

/* The writing half: the module, stack and site records the file does not define yet,
 * then the snapshot record, each appended whole; then the Prometheus textfile and
 * new leak warnings. Frees pd's contents. Returns 0 written, -ECANCELED (tracking off
 * or no file), -ENOMEM or -EIO. Under out_lock. */
static int vt__write_locked(vt_pending *pd, const char *label, const vt_oom_info *oom)
{
    vt_trigger trigger = pd->trigger;
    void (*held)(const char *) = __atomic_load_n(&vt_writer_test_held, __ATOMIC_ACQUIRE);
    if (held)
        held(vt_trigger_name(trigger));
    if (vt__w.gap.active && vt_core_enabled()) {   /* not written: counted (its leak
                                                     * warnings still said, the Prometheus
                                                     * textfile still updated) */
        vt__gap_lost(pd);
        vt_host_measure(&vt__w.host, 0);
        vt_prom_snapshot(&pd->c, &vt__w.host, trigger == VT_TRIG_EXIT,
                         trigger == VT_TRIG_EXIT || vt__on_writer_thread());
        vt_leakwarn_log(&pd->c);
        vt_pending_free(pd, 0);
        return -EIO;
    }
    if (!vt_core_enabled() || vt__w.file.fd < 0) {
        vt_pending_free(pd, 0);
        return -ECANCELED;
    }
    const struct vt__policy *p = &vt__policy[trigger];
    vt_collect *c = &pd->c;
    vt_buf *b = &vt__w.buf;
    vt_buf_reset(b);
    if (vt__config.max_bytes && vt__w.header &&   /* before the delta test: a rewrite may reset it */
        vt_cap_check(&vt__w.cap, &vt__w.file, &vt__w.defs, &vt__w.sites, vt__w.header, vt__w.header_len,
                     vt__config.max_bytes))
        vt__next_record_complete();
    vt_sitediff_sort(c->sites, c->n_sites);
    int delta = p->delta && vt__w.last.valid && vt_sitediff_can_delta(&vt__w.sites, c->sites, c->n_sites);

    /* definitions first: stacks, then the sites that use them */
    vt_encode_defs_mark(&vt__w.defs);
    for (size_t i = 0; i < c->n_sites; i++)
        vt_encode_stack_def(b, &vt__w.defs, c->sites[i].stack);
    for (size_t i = 0; i < c->n_sites; i++)
        vt_encode_site_def(b, &vt__w.defs, &c->sites[i]);
    for (size_t i = 0; i < c->n_allocs; i++)
        vt_encode_stack_def(b, &vt__w.defs, c->allocs[i].stack);
    if (oom)
        vt_encode_stack_def(b, &vt__w.defs, oom->stack);
    vt__define_peak_sites(b, c);
    int rc = 0;
    if (b->len)
        rc = vt__flush();
    if (rc == -ENOMEM)   /* the definitions were marked written but never were: a later
                          * row would name an undefined stack or site (vt_core.h latch) */
        vt_core_latch_off("out of memory for the snapshot buffer");
    if (rc < 0) {
        if (rc == -EIO && vt__w.gap.active) {   /* never in the file: defined again later */
            vt_encode_defs_undo(&vt__w.defs);
            vt__gap_lost(pd);
            vt_leakwarn_log(c);
        }
        vt__next_record_complete();
        vt_pending_free(pd, 0);
        return rc;
    }

    vt_encode_snap snap = {
        .seq = ++vt__w.seq, .trigger = trigger, .label = label, .c = c, .delta = delta, .last = &vt__w.last,
        .prev = &vt__w.sites, .oom = oom, .allocations = p->allocs, .time_ns = pd->time_ns,
        .marks_not_written = trigger == VT_TRIG_EXIT ? __atomic_load_n(&vt__marks_not_written, __ATOMIC_RELAXED) : 0,
    };
    vt_encode_snapshot(b, &snap);
    vt_encode_peaks(b, c, vt__w.peak_written);
    /* IPC rows; when they did not fit, left out and the next record is complete */
    int ipc_lost = pd->extra.oom;
    if (!ipc_lost)
        vt_encode_ipc_since(b, &pd->extra, &vt__w.ipc_last, delta);
    vt_annot_format(b, pd->annot, pd->nannot, &vt__w.annot, !delta);
    /* host signals: in the record after a new sample (at most one per host interval),
     * and in every complete record, with a sample taken now */
    if (vt_host_measure(&vt__w.host, !delta) || !delta)
        vt_host_format(b, &vt__w.host, !delta);
    vt_encode_end(b);
    if (vt__config.max_bytes && trigger == VT_TRIG_OOM && !b->oom)
        vt_cap_keep_oom(&vt__w.cap, b->p, b->len);
    rc = vt__flush();
    if (rc == 0)
        vt_sitediff_commit(&vt__w.sites, c->sites, c->n_sites);
    if (rc != 0 || ipc_lost)
        vt__next_record_complete();
    if (rc == 0 && vt__config.max_bytes && trigger != VT_TRIG_EXIT)
        vt_cap_note(&vt__w.cap, c, pd->time_ns ? pd->time_ns : vt_now_ns());
    if (rc == -EIO && vt__w.gap.active) {   /* the record is lost (its definitions, in
                                             * an append of their own, are in the file) */
        vt__w.seq--;
        vt__gap_lost(pd);
    }
    /* the textfile: written at once on the writer thread and at exit, else by the
     * writer thread's next tick (vt_prom.h) */
    int at_exit = trigger == VT_TRIG_EXIT;
    vt_prom_snapshot(c, &vt__w.host, at_exit, at_exit || vt__on_writer_thread());
    if (rc == 0 || (rc == -EIO && vt__w.gap.active))
        vt_leakwarn_log(c);
    vt_pending_free(pd, 0);
    return rc;
}

/* Writes the n oldest queued step snapshots (fewer if fewer are queued). Under
 * out_lock. */
static void vt__write_queued_locked(size_t n)
{
    for (; n; n--) {
        vt_pending *q = vt_stepq_pop();
        if (!q)
            break;
        vt__write_locked(q, NULL, NULL);
        free(q);
        vt_stepq_written();
    }
}

/* A snapshot collected and written by this thread: collected now, then written after
 * the queued step snapshots collected before it (they were marked first, and each
 * record's site delta is against the record before it in the file). Returns 0
 * (written, or a periodic one skipped as unchanged), -ECANCELED (tracking off or no
 * file), -ENOMEM or -EIO. Under out_lock. */
static int vt__snapshot_locked(vt_trigger trigger, const char *label, const vt_oom_info *oom)
{
    vt_pending pd;
    pthread_mutex_lock(&vt__w.coll_lock);
    int rc = vt__collect_locked(&pd, trigger);
    size_t before = vt_stepq_count();
    pthread_mutex_unlock(&vt__w.coll_lock);
    vt__write_queued_locked(before);
    if (rc > 0)
        rc = vt__write_locked(&pd, label, oom);
    else
        vt_pending_free(&pd, 0);
    return rc;
}

/* ---- write faults ---- */

/* Tries to end the gap (force: whatever the back-off says): the file made writable
 * again (vt_file_resume), its header when it is new, then the "gap" record; every
 * definition the file lacks is written before its next use, and the next snapshot is
 * complete. On failure the back-off doubles (vt__gap_fault). Returns 1 when the gap
 * is over (or there was none). Under out_lock. */
static int vt__gap_retry_locked(int force)
{
    if (!vt__w.gap.active)
        return 1;
    if (!vt_core_enabled() || (!force && vt_now_ns() < vt__w.gap.retry_at))
        return 0;
    int r = vt_file_resume(&vt__w.file, vt__config.output, vt__w.start_ns);
    if (r < 0) {
        vt__w.file.err = errno ? errno : EIO;
        snprintf(vt__w.file.why, sizeof vt__w.file.why, "%s", strerror(vt__w.file.err));
        vt__gap_fault();
        return 0;
    }
    vt_buf *b = &vt__w.buf;
    vt_buf_reset(b);
    if (r == 1 || vt__w.file.good == 0) {   /* a new (or still empty) file: nothing of the old one */
        vt_encode_defs_clear(&vt__w.defs);
        vt__w.seq = 0;
        vt_encode_header(b, vt__w.start_ns);
        vt_cap_reset(&vt__w.cap);   /* its offsets and keep point were the old file's */
    }
    vt_encode_gap g = vt__w.gap.g;
    char why[sizeof vt__w.file.why];
    memcpy(why, vt__w.gap.g.error ? vt__w.gap.g.error : "", sizeof why);
    why[sizeof why - 1] = 0;
    g.error = why;
    vt_encode_gap_record(b, &g);
    if (vt__flush() < 0)   /* a fault again: the gap goes on (vt__gap_fault doubled the back-off) */
        return 0;
    vt_cap_note_gap(&vt__w.cap, &g);   /* a rewrite under the size cap keeps saying it */
    vt__next_record_complete();
    __atomic_store_n(&vt__w.gap.active, 0, __ATOMIC_RELEASE);
    /* the first resume of the process is a warning (the exit path's is not: its own
     * line says what the exit record met) */
    int level = force || vt__w.gap.resumed++ ? VT_LOG_INFO : VT_LOG_WARN;
    if (g.has_steps)
        vt_log(level, "writing %s again: %llu records lost between step %llu and %llu: %s", vt__w.file.path,
               (unsigned long long)g.records, (unsigned long long)g.first_step, (unsigned long long)g.last_step, why);
    else
        vt_log(level, "writing %s again: %llu records lost: %s", vt__w.file.path, (unsigned long long)g.records, why);
    return 1;
}

/* The writer thread's retry at a wake-up: only when one is due, and without waiting
 * for out_lock (another thread writing: tried at the next wake-up). */
static void vt__gap_tick(void)
{
    if (!__atomic_load_n(&vt__w.gap.active, __ATOMIC_ACQUIRE) || !vt__out_trylock())
        return;
    vt__gap_retry_locked(0);
    vt__out_unlock();
}

/* ---- the writer thread ---- */

static void vt__on_signal(int sig)
{
    (void)sig;
    int e = errno;
    __atomic_store_n(&vt__w.sig_pending, 1, __ATOMIC_RELEASE);  /* lock-free: signal-safe */
    sem_post(&vt__w.wake);
    errno = e;
}

/* Driver-side figures before a snapshot, outside every lock, not once exit has begun:
 * the reserve of the default stream-ordered pool of each device that has had
 * stream-ordered allocations, and the graph memory pool (reserved, used) of each
 * device that has had graph allocation nodes (sys/vt_driver.h). The driver calls are made under the
 * depth guard: hooked calls it makes meanwhile are not the program's. */
static void vt__refresh(void)
{
    uint64_t devs = vt_driver_pool_devices(), gdevs = vt_graph_devices();
    if (!(devs | gdevs) || vt_state_exiting())
        return;
    int e = errno;
    vt_guard_enter();
    for (int d = 0; d < 64; d++) {
        uint64_t reserved, used;
        int used_known;
        if ((devs & (1ull << d)) && vt_driver_pool_sample(d, &reserved, &used, &used_known) == 0)
            vt_core_set_pool(d, reserved, used, used_known);
        if ((gdevs & (1ull << d)) && vt_driver_graph_mem(d, &reserved, &used) == 0)
            vt_core_set_graph_mem(d, reserved, used);
    }
    vt_guard_leave();
    errno = e;
}

/* On the thread that marks a step: the current device's free and total memory
 * (cuMemGetInfo_v2 through sys/vt_driver.h), so that every step snapshot knows free
 * memory and the analyzer can tell when the device would run out. Under the depth
 * guard. */
static void vt__step_meminfo(void)
{
    vt_guard_enter();
    uint64_t ctx = 0, fr = 0, to = 0;
    int dev = vt_driver_device_current(&ctx);
    if (dev >= 0 && vt_driver_meminfo(&fr, &to) == 0)
        vt_core_set_meminfo(dev, fr, to);
    vt_guard_leave();
}

/* Counts a periodic snapshot the writer thread wrote in ns (vt_writer_periodic_stats). */
static void vt__periodic_done(uint64_t ns)
{
    __atomic_add_fetch(&vt__w.per_n, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&vt__w.per_sum_ns, ns, __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&vt__w.per_max_ns, __ATOMIC_RELAXED);
    while (ns > m && !__atomic_compare_exchange_n(&vt__w.per_max_ns, &m, ns, 1, __ATOMIC_RELAXED,
                                                  __ATOMIC_RELAXED))
        ;
}

void vt_writer_periodic_stats(uint64_t *n, uint64_t *sum_ns, uint64_t *max_ns, int reset)
{
    *n = reset ? __atomic_exchange_n(&vt__w.per_n, 0, __ATOMIC_RELAXED) : __atomic_load_n(&vt__w.per_n, __ATOMIC_RELAXED);
    *sum_ns = reset ? __atomic_exchange_n(&vt__w.per_sum_ns, 0, __ATOMIC_RELAXED)
                    : __atomic_load_n(&vt__w.per_sum_ns, __ATOMIC_RELAXED);
    *max_ns = reset ? __atomic_exchange_n(&vt__w.per_max_ns, 0, __ATOMIC_RELAXED)
                    : __atomic_load_n(&vt__w.per_max_ns, __ATOMIC_RELAXED);
}

/* The writer thread's own snapshots (signal, step, periodic) never wait for out_lock:
 * another thread writing a snapshot (manual, OOM, a full live list) may hold it for a
 * long time, and the thread must go on draining the event ring meanwhile, or the hooks
 * find the ring full and apply events themselves. A snapshot that finds it held is
 * tried again VT_W_RETRY_NS later; the other thread's record is written meanwhile.
 * Returns 1 when done (written, skipped as unchanged, or failed: the file latched
 * off), 0 to try again (periodic: counted in vt_writer_periodic_stats when written). */
#define VT_W_RETRY_NS 5000000ull   /* 5 ms */

static int vt__own_snapshot(vt_trigger trigger)
{
    vt__refresh();   /* outside out_lock: it calls the driver */
    if (!vt__out_trylock())
        return 0;
    vt__write_queued_locked((size_t)-1);   /* not counted in the periodic figures */
    uint64_t t0 = vt_now_ns(), seq0 = vt__w.seq;
    int wrote = vt__snapshot_locked(trigger, NULL, NULL) == 0 && vt__w.seq != seq0;
    vt__out_unlock();
    if (wrote && trigger == VT_TRIG_PERIODIC)
        vt__periodic_done(vt_now_ns() - t0);
    return 1;
}

/* Writes the step snapshots the program's threads collected and queued (vt_stepq.h),
 * oldest first. Returns 0 when done (or none queued), 1 to try again (out_lock held
 * elsewhere: the thread holding it writes those collected before its own record). */
static int vt__write_queued(void)
{
    if (!vt_stepq_count())
        return 0;
    if (!vt__out_trylock())
        return 1;
    vt__write_queued_locked((size_t)-1);
    vt__out_unlock();
    return 0;
}

/* Takes a snapshot that a flag asked for; on "try again" sets the flag again and
 * returns 1 (retry), else 0. */
static int vt__pending_snapshot(volatile int *flag, vt_trigger trigger)
{
    if (!__atomic_exchange_n(flag, 0, __ATOMIC_ACQ_REL) || vt__own_snapshot(trigger))
        return 0;
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    return 1;
}

static void *vt__writer_main(void *arg)
{
    (void)arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);   /* our thread, our locks */
    vt__w.self = pthread_self();
    __atomic_store_n(&vt__w.self_known, 1, __ATOMIC_RELEASE);
    uint64_t interval = (uint64_t)vt__config.interval_ms * 1000000ull;
    uint64_t deadline = vt_now_ns() + (interval ? interval : 3600ull * 1000000000ull);
    int retry = 0;   /* a snapshot found out_lock held: wake again in VT_W_RETRY_NS */
    while (!__atomic_load_n(&vt__w.stop, __ATOMIC_ACQUIRE)) {
        /* UUIDs, NVML sample, textfile; outside every lock */
        if (vt_host_tick())
            vt_prom_host_refresh();
        vt_prom_flush();
        uint64_t wake = deadline, now = vt_now_ns();
        /* a retry sleeps VT_W_RETRY_NS, or up to a deadline that comes sooner; not to
         * a deadline already past (a periodic snapshot waiting for the lock): that
         * would time out at once, over and over, a busy loop for as long as the
         * other snapshot takes */
        if (retry && (wake <= now || wake > now + VT_W_RETRY_NS))
            wake = now + VT_W_RETRY_NS;
        retry = 0;
        if (__atomic_load_n(&vt__w.gap.active, __ATOMIC_ACQUIRE)) {   /* a write fault's retry */
            uint64_t at = __atomic_load_n(&vt__w.gap.retry_at, __ATOMIC_RELAXED);
            if (at < wake)
                wake = at > now ? at : now + 1000000ull;
        }
        struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
        sem_clockwait(&vt__w.wake, CLOCK_MONOTONIC, &ts);
        if (__atomic_load_n(&vt__w.stop, __ATOMIC_ACQUIRE))
            break;
        uint64_t trace_req = __atomic_load_n(&vt__w.trace_req, __ATOMIC_ACQUIRE);
        vt_core_drain();   /* the hooks' ring events (woken every VT_RING_KICK of them) */
        vt_tracefile_flush(vt_writer_path());   /* what that drain noted for the trace */
        __atomic_store_n(&vt__w.trace_done, trace_req, __ATOMIC_RELEASE);   /* events before the request are out */
        vt_core_frag_keep();   /* fragmentation kept up to date between snapshots */
        vt__gap_tick();        /* a write fault's retry, when one is due */
        retry |= vt__write_queued();   /* the steps vramtrace_step collected */
        /* set by the handler on another thread, and by vramtrace_step */
        retry |= vt__pending_snapshot((volatile int *)&vt__w.sig_pending, VT_TRIG_SIGNAL);
        retry |= vt__pending_snapshot(&vt__w.step_pending, VT_TRIG_STEP);
        if (vt_now_ns() >= deadline) {
            if (interval && !vt__own_snapshot(VT_TRIG_PERIODIC))
                retry = 1;   /* the deadline stays: due as soon as out_lock is free */
            else
                deadline = vt_now_ns() + (interval ? interval : 3600ull * 1000000000ull);
        }
        if (!vt_core_enabled())
            break;
    }
    vt_stepq_set_open(0);   /* from now on a step is written by the thread that marks it */
    return NULL;
}

/* ---- public ---- */

/* Creates the file and writes the header. Under start_lock. Returns 0 or -1. */
static int vt__open_file(void)
{
    uint64_t start_ns = vt__realtime_ns();
    dev_t dev;
    ino_t ino;
    vt__w.start_ns = start_ns;
    vt__w.file.compress = vt__config.compress;
    int fd = vt_file_create(&vt__w.file, vt__config.output, start_ns, &dev, &ino);
    if (fd < 0)
        return -1;
    pthread_mutex_lock(&vt__w.out_lock);
    vt__w.file.fd = fd;
    vt__w.file.dev = dev;
    vt__w.file.ino = ino;
    vt__w.seq = 0;
    vt__w.last_changes = 0;
    vt__w.collected = 0;
    vt__next_record_complete();
    vt_encode_defs_clear(&vt__w.defs);
    memset(vt__w.peak_written, 0, sizeof vt__w.peak_written);
    vt_buf_reset(&vt__w.buf);
    vt_encode_header(&vt__w.buf, start_ns);
    vt_cap_reset(&vt__w.cap);
    free(vt__w.header);
    vt__w.header = NULL;
    if (vt__config.max_bytes && !vt__w.buf.oom && (vt__w.header = malloc(vt__w.buf.len))) {
        memcpy(vt__w.header, vt__w.buf.p, vt__w.buf.len);
        vt__w.header_len = vt__w.buf.len;
    }
    int rc = vt__flush();
    if (rc < 0 && vt__w.gap.active)   /* a write fault before the header: the gap's resume
                                        * writes it (the file is empty: vt__gap_retry_locked) */
        rc = 0;
    pthread_mutex_unlock(&vt__w.out_lock);
    return rc < 0 ? -1 : 0;
}

static void vt__install_signal(void)
{
    int sig = vt__config.signal;
    if (sig <= 0 || vt__w.sig == sig)
        return;
    struct sigaction old;
    if (sigaction(sig, NULL, &old) < 0)
        return;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == vt__on_signal) {
        vt__w.sig = sig;   /* inherited over fork */
        return;
    }
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
        vt_log(VT_LOG_WARN, "signal %d already has a handler or is ignored; snapshot on signal is off", sig);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = vt__on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sig, &sa, NULL) == 0)
        vt__w.sig = sig;
}

int vt_writer_start(void)
{
    int st = vt_state_writer();
    if (st)
        return st > 0 ? 0 : -1;
    if (!vt_core_enabled())
        return -1;
    pthread_mutex_lock(&vt__w.start_lock);
    st = vt_state_writer();
    if (st == 0) {
        if (vt__open_file() < 0) {
            st = -1;
        } else {
            st = 1;
            vt_host_prime();   /* one-time opens here, not on the writer thread */
            sem_init(&vt__w.wake, 0, 0);
            __atomic_store_n(&vt__w.stop, 0, __ATOMIC_RELEASE);
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);  /* the writer takes no signals */
            if (pthread_create(&vt__w.thread, NULL, vt__writer_main, NULL) == 0) {
                vt__w.thread_running = 1;
                __atomic_store_n(&vt__w.pid, getpid(), __ATOMIC_RELEASE);
                vt_stepq_set_open(1);
                vt_core_set_drain_kick(vt_writer_kick_drain);
            }
            else
                vt_log(VT_LOG_WARN, "cannot start the writer thread; only oom, manual and exit snapshots");
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            vt__install_signal();
            vt_log(VT_LOG_INFO, "writing snapshots to %s", vt__w.file.path);
        }
        vt_state_set_writer(st);
    }
    pthread_mutex_unlock(&vt__w.start_lock);
    return st > 0 ? 0 : -1;
}

int vt_writer_started(void)
{
    return vt_state_writer() == VT_STATE_WRITER_OPEN;
}

void vt_writer_kick_step(void)
{
    if (!vt_writer_started())
        return;
    /* Collected by the calling thread, at once, so the step's figures and the leak
     * detector's floors are those of the step boundary and no step is merged with the
     * next; encoded and written by the writer thread (vt_stepq.h), so a slow disk
     * does not slow the program's steps. What the step record needs from the driver
     * is asked first, on this thread. */
    int e = errno;
    vt__step_meminfo();
    vt_host_uuids();
    errno = e;
    vt__refresh();
    VT_W_BUSY_BEGIN;   /* from here, the queue's mutex or our locks may be held */
    vt_pending *pd = NULL;
    if (vt_stepq_reserve()) {   /* waits while VT_STEPQ_MAX steps are not written yet */
        pd = malloc(sizeof *pd);
        if (!pd)
            vt_stepq_push(NULL);
    }
    if (!pd) {   /* no writer thread to hand it to (or no memory to queue it): here */
        vt__out_lock();
        vt__snapshot_locked(VT_TRIG_STEP, NULL, NULL);
        vt__out_unlock();
        VT_W_BUSY_END;
        errno = e;
        return;
    }
    pthread_mutex_lock(&vt__w.coll_lock);
    int rc = vt__collect_locked(pd, VT_TRIG_STEP);
    vt_stepq_push(rc > 0 ? pd : NULL);   /* in collection order: under coll_lock */
    pthread_mutex_unlock(&vt__w.coll_lock);
    VT_W_BUSY_END;
    if (rc > 0)
        sem_post(&vt__w.wake);
    else
        vt_pending_free(pd, 1);
    errno = e;
}

void vt_writer_mark_not_written(void)
{
    __atomic_add_fetch(&vt__marks_not_written, 1, __ATOMIC_RELAXED);
}

void vt_writer_post_step(void)
{
    if (!vt_writer_started())
        return;
    int e = errno;
    __atomic_store_n(&vt__w.step_pending, 1, __ATOMIC_RELEASE);
    sem_post(&vt__w.wake);
    errno = e;
}

void vt_writer_flush_steps(uint64_t max_ns)
{
    /* not from a handler that interrupted our locks or the core's on this thread (the
     * writer thread would wait for them); a vfork child shares our memory but is not
     * the process that queued them */
    if (!vt_writer_started() || vt_writer_busy_here() || vt__tls.core ||
        getpid() != __atomic_load_n(&vt__w.pid, __ATOMIC_ACQUIRE))
        return;
    int trace = vt_core_trace_on();   /* the event trace: what the hooks noted before this call */
    if (!trace && !vt_stepq_unwritten())
        return;
    int e = errno;
    uint64_t deadline = vt_now_ns() + max_ns;
    uint64_t want = trace ? __atomic_add_fetch(&vt__w.trace_req, 1, __ATOMIC_ACQ_REL) : 0;
    sem_post(&vt__w.wake);
    while (((vt_stepq_unwritten() && vt_stepq_is_open()) || __atomic_load_n(&vt__w.trace_done, __ATOMIC_ACQUIRE) < want) &&
           vt_now_ns() < deadline) {
        struct timespec ts = { 0, 200000 };   /* 0.2 ms */
        nanosleep(&ts, NULL);
    }
    errno = e;
}

void vt_writer_kick_drain(void)
{
    if (!vt_writer_started())
        return;
    int e = errno;
    sem_post(&vt__w.wake);
    errno = e;
}

int vt_writer_snapshot(vt_trigger trigger, const char *label)
{
    if (!vt_core_enabled())
        return -ECANCELED;
    if (vt_writer_started())
        vt_host_uuids();   /* the textfile names the devices */
    if (vt_writer_start() < 0)
        return vt_core_enabled() ? -EIO : -ECANCELED;
    vt__out_lock();
    int rc = vt__snapshot_locked(trigger, label, NULL);
    vt__out_unlock();
    return rc;
}

int vt_writer_oom(const vt_oom_info *o)
{
    if (!vt_core_enabled())
        return 1;
    unsigned cls = 0;
    for (uint64_t v = o->requested; v; v >>= 1)
        cls++;
    uint64_t bit = 1ull << (cls > 63 ? 63 : cls);
    if (__atomic_fetch_or(&vt__w.oom_classes, bit, __ATOMIC_ACQ_REL) & bit)
        return 1;
    if (vt_writer_start() < 0)
        return -EIO;
    vt__out_lock();
    int rc = vt__snapshot_locked(VT_TRIG_OOM, NULL, o);
    vt__out_unlock();
    return rc;
}

void vt_writer_exit_marker(void)
{
    /* The last moment the driver is sure to be up (the runtime's teardown handler
     * runs after the marker): a program that ended before the writer thread ever ran
     * and marked no step still gets its UUIDs into the exit textfile. Only in a
     * process that started its own writer (a forked child that never allocated must
     * not call into a driver its parent initialised). */
    if (vt_writer_started())
        vt_host_uuids();
    vt_state_exit_begin();
}

void vt_writer_exit(void)
{
    vt_state_exit_begin();
    /* Join the writer thread even when tracking latched off (the thread then left
     * its loop on its own): a thread is never left unjoined. */
    if (vt__w.thread_running) {
        __atomic_store_n(&vt__w.stop, 1, __ATOMIC_RELEASE);
        sem_post(&vt__w.wake);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        if (pthread_timedjoin_np(vt__w.thread, NULL, &ts) == 0)
            vt__w.thread_running = 0;
    }
    vt_stepq_set_open(0);   /* (the thread closed it, unless it did not end in time) */
    if (!vt_writer_started())
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    VT_W_BUSY_BEGIN;
    if (pthread_mutex_timedlock(&vt__w.out_lock, &ts) != 0) {
        VT_W_BUSY_END;
        return;
    }
    /* a write fault: one more try now, on this thread, as the writer thread is gone
     * (the last records would be lost otherwise) */
    vt__gap_retry_locked(1);
    /* after every step queued before it (vt__snapshot_locked writes those first) */
    int rc = vt__snapshot_locked(VT_TRIG_EXIT, NULL, NULL);
    if (rc == -EIO && vt__w.gap.active) {
        const vt_encode_gap *g = &vt__w.gap.g;
        if (g->has_steps)
            vt_log(VT_LOG_WARN, "the exit record could not be written to %s: %s (%llu records lost since step %llu)",
                   vt__w.file.path, vt__w.file.why, (unsigned long long)g->records,
                   (unsigned long long)g->first_step);
        else
            vt_log(VT_LOG_WARN, "the exit record could not be written to %s: %s (%llu records lost)",
                   vt__w.file.path, vt__w.file.why, (unsigned long long)g->records);
    }
    vt_tracefile_flush(vt__w.file.path);   /* after the exit record: its stacks are defined */
    vt_tracefile_close();
    vt_file_end(&vt__w.file);   /* the compressed stream's frame ended */
    vt_file_close(&vt__w.file);
    vt_state_set_writer(VT_STATE_WRITER_FAILED);
    vt__out_unlock();
}

const char *vt_writer_path(void)
{
    return vt__w.file.path;
}

void vt_writer_fork_prepare(void)
{
    pthread_mutex_lock(&vt__w.start_lock);
    pthread_mutex_lock(&vt__w.out_lock);
    pthread_mutex_lock(&vt__w.coll_lock);
    vt_stepq_fork_prepare();
}

void vt_writer_fork_parent(void)
{
    vt_stepq_fork_parent();
    pthread_mutex_unlock(&vt__w.coll_lock);
    pthread_mutex_unlock(&vt__w.out_lock);
    pthread_mutex_unlock(&vt__w.start_lock);
}

void vt_writer_fork_child(void)
{
    pthread_mutex_init(&vt__w.start_lock, NULL);
    pthread_mutex_init(&vt__w.out_lock, NULL);
    pthread_mutex_init(&vt__w.coll_lock, NULL);
    vt_tracefile_fork_child();
    vt_stepq_fork_child();   /* the parent's queued steps are the parent's: dropped */
    /* the parent's file, inherited; only when the number still refers to it (the
     * program may have closed it and opened its own file at that number) */
    vt_file_close(&vt__w.file);
    vt__w.file.path[0] = 0;
    vt__w.thread_running = 0;
    vt__w.self_known = 0;
    vt__w.sig_pending = 0;
    vt__w.step_pending = 0;
    vt__w.stop = 0;
    vt__w.seq = 0;
    vt__w.last_changes = 0;
    vt__w.collected = 0;
    vt__next_record_complete();
    vt__w.oom_classes = 0;
    __atomic_store_n(&vt__marks_not_written, 0, __ATOMIC_RELAXED);   /* the parent's marks */
    vt__w.gap.active = 0;
    vt__w.gap.faults = vt__w.gap.resumed = 0;
    vt__w.file.err = 0;
    vt_encode_defs_clear(&vt__w.defs);
    vt_cap_reset(&vt__w.cap);   /* the parent's history; the child's file starts its own */
    if (vt__w.header) {
        free(vt__w.header);
        vt__w.header = NULL;
    }
    memset(vt__w.peak_written, 0, sizeof vt__w.peak_written);
    if (vt_state_writer() == VT_STATE_WRITER_OPEN)
        sem_destroy(&vt__w.wake);
    vt_state_set_writer(VT_STATE_WRITER_NONE);
}
