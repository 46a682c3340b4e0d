/* vt_export_torch.c — PyTorch memory snapshot pickle (vt_export.h).
 *
 * Design: PyTorch's snapshot (torch.cuda.memory._snapshot(), structure in
 * ../shared/docs/prior-art.md §1) describes its caching allocator; under the
 * preload every cudaMalloc-level allocation is both a segment and the one
 * block that fills it. From the records that carry a live list (exit, oom,
 * signal, manual; docs/snapshot-format.md "allocations"):
 *   - segments = the last live list (each with one "active_allocated" block);
 *   - device_traces, per device, in time order:
 *       segment_alloc + alloc   at each distinct block's birth_ns,
 *       free_completed + segment_free at the first list where a block seen
 *                               before is missing (its exact free time is unknown),
 *       oom                     at each OOM record (size = request, device_free);
 *   so that replaying the trace backwards from the segments (what memory_viz
 *   does) is consistent: every block of a segment has an earlier alloc.
 *       snapshot                at the moment of the device's peak composition
 *                               (docs/snapshot-format.md "peak_composition"): size =
 *                               the device's live bytes then, frames = its largest
 *                               site's, user_metadata = "vramtrace peak, step N";
 *   and, beside PyTorch's keys (memory_viz reads only its own), the compositions
 *   themselves: "vramtrace_peak_composition", a list of {device (-1 and process
 *   True: the process's, all devices), total_size, step, time_us, sites: [{size,
 *   frames}] largest first, other_size, other_sites}. A composition counts sites, not
 *   blocks, so it is not replayed into segments.
 * Allocations born and freed between two lists are not in the file and so not
 * in the trace, unless the event trace is beside the stream (VRAMTRACE_TRACE=1,
 * read/vt_trace_read.h): then every allocation and free comes from it, in its order
 * (segment_alloc + alloc, free_completed + segment_free, its times), and segments
 * are what replaying it leaves live; the live lists then give no trace events. Host-pinned memory is host memory and is left out. Frames are
 * innermost first, {filename, line, name}; each stack's list is written once
 * and shared through the pickle memo. time_us is CLOCK_MONOTONIC microseconds.
 */
#include "vt_export.h"

#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_pickle.h"
#include "vt_trace_read.h"
#include "vt_util.h"

typedef struct blk_key {
    uint64_t addr, birth_ns;
    int32_t device, pad;
} blk_key;

typedef struct blk {
    blk_key key;
    const vt_alloc *row;        /* the row where it was first seen */
    size_t last_list;           /* index of the last list that has it */
    UT_hash_handle hh;
} blk;

enum { EV_SEG_ALLOC, EV_ALLOC, EV_FREE, EV_SEG_FREE, EV_OOM, EV_PEAK };

typedef struct ev {
    uint64_t time_ns;
    int action;
    int device;
    const blk *b;
    const vt_oom *o;
    const vt_peakcomp *pc;      /* EV_PEAK */
    const vt_tev *te;           /* from the event trace: the block is this event's */
    size_t order;
} ev;

typedef struct tctx {
    vt_analysis *a;
    vt_process *p;
    vt_pickle pk;
    uint32_t *memo;             /* per canonical stack: memo index + 1, 0 = not written */
    uint32_t empty_memo;        /* memo index + 1 of an empty frame list */
} tctx;

static int exported_kind(int kind)
{
    return kind == VT_KIND_DEVICE || kind == VT_KIND_ASYNC || kind == VT_KIND_VMM || kind == VT_KIND_MANAGED;
}

