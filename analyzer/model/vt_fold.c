/* vt_fold.c — records into the model (contract in vt_fold.h).
 *
 * Design: stacks are interned after trimming, so sites that differ only inside
 * CUDA's own libraries are one site; a snapshot record updates the step state of
 * each site it lists (vt_rsite.snap_* and step_*), and a new step number closes
 * the previous step (close_step), appending one run-length point per site whose
 * value changed. Nothing here fails: the decoder validated the record.
 */
#include "vt_fold.h"

#include <stdlib.h>
#include <string.h>

#include "vt_display.h"
#include "vt_format.h"
#include "vt_frames.h"
#include "vt_oom.h"
#include "vt_slots.h"
#include "vt_util.h"

static int trimmed_module(const vt_module *m)
{
    return m && vt_frames_module_trimmed(m->path);
}

/* Appends n bytes to a growing key buffer. */
static void key_put(char **key, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) vt_grow((void **)key, cap, *len + n, 1);
    memcpy(*key + *len, p, n);
    *len += n;
}

void vt_fold_stack(vt_process *p, int64_t id, vt_frame *fr, size_t nfr, vt_pyframe *py, size_t npy)
{
    /* Trim: frames in our/CUDA's libraries anywhere, then a leading run of CUDA
     * API functions (static runtime inside the program). Keep all if nothing is left.
     * pos[i]: the trimmed index of raw frame i, or -1 when it was trimmed. */
    size_t keep = 0;
    vt_frame *tf = vt_xcalloc(nfr ? nfr : 1, sizeof *tf);
    int32_t *pos = vt_xmalloc((nfr ? nfr : 1) * sizeof *pos);
    int leading = 1;
    for (size_t i = 0; i < nfr; i++) {
        pos[i] = -1;
        if (trimmed_module(fr[i].mod)) continue;
        if (leading && vt_frames_cuda_function(fr[i].function)) continue;
        leading = 0;
        pos[i] = (int32_t)keep;
        tf[keep++] = fr[i];
    }
    if (keep == 0) {
        memcpy(tf, fr, nfr * sizeof *fr);
        keep = nfr;
        for (size_t i = 0; i < nfr; i++) pos[i] = (int32_t)i;
    }
    free(fr);
    /* A Python frame's eval-loop frame moves with the trimming; were it trimmed
     * itself, the frames go in front of the next kept frame (or after the last). */
    for (size_t k = 0; k < npy; k++) {
        int32_t ni = py[k].native_index;
        if (ni < 0) continue;
        while ((size_t)ni < nfr && pos[ni] < 0) ni++;
        py[k].native_index = (size_t)ni < nfr ? pos[ni] : -1;
    }
    free(pos);
    /* intern by (module pointer, offset) of each native frame, then each Python
     * frame's file, function, line and native index */
    size_t keylen = 0, keycap = keep * (sizeof(void *) + sizeof(uint64_t)) + 1;
    char *key = vt_xmalloc(keycap);
    for (size_t i = 0; i < keep; i++) {
        key_put(&key, &keylen, &keycap, &tf[i].mod, sizeof(void *));
        key_put(&key, &keylen, &keycap, &tf[i].offset, sizeof(uint64_t));
    }
    for (size_t k = 0; k < npy; k++) {
        key_put(&key, &keylen, &keycap, py[k].file, strlen(py[k].file) + 1);
        key_put(&key, &keylen, &keycap, py[k].function, strlen(py[k].function) + 1);
        key_put(&key, &keylen, &keycap, &py[k].line, sizeof py[k].line);
        key_put(&key, &keylen, &keycap, &py[k].native_index, sizeof py[k].native_index);
    }
    vt_stack *st;
    HASH_FIND(hh, p->stack_by_key, key, keylen, st);
    if (st) {
        free(key);
        free(tf);
        free(py);
    } else {
        st = vt_xcalloc(1, sizeof *st);
        st->index = (uint32_t)p->nstacks;
        st->allocator = -1;
        st->nframes = (uint32_t)keep;
        st->frames = tf;
        for (size_t i = 0; i < keep; i++) tf[i].function = tf[i].function ? vt_xstrdup(tf[i].function) : NULL;
        st->npy = (uint32_t)npy;
        st->py = py;
        for (size_t k = 0; k < npy; k++) {
            py[k].file = vt_xdisplay(py[k].file);           /* shown, never opened */
            py[k].function = vt_xdisplay(py[k].function);
        }
        st->key = key;
        st->keylen = keylen;
        HASH_ADD_KEYPTR(hh, p->stack_by_key, st->key, st->keylen, st);
        VT_PUSH(p->stacks, p->nstacks, p->capstacks, st);
    }
    vt_rawstack *raw = vt_xcalloc(1, sizeof *raw);
    raw->id = id;
    raw->canon = st;
    HASH_ADD(hh, p->rawstacks, id, sizeof raw->id, raw);
}

