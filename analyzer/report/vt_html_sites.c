/* vt_html_sites.c — the site panel's data (html/site.js draws it): per site its
 * whole stack, its curve, its figures, the rule that gave its verdict in words and
 * its allocator; per process the frame table the stacks index; across processes the
 * groups of sites that are the same site (vt_ranks.h matching: kind and shown frames),
 * so the panel can list the devices and ranks where a site appears.
 *
 * Keys added to each process object:
 *   "frames": [ {"l": label, "w": module path, or the source file of a Python frame,
 *                "py": 1 (a Python frame), "in": 1 (inlined into the next frame)} ]
 *   "curve_step": [first step of each curve point]
 * and to each of its "sites":
 *   "stack": [indices into frames, innermost first], "stack_left_out": frames not listed,
 *   "title_frame": index into stack of the frame that names it, "rule": text, "alloc":
 *   text or null, "flags": text or null, "peak", "floor_end", "unfreed", "leaked":
 *   bytes, "slope": bytes per step, "since" / "exhaust" / "oom_cut": step or null,
 *   "since_text": "since" in words (vt_growth_since: whether it was seen in warm-up) or null,
 *   "curve": {"live": [..], "peak": [..] (only when some peak is above live)} (SITE_POINTS
 *   points at most; null past the first SITE_CURVES sites), "same": index into
 *   the top object's "same_sites" or absent;
 * to the top object: "same_sites": [ [[process index, site index], ...], ... ] (groups
 * of two or more sites).
 * Bounded: SITE_FRAMES frames per stack, SITE_POINTS points per curve, curves for
 * SITE_CURVES sites (leaks first: the analysis order); the frame
 * table holds each distinct frame once. Single-threaded; reads the analysis only.
 */
#include "vt_report_html.h"
#include "vt_html_series.h"
#include "vt_report.h"
#include "vt_ranks.h"
#include "vt_allocators.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "vt_format.h"
#include "vt_size.h"
#include "vt_util.h"

#define SITE_FRAMES 64
#define SITE_POINTS 160
#define SITE_CURVES 500         /* sites with a curve per process: the first in the analysis order */

typedef struct fent {
    char *key;
    size_t index;
    UT_hash_handle hh;
} fent;

