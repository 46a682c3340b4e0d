/* vt_report_json.c — `report --format json`: one object whose keys are
 * documented in docs/metrics.md; keys are only ever added, never renamed.
 *
 * Built as a jansson tree and dumped once. jansson integers are signed 64-bit:
 * byte counts above 2^63-1 (never seen on real devices) are clamped to it.
 */
#include "vt_report.h"
#include "vt_trace_read.h"
#include "vt_display.h"
#include "vt_ranks.h"
#include "vt_slots.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_allocators.h"
#include "vt_format.h"
#include "vt_hostsig.h"

static json_t *ju(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* A gauge: an integer when it is one (byte counts), else a real. */
static json_t *jnum(double v)
{
    if (v == floor(v) && v > -9.2e18 && v < 9.2e18) return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* json_string rejects invalid UTF-8: fall back to a lossy copy. */
static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j) return j;
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c) return json_string("?");
    for (size_t i = 0; i <= n; i++) c[i] = (unsigned char)s[i] >= 0x80 ? '?' : s[i];
    j = json_string(c);
    free(c);
    return j ? j : json_string("?");
}

static json_t *native_json(const vt_sym *s)
{
    json_t *fr = json_object();
    json_object_set_new(fr, "function", s->function ? jstr(s->function) : json_null());
    json_object_set_new(fr, "signature", s->signature ? jstr(s->signature) : json_null());
    json_object_set_new(fr, "file", s->file ? jstr(s->file) : json_null());
    json_object_set_new(fr, "line", s->line ? json_integer(s->line) : json_null());
    json_object_set_new(fr, "module", s->module ? jstr(s->module) : json_null());
    json_object_set_new(fr, "offset", ju(s->offset));
    if (s->inlined) json_object_set_new(fr, "inlined", json_true());   /* into the next frame */
    return fr;
}

/* Shown frames (vt_site_frame): native ones as native_json, Python ones as
 * {function, signature, file, line, module: "python"} (null for "?" and line 0). */
static json_t *frames_json(vt_analysis *a, const vt_site_result *r, uint32_t max)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < vt_site_nframes(r) && i < max; i++) {
        const vt_sym *s = vt_site_frame(a, r, i);
        if (!s->python) {
            json_array_append_new(arr, native_json(s));
            continue;
        }
        json_t *fr = json_object();
        json_object_set_new(fr, "function", s->function ? jstr(s->function) : json_null());
        json_object_set_new(fr, "signature", s->signature ? jstr(s->signature) : json_null());
        json_object_set_new(fr, "file", s->file ? jstr(s->file) : json_null());
        json_object_set_new(fr, "line", s->line ? json_integer(s->line) : json_null());
        json_object_set_new(fr, "module", json_string("python"));
        json_array_append_new(arr, fr);
    }
    return arr;
}

/* The stack's Python frames as written (native_index into native_frames), and
 * every trimmed native frame, glue included. */
static json_t *python_frames_json(const vt_stack *st)
{
    json_t *arr = json_array();
    for (uint32_t k = 0; k < st->npy; k++) {
        const vt_pyframe *p = &st->py[k];
        json_t *fr = json_object();
        json_object_set_new(fr, "file", jstr(p->file));
        json_object_set_new(fr, "function", jstr(p->function));
        json_object_set_new(fr, "line", json_integer(p->line));
        json_object_set_new(fr, "native_index", json_integer(p->native_index));
        json_array_append_new(arr, fr);
    }
    return arr;
}

static json_t *native_frames_json(vt_analysis *a, const vt_stack *st)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < st->nframes; i++) json_array_append_new(arr, native_json(vt_sym_frame(a->sym, &st->frames[i])));
    return arr;
}

