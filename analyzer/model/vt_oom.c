/* vt_oom.c — OOM forensics (contract in vt_oom.h). */
#include "vt_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_util.h"

static int cmp_alloc_addr(const void *a, const void *b)
{
    const vt_alloc *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void top_insert(vt_oom_site *arr, int *n, vt_oom_site v, int by_gap)
{
    uint64_t key = by_gap ? v.gap_if_freed : v.bytes;
    int i = *n < VT_OOM_TOP ? (*n)++ : VT_OOM_TOP;
    if (i == VT_OOM_TOP) {
        uint64_t last = by_gap ? arr[VT_OOM_TOP - 1].gap_if_freed : arr[VT_OOM_TOP - 1].bytes;
        if (key <= last) return;
        i = VT_OOM_TOP - 1;
    }
    while (i > 0 && key > (by_gap ? arr[i - 1].gap_if_freed : arr[i - 1].bytes)) {
        arr[i] = arr[i - 1];
        i--;
    }
    arr[i] = v;
}

/* Site s's entry of the record's accumulator acc, appended on its first use in
 * the record (mark): s->scratch is the entry's index. */
static vt_oom_site *acc_entry(vt_rsite *s, uint64_t mark, vt_oom_site **acc, size_t *nacc, size_t *capacc)
{
    if (s->scratch_mark != mark) {
        s->scratch_mark = mark;
        s->scratch = *nacc;
        vt_oom_site z = {.site = s};
        VT_PUSH(*acc, *nacc, *capacc, z);
    }
    return &(*acc)[s->scratch];
}

static int cmp_u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x > y ? -1 : x < y;
}

/* m->map from the device's blocks b[0..n) sorted by address: touching blocks of one
 * site are one run; above VT_OOM_MAP runs, only the VT_OOM_MAP - 1 largest gaps stay
 * gaps and the runs between are merged (their gaps counted in gaps_in). */
static void build_map(vt_process *p, vt_oom *m, const vt_alloc *b, size_t n)
{
    vt_oom_block *r = vt_xmalloc(n * sizeof *r);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        vt_site_key key;
        memset(&key, 0, sizeof key);
        key.stack = b[i].stack;
        key.kind = b[i].kind;
        key.device = b[i].device;
        vt_rsite *site;
        HASH_FIND(hh, p->sites, &key, sizeof key, site);
        uint64_t end = vt_sat_add(b[i].addr, b[i].size);
        if (nr && r[nr - 1].site == site && r[nr - 1].addr + r[nr - 1].size >= b[i].addr) {
            vt_oom_block *l = &r[nr - 1];
            if (end > l->addr + l->size) l->size = end - l->addr;
            l->blocks++;
            continue;
        }
        r[nr++] = (vt_oom_block){.addr = b[i].addr, .size = end - b[i].addr, .site = site, .blocks = 1};
    }
    if (nr > VT_OOM_MAP) {
        uint64_t *g = vt_xmalloc((nr - 1) * sizeof *g), *sorted = vt_xmalloc((nr - 1) * sizeof *g);
        for (size_t k = 0; k + 1 < nr; k++) {
            uint64_t end = r[k].addr + r[k].size;
            g[k] = sorted[k] = r[k + 1].addr > end ? r[k + 1].addr - end : 0;
        }
        qsort(sorted, nr - 1, sizeof *sorted, cmp_u64_desc);
        uint64_t thr = sorted[VT_OOM_MAP - 2];
        size_t keep_eq = VT_OOM_MAP - 1;
        for (size_t k = 0; k + 1 < nr; k++) keep_eq -= g[k] > thr;
        size_t o = 0;
        for (size_t k = 1; k < nr; k++) {
            uint64_t gap = g[k - 1];
            int keep = gap > thr || (gap == thr && keep_eq && keep_eq--);
            if (keep) {
                r[++o] = r[k];
                continue;
            }
            vt_oom_block *l = &r[o];
            uint64_t end = r[k].addr + r[k].size;
            if (end > l->addr + l->size) l->size = end - l->addr;
            l->gaps_in = vt_sat_add(vt_sat_add(l->gaps_in, gap), r[k].gaps_in);
            l->blocks += r[k].blocks;
            if (l->site != r[k].site) l->site = NULL;
        }
        nr = o + 1;
        free(g);
        free(sorted);
    }
    m->map = r;
    m->nmap = (uint32_t)nr;
}

