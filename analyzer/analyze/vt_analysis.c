/* vt_analysis.c — per-process site merging, verdicts and ordering (vt_analysis.h). */
#include "vt_frames.h"
#include "vt_analysis.h"
#include "vt_allocators.h"
#include "vt_display.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_pyview.h"
#include "vt_fold.h"
#include "vt_slots.h"
#include "vt_symbolize.h"
#include "vt_util.h"

static int cmp_rsite(const void *a, const void *b)
{
    const vt_rsite *x = *(vt_rsite *const *)a, *y = *(vt_rsite *const *)b;
    if (x->canon->group->index != y->canon->group->index) return x->canon->group->index < y->canon->group->index ? -1 : 1;
    if (x->key.kind != y->key.kind) return x->key.kind < y->key.kind ? -1 : 1;
    if (x->key.flags != y->key.flags) return x->key.flags < y->key.flags ? -1 : 1;
    if (x->key.device != y->key.device) return x->key.device < y->key.device ? -1 : 1;
    return 0;
}

static int rank_of(vt_verdict v)
{
    switch (v) {
    case VT_LEAK: return 0;
    case VT_CHURN: return 1;
    case VT_PLATEAU: return 2;
    case VT_TOO_FEW: return 3;
    case VT_TRANSIENT: return 4;
    default: return 5;
    }
}

