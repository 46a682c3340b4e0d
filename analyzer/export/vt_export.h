/* vt_export.h — `vramtrace export`: snapshots in the formats other tools read.
 *
 *   torch      PyTorch memory snapshot pickle (protocol 4) for pytorch.org/memory_viz
 *              and torch.cuda._memory_viz (vt_export_torch.c)
 *   perfetto   Chrome trace-event JSON for ui.perfetto.dev / chrome://tracing
 *              (vt_export_perfetto.c)
 *   collapsed  folded stacks "root;...;leaf BYTES" for flamegraph.pl and
 *              speedscope (vt_export_collapsed.c)
 *
 * What snapshots can and cannot show is in docs/metrics.md "Exports": per-pointer
 * events exist only where a record carried its live list (exit, oom, signal,
 * manual); between those the exports show per-site and per-device totals per
 * step. The torch export needs the live lists: load with rs->keep_allocs = 1.
 *
 * All writers print to a stdio stream and return 0, or -1 with a message in
 * err (cap bytes) — a write failure, or for torch more than one process.
 * They only read the analysis (the symbolizer fills its cache). Single-threaded.
 */
#ifndef VT_EXPORT_H
#define VT_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "vt_analysis.h"

typedef enum vt_metric { VT_METRIC_LIVE, VT_METRIC_LEAKED, VT_METRIC_PEAK } vt_metric;

int vt_export_torch(FILE *f, vt_analysis *a, char *err, size_t cap);
int vt_export_perfetto(FILE *f, vt_analysis *a, char *err, size_t cap);

/* live: bytes live at the last step; leaked: leaked bytes of leak sites;
 * peak: each site's own peak. Sites with 0 bytes are left out. */
int vt_export_collapsed(FILE *f, vt_analysis *a, vt_metric m, char *err, size_t cap);

/* The frame name used by exports: the function (C++: without parameters), else
 * the one-line label ("libx.so+0x1f2"); a Python frame's label
 * ("train.py:95 in remember_batch"). Never NULL. */
const char *vt_export_frame_name(const vt_sym *s);

#endif /* VT_EXPORT_H */
