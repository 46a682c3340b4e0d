/* vt_check.h — `vramtrace check`: CI gates over an analysis (options in
 * usage() of vt_main.c; exit status 0 pass, 1 a gate failed, 2 unreadable input).
 *
 * Limits (bytes): a leak site whose growth (Theil–Sen slope of its floor) is
 * above max_growth bytes/step fails — the default max_growth is 0, so any leak
 * verdict fails; a process whose unfreed-at-exit bytes exceed max_unfreed; a
 * process whose peak exceeds max_peak; a process whose peak is more than
 * max_peak_increase percent above the matching process of the baseline run
 * (matched by rank when both have ranks, else by order; if the process counts
 * differ and there are no ranks, the largest peaks are compared). Always: a
 * process that made allocation calls of which none succeeded fails ("nothing was
 * traced": no GPU, or no CUDA runtime on the library path), so a CI job on a
 * machine without a device cannot pass silently.
 * Single-threaded.
 */
#ifndef VT_CHECK_H
#define VT_CHECK_H

#include <stdio.h>

#include "vt_analysis.h"

typedef struct vt_check_opts {
    uint64_t max_growth;        /* bytes/step; default 0 */
    int has_max_unfreed;
    uint64_t max_unfreed;       /* bytes */
    int has_max_peak;
    uint64_t max_peak;          /* bytes */
    int has_max_peak_increase;
    double max_peak_increase;   /* percent */
} vt_check_opts;

/* Evaluates the limits; prints one line per failure (naming the site's top
 * frames and numbers) or a one-line pass to out. base may be NULL (no baseline).
 * Returns 0 (pass) or 1 (a limit failed). */
int vt_check(vt_analysis *a, vt_analysis *base, const vt_check_opts *o, FILE *out);

#endif /* VT_CHECK_H */