static json_t *site_json(vt_analysis *a, const vt_proc_result *pr, const vt_site_result *r)
{
    json_t *s = json_object();
    json_object_set_new(s, "id", json_string(r->id));
    json_object_set_new(s, "verdict", json_string(vt_verdict_name(r->st.verdict)));
    if (r->st.verdict == VT_TOO_FEW && vt_process_no_steps(pr->p))   /* the process had no step */
        json_object_set_new(s, "not_judged", json_string(VT_NO_STEPS_LABEL));
    json_object_set_new(s, "kind", json_string(vt_kind_name(r->kind)));
    if (r->flags) {
        json_t *fl = json_array();
#define VT__FLAG_JSON(e, bit, name) if (r->flags & (bit)) json_array_append_new(fl, json_string(name));
        VT_SITE_FLAGS(VT__FLAG_JSON)
#undef VT__FLAG_JSON
        json_object_set_new(s, "flags", fl);
    }
    json_object_set_new(s, "device", json_integer(r->device));
    json_object_set_new(s, "growth_bytes_per_step", json_real(isfinite(r->st.slope) ? r->st.slope : 0));
    json_object_set_new(s, "leaked_bytes", ju(r->st.leaked_bytes));
    json_object_set_new(s, "leaked_since_step", ju(r->st.base_step));
    json_object_set_new(s, "unfreed_at_exit_bytes", ju(r->unfreed_exit));
    json_object_set_new(s, "peak_bytes", ju(r->peak_bytes));
    json_object_set_new(s, "never_held", json_boolean(vt_site_never_held(r)));
    json_object_set_new(s, "first_growth_step", r->st.has_first_growth ? ju(r->st.first_growth_step) : json_null());
    json_object_set_new(s, "first_growth_in_warmup", json_boolean(r->st.has_first_growth && r->st.first_growth_in_warmup));
    json_object_set_new(s, "judged_from_step", ju(r->st.judged_from_step));
    json_object_set_new(s, "first_judged_growth_step",
                        r->st.has_first_judged_growth ? ju(r->st.first_judged_growth_step) : json_null());
    json_object_set_new(s, "exhaustion_step", r->exhaustion_step >= 0 ? json_integer(r->exhaustion_step) : json_null());
    json_object_set_new(s, "grew_until_oom_step", r->oom_cut_step >= 0 ? json_integer(r->oom_cut_step) : json_null());
    if (r->kind == VT_KIND_REGION) {   /* the allocation that holds its regions, when known */
        uint64_t haddr = 0;
        const vt_site_result *h = vt_region_heap(pr, r, &haddr);
        json_object_set_new(s, "inside_heap", h ? json_pack("{s:o, s:s}", "address", ju(haddr), "site", h->id)
                                                : json_null());
    }
    json_object_set_new(s, "floor_start_bytes", ju(r->st.floor_start));
    json_object_set_new(s, "floor_end_bytes", ju(r->st.floor_end));
    json_object_set_new(s, "last_live_bytes", ju(r->st.last_live));
    json_object_set_new(s, "floor_rises", json_integer(r->st.rises));
    json_object_set_new(s, "churn_events", json_integer(r->st.churn_events));
    json_object_set_new(s, "frames", frames_json(a, r, UINT32_MAX));
    json_object_set_new(s, "title", jstr(vt_site_title(a, r)));
    json_object_set_new(s, "allocator", r->stack->allocator >= 0 ? jstr(vt_allocator_name(r->stack->allocator)) : json_null());
    json_object_set_new(s, "allocator_segment", json_boolean(vt_allocator_segments(r->stack->allocator)));
    json_object_set_new(s, "python_frames", python_frames_json(r->stack));
    if (r->stack->npy && r->stack->nframes) json_object_set_new(s, "native_frames", native_frames_json(a, r->stack));
    (void)pr;
    return s;
}

static json_t *oom_site_json(vt_analysis *a, const vt_proc_result *pr, const vt_oom_site *os, int split)
{
    vt_site_result *r = vt_result_of(pr, os->site);
    json_t *j = json_object();
    json_object_set_new(j, "id", r ? json_string(r->id) : json_null());
    json_object_set_new(j, "live_bytes", ju(os->bytes));
    json_object_set_new(j, "blocks", ju(os->blocks));
    if (split) {
        json_object_set_new(j, "splitting_blocks", ju(os->split_blocks));
        json_object_set_new(j, "gap_if_freed_bytes", ju(os->gap_if_freed));
    }
    json_object_set_new(j, "frames", r ? frames_json(a, r, 3) : json_array());
    return j;
}

