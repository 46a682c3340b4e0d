/* vt_html_timeline.c — the timeline view's data (html/timeline.js draws it): per
 * process, one entry per device (and one for all devices when there are several) with
 * the stacked series of its top sites and of the rest, the band of within-slot peaks,
 * the device's capacity and what the driver and NVML said was used; and the markers
 * (out-of-memory events, labels, annotations, a restart, lost-record gaps).
 *
 * Shape (added to the process object as "timeline"; bytes; steps as the program's
 * step numbers):
 *   {"step": [first step of each point], "width": steps per point, "last": last step,
 *    "time_us": [each point's end, microseconds from about the first step's start] or null,
 *    "views": [ {"device": N or null (all devices), "label",
 *                "sites": [ {"site": index into proc.sites, "live": [..],
 *                            "peak": [..] (only when some peak is above live)} ],
 *                "other": {"n": sites, "live": [..], "peak": [..]},
 *                "band": [..]  (the most seen in each point: every site's peak summed,
 *                               at most the view's peak, so an upper bound),
 *                "peak": the view's peak (the header's), "peak_at": {"step","bytes"} or null,
 *                "capacity", "driver_used", "nvml_used", "nvml_process": bytes or null} ],
 *    "markers": [ {"k": "oom"|"label"|"annot"|"restart"|"gap", "step", "end" (gap),
 *                  "device" (oom) or null, "text"} ], "markers_left_out": N}
 * Bounded: at most TL_POINTS points per series (slots merged in whole groups: live
 * the least, peak the most), TL_TOP sites per view, TL_MARKS markers of each kind.
 * Single-threaded; reads the analysis only.
 */
#include "vt_report_html.h"
#include "vt_html_series.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_size.h"

#define TL_POINTS 1000
#define TL_TOP 8
#define TL_MARKS 200

typedef struct tl_view {
    int all;                    /* 1: every device */
    int device;
    size_t top[TL_TOP], ntop;   /* site indices, biggest peak first */
    json_t *sites;              /* the top sites' entries, in top order */
    uint64_t *olive, *opeak, *band;   /* n values each */
    size_t nother;
    uint64_t cap;               /* the view's peak (0: unknown, no cap) */
} tl_view;

static int in_view(const tl_view *v, const vt_site_result *r)
{
    return vt_kind_in_totals(r->kind) && (v->all || r->device == v->device);
}

/* text cut by snprintf may end inside a UTF-8 sequence: the partial sequence dropped */
static json_t *jtext(char *t)
{
    size_t n = strlen(t), i = n;
    while (i > 0 && ((unsigned char)t[i - 1] & 0xC0) == 0x80) i--;
    if (i > 0 && (unsigned char)t[i - 1] >= 0xC0) {
        unsigned char c = (unsigned char)t[i - 1];
        size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (n - (i - 1) < want) t[i - 1] = 0;
    }
    return json_string(t);
}

static int put(json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *opt_int(int known, uint64_t v)
{
    return known ? json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)) : json_null();
}

static const vt_device *find_device(const vt_process *p, int d)
{
    for (size_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].device == d) return &p->devices[i];
    return NULL;
}

static const vt_gpu_health *find_gpu(const vt_process *p, int d)
{
    for (size_t i = 0; i < p->hostsig.ngpus; i++)
        if (p->hostsig.gpus[i].device == d) return &p->hostsig.gpus[i];
    return NULL;
}

/* The sites of v: the TL_TOP biggest by peak (that held memory at all). */
static void pick_top(const vt_proc_result *pr, tl_view *v)
{
    v->ntop = 0;
    for (size_t s = 0; s < pr->nsites; s++) {
        const vt_site_result *r = &pr->sites[s];
        if (!in_view(v, r) || !r->peak_bytes) continue;
        size_t k = v->ntop < TL_TOP ? v->ntop++ : TL_TOP;
        if (k == TL_TOP) {
            if (r->peak_bytes <= pr->sites[v->top[TL_TOP - 1]].peak_bytes) continue;
            k = TL_TOP - 1;
        }
        while (k > 0 && pr->sites[v->top[k - 1]].peak_bytes < r->peak_bytes) {
            v->top[k] = v->top[k - 1];
            k--;
        }
        v->top[k] = s;
    }
}