static void append_point(vt_rsite *s, uint32_t step, uint64_t live, uint64_t peak, uint32_t nfree)
{
    if (s->npts) {
        vt_point *l = &s->pts[s->npts - 1];
        if (l->live == live && l->peak == peak && l->nfree == nfree) return;
        if (l->step == step) {
            l->live = live;
            l->peak = peak;
            l->nfree = nfree;
            if (s->npts >= 2) {   /* back to the value before: the point is not a change */
                const vt_point *b = &s->pts[s->npts - 2];
                if (b->live == live && b->peak == peak && b->nfree == nfree) s->npts--;
            } else if (!live && !peak && !nfree) {
                s->npts--;
            }
            return;
        }
    } else if (!live && !peak && !nfree) {
        return;
    }
    if (s->npts == s->cap) {
        size_t cap = s->cap;
        vt_grow((void **)&s->pts, &cap, (size_t)s->npts + 1, sizeof *s->pts);
        s->cap = (uint32_t)cap;
    }
    s->pts[s->npts++] = (vt_point){.step = step, .nfree = nfree, .live = live, .peak = peak};
}

/* Puts one step's values of s into slot si: alone when the step opened the slot,
 * else merged with the slot's values so far (vt_slots.h: live the least, peak the
 * most, nfree the sum of frees and give-backs). 1 when the slot's values are not
 * all zero. */
static int put_step(const vt_process *p, vt_rsite *s, uint32_t si, int fresh, uint64_t live, uint64_t peak,
                    uint32_t nfree)
{
    if (p->slot_width > 1) {   /* the step's give-backs count as frees (vt_slots.h) */
        uint64_t before = s->closed_mark + 1 == p->nsteps_real ? s->last_live : 0;   /* the previous step's */
        uint64_t n = (uint64_t)nfree + (peak > live) + (live < before);
        if (!fresh) {
            vt_point c = s->npts ? s->pts[s->npts - 1] : (vt_point){0};   /* holds for si */
            n += c.nfree;
            if (c.live < live) live = c.live;
            if (c.peak > peak) peak = c.peak;
        }
        nfree = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    }
    append_point(s, si, live, peak, nfree);
    return live || peak || nfree;
}

/* Closes the current (last) step: puts each concerned site's value into its slot. */
static void close_step(vt_process *p)
{
    if (!p->nsteps_real) return;
    uint32_t si = (uint32_t)(p->nsteps - 1);
    uint64_t mark = p->nsteps_real;
    int fresh = p->step_fresh;
    vt_rsite **nact = NULL;
    size_t nnact = 0, capnact = 0;
    for (size_t i = 0; i < p->ntouched; i++) {
        vt_rsite *s = p->touched[i];
        uint64_t live = s->step_seen_snap == p->last_series_snap ? s->step_live : 0;
        if (put_step(p, s, si, fresh, live, s->step_peak, s->step_nfree)) VT_PUSH(nact, nnact, capnact, s);
        s->closed_mark = mark;
        s->last_live = live;
    }
    for (size_t i = 0; i < p->nactive; i++) {
        vt_rsite *s = p->active[i];
        if (s->closed_mark == mark) continue;
        if (put_step(p, s, si, fresh, 0, 0, 0)) VT_PUSH(nact, nnact, capnact, s);
        s->closed_mark = mark;
        s->last_live = 0;
    }
    free(p->active);
    p->active = nact;
    p->nactive = nnact;
    p->capactive = capnact;
    p->ntouched = 0;
    p->total_max = vt_u64max(p->total_max, p->step_total[si]);
}

