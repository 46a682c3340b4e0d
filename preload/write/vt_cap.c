/* vt_cap.c — the size cap: the bounded step history, the keep point and the rewrite
 * (contract in vt_cap.h).
 *
 * Design: one grid of step buckets shared by every series, so that a bucket is one
 * point of the summary for all sites at once (the analyzer folds it as one step).
 * A record lands in the last bucket when its step is below that bucket's first step
 * plus the width, else opens a new bucket; a full grid is halved first (pairs
 * merged, width doubled). Only the series a record lists are touched (a step record
 * lists the sites that hold memory or changed), so noting a record costs O(its rows);
 * a series' "seen" count against the bucket's record count tells whether the series
 * was absent (live 0) from some record of the bucket, which makes its floor 0.
 */
#include "vt_cap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vt_host.h"
#include "vt_log.h"

/* The floor of bucket i of s, absent records counted as 0. */
static uint64_t vt__floor(const vt_cap *k, const vt_cap_series *s, uint32_t i)
{
    return s->b[i].seen == k->nrec[i] ? s->b[i].floor : 0;
}

/* Merges bucket pairs (2i, 2i+1) into i for every series: floor min, peak max,
 * frees the later one's. */
static void vt__halve(vt_cap *k)
{
    uint32_t nb = k->nb, half = (nb + 1) / 2;
    vt_cap_series *all[VT_DEV_SLOTS];
    for (int d = 0; d < k->ndev; d++)
        all[d] = k->dev[d];
    for (size_t idx = 0; idx < k->nsite + (size_t)k->ndev; idx++) {
        vt_cap_series *s = idx < k->nsite ? k->site[idx] : all[idx - k->nsite];
        if (!s)
            continue;
        for (uint32_t i = 0; i < half; i++) {
            uint32_t a = 2 * i, c = 2 * i + 1;
            vt_cap_bucket m;
            m.floor = vt__floor(k, s, a);
            m.peak = s->b[a].peak;
            m.frees = s->b[a].frees;
            m.seen = k->nrec[a];
            if (c < nb) {
                uint64_t fc = vt__floor(k, s, c);
                if (fc < m.floor)
                    m.floor = fc;
                if (s->b[c].peak > m.peak)
                    m.peak = s->b[c].peak;
                if (s->b[c].frees > m.frees)
                    m.frees = s->b[c].frees;
                m.seen += k->nrec[c];
            }
            s->b[i] = m;
        }
        memset(&s->b[half], 0, (VT_CAP_BUCKETS - half) * sizeof s->b[0]);
    }
    for (uint32_t i = 0; i < half; i++) {
        uint32_t a = 2 * i, c = 2 * i + 1;
        k->first_step[i] = k->first_step[a];
        k->first_ns[i] = k->first_ns[a];
        k->nrec[i] = k->nrec[a] + (c < nb ? k->nrec[c] : 0);
    }
    for (uint32_t i = half; i < VT_CAP_BUCKETS; i++)
        k->nrec[i] = 0;
    k->nb = half;
    k->width *= 2;
}

static vt_cap_series *vt__new_series(vt_cap *k)
{
    vt_cap_series *s = calloc(1, sizeof *s);
    if (!s)
        k->failed = 1;
    return s;
}

static vt_cap_series *vt__site(vt_cap *k, const vt_site_row *r)
{
    if (r->id >= k->nsite) {
        size_t n = k->nsite ? k->nsite : 64;
        while (n <= r->id)
            n *= 2;
        vt_cap_series **p = realloc(k->site, n * sizeof *p);
        if (!p) {
            k->failed = 1;
            return NULL;
        }
        memset(p + k->nsite, 0, (n - k->nsite) * sizeof *p);
        k->site = p;
        k->nsite = n;
    }
    vt_cap_series *s = k->site[r->id];
    if (!s && (s = k->site[r->id] = vt__new_series(k))) {
        s->def = *r;
        s->device = r->device;
    }
    return s;
}

static vt_cap_series *vt__dev(vt_cap *k, int device)
{
    for (int d = 0; d < k->ndev; d++)
        if (k->dev[d]->device == device)
            return k->dev[d];
    if (k->ndev == VT_DEV_SLOTS)
        return NULL;
    vt_cap_series *s = vt__new_series(k);
    if (s) {
        s->device = device;
        k->dev[k->ndev++] = s;
    }
    return s;
}

