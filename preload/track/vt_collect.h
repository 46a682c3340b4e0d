/* vt_collect.h — a snapshot of the core's state (vt_core_collect), as the writer,
 * the Prometheus textfile and the site deltas read it (included by vt_core.h).
 * Units: bytes and nanoseconds. Ownership: the arrays of a vt_collect are the
 * caller's, released with vt_collect_free.
 */
#ifndef VT_COLLECT_H
#define VT_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include "vt_format.h"

/* Devices: CUDA ordinals 0..VT_MAX_DEVICES-1, -1 unknown; a device slot is
 * ordinal + 1, slot 0 is device -1. */
#define VT_MAX_DEVICES 64
#define VT_DEV_SLOTS   (VT_MAX_DEVICES + 1)

typedef struct vt_kind_stats {
    uint64_t live_bytes, live_count, peak_bytes;
    uint64_t alloc_total, free_total, failed_total, alloc_bytes_total;
    uint64_t oom_total;           /* failed with out-of-memory (subset of failed_total) */
} vt_kind_stats;

typedef struct vt_dev_stats {
    int           device;
    int           meminfo_known, pool_known;
    uint64_t      free_bytes, total_bytes;
    uint64_t      meminfo_changes;         /* vt_collect.changes when free/total were
                                              read: equal to the copy's changes = no
                                              allocation or free since              */
    uint64_t      live_bytes, peak_bytes;
    uint64_t      pool_reserved_bytes, pool_used_bytes;
    int           graph_known;             /* the graph pool was read              */
    uint64_t      graph_reserved_bytes, graph_used_bytes; /* the device's graph pool */
    double        fragmentation;           /* < 0: not computed                    */
    vt_kind_stats kinds[VT_KIND_COUNT];
} vt_dev_stats;

typedef struct vt_site_row {
    uint32_t id;                           /* the site's id: 1, 2, ... per process, never reused */
    uint32_t stack;
    int      kind, device;
    int      flags;                        /* VT_FLAG_* of the site                */
    uint64_t live_bytes, live_count, interval_peak_bytes;
    uint64_t alloc_total, alloc_bytes_total, free_total;
    uint32_t growth_steps;
    uint64_t growth_bytes;
    int      leak_warn;                    /* at/above the leak threshold          */
    int      leak_new;                     /* crossed it in this collection        */
} vt_site_row;

/* What was live at a peak (vt_peak.c): the sites holding the most bytes at the
 * moment a total reached a new peak, kept with hysteresis (vt_core_peak_sites). */
#define VT_PEAK_TOP     16             /* sites named; the rest summed as "other"   */
#define VT_PEAK_PROCESS (-2)           /* vt_peak_comp.device of the process's      */

typedef struct vt_peak_site {
    uint32_t id;                           /* the site's id (as vt_site_row.id)     */
    uint32_t stack;
    int16_t  kind, device;                 /* kind without its flags                */
    int16_t  flags;                        /* VT_FLAG_* of the site                 */
    uint64_t bytes;                        /* its live bytes at the moment          */
} vt_peak_site;

typedef struct vt_peak_comp {
    int          device;                   /* CUDA ordinal, -1 unknown, or
                                              VT_PEAK_PROCESS (every device)        */
    uint32_t     n;                        /* entries of top, bytes descending      */
    uint64_t     gen;                      /* 1, 2, ... per copy; 0: none yet       */
    uint64_t     bytes;                    /* the total at the moment (the peak)    */
    uint64_t     time_ns;                  /* CLOCK_MONOTONIC of the moment         */
    uint64_t     step;                     /* the step in progress: the number its
                                              step snapshot carries                 */
    uint64_t     other_bytes;              /* live bytes of the sites not in top    */
    uint32_t     other_sites;              /* how many such sites held bytes        */
    vt_peak_site top[VT_PEAK_TOP];
} vt_peak_comp;

typedef struct vt_alloc_row {              /* docs/snapshot-format.md "allocations" */
    uint64_t addr, size;
    int      kind, device;
    int      flags;                        /* VT_FLAG_* of its site                */
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
    vt_peak_comp *peaks;    size_t n_peaks;   /* owned; the compositions taken so far
                                              (gen > 0), the process's first, then
                                              by device slot                         */
} vt_collect;

/* Copies the state for one snapshot (flags: VT_COLLECT_*), resets each site's
 * interval peak, and on VT_COLLECT_STEP advances the leak detector (threshold
 * leak_steps). Sites listed: live > 0, changed since the previous collection, or at
 * the leak threshold.
 *
 * Ring: unless VT_COLLECT_APPLIED, the first hold of the lock applies every event
 * claimed before the call, so the copy includes every allocation and free that
 * returned before it; later holds apply none.
 *
 * Consistency: the step, counters, device x kind totals and site rows are copied in
 * ONE hold of the core lock (one instant). Allocation rows (VT_COLLECT_ALLOCS) are
 * copied afterwards, several record slabs per hold, a hold ending once it has lasted
 * VT_COLLECT_HOLD_NS, the lock released between holds. VT_COLLECT_FRAG without
 * VT_COLLECT_ALLOCS brings the kept fragmentation set up to date from the journal
 * taken in the first hold (c->frag_from_journal = 1), or, with no kept set, copies
 * only (start, size, device) of each allocation the same chunked way and loads the
 * set from them. Each row or range is one allocation's state at one instant; an
 * allocation live during the whole collection is listed exactly once; one allocated
 * or freed during the copy may or may not be (the rows can then differ from the
 * totals by those allocations).
 *
 * Returns 0, or -1 (no memory for the site copy: *c is empty). When only the rows or
 * ranges cannot get memory: 0 with c->rows_failed = 1 (fragmentation then < 0).
 * c->lock_hold_max_ns: the longest hold. */
int  vt_core_collect(vt_collect *c, unsigned flags, int leak_steps);
/* One device's totals as a collection copies them (vt_dev_stats: meminfo, live and
 * peak bytes, pool and graph figures, per-kind counters; fragmentation < 0), in one
 * hold of the core lock after the ring's pending events are applied (the state of
 * that instant), without site rows and without touching any interval figure or the
 * leak detector. Returns 1; 0 when the device had no activity yet (*d is zero but
 * for device: nothing tracked there); -1 when not known (tracking is off, or this
 * thread may not take the lock: it is inside the core). Any thread outside the hooks;
 * keeps errno. */
int  vt_core_dev_totals(int device, vt_dev_stats *d);
/* Frees c's arrays; c is left empty. */
void vt_collect_free(vt_collect *c);

/* Background upkeep of the kept fragmentation set, for the writer thread after each
 * drain: once the journal holds VT_FJ_KEEP entries (an eighth of the live count plus
 * 8,192) or more, takes it (one short hold of the core lock) and merges it into the
 * set without the lock. Does nothing while a collection holds the set or when there
 * is none (made by the first collection with VT_COLLECT_FRAG, dropped by one
 * without). Out of memory: the set is dropped (the next collection copies the live
 * list again). Thread-safe; blocks on nothing but the core lock. */
void vt_core_frag_keep(void);

/* Fragmentation of n [addr, addr+size) ranges: 1 - largest gap / sum of gaps between
 * consecutive ranges sorted by address; 0 with no gap. Sorts ranges in place
 * (vt_frag.c; docs/metrics.md "fragmentation"). */
double vt_fragmentation(uint64_t (*ranges)[2], size_t n);

#endif /* VT_COLLECT_H */