/* Starts step number step: in the last slot while it holds fewer than the width,
 * else in a new slot (merging pairs first when the limit is reached). */
static void open_step(vt_process *p, uint64_t step)
{
    if (!p->slot_width) p->slot_width = 1;
    if (!p->slot_limit) p->slot_limit = vt_slot_limit();
    if (p->nsteps && vt_slot_steps(p, p->nsteps - 1) < p->slot_width) {
        p->step_fresh = 0;
    } else {
        if (p->nsteps >= p->slot_limit) {
            vt_slots_coarsen(p);
            /* a merged last slot can be non-zero where its second half was zero:
             * every site whose series ends non-zero gets its value in the new slot */
            p->nactive = 0;
            for (vt_rsite *s = p->sites; s; s = s->hh.next) {
                const vt_point *l = s->npts ? &s->pts[s->npts - 1] : NULL;
                if (l && (l->live || l->peak || l->nfree)) VT_PUSH(p->active, p->nactive, p->capactive, s);
            }
        }
        VT_PUSH(p->steps, p->nsteps, p->capsteps, step);
        vt_grow((void **)&p->step_total, &p->captotal, p->nsteps, sizeof *p->step_total);
        vt_grow((void **)&p->step_time, &p->captime, p->nsteps, sizeof *p->step_time);
        p->step_total[p->nsteps - 1] = 0;
        p->step_time[p->nsteps - 1] = 0;
        p->step_fresh = 1;
    }
    p->nsteps_real++;
    p->last_step = step;
}

/* "torch.cuda:<device>.<name>" -> device and one of VT_TORCH_*; 0 if not such a key. */
static int torch_key(const char *k, int *dev)
{
    static const char pre[] = "torch.cuda:";
    if (strncmp(k, pre, sizeof pre - 1) != 0) return 0;
    const char *p = k + sizeof pre - 1;
    long d = 0;
    if (*p < '0' || *p > '9') return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        d = d * 10 + (*p - '0');
        if (d > VT_DEVICE_MAX) return 0;   /* not a device: an ordinary annotation */
    }
    if (*p++ != '.') return 0;
    *dev = (int)d;
    if (!strcmp(p, "memory_allocated_bytes")) return VT_TORCH_ALLOCATED;
    if (!strcmp(p, "memory_reserved_bytes")) return VT_TORCH_RESERVED;
    if (!strcmp(p, "inactive_split_bytes")) return VT_TORCH_INACTIVE_SPLIT;
    return 0;
}

/* Folds the record's annotations into the process: latest value per key (the
 * records are read in order, so the last one wins), and the torch gauges into
 * their devices. Called only once the record is known to be valid. */
