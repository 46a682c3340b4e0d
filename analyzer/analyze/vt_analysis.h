/* vt_analysis.h — turns loaded processes into per-site verdicts and totals.
 *
 * For each process: raw sites with the same trimmed stack (native and Python
 * frames; with python_only, the same Python frames), kind and device are
 * merged (their step series summed), classified with vt_classify, given a
 * stable id, projected to device exhaustion, and sorted biggest problem first:
 * leaks (by leaked bytes), churn, plateau, stable (each by peak bytes).
 * Definitions: docs/metrics.md. Single-threaded; a vt_analysis owns its results
 * but not the vt_runset it points into (free the analysis first).
 */
#ifndef VT_ANALYSIS_H
#define VT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "vt_model.h"
#include "vt_series.h"
#include "vt_symbolize.h"

typedef struct vt_site_result {
    vt_stack *stack;            /* trimmed frames (with python_only: the Python-only group stack) */
    int kind, device;
    int flags;                  /* VT_FLAG_* of the site */
    vt_site_stats st;
    uint64_t peak_bytes;        /* max live bytes (incl. within steps and at exit) */
    uint64_t unfreed_exit;      /* live in the exit record, bytes */
    int64_t exhaustion_step;    /* leak only, free memory known: step the device runs out; else -1
                                   (a leak cut by its own out-of-memory: that OOM's step) */
    int64_t oom_cut_step;       /* a leak whose growth stopped because one of its own allocations
                                   failed with out-of-memory: the step of that OOM (docs/metrics.md,
                                   "Verdicts"); else -1 */
    uint64_t *curve;            /* leak sites: live bytes per step (nsteps); owned; else NULL */
    char *title;                /* Python-named sites: the one-line name, the title frame's label and, while
                                   another site of the process starts the same, its Python callers
                                   ("train.py:56 in device_alloc <- train.py:95 in remember_batch", at most
                                   3 frames); owned; NULL: the title frame's label (vt_site_title) */
    char id[20];                /* "s" + 16 hex digits of (kind, device, module, build-id, offset...,
                                   then file, function, line, native index of each Python frame) */
} vt_site_result;

typedef struct vt_proc_result {
    vt_process *p;
    size_t warmup;              /* step slots skipped (vt_slots.h; steps when unbucketed) */
    uint64_t warmup_steps;      /* the steps those slots hold */
    vt_site_result *sites;
    size_t nsites;
    size_t count[VT_NVERDICTS]; /* by vt_verdict */
    size_t unfreed_sites;       /* sites with unfreed_exit > 0 */
} vt_proc_result;

typedef struct vt_analysis {
    vt_runset *rs;
    vt_proc_result *procs;
    size_t n;
    vt_symbolizer *sym;         /* owned */
    int python_only;            /* sites grouped by Python frames alone (vt_analyze_opts) */
} vt_analysis;

typedef struct vt_analyze_opts {
    long warmup;                /* steps; < 0: automatic (vt_auto_warmup) */
    int no_dwarf;               /* symbolize with snapshot names only */
    int python_only;            /* `--python-only`: show only Python frames, and merge the sites of
                                   stacks with the same Python frames (vt_pyview.h); stacks without
                                   Python frames keep their native frames */
} vt_analyze_opts;

/* Analyzes every process of rs with options o (warmup < 0: automatic,
 * vt_auto_warmup). Builds each stack's view (vt_pyview.h) first. Exits on OOM;
 * cannot fail. out owns what it holds until vt_analysis_free; rs must outlive it. */
void vt_analyze_ex(vt_runset *rs, const vt_analyze_opts *o, vt_analysis *out);
void vt_analysis_free(vt_analysis *a);

/* A process's imported memory still open (vt_process.imports), grouped by the
 * process that exported it: the process of the analysis whose exports hold the
 * import's digest (another process than p), exporter_pid 0 when none does (its
 * snapshots are not in the report). */
typedef struct vt_import_group {
    uint64_t exporter_pid;      /* 0: unknown */
    uint64_t bytes;             /* sum of the mappings' sizes */
    uint64_t mappings, opens;   /* mappings, and opens over them (the driver's counts) */
} vt_import_group;
/* Groups of p, biggest first: how many (at most p->nimports); *out is malloc'ed (free it). */
size_t vt_imports_by_exporter(const vt_analysis *a, const vt_process *p, vt_import_group **out);

/* Sum of leak slopes on device dev (bytes/step; region sites left out: their bytes
 * are their heap's) and the step at which its last
 * known free memory is used up (-1 unknown). */
double vt_device_leak_rate(const vt_proc_result *pr, int dev);
/* A region site's heap (kind region, model/vt_model.h heap_site): the merged site of
 * the allocation that holds its regions, and that allocation's address in *addr;
 * NULL when r is no region site or its heap is not known. */
const vt_site_result *vt_region_heap(const vt_proc_result *pr, const vt_site_result *r, uint64_t *addr);
int64_t vt_device_exhaustion_step(const vt_proc_result *pr, int dev);

/* The merged site of raw site s (after vt_analyze_ex), or NULL. */
vt_site_result *vt_result_of(const vt_proc_result *pr, const vt_rsite *s);

/* "rank 3, pid 1234 on node7" style process title into buf ("rank 3, restart 1, pid ..."
 * after an elastic restart). */
char *vt_process_title(const vt_process *p, char *buf, size_t cap);

#endif /* VT_ANALYSIS_H */
