/* vt_html_flame.c — the flame graph's part of the HTML report's data
 * (vt_html_flame in vt_report_html.h; drawn by html/flame.js).
 *
 * Design: the tree is built here, once: each chosen site's shown frames
 * (vt_site_frame: native frames with their inlined callers, Python frames
 * interleaved), outermost first, are merged into a trie of nodes keyed by (parent,
 * frame); a frame is its function (a Python frame its "file:line in function"
 * label) and module, the site's innermost frame also its source line, as the
 * collapsed-stack export names them. The values are per chosen site, one array per
 * measure, so the page sums them up the tree for whichever it shows:
 *   peak   the site's live bytes in the process's peak composition (vt_peak_parts),
 *          and per device in that device's composition;
 *   exit   live bytes at exit (vt_site_result.unfreed_exit);
 *   growth the floor's slope, bytes per step (vt_site_stats.slope), where above 0.
 * Bounded: at most FLAME_SITES sites (the peak compositions' sites, then the largest
 * at exit, the fastest growing, then the devices' peak sites), the rest summed per
 * measure as "other"; at most FLAME_DEPTH frames per stack (the outermost ones
 * folded into one "(N outer frames)" frame). The page says when either cap cut.
 */
#include "vt_report_html.h"
#include "vt_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "vt_display.h"
#include "vt_format.h"
#include "vt_util.h"

#define FLAME_SITES 300
#define FLAME_DEPTH 48
#define FLAME_EACH 100          /* sites taken by exit bytes, and by growth */

typedef struct fname {
    char *key;                  /* name, '\n', module; owned */
    size_t index;
    UT_hash_handle hh;
} fname;

typedef struct fnode_key {
    uint32_t parent, frame;
} fnode_key;

typedef struct fnode {
    fnode_key key;
    uint32_t index;
    UT_hash_handle hh;
} fnode;

typedef struct flame_build {
    fname *names;
    json_t *frames;             /* [[name, module or null, python 0/1, inlined 0/1], ...] */
    fnode *nodes;
    json_t *parent, *frame;     /* node columns; node 0 is the root (parent -1, frame -1) */
    uint32_t nnodes;
} flame_build;

static const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path;
}

/* The frame's index in fb->frames, added on first use; -1 when out of memory. */
static long frame_index(flame_build *fb, const char *name, const char *module, int python, int inlined)
{
    size_t ln = strlen(name), lm = module ? strlen(module) : 0;
    char *key = vt_xmalloc(ln + lm + 4);
    snprintf(key, ln + lm + 4, "%s\n%s%c", name, module ? module : "", inlined ? 'i' : '-');
    fname *e;
    HASH_FIND_STR(fb->names, key, e);
    if (e) {
        free(key);
        return (long)e->index;
    }
    json_t *row = json_pack("[s, o, i, i]", name, module ? json_string(module) : json_null(), python, inlined);
    if (!row || json_array_append_new(fb->frames, row)) {
        free(key);
        return -1;
    }
    e = vt_xcalloc(1, sizeof *e);
    e->key = key;
    e->index = json_array_size(fb->frames) - 1;
    HASH_ADD_KEYPTR(hh, fb->names, e->key, strlen(e->key), e);
    return (long)e->index;
}

/* The child of node parent for frame, added on first use; -1 when out of memory. */
static long child(flame_build *fb, uint32_t parent, uint32_t frame)
{
    fnode_key k = {parent, frame};
    fnode *n;
    HASH_FIND(hh, fb->nodes, &k, sizeof k, n);
    if (n) return n->index;
    if (json_array_append_new(fb->parent, json_integer(parent)) || json_array_append_new(fb->frame, json_integer(frame)))
        return -1;
    n = vt_xcalloc(1, sizeof *n);
    n->key = k;
    n->index = fb->nnodes++;
    HASH_ADD(hh, fb->nodes, key, sizeof n->key, n);
    return n->index;
}

/* The leaf node of site r's stack, outermost frame first from the root; *cut: 1 when
 * the stack had more than FLAME_DEPTH frames. -1 when out of memory. */
