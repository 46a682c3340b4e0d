/* vt_check.h — `vramtrace check`: CI gates over an analysis (options in
 * usage() of vt_main.c; exit status 0 pass, 1 a gate failed, 2 unreadable input or
 * an unwritable --junit file, 3 inconclusive).
 *
 * Gates, each judged per process (README.md "In CI"):
 *   readable  (once per run) snapshot files of a named folder that could not be read
 *             (no header, a broken record) fail: a process in them was not judged;
 *             unless allow_unreadable;
 *   traced    a process that made allocation calls of which none succeeded fails
 *             ("nothing was traced": no GPU, or no CUDA runtime on the library path);
 *   complete  a process without an exit record (killed, `_exit`, crashed) fails,
 *             naming the live bytes of its last snapshot, unless allow_incomplete;
 *   gaps      (only for a process whose stream has "gap" records) records the writer
 *             could not write (disk full, EIO, the file removed) fail, naming the
 *             steps and the error, unless allow_gaps;
 *   oom       a process with an out-of-memory failure fails, unless allow_oom;
 *   steps     a process with fewer than VT_JUDGE_MIN_STEPS steps after warm-up is
 *             inconclusive (nothing could be called a leak), unless it exited with
 *             nothing unfreed (no verdict could change what it kept), or allow_short;
 *   leak      a leak site whose growth (Theil–Sen slope of its floor) is above
 *             max_growth bytes/step fails (default 0: any leak verdict fails);
 *   unfreed   unfreed-at-exit bytes above max_unfreed fail (when set);
 *   peak      a peak above max_peak fails (when set);
 *   peak_increase  a peak more than max_peak_increase percent above the matching
 *             process of the baseline run (matched by rank when both have ranks,
 *             else by order; if the process counts differ and there are no ranks,
 *             the largest peaks are compared; with a baseline only).
 * The result is 1 when any gate failed, else 3 when any was inconclusive, else 0.
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
    int allow_incomplete;       /* a process without an exit record passes "complete" */
    int allow_oom;              /* out-of-memory failures pass "oom" */
    int allow_short;            /* too few steps passes "steps" */
    int allow_unreadable;       /* skipped files pass "readable" */
    int allow_gaps;             /* records lost to write faults pass "gaps" */
    FILE *junit;                /* write the JUnit XML file here and close it (NULL: none) */
    const char *junit_path;     /* its name, for messages */
} vt_check_opts;

enum { VT_CHECK_PASS = 0, VT_CHECK_FAILED = 1, VT_CHECK_ERROR = 2, VT_CHECK_INCONCLUSIVE = 3 };

/* Evaluates the gates; prints one paragraph per failed or inconclusive gate
 * (naming the site's top frames and numbers) and a closing line to out, and the
 * JUnit file (vt_junit.h) when o->junit is set. base may be NULL (no baseline). Returns
 * VT_CHECK_PASS, _FAILED, _INCONCLUSIVE, or _ERROR when the JUnit file cannot be
 * written (said on stderr). */
int vt_check(vt_analysis *a, vt_analysis *base, const vt_check_opts *o, FILE *out);

#endif /* VT_CHECK_H */
