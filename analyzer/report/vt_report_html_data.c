/* vt_report_html_data.c — the data object of the interactive HTML report
 * (shape: vt_report_html.h). The process objects and their site lists are built
 * here; each view's keys come from that view's part builder, called in turn.
 */
#include "vt_report_html.h"

#include "vt_display.h"
#include "vt_format.h"
#include "vt_slots.h"
#include "vt_report.h"

#include <stdlib.h>

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

static json_t *proc_json(vt_analysis *a, size_t pi)
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
    for (size_t i = 0; i < a->n; i++) {
        json_t *p = proc_json(a, i);
        if (!p || json_array_append_new(procs, p)) {
            json_decref(root);
            return NULL;
        }
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