static int put(json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *opt_step(int known, int64_t v)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* Appends printf text to buf (cap bytes, o used), cut at the end. */
#define ADD(...) do { int w_ = snprintf(buf + o, cap - o, __VA_ARGS__); if (w_ > 0) o = o + (size_t)w_ >= cap ? cap - 1 : o + (size_t)w_; } while (0)

/* The rule that gave r its verdict, in words, from its live series (n slots) and
 * figures (docs/metrics.md "Verdicts"). */
static void rule_text(const vt_proc_result *pr, const vt_site_result *r, const uint64_t *live, uint64_t *F, size_t n,
                      char *buf, size_t cap)
{
    const vt_process *p = pr->p;
    const vt_site_stats *st = &r->st;
    const char *unit = p->slot_width > 1 ? "bucket" : "step";
    char b1[32], b2[32], b3[32];
    size_t o = 0, w = st->warmup < n ? st->warmup : (n ? n - 1 : 0), m = n > w ? n - w : 0;
    buf[0] = 0;
    if (n) vt_suffix_min(live, n, F);
    switch (st->verdict) {
    case VT_LEAK: {
        size_t t = 0;   /* the rises at the end, one after the other */
        while (t < m && t + 1 < n && F[n - 1 - t] > F[n - 2 - t]) t++;
        uint64_t first_rise = t ? F[n - t] - F[n - t - 1] : 0;
        int same = t > 0;
        for (size_t i = n - t; i < n && same; i++) same = F[i] - F[i - 1] == first_rise;
        if (r->oom_cut_step >= 0)
            ADD("its floor rose at %u of the %zu %ss after warm-up (%s/%s) until its own allocation failed with "
                "out-of-memory during step %" PRIu64, st->rises, m, unit, vt_size_fmt_signed(st->slope, b1, sizeof b1),
                unit, vt_during_step((uint64_t)r->oom_cut_step));
        else if (t >= VT_LATE_LEAK_STEPS || (t && t + !w == m))
            ADD("floor rose at each of the last %zu %ss%s, %s %s", t, unit,
                t + !w == m ? (w ? " (every one after warm-up)" : " (every one after the first)") : "",
                same ? vt_size_fmt(first_rise, b1, sizeof b1) : vt_size_fmt_signed(st->slope, b1, sizeof b1),
                same ? "each" : "a step on average");
        else
            ADD("floor rose at %u of the %zu %ss after warm-up, %s a step (Theil-Sen slope), and was still rising in "
                "the last quarter of the run", st->rises, m, unit, vt_size_fmt_signed(st->slope, b1, sizeof b1));
        char base[96];
        ADD("; leaked %s %s", vt_size_fmt(st->leaked_bytes, b2, sizeof b2), vt_leaked_since(st, base, sizeof base));
        char since[128];
        if (st->has_first_growth) ADD(", %s", vt_growth_since(st, 1, since, sizeof since));
        break;
    }
    case VT_CHURN:
        ADD("gave memory back at %u of the %zu %ss after warm-up and took it again (peak %s, floor %s at the end): "
            "temporaries, a sawtooth or batched frees, not a leak", st->churn_events, m, unit,
            vt_size_fmt(r->peak_bytes, b1, sizeof b1), vt_size_fmt(st->floor_end, b2, sizeof b2));
        break;
    case VT_PLATEAU: {
        size_t last = 0;
        for (size_t i = 1; i < n; i++)
            if (live[i] > live[i - 1]) last = i;
        ADD("grew, then stopped: its live bytes last rose at step %" PRIu64 ", and its floor has stayed at %s since",
            n ? p->steps[last] : 0, vt_size_fmt(st->floor_end, b1, sizeof b1));
        if (st->rises)
            ADD(" (it rose at %u %s%s after warm-up, none in the last quarter of the run)", st->rises, unit,
                st->rises == 1 ? "" : "s");
        else
            ADD(" (no rise after warm-up)");
        ADD(": warm-up or a cache, not a leak");
        break;
    }
    case VT_STABLE:
        if (!r->peak_bytes)
            ADD("never held memory (every call of it failed, or it was freed before any snapshot saw it)");
        else
            ADD("held %s from its first %s on and never rose above it", vt_size_fmt(st->floor_end, b1, sizeof b1), unit);
        break;
    case VT_TRANSIENT:
        ADD("held memory in at most %d %ss (peak %s) and none at the last one: taken and given back inside a step or two",
            VT_TRANSIENT_STEPS, unit, vt_size_fmt(r->peak_bytes, b1, sizeof b1));
        break;
    case VT_TOO_FEW:
        if (!n) {   /* the process had no step: nothing is judged */
            ADD("%s: the process marked no step and no periodic snapshot cut one (peak %s, %s unfreed at exit)",
                VT_NO_STEPS_LABEL, vt_size_fmt(r->peak_bytes, b1, sizeof b1),
                p->exited ? vt_size_fmt(r->unfreed_exit, b3, sizeof b3) : "unknown");
            break;
        }
        ADD("only %zu %s%s after warm-up: at least %d are needed to tell leak, plateau and stable apart (peak %s, %s at "
            "the end)", m, unit, m == 1 ? "" : "s", VT_JUDGE_MIN_STEPS, vt_size_fmt(r->peak_bytes, b1, sizeof b1),
            vt_size_fmt(st->last_live, b3, sizeof b3));
        break;
    default:
        break;
    }
    if (p->slot_width > 1) ADD(" (buckets of %" PRIu64 " steps)", p->slot_width);
}
#undef ADD

/* The index of frame s in the process's frame table (added on first use); -1 when
 * out of memory. */
static long frame_index(fent **h, json_t *frames, const vt_sym *s)
{
    const char *where = s->python ? s->file : s->module;
    size_t ll = strlen(s->label), wl = where ? strlen(where) : 0;
    char *key = malloc(ll + wl + 4);
    if (!key) return -1;
    key[0] = (char)('0' + (s->python ? 1 : 0) + (s->inlined ? 2 : 0));
    memcpy(key + 1, s->label, ll);
    key[1 + ll] = '\n';
    memcpy(key + 2 + ll, where ? where : "", wl);
    key[2 + ll + wl] = 0;
    fent *e;
    HASH_FIND_STR(*h, key, e);
    if (e) {
        free(key);
        return (long)e->index;
    }
    json_t *f = json_pack("{s:s}", "l", s->label);
    if (f && where) json_object_set_new(f, "w", json_string(where));
    if (f && s->python) json_object_set_new(f, "py", json_integer(1));
    if (f && s->inlined) json_object_set_new(f, "in", json_integer(1));
    e = calloc(1, sizeof *e);
    if (!f || !e || json_array_append_new(frames, f)) {
        free(key);
        free(e);
        return -1;
    }
    e->key = key;
    e->index = json_array_size(frames) - 1;
    HASH_ADD_KEYPTR(hh, *h, e->key, strlen(e->key), e);
    return (long)e->index;
}

static int site_keys(vt_analysis *a, const vt_proc_result *pr, size_t si, json_t *o, fent **fh, json_t *frames,
                     vt_html_series *hs, uint64_t *live, uint64_t *peak, uint64_t *F, size_t k)
{
    const vt_site_result *r = &pr->sites[si];
    size_t n = pr->p->nsteps;
    json_t *stack = json_array();
    if (put(o, "stack", stack)) return -1;
    uint32_t nf = vt_site_nframes(r);
    for (uint32_t i = 0; i < nf && i < SITE_FRAMES; i++) {
        long fi = frame_index(fh, frames, vt_site_frame(a, r, i));
        if (fi < 0 || json_array_append_new(stack, json_integer(fi))) return -1;
    }
    char rule[600], note[200], fl[64], since[128];
    vt_html_series_site(hs, si, live, peak);
    rule_text(pr, r, live, F, n, rule, sizeof rule);
    note[0] = 0;
    if (vt_allocator_segments(r->stack->allocator))
        snprintf(note, sizeof note, "a segment of %s: run with --tensors to see its tensors",
                 vt_allocator_name(r->stack->allocator));
    else if (r->stack->allocator >= 0)
        snprintf(note, sizeof note, "allocated through %s", vt_allocator_name(r->stack->allocator));
    vt_flags_text(r->flags, " ", fl, sizeof fl);
    const char *flt = fl[0] == ' ' ? fl + 1 : fl;
    int differs = 0;   /* the peaks only where some are above the live bytes */
    for (size_t i = 0; i < n && !differs; i++) differs = peak[i] > live[i];
    json_t *curve = si >= SITE_CURVES ? json_null() : json_pack("{s:o}", "live", vt_html_points(live, n, k, 0));
    if (curve && si < SITE_CURVES && differs && put(curve, "peak", vt_html_points(peak, n, k, 1))) {
        json_decref(curve);
        curve = NULL;
    }
    return put(o, "stack_left_out", json_integer(nf > SITE_FRAMES ? nf - SITE_FRAMES : 0)) |
           put(o, "title_frame", json_integer(vt_site_title_index(r))) | put(o, "rule", json_string(rule)) |
           put(o, "alloc", note[0] ? json_string(note) : json_null()) |
           put(o, "flags", flt[0] ? json_string(flt) : json_null()) | put(o, "peak", u64(r->peak_bytes)) |
           put(o, "floor_end", u64(r->st.floor_end)) | put(o, "unfreed", u64(r->unfreed_exit)) |
           put(o, "leaked", u64(r->st.leaked_bytes)) | put(o, "slope", json_real(r->st.slope)) |
           put(o, "since", opt_step(r->st.has_first_growth, (int64_t)r->st.first_growth_step)) |
           put(o, "since_text", r->st.has_first_growth ? json_string(vt_growth_since(&r->st, 0, since, sizeof since))
                                                       : json_null()) |
           put(o, "exhaust", opt_step(r->exhaustion_step >= 0, r->exhaustion_step)) |
           put(o, "oom_cut", opt_step(r->oom_cut_step >= 0, r->oom_cut_step)) | put(o, "curve", curve);
}

int vt_html_sites(vt_analysis *a, size_t pi, json_t *proc)
{
    const vt_proc_result *pr = &a->procs[pi];
    size_t n = pr->p->nsteps, k = vt_html_npoints(n, SITE_POINTS);
    json_t *sites = json_object_get(proc, "sites"), *frames = json_array();
    if (!sites || put(proc, "frames", frames) || put(proc, "curve_step", vt_html_points(pr->p->steps, n, k, 0)))
        return -1;
    vt_html_series hs;
    uint64_t *live = malloc((n ? n : 1) * sizeof *live), *peak = malloc((n ? n : 1) * sizeof *peak);
    uint64_t *F = malloc((n ? n : 1) * sizeof *F);
    fent *fh = NULL, *e, *t;
    int rc = -1;
    if (live && peak && F && !vt_html_series_init(&hs, pr)) {
        rc = 0;
        for (size_t s = 0; s < pr->nsites && !rc; s++) {
            json_t *o = json_array_get(sites, s);
            rc = o ? site_keys(a, pr, s, o, &fh, frames, &hs, live, peak, F, k) : -1;
        }
        vt_html_series_free(&hs);
    }
    HASH_ITER(hh, fh, e, t) {
        HASH_DEL(fh, e);
        free(e->key);
        free(e);
    }
    free(live);
    free(peak);
    free(F);
    return rc;
}

typedef struct gent {
    char *key;
    json_t *members;            /* [[pi, si], ...] */
    UT_hash_handle hh;
} gent;

int vt_html_same_sites(vt_analysis *a, json_t *root)
{
    json_t *groups = json_array(), *procs = json_object_get(root, "procs");
    if (!procs || put(root, "same_sites", groups)) return -1;
    if (a->n < 2 && (!a->n || a->procs[0].p->ndevices < 2)) return 0;   /* nothing to match */
    gent *h = NULL, *e, *t;
    int rc = 0;
    for (size_t pi = 0; pi < a->n && !rc; pi++)
        for (size_t s = 0; s < a->procs[pi].nsites && !rc; s++) {
            char *key = vt_rank_site_key(a, &a->procs[pi].sites[s]);
            HASH_FIND_STR(h, key, e);
            if (e) {
                free(key);
            } else if (!(e = calloc(1, sizeof *e)) || !(e->members = json_array())) {
                free(key);
                free(e);
                rc = -1;
                break;
            } else {
                e->key = key;
                HASH_ADD_KEYPTR(hh, h, e->key, strlen(e->key), e);
            }
            rc = json_array_append_new(e->members, json_pack("[I, I]", (json_int_t)pi, (json_int_t)s));
        }
    /* groups in the order of their first member (the analysis order), two or more members */
    gent **order = calloc(HASH_COUNT(h) + 1, sizeof *order);
    size_t no = 0;
    if (!order) rc = -1;
    HASH_ITER(hh, h, e, t) {
        if (order && json_array_size(e->members) > 1) order[no++] = e;
    }
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0; j--) {
            json_t *x = json_array_get(order[j - 1]->members, 0), *y = json_array_get(order[j]->members, 0);
            json_int_t xp = json_integer_value(json_array_get(x, 0)), yp = json_integer_value(json_array_get(y, 0));
            json_int_t xs = json_integer_value(json_array_get(x, 1)), ys = json_integer_value(json_array_get(y, 1));
            if (xp < yp || (xp == yp && xs < ys)) break;
            gent *z = order[j];
            order[j] = order[j - 1];
            order[j - 1] = z;
        }
    for (size_t g = 0; g < no && !rc; g++) {
        size_t nm = json_array_size(order[g]->members);
        for (size_t i = 0; i < nm && !rc; i++) {
            json_t *m = json_array_get(order[g]->members, i);
            json_t *po = json_array_get(procs, (size_t)json_integer_value(json_array_get(m, 0)));
            json_t *so = json_array_get(json_object_get(po, "sites"), (size_t)json_integer_value(json_array_get(m, 1)));
            rc = so ? json_object_set_new(so, "same", json_integer((json_int_t)g)) : -1;
        }
        if (!rc) rc = json_array_append(groups, order[g]->members);
    }
    free(order);
    HASH_ITER(hh, h, e, t) {
        HASH_DEL(h, e);
        free(e->key);
        json_decref(e->members);
        free(e);
    }
    return rc;
}
