/* vt_html_series.h — per-site step series for the HTML report's views, and their
 * reduction to a bounded number of points.
 *
 * The analysis keeps a merged site's curve for leaks only (vt_site_result.curve);
 * the raw sites behind every merged site keep theirs (vt_rsite.pts, one value per
 * step slot, vt_slots.h). vt_html_series groups a process's raw sites by the merged
 * site they went into (vt_rsite.result) so any merged site's series can be summed
 * again, slot by slot, in O(its raw sites x slots). Values: live = the least live
 * bytes over a slot's steps (its floor), peak = the most seen during them (>= live);
 * bytes. Single-threaded; the process and its analysis must outlive the object.
 */
#ifndef VT_HTML_SERIES_H
#define VT_HTML_SERIES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "vt_analysis.h"

typedef struct vt_html_series {
    const vt_proc_result *pr;
    size_t n;                   /* slots of the process (pr->p->nsteps) */
    size_t *first;              /* nsites + 1 offsets into raw: site s's raw sites are
                                   raw[first[s] .. first[s + 1]); owned */
    vt_rsite **raw;             /* owned */
    uint64_t *tl, *tp;          /* scratch of n values each; owned */
} vt_html_series;

/* Groups pr's raw sites by merged site. 0, or -1 when out of memory (s is then empty
 * and may be freed). */
int vt_html_series_init(vt_html_series *s, const vt_proc_result *pr);
void vt_html_series_free(vt_html_series *s);

/* Merged site si's live and peak series (s->n values each, either may be NULL):
 * its raw sites' series summed (saturating). */
void vt_html_series_site(vt_html_series *s, size_t si, uint64_t *live, uint64_t *peak);

/* The number of points n values are reduced to when at most `most` may be shown:
 * n when n <= most, else ceil(n / ceil(n / most)) (whole groups of equal width). */
size_t vt_html_npoints(size_t n, size_t most);

/* v[0..n) reduced to k points (k from vt_html_npoints): point j holds the least
 * (use_max 0) or the most (use_max 1) of its group of ceil(n / k) values. A JSON
 * array of integers (a new reference), or NULL when out of memory. */
json_t *vt_html_points(const uint64_t *v, size_t n, size_t k, int use_max);

#endif /* VT_HTML_SERIES_H */
