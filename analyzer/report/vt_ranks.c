/* vt_ranks.c — the cross-process summary (vt_ranks.h). */
#include "vt_ranks.h"
#include "vt_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "vt_format.h"
#include "vt_util.h"

typedef struct xent {
    char *key;                  /* kind, then the shown frames' labels; owned */
    vt_xsite x;
    size_t cap;
    UT_hash_handle hh;
} xent;

char *vt_rank_site_key(vt_analysis *a, const vt_site_result *r)
{
    size_t cap = 256, n = 0;
    char *k = vt_xmalloc(cap);
    n = (size_t)snprintf(k, cap, "%s", vt_kind_name(r->kind));
    for (uint32_t i = vt_site_title_index(r); i < vt_site_nframes(r); i++) {
        const char *l = vt_site_frame(a, r, i)->label;
        size_t ll = strlen(l);
        if (n + ll + 2 > cap) {
            cap = (n + ll + 2) * 2;
            k = vt_xrealloc(k, cap);
        }
        k[n++] = '\n';
        memcpy(k + n, l, ll + 1);
        n += ll;
    }
    return k;
}

/* The entry of key in *h (created with label and kind), with process pi added once;
 * *k: the index of pi in the entry's arrays. key is taken. */
static xent *add(xent **h, char *key, const char *label, int kind, size_t pi, size_t *k)
{
    xent *e;
    HASH_FIND_STR(*h, key, e);
    if (e) {
        free(key);
    } else {
        e = vt_xcalloc(1, sizeof *e);
        e->key = key;
        e->x.label = label;
        e->x.kind = kind;
        HASH_ADD_KEYPTR(hh, *h, e->key, strlen(e->key), e);
    }
    vt_xsite *x = &e->x;
    if (x->nprocs && x->procs[x->nprocs - 1] == pi) {   /* processes come in order */
        *k = x->nprocs - 1;
        return e;
    }
    if (x->nprocs == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        x->procs = vt_xrealloc(x->procs, e->cap * sizeof *x->procs);
        x->rate = vt_xrealloc(x->rate, e->cap * sizeof *x->rate);
        x->bytes = vt_xrealloc(x->bytes, e->cap * sizeof *x->bytes);
    }
    x->procs[x->nprocs] = pi;
    x->rate[x->nprocs] = 0;
    x->bytes[x->nprocs] = 0;
    *k = x->nprocs++;
    return e;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Distinct ranks of the processes procs[0..n) (all ranked); n when one has no rank. */
static size_t count_ranks(const vt_analysis *a, const size_t *procs, size_t n)
{
    if (!n) return 0;
    int64_t *r = vt_xmalloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        const vt_process *p = a->procs[procs ? procs[i] : i].p;
        if (!p->has_rank) {
            free(r);
            return n;
        }
        r[i] = p->rank;
    }
    qsort(r, n, sizeof *r, cmp_i64);
    size_t d = 1;
    for (size_t i = 1; i < n; i++) d += r[i] != r[i - 1];
    free(r);
    return d;
}

static int cmp_leak(const void *pa, const void *pb)
{
    const vt_xsite *a = pa, *b = pb;
    if (a->nranks != b->nranks) return a->nranks > b->nranks ? -1 : 1;
    if (a->nprocs != b->nprocs) return a->nprocs > b->nprocs ? -1 : 1;
    if (a->rate_max != b->rate_max) return a->rate_max > b->rate_max ? -1 : 1;
    return strcmp(a->label, b->label);
}

static int cmp_oom(const void *pa, const void *pb)
{
    const vt_xsite *a = pa, *b = pb;
    if (a->nranks != b->nranks) return a->nranks > b->nranks ? -1 : 1;
    if (a->nprocs != b->nprocs) return a->nprocs > b->nprocs ? -1 : 1;
    if (a->events != b->events) return a->events > b->events ? -1 : 1;
    return strcmp(a->label, b->label);
}

/* The hash's entries as an array (sorted with cmp unless it is NULL); the hash is emptied. */
static vt_xsite *collect(const vt_analysis *a, xent **h, size_t *n, int (*cmp)(const void *, const void *))
{
    size_t cnt = HASH_COUNT(*h), i = 0;
    vt_xsite *v = cnt ? vt_xcalloc(cnt, sizeof *v) : NULL;
    xent *e, *t;
    HASH_ITER(hh, *h, e, t) {
        HASH_DEL(*h, e);
        e->x.nranks = count_ranks(a, e->x.procs, e->x.nprocs);
        v[i++] = e->x;
        free(e->key);
        free(e);
    }
    if (cnt && cmp) qsort(v, cnt, sizeof *v, cmp);
    *n = cnt;
    return v;
}

