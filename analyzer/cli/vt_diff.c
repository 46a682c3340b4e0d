/* vt_diff.c — run comparison (contract in vt_diff.h). */
#include "vt_diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "vt_display.h"
#include "vt_format.h"
#include "vt_report.h"
#include "vt_size.h"
#include "vt_util.h"

#define KEY_FRAMES 8

typedef struct dsite {
    char *kfull, *kfunc;        /* match keys; owned */
    const char *label;          /* top frame label (symbolizer-owned) */
    uint64_t peak, unfreed;
    double slope;
    vt_verdict verdict;         /* worst over merged processes */
    int matched;                /* index+1 of the partner */
    UT_hash_handle hh;          /* by kfull during build */
} dsite;

typedef struct dset {
    dsite *v;
    size_t n, cap;
    uint64_t peak, unfreed;
    size_t leaks;
} dset;

static int worse(vt_verdict a, vt_verdict b)
{
    static const int rank[] = {[VT_TRANSIENT] = 0, [VT_STABLE] = 1, [VT_TOO_FEW] = 2, [VT_PLATEAU] = 3,
                               [VT_CHURN] = 4, [VT_LEAK] = 5};
    return rank[a] > rank[b];
}

/* The shown frames (vt_site_frame): the first KEY_FRAMES native ones and every
 * Python one, so two Python call sites never match each other. */
static char *make_key(vt_analysis *a, const vt_site_result *r, int lines)
{
    size_t cap = 256, n = 0;
    char *k = vt_xmalloc(cap);
    n += (size_t)snprintf(k, cap, "%s", vt_kind_name(r->kind));
    uint32_t native = 0;
    for (uint32_t i = 0; i < vt_site_nframes(r); i++) {
        const vt_sym *s = vt_site_frame(a, r, i);
        char part[9000];
        if (!s->python && native++ >= KEY_FRAMES) continue;
        if (s->python)
            snprintf(part, sizeof part, "|py %s %s:%d", s->function ? s->function : "?",
                     s->file ? (lines ? s->file : vt_basename(s->file)) : "?", lines ? s->line : 0);
        else if (s->function && lines && s->file)
            snprintf(part, sizeof part, "|%s %s:%d", s->function, vt_basename(s->file), s->line);
        else if (s->function)
            snprintf(part, sizeof part, "|%s", s->function);
        else
            snprintf(part, sizeof part, "|%s+0x%" PRIx64, s->module ? vt_basename(s->module) : "", s->offset);
        size_t pl = strlen(part);
        if (n + pl + 1 > cap) {
            cap = (n + pl + 1) * 2;
            k = vt_xrealloc(k, cap);
        }
        memcpy(k + n, part, pl + 1);
        n += pl;
    }
    return k;
}

static void build(vt_analysis *a, dset *d)
{
    memset(d, 0, sizeof *d);
    dsite *hash = NULL;
    for (size_t i = 0; i < a->n; i++) {
        vt_proc_result *pr = &a->procs[i];
        d->peak += pr->p->peak_bytes;
        d->unfreed += pr->p->unfreed_exit_bytes;
        d->leaks += pr->count[VT_LEAK];
        for (size_t s = 0; s < pr->nsites; s++) {
            vt_site_result *r = &pr->sites[s];
            char *kf = make_key(a, r, 1);
            dsite *e;
            HASH_FIND_STR(hash, kf, e);
            if (e) {
                free(kf);
                e->peak += r->peak_bytes;
                e->unfreed += r->unfreed_exit;
                if (r->st.slope > e->slope) e->slope = r->st.slope;
                if (worse(r->st.verdict, e->verdict)) e->verdict = r->st.verdict;
                continue;
            }
            e = vt_xcalloc(1, sizeof *e);
            e->kfull = kf;
            e->kfunc = make_key(a, r, 0);
            e->label = vt_site_title(a, r);
            e->peak = r->peak_bytes;
            e->unfreed = r->unfreed_exit;
            e->slope = r->st.slope;
            e->verdict = r->st.verdict;
            HASH_ADD_KEYPTR(hh, hash, e->kfull, strlen(e->kfull), e);
        }
    }
    dsite *e, *t;
    HASH_ITER(hh, hash, e, t) {
        HASH_DEL(hash, e);
        VT_PUSH(d->v, d->n, d->cap, *e);
        free(e);
    }
}