static int cmp_ev(const void *x, const void *y)
{
    const ev *a = x, *b = y;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;   /* grouped by device */
    if (a->time_ns != b->time_ns) return a->time_ns < b->time_ns ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Pushes the frame list of canonical stack st (NULL: empty), memoized. */
static void frames(tctx *t, const vt_stack *st)
{
    uint32_t *slot = st ? &t->memo[st->index] : &t->empty_memo;
    if (*slot) {
        vt_pk_get(&t->pk, *slot - 1);
        return;
    }
    vt_pk_list(&t->pk);
    *slot = vt_pk_memoize(&t->pk) + 1;
    if (!st || !st->nview) return;
    vt_pk_mark(&t->pk);
    for (uint32_t i = 0; i < st->nview; i++) {   /* innermost first, Python frames interleaved (vt_pyview.h) */
        int32_t v = st->view[i];
        const vt_sym *s = v >= 0 ? vt_sym_frame_at(t->a->sym, &st->frames[VT_VIEW_NATIVE(v)], VT_VIEW_DEPTH(v))
                                 : vt_sym_pyframe(t->a->sym, &st->py[-1 - v]);
        vt_pk_dict(&t->pk);
        vt_pk_mark(&t->pk);
        vt_pk_kv_str(&t->pk, "filename", s->file ? s->file : s->python ? "??" : s->module ? s->module : "??");
        vt_pk_kv_int(&t->pk, "line", s->line);
        vt_pk_kv_str(&t->pk, "name", s->signature ? s->signature : s->python ? "??" : vt_export_frame_name(s));
        vt_pk_setitems(&t->pk);
    }
    vt_pk_appends(&t->pk);
}

static const vt_stack *stack_of(const vt_process *p, int64_t id)
{
    if (id == INT64_MIN) return NULL;
    vt_rawstack *raw;
    HASH_FIND(hh, p->rawstacks, &id, sizeof id, raw);
    return raw ? raw->canon : NULL;
}

/* memory_viz's "stream" of a block: the CUstream of a stream-ordered allocation; 0
 * (the default stream) for any other kind, whose column holds the CUcontext current
 * at the call, not a stream. */
static uint64_t torch_stream(int kind, uint64_t ctx_stream)
{
    return VT_KIND_OF(kind) == VT_KIND_ASYNC ? ctx_stream : 0;
}

/* One segment holding one active block: (device, addr, size, stream, kind, stack id). */
static void segment_of(tctx *t, int device, uint64_t addr, uint64_t size, uint64_t stream, int kind,
                       int64_t stack)
{
    vt_pickle *pk = &t->pk;
    const vt_stack *st = stack_of(t->p, stack);
    vt_pk_dict(pk);
    vt_pk_mark(pk);
    vt_pk_kv_int(pk, "device", device);
    vt_pk_kv_uint(pk, "address", addr);
    vt_pk_kv_uint(pk, "total_size", size);
    vt_pk_kv_uint(pk, "allocated_size", size);
    vt_pk_kv_uint(pk, "active_size", size);
    vt_pk_kv_uint(pk, "requested_size", size);
    vt_pk_kv_uint(pk, "stream", torch_stream(kind, stream));
    vt_pk_kv_str(pk, "segment_type", "large");
    vt_pk_str(pk, "segment_pool_id");
    vt_pk_int(pk, 0);
    vt_pk_int(pk, 0);
    vt_pk_tuple2(pk);
    vt_pk_str(pk, "is_expandable");
    vt_pk_bool(pk, kind == VT_KIND_VMM);
    vt_pk_str(pk, "frames");
    frames(t, st);
    vt_pk_str(pk, "blocks");
    vt_pk_list(pk);
    vt_pk_mark(pk);
    vt_pk_dict(pk);
    vt_pk_mark(pk);
    vt_pk_kv_uint(pk, "address", addr);
    vt_pk_kv_uint(pk, "size", size);
    vt_pk_kv_uint(pk, "requested_size", size);
    vt_pk_kv_str(pk, "state", "active_allocated");
    vt_pk_str(pk, "frames");
    frames(t, st);
    vt_pk_setitems(pk);
    vt_pk_appends(pk);
    vt_pk_setitems(pk);
}

static void segment(tctx *t, const vt_alloc *r)
{
    segment_of(t, r->device, r->addr, r->size, r->stream, r->kind, r->stack);
}

static void trace_entry(tctx *t, const ev *e)
{
    static const char *const names[] = {"segment_alloc", "alloc", "free_completed", "segment_free", "oom",
                                        "snapshot"};
    vt_pickle *pk = &t->pk;
    vt_pk_dict(pk);
    vt_pk_mark(pk);
    vt_pk_kv_str(pk, "action", names[e->action]);
    if (e->action == EV_PEAK) {
        const vt_peakcomp *pc = e->pc;
        char meta[64];
        snprintf(meta, sizeof meta, "vramtrace peak, step %llu", (unsigned long long)pc->step);
        vt_pk_kv_uint(pk, "addr", 0);
        vt_pk_kv_uint(pk, "size", pc->bytes);
        vt_pk_kv_int(pk, "stream", 0);
        vt_pk_str(pk, "frames");
        frames(t, pc->n && pc->s[0].site ? pc->s[0].site->canon : NULL);
        vt_pk_kv_str(pk, "user_metadata", meta);
    } else if (e->action == EV_OOM) {
        const vt_oom *o = e->o;
        vt_pk_kv_uint(pk, "device_free", o->has_mem ? o->free_bytes : 0);
        vt_pk_kv_uint(pk, "size", o->requested_bytes);
        vt_pk_kv_int(pk, "stream", 0);
        vt_pk_str(pk, "frames");
        frames(t, o->site ? o->site->canon : stack_of(t->p, o->stack));
    } else if (e->te) {
        vt_pk_kv_uint(pk, "addr", e->te->addr);
        vt_pk_kv_uint(pk, "size", e->te->size);
        vt_pk_kv_uint(pk, "stream", torch_stream(e->te->kind, e->te->stream));
        vt_pk_str(pk, "frames");
        frames(t, stack_of(t->p, e->te->stack));
    } else {
        const vt_alloc *r = e->b->row;
        vt_pk_kv_uint(pk, "addr", r->addr);
        vt_pk_kv_uint(pk, "size", r->size);
        vt_pk_kv_uint(pk, "stream", torch_stream(r->kind, r->stream));
        vt_pk_str(pk, "frames");
        frames(t, stack_of(t->p, r->stack));
    }
    vt_pk_kv_uint(pk, "time_us", e->time_ns / 1000);
    vt_pk_setitems(pk);
}

/* One entry of "vramtrace_peak_composition". */
static void peak_entry(tctx *t, const vt_peakcomp *pc, int device, int process)
{
    vt_pickle *pk = &t->pk;
    vt_pk_dict(pk);
    vt_pk_mark(pk);
    vt_pk_kv_int(pk, "device", device);
    vt_pk_str(pk, "process");
    vt_pk_bool(pk, process);
    vt_pk_kv_uint(pk, "total_size", pc->bytes);
    vt_pk_kv_uint(pk, "step", pc->step);
    vt_pk_kv_uint(pk, "time_us", pc->time_ns / 1000);
    vt_pk_str(pk, "sites");
    vt_pk_list(pk);
    if (pc->n) {
        vt_pk_mark(pk);
        for (size_t i = 0; i < pc->n; i++) {
            vt_pk_dict(pk);
            vt_pk_mark(pk);
            vt_pk_kv_uint(pk, "size", pc->s[i].bytes);
            vt_pk_str(pk, "frames");
            frames(t, pc->s[i].site ? pc->s[i].site->canon : NULL);
            vt_pk_setitems(pk);
        }
        vt_pk_appends(pk);
    }
    vt_pk_kv_uint(pk, "other_size", pc->other_bytes);
    vt_pk_kv_uint(pk, "other_sites", pc->other_sites);
    vt_pk_setitems(pk);
}

int vt_export_torch(FILE *f, vt_analysis *a, char *err, size_t cap)
{
    if (a->n != 1) {
        snprintf(err, cap, "--format torch writes one process; the input has %zu (name one snapshot file)", a->n);
        return -1;
    }
    tctx t;
    memset(&t, 0, sizeof t);
    t.a = a;
    t.p = a->procs[0].p;
    vt_process *p = t.p;
    vt_trace tr;
    int traced = vt_trace_read(p->file, &tr, err, cap);
    if (traced < 0)
        return -1;
    if (traced && tr.stopped)
        fprintf(stderr, "vramtrace: %s: the event trace stops early (its size cap): the trace view ends there\n",
                tr.path);
    if (traced && tr.lost)
        fprintf(stderr, "vramtrace: %s: %llu events were not recorded (the writer fell behind)\n", tr.path,
                (unsigned long long)tr.lost);
    t.memo = vt_xcalloc(p->nstacks ? p->nstacks : 1, sizeof *t.memo);

    /* distinct blocks over all live lists */
    blk *blocks = NULL, *b, *bt;
    int maxdev = 0;
    for (size_t li = 0; li < p->nalists; li++) {
        const vt_alloc_list *al = &p->alists[li];
        for (size_t i = 0; i < al->n; i++) {
            const vt_alloc *r = &al->rows[i];
            if (!exported_kind(r->kind) || r->device < 0) continue;
            blk_key k = {.addr = r->addr, .birth_ns = r->birth_ns, .device = r->device};
            HASH_FIND(hh, blocks, &k, sizeof k, b);
            if (!b) {
                b = vt_xcalloc(1, sizeof *b);
                b->key = k;
                b->row = r;
                HASH_ADD(hh, blocks, key, sizeof b->key, b);
            }
            b->last_list = li;
            if (r->device > maxdev) maxdev = r->device;
        }
    }
    for (size_t i = 0; i < p->nooms; i++)
        if (p->ooms[i].device > maxdev) maxdev = p->ooms[i].device;

    ev *evs = NULL;
    size_t nev = 0, capev = 0;
    /* with the event trace: every allocation and free from it, in its order, and the
     * segments are what its replay leaves live (live[i]: tr.ev[i] still live) */
    unsigned char *live = traced ? vt_xcalloc(tr.n ? tr.n : 1, 1) : NULL;
    if (traced) {
        typedef struct lv { uint64_t addr; int32_t device, pad; size_t i; UT_hash_handle hh; } lv;
        lv *byaddr = NULL, *l, *lt;
        for (size_t i = 0; i < tr.n; i++) {
            const vt_tev *te = &tr.ev[i];
            if (!exported_kind(te->kind) || te->device < 0) continue;
            ev e = {.time_ns = te->time_ns, .device = te->device, .te = te};
            struct { uint64_t addr; int32_t device, pad; } k = {te->addr, te->device, 0};
            HASH_FIND(hh, byaddr, &k, 16, l);
            if (te->op == VT_TEV_ALLOC) {
                if (!l) {
                    l = vt_xcalloc(1, sizeof *l);
                    l->addr = te->addr;
                    l->device = te->device;
                    HASH_ADD(hh, byaddr, addr, 16, l);
                } else {
                    live[l->i] = 0;
                }
                l->i = i;
                live[i] = 1;
                e.action = EV_SEG_ALLOC; e.order = nev; VT_PUSH(evs, nev, capev, e);
                e.action = EV_ALLOC; e.order = nev; VT_PUSH(evs, nev, capev, e);
            } else {
                if (l) {
                    live[l->i] = 0;
                    HASH_DEL(byaddr, l);
                    free(l);
                }
                e.action = EV_FREE; e.order = nev; VT_PUSH(evs, nev, capev, e);
                e.action = EV_SEG_FREE; e.order = nev; VT_PUSH(evs, nev, capev, e);
            }
            if (te->device > maxdev) maxdev = te->device;
        }
        HASH_ITER(hh, byaddr, l, lt) {
            HASH_DEL(byaddr, l);
            free(l);
        }
    }
    HASH_ITER(hh, blocks, b, bt) {
        if (traced) break;
        ev e = {.time_ns = b->row->birth_ns, .device = b->key.device, .b = b};
        e.action = EV_SEG_ALLOC; e.order = nev; VT_PUSH(evs, nev, capev, e);
        e.action = EV_ALLOC; e.order = nev; VT_PUSH(evs, nev, capev, e);
        if (b->last_list + 1 < p->nalists) {   /* missing from the next list: freed before it */
            e.time_ns = p->alists[b->last_list + 1].time_ns;
            e.action = EV_FREE; e.order = nev; VT_PUSH(evs, nev, capev, e);
            e.action = EV_SEG_FREE; e.order = nev; VT_PUSH(evs, nev, capev, e);
        }
    }
    for (size_t i = 0; i < p->nooms; i++) {
        if (p->ooms[i].device < 0) continue;
        ev e = {.time_ns = p->ooms[i].time_ns, .action = EV_OOM, .device = p->ooms[i].device, .o = &p->ooms[i], .order = nev};
        VT_PUSH(evs, nev, capev, e);
    }
    for (size_t d = 0; d < p->ndevices; d++) {
        const vt_device *dv = &p->devices[d];
        if (dv->device < 0 || !dv->peak_comp.present) continue;
        ev e = {.time_ns = dv->peak_comp.time_ns, .action = EV_PEAK, .device = dv->device, .pc = &dv->peak_comp,
                .order = nev};
        VT_PUSH(evs, nev, capev, e);
        if (dv->device > maxdev) maxdev = dv->device;
    }
    if (nev) qsort(evs, nev, sizeof *evs, cmp_ev);

    vt_pickle *pk = &t.pk;
    vt_pk_begin(pk, f);
    vt_pk_dict(pk);
    vt_pk_mark(pk);
    /* segments: the final state */
    vt_pk_str(pk, "segments");
    vt_pk_list(pk);
    if (traced) {
        size_t n = 0;
        for (size_t i = 0; i < tr.n; i++) {
            if (!live[i]) continue;
            if (n++ % 1000 == 0) {
                if (n > 1) vt_pk_appends(pk);
                vt_pk_mark(pk);
            }
            const vt_tev *te = &tr.ev[i];
            segment_of(&t, te->device, te->addr, te->size, te->stream, te->kind, te->stack);
        }
        if (n) vt_pk_appends(pk);
    } else if (p->nalists) {
        const vt_alloc_list *last = &p->alists[p->nalists - 1];
        size_t n = 0;
        for (size_t i = 0; i < last->n; i++) {
            const vt_alloc *r = &last->rows[i];
            if (!exported_kind(r->kind) || r->device < 0) continue;
            if (n++ % 1000 == 0) {
                if (n > 1) vt_pk_appends(pk);
                vt_pk_mark(pk);
            }
            segment(&t, r);
        }
        if (n) vt_pk_appends(pk);
    }
    vt_pk_str(pk, "device_traces");
    vt_pk_list(pk);
    vt_pk_mark(pk);
    /* device_traces[d] is device d's trace (PyTorch's indexing): an empty list
     * for each device number without events below the highest one seen (the
     * reader bounds device ids, vt_reader.h); the events, sorted by device,
     * are walked once */
    size_t ei = 0;
    for (int d = 0; d <= maxdev; d++) {
        vt_pk_list(pk);
        size_t n = 0;
        for (; ei < nev && evs[ei].device <= d; ei++) {
            size_t i = ei;
            if (evs[i].device != d) continue;
            if (n++ % 1000 == 0) {
                if (n > 1) vt_pk_appends(pk);
                vt_pk_mark(pk);
            }
            trace_entry(&t, &evs[i]);
        }
        if (n) vt_pk_appends(pk);
    }
    vt_pk_appends(pk);
    vt_pk_str(pk, "vramtrace_peak_composition");
    vt_pk_list(pk);
    {
        size_t n = 0;
        if (p->peak_comp && p->peak_comp->present) {
            vt_pk_mark(pk);
            n++;
            peak_entry(&t, p->peak_comp, -1, 1);
        }
        for (size_t d = 0; d < p->ndevices; d++) {
            if (!p->devices[d].peak_comp.present) continue;
            if (!n++) vt_pk_mark(pk);
            peak_entry(&t, &p->devices[d].peak_comp, p->devices[d].device, 0);
        }
        if (n) vt_pk_appends(pk);
    }
    vt_pk_str(pk, "allocator_settings");
    vt_pk_dict(pk);
    vt_pk_setitems(pk);
    int rc = vt_pk_end(pk);
    if (rc < 0) snprintf(err, cap, "write failed");

    HASH_ITER(hh, blocks, b, bt) {
        HASH_DEL(blocks, b);
        free(b);
    }
    free(evs);
    free(t.memo);
    free(live);
    if (traced) vt_trace_free(&tr);
    return rc;
}