void vt_rank_summary_build(vt_analysis *a, vt_rank_summary *s)
{
    memset(s, 0, sizeof *s);
    s->nprocs = a->n;
    s->all_ranked = a->n > 0;
    xent *leaks = NULL, *ooms = NULL;
    for (size_t pi = 0; pi < a->n; pi++) {
        vt_proc_result *pr = &a->procs[pi];
        const vt_process *p = pr->p;
        if (!p->has_rank) s->all_ranked = 0;
        if (p->peak_bytes > a->procs[s->peak_max_proc].p->peak_bytes) s->peak_max_proc = pi;
        if (p->peak_bytes < a->procs[s->peak_min_proc].p->peak_bytes) s->peak_min_proc = pi;
        for (size_t i = 0; i < pr->nsites; i++) {
            vt_site_result *r = &pr->sites[i];
            if (r->st.verdict != VT_LEAK) continue;
            size_t k;
            xent *e = add(&leaks, vt_rank_site_key(a, r), vt_site_title(a, r), r->kind, pi, &k);
            e->x.rate[k] += r->st.slope;
            e->x.bytes[k] += r->st.leaked_bytes;
        }
        for (size_t i = 0; i < p->nooms; i++) {
            const vt_oom *o = &p->ooms[i];
            vt_site_result *r = o->site ? vt_result_of(pr, o->site) : NULL;
            char *key = r ? vt_rank_site_key(a, r) : NULL;
            if (!key) {
                key = vt_xmalloc(strlen(o->api) + 8);
                sprintf(key, "api\n%s", o->api);
            }
            size_t k;
            xent *e = add(&ooms, key, r ? vt_site_title(a, r) : o->api, o->kind, pi, &k);
            e->x.bytes[k]++;
            if (!e->x.events || o->step < e->x.first_step) e->x.first_step = o->step;
            e->x.events++;
        }
    }
    s->nranks = count_ranks(a, NULL, a->n);
    s->leaks = collect(a, &leaks, &s->nleaks, NULL);
    for (size_t i = 0; i < s->nleaks; i++) {
        vt_xsite *x = &s->leaks[i];
        x->rate_min = x->rate_max = x->rate[0];
        for (size_t k = 1; k < x->nprocs; k++) {
            if (x->rate[k] < x->rate_min) x->rate_min = x->rate[k];
            if (x->rate[k] > x->rate_max) x->rate_max = x->rate[k];
        }
    }
    if (s->nleaks) qsort(s->leaks, s->nleaks, sizeof *s->leaks, cmp_leak);
    s->ooms = collect(a, &ooms, &s->nooms, cmp_oom);
}

static void free_x(vt_xsite *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].procs);
        free(v[i].rate);
        free(v[i].bytes);
    }
    free(v);
}

void vt_rank_summary_free(vt_rank_summary *s)
{
    free_x(s->leaks, s->nleaks);
    free_x(s->ooms, s->nooms);
    memset(s, 0, sizeof *s);
}

/* ---- the compressed process list ---- */

typedef struct pref {
    int64_t rank, restart;
    uint64_t pid;
} pref;

static int cmp_pref(const void *pa, const void *pb)
{
    const pref *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->restart != b->restart) return a->restart < b->restart ? -1 : 1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Appends text to buf (length *len, capacity cap) unless it would leave less than
 * reserve bytes; 0 when it did not fit. */
static int put(char *buf, size_t *len, size_t cap, size_t reserve, const char *text)
{
    size_t l = strlen(text);
    if (*len + l + reserve >= cap) return 0;
    memcpy(buf + *len, text, l + 1);
    *len += l;
    return 1;
}

char *vt_rank_list(const vt_analysis *a, const size_t *procs, size_t n, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!n || cap < 32) return buf;
    pref *r = vt_xmalloc(n * sizeof *r), *u = vt_xmalloc(n * sizeof *u);
    size_t nr = 0, nu = 0;
    for (size_t i = 0; i < n; i++) {
        const vt_process *p = a->procs[procs[i]].p;
        pref e = {p->has_rank ? p->rank : 0, p->restart, p->pid};
        if (p->has_rank) r[nr++] = e;
        else u[nu++] = e;
    }
    qsort(r, nr, sizeof *r, cmp_pref);
    qsort(u, nu, sizeof *u, cmp_pref);
    size_t len = 0, done = 0;
    const size_t reserve = 24;   /* room for "... (N more)" */
    char part[96];
    int cut = 0;
    if (nr) {
        put(buf, &len, cap, 0, nr == 1 ? "rank " : "ranks ");
        for (size_t i = 0; i < nr && !cut;) {
            size_t j = i;
            /* a run of consecutive ranks, none restarted */
            if (r[i].restart <= 0)
                while (j + 1 < nr && r[j + 1].restart <= 0 && r[j + 1].rank == r[j].rank + 1) j++;
            if (r[i].restart > 0)
                snprintf(part, sizeof part, "%s%" PRId64 " (restart %" PRId64 ")", i ? ", " : "", r[i].rank,
                         r[i].restart);
            else if (j > i)
                snprintf(part, sizeof part, "%s%" PRId64 "-%" PRId64, i ? ", " : "", r[i].rank, r[j].rank);
            else
                snprintf(part, sizeof part, "%s%" PRId64, i ? ", " : "", r[i].rank);
            if (!put(buf, &len, cap, reserve, part)) cut = 1;
            else {
                done += j - i + 1;
                i = j + 1;
            }
        }
    }
    if (nu && !cut) {
        size_t before = len;
        snprintf(part, sizeof part, "%s%s", nr ? "; " : "", nu == 1 ? "pid " : "pids ");
        if (!put(buf, &len, cap, reserve, part)) cut = 1;
        for (size_t i = 0; i < nu && !cut; i++) {
            snprintf(part, sizeof part, "%s%" PRIu64, i ? ", " : "", u[i].pid);
            if (!put(buf, &len, cap, reserve, part)) {
                cut = 1;
                if (!i) buf[len = before] = 0;   /* no pid fitted: no "pids" either */
            } else {
                done++;
            }
        }
    }
    if (cut) {
        snprintf(part, sizeof part, " ... (%zu more)", n - done);
        put(buf, &len, cap, 0, part);
    }
    free(r);
    free(u);
    return buf;
}
