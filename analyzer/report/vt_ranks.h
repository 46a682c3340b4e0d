/* vt_ranks.h — the cross-process summary of a report with more than one process
 * (the ranks of a distributed job, or any processes read together): what leaks,
 * runs out of memory or peaks on several processes, said once.
 *
 * Matching: a site of one process is the same as a site of another when its kind and
 * its shown frames (vt_site_frame labels, from the title frame on) are the same; the
 * device is not part of the match, so one process's same site on several devices is
 * one entry whose figures are summed over them. An OOM is matched by its failing
 * call's site (the API name when the site is unknown).
 * Ownership: a vt_rank_summary owns its arrays; labels point into the analysis, which
 * must outlive it. Single-threaded.
 */
#ifndef VT_RANKS_H
#define VT_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "vt_analysis.h"

/* One matched site over the processes where it leaks (or fails with out-of-memory). */
typedef struct vt_xsite {
    const char *label;          /* the title frame's label (vt_site_title), or the OOM's API */
    int kind;                   /* vt_kind */
    size_t nprocs;
    size_t nranks;              /* distinct ranks among them (a restarted rank counts once);
                                   nprocs when some process has no rank */
    size_t *procs;              /* indices into vt_analysis.procs, ascending; owned */
    double *rate;               /* leaks: bytes/step of each process (sum over its devices); owned */
    uint64_t *bytes;            /* leaks: leaked bytes of each process; ooms: events; owned */
    double rate_min, rate_max;  /* leaks: over the processes */
    uint64_t events;            /* ooms: events in all */
    uint64_t first_step;        /* ooms: the earliest step of one */
} vt_xsite;

typedef struct vt_rank_summary {
    size_t nprocs;              /* processes of the analysis */
    int all_ranked;             /* every process has a rank: "of 64 ranks", else "of 3 processes" */
    size_t nranks;              /* distinct ranks when all_ranked (restarts count once), else nprocs */
    vt_xsite *leaks; size_t nleaks;   /* most ranks first, then the fastest */
    vt_xsite *ooms; size_t nooms;     /* most ranks first, then the most events */
    size_t peak_max_proc, peak_min_proc;   /* indices of the largest and the smallest peak */
} vt_rank_summary;

/* The match key of a site (see Matching above): its kind and the labels of its shown
 * frames from the title frame on, one string; malloc'ed (free it). Exits on OOM. */
char *vt_rank_site_key(vt_analysis *a, const vt_site_result *r);

/* Builds the summary of a (any number of processes; the reports print it when a->n > 1). */
void vt_rank_summary_build(vt_analysis *a, vt_rank_summary *s);
void vt_rank_summary_free(vt_rank_summary *s);

/* The processes procs[0..n) of a as a compressed list into buf: "ranks 0-7, 12"
 * (a restarted rank as "3 (restart 1)"), "rank 3", "pids 100, 101" for processes
 * without a rank, both when mixed; at most about cap bytes, ending "... (N more)"
 * when cut. Returns buf. */
char *vt_rank_list(const vt_analysis *a, const size_t *procs, size_t n, char *buf, size_t cap);

#endif /* VT_RANKS_H */