static int markers(const vt_process *p, json_t *tl)
{
    json_t *m = json_array();
    if (put(tl, "markers", m)) return -1;
    uint64_t left = 0;
    char t[400], b1[32], b2[32];
#define MARK(kind, step, dev, text)                                                                   \
    do {                                                                                              \
        json_t *e_ = json_pack("{s:s, s:I, s:o, s:o}", "k", kind, "step", (json_int_t)(step), "device", \
                               dev, "text", jtext(text));                                                   \
        if (!e_ || json_array_append_new(m, e_)) return -1;                                          \
    } while (0)
    for (size_t i = 0; i < p->nooms; i++) {
        if (i >= TL_MARKS) { left += p->nooms - i; break; }
        const vt_oom *o = &p->ooms[i];
        snprintf(t, sizeof t, "out of memory: %s of %s on device %d failed%s%s", o->api,
                 vt_size_fmt(o->requested_bytes, b1, sizeof b1), o->device,
                 !o->has_mem ? "" : o->free_bytes >= o->requested_bytes ? " (fragmentation: " : " (exhaustion: ",
                 !o->has_mem ? "" : vt_size_fmt(o->free_bytes, b2, sizeof b2));
        if (o->has_mem) strncat(t, " free)", sizeof t - strlen(t) - 1);
        MARK("oom", o->step, json_integer(o->device), t);
    }
    left += p->ooms_dropped;
    for (size_t i = 0; i < p->nlabels; i++) {
        if (i >= TL_MARKS) { left += p->nlabels - i; break; }
        snprintf(t, sizeof t, "label: %s", p->labels[i].label ? p->labels[i].label : "");
        MARK("label", p->labels[i].step, json_null(), t);
    }
    left += p->labels_dropped;
    for (size_t i = 0; i < p->nannots; i++) {
        if (i >= TL_MARKS) { left += p->nannots - i; break; }
        snprintf(t, sizeof t, "annotation %s = %.6g (max %.6g), last set at this step", p->annots[i].key,
                 p->annots[i].value, p->annots[i].max);
        MARK("annot", p->annots[i].step, json_null(), t);
    }
    if (p->has_restart && p->restart > 0 && p->nsteps) {
        snprintf(t, sizeof t, "restart %" PRId64 ": this process began after the job restarted", p->restart);
        MARK("restart", p->steps[0], json_null(), t);
    }
    for (size_t g = 0; g < p->ngaps; g++) {
        if (!p->gaps[g].has_steps) continue;
        if (g >= TL_MARKS) { left += p->ngaps - g; break; }
        json_t *e = json_pack("{s:s, s:I, s:I, s:o, s:o}", "k", "gap", "step", (json_int_t)p->gaps[g].first_step, "end",
                              (json_int_t)p->gaps[g].last_step, "device", json_null(), "text",
                              jtext((char *)vt_gap_text(&p->gaps[g], t, sizeof t)));
        if (!e || json_array_append_new(m, e)) return -1;
    }
#undef MARK
    return put(tl, "markers_left_out", json_integer((json_int_t)left));
}

/* Each point's end time in microseconds from about the first point's start (the
 * first point taken as long as the second), from the slots' times (vt_slots.h: the
 * time of a slot's last step's last snapshot); null when a time is unknown or runs
 * backwards. */