/* Folds one value into bucket i of s. */
static void vt__put(vt_cap_series *s, uint32_t i, uint64_t live, uint64_t peak, uint64_t frees)
{
    vt_cap_bucket *b = &s->b[i];
    if (!b->seen || live < b->floor)
        b->floor = live;
    if (live > peak)
        peak = live;
    if (peak > b->peak)
        b->peak = peak;
    if (frees > b->frees)
        b->frees = frees;
    b->seen++;
}

void vt_cap_note(vt_cap *k, const vt_collect *c, uint64_t time_ns)
{
    if (k->failed)
        return;
    if (!k->nb || c->step >= k->first_step[k->nb - 1] + k->width) {
        if (k->nb == VT_CAP_BUCKETS)
            vt__halve(k);
        if (!k->nb || c->step >= k->first_step[k->nb - 1] + k->width) {
            k->first_step[k->nb] = c->step;
            k->first_ns[k->nb] = time_ns;
            k->nrec[k->nb] = 0;
            k->nb++;
            if (k->width == 0)
                k->width = 1;
        }
    }
    uint32_t i = k->nb - 1;
    k->nrec[i]++;
    k->records++;
    k->last_step = c->step;
    for (size_t r = 0; r < c->n_sites; r++) {
        const vt_site_row *row = &c->sites[r];
        vt_cap_series *s = vt__site(k, row);
        if (!s)
            return;
        vt__put(s, i, row->live_bytes, row->interval_peak_bytes, row->free_total);
    }
    /* the sites a peak composition names: kept so that a rewrite defines them again
     * (a site may be named there only, e.g. a buffer that lived inside one step) */
    for (size_t q = 0; q < c->n_peaks; q++)
        for (uint32_t t = 0; t < c->peaks[q].n; t++) {
            const vt_peak_site *ps = &c->peaks[q].top[t];
            vt_site_row row = { .id = ps->id, .stack = ps->stack, .kind = ps->kind,
                                .device = ps->device, .flags = ps->flags };
            if (!vt__site(k, &row))
                return;
        }
    for (int d = 0; d < c->n_devs; d++) {
        vt_cap_series *s = vt__dev(k, c->devs[d].device);
        if (!s) {
            if (k->failed)
                return;
            continue;   /* more devices than slots: not summarised */
        }
        vt__put(s, i, c->devs[d].live_bytes, c->devs[d].peak_bytes, 0);
    }
}

void vt_cap_note_gap(vt_cap *k, const vt_encode_gap *g)
{
    vt_encode_gap *a = &k->gap;
    if (!k->has_gap) {
        memset(a, 0, sizeof *a);
        a->first_ns = g->first_ns;
        k->has_gap = 1;
    }
    a->records += g->records;
    if (g->has_steps) {
        if (!a->has_steps || g->first_step < a->first_step)
            a->first_step = g->first_step;
        if (!a->has_steps || g->last_step > a->last_step)
            a->last_step = g->last_step;
        a->has_steps = 1;
    }
    if (g->first_ns < a->first_ns)
        a->first_ns = g->first_ns;
    if (g->last_ns > a->last_ns)
        a->last_ns = g->last_ns;
    a->err = g->err;
    snprintf(k->gap_error, sizeof k->gap_error, "%s", g->error ? g->error : "");
    a->error = k->gap_error;
}

void vt_cap_keep_oom(vt_cap *k, const char *p, size_t n)
{
    if (n < 2 || p[n - 2] != '}' || p[n - 1] != '\n')
        return;
    n -= 2;
    vt_cap_oom *slot;
    if (k->ooms < VT_CAP_OOM_FIRST) {
        slot = &k->oom_first[k->ooms];
    } else {
        /* the last ones: shift the oldest out */
        free(k->oom_last[0].p);
        memmove(&k->oom_last[0], &k->oom_last[1], (VT_CAP_OOM_LAST - 1) * sizeof k->oom_last[0]);
        slot = &k->oom_last[VT_CAP_OOM_LAST - 1];
        slot->p = NULL;
        slot->n = 0;
    }
    k->ooms++;
    char *c = malloc(n ? n : 1);
    if (!c)
        return;   /* this one is not kept; the summary still counts its step */
    memcpy(c, p, n);
    slot->p = c;
    slot->n = n;
}

int vt_cap_due(const vt_cap *k, uint64_t size, uint64_t max)
{
    if (!max || k->failed || !k->nb || size < max)
        return 0;
    return k->keep_off || size >= k->base + max / 2;
}