void vt_oom_build(vt_process *p, vt_snaprec *rec)
{
    const vt_rec_oom *o = &rec->oom;
    int have_allocs = rec->have_allocs;
    if (p->nooms >= VT_MAX_OOMS) {   /* the first ones are kept: the rest are counted */
        p->ooms_dropped++;
        return;
    }
    vt_grow((void **)&p->ooms, &p->capooms, p->nooms + 1, sizeof *p->ooms);
    vt_oom *m = &p->ooms[p->nooms++];
    memset(m, 0, sizeof *m);
    m->seq = rec->seq;
    m->step = rec->step;
    m->time_ns = rec->time_ns;
    snprintf(m->api, sizeof m->api, "%s", o->api[0] ? o->api : "?");
    m->kind = o->kind;
    m->device = o->device;
    m->requested_bytes = o->requested;
    m->result = o->result;
    m->stack = o->stack;
    m->has_mem = o->has_free && o->has_total;
    m->free_bytes = o->free_b;
    m->total_bytes = o->total_b;
    m->has_allocs = have_allocs;
    if (o->stack != -1) {
        vt_stack *st = vt_process_rawstack(p, o->stack);
        vt_site_key key;
        memset(&key, 0, sizeof key);
        key.stack = o->stack;
        key.kind = o->kind;
        key.device = o->device;
        m->site = vt_process_site(p, &key, st);
    }
    /* per-site aggregation through the site's scratch fields */
    uint64_t mark = ++rec->mark;
    vt_oom_site *acc = NULL;
    size_t nacc = 0, capacc = 0;
    uint64_t tracked_dev = 0;
    if (have_allocs) {
        for (size_t i = 0; i < rec->nae; i++) {
            vt_alloc *a = &rec->ae[i];
            if (a->stack == INT64_MIN) continue;
            if (a->device == o->device) tracked_dev = vt_sat_add(tracked_dev, a->size);
            vt_site_key key;
            memset(&key, 0, sizeof key);
            key.stack = a->stack;
            key.kind = a->kind;
            key.device = a->device;
            vt_stack *st = vt_process_rawstack(p, a->stack);
            vt_oom_site *t = acc_entry(vt_process_site(p, &key, st), mark, &acc, &nacc, &capacc);
            t->bytes = vt_sat_add(t->bytes, a->size);
            t->blocks++;
        }
        /* gaps between this process's live blocks in device memory */
        size_t nd = 0;
        for (size_t i = 0; i < rec->nae; i++) {
            vt_alloc *a = &rec->ae[i];
            if (a->device == o->device && a->stack != INT64_MIN &&
                (a->kind == VT_KIND_DEVICE || a->kind == VT_KIND_ASYNC || a->kind == VT_KIND_VMM) && a->addr)
                rec->ae[nd++] = *a;
        }
        if (nd) qsort(rec->ae, nd, sizeof *rec->ae, cmp_alloc_addr);
        if (nd && p->nooms <= VT_OOM_MAPS) build_map(p, m, rec->ae, nd);
        for (size_t i = 0; i + 1 < nd; i++) {
            uint64_t end = rec->ae[i].addr + rec->ae[i].size;
            uint64_t gap = rec->ae[i + 1].addr > end ? rec->ae[i + 1].addr - end : 0;
            if (gap) {
                m->gap_count++;
                m->gap_total = vt_sat_add(m->gap_total, gap);
                if (gap > m->gap_largest) m->gap_largest = gap;
            }
        }
        for (size_t i = 1; i + 1 < nd; i++) {
            uint64_t pend = rec->ae[i - 1].addr + rec->ae[i - 1].size, end = rec->ae[i].addr + rec->ae[i].size;
            uint64_t before = rec->ae[i].addr > pend ? rec->ae[i].addr - pend : 0;
            uint64_t after = rec->ae[i + 1].addr > end ? rec->ae[i + 1].addr - end : 0;
            if (!before || !after) continue;
            vt_site_key key;
            memset(&key, 0, sizeof key);
            key.stack = rec->ae[i].stack;
            key.kind = rec->ae[i].kind;
            key.device = rec->ae[i].device;
            vt_rsite *s;
            HASH_FIND(hh, p->sites, &key, sizeof key, s);
            if (!s || s->scratch_mark != mark) continue;
            vt_oom_site *t = &acc[s->scratch];
            t->split_blocks++;
            uint64_t merged = vt_sat_add(vt_sat_add(before, rec->ae[i].size), after);
            if (merged > t->gap_if_freed) t->gap_if_freed = merged;
        }
    } else {
        for (size_t i = 0; i < rec->nse; i++) {
            vt_rec_site *e = &rec->se[i];
            if (e->key.device == o->device) tracked_dev = vt_sat_add(tracked_dev, e->live);
            if (!e->live) continue;
            vt_stack *st = vt_process_rawstack(p, e->key.stack);
            vt_oom_site *t = acc_entry(vt_process_site(p, &e->key, st), mark, &acc, &nacc, &capacc);
            t->bytes = vt_sat_add(t->bytes, e->live);
        }
    }
    for (size_t i = 0; i < nacc; i++) {
        top_insert(m->top, &m->ntop, acc[i], 0);
        if (acc[i].split_blocks) top_insert(m->split, &m->nsplit, acc[i], 1);
    }
    free(acc);
    m->tracked_bytes = o->has_tracked ? o->tracked : tracked_dev;
    if (m->has_mem) {
        uint64_t used = m->total_bytes > m->free_bytes ? m->total_bytes - m->free_bytes : 0;
        m->untracked_bytes = (int64_t)used - (int64_t)m->tracked_bytes;
    }
}
