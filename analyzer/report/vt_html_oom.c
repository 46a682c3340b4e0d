/* vt_html_oom.c — the out-of-memory view's part of the HTML report's data
 * (vt_html_oom in vt_report_html.h; drawn by html/oom.js).
 *
 * Per OOM event of a process (the first HTML_OOMS; the rest counted in
 * "ooms_more"): the request, the failing call's site, free and tracked memory, the
 * verdict as the text and JSON reports give it (fragmentation: at least the request
 * is free; exhaustion: less is free; unknown: free memory not known), the gaps
 * between the process's own blocks, the sites holding the most and those whose
 * blocks split the free gaps, and the address map the analysis kept (vt_oom.block:
 * runs of blocks by address, offsets from the first run's address, so every number
 * stays well inside a double's exact integers). Sites are indices into the
 * process's "sites", null when the analysis does not list one.
 */
#include "vt_report_html.h"
#include "vt_report.h"

#include <inttypes.h>
#include <stdio.h>

#include "vt_format.h"

#define HTML_OOMS 50
#define OOM_FRAMES 12           /* frames of the failing call's stack */

static json_t *site_ref(const vt_proc_result *pr, vt_rsite *s)
{
    const vt_site_result *r = s ? vt_result_of(pr, s) : NULL;
    return r ? json_integer((json_int_t)(r - pr->sites)) : json_null();
}

static json_t *oom_sites(const vt_proc_result *pr, const vt_oom_site *v, int n, int split, uint64_t requested)
{
    json_t *arr = json_array();
    for (int k = 0; arr && k < n; k++) {
        json_t *e = json_pack("{s:o, s:I, s:I}", "site", site_ref(pr, v[k].site), "bytes", (json_int_t)v[k].bytes,
                              "blocks", (json_int_t)v[k].blocks);
        if (e && split &&
            (json_object_set_new(e, "split_blocks", json_integer((json_int_t)v[k].split_blocks)) ||
             json_object_set_new(e, "gap_if_freed", json_integer((json_int_t)v[k].gap_if_freed)) ||
             json_object_set_new(e, "fits", json_boolean(v[k].gap_if_freed >= requested)))) {
            json_decref(e);
            e = NULL;
        }
        if (!e || json_array_append_new(arr, e)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* The address map: columns of the runs; site -1: blocks of several sites, -2: a
 * site the analysis does not list. */
static json_t *map_json(const vt_proc_result *pr, const vt_oom *o)
{
    char base[32];
    snprintf(base, sizeof base, "0x%" PRIx64, o->map[0].addr);
    json_t *off = json_array(), *size = json_array(), *gin = json_array(), *site = json_array(), *blocks = json_array();
    json_t *m = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:i}", "base", base, "off", off, "size", size,
                          "gaps_in", gin, "site", site, "blocks", blocks, "max_runs", VT_OOM_MAP);
    if (!m) return NULL;
    for (uint32_t i = 0; i < o->nmap; i++) {
        const vt_oom_block *b = &o->map[i];
        const vt_site_result *r = b->site ? vt_result_of(pr, b->site) : NULL;
        json_int_t si = r ? (json_int_t)(r - pr->sites) : b->site ? -2 : -1;
        if (json_array_append_new(off, json_integer((json_int_t)(b->addr - o->map[0].addr))) ||
            json_array_append_new(size, json_integer((json_int_t)b->size)) ||
            json_array_append_new(gin, json_integer((json_int_t)b->gaps_in)) ||
            json_array_append_new(site, json_integer(si)) ||
            json_array_append_new(blocks, json_integer(b->blocks))) {
            json_decref(m);
            return NULL;
        }
    }
    return m;
}

static json_t *oom_json(vt_analysis *a, const vt_proc_result *pr, const vt_oom *o)
{
    const char *verdict = !o->has_mem ? "unknown" : o->free_bytes >= o->requested_bytes ? "fragmentation" : "exhaustion";
    const vt_site_result *r = o->site ? vt_result_of(pr, o->site) : NULL;
    json_t *frames = json_array();
    for (uint32_t i = 0; frames && r && i < vt_site_nframes(r) && i < OOM_FRAMES; i++) {
        const vt_sym *s = vt_site_frame(a, r, i);
        if (json_array_append_new(frames, json_pack("[s, i]", s->label, s->python))) {
            json_decref(frames);
            frames = NULL;
        }
    }
    json_t *j = json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:o, s:o, s:I, s:o, s:s, s:o, s:s, s:o, s:I, s:o, s:o}",
                          "step", (json_int_t)o->step, "api", o->api, "kind", vt_kind_name(o->kind),
                          "device", o->device, "requested", (json_int_t)o->requested_bytes, "result", (json_int_t)o->result,
                          "free", o->has_mem ? json_integer((json_int_t)o->free_bytes) : json_null(),
                          "total", o->has_mem ? json_integer((json_int_t)o->total_bytes) : json_null(),
                          "tracked", (json_int_t)o->tracked_bytes,
                          "untracked", o->has_mem ? json_integer(o->untracked_bytes) : json_null(),
                          "verdict", verdict, "site", site_ref(pr, o->site),
                          "site_title", r ? vt_site_title(a, r) : o->api, "frames", frames ? frames : json_array(),
                          "stack_frames", (json_int_t)(r ? vt_site_nframes(r) : 0),
                          "top", oom_sites(pr, o->top, o->ntop, 0, o->requested_bytes),
                          "has_allocs", json_boolean(o->has_allocs));
    if (!j) return NULL;
    if (o->has_allocs) {
        json_t *g = json_pack("{s:I, s:I, s:I, s:f}", "count", (json_int_t)o->gap_count, "total", (json_int_t)o->gap_total,
                              "largest", (json_int_t)o->gap_largest,
                              "ratio", o->gap_total ? 1.0 - (double)o->gap_largest / (double)o->gap_total : 0.0);
        json_t *sp = oom_sites(pr, o->split, o->nsplit, 1, o->requested_bytes);
        if (!g || json_object_set_new(j, "gaps", g) || !sp || json_object_set_new(j, "split", sp)) {
            json_decref(j);
            return NULL;
        }
    }
    if (o->nmap) {
        json_t *m = map_json(pr, o);
        if (!m || json_object_set_new(j, "map", m)) {
            json_decref(j);
            return NULL;
        }
    }
    return j;
}

int vt_html_oom(vt_analysis *a, size_t pi, json_t *proc)
{
    const vt_proc_result *pr = &a->procs[pi];
    const vt_process *p = pr->p;
    json_t *arr = json_array();
    if (!arr || json_object_set_new(proc, "ooms", arr)) return -1;
    for (size_t i = 0; i < p->nooms && i < HTML_OOMS; i++) {
        json_t *j = oom_json(a, pr, &p->ooms[i]);
        if (!j || json_array_append_new(arr, j)) return -1;
    }
    size_t more = p->nooms > HTML_OOMS ? p->nooms - HTML_OOMS : 0;
    return json_object_set_new(proc, "ooms_more", json_integer((json_int_t)(more + p->ooms_dropped)));
}
