/* vt_site_view.h — how a site is presented, shared by every output (text, JSON
 * and HTML reports, check, diff, the exports): the frames shown and their order,
 * the frame and one-line name that title a site, the PyTorch line of a device,
 * sparklines.
 *
 * Pure presentation over an analysis (vt_analysis.h): nothing here changes it but
 * the symbolizer's cache. Strings returned point into the analysis (valid until
 * vt_analysis_free) or into the caller's buffer. Single-threaded.
 */
#ifndef VT_SITE_VIEW_H
#define VT_SITE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "vt_analysis.h"

/* The i-th shown frame of a site, innermost first, or NULL past the end: the
 * stack's view (vt_pyview.h) — trimmed native frames with the Python frames
 * interleaved, a Python frame being a vt_sym with python = 1. */
const vt_sym *vt_site_frame(vt_analysis *a, const vt_site_result *r, uint32_t i);

/* The number of shown frames of a site. */
uint32_t vt_site_nframes(const vt_site_result *r);

/* The index of the frame that names the site (the innermost Python frame
 * outside vramtrace's package, else 0; vt_pyview.h), and the site's one-line
 * name: vt_site_result.title when set, else that frame's label ("(no frames)"
 * for an empty stack). */
uint32_t vt_site_title_index(const vt_site_result *r);
const char *vt_site_title(vt_analysis *a, const vt_site_result *r);

/* One line about device dv's PyTorch caching-allocator gauges (annotations,
 * docs/metrics.md "PyTorch"): "PyTorch allocated 1.0 GiB, reserved 2.0 GiB:
 * 1.0 GiB reserved but not allocated (max 1.2 GiB), inactive split 12 MiB;
 * the driver saw 2.1 GiB live" (the parts that are known). Returns 1 with the
 * line in buf, or 0 (buf "") when the device has no torch numbers. */
int vt_torch_line(const vt_device *dv, char *buf, size_t cap);

/* One part of a peak composition as the reports show it: an analysed site and its
 * live bytes at the moment of the peak. */
typedef struct vt_peak_part {
    vt_site_result *r;          /* NULL: a site the analysis does not list */
    uint64_t bytes;
} vt_peak_part;

/* The sites of pc merged by analysed site (vt_result_of: stacks that show alike are
 * one site), bytes descending, into out (room for VT_PEAKCOMP_MAX). Returns the count. */
size_t vt_peak_parts(const vt_proc_result *pr, const vt_peakcomp *pc, vt_peak_part *out);

/* "at the peak (897 MiB, step 12): 300 MiB peak_only_buffer, 256 MiB alloc_weights,
 * 12 MiB in 3 other sites" naming at most `most` sites (the rest summed with pc's
 * other sites) into buf. Returns 1, or 0 (buf "") when pc is absent. */
int vt_peak_line(vt_analysis *a, const vt_proc_result *pr, const vt_peakcomp *pc, size_t most, char *buf,
                 size_t cap);

/* How p's steps were cut, for the reports: "marked by vramtrace_step", "marked by NVTX
 * ranges train_step" (the header's step_range), or "cut by the snapshot interval";
 * into buf, returned. */
const char *vt_steps_how(const vt_process *p, char *buf, size_t cap);

/* When p was run with --step-range (its header's step_range) and no range of that
 * name ever ended (no snapshot marked a step): "--step-range NAME never matched an
 * NVTX range (0 range ends seen): ..." into buf, returning 1; else buf "" and 0. */
int vt_step_range_unmatched(const vt_process *p, char *buf, size_t cap);

/* A site that never held memory (every call of it failed, e.g. a too-large probe an
 * OOM names, or freed before any snapshot saw it): its verdict is stable, but the
 * reports count it apart and list it under no verdict. */
int vt_site_never_held(const vt_site_result *r);
/* How many of pr's sites of verdict v are listed under it (those that held memory). */
size_t vt_sites_listed(const vt_proc_result *pr, vt_verdict v);

/* A process with no step at all (0 steps): no site of it is judged; its sites that
 * held memory have verdict too_few_steps, which every output then words as
 * VT_NO_STEPS_LABEL. */
#define VT_NO_STEPS_LABEL "no steps: not judged"
int vt_process_no_steps(const vt_process *p);

/* The reports' step convention (docs/metrics.md "Step numbers"): step N is the Nth
 * step, in progress from the (N-1)th mark to the Nth; a curve's point "at the end of
 * step N" is the step snapshot the Nth mark writes. A record's `step` counts the
 * steps completed when it was taken, so a moment inside a step (an out-of-memory
 * event, a labelled snapshot or NVTX mark) happened during step rec_step + 1, which
 * this returns; the peak's composition already carries the step in progress. */
uint64_t vt_during_step(uint64_t rec_step);
/* A site's verdict in words: vt_verdict_label, or VT_NO_STEPS_LABEL for a site of a
 * process with no steps that is too_few_steps. Static text. */
const char *vt_site_verdict_label(const vt_proc_result *pr, const vt_site_result *r);

/* Where a site's growth began, in the words every output uses: the first step whose
 * end floor (docs/metrics.md) rose above the step before's, which is not the first step
 * the site allocated in (that step's allocation is the floor the rise is measured from).
 * "floor first rose at step 12" when that is at or after the first judged step (the
 * end of warm-up); "floor first rose at step 2 (during warm-up; judged from step 5)"
 * when it first rose during the warm-up, whose steps are not judged. Without lead, the
 * same from "step" on (a table column headed "floor first rose at"). Into buf,
 * returned; "" when the floor never rose (st->has_first_growth 0). */
const char *vt_growth_since(const vt_site_stats *st, int lead, char *buf, size_t cap);

/* Where a leak's "leaked" figure counts from, in words: "since step S (the end of
 * warm-up)" with S its last warm-up step, or "since step S (its first step; no
 * warm-up)". Into buf, returned. */
const char *vt_leaked_since(const vt_site_stats *st, char *buf, size_t cap);

/* A leak warning the preload printed while the process ran (vt_livewarn), named by
 * the site's resolved title as the report names it (function (file:line) where DWARF
 * knows it; the preload's own line can only name the ELF symbol or module+offset):
 * "possible leak: remember_batch (training_loop.cu:78) growing 3 MiB/step (39 steps
 * in a row by step 40) (device, device 0)": the growth as the first complete snapshot
 * that listed the warning had it (the preload printed its line when the count reached
 * its leak_steps, perhaps earlier). Into buf, returned. */
const char *vt_livewarn_text(vt_analysis *a, const vt_proc_result *pr, const vt_livewarn *w, char *buf, size_t cap);

/* Unicode block sparkline of v[0..n-1] in at most width cells (bucket maxima,
 * scaled 0..max) into buf (cap >= 3*width+1). */
char *vt_sparkline(const uint64_t *v, size_t n, size_t width, char *buf, size_t cap);

#endif /* VT_SITE_VIEW_H */