static long site_leaf(vt_analysis *a, flame_build *fb, const vt_site_result *r, int *cut)
{
    uint32_t nf = vt_site_nframes(r), keep = nf, node = 0;
    char name[600];
    *cut = 0;
    if (nf > FLAME_DEPTH) {
        keep = FLAME_DEPTH - 1;
        *cut = 1;
        snprintf(name, sizeof name, "(%u outer frames)", nf - keep);
        long f = frame_index(fb, name, NULL, 0, 0);
        long c = f < 0 ? -1 : child(fb, node, (uint32_t)f);
        if (c < 0) return -1;
        node = (uint32_t)c;
    }
    if (!nf) {
        long f = frame_index(fb, "(no frames)", NULL, 0, 0);
        return f < 0 ? -1 : child(fb, 0, (uint32_t)f);
    }
    for (uint32_t j = keep; j-- > 0;) {
        const vt_sym *s = vt_site_frame(a, r, j);
        const char *fn = s->python ? s->label : s->function ? s->function : s->label;
        if (j == 0 && !s->python && s->function && s->file && s->line > 0)
            snprintf(name, sizeof name, "%s (%s:%d)", fn, base_name(s->file), s->line);
        else
            snprintf(name, sizeof name, "%s", fn);
        vt_utf8_trim(name);   /* a long name cut at the buffer's end keeps whole characters (JSON wants UTF-8) */
        long f = frame_index(fb, name, s->python ? NULL : base_name(s->module), s->python, s->inlined);
        long c = f < 0 ? -1 : child(fb, node, (uint32_t)f);
        if (c < 0) return -1;
        node = (uint32_t)c;
    }
    return node;
}

static void flame_free(flame_build *fb)
{
    fname *e, *t;
    HASH_ITER(hh, fb->names, e, t) {
        HASH_DEL(fb->names, e);
        free(e->key);
        free(e);
    }
    fnode *n, *u;
    HASH_ITER(hh, fb->nodes, n, u) {
        HASH_DEL(fb->nodes, n);
        free(n);
    }
    json_decref(fb->frames);
    json_decref(fb->parent);
    json_decref(fb->frame);
}

typedef struct rank_ent {
    size_t site;
    double v;
} rank_ent;

static int cmp_rank(const void *pa, const void *pb)
{
    const rank_ent *a = pa, *b = pb;
    if (a->v != b->v) return a->v > b->v ? -1 : 1;
    return a->site < b->site ? -1 : a->site > b->site;
}

/* Marks in sel the sites of composition pc (up to the cap *nsel). */
static void take_peak(const vt_proc_result *pr, const vt_peakcomp *pc, char *sel, size_t *nsel)
{
    vt_peak_part parts[VT_PEAKCOMP_MAX];
    size_t n = vt_peak_parts(pr, pc, parts);
    for (size_t i = 0; i < n && *nsel < FLAME_SITES; i++) {
        if (!parts[i].r) continue;
        size_t si = (size_t)(parts[i].r - pr->sites);
        if (!sel[si]) {
            sel[si] = 1;
            ++*nsel;
        }
    }
}

