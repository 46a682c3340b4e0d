/* vt_series.c — step-curve math (contract in vt_series.h; definitions and
 * rationale in docs/metrics.md).
 *
 * Design: everything is computed on the floor (suffix minimum) because it is the
 * memory a site will never give back from that step on: temporaries and
 * sawtooths vanish from it, retained memory does not. A leak needs a positive
 * robust slope of that floor, several distinct rises, and a rise near the end
 * (growth that has not stopped); otherwise memory given back repeatedly is churn,
 * growth that stopped is a plateau, and the rest is stable.
 */
#include "vt_series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vt_util.h"

const char *vt_verdict_name(vt_verdict v)
{
    switch (v) {
    case VT_LEAK: return "leak";
    case VT_PLATEAU: return "plateau";
    case VT_CHURN: return "churn";
    case VT_TRANSIENT: return "transient";
    case VT_TOO_FEW: return "too_few_steps";
    default: return "stable";
    }
}

const char *vt_verdict_label(vt_verdict v)
{
    return v == VT_TOO_FEW ? "too few steps" : vt_verdict_name(v);
}

size_t vt_auto_warmup(size_t n)
{
    if (n < 4) return 0;
    size_t w = (n + 5) / 10;
    if (w < 1) w = 1;
    if (w > 100) w = 100;
    return w;
}

void vt_suffix_min(const uint64_t *v, size_t n, uint64_t *floor)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = n; i-- > 0;) {
        if (v[i] < m) m = v[i];
        floor[i] = m;
    }
}

/* k-th smallest of a[0..n-1] (reorders a). */
static double select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}

double vt_theil_sen(const double *x, const double *y, size_t n)
{
    if (n < 2) return 0;
    size_t m = n > VT_TS_MAX_POINTS ? VT_TS_MAX_POINTS : n;
    double *sx = vt_xmalloc(m * sizeof *sx), *sy = vt_xmalloc(m * sizeof *sy);
    for (size_t k = 0; k < m; k++) {
        size_t i = m == n ? k : (size_t)llround((double)k * (double)(n - 1) / (double)(m - 1));
        sx[k] = x[i];
        sy[k] = y[i];
    }
    double *sl = vt_xmalloc(m * (m - 1) / 2 * sizeof *sl);
    size_t ns = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
            if (sx[j] != sx[i]) sl[ns++] = (sy[j] - sy[i]) / (sx[j] - sx[i]);
    double med = 0;
    if (ns) {
        double hi = select_kth(sl, ns, ns / 2);
        if (ns % 2 == 0) {
            /* after selecting k = ns/2, elements before k are <= a[k]; their max is the lower middle */
            double lo = sl[0];
            for (size_t i = 1; i < ns / 2; i++) if (sl[i] > lo) lo = sl[i];
            med = (lo + hi) / 2;
        } else {
            med = hi;
        }
    }
    free(sx);
    free(sy);
    free(sl);
    return med;
}

void vt_classify(const vt_series *s, long warmup, vt_site_stats *out)
{
    memset(out, 0, sizeof *out);
    size_t n = s->n;
    if (!n) return;
    size_t w = warmup < 0 ? vt_auto_warmup(n) : (size_t)warmup;
    if (w > n - 1) w = n - 1;
    out->warmup = w;
    uint64_t *F = vt_xmalloc(n * sizeof *F);   /* whole-run floor */
    vt_suffix_min(s->live, n, F);
    /* window floor = suffix minimum restricted to [w, n): the same values */
    for (size_t i = 0; i < n; i++) {
        uint64_t pk = s->peak && s->peak[i] > s->live[i] ? s->peak[i] : s->live[i];
        if (pk > out->peak_bytes) out->peak_bytes = pk;
    }
    out->last_live = s->live[n - 1];
    out->floor_start = F[w];
    out->floor_end = F[n - 1];
    size_t last_rise = w;
    for (size_t i = w + 1; i < n; i++)
        if (F[i] > F[i - 1]) {
            out->rises++;
            last_rise = i;
        }
    out->judged_from_step = s->step[w];
    for (size_t i = 1; i < n; i++)
        if (F[i] > F[i - 1]) {
            out->has_first_growth = 1;
            out->first_growth_step = s->step[i];
            out->first_growth_in_warmup = i < w;
            break;
        }
    for (size_t i = w + 1; i < n; i++)
        if (F[i] > F[i - 1]) {
            out->has_first_judged_growth = 1;
            out->first_judged_growth_step = s->step[i];
            break;
        }
    for (size_t i = w; i < n; i++) {
        int gave_back = (i > 0 && s->live[i] < s->live[i - 1]) || (s->nfree && s->nfree[i] > 0) ||
                        (!s->bucketed && s->peak && s->peak[i] > s->live[i]);
        if (gave_back) out->churn_events++;
    }
    size_t m = n - w;
    if (out->rises) {
        double *x = vt_xmalloc(m * sizeof *x), *y = vt_xmalloc(m * sizeof *y);
        for (size_t i = 0; i < m; i++) {
            x[i] = (double)s->step[w + i];
            y[i] = (double)F[w + i];
        }
        out->slope = vt_theil_sen(x, y, m);
        free(x);
        free(y);
    }
    size_t tail = m / 4 > 1 ? m / 4 : 1;
    int leak = m >= VT_JUDGE_MIN_STEPS && out->rises >= 3 && out->slope > 0 && (n - 1 - last_rise) <= tail;
    /* a late leak: the floor rose at each of the last VT_LATE_LEAK_STEPS steps */
    size_t late = 0;
    while (late < m - 1 && F[n - 1 - late] > F[n - 2 - late]) late++;
    if (!leak && late >= VT_LATE_LEAK_STEPS) {
        size_t k = late + 1;   /* the rising tail and the step it rose from */
        double *x = vt_xmalloc(k * sizeof *x), *y = vt_xmalloc(k * sizeof *y);
        for (size_t i = 0; i < k; i++) {
            x[i] = (double)s->step[n - k + i];
            y[i] = (double)F[n - k + i];
        }
        out->slope = vt_theil_sen(x, y, k);
        free(x);
        free(y);
        leak = out->slope > 0;
    }
    /* held in few steps, and given back by the last one */
    size_t held = 0;
    for (size_t i = 0; i < n; i++) held += s->live[i] || (s->peak && s->peak[i]);
    int transient = held && held <= VT_TRANSIENT_STEPS && !s->live[n - 1];
    if (leak) {
        out->verdict = VT_LEAK;
        out->leaked_bytes = out->floor_end - out->floor_start;
    } else if (out->churn_events >= 2) {
        out->verdict = VT_CHURN;
    } else if (transient) {
        out->verdict = VT_TRANSIENT;
    } else if (m < VT_JUDGE_MIN_STEPS && held) {
        out->verdict = VT_TOO_FEW;
    } else {
        /* plateau: live bytes rose again in a later step than the site's first one */
        size_t a = 0;
        while (a < n && !s->live[a] && !(s->peak && s->peak[a])) a++;
        int grew = 0;
        for (size_t i = a + 1; i < n; i++)
            if (s->live[i] > s->live[i - 1]) grew = 1;
        out->verdict = grew ? VT_PLATEAU : VT_STABLE;
    }
    free(F);
}

int64_t vt_exhaustion_step(uint64_t last_step, uint64_t free_bytes, double slope)
{
    if (!(slope > 0)) return -1;
    double k = ceil((double)free_bytes / slope);
    if (k > 9e18) return -1;
    return (int64_t)last_step + (int64_t)k;
}