int vt_cap_keep_due(const vt_cap *k, uint64_t size, uint64_t max)
{
    if (!max || k->failed || !k->nb || k->keep_off || k->base >= max || size >= max)
        return 0;
    return size >= k->base + (max - k->base) / 2;
}

int vt_cap_freeze(vt_cap *k, uint64_t off, const uint8_t *stacks, size_t ns, const uint8_t *sites, size_t nsi,
                  uint64_t max_bytes, size_t room)
{
    vt_cap_thaw(k);
    vt_buf_init(&k->keep_head);
    vt_cap_encode_summary(k, &k->keep_head, max_bytes, room);
    vt_cap_encode_ooms(k, &k->keep_head);
    if (k->has_gap)   /* the gaps before the keep point (those after it are in the kept bytes) */
        vt_encode_gap_record(&k->keep_head, &k->gap);
    k->keep_stacks = ns ? malloc(ns) : NULL;
    k->keep_sites = nsi ? malloc(nsi) : NULL;
    if (k->keep_head.oom || (ns && !k->keep_stacks) || (nsi && !k->keep_sites) || !off) {
        vt_cap_thaw(k);
        return -1;
    }
    if (ns)
        memcpy(k->keep_stacks, stacks, ns);
    if (nsi)
        memcpy(k->keep_sites, sites, nsi);
    k->nkeep_stacks = ns;
    k->nkeep_sites = nsi;
    k->keep_off = off;
    k->keep_step = k->last_step;
    k->keep_nb = k->nb;
    return 0;
}

void vt_cap_thaw(vt_cap *k)
{
    vt_buf_free(&k->keep_head);
    free(k->keep_stacks);
    free(k->keep_sites);
    k->keep_stacks = k->keep_sites = NULL;
    k->nkeep_stacks = k->nkeep_sites = 0;
    k->keep_off = 0;
}

const vt_site_row *vt_cap_site_next(const vt_cap *k, size_t *i)
{
    for (; *i < k->nsite; (*i)++)
        if (k->site[*i]) {
            const vt_site_row *r = &k->site[*i]->def;
            (*i)++;
            return r;
        }
    return NULL;
}

/* [v0,v1,...] of the nb buckets: which 0 = floor, 1 = peak, 2 = frees. */
static void vt__list(vt_buf *b, const vt_cap *k, const vt_cap_series *s, int which)
{
    vt_buf_put(b, "[", 1);
    uint64_t frees = 0;
    for (uint32_t i = 0; i < k->nb; i++) {
        if (i)
            vt_buf_put(b, ",", 1);
        uint64_t v;
        if (which == 0) {
            v = vt__floor(k, s, i);
        } else if (which == 1) {
            v = s->b[i].peak;
        } else {   /* cumulative: a bucket without the site keeps the count before it */
            if (s->b[i].frees > frees)
                frees = s->b[i].frees;
            v = frees;
        }
        vt_buf_u64(b, v);
    }
    vt_buf_put(b, "]", 1);
}

static void vt__encode(const vt_cap *k, vt_buf *b, uint64_t max_bytes)
{
    vt_buf_cstr(b, "{\"t\":\"summary\",\"reason\":\"max_bytes\",\"max_bytes\":");
    vt_buf_u64(b, max_bytes);
    vt_buf_cstr(b, ",\"records\":");
    vt_buf_u64(b, k->records);
    vt_buf_cstr(b, ",\"last_step\":");
    vt_buf_u64(b, k->last_step);
    vt_buf_cstr(b, ",\"width\":");
    vt_buf_u64(b, k->width);
    vt_buf_cstr(b, ",\"steps\":[");
    for (uint32_t i = 0; i < k->nb; i++) {
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_u64(b, k->first_step[i]);
    }
    vt_buf_cstr(b, "],\"time_ns\":[");
    for (uint32_t i = 0; i < k->nb; i++) {
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_u64(b, k->first_ns[i]);
    }
    vt_buf_cstr(b, "],\"sites\":[");
    int n = 0;
    for (size_t id = 0; id < k->nsite; id++) {
        const vt_cap_series *s = k->site[id];
        if (!s)
            continue;
        if (n++)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        vt_buf_u64(b, id);
        for (int w = 0; w < 3; w++) {
            vt_buf_put(b, ",", 1);
            vt__list(b, k, s, w);
        }
        vt_buf_put(b, "]", 1);
    }
    vt_buf_cstr(b, "],\"devices\":[");
    for (int d = 0; d < k->ndev; d++) {
        if (d)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        vt_buf_i64(b, k->dev[d]->device);
        for (int w = 0; w < 2; w++) {
            vt_buf_put(b, ",", 1);
            vt__list(b, k, k->dev[d], w);
        }
        vt_buf_put(b, "]", 1);
    }
    vt_buf_cstr(b, "]}\n");
}