static json_t *oom_json(vt_analysis *a, const vt_proc_result *pr, const vt_oom *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "requested_bytes", ju(o->requested_bytes));
    json_object_set_new(j, "free_bytes", o->has_mem ? ju(o->free_bytes) : json_null());
    json_object_set_new(j, "total_bytes", o->has_mem ? ju(o->total_bytes) : json_null());
    json_object_set_new(j, "verdict", json_string(!o->has_mem ? "unknown"
                                                  : o->free_bytes >= o->requested_bytes ? "fragmentation" : "exhaustion"));
    json_object_set_new(j, "tracked_bytes", ju(o->tracked_bytes));
    json_object_set_new(j, "untracked_bytes", o->has_mem ? json_integer(o->untracked_bytes) : json_null());
    json_object_set_new(j, "step", ju(o->step));   /* steps completed, as the record's */
    json_object_set_new(j, "during_step", ju(vt_during_step(o->step)));   /* the step in progress */
    json_object_set_new(j, "api", jstr(o->api));
    json_object_set_new(j, "kind", json_string(vt_kind_name(o->kind)));
    json_object_set_new(j, "device", json_integer(o->device));
    json_object_set_new(j, "result", json_integer(o->result));
    vt_site_result *r = vt_result_of(pr, o->site);
    json_object_set_new(j, "site", r ? json_string(r->id) : json_null());
    json_object_set_new(j, "frames", r ? frames_json(a, r, UINT32_MAX) : json_array());
    json_t *top = json_array();
    for (int k = 0; k < o->ntop; k++) json_array_append_new(top, oom_site_json(a, pr, &o->top[k], 0));
    json_object_set_new(j, "top_sites", top);
    if (o->has_allocs) {
        json_t *g = json_object();
        json_object_set_new(g, "count", ju(o->gap_count));
        json_object_set_new(g, "total_bytes", ju(o->gap_total));
        json_object_set_new(g, "largest_bytes", ju(o->gap_largest));
        json_object_set_new(j, "gaps", g);
        json_t *sp = json_array();
        for (int k = 0; k < o->nsplit; k++) json_array_append_new(sp, oom_site_json(a, pr, &o->split[k], 1));
        json_object_set_new(j, "splitting_sites", sp);
    }
    return j;
}

static json_t *hc_last(const vt_hcount *c)
{
    return c->known ? ju(c->last) : json_null();
}

static json_t *hc_max(const vt_hcount *c)
{
    return c->known ? ju(c->max) : json_null();
}

/* {first, last, max} of a counter, or null when never known. */
static json_t *hc_json(const vt_hcount *c)
{
    if (!c->known) return json_null();
    return json_pack("{s:o,s:o,s:o}", "first", ju(c->first), "last", ju(c->last), "max", ju(c->max));
}

static json_t *flag_json(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static void warn_append(void *ctx, const char *text)
{
    json_array_append_new((json_t *)ctx, jstr(text));
}

/* docs/metrics.md "Host and hardware": null when no snapshot had "host". */
static json_t *host_json(const vt_host *h)
{
    if (!h->present) return json_null();
    json_t *j = json_object();
    json_object_set_new(j, "rss_bytes", hc_last(&h->rss));
    json_object_set_new(j, "rss_peak_bytes", h->rss_peak.known ? hc_max(&h->rss_peak) : hc_max(&h->rss));
    json_object_set_new(j, "swap_bytes", hc_last(&h->swap));
    json_object_set_new(j, "swap_max_bytes", hc_max(&h->swap));
    if (h->has_cgroup) {
        json_t *c = json_object();
        json_object_set_new(c, "version", h->cg_version > 0 ? json_integer(h->cg_version) : json_null());
        json_object_set_new(c, "path", h->cg_path[0] ? jstr(h->cg_path) : json_null());
        json_object_set_new(c, "oom", hc_json(&h->cg_oom));
        json_object_set_new(c, "oom_kill", hc_json(&h->cg_oom_kill));
        json_object_set_new(c, "memory_current_bytes", hc_last(&h->cg_current));
        json_object_set_new(c, "memory_max_bytes", hc_last(&h->cg_max));
        json_object_set_new(j, "cgroup", c);
    } else {
        json_object_set_new(j, "cgroup", json_null());
    }
    json_t *gpus = json_array();
    for (size_t i = 0; i < h->ngpus; i++) {
        const vt_gpu_health *g = &h->gpus[i];
        json_t *o = json_object();
        json_object_set_new(o, "device", g->device >= 0 ? json_integer(g->device) : json_null());
        json_object_set_new(o, "index", g->index >= 0 ? json_integer(g->index) : json_null());
        json_object_set_new(o, "uuid", g->uuid[0] ? jstr(g->uuid) : json_null());
        json_object_set_new(o, "used_bytes", hc_last(&g->used));
        json_object_set_new(o, "total_bytes", hc_last(&g->total));
        json_object_set_new(o, "process_used_bytes", hc_last(&g->process_used));
        json_object_set_new(o, "process_used_max_bytes", hc_max(&g->process_used));
        for (int c = 0; c < VT_HC_N; c++) json_object_set_new(o, vt_hc_name(c), hc_json(&g->c[c]));
        json_object_set_new(o, "remapped_rows_pending", flag_json(g->pending_last));
        json_object_set_new(o, "remapped_rows_failure", flag_json(g->failure_last));
        json_array_append_new(gpus, o);
    }
    json_object_set_new(j, "nvml_devices", gpus);
    json_t *w = json_array();
    vt_hostsig_warnings(h, warn_append, w);
    json_object_set_new(j, "warnings", w);
    return j;
}

/* "peak_composition": what was live at the peak (pc present): bytes, step, time_ns,
 * sites [{id, title, bytes}] (bytes descending, merged by site as the site list), and
 * the sites not named (other_bytes, other_sites). */
static json_t *peak_json(vt_analysis *a, const vt_proc_result *pr, const vt_peakcomp *pc)
{
    json_t *j = json_object();
    json_object_set_new(j, "bytes", ju(pc->bytes));
    json_object_set_new(j, "step", vt_process_no_steps(pr->p) ? json_null() : ju(pc->step));   /* the step in progress */
    json_object_set_new(j, "time_ns", ju(pc->time_ns));
    vt_peak_part parts[VT_PEAKCOMP_MAX];
    size_t n = vt_peak_parts(pr, pc, parts);
    json_t *sites = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "id", parts[i].r ? json_string(parts[i].r->id) : json_null());
        json_object_set_new(e, "title", parts[i].r ? jstr(vt_site_title(a, parts[i].r)) : json_null());
        json_object_set_new(e, "bytes", ju(parts[i].bytes));
        json_array_append_new(sites, e);
    }
    json_object_set_new(j, "sites", sites);
    json_object_set_new(j, "other_bytes", ju(pc->other_bytes));
    json_object_set_new(j, "other_sites", ju(pc->other_sites));
    return j;
}