static void dset_free(dset *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].kfull);
        free(d->v[i].kfunc);
    }
    free(d->v);
}

typedef struct change {
    const dsite *b, *n;
    double delta;               /* peak change, bytes */
} change;

static int cmp_change(const void *x, const void *y)
{
    const change *a = x, *b = y;
    int la = (a->n && a->n->verdict == VT_LEAK) && !(a->b && a->b->verdict == VT_LEAK);
    int lb = (b->n && b->n->verdict == VT_LEAK) && !(b->b && b->b->verdict == VT_LEAK);
    if (la != lb) return lb - la;   /* new leaks first */
    double da = a->delta < 0 ? -a->delta : a->delta, db = b->delta < 0 ? -b->delta : b->delta;
    if (da != db) return da > db ? -1 : 1;
    return strcmp(a->n ? a->n->kfull : a->b->kfull, b->n ? b->n->kfull : b->b->kfull);
}

static void pct(FILE *out, uint64_t was, uint64_t now)
{
    char b[32];
    if (was) fprintf(out, "  (%s, %+.1f%%)", vt_size_fmt_signed((double)now - (double)was, b, sizeof b),
                     ((double)now - (double)was) * 100.0 / (double)was);
    else if (now) fprintf(out, "  (%s)", vt_size_fmt_signed((double)now, b, sizeof b));
}

/* One run's figures as the JSON "base" / "new" object. */
static json_t *side_json(const char *path, const vt_analysis *a, const dset *d)
{
    char *shown = vt_xdisplay(path);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", shown, "processes", (json_int_t)a->n, "peak_bytes",
                          (json_int_t)d->peak, "unfreed_at_exit_bytes", (json_int_t)d->unfreed, "leaking_sites",
                          (json_int_t)d->leaks);
    free(shown);
    return j;
}

static json_t *site_json(const dsite *s)
{
    if (!s) return json_null();
    return json_pack("{s:s, s:I, s:I, s:f}", "verdict", vt_verdict_name(s->verdict), "peak_bytes", (json_int_t)s->peak,
                     "unfreed_at_exit_bytes", (json_int_t)s->unfreed, "growth_bytes_per_step",
                     isfinite(s->slope) ? s->slope : 0.0);
}

static int print_json(FILE *out, const char *base_path, const char *new_path, vt_analysis *base, vt_analysis *now,
                      const dset *B, const dset *N, const change *ch, size_t nch)
{
    json_t *changes = json_array();
    for (size_t i = 0; i < nch; i++) {
        const change *c = &ch[i];
        const dsite *s = c->n ? c->n : c->b;
        json_array_append_new(changes, json_pack("{s:s, s:s, s:o, s:o}", "change", !c->b ? "new" : !c->n ? "gone" : "changed",
                                                 "title", s->label ? s->label : "", "base", site_json(c->b), "new", site_json(c->n)));
    }
    json_t *root = json_pack("{s:s, s:i, s:o, s:o, s:o}", "format", "vramtrace-diff", "version", 1, "base",
                             side_json(base_path, base, B), "new", side_json(new_path, now, N), "changes", changes);
    int rc = root ? json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : -1;
    json_decref(root);
    fputc('\n', out);
    return rc;
}

