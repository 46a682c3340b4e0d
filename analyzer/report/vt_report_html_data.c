/* vt_report_html_data.c — the data object of the interactive HTML report
 * (shape: vt_report_html.h). The process objects and their site lists are built
 * here; each view's keys come from that view's part builder, called in turn.
 */
#include "vt_report_html.h"

#include "vt_display.h"
#include "vt_util.h"
#include "vt_format.h"
#include "vt_slots.h"
#include "vt_report.h"

#include <stdlib.h>
#include <string.h>

/* s as a JSON string; bytes that are not UTF-8 (json_string refuses them: a file
 * path in another encoding) in their display form, \xNN. NULL when out of memory. */
static json_t *jstr(const char *s)
{
    if (!s) return json_null();
    json_t *j = json_string(s);
    if (j) return j;
    char *d = vt_xdisplay(s);
    j = json_string(d);
    free(d);
    return j;
}

static json_t *sites_json(vt_analysis *a, const vt_proc_result *pr)
{
    json_t *arr = json_array();
    for (size_t s = 0; arr && s < pr->nsites; s++) {
        const vt_site_result *r = &pr->sites[s];
        json_t *o = json_pack("{s:s, s:o, s:s, s:s, s:i}", "id", r->id,
                              "title", jstr(vt_site_nframes(r) ? vt_site_title(a, r) : r->id),
                              "verdict", vt_verdict_name(r->st.verdict), "kind", vt_kind_name(r->kind),
                              "device", r->device);
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* qsort order of process indices: the most to show first (vt_report_html.h) */
static const vt_analysis *rank_a;
static int by_interest(const void *x, const void *y)
{
    const vt_proc_result *p = &rank_a->procs[*(const size_t *)x], *q = &rank_a->procs[*(const size_t *)y];
    int po = p->p->nooms > 0, qo = q->p->nooms > 0;
    if (po != qo) return qo - po;
    if (p->count[VT_LEAK] != q->count[VT_LEAK]) return p->count[VT_LEAK] < q->count[VT_LEAK] ? 1 : -1;
    if (p->p->peak_bytes != q->p->peak_bytes) return p->p->peak_bytes < q->p->peak_bytes ? 1 : -1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

size_t vt_html_full_procs(const vt_analysis *a, unsigned char *full)
{
    if (a->n <= VT_HTML_FULL_PROCS) {
        memset(full, 1, a->n);
        return a->n;
    }
    memset(full, 0, a->n);
    size_t *ix = vt_xcalloc(a->n, sizeof *ix);
    for (size_t i = 0; i < a->n; i++) ix[i] = i;
    rank_a = a;
    qsort(ix, a->n, sizeof *ix, by_interest);
    for (size_t i = 0; i < VT_HTML_FULL_PROCS; i++) full[ix[i]] = 1;
    free(ix);
    return VT_HTML_FULL_PROCS;
}

static json_t *proc_json(vt_analysis *a, size_t pi, int full)
{
    const vt_proc_result *pr = &a->procs[pi];
    const vt_process *p = pr->p;
    char t[200];
    json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:o, s:o}", "title", vt_process_title(p, t, sizeof t),
                          "cmdline", jstr(p->cmdline), "file", jstr(p->file),
                          "rank", p->has_rank ? json_integer(p->rank) : json_null(),
                          "steps", (json_int_t)vt_process_steps(p), "peak_bytes", (json_int_t)p->peak_bytes,
                          "unfreed_exit_bytes", p->exited ? json_integer((json_int_t)p->unfreed_exit_bytes) : json_null(),
                          "sites", sites_json(a, pr));
    if (!o) return NULL;
    if (!full) {   /* one of many processes: no view of its own (vt_report_html.h) */
        if (json_object_set_new(o, "reduced", json_true())) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    if (vt_html_flame(a, pi, o) || vt_html_oom(a, pi, o)) {   /* the flame graph's, the OOM view's */
        json_decref(o);
        return NULL;
    }
    /* each view's part builder adds its keys here */
    if (vt_html_timeline(a, pi, o) || vt_html_trace(a, pi, o) || vt_html_sites(a, pi, o)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *vt_html_data(vt_analysis *a)
{
    json_t *procs = json_array();
    json_t *root = json_pack("{s:i, s:s, s:o}", "version", 1, "generator", "vramtrace", "procs", procs);
    if (!root) return NULL;
    unsigned char *full = vt_xcalloc(a->n ? a->n : 1, 1);
    size_t nfull = vt_html_full_procs(a, full);
    for (size_t i = 0; i < a->n; i++) {
        json_t *p = proc_json(a, i, full[i]);
        if (!p || json_array_append_new(procs, p)) {
            free(full);
            json_decref(root);
            return NULL;
        }
    }
    free(full);
    if (json_object_set_new(root, "procs_full", json_integer((json_int_t)nfull))) {
        json_decref(root);
        return NULL;
    }
    if (vt_html_ranks(a, root)) {   /* the many-processes view's */
        json_decref(root);
        return NULL;
    }
    /* the part builders of the views across processes add their keys here */
    if (vt_html_same_sites(a, root)) {
        json_decref(root);
        return NULL;
    }
    return root;
}