static json_t *times(const vt_process *p, size_t n, size_t k)
{
    if (!n || !k) return json_null();
    for (size_t i = 0; i < n; i++)
        if (!p->step_time[i] || (i && p->step_time[i] < p->step_time[i - 1])) return json_null();
    size_t g = (n + k - 1) / k;
#define END(j) p->step_time[((j) + 1) * g < n ? ((j) + 1) * g - 1 : n - 1]
    uint64_t e0 = END(0), d = k > 1 ? END(1) - e0 : 1000000000u;
    uint64_t base = e0 > d ? e0 - d : 0;
    json_t *a = json_array();
    for (size_t j = 0; a && j < k; j++)
        if (json_array_append_new(a, json_integer((json_int_t)((END(j) - base) / 1000u)))) {
            json_decref(a);
            return NULL;
        }
#undef END
    return a;
}

/* The JSON of view v (its accumulators filled). */
static json_t *view_json(const vt_proc_result *pr, tl_view *v, size_t n, size_t k)
{
    const vt_process *p = pr->p;
    char lb[48];
    if (v->all) snprintf(lb, sizeof lb, "all devices");
    else if (v->device < 0) snprintf(lb, sizeof lb, "host");
    else snprintf(lb, sizeof lb, "device %d", v->device);
    json_t *o = json_object();
    if (!o) return NULL;
    for (size_t i = 0; v->cap && i < n; i++)
        if (v->band[i] > v->cap) v->band[i] = v->cap;
    json_t *other = json_pack("{s:I, s:o, s:o}", "n", (json_int_t)v->nother, "live",
                              vt_html_points(v->olive, n, k, 0), "peak", vt_html_points(v->opeak, n, k, 1));
    const vt_device *dv = v->all ? NULL : find_device(p, v->device);
    const vt_gpu_health *g = v->all ? NULL : find_gpu(p, v->device);
    const vt_peakcomp *pc = v->all ? p->peak_comp : dv ? &dv->peak_comp : NULL;
    json_t *at = pc && pc->present ? json_pack("{s:I, s:I}", "step", (json_int_t)pc->step, "bytes", (json_int_t)pc->bytes)
                                   : json_null();
    int bad = put(o, "device", v->all ? json_null() : json_integer(v->device)) | put(o, "label", json_string(lb)) |
              put(o, "sites", v->sites) | put(o, "other", other) | put(o, "band", vt_html_points(v->band, n, k, 1)) |
              put(o, "peak", opt_int(v->cap > 0, v->cap)) | put(o, "peak_at", at) |
              put(o, "capacity", opt_int(dv && dv->has_mem, dv ? dv->total_bytes : 0)) |
              put(o, "driver_used", opt_int(dv && dv->has_mem && dv->total_bytes >= dv->free_bytes,
                                            dv ? dv->total_bytes - dv->free_bytes : 0)) |
              put(o, "nvml_used", opt_int(g && g->used.known, g ? g->used.max : 0)) |
              put(o, "nvml_process", opt_int(g && g->process_used.known, g ? g->process_used.max : 0));
    v->sites = NULL;   /* taken */
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int vt_html_timeline(vt_analysis *a, size_t pi, json_t *proc)
{
    const vt_proc_result *pr = &a->procs[pi];
    const vt_process *p = pr->p;
    size_t n = p->nsteps, k = vt_html_npoints(n, TL_POINTS);
    json_t *tl = json_object();
    if (put(proc, "timeline", tl)) return -1;
    size_t g = k ? (n + k - 1) / k : 1;
    if (put(tl, "step", vt_html_points(p->steps, n, k, 0)) ||
        put(tl, "width", json_integer((json_int_t)(g * (p->slot_width ? p->slot_width : 1)))) ||
        put(tl, "last", json_integer((json_int_t)(p->nsteps_real ? p->last_step : 0))) ||
        put(tl, "time_us", times(p, n, k)) || markers(p, tl))
        return -1;
    /* the views: one per device the sites use; all devices first when several */
    int devs[64];
    size_t nd = 0;
    for (size_t s = 0; s < pr->nsites && nd < 64; s++) {
        if (!vt_kind_in_totals(pr->sites[s].kind)) continue;
        size_t d = 0;
        while (d < nd && devs[d] != pr->sites[s].device) d++;
        if (d == nd) devs[nd++] = pr->sites[s].device;
    }
    for (size_t i = 1; i < nd; i++)   /* ascending */
        for (size_t j = i; j > 0 && devs[j - 1] > devs[j]; j--) {
            int x = devs[j];
            devs[j] = devs[j - 1];
            devs[j - 1] = x;
        }
    size_t nv = nd > 1 ? nd + 1 : 1;
    tl_view *v = calloc(nv, sizeof *v);
    vt_html_series hs;
    uint64_t *live = malloc((n ? n : 1) * sizeof *live), *peak = malloc((n ? n : 1) * sizeof *peak);
    int rc = -1;
    if (!v || !live || !peak || vt_html_series_init(&hs, pr)) {
        free(v);
        free(live);
        free(peak);
        return -1;
    }
    for (size_t i = 0; i < nv; i++) {
        v[i].all = nd == 0 || (nd > 1 && i == 0);
        v[i].device = v[i].all ? 0 : devs[nd > 1 ? i - 1 : 0];
        const vt_device *dv = find_device(p, v[i].device);
        v[i].cap = v[i].all ? p->peak_bytes : dv ? dv->peak_max : 0;
        if (nv == 1 && nd == 1) v[i].cap = p->peak_bytes > v[i].cap ? p->peak_bytes : v[i].cap;
        v[i].olive = calloc(n ? n : 1, sizeof *v[i].olive);
        v[i].opeak = calloc(n ? n : 1, sizeof *v[i].opeak);
        v[i].band = calloc(n ? n : 1, sizeof *v[i].band);
        v[i].sites = json_array();
        if (!v[i].olive || !v[i].opeak || !v[i].band || !v[i].sites) goto out;
        pick_top(pr, &v[i]);
        for (size_t t = 0; t < v[i].ntop; t++)
            if (json_array_append_new(v[i].sites, json_object())) goto out;
    }
    for (size_t s = 0; s < pr->nsites; s++) {
        int used = 0;
        for (size_t i = 0; i < nv; i++) used |= in_view(&v[i], &pr->sites[s]);
        if (!used) continue;
        vt_html_series_site(&hs, s, live, peak);
        for (size_t i = 0; i < nv; i++) {
            if (!in_view(&v[i], &pr->sites[s])) continue;
            size_t t = 0;
            while (t < v[i].ntop && v[i].top[t] != s) t++;
            for (size_t q = 0; q < n; q++) v[i].band[q] += peak[q];
            if (t < v[i].ntop) {
                json_t *e = json_array_get(v[i].sites, t);
                int differs = 0;
                for (size_t q = 0; q < n && !differs; q++) differs = peak[q] > live[q];
                if (put(e, "site", json_integer((json_int_t)s)) || put(e, "live", vt_html_points(live, n, k, 0)) ||
                    (differs && put(e, "peak", vt_html_points(peak, n, k, 1))))
                    goto out;
            } else {
                if (pr->sites[s].peak_bytes) v[i].nother++;   /* sites that held memory */
                for (size_t q = 0; q < n; q++) {
                    v[i].olive[q] += live[q];
                    v[i].opeak[q] += peak[q];
                }
            }
        }
    }
    json_t *views = json_array();
    if (put(tl, "views", views)) goto out;
    for (size_t i = 0; i < nv; i++)
        if (json_array_append_new(views, view_json(pr, &v[i], n, k))) goto out;
    rc = 0;
out:
    for (size_t i = 0; i < nv; i++) {
        json_decref(v[i].sites);
        free(v[i].olive);
        free(v[i].opeak);
        free(v[i].band);
    }
    free(v);
    free(live);
    free(peak);
    vt_html_series_free(&hs);
    return rc;
}
