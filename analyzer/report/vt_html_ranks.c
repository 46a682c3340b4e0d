/* vt_html_ranks.c — the many-processes view's part of the HTML report's data
 * (vt_html_ranks in vt_report_html.h; drawn by html/ranks.js).
 *
 * A process × site matrix of growth per step: a column is a site matched across
 * processes and devices as the summary across ranks matches it (vt_rank_site_key:
 * kind and shown frames, the device left out); a cell is the sum of the floor
 * slopes (bytes/step, above 0) of the process's sites with that key, with the site
 * that grows fastest among them (its index in that process's "sites", for the site
 * panel). Rows are the processes by rank (restart, pid), columns the RANK_COLS
 * columns with the most growth over all processes; rows beyond RANK_ROWS and the
 * columns left out are counted ("rows_total", "cols_total"). Cells are sparse
 * ([row, col, bytes per step, site]): a process where a site does not grow has none.
 */
#include "vt_report_html.h"
#include "vt_ranks.h"
#include "vt_report.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "vt_format.h"
#include "vt_util.h"

#define RANK_COLS 40
#define RANK_ROWS 512

typedef struct rgroup {
    char *key;                  /* vt_rank_site_key; owned */
    const char *title;          /* the first site's title (points into the analysis) */
    int kind;
    double total;               /* bytes/step over every process */
    size_t nprocs, index;
    long col;                   /* its column, -1: left out */
    size_t last_cell;           /* index in cells of the current process's cell */
    size_t last_proc;           /* the process of that cell + 1 (0: none yet) */
    UT_hash_handle hh;
} rgroup;

typedef struct rcell {
    rgroup *g;
    size_t pi, si;
    double rate, best;          /* sum over the process's sites; the fastest one's slope */
} rcell;

static int cmp_group(const void *pa, const void *pb)
{
    const rgroup *a = *(rgroup *const *)pa, *b = *(rgroup *const *)pb;
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static const vt_analysis *order_a;   /* the analysis cmp_proc reads (single-threaded qsort) */
static int cmp_proc(const void *pa, const void *pb)
{
    const vt_process *a = order_a->procs[*(const size_t *)pa].p, *b = order_a->procs[*(const size_t *)pb].p;
    if (a->has_rank != b->has_rank) return a->has_rank ? -1 : 1;
    if (a->has_rank && a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->restart != b->restart) return a->restart < b->restart ? -1 : 1;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

int vt_html_ranks(vt_analysis *a, json_t *root)
{
    if (a->n < 2) return 0;
    rgroup *h = NULL;
    rcell *cells = NULL;
    size_t ncells = 0, capcells = 0, ngroups = 0;
    for (size_t pi = 0; pi < a->n; pi++) {
        const vt_proc_result *pr = &a->procs[pi];
        for (size_t si = 0; si < pr->nsites; si++) {
            const vt_site_result *r = &pr->sites[si];
            if (!vt_kind_in_totals(r->kind) || !(r->st.slope > 0)) continue;
            char *key = vt_rank_site_key(a, r);
            rgroup *g;
            HASH_FIND_STR(h, key, g);
            if (g) {
                free(key);
            } else {
                g = vt_xcalloc(1, sizeof *g);
                g->key = key;
                g->title = vt_site_title(a, r);
                g->kind = r->kind;
                g->index = ngroups++;
                HASH_ADD_KEYPTR(hh, h, g->key, strlen(g->key), g);
            }
            g->total += r->st.slope;
            if (g->last_proc != pi + 1) {
                rcell c = {g, pi, si, 0, 0};
                VT_PUSH(cells, ncells, capcells, c);
                g->last_cell = ncells - 1;
                g->last_proc = pi + 1;
                g->nprocs++;
            }
            rcell *c = &cells[g->last_cell];
            c->rate += r->st.slope;
            if (r->st.slope > c->best) {
                c->best = r->st.slope;
                c->si = si;
            }
        }
    }
    rgroup **gs = vt_xmalloc((ngroups ? ngroups : 1) * sizeof *gs);
    rgroup *g, *t;
    size_t k = 0;
    HASH_ITER(hh, h, g, t) gs[k++] = g;
    qsort(gs, ngroups, sizeof *gs, cmp_group);
    size_t *rows = vt_xmalloc(a->n * sizeof *rows);
    long *row_of = vt_xmalloc(a->n * sizeof *row_of);
    for (size_t i = 0; i < a->n; i++) rows[i] = i;
    order_a = a;
    qsort(rows, a->n, sizeof *rows, cmp_proc);
    size_t nrows = a->n < RANK_ROWS ? a->n : RANK_ROWS;
    for (size_t i = 0; i < a->n; i++) row_of[i] = -1;
    for (size_t i = 0; i < nrows; i++) row_of[rows[i]] = (long)i;

    int rc = -1;
    json_t *jrows = json_array(), *jcols = json_array(), *jcells = json_array();
    json_t *o = json_pack("{s:o, s:o, s:o, s:I, s:I, s:i, s:i}", "rows", jrows, "cols", jcols, "cells", jcells,
                          "rows_total", (json_int_t)a->n, "cols_total", (json_int_t)ngroups, "max_cols", RANK_COLS,
                          "max_rows", RANK_ROWS);
    if (!o) goto out;
    for (size_t i = 0; i < nrows; i++)
        if (json_array_append_new(jrows, json_integer((json_int_t)rows[i]))) goto out;
    for (size_t i = 0; i < ngroups; i++) {
        gs[i]->col = i < RANK_COLS ? (long)i : -1;
        if (i >= RANK_COLS) continue;
        json_t *c = json_pack("{s:s, s:s, s:f, s:I}", "title", gs[i]->title, "kind", vt_kind_name(gs[i]->kind),
                              "total", gs[i]->total, "nprocs", (json_int_t)gs[i]->nprocs);
        if (!c || json_array_append_new(jcols, c)) goto out;
    }
    for (size_t i = 0; i < ncells; i++) {
        const rcell *c = &cells[i];
        if (c->g->col < 0 || row_of[c->pi] < 0) continue;
        json_t *e = json_pack("[I, I, f, I]", (json_int_t)row_of[c->pi], (json_int_t)c->g->col, c->rate, (json_int_t)c->si);
        if (!e || json_array_append_new(jcells, e)) goto out;
    }
    if (json_object_set_new(root, "ranks", o) == 0) rc = 0;
    o = NULL;
out:
    json_decref(o);
    HASH_ITER(hh, h, g, t) {
        HASH_DEL(h, g);
        free(g->key);
        free(g);
    }
    free(gs);
    free(cells);
    free(rows);
    free(row_of);
    return rc;
}
