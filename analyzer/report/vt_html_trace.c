/* vt_html_trace.c — the event trace in the timeline view (VRAMTRACE_TRACE=1,
 * read/vt_trace_read.h): with a trace beside the process's stream, each timeline view's
 * band ("the most seen inside each point") becomes exact: the most live bytes of the
 * view's device (all devices for the process's view; the kinds counted in its totals,
 * vt_kind_in_totals) after any allocation or free between the end of the point before
 * and the end of this point, the running total carried across points. The view then
 * says "band_source": "trace" (else the band stays the per-site upper bound and the
 * key is absent).
 * The trace is used only when it is whole for the steps drawn: no lost events, every
 * point's end time known (the slots' times, vt_slots.h), and a trace that did not stop
 * (the size cap) before the last point's end. Events after the last point's end (the
 * exit's frees) are not drawn. Runs after vt_html_timeline; reads the analysis only.
 */
#include "vt_report_html.h"
#include "vt_html_series.h"
#include "uthash.h"

#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_trace_read.h"

/* The band of one view from the trace into band[k]: 0, or -1 when out of memory. */
static int view_band(const vt_trace *tr, int all, int device, const uint64_t *end_ns, size_t k, uint64_t *band)
{
    int64_t live = 0;
    size_t j = 0;
    uint64_t most = 0;
    for (size_t i = 0; i < tr->n && j < k; i++) {
        const vt_tev *e = &tr->ev[i];
        while (j < k && e->time_ns > end_ns[j]) {   /* point j ends before this event */
            band[j++] = most;
            most = live > 0 ? (uint64_t)live : 0;
        }
        if (j == k) break;
        if (e->device < 0 || (!all && e->device != device) || !vt_kind_in_totals(e->kind)) continue;
        live += e->op == VT_TEV_ALLOC ? (int64_t)e->size : -(int64_t)e->size;
        if (live > 0 && (uint64_t)live > most) most = (uint64_t)live;
    }
    for (; j < k; j++) {
        band[j] = most;
        most = live > 0 ? (uint64_t)live : 0;
    }
    return 0;
}

/* The trace's frees carry the block's size as the preload saw it; a free of a block
 * the trace never saw allocated (allocated before tracing) would make the running
 * total wrong: such a trace is not used. 1 when every free matches an allocation. */
static int frees_match(const vt_trace *tr)
{
    typedef struct blk { struct { uint64_t addr; int32_t device, pad; } key; UT_hash_handle hh; } blk;
    blk *live = NULL, *b, *bt;
    int ok = 1;
    for (size_t i = 0; i < tr->n && ok; i++) {
        const vt_tev *e = &tr->ev[i];
        blk q;
        memset(&q, 0, sizeof q);
        q.key.addr = e->addr;
        q.key.device = e->device;
        HASH_FIND(hh, live, &q.key, sizeof q.key, b);
        if (e->op == VT_TEV_ALLOC) {
            if (b) { ok = 0; break; }   /* given again without its free */
            b = calloc(1, sizeof *b);
            if (!b) { ok = 0; break; }
            b->key = q.key;
            HASH_ADD(hh, live, key, sizeof b->key, b);
        } else {
            if (!b) { ok = 0; break; }
            HASH_DEL(live, b);
            free(b);
        }
    }
    HASH_ITER(hh, live, b, bt) {
        HASH_DEL(live, b);
        free(b);
    }
    return ok;
}

int vt_html_trace(vt_analysis *a, size_t pi, json_t *proc)
{
    const vt_process *p = a->procs[pi].p;
    json_t *tl = json_object_get(proc, "timeline");
    json_t *views = json_object_get(tl, "views");
    size_t n = p->nsteps, k = json_array_size(json_object_get(tl, "step"));   /* the timeline's points */
    if (!json_is_array(views) || !n || !k || !p->file) return 0;
    char err[512];
    vt_trace tr;
    int traced = vt_trace_read(p->file, &tr, err, sizeof err);
    if (traced <= 0) return 0;   /* none, or unreadable: `export` says why; the page goes on */
    size_t g = (n + k - 1) / k, kk = (n + g - 1) / g;
    uint64_t *end_ns = calloc(kk, sizeof *end_ns), *band = calloc(kk, sizeof *band);
    int rc = 0, usable = end_ns && band && !tr.lost && frees_match(&tr);
    for (size_t j = 0; usable && j < kk; j++) {
        end_ns[j] = p->step_time[(j + 1) * g < n ? (j + 1) * g - 1 : n - 1];
        if (!end_ns[j] || (j && end_ns[j] < end_ns[j - 1])) usable = 0;
    }
    if (usable && tr.stopped && (!tr.n || tr.ev[tr.n - 1].time_ns < end_ns[kk - 1])) usable = 0;
    for (size_t v = 0; usable && rc == 0 && v < json_array_size(views); v++) {
        json_t *view = json_array_get(views, v);
        json_t *dev = json_object_get(view, "device");
        if (view_band(&tr, json_is_null(dev), (int)json_integer_value(dev), end_ns, kk, band) ||
            json_object_set_new(view, "band", vt_html_points(band, kk, kk, 1)) ||
            json_object_set_new(view, "band_source", json_string("trace")))
            rc = -1;
    }
    free(end_ns);
    free(band);
    vt_trace_free(&tr);
    return rc;
}