void vt_cap_encode_summary(vt_cap *k, vt_buf *b, uint64_t max_bytes, size_t room)
{
    if (!k->nb)
        return;
    size_t start = b->len;
    for (;;) {
        vt__encode(k, b, max_bytes);
        if (b->oom || b->len - start <= room || k->nb <= VT_CAP_MIN_BUCKETS)
            return;
        b->len = start;   /* too long for the cap: a coarser grid */
        vt__halve(k);
    }
}

void vt_cap_encode_ooms(const vt_cap *k, vt_buf *b)
{
    const vt_cap_oom *all[VT_CAP_OOM_FIRST + VT_CAP_OOM_LAST];
    int n = 0;
    for (int i = 0; i < VT_CAP_OOM_FIRST; i++)
        all[n++] = &k->oom_first[i];
    for (int i = 0; i < VT_CAP_OOM_LAST; i++)
        all[n++] = &k->oom_last[i];
    for (int i = 0; i < n; i++) {
        if (!all[i]->p)
            continue;
        vt_buf_put(b, all[i]->p, all[i]->n);
        vt_buf_cstr(b, ",\"summarised\":true}\n");
    }
}

/* ---- the rewrite ----
 *
 * vt_cap_check runs before each record. Half way
 * from the size after the last rewrite to the cap, a keep point is set (vt__keep):
 * the compressed stream's frame is ended there, the summary of the records before it
 * is encoded, and the next record is written complete, so the file's bytes from there
 * on are a stream of their own but for the definitions made before. When the file
 * reaches the cap it is replaced (vt_file_replace) by the header, the definitions
 * made before the keep point, the summary and the kept OOM records, then the old
 * file's bytes from the keep point, unchanged: the records since then stay exact, the
 * site deltas and the compressed frame go on. Without a keep point (one record took
 * the file past both marks) everything written is summarised, and the next record is
 * written complete. The definitions the file holds after a replacement are the same
 * set as before (those made after the keep point are in the copied bytes; their
 * records are made again into a discarded buffer only to mark their modules), so
 * when the replacement fails the old file goes on as it was; the cap then tries
 * again after another half cap of growth. */
static int vt__keep(vt_cap *k, vt_file *f, const vt_encode_defs *d, vt_sitediff *sd, uint64_t max)
{
    struct stat st;
    if (vt_file_end(f) < 0 || f->fd < 0 || fstat(f->fd, &st) < 0)
        return 0;
    if (vt_cap_freeze(k, (uint64_t)st.st_size, d->stacks.on, d->stacks.cap,
                      d->sites.on, d->sites.cap, max, (size_t)(max / 4)) < 0)
        return 0;
    vt_sitediff_reset(sd);   /* the record at the keep point is complete */
    vt_host_new_file();
    return 1;
}

/* 1 when id is set in the n-byte set. */
static int vt__has(const uint8_t *set, size_t n, size_t id)
{
    return id < n && set[id];
}

