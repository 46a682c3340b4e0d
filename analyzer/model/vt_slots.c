/* vt_slots.c — step slots (contract in vt_slots.h).
 *
 * Design: a site's series is run-length encoded over slots (vt_point.step is a
 * slot index), so merging pairs of slots walks each site's points once: the
 * merged value of new slot j depends only on the old values at 2j-1 (for the
 * give-back into 2j, when slots are single steps), 2j and 2j+1, which can differ
 * from those of new slot j-1 only where an old point lies in 2j-2 .. 2j+1; so
 * only new slots k/2 and k/2+1 of each old point k are evaluated. Coarsening happens once
 * per doubling of the width, so its cost per folded step stays constant.
 */
#include "vt_slots.h"

#include <stdlib.h>
#include <string.h>

#include "vt_util.h"

size_t vt_slot_limit(void)
{
    const char *e = getenv(VT_SLOTS_ENV);
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v >= 4 && v <= (1ull << 30)) return (size_t)(v & ~1ull);
    }
    return VT_SLOTS_DEFAULT;
}

static uint64_t width_of(const vt_process *p)
{
    return p->slot_width ? p->slot_width : 1;
}

uint64_t vt_slot_steps(const vt_process *p, size_t i)
{
    uint64_t w = width_of(p);
    if (i + 1 < p->nsteps) return w;
    return p->nsteps_real - w * (uint64_t)(p->nsteps - 1);
}

uint64_t vt_process_steps(const vt_process *p)
{
    uint64_t n = p->nsteps_real;
    if (!p->has_summary || p->summary_last < p->summary_first || n < p->summary_buckets) return n;
    uint64_t span = p->summary_last - p->summary_first + 1;
    uint64_t stood = p->summary_records && p->summary_records < span ? p->summary_records : span;
    return n - p->summary_buckets + (stood > p->summary_buckets ? stood : p->summary_buckets);
}

uint64_t vt_steps_before_slot(const vt_process *p, size_t i)
{
    if (i >= p->nsteps) return p->nsteps_real;
    return (uint64_t)i * width_of(p);
}

size_t vt_slots_for_steps(const vt_process *p, uint64_t nsteps)
{
    uint64_t w = width_of(p), k = nsteps / w + (nsteps % w != 0);
    return k < p->nsteps ? (size_t)k : p->nsteps;
}

/* The value of an old slot: the last point at or before it. *next counts the
 * points at or before the slots asked so far (it only moves forward). */
static vt_point value_at(const vt_rsite *s, size_t *next, uint64_t slot)
{
    while (*next < s->npts && s->pts[*next].step <= slot) ++*next;
    return *next ? s->pts[*next - 1] : (vt_point){0};
}

/* Give-backs of a one-step slot x that follows step prev: its peak above its live
 * bytes, its live bytes below prev's. */
static uint64_t step_givebacks(vt_point prev, vt_point x)
{
    return (uint64_t)(x.peak > x.live) + (x.live < prev.live);
}

/* Slots a then b (when have_b) as one. single_steps: each holds one step and
 * their give-backs are not counted yet (width 1): they are counted here, prev
 * being the step before a (zero for the first). */
static vt_point merge(vt_point prev, vt_point a, vt_point b, int have_b, int single_steps)
{
    if (!have_b) b = a;
    vt_point m = {0};
    m.live = a.live < b.live ? a.live : b.live;
    m.peak = a.peak > b.peak ? a.peak : b.peak;
    uint64_t n = (uint64_t)a.nfree + (have_b ? b.nfree : 0);
    if (single_steps) n += step_givebacks(prev, a) + (have_b ? step_givebacks(a, b) : 0);
    m.nfree = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return m;
}

static void coarsen_series(vt_rsite *s, size_t n, size_t m, int single_steps)
{
    if (!s->npts) return;
    vt_point *out = vt_xmalloc((2 * (size_t)s->npts + 1) * sizeof *out);
    size_t no = 0, next = 0;
    uint64_t done = 0;   /* new slots below it are evaluated */
    for (uint32_t q = 0; q < s->npts; q++) {
        /* new slot j reads old slots 2j-1 (the step before, width 1), 2j, 2j+1 */
        uint64_t c[2] = {s->pts[q].step / 2, s->pts[q].step / 2 + 1};
        for (int t = 0; t < 2; t++) {
            uint64_t j = c[t];
            if (j < done || j >= m) continue;
            done = j + 1;
            int have_b = 2 * j + 1 < n;
            vt_point prev = j ? value_at(s, &next, 2 * j - 1) : (vt_point){0};
            vt_point a = value_at(s, &next, 2 * j), b = have_b ? value_at(s, &next, 2 * j + 1) : a;
            vt_point v = merge(prev, a, b, have_b, single_steps);
            v.step = (uint32_t)j;
            if (no ? (out[no - 1].live == v.live && out[no - 1].peak == v.peak && out[no - 1].nfree == v.nfree)
                   : (!v.live && !v.peak && !v.nfree))
                continue;
            out[no++] = v;
        }
    }
    free(s->pts);
    s->pts = no ? vt_xrealloc(out, no * sizeof *out) : NULL;
    if (!no) free(out);
    s->npts = s->cap = (uint32_t)no;
}

void vt_slots_coarsen(vt_process *p)
{
    size_t n = p->nsteps, m = (n + 1) / 2;
    for (size_t j = 0; j < m; j++) {
        size_t last = 2 * j + 1 < n ? 2 * j + 1 : 2 * j;
        p->steps[j] = p->steps[2 * j];
        p->step_total[j] = p->step_total[last];
        p->step_time[j] = p->step_time[last];
    }
    int single = width_of(p) == 1;
    p->nsteps = m;
    p->slot_width = width_of(p) * 2;
    vt_rsite *s, *t;
    HASH_ITER(hh, p->sites, s, t) coarsen_series(s, n, m, single);
}

size_t vt_process_points(const vt_process *p)
{
    size_t n = 0;
    for (const vt_rsite *s = p->sites; s; s = s->hh.next) n += s->npts;
    return n;
}

size_t vt_points_budget(void)
{
    const char *e = getenv(VT_POINTS_ENV);
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v >= 1) return (size_t)v;
    }
    return VT_POINTS_DEFAULT;
}

void vt_slots_fit(vt_process **procs, size_t n, size_t budget)
{
    size_t *pts = vt_xmalloc((n ? n : 1) * sizeof *pts), total = 0;
    for (size_t i = 0; i < n; i++) total += pts[i] = vt_process_points(procs[i]);
    while (total > budget) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (procs[i]->nsteps > VT_SLOTS_MIN && (best == n || pts[i] > pts[best])) best = i;
        if (best == n || !pts[best]) break;
        vt_slots_coarsen(procs[best]);
        total -= pts[best];
        total += pts[best] = vt_process_points(procs[best]);
    }
    free(pts);
}