int vt_diff(vt_analysis *base, vt_analysis *now, const char *base_path, const char *new_path, int json, FILE *out)
{
    dset B, N;
    build(base, &B);
    build(now, &N);
    /* pass 1: full keys; pass 2: function-only keys among the unmatched */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < N.n; i++) {
            if (N.v[i].matched) continue;
            for (size_t k = 0; k < B.n; k++) {
                if (B.v[k].matched) continue;
                if (strcmp(pass ? N.v[i].kfunc : N.v[i].kfull, pass ? B.v[k].kfunc : B.v[k].kfull) == 0) {
                    N.v[i].matched = (int)k + 1;
                    B.v[k].matched = (int)i + 1;
                    break;
                }
            }
        }
    change *ch = NULL;
    size_t nch = 0, cap = 0;
    for (size_t i = 0; i < N.n; i++) {
        const dsite *b = N.v[i].matched ? &B.v[N.v[i].matched - 1] : NULL;
        change c = {b, &N.v[i], (double)N.v[i].peak - (b ? (double)b->peak : 0)};
        if (b && b->peak == N.v[i].peak && b->unfreed == N.v[i].unfreed && b->verdict == N.v[i].verdict) continue;
        VT_PUSH(ch, nch, cap, c);
    }
    for (size_t k = 0; k < B.n; k++)
        if (!B.v[k].matched) {
            change c = {&B.v[k], NULL, -(double)B.v[k].peak};
            VT_PUSH(ch, nch, cap, c);
        }
    if (nch)   /* qsort(NULL, 0, ...) is undefined (UBSan) */
        qsort(ch, nch, sizeof *ch, cmp_change);
    int rc = 0;
    if (json) {
        rc = print_json(out, base_path, new_path, base, now, &B, &N, ch, nch);
        goto done;
    }
    char b1[32], b2[32], b3[32];
    char *bp = vt_xdisplay(base_path), *np = vt_xdisplay(new_path);
    fprintf(out, "base  %s  (%zu process%s)\nnew   %s  (%zu process%s)\neach figure: base -> new\n\n", bp, base->n,
            base->n == 1 ? "" : "es", np, now->n, now->n == 1 ? "" : "es");
    free(bp);
    free(np);
    fprintf(out, "peak             %s -> %s", vt_size_fmt(B.peak, b1, sizeof b1), vt_size_fmt(N.peak, b2, sizeof b2));
    pct(out, B.peak, N.peak);
    fprintf(out, "\nunfreed at exit  %s -> %s", vt_size_fmt(B.unfreed, b1, sizeof b1), vt_size_fmt(N.unfreed, b2, sizeof b2));
    pct(out, B.unfreed, N.unfreed);
    fprintf(out, "\nleaking sites    %zu -> %zu\nprocesses        %zu -> %zu\n", B.leaks, N.leaks, base->n, now->n);
    fprintf(out, "%s\n", nch ? "site changes (new leaks first, then by peak change):" : "no site changed");
    for (size_t i = 0; i < nch && i < 20; i++) {
        const change *c = &ch[i];
        const char *what = !c->b ? "new " : !c->n ? "gone" : "chg ";
        const dsite *s = c->n ? c->n : c->b;
        fprintf(out, "  %s %-7s peak %s -> %s", what,
                c->n && c->b && c->b->verdict != c->n->verdict ? "" : vt_verdict_label(s->verdict),
                c->b ? vt_size_fmt(c->b->peak, b1, sizeof b1) : "-", c->n ? vt_size_fmt(c->n->peak, b2, sizeof b2) : "-");
        if (c->n && c->b && c->b->verdict != c->n->verdict)
            fprintf(out, "  verdict %s -> %s", vt_verdict_label(c->b->verdict), vt_verdict_label(c->n->verdict));
        if (c->n && c->n->verdict == VT_LEAK) fprintf(out, "  %s/step", vt_size_fmt_signed(c->n->slope, b3, sizeof b3));
        if ((c->b ? c->b->unfreed : 0) != (c->n ? c->n->unfreed : 0))
            fprintf(out, "  unfreed %s -> %s", vt_size_fmt(c->b ? c->b->unfreed : 0, b1, sizeof b1),
                    vt_size_fmt(c->n ? c->n->unfreed : 0, b2, sizeof b2));
        fprintf(out, "\n       %s\n", s->label);
    }
    if (nch > 20) fprintf(out, "  ... and %zu more changed sites\n", nch - 20);
done:
    free(ch);
    dset_free(&B);
    dset_free(&N);
    return rc < 0 || ferror(out) ? -1 : 0;
}