int vt_cap_check(vt_cap *k, vt_file *f, vt_encode_defs *d, vt_sitediff *sd, const char *header, size_t hlen,
                 uint64_t max)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return 0;
    uint64_t size = (uint64_t)st.st_size, t0 = vt_now_ns();
    if (vt_cap_keep_due(k, size, max))
        return vt__keep(k, f, d, sd, max);
    if (!vt_cap_due(k, size, max))
        return 0;
    int keep = k->keep_off != 0, complete = 0;
    if (!keep) {   /* compressed: appends after the head start a new frame */
        if (vt_file_end(f) < 0 || f->fd < 0 || fstat(f->fd, &st) < 0)
            return 0;
        size = (uint64_t)st.st_size;
    }
    vt_buf nb, scratch;
    vt_buf_init(&nb);
    vt_buf_init(&scratch);
    vt_buf_put(&nb, header, hlen);
    vt_encode_idset old_stacks = d->stacks, old_sites = d->sites;
    uint8_t *stacks = old_stacks.cap ? malloc(old_stacks.cap) : NULL;
    uint8_t *sites = old_sites.cap ? malloc(old_sites.cap) : NULL;
    int rc = -1;
    if ((old_stacks.cap && !stacks) || (old_sites.cap && !sites))
        goto out;
    if (stacks)
        memcpy(stacks, old_stacks.on, old_stacks.cap);
    if (sites)
        memcpy(sites, old_sites.on, old_sites.cap);
    /* the head's definitions: those made before the keep point (all, without one) */
    const uint8_t *hs = keep ? k->keep_stacks : stacks, *hsi = keep ? k->keep_sites : sites;
    size_t nhs = keep ? k->nkeep_stacks : old_stacks.cap, nhsi = keep ? k->nkeep_sites : old_sites.cap;
    vt_encode_defs_clear(d);
    for (size_t i = 0; i < nhs; i++)
        if (hs[i])
            vt_encode_stack_def(&nb, d, (uint32_t)i);
    size_t it = 0;
    for (const vt_site_row *r; (r = vt_cap_site_next(k, &it));)
        if (vt__has(hsi, nhsi, r->id))
            vt_encode_site_def(&nb, d, r);
    if (keep) {
        vt_buf_put(&nb, k->keep_head.p, k->keep_head.len);
        /* the definitions in the copied bytes: marked (and their modules), not written */
        for (size_t i = 0; i < old_stacks.cap; i++)
            if (stacks[i] && !vt__has(hs, nhs, i))
                vt_encode_stack_def(&scratch, d, (uint32_t)i);
        it = 0;
        for (const vt_site_row *r; (r = vt_cap_site_next(k, &it));)
            if (vt__has(sites, old_sites.cap, r->id) && !vt__has(hsi, nhsi, r->id))
                vt_encode_site_def(&scratch, d, r);
    } else {
        vt_cap_encode_summary(k, &nb, max, (size_t)(max / 4));
        vt_cap_encode_ooms(k, &nb);
        if (k->has_gap)
            vt_encode_gap_record(&nb, &k->gap);
    }
    if (!nb.oom)
        rc = vt_file_replace(f, nb.p, nb.len, keep ? k->keep_off : size);
out:;
    int e = errno;
    free(stacks);
    free(sites);
    vt_buf_free(&nb);
    vt_buf_free(&scratch);
    if (rc == 0 && fstat(f->fd, &st) == 0) {
        if (!keep) {
            vt_sitediff_reset(sd);   /* nothing exact was kept */
            complete = 1;
        }
        k->rewrites++;
        vt_log(VT_LOG_INFO, "size cap: %s rewritten to %llu bytes (steps %llu-%llu summarised in %u buckets, "
               "%llu bytes of records kept) in %llu us",
               f->path, (unsigned long long)st.st_size, (unsigned long long)k->first_step[0],
               (unsigned long long)(keep ? k->keep_step : k->last_step), keep ? k->keep_nb : k->nb,
               (unsigned long long)(keep ? size - k->keep_off : 0), (unsigned long long)((vt_now_ns() - t0) / 1000));
        k->base = (uint64_t)st.st_size;
    } else if (!nb.oom && rc != 0 && (e == ESTALE || e == ENOENT)) {
        /* our stream is no longer under its name (renamed by a rotation that does not
         * copy and truncate, or replaced): a file written there would be a second copy
         * of this process's records, so the cap stops for this stream, said once */
        k->failed = 1;
        vt_log(VT_LOG_WARN, "size cap: %s is no longer this process's stream (renamed or replaced); the size cap "
               "is off for it", f->path);
    } else {
        k->base = size;   /* try again after another half cap */
        vt_log(VT_LOG_WARN, "size cap: cannot rewrite %s (%s); it grows past VRAMTRACE_MAX_BYTES meanwhile",
               f->path, nb.oom || rc == 0 ? "out of memory" : strerror(e));
    }
    vt_cap_thaw(k);
    return complete;
}

void vt_cap_reset(vt_cap *k)
{
    /* untouched (a fork child of a process that never capped): nothing to write to,
     * so none of its pages is copied */
    if (!k->nb && !k->site && !k->ndev && !k->ooms && !k->keep_off && !k->keep_head.p && !k->base && !k->failed &&
        !k->has_gap)
        return;
    vt_cap_thaw(k);
    for (size_t i = 0; i < k->nsite; i++)
        free(k->site[i]);
    free(k->site);
    for (int d = 0; d < k->ndev; d++)
        free(k->dev[d]);
    for (int i = 0; i < VT_CAP_OOM_FIRST; i++)
        free(k->oom_first[i].p);
    for (int i = 0; i < VT_CAP_OOM_LAST; i++)
        free(k->oom_last[i].p);
    memset(k, 0, sizeof *k);
}
