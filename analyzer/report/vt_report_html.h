/* vt_report_html.h — the data of the interactive HTML report.
 *
 * `report --format html` writes one JSON object into the page
 * (<script type="application/json" id="vt-data">); the page's scripts
 * (analyzer/report/html/, compiled in: vt_html_assets.h) draw every view from it.
 * Its shape (all sizes in bytes, steps as the process's step numbers):
 *   {"version": 1, "generator": "vramtrace X.Y.Z",
 *    "procs": [ {"title", "cmdline", "file", "rank" (or null), "steps" (count),
 *                "peak_bytes", "unfreed_exit_bytes" (or null: no exit record),
 *                "sites": [ {"id", "title", "verdict", "kind", "device"} ... ],
 *                <the keys each view's part builder adds> } ... ],
 *    <the keys of the views across processes> }
 * A view refers to a site by its index in its process's "sites" (the analysis order:
 * leaks first). Reduced before it is written: no array grows with the number of
 * steps beyond the analysis's step slots (vt_slots.h), so the page stays small
 * whatever the run's length.
 * Single-threaded; the analysis is read only (symbolization fills its cache).
 */
#ifndef VT_REPORT_HTML_H
#define VT_REPORT_HTML_H

#include <jansson.h>

#include "vt_analysis.h"

/* A page keeps every view of at most VT_HTML_FULL_PROCS processes: with more, the
 * ones that matter most (an out-of-memory event, then the most leaking sites, then
 * the largest peak; ties in input order) keep them, the others keep their title,
 * figures and site list ("reduced": true; static section: one line saying how to
 * report it alone), so the page stays bounded whatever the number of ranks. The
 * summary across processes and the many-processes view cover all of them. */
#define VT_HTML_FULL_PROCS 16

/* full[i] = 1 when process i keeps every view (full: a->n bytes). Returns how many. */
size_t vt_html_full_procs(const vt_analysis *a, unsigned char *full);

/* The whole data object (a new reference), or NULL when out of memory. */
json_t *vt_html_data(vt_analysis *a);

/* Part builders, one per view: each adds its own keys to the process object proc
 * (the index of pr in a->procs is pi) or, for the views across processes, to the
 * top object. They return 0, or -1 when out of memory. */
/* "flame": the flame graph's tree of stacks and per-site values (vt_html_flame.c). */
int vt_html_flame(vt_analysis *a, size_t pi, json_t *proc);
/* "ooms", "ooms_more": each out-of-memory event with its address map (vt_html_oom.c). */
int vt_html_oom(vt_analysis *a, size_t pi, json_t *proc);
/* "ranks" (top object, more than one process): the process x site growth matrix
 * (vt_html_ranks.c). */
int vt_html_ranks(vt_analysis *a, json_t *root);

/* The timeline view: "timeline" (vt_html_timeline.c). */
int vt_html_timeline(vt_analysis *a, size_t pi, json_t *proc);
/* The event trace beside the stream, when whole: the timeline views' exact band
 * ("band_source": "trace"; vt_html_trace.c). After vt_html_timeline. */
int vt_html_trace(vt_analysis *a, size_t pi, json_t *proc);
/* The site panel: the process's "frames" and "curve_step", each site's stack, curve,
 * figures and rule (vt_html_sites.c). */
int vt_html_sites(vt_analysis *a, size_t pi, json_t *proc);
/* The site panel across processes: "same_sites" (vt_html_sites.c). */
int vt_html_same_sites(vt_analysis *a, json_t *root);

#endif /* VT_REPORT_HTML_H */