static void apply_annotations(vt_process *p, const vt_snaprec *rec, uint64_t step)
{
    for (size_t i = 0; i < rec->nan; i++) {
        const vt_rec_annot *e = &rec->an[i];
        vt_annot *a = NULL;
        if (i < p->nannots && !strcmp(p->annots[i].key, e->key)) a = &p->annots[i];   /* same order as before */
        for (size_t k = 0; !a && k < p->nannots; k++)
            if (!strcmp(p->annots[k].key, e->key)) a = &p->annots[k];
        if (!a) {
            vt_annot na;
            memset(&na, 0, sizeof na);
            vt_strlcpy(na.key, sizeof na.key, e->key);
            na.max = e->value;
            VT_PUSH(p->annots, p->nannots, p->capannots, na);
            a = &p->annots[p->nannots - 1];
        }
        a->value = e->value;
        if (e->value > a->max) a->max = e->value;
        a->step = step;
        int dev, which = torch_key(e->key, &dev);
        if (!which) continue;
        vt_device *dv = vt_process_device(p, dev);
        dv->has_torch |= which;
        if (which == VT_TORCH_ALLOCATED) dv->torch_allocated = e->value;
        else if (which == VT_TORCH_RESERVED) dv->torch_reserved = e->value;
        else dv->torch_inactive_split = e->value;
    }
    for (size_t d = 0; rec->nan && d < p->ndevices; d++) {
        vt_device *dv = &p->devices[d];
        if ((dv->has_torch & (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) != (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) continue;
        double cached = dv->torch_reserved - dv->torch_allocated;
        if (cached > dv->torch_cached_max) dv->torch_cached_max = cached;
    }
}

/* The latest exports and imports replace the previous ones (each record lists all). */
static void apply_ipc(vt_process *p, const vt_snaprec *rec)
{
    free(p->exports);
    free(p->imports);
    p->exports = p->imports = NULL;
    p->nexports = rec->nex;
    p->nimports = rec->nix;
    if (rec->nex) {
        p->exports = vt_xmalloc(rec->nex * sizeof *p->exports);
        memcpy(p->exports, rec->ex, rec->nex * sizeof *p->exports);
    }
    if (rec->nix) {
        p->imports = vt_xmalloc(rec->nix * sizeof *p->imports);
        memcpy(p->imports, rec->ix, rec->nix * sizeof *p->imports);
    }
    p->imports_at_exit = rec->is_exit;
}

static int cmp_alloc_addr(const void *a, const void *b)
{
    const vt_alloc *x = *(const vt_alloc *const *)a, *y = *(const vt_alloc *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static vt_rsite *alloc_site(vt_process *p, const vt_alloc *a)
{
    vt_site_key key;
    memset(&key, 0, sizeof key);
    key.stack = a->stack;
    key.kind = a->kind;
    key.device = a->device;
    key.flags = a->flags;
    return vt_process_site(p, &key, vt_process_rawstack(p, a->stack));
}

/* The heaps of region sites not placed yet: for each region row of the live list,
 * the allocation of another kind whose range holds the region's address (the
 * heap's own cudaMalloc, ...). Before vt_oom_build, which reorders rec->ae. */
static void place_regions(vt_process *p, const vt_snaprec *rec)
{
    size_t nr = 0, nh = 0;
    for (size_t i = 0; i < rec->nae; i++) {
        if (rec->ae[i].stack == INT64_MIN) continue;
        if (rec->ae[i].kind == VT_KIND_REGION) nr++;
        else nh++;
    }
    if (!nr || !nh) return;
    const vt_alloc **h = vt_xmalloc(nh * sizeof *h);
    nh = 0;
    for (size_t i = 0; i < rec->nae; i++)
        if (rec->ae[i].stack != INT64_MIN && rec->ae[i].kind != VT_KIND_REGION) h[nh++] = &rec->ae[i];
    qsort(h, nh, sizeof *h, cmp_alloc_addr);
    for (size_t i = 0; i < rec->nae; i++) {
        const vt_alloc *r = &rec->ae[i];
        if (r->stack == INT64_MIN || r->kind != VT_KIND_REGION) continue;
        vt_rsite *rs = alloc_site(p, r);
        if (rs->heap_site) continue;
        size_t lo = 0, hi = nh;   /* the last allocation starting at or below r->addr */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (h[mid]->addr <= r->addr) lo = mid + 1;
            else hi = mid;
        }
        if (lo && r->addr - h[lo - 1]->addr < h[lo - 1]->size) {
            rs->heap_addr = h[lo - 1]->addr;
            rs->heap_site = alloc_site(p, h[lo - 1]);
        }
    }
    free(h);
}

/* The record's peak compositions: each replaces the one kept when its peak is at
 * least as high (a writer's copies only rise; a higher one read earlier, e.g. from a
 * concatenated stream, is kept). */
static void apply_peaks(vt_process *p, const vt_snaprec *rec)
{
    for (size_t i = 0; i < rec->npk; i++) {
        const vt_rec_peak *e = &rec->pk[i];
        vt_peakcomp *pc;
        if (e->process) {
            if (!p->peak_comp) p->peak_comp = vt_xcalloc(1, sizeof *p->peak_comp);
            pc = p->peak_comp;
        } else {
            pc = &vt_process_device(p, e->device)->peak_comp;
        }
        if (pc->present && pc->bytes > e->bytes) continue;
        pc->present = 1;
        pc->bytes = e->bytes;
        pc->step = e->step;
        pc->time_ns = e->time_ns;
        pc->other_bytes = e->other_bytes;
        pc->other_sites = e->other_sites;
        pc->n = e->n;
        for (size_t k = 0; k < e->n; k++) {
            pc->s[k].site = vt_process_site(p, &e->s[k].key, e->s[k].canon);
            pc->s[k].bytes = e->s[k].bytes;
        }
    }
}

void vt_fold_snapshot(vt_process *p, vt_snaprec *rec, int keep_allocs)
{
    uint64_t step = rec->step, seq = rec->seq, time_ns = rec->time_ns;
    int is_exit = rec->is_exit, have_allocs = rec->have_allocs;
    const char *trigger = rec->trigger;
    uint64_t dropped = rec->dropped;
    int step_marked = rec->step_marked;
    apply_annotations(p, rec, step);
    apply_ipc(p, rec);
    apply_peaks(p, rec);
    if (rec->label) {
        if (p->nlabels < VT_MAX_LABELS) {
            vt_label l;
            memset(&l, 0, sizeof l);
            l.seq = seq;
            l.step = step;
            l.time_ns = time_ns;
            vt_strlcpy(l.trigger, sizeof l.trigger, trigger);
            l.label = vt_xdisplay(rec->label);
            VT_PUSH(p->labels, p->nlabels, p->caplabels, l);
        } else {
            p->labels_dropped++;
        }
    }
    if (dropped > p->dropped_records) p->dropped_records = dropped;
    p->marks_not_written = vt_u64max(p->marks_not_written, rec->marks_not_written);
    if (step_marked) p->step_marked = 1;
    for (size_t i = 0; i < rec->nde; i++) {
        vt_rec_dev *d = &rec->de[i];
        vt_device *dv = vt_process_device(p, (int)d->device);
        if (d->has_free && d->has_total) {
            dv->has_mem = 1;
            dv->free_bytes = d->free_b;
            dv->total_bytes = d->total_b;
        }
        dv->live_bytes = d->live;
        dv->peak_bytes = d->peak;
        dv->peak_max = vt_u64max(dv->peak_max, vt_u64max(d->peak, d->live));
        if (d->has_frag) {
            dv->frag_last = d->frag;
            if (d->frag > dv->frag_max) dv->frag_max = d->frag;
        }
        /* cumulative counters: the latest record has the largest */
        dv->alloc_calls = vt_u64max(dv->alloc_calls, d->calls);
        dv->failed_calls = vt_u64max(dv->failed_calls, d->failed);
        dv->oom_calls = vt_u64max(dv->oom_calls, d->oom);
        if (d->has_oom) dv->has_oom_total = 1;
        if (d->has_pool_r) dv->pool_reserved = d->pool_r;
        if (d->has_pool_u) dv->pool_used = d->pool_u;
        uint64_t ret = dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0;
        if (ret > dv->retention_max) dv->retention_max = ret;
        if (d->has_graph_r) {
            dv->has_graph = 1;
            dv->graph_reserved = d->graph_r;
            dv->graph_used = d->has_graph_u ? d->graph_u : 0;
            uint64_t gret = vt_graph_retention(dv);
            if (gret > dv->graph_retention_max) dv->graph_retention_max = gret;
        }
    }
    if (have_allocs && rec->nae)
        place_regions(p, rec);
    if (keep_allocs && have_allocs) {
        /* copied before vt_oom_build, which reorders rec->ae */
        vt_grow((void **)&p->alists, &p->capalists, p->nalists + 1, sizeof *p->alists);
        vt_alloc_list *al = &p->alists[p->nalists++];
        memset(al, 0, sizeof *al);
        al->seq = seq;
        al->step = step;
        al->time_ns = time_ns;
        al->is_exit = is_exit;
        vt_strlcpy(al->trigger, sizeof al->trigger, trigger);
        al->n = rec->nae;
        al->rows = vt_xmalloc((rec->nae ? rec->nae : 1) * sizeof *al->rows);
        if (rec->nae)   /* rec->ae may be NULL: memcpy(p, NULL, 0) is undefined (UBSan) */
            memcpy(al->rows, rec->ae, rec->nae * sizeof *al->rows);
    }
    if (is_exit) {
        vt_rsite *s, *t;
        HASH_ITER(hh, p->sites, s, t) s->unfreed_exit = 0;
        p->unfreed_exit_bytes = 0;
        for (size_t i = 0; i < rec->nse; i++) {
            vt_rsite *s2 = rec->se[i].site ? rec->se[i].site : vt_process_site(p, &rec->se[i].key, rec->se[i].canon);
            /* imported memory is another process's, a region lies inside a heap counted already:
             * neither counts in the process's unfreed bytes */
            if (vt_kind_in_totals(s2->key.kind)) {
                s2->unfreed_exit = vt_sat_add(s2->unfreed_exit, rec->se[i].live);
                p->unfreed_exit_bytes = vt_sat_add(p->unfreed_exit_bytes, rec->se[i].live);
            }
            s2->peak_bytes = vt_u64max(s2->peak_bytes, vt_u64max(rec->se[i].live, rec->se[i].ipeak));
        }
        p->exited = 1;
        if (rec->oom.present) vt_oom_build(p, rec);
        return;
    }
    if (rec->oom.present) vt_oom_build(p, rec);
    if (rec->summarised) return;   /* its step is in the summary already */
    if (p->step_range && p->nsteps_real == 1 && p->nsteps == 1 && p->last_step == 0 && step > 0) {
        /* steps marked by NVTX ranges: what was written before the first range ended
         * (marks, periodic snapshots: step 0) happened during the first step and is
         * no step of its own; the slot becomes the first step's */
        p->steps[0] = step;
        p->last_step = step;
    } else if (!p->nsteps_real || step > p->last_step) {
        close_step(p);
        open_step(p, step);
    }
    uint64_t ord = ++p->nsnapshots;
    uint32_t si = (uint32_t)(p->nsteps - 1);
    uint64_t smark = p->nsteps_real;
    uint64_t total = 0;
    /* sum duplicates of a key within the record, then fold into step state */
    size_t nsnap = 0;
    for (size_t i = 0; i < rec->nse; i++) {
        vt_rec_site *e = &rec->se[i];
        /* version 2 resolved the site already (rd_complete_sites) */
        vt_rsite *s = e->site ? e->site : vt_process_site(p, &e->key, e->canon);
        if (s->snap_mark != ord) {
            s->snap_mark = ord;
            s->snap_live = s->snap_peak = s->snap_free_total = 0;
            rec->se[nsnap].site = s;   /* reuse: list of distinct sites */
            nsnap++;
        }
        s->snap_live = vt_sat_add(s->snap_live, e->live);
        s->snap_peak = vt_sat_add(s->snap_peak, e->ipeak);
        s->snap_free_total = vt_sat_add(s->snap_free_total, e->free_total);
        if (vt_kind_in_totals(s->key.kind))   /* not another process's memory, not a region */
            total = vt_sat_add(total, e->live);
    }
    for (size_t i = 0; i < nsnap; i++) {
        vt_rsite *s = rec->se[i].site;
        if (s->step_mark != smark) {
            s->step_mark = smark;
            s->step_peak = 0;
            s->step_nfree = 0;
            VT_PUSH(p->touched, p->ntouched, p->captouched, s);
        }
        s->step_live = s->snap_live;
        s->step_seen_snap = ord;
        s->step_peak = vt_u64max(s->step_peak, vt_u64max(s->snap_peak, s->snap_live));
        if (s->snap_free_total > s->free_total) {
            uint64_t d = s->snap_free_total - s->free_total + s->step_nfree;
            s->step_nfree = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        }
        s->free_total = s->snap_free_total;
        s->peak_bytes = vt_u64max(s->peak_bytes, s->step_peak);
    }
    p->last_series_snap = ord;
    p->step_total[si] = total;
    p->step_time[si] = time_ns;
}

/* Shrinks an array of n elements to n (at least one). */
static void *shrink(void *a, size_t n, size_t size, size_t *cap)
{
    if (!a) return NULL;
    *cap = n ? n : 1;
    return vt_xrealloc(a, *cap * size);
}

void vt_fold_finish(vt_process *p)
{
    close_step(p);
    uint64_t devpeak = 0;
    for (size_t i = 0; i < p->ndevices; i++) devpeak = vt_sat_add(devpeak, p->devices[i].peak_max);
    p->peak_bytes = vt_u64max(devpeak, p->total_max);
    /* the loading scratch goes; arrays keep only what they hold */
    free(p->touched);
    free(p->active);
    p->touched = p->active = NULL;
    p->ntouched = p->captouched = p->nactive = p->capactive = 0;
    p->steps = shrink(p->steps, p->nsteps, sizeof *p->steps, &p->capsteps);
    p->step_total = shrink(p->step_total, p->nsteps, sizeof *p->step_total, &p->captotal);
    p->step_time = shrink(p->step_time, p->nsteps, sizeof *p->step_time, &p->captime);
    p->annots = shrink(p->annots, p->nannots, sizeof *p->annots, &p->capannots);
    p->labels = shrink(p->labels, p->nlabels, sizeof *p->labels, &p->caplabels);
    p->ooms = shrink(p->ooms, p->nooms, sizeof *p->ooms, &p->capooms);
    p->stacks = shrink(p->stacks, p->nstacks, sizeof *p->stacks, &p->capstacks);
    p->modules = shrink(p->modules, p->nmodules, sizeof *p->modules, &p->capmodules);
    vt_rsite *s, *t;
    HASH_ITER(hh, p->sites, s, t) {
        if (s->cap > s->npts) {
            size_t cap = 0;
            s->pts = shrink(s->pts, s->npts, sizeof *s->pts, &cap);
            s->cap = (uint32_t)cap;
        }
    }
}

void vt_snaprec_clear(vt_snaprec *rec)
{
    rec->nse = rec->nde = rec->nae = rec->nan = rec->nex = rec->nix = rec->npk = 0;
    rec->step = rec->seq = rec->time_ns = rec->dropped = rec->marks_not_written = 0;
    rec->trigger[0] = 0;
    free(rec->label);
    rec->label = NULL;
    rec->step_marked = rec->is_exit = rec->have_allocs = rec->summarised = 0;
    memset(&rec->oom, 0, sizeof rec->oom);
}

void vt_snaprec_free(vt_snaprec *rec)
{
    free(rec->label);
    rec->label = NULL;
    free(rec->se);
    free(rec->de);
    free(rec->ae);
    free(rec->an);
    free(rec->ex);
    free(rec->ix);
    free(rec->pk);
    uint64_t mark = rec->mark;
    memset(rec, 0, sizeof *rec);
    rec->mark = mark;
}
