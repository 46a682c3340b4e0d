/* vt_prom.h — the Prometheus node_exporter textfile of one process
 * (VRAMTRACE_PROMETHEUS=DIR -> DIR/vramtrace_<host>_<pid>.prom; <host>: the host name
 * with every character other than [A-Za-z0-9.-] written as _, so that two containers
 * whose processes are both pid 1 can share one collector folder).
 *
 * Format: Prometheus text exposition format 0.0.4, as node_exporter's textfile
 * collector reads it (--collector.textfile.directory): every family has HELP and TYPE
 * lines, its samples follow together, no timestamps, base units (`_bytes`), counters
 * end in `_total`. Labels: `pid` on every sample (node_exporter merges every *.prom
 * file, so each process needs its own label set), `rank` on every sample when the
 * process's $RANK is a whole number (as the snapshot header's "rank"), `gpu` (CUDA ordinal as a string) and
 * `UUID` ("GPU-..."), spelled as dcgm-exporter spells them so a query can join on
 * them, and `kind` (device|managed|host_pinned|async|vmm). No addresses and no stack
 * ids: the cardinality is devices x kinds. The metric list is in preload/README.md.
 *
 * Writing: the text is built in memory, written to DIR/.vramtrace_<host>_<pid>.prom.tmp
 * (whatever was at that name unlinked first, then created O_CREAT|O_EXCL|O_NOFOLLOW,
 * 0644) and renamed over DIR/vramtrace_<host>_<pid>.prom, so
 * the collector sees the old file or the new one, never a part (the dot keeps the
 * temporary name out of node_exporter's "*.prom" glob). At exit the file is written
 * one last time with vramtrace_up 0 and the unfreed bytes, and kept. A failure prints
 * one "vramtrace:" warning and the textfile is given up; tracking goes on.
 *
 * Thread safety: every function but vt_prom_render takes vt__prom.lock; the file is
 * written under it (a few KiB), never under the core lock nor while vt_host.h's lock
 * is held.
 */
#ifndef VT_PROM_H
#define VT_PROM_H

#include <stdint.h>
#include "vt_buf.h"
#include "vt_core.h"
#include "vt_host.h"

/* One device of a textfile (a snapshot's figures, prepared by vt_prom_snapshot). */
typedef struct vt_prom_dev {
    int      device;                       /* CUDA ordinal, -1 unknown             */
    char     uuid[48];                     /* "GPU-..." or ""                       */
    vt_kind_stats kinds[VT_KIND_COUNT];    /* live/peak/alloc/free/failed counters  */
    int      used_known;                   /* device used/total known              */
    uint64_t used_bytes, total_bytes;      /* NVML memory info, else cuMemGetInfo  */
    int      untracked_known;
    int64_t  untracked_bytes;              /* used - tracked of one moment: NVML's
                                              sample, or cuMemGetInfo's reading when
                                              nothing was allocated or freed since;
                                              may be < 0 (managed memory NVML does
                                              not count on the device)              */
    int      proc_known;
    uint64_t proc_used_bytes;              /* NVML: this process on this device     */
    uint64_t tracked_bytes;                /* vt_host_tracked_bytes of the snapshot */
    int      meminfo_known;                /* cuMemGetInfo figures of the snapshot */
    int      meminfo_current;              /* ... read with no allocation or free
                                              since (comparable with tracked_bytes) */
    uint64_t meminfo_free, meminfo_total;
    int      pool_known;
    uint64_t pool_reserved_bytes, pool_used_bytes;
    double   fragmentation;                /* < 0: not computed                     */
    uint64_t growth_bytes_per_step;        /* fastest-growing site on this device  */
    uint32_t growth_steps;                 /* ... and for how many steps           */
    uint32_t leak_warnings;                /* sites at/above VRAMTRACE_LEAK_STEPS  */
} vt_prom_dev;

typedef struct vt_prom_snap {
    int         pid;
    int         has_rank;                  /* $RANK is a whole number >= 0          */
    int64_t     rank;                      /* ... its value (torchrun, Slurm wrappers) */
    int         up;                        /* 0 on the exit write                   */
    int         at_exit;                   /* unfreed bytes are written             */
    uint64_t    step;
    uint64_t    written_unix_ms;           /* CLOCK_REALTIME of the write (set by it) */
    uint64_t    written_mono_ns;           /* CLOCK_MONOTONIC of the same (set by it) */
    uint64_t    nvml_ns;                   /* CLOCK_MONOTONIC of the NVML sample the
                                              figures hold; 0 none                  */
    int         n_devs;
    vt_prom_dev devs[VT_DEV_SLOTS];
} vt_prom_snap;

/* 1 when VRAMTRACE_PROMETHEUS is set (and the textfile was not given up). */
int  vt_prom_enabled(void);

/* After a snapshot record (vt_writer.c, under its output lock): makes the snapshot's
 * figures (c: the core's copy; h: its host sample, NVML figures preferred to
 * cuMemGetInfo's) the latest. at_exit: the exit snapshot (vramtrace_up 0, unfreed
 * bytes). write_now: write the file now (writer thread, exit); otherwise the writer
 * thread's next vt_prom_flush writes it, so a thread that marks steps never writes the
 * textfile itself. */
void vt_prom_snapshot(const vt_collect *c, const vt_host_sample *h, int at_exit, int write_now);

/* Writer thread, after a vt_host_tick that sampled: refreshes the NVML-derived
 * figures and the UUIDs of the latest figures between snapshots. No-op before the
 * first snapshot and after the exit write. */
void vt_prom_host_refresh(void);

/* Writes the file if the latest figures are not on disk yet (writer thread). */
void vt_prom_flush(void);

/* Renders s in the exposition format into b (for tests and the file). Pure. */
void vt_prom_render(vt_buf *b, const vt_prom_snap *s);

/* Fork child step (interpose/vt_lifecycle.c): forgets the parent's figures and
 * re-initialises the lock. */
void vt_prom_after_fork_child(void);

#endif /* VT_PROM_H */
