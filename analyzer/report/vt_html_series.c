/* vt_html_series.c — per-site step series for the HTML views (vt_html_series.h). */
#include "vt_html_series.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

int vt_html_series_init(vt_html_series *s, const vt_proc_result *pr)
{
    memset(s, 0, sizeof *s);
    s->pr = pr;
    const vt_process *p = pr->p;
    s->n = p->nsteps;
    s->first = calloc(pr->nsites + 2, sizeof *s->first);
    s->raw = malloc((p->nsites ? p->nsites : 1) * sizeof *s->raw);
    s->tl = malloc((s->n ? s->n : 1) * sizeof *s->tl);
    s->tp = malloc((s->n ? s->n : 1) * sizeof *s->tp);
    if (!s->first || !s->raw || !s->tl || !s->tp) {
        vt_html_series_free(s);
        return -1;
    }
    /* counting sort of the raw sites by merged site */
    vt_rsite *r, *t;
    HASH_ITER(hh, p->sites, r, t)
        if (r->result < pr->nsites) s->first[r->result + 2]++;
    for (size_t i = 2; i < pr->nsites + 2; i++) s->first[i] += s->first[i - 1];
    HASH_ITER(hh, p->sites, r, t)
        if (r->result < pr->nsites) s->raw[s->first[r->result + 1]++] = r;
    return 0;
}

void vt_html_series_free(vt_html_series *s)
{
    free(s->first);
    free(s->raw);
    free(s->tl);
    free(s->tp);
    memset(s, 0, sizeof *s);
}

void vt_html_series_site(vt_html_series *s, size_t si, uint64_t *live, uint64_t *peak)
{
    size_t n = s->n;
    if (live) memset(live, 0, n * sizeof *live);
    if (peak) memset(peak, 0, n * sizeof *peak);
    for (size_t k = s->first[si]; k < s->first[si + 1]; k++) {
        vt_rsite_expand(s->raw[k], n, s->tl, s->tp, NULL);
        for (size_t i = 0; i < n; i++) {
            if (live) live[i] = sat_add(live[i], s->tl[i]);
            if (peak) peak[i] = sat_add(peak[i], s->tp[i] > s->tl[i] ? s->tp[i] : s->tl[i]);
        }
    }
}

size_t vt_html_npoints(size_t n, size_t most)
{
    if (!most || n <= most) return n;
    size_t g = (n + most - 1) / most;
    return (n + g - 1) / g;
}

json_t *vt_html_points(const uint64_t *v, size_t n, size_t k, int use_max)
{
    json_t *a = json_array();
    size_t g = k ? (n + k - 1) / k : 1;
    for (size_t j = 0; a && j < k; j++) {
        size_t b = j * g, e = b + g < n ? b + g : n;
        uint64_t m = b < n ? v[b] : 0;
        for (size_t i = b + 1; i < e; i++)
            if (use_max ? v[i] > m : v[i] < m) m = v[i];
        if (json_array_append_new(a, json_integer((json_int_t)(m > INT64_MAX ? INT64_MAX : m)))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