/* Marks the FLAME_EACH sites with the largest value (above 0; growth: 1, else exit). */
static void take_top(const vt_proc_result *pr, int growth, char *sel, size_t *nsel)
{
    rank_ent *v = vt_xmalloc((pr->nsites ? pr->nsites : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < pr->nsites; i++) {
        const vt_site_result *r = &pr->sites[i];
        if (!vt_kind_in_totals(r->kind)) continue;
        double x = growth ? r->st.slope : (double)r->unfreed_exit;
        if (x > 0) v[n++] = (rank_ent){i, x};
    }
    qsort(v, n, sizeof *v, cmp_rank);
    for (size_t i = 0; i < n && i < FLAME_EACH && *nsel < FLAME_SITES; i++)
        if (!sel[v[i].site]) {
            sel[v[i].site] = 1;
            ++*nsel;
        }
    free(v);
}

/* {"bytes", "step" (the step in progress; null when the process had no step), "other",
 * "values": [per chosen site]} of composition pc, the
 * parts of sites not chosen added to "other"; NULL when out of memory. */
static json_t *peak_json(const vt_proc_result *pr, const vt_peakcomp *pc, const long *slot, size_t nsel)
{
    vt_peak_part parts[VT_PEAKCOMP_MAX];
    size_t n = vt_peak_parts(pr, pc, parts);
    json_t *vals = json_array();
    for (size_t k = 0; vals && k < nsel; k++)
        if (json_array_append_new(vals, json_integer(0))) {
            json_decref(vals);
            return NULL;
        }
    uint64_t other = pc->other_bytes, nother = pc->other_sites;
    for (size_t i = 0; vals && i < n; i++) {
        long k = parts[i].r ? slot[parts[i].r - pr->sites] : -1;
        if (k < 0) {
            other = vt_sat_add(other, parts[i].bytes);
            nother++;
        } else {
            json_array_set_new(vals, (size_t)k, json_integer((json_int_t)parts[i].bytes));
        }
    }
    json_t *step = vt_process_no_steps(pr->p) ? json_null() : json_integer((json_int_t)pc->step);   /* in progress */
    return json_pack("{s:I, s:o, s:I, s:I, s:o}", "bytes", (json_int_t)pc->bytes, "step", step,
                     "other", (json_int_t)other, "other_sites", (json_int_t)nother, "values", vals);
}

int vt_html_flame(vt_analysis *a, size_t pi, json_t *proc)
{
    const vt_proc_result *pr = &a->procs[pi];
    const vt_process *p = pr->p;
    char *sel = vt_xcalloc(pr->nsites ? pr->nsites : 1, 1);
    long *slot = vt_xmalloc((pr->nsites ? pr->nsites : 1) * sizeof *slot);
    size_t nsel = 0;
    if (p->peak_comp) take_peak(pr, p->peak_comp, sel, &nsel);
    take_top(pr, 0, sel, &nsel);
    take_top(pr, 1, sel, &nsel);
    for (size_t d = 0; d < p->ndevices; d++) take_peak(pr, &p->devices[d].peak_comp, sel, &nsel);

    flame_build fb = {.frames = json_array(), .parent = json_array(), .frame = json_array()};
    json_t *site = json_array(), *leaf = json_array(), *exitv = json_array(), *grow = json_array();
    json_t *o = NULL;
    int rc = -1, deep = 0;
    uint64_t exit_other = 0, exit_nother = 0;
    double grow_other = 0;
    uint64_t grow_nother = 0;
    size_t k = 0;
    if (!fb.frames || !fb.parent || !fb.frame || !site || !leaf || !exitv || !grow) goto out;
    if (json_array_append_new(fb.parent, json_integer(-1)) || json_array_append_new(fb.frame, json_integer(-1))) goto out;
    fb.nnodes = 1;
    for (size_t i = 0; i < pr->nsites; i++) {
        const vt_site_result *r = &pr->sites[i];
        int counted = vt_kind_in_totals(r->kind);
        uint64_t ex = counted && p->exited ? r->unfreed_exit : 0;
        double g = counted && r->st.slope > 0 ? r->st.slope : 0;
        slot[i] = -1;
        if (!sel[i]) {
            if (ex) {
                exit_other = vt_sat_add(exit_other, ex);
                exit_nother++;
            }
            if (g > 0) {
                grow_other += g;
                grow_nother++;
            }
            continue;
        }
        int cut;
        long node = site_leaf(a, &fb, r, &cut);
        if (node < 0) goto out;
        deep += cut;
        slot[i] = (long)k++;
        if (json_array_append_new(site, json_integer((json_int_t)i)) || json_array_append_new(leaf, json_integer(node)) ||
            json_array_append_new(exitv, json_integer((json_int_t)ex)) || json_array_append_new(grow, json_real(g)))
            goto out;
    }
    json_t *devs = json_array();
    o = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:I, s:I, s:f, s:I, s:i, s:i, s:i, s:i, s:i}",
                  "frames", fb.frames, "parent", fb.parent, "frame", fb.frame, "site", site, "leaf", leaf,
                  "exit", exitv, "growth", grow, "devices", devs,
                  "exit_other", (json_int_t)exit_other, "exit_other_sites", (json_int_t)exit_nother,
                  "growth_other", grow_other, "growth_other_sites", (json_int_t)grow_nother,
                  "exited", p->exited, "max_sites", FLAME_SITES, "max_depth", FLAME_DEPTH, "deep_stacks", deep, "max_each", FLAME_EACH);
    if (!o) goto out;
    if (p->peak_comp && p->peak_comp->present) {
        json_t *pk = peak_json(pr, p->peak_comp, slot, nsel);
        if (!pk || json_object_set_new(o, "peak", pk)) goto out;
    }
    for (size_t d = 0; d < p->ndevices; d++) {
        const vt_peakcomp *pc = &p->devices[d].peak_comp;
        if (!pc->present) continue;
        json_t *pk = peak_json(pr, pc, slot, nsel);
        if (!pk || json_object_set_new(pk, "device", json_integer(p->devices[d].device)) || json_array_append_new(devs, pk))
            goto out;
    }
    if (json_object_set_new(proc, "flame", o)) {
        o = NULL;
        goto out;
    }
    o = NULL;
    rc = 0;
out:
    json_decref(o);
    json_decref(site);
    json_decref(leaf);
    json_decref(exitv);
    json_decref(grow);
    flame_free(&fb);
    free(sel);
    free(slot);
    return rc;
}