static json_t *process_json(vt_analysis *a, const vt_proc_result *pr)
{
    const vt_process *p = pr->p;
    json_t *j = json_object();
    json_object_set_new(j, "pid", ju(p->pid));
    json_object_set_new(j, "host", jstr(p->host));
    json_object_set_new(j, "rank", p->has_rank ? json_integer(p->rank) : json_null());
    json_object_set_new(j, "restart", p->has_restart ? json_integer(p->restart) : json_null());
    json_object_set_new(j, "peak_bytes", ju(p->peak_bytes));
    json_object_set_new(j, "unfreed_at_exit_bytes", ju(p->unfreed_exit_bytes));
    json_object_set_new(j, "steps", ju(vt_process_steps(p)));
    if (p->slot_width > 1) {   /* the series were kept in buckets of steps (vt_slots.h) */
        json_t *b = json_object();
        json_object_set_new(b, "count", ju(p->nsteps));
        json_object_set_new(b, "width", ju(p->slot_width));
        json_object_set_new(j, "step_buckets", b);
    }
    if (p->peak_comp && p->peak_comp->present)
        json_object_set_new(j, "peak_composition", peak_json(a, pr, p->peak_comp));
    json_t *sites = json_array();
    for (size_t i = 0; i < pr->nsites; i++) json_array_append_new(sites, site_json(a, pr, &pr->sites[i]));
    json_object_set_new(j, "sites", sites);
    json_t *ooms = json_array();
    for (size_t i = 0; i < p->nooms; i++) json_array_append_new(ooms, oom_json(a, pr, &p->ooms[i]));
    json_object_set_new(j, "ooms", ooms);
    if (p->ooms_dropped)   /* past VT_MAX_OOMS: counted, not listed */
        json_object_set_new(j, "ooms_not_listed", ju(p->ooms_dropped));
    /* extras */
    json_t *imports = json_array();
    uint64_t imported = 0;
    vt_import_group *g;
    size_t ng = vt_imports_by_exporter(a, p, &g);
    for (size_t k = 0; k < ng; k++) {
        json_t *o = json_object();
        json_object_set_new(o, "exporter_pid", g[k].exporter_pid ? ju(g[k].exporter_pid) : json_null());
        json_object_set_new(o, "bytes", ju(g[k].bytes));
        json_object_set_new(o, "mappings", ju(g[k].mappings));
        json_object_set_new(o, "opens", ju(g[k].opens));
        json_array_append_new(imports, o);
        imported += g[k].bytes;
    }
    free(g);
    json_object_set_new(j, "imported_open_bytes", ju(imported));
    json_object_set_new(j, "imports_at_exit", json_boolean(p->nimports && p->imports_at_exit));
    json_object_set_new(j, "imports", imports);
    char *file_shown = vt_xdisplay(p->file);   /* the snapshot path, as every output shows it */
    json_object_set_new(j, "file", jstr(file_shown));
    free(file_shown);
    json_object_set_new(j, "ppid", ju(p->ppid));
    json_object_set_new(j, "start_ns", ju(p->start_ns));
    json_object_set_new(j, "exe", jstr_or_null(p->exe));
    json_object_set_new(j, "cmdline", p->cmdline ? jstr(p->cmdline) : json_null());
    json_object_set_new(j, "allocator_env", p->alloc_env ? jstr(p->alloc_env) : json_null());
    json_object_set_new(j, "tensors", json_boolean(p->tensors));
    json_object_set_new(j, "step_range", p->step_range ? jstr(p->step_range) : json_null());
    json_object_set_new(j, "step_marked", json_boolean(p->step_marked));
    char tp[4096];   /* the event trace beside the stream (VRAMTRACE_TRACE=1), or null */
    json_object_set_new(j, "event_trace", vt_trace_beside(p->file, tp, sizeof tp) ? jstr(tp) : json_null());
    /* with a step_range: whether any range of that name ended (false: it matched nothing) */
    json_object_set_new(j, "step_range_matched", p->step_range ? json_boolean(p->step_marked) : json_null());
    json_object_set_new(j, "first_step", p->nsteps ? ju(p->steps[0]) : json_null());
    json_object_set_new(j, "last_step", p->nsteps ? ju(p->last_step) : json_null());
    json_object_set_new(j, "warmup_steps", ju(pr->warmup_steps));
    json_object_set_new(j, "exited", json_boolean(p->exited));
    json_object_set_new(j, "torn_tail", json_boolean(p->torn_tail));
    json_object_set_new(j, "dropped_records", ju(p->dropped_records));
    if (p->has_summary) {   /* steps a writer under VRAMTRACE_MAX_BYTES folded into buckets */
        json_t *sm = json_object();
        json_object_set_new(sm, "first_step", ju(p->summary_first));
        json_object_set_new(sm, "last_step", ju(p->summary_last));
        json_object_set_new(sm, "buckets", ju(p->summary_buckets));
        json_object_set_new(sm, "records", ju(p->summary_records));
        json_object_set_new(sm, "max_bytes", ju(p->summary_max_bytes));
        json_object_set_new(j, "summarised_steps", sm);
    }
    if (p->ngaps) {   /* only when the stream records a write fault */
        json_object_set_new(j, "lost_records", ju(p->lost_records));
        json_t *gaps = json_array();
        for (size_t g = 0; g < p->ngaps; g++) {
            const vt_gap *gp = &p->gaps[g];
            char gt[320];
            json_t *o = json_object();
            json_object_set_new(o, "records", ju(gp->records));
            json_object_set_new(o, "first_step", gp->has_steps ? ju(gp->first_step) : json_null());
            json_object_set_new(o, "last_step", gp->has_steps ? ju(gp->last_step) : json_null());
            json_object_set_new(o, "first_ns", ju(gp->first_ns));
            json_object_set_new(o, "last_ns", ju(gp->last_ns));
            json_object_set_new(o, "errno", json_integer(gp->err));
            json_object_set_new(o, "error", jstr(gp->error));
            json_object_set_new(o, "text", jstr(vt_gap_text(gp, gt, sizeof gt)));
            json_array_append_new(gaps, o);
        }
        json_object_set_new(j, "gaps", gaps);
    }
    json_t *counts = json_object();
    for (int v = 0; v < VT_NVERDICTS; v++) json_object_set_new(counts, vt_verdict_name((vt_verdict)v), ju(pr->count[v]));
    json_object_set_new(j, "verdict_counts", counts);
    size_t never_held = 0;   /* of the stable ones: sites whose calls all failed (the text report's count apart) */
    for (size_t i = 0; i < pr->nsites; i++) never_held += vt_site_never_held(&pr->sites[i]);
    json_object_set_new(j, "sites_never_held", ju(never_held));
    json_t *devs = json_array();
    for (size_t d = 0; d < p->ndevices; d++) {
        const vt_device *dv = &p->devices[d];
        json_t *o = json_object();
        json_object_set_new(o, "device", json_integer(dv->device));
        json_object_set_new(o, "free_bytes", dv->has_mem ? ju(dv->free_bytes) : json_null());
        json_object_set_new(o, "total_bytes", dv->has_mem ? ju(dv->total_bytes) : json_null());
        json_object_set_new(o, "live_bytes", ju(dv->live_bytes));
        json_object_set_new(o, "peak_bytes", ju(dv->peak_max));
        json_object_set_new(o, "fragmentation", json_real(dv->frag_last));
        json_object_set_new(o, "fragmentation_max", json_real(dv->frag_max));
        json_object_set_new(o, "pool_reserved_bytes", ju(dv->pool_reserved));
        json_object_set_new(o, "pool_used_bytes", ju(dv->pool_used));
        json_object_set_new(o, "pool_retention_bytes", ju(dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0));
        json_object_set_new(o, "pool_retention_max_bytes", ju(dv->retention_max));
        if (dv->has_graph) {   /* only for programs that made graph allocation nodes */
            json_object_set_new(o, "graph_reserved_bytes", ju(dv->graph_reserved));
            json_object_set_new(o, "graph_used_bytes", ju(dv->graph_used));
            json_object_set_new(o, "graph_retention_bytes", ju(vt_graph_retention(dv)));
            json_object_set_new(o, "graph_retention_max_bytes", ju(dv->graph_retention_max));
        }
        if (dv->peak_comp.present)
            json_object_set_new(o, "peak_composition", peak_json(a, pr, &dv->peak_comp));
        json_object_set_new(o, "leak_bytes_per_step", json_real(vt_device_leak_rate(pr, dv->device)));
        int64_t ex = vt_device_exhaustion_step(pr, dv->device);
        json_object_set_new(o, "exhaustion_step", ex >= 0 ? json_integer(ex) : json_null());
        if (dv->has_torch) {
            json_t *t = json_object();
            int both = (dv->has_torch & (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) == (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED);
            json_object_set_new(t, "allocated_bytes", dv->has_torch & VT_TORCH_ALLOCATED ? jnum(dv->torch_allocated) : json_null());
            json_object_set_new(t, "reserved_bytes", dv->has_torch & VT_TORCH_RESERVED ? jnum(dv->torch_reserved) : json_null());
            json_object_set_new(t, "reserved_unallocated_bytes", both ? jnum(dv->torch_reserved - dv->torch_allocated) : json_null());
            json_object_set_new(t, "reserved_unallocated_max_bytes", both ? jnum(dv->torch_cached_max) : json_null());
            json_object_set_new(t, "inactive_split_bytes",
                                dv->has_torch & VT_TORCH_INACTIVE_SPLIT ? jnum(dv->torch_inactive_split) : json_null());
            json_object_set_new(o, "torch", t);
        }
        json_array_append_new(devs, o);
    }
    json_object_set_new(j, "devices", devs);
    json_t *an = json_object();
    for (size_t i = 0; i < p->nannots; i++) json_object_set_new(an, p->annots[i].key, jnum(p->annots[i].value));
    json_object_set_new(j, "annotations", an);
    json_t *labels = json_array();
    for (size_t i = 0; i < p->nlabels; i++)
        json_array_append_new(labels, json_pack("{s:o, s:o, s:o, s:s, s:s}", "seq", ju(p->labels[i].seq), "step",
                                                ju(p->labels[i].step), "during_step",
                                                ju(vt_during_step(p->labels[i].step)), "trigger", p->labels[i].trigger, "label",
                                                p->labels[i].label));
    json_object_set_new(j, "labels", labels);
    json_object_set_new(j, "labels_dropped", ju(p->labels_dropped));
    json_object_set_new(j, "nvtx_marks_not_written", ju(p->marks_not_written));
    json_object_set_new(j, "host_signals", host_json(&p->hostsig));
    json_t *total = json_array();
    for (size_t i = 0; i < p->nsteps; i++) json_array_append_new(total, json_pack("[o,o]", ju(p->steps[i]), ju(p->step_total[i])));
    json_object_set_new(j, "total_live_bytes_by_step", total);
    return j;
}

/* A process of the summary: its index in "processes", rank, restart and pid. */
static json_t *proc_ref(vt_analysis *a, size_t pi)
{
    const vt_process *p = a->procs[pi].p;
    return json_pack("{s:I, s:o, s:o, s:o, s:o}", "process", (json_int_t)pi, "rank",
                     p->has_rank ? json_integer(p->rank) : json_null(), "restart",
                     p->has_restart ? json_integer(p->restart) : json_null(), "pid", ju(p->pid), "host", jstr(p->host));
}

/* "summary": the text report's summary across processes (vt_ranks.h), every entry. */
static json_t *summary_json(vt_analysis *a)
{
    vt_rank_summary s;
    vt_rank_summary_build(a, &s);
    json_t *j = json_object();
    char list[4096];
    json_object_set_new(j, "processes", ju(s.nprocs));
    json_object_set_new(j, "all_ranked", json_boolean(s.all_ranked));
    json_object_set_new(j, "ranks", ju(s.nranks));
    json_t *leaks = json_array();
    for (size_t i = 0; i < s.nleaks; i++) {
        const vt_xsite *x = &s.leaks[i];
        json_t *e = json_object(), *on = json_array();
        json_object_set_new(e, "title", jstr(x->label));
        json_object_set_new(e, "kind", json_string(vt_kind_name(x->kind)));
        json_object_set_new(e, "count", ju(x->nranks));
        json_object_set_new(e, "processes", ju(x->nprocs));
        json_object_set_new(e, "min_bytes_per_step", json_real(x->rate_min));
        json_object_set_new(e, "max_bytes_per_step", json_real(x->rate_max));
        json_object_set_new(e, "ranks_text", jstr(vt_rank_list(a, x->procs, x->nprocs, list, sizeof list)));
        for (size_t k = 0; k < x->nprocs; k++) {
            json_t *r = proc_ref(a, x->procs[k]);
            json_object_set_new(r, "bytes_per_step", json_real(x->rate[k]));
            json_object_set_new(r, "leaked_bytes", ju(x->bytes[k]));
            json_array_append_new(on, r);
        }
        json_object_set_new(e, "on", on);
        json_array_append_new(leaks, e);
    }
    json_object_set_new(j, "leaks", leaks);
    json_t *ooms = json_array();
    for (size_t i = 0; i < s.nooms; i++) {
        const vt_xsite *x = &s.ooms[i];
        json_t *e = json_object(), *on = json_array();
        json_object_set_new(e, "title", jstr(x->label));
        json_object_set_new(e, "kind", json_string(vt_kind_name(x->kind)));
        json_object_set_new(e, "count", ju(x->nranks));
        json_object_set_new(e, "processes", ju(x->nprocs));
        json_object_set_new(e, "events", ju(x->events));
        json_object_set_new(e, "first_step", ju(x->first_step));
        json_object_set_new(e, "ranks_text", jstr(vt_rank_list(a, x->procs, x->nprocs, list, sizeof list)));
        for (size_t k = 0; k < x->nprocs; k++) {
            json_t *r = proc_ref(a, x->procs[k]);
            json_object_set_new(r, "events", ju(x->bytes[k]));
            json_array_append_new(on, r);
        }
        json_object_set_new(e, "on", on);
        json_array_append_new(ooms, e);
    }
    json_object_set_new(j, "ooms", ooms);
    if (s.nprocs) {
        json_t *pk = proc_ref(a, s.peak_max_proc);
        json_object_set_new(pk, "peak_bytes", ju(a->procs[s.peak_max_proc].p->peak_bytes));
        json_object_set_new(j, "largest_peak", pk);
        pk = proc_ref(a, s.peak_min_proc);
        json_object_set_new(pk, "peak_bytes", ju(a->procs[s.peak_min_proc].p->peak_bytes));
        json_object_set_new(j, "smallest_peak", pk);
    }
    vt_rank_summary_free(&s);
    return j;
}

int vt_report_json(FILE *f, vt_analysis *a)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string(VT_REPORT_NAME));
    json_object_set_new(root, "version", json_integer(VT_REPORT_VERSION));
    json_object_set_new(root, "summary", summary_json(a));
    json_t *procs = json_array();
    for (size_t i = 0; i < a->n; i++) json_array_append_new(procs, process_json(a, &a->procs[i]));
    json_object_set_new(root, "processes", procs);
    int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    fputc('\n', f);
    json_decref(root);
    return rc < 0 || ferror(f) ? -1 : 0;
}