static int cmp_result(const void *a, const void *b)
{
    const vt_site_result *x = a, *y = b;
    int rx = rank_of(x->st.verdict), ry = rank_of(y->st.verdict);
    if (rx != ry) return rx - ry;
    if (x->st.verdict == VT_LEAK && x->st.leaked_bytes != y->st.leaked_bytes)
        return x->st.leaked_bytes > y->st.leaked_bytes ? -1 : 1;
    if (x->peak_bytes != y->peak_bytes) return x->peak_bytes > y->peak_bytes ? -1 : 1;
    if (x->unfreed_exit != y->unfreed_exit) return x->unfreed_exit > y->unfreed_exit ? -1 : 1;
    return strcmp(x->id, y->id);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void site_id(vt_site_result *r)
{
    uint64_t h = VT_FNV_INIT;
    h = vt_fnv1a(h, vt_kind_name(r->kind), strlen(vt_kind_name(r->kind)) + 1);
    h = vt_fnv1a(h, &r->device, sizeof r->device);
    for (uint32_t i = 0; i < r->stack->nframes; i++) {
        const vt_frame *f = &r->stack->frames[i];
        const char *m = f->mod ? vt_basename(f->mod->path) : "";
        h = vt_fnv1a(h, m, strlen(m) + 1);
        if (f->mod) h = vt_fnv1a(h, f->mod->build_id, strlen(f->mod->build_id) + 1);
        h = vt_fnv1a(h, &f->offset, sizeof f->offset);
    }
    /* Python frames (none: the id of a native-only site is unchanged) */
    for (uint32_t i = 0; i < r->stack->npy; i++) {
        const vt_pyframe *f = &r->stack->py[i];
        h = vt_fnv1a(h, f->file, strlen(f->file) + 1);
        h = vt_fnv1a(h, f->function, strlen(f->function) + 1);
        h = vt_fnv1a(h, &f->line, sizeof f->line);
        h = vt_fnv1a(h, &f->native_index, sizeof f->native_index);
    }
    snprintf(r->id, sizeof r->id, "s%016" PRIx64, h);
}

/* Where the growth of the site made of all[i..j) was cut by its own out-of-memory
 * failure (docs/metrics.md "Verdicts"): the index q of the first step at or after
 * the first OOM of one of those sites (the OOM record's failing call) that happened
 * at or after the step where the site's floor last rose (an earlier failed request,
 * e.g. a too-large probe, did not stop the growth), provided the site never went
 * below what it held just before that OOM (a cache that empties itself on OOM and
 * grows again is churn). n when there is no such cut. live[0..n): the site's series. */
static size_t oom_cut_index(const vt_process *p, vt_rsite **all, size_t i, size_t j, const uint64_t *live, size_t n)
{
    if (!p->nooms || n < 2)
        return n;
    uint64_t *F = vt_xmalloc(n * sizeof *F);
    vt_suffix_min(live, n, F);
    size_t last = 0;
    for (size_t k = 1; k < n; k++)
        if (F[k] > F[k - 1])
            last = k;
    uint64_t first = UINT64_MAX;
    for (size_t o = 0; o < p->nooms; o++)
        for (size_t k = i; k < j; k++)
            if (p->ooms[o].site == all[k] && p->ooms[o].step >= p->steps[last] && p->ooms[o].step < first)
                first = p->ooms[o].step;
    size_t q = 0;
    while (q < n && p->steps[q] < first)
        q++;
    size_t cut = (first != UINT64_MAX && q > 0 && q < n && F[q - 1] == live[q - 1]) ? q : n;
    free(F);
    return cut;
}

static void analyze_process(vt_process *p, long warmup, vt_proc_result *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->p = p;
    size_t n = p->nsteps;   /* slots (vt_slots.h); steps when unbucketed */
    /* the warm-up is a number of steps; the series skip the slots that cover it */
    uint64_t wsteps = warmup < 0 ? vt_auto_warmup(p->nsteps_real > SIZE_MAX ? SIZE_MAX : (size_t)p->nsteps_real)
                                 : (uint64_t)warmup;
    pr->warmup = vt_slots_for_steps(p, wsteps);
    if (warmup < 0 && p->has_summary && n) {
        /* part of the steps are summary buckets (one point for many steps): the
         * automatic warm-up counts the steps the run had, and ends at the first point
         * at or past that many steps from the start */
        uint64_t span = p->steps[n - 1] - p->steps[0] + 1;
        uint64_t w = vt_auto_warmup(span > SIZE_MAX ? SIZE_MAX : (size_t)span), i = 0;
        while (i < n && p->steps[i] < p->steps[0] + w) i++;
        /* a slot of summary points can stand for far more steps than the warm-up:
         * skipping it would skip most of the run, so it stays in (a short warm-up
         * counted, rather than the history left out) */
        if (i > 0 && i < n && p->steps[i] - p->steps[0] > 2 * w) i--;
        pr->warmup = (size_t)i;
    }
    if (n && pr->warmup > n - 1) pr->warmup = n - 1;
    pr->warmup_steps = vt_steps_before_slot(p, pr->warmup);
    if (p->has_summary && pr->warmup < n)   /* summary points stand for many steps each */
        pr->warmup_steps = p->steps[pr->warmup] - p->steps[0];
    if (!n) pr->warmup = pr->warmup_steps = wsteps;   /* nothing to skip: as asked */
    vt_rsite **all = vt_xmalloc((p->nsites ? p->nsites : 1) * sizeof *all);
    size_t na = 0;
    vt_rsite *s, *t;
    HASH_ITER(hh, p->sites, s, t) all[na++] = s;
    qsort(all, na, sizeof *all, cmp_rsite);
    uint64_t *live = vt_xcalloc(n ? n : 1, sizeof *live), *peak = vt_xcalloc(n ? n : 1, sizeof *peak);
    uint64_t *tl = vt_xcalloc(n ? n : 1, sizeof *tl), *tp = vt_xcalloc(n ? n : 1, sizeof *tp);
    uint32_t *nf = vt_xcalloc(n ? n : 1, sizeof *nf), *tf = vt_xcalloc(n ? n : 1, sizeof *tf);
    pr->sites = vt_xcalloc(na ? na : 1, sizeof *pr->sites);
    for (size_t i = 0; i < na;) {
        size_t j = i + 1;
        while (j < na && cmp_rsite(&all[i], &all[j]) == 0) j++;
        vt_site_result *r = &pr->sites[pr->nsites];
        r->stack = all[i]->canon->group;
        r->kind = all[i]->key.kind;
        r->flags = all[i]->key.flags;
        r->device = all[i]->key.device;
        r->exhaustion_step = -1;
        if (j - i == 1) {
            vt_rsite_expand(all[i], n, live, peak, nf);
        } else {
            memset(live, 0, n * sizeof *live);
            memset(peak, 0, n * sizeof *peak);
            memset(nf, 0, n * sizeof *nf);
            for (size_t k = i; k < j; k++) {
                vt_rsite_expand(all[k], n, tl, tp, tf);
                for (size_t q = 0; q < n; q++) {
                    live[q] = sat_add(live[q], tl[q]);
                    peak[q] = sat_add(peak[q], tp[q]);
                    nf[q] = nf[q] + tf[q] < nf[q] ? UINT32_MAX : nf[q] + tf[q];
                }
            }
        }
        uint64_t member_peak = 0;
        for (size_t k = i; k < j; k++) {
            all[k]->result = (uint32_t)pr->nsites;
            r->unfreed_exit = sat_add(r->unfreed_exit, all[k]->unfreed_exit);
            member_peak = sat_add(member_peak, all[k]->peak_bytes);
        }
        vt_series se = {.step = p->steps, .live = live, .peak = peak, .nfree = nf, .n = n,
                        .bucketed = p->slot_width > 1};
        vt_classify(&se, (long)pr->warmup, &r->st);
        if (se.bucketed) {   /* the last step's live bytes, not the last slot's least */
            uint64_t ll = 0;
            for (size_t k = i; k < j; k++) ll = sat_add(ll, all[k]->last_live);
            r->st.last_live = ll;
        }
        r->oom_cut_step = -1;
        size_t cut = r->st.verdict == VT_LEAK ? n : oom_cut_index(p, all, i, j, live, n);
        if (cut < n) {
            /* Growth that stopped because the site's own allocations started failing
             * with out-of-memory (a program that catches the OOM and goes on) is not a
             * plateau: the rule is asked of the steps up to that OOM's step, with the
             * process's warm-up when that leaves at least 4 steps, else (automatic
             * warm-up only) with the automatic warm-up of that many steps. */
            vt_series sc = se;
            sc.n = cut + 1;
            vt_site_stats st;
            long wc = (long)pr->warmup;
            if (warmup < 0 && cut + 1 < pr->warmup + 4)   /* with slots: the automatic warm-up of that many slots */
                wc = -1;
            vt_classify(&sc, wc, &st);
            if (st.verdict == VT_LEAK) {
                if (r->st.peak_bytes > st.peak_bytes) st.peak_bytes = r->st.peak_bytes;
                st.last_live = r->st.last_live;
                r->st = st;
                r->oom_cut_step = (int64_t)p->steps[cut];
            }
        }
        r->peak_bytes = r->st.peak_bytes > member_peak ? r->st.peak_bytes : member_peak;
        if (r->unfreed_exit > r->peak_bytes) r->peak_bytes = r->unfreed_exit;
        /* memory the steps never saw (no step at all, or taken after the last one) and
         * still held at exit cannot be judged: not "stable" */
        if (r->st.verdict == VT_STABLE && r->unfreed_exit && !r->st.peak_bytes && r->st.floor_end == 0)
            r->st.verdict = VT_TOO_FEW;
        /* no step at all: nothing held can be called stable (or anything else) */
        if (!n && (r->peak_bytes || r->unfreed_exit)) r->st.verdict = VT_TOO_FEW;
        if (r->st.verdict == VT_LEAK) {
            r->curve = vt_xmalloc(n * sizeof *r->curve);
            memcpy(r->curve, live, n * sizeof *live);
            for (size_t d = 0; d < p->ndevices; d++)   /* a region grows inside its heap */
                if (p->devices[d].device == r->device && p->devices[d].has_mem && r->kind != VT_KIND_REGION)
                    r->exhaustion_step = vt_exhaustion_step(p->last_step, p->devices[d].free_bytes, r->st.slope);
            if (r->oom_cut_step >= 0)
                r->exhaustion_step = r->oom_cut_step;   /* it did run out there */
        }
        site_id(r);
        pr->count[r->st.verdict]++;
        if (r->unfreed_exit) pr->unfreed_sites++;
        pr->nsites++;
        i = j;
    }
    /* sort results; keep the raw -> result index valid through a permutation */
    size_t *order = vt_xmalloc((pr->nsites ? pr->nsites : 1) * sizeof *order);
    size_t *own_w = vt_xmalloc((pr->nsites ? pr->nsites : 1) * sizeof *own_w);
    for (size_t i = 0; i < pr->nsites; i++) {
        own_w[i] = pr->sites[i].st.warmup;   /* the process's, or an OOM-cut site's own */
        pr->sites[i].st.warmup = i;          /* temporarily: old index */
    }
    qsort(pr->sites, pr->nsites, sizeof *pr->sites, cmp_result);
    for (size_t i = 0; i < pr->nsites; i++) {
        size_t old = pr->sites[i].st.warmup;
        order[old] = i;
        pr->sites[i].st.warmup = own_w[old];
    }
    free(own_w);
    for (size_t k = 0; k < na; k++) all[k]->result = (uint32_t)order[all[k]->result];
    free(order);
    free(all);
    free(live);
    free(peak);
    free(tl);
    free(tp);
    free(nf);
    free(tf);
}

/* 1 when every logical frame of f (its inlined calls and its own function) is a
 * CUDA function. */
static int all_cuda(vt_symbolizer *sym, const vt_frame *f)
{
    uint32_t n = vt_sym_frame_depth(sym, f);
    for (uint32_t d = 0; d < n; d++)
        if (!vt_frames_cuda_function(vt_sym_frame_at(sym, f, d)->function)) return 0;
    return 1;
}

/* CUDA's own frames inside the program's module — a statically linked runtime, where
 * the preload could not name its (local) functions, or a CUDA header's inline wrapper
 * (the cudaMalloc(T **, size_t) template of cuda_runtime.h) inlined into the program's
 * code — are trimmed once symbolized offline, one logical frame at a time: the
 * leading physical frames whose logical frames are all CUDA's are dropped; in the
 * first one left, its leading CUDA logical frames are left out of the view
 * (st->inline_skip), so the program's inlined caller in the same physical frame
 * stays. Keeps at least one frame. */
static void trim_static_runtime(vt_symbolizer *sym, vt_process *p)
{
    for (size_t k = 0; k < p->nstacks; k++) {
        vt_stack *st = p->stacks[k];
        uint32_t n = 0;
        while (n + 1 < st->nframes && all_cuda(sym, &st->frames[n]))
            n++;
        st->inline_skip = 0;
        if (st->nframes > n) {
            uint32_t depth = vt_sym_frame_depth(sym, &st->frames[n]);
            while (st->inline_skip + 1 < depth &&
                   vt_frames_cuda_function(vt_sym_frame_at(sym, &st->frames[n], st->inline_skip)->function))
                st->inline_skip++;
        }
        if (!n) continue;
        for (uint32_t i = 0; i < n; i++) free(st->frames[i].function);
        memmove(st->frames, st->frames + n, (st->nframes - n) * sizeof *st->frames);
        st->nframes -= n;
        for (uint32_t k = 0; k < st->npy; k++)   /* the eval frame cannot be a CUDA function; clamp anyway */
            if (st->py[k].native_index >= 0)
                st->py[k].native_index = st->py[k].native_index >= (int32_t)n ? st->py[k].native_index - (int32_t)n : 0;
    }
}

/* Views (vt_pyview.h) and, with python_only, the grouping by Python frames. */
static void prepare_stacks(vt_process *p, int python_only, vt_symbolizer *sym)
{
    size_t n = p->nstacks;   /* vt_python_only_stack appends */
    for (size_t k = 0; k < n; k++) {
        vt_stack *st = p->stacks[k];
        vt_stack_view(st);
        vt_stack_view_inline(st, sym);
        vt_allocator_title(st, sym);
        st->group = python_only ? vt_python_only_stack(p, st) : st;
    }
}

#define TITLE_FRAMES 3

/* The first k Python frames of r's view from its title on into key (file,
 * function, line each); 0 when r's title is not a Python frame. */
static size_t title_key(const vt_site_result *r, uint32_t k, char **key, size_t *cap)
{
    const vt_stack *st = r->stack;
    size_t n = 0;
    if (st->title >= st->nview || st->view[st->title] >= 0) return 0;
    n += (size_t)snprintf(*key, *cap, "%d|%d", r->kind, r->device) + 1;
    for (uint32_t i = st->title, got = 0; i < st->nview && got < k; i++) {
        if (st->view[i] >= 0) continue;
        const vt_pyframe *f = &st->py[-1 - st->view[i]];
        size_t need = n + strlen(f->file) + strlen(f->function) + 16;
        if (need > *cap) {
            *cap = need * 2;
            *key = vt_xrealloc(*key, *cap);
        }
        n += (size_t)sprintf(*key + n, "%s|%s|%u", f->file, f->function, f->line) + 1;
        got++;
    }
    return n;
}

typedef struct title_count {
    char *key;
    size_t len;
    size_t n;
    UT_hash_handle hh;
} title_count;

/* Names Python-titled sites so that two sites of a process whose title frame is
 * the same helper (train.py:56 in device_alloc) read apart in one line: each
 * gets the fewest Python frames (1..TITLE_FRAMES) from its title on that set it
 * apart from the other sites of the same kind and device as well as
 * TITLE_FRAMES frames would. */
static void python_titles(vt_analysis *a, vt_proc_result *pr)
{
    size_t cap = 256;
    char *key = vt_xmalloc(cap);
    /* cnt[i * TITLE_FRAMES + k-1]: sites (this one included) starting with the same k frames */
    size_t *cnt = vt_xcalloc((pr->nsites ? pr->nsites : 1) * TITLE_FRAMES, sizeof *cnt);
    uint32_t *depth = vt_xcalloc(pr->nsites ? pr->nsites : 1, sizeof *depth);
    for (uint32_t k = 1; k <= TITLE_FRAMES; k++) {
        title_count *h = NULL, *e, *t;
        for (size_t i = 0; i < pr->nsites; i++) {
            size_t n = title_key(&pr->sites[i], k, &key, &cap);
            if (!n) continue;
            HASH_FIND(hh, h, key, n, e);
            if (!e) {
                e = vt_xcalloc(1, sizeof *e);
                e->key = vt_xmalloc(n);
                memcpy(e->key, key, n);
                e->len = n;
                HASH_ADD_KEYPTR(hh, h, e->key, e->len, e);
            }
            e->n++;
        }
        for (size_t i = 0; i < pr->nsites; i++) {
            size_t n = title_key(&pr->sites[i], k, &key, &cap);
            if (!n) continue;
            HASH_FIND(hh, h, key, n, e);
            cnt[i * TITLE_FRAMES + k - 1] = e->n;
        }
        HASH_ITER(hh, h, e, t) {
            HASH_DEL(h, e);
            free(e->key);
            free(e);
        }
    }
    /* the fewest frames that tell the site apart as well as TITLE_FRAMES do (sites
     * that differ only in native frames or deeper callers read alike anyway) */
    for (size_t i = 0; i < pr->nsites; i++) {
        if (!cnt[i * TITLE_FRAMES]) continue;
        uint32_t k = 1;
        while (k < TITLE_FRAMES && cnt[i * TITLE_FRAMES + k - 1] > cnt[i * TITLE_FRAMES + TITLE_FRAMES - 1]) k++;
        depth[i] = k;
    }
    free(cnt);
    for (size_t i = 0; i < pr->nsites; i++) {
        vt_site_result *r = &pr->sites[i];
        if (!depth[i]) continue;
        const vt_stack *st = r->stack;
        size_t len = 0, tcap = 256;
        char *txt = vt_xmalloc(tcap);
        txt[0] = 0;
        for (uint32_t v = st->title, got = 0; v < st->nview && got < depth[i]; v++) {
            if (st->view[v] >= 0) continue;
            const char *l = vt_sym_pyframe(a->sym, &st->py[-1 - st->view[v]])->label;
            size_t need = len + strlen(l) + 5;
            if (need > tcap) {
                tcap = need * 2;
                txt = vt_xrealloc(txt, tcap);
            }
            len += (size_t)sprintf(txt + len, "%s%s", got ? " <- " : "", l);
            got++;
        }
        r->title = txt;
    }
    free(depth);
    free(key);
}

void vt_analyze_ex(vt_runset *rs, const vt_analyze_opts *o, vt_analysis *out)
{
    long warmup = o->warmup;
    memset(out, 0, sizeof *out);
    out->rs = rs;
    out->python_only = o->python_only;
    out->sym = vt_sym_new(o->no_dwarf);
    for (size_t i = 0; i < rs->n; i++) {
        trim_static_runtime(out->sym, rs->procs[i]);
        prepare_stacks(rs->procs[i], o->python_only, out->sym);
    }
    out->procs = vt_xcalloc(rs->n ? rs->n : 1, sizeof *out->procs);
    for (size_t i = 0; i < rs->n; i++) {
        analyze_process(rs->procs[i], warmup, &out->procs[i]);
        python_titles(out, &out->procs[i]);
    }
    out->n = rs->n;
}

void vt_analysis_free(vt_analysis *a)
{
    for (size_t i = 0; i < a->n; i++) {
        for (size_t k = 0; k < a->procs[i].nsites; k++) {
            free(a->procs[i].sites[k].curve);
            free(a->procs[i].sites[k].title);
        }
        free(a->procs[i].sites);
    }
    free(a->procs);
    vt_sym_free(a->sym);
    memset(a, 0, sizeof *a);
}

double vt_device_leak_rate(const vt_proc_result *pr, int dev)
{
    double r = 0;
    for (size_t i = 0; i < pr->nsites; i++)
        if (pr->sites[i].st.verdict == VT_LEAK && pr->sites[i].device == dev && pr->sites[i].kind != VT_KIND_REGION)
            r += pr->sites[i].st.slope;   /* a region's bytes are its heap's, counted already */
    return r;
}

const vt_site_result *vt_region_heap(const vt_proc_result *pr, const vt_site_result *r, uint64_t *addr)
{
    if (r->kind != VT_KIND_REGION) return NULL;
    vt_rsite *s, *t;
    HASH_ITER(hh, pr->p->sites, s, t) {
        if (!s->heap_site || vt_result_of(pr, s) != r) continue;
        const vt_site_result *h = vt_result_of(pr, s->heap_site);
        if (h) {
            *addr = s->heap_addr;
            return h;
        }
    }
    return NULL;
}

int64_t vt_device_exhaustion_step(const vt_proc_result *pr, int dev)
{
    const vt_process *p = pr->p;
    if (!p->nsteps) return -1;
    for (size_t d = 0; d < p->ndevices; d++)
        if (p->devices[d].device == dev && p->devices[d].has_mem)
            return vt_exhaustion_step(p->last_step, p->devices[d].free_bytes, vt_device_leak_rate(pr, dev));
    return -1;
}

vt_site_result *vt_result_of(const vt_proc_result *pr, const vt_rsite *s)
{
    if (!s || s->result >= pr->nsites) return NULL;
    return &pr->sites[s->result];
}

char *vt_process_title(const vt_process *p, char *buf, size_t cap)
{
    if (p->has_rank && p->restart > 0)   /* restart 0 (the first start) is not said */
        snprintf(buf, cap, "rank %lld, restart %lld, pid %llu on %s", (long long)p->rank, (long long)p->restart,
                 (unsigned long long)p->pid, p->host);
    else if (p->has_rank)
        snprintf(buf, cap, "rank %lld, pid %llu on %s", (long long)p->rank, (unsigned long long)p->pid, p->host);
    else
        snprintf(buf, cap, "pid %llu on %s", (unsigned long long)p->pid, p->host);
    vt_utf8_trim(buf);   /* a long host name cut at cap keeps whole characters */
    return buf;
}

/* ---- imported memory joined to its exporter ---- */

static uint64_t exporter_of(const vt_analysis *a, const vt_process *p, uint64_t digest)
{
    for (size_t j = 0; j < a->n; j++) {
        const vt_process *q = a->procs[j].p;
        if (q == p || (q->pid == p->pid && q->host && p->host && !strcmp(q->host, p->host)))
            continue;
        for (size_t k = 0; k < q->nexports; k++)
            if (q->exports[k].digest == digest)
                return q->pid;
    }
    return 0;
}

static int group_cmp(const void *x, const void *y)
{
    const vt_import_group *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return a->exporter_pid < b->exporter_pid ? -1 : a->exporter_pid > b->exporter_pid;
}

size_t vt_imports_by_exporter(const vt_analysis *a, const vt_process *p, vt_import_group **out)
{
    vt_import_group *g = vt_xmalloc((p->nimports ? p->nimports : 1) * sizeof *g);
    size_t n = 0;
    for (size_t i = 0; i < p->nimports; i++) {
        uint64_t pid = exporter_of(a, p, p->imports[i].digest);
        size_t k = 0;
        while (k < n && g[k].exporter_pid != pid) k++;
        if (k == n) g[n++] = (vt_import_group){pid, 0, 0, 0};
        g[k].bytes = vt_sat_add(g[k].bytes, p->imports[i].size);
        g[k].mappings++;
        g[k].opens += p->imports[i].opens;
    }
    qsort(g, n, sizeof *g, group_cmp);
    *out = g;
    return n;
}
