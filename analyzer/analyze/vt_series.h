/* vt_series.h — the step-curve math of docs/metrics.md: floor, Theil–Sen slope,
 * warm-up, and the per-site verdict (leak / plateau / churn / stable).
 *
 * Inputs are dense per-step arrays of one site (index i = i-th step present in
 * the run; x = the program's step number): live bytes at the step's last
 * snapshot, the highest live bytes seen during the step, and the frees the site
 * made during the step. Pure functions: no global state, thread-safe; the only
 * allocation is scratch memory freed before returning (vt_xmalloc: exits on OOM).
 */
#ifndef VT_SERIES_H
#define VT_SERIES_H

#include <stddef.h>
#include <stdint.h>

/* The exact rules are in docs/metrics.md "Verdicts" and vt_classify. */
typedef enum vt_verdict {
    VT_STABLE = 0,   /* constant after its first step */
    VT_PLATEAU,      /* floor grew, then stopped (warm-up, caches) */
    VT_CHURN,        /* memory given back and taken again (temporaries, sawtooth, batched frees) */
    VT_LEAK,         /* floor keeps rising through the steady phase, or through its last
                        VT_LATE_LEAK_STEPS steps (a leak that starts late) */
    VT_TRANSIENT,    /* held only inside at most VT_TRANSIENT_STEPS steps, then given back */
    VT_TOO_FEW,      /* too few steps after warm-up to tell leak, plateau and stable apart */
    VT_NVERDICTS
} vt_verdict;

/* A site whose floor rose at each of its last VT_LATE_LEAK_STEPS steps (and so is
 * still rising at the last one) is a leak, whatever part of the run that covers. */
#define VT_LATE_LEAK_STEPS 8
/* A site whose memory was held (live or peak above 0) in at most this many steps
 * and is given back by the last one is transient. */
#define VT_TRANSIENT_STEPS 2

/* "stable", "plateau", "churn", "leak", "transient", "too_few_steps". */
const char *vt_verdict_name(vt_verdict v);
/* The verdict as prose for text output: the name, "too few steps" for VT_TOO_FEW. */
const char *vt_verdict_label(vt_verdict v);

/* Automatic warm-up for n steps: round(n/10) clamped to [1, 100]; 0 when n < 4. */
size_t vt_auto_warmup(size_t n);
/* The fewest steps after warm-up with which a site can be called a leak
 * (vt_classify): a process with fewer judges nothing ("too few steps to judge"). */
#define VT_JUDGE_MIN_STEPS 4

/* floor[i] = min(v[i..n-1]) — the suffix minimum, non-decreasing. */
void vt_suffix_min(const uint64_t *v, size_t n, uint64_t *floor);

/* Theil–Sen slope: the median of (y[j]-y[i])/(x[j]-x[i]) over pairs i<j with
 * x[j] != x[i]. For n > VT_TS_MAX_POINTS the points are first thinned to
 * VT_TS_MAX_POINTS evenly spaced ones (exact for n below). 0 when n < 2. */
#define VT_TS_MAX_POINTS 256
double vt_theil_sen(const double *x, const double *y, size_t n);

typedef struct vt_series {
    const uint64_t *step;   /* step numbers, increasing */
    const uint64_t *live;   /* bytes */
    const uint64_t *peak;   /* bytes, >= live; NULL = same as live */
    const uint32_t *nfree;  /* frees during the step; NULL = unknown (0) */
    size_t n;
    int bucketed;           /* entries are slots of several steps (vt_slots.h): live is the least,
                               peak the most over a slot's steps, nfree also counts its steps'
                               give-backs; a slot gave memory back when nfree > 0 or its live bytes
                               are below the previous slot's */
} vt_series;

typedef struct vt_site_stats {
    vt_verdict verdict;
    size_t warmup;              /* steps skipped */
    double slope;               /* Theil–Sen slope of the floor after warm-up, bytes/step */
    uint64_t leaked_bytes;      /* leak: floor(end) - floor(first step after warm-up); else 0 */
    int has_first_growth;
    uint64_t first_growth_step; /* first step whose whole-run floor is above the previous one */
    int first_growth_in_warmup; /* 1: that step is one of the warm-up's (before judged_from_step), whose
                                   rises are not judged */
    uint64_t judged_from_step;  /* the first step after warm-up: floor_start's, where judging begins */
    int has_first_judged_growth;
    uint64_t first_judged_growth_step; /* first step after judged_from_step whose floor rose (the first
                                          of the rises counted) */
    uint32_t rises;             /* steps after warm-up where the floor rose */
    uint32_t churn_events;      /* steps after warm-up giving memory back (see docs/metrics.md) */
    uint64_t floor_start, floor_end;   /* floor at the first step after warm-up, at the end */
    uint64_t peak_bytes;        /* max of live and peak */
    uint64_t last_live;         /* live bytes at the last step */
} vt_site_stats;

/* Classifies one site. warmup < 0: vt_auto_warmup(n); otherwise clamped to n-1. */
void vt_classify(const vt_series *s, long warmup, vt_site_stats *out);

/* Step at which free_bytes would be used up growing slope bytes/step from
 * last_step: last_step + ceil(free_bytes / slope). -1 when slope <= 0. */
int64_t vt_exhaustion_step(uint64_t last_step, uint64_t free_bytes, double slope);

#endif /* VT_SERIES_H */
