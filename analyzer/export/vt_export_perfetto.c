/* vt_export_perfetto.c — Chrome trace-event JSON for Perfetto (vt_export.h).
 *
 * Design: one JSON object {"traceEvents":[...],"displayTimeUnit":"ns"} written
 * event by event (each event built as a small jansson object and dumped, so
 * strings are escaped by the library and memory stays per event). Per process
 * (trace pid = the program's pid, made unique if two inputs share one):
 *   - "M" process_name metadata: "rank R, pid P on HOST";
 *   - "C" counter events, one track per device and kind, named
 *     "gpu<D> <kind> live bytes" with args {"bytes": N}, plus "gpu<D> live bytes"
 *     (the kinds counted in a device's bytes: vt_kind_in_totals), one sample per step at the time of the step's last snapshot
 *     (ts in microseconds of CLOCK_MONOTONIC), in step order, so every track's
 *     timestamps are non-decreasing;
 *   - "i" instant events "step N" (process scope) and "OOM ..." with the
 *     request, free/total memory and the verdict in args.
 * Steps whose time is unknown (records without time_ns) are left out.
 * With the event trace beside a stream (VRAMTRACE_TRACE=1, read/vt_trace_read.h),
 * also every allocation and free from it, in its order:
 *   - "C" counter "gpu<D> live bytes, every event": the device's live bytes of the
 *     kinds counted in its totals after each event (so within-step peaks show);
 *   - one async slice ("b" at the allocation, "e" at its free; cat "allocation",
 *     id unique per process) per block, named "<size> <site>" (the analysed site of
 *     its stack id, kind and device), args {size_bytes, address, stream, kind};
 *     a block still live at the trace's end has no "e" (Perfetto draws it open).
 */
#include "vt_export.h"
#include "vt_site_view.h"
#include "vt_trace_read.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "vt_display.h"
#include "vt_format.h"
#include "vt_size.h"
#include "vt_util.h"

typedef struct track {
    int device, kind;           /* kind -1: all kinds */
    uint64_t *v;                /* per step */
} track;

static json_t *jbytes(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* Writes one event (NULL: jansson refused a value, e.g. invalid UTF-8) and frees it. */
static int emit(FILE *f, json_t *ev, int *first)
{
    if (!ev) return -1;
    if (!*first && fputs(",\n", f) == EOF) return -1;
    *first = 0;
    int rc = json_dumpf(ev, f, JSON_COMPACT);
    json_decref(ev);
    return rc;
}

static track *track_for(track **tr, size_t *n, size_t *cap, int dev, int kind, size_t nsteps)
{
    for (size_t i = 0; i < *n; i++)
        if ((*tr)[i].device == dev && (*tr)[i].kind == kind) return &(*tr)[i];
    track t = {.device = dev, .kind = kind, .v = vt_xcalloc(nsteps ? nsteps : 1, sizeof(uint64_t))};
    VT_PUSH(*tr, *n, *cap, t);
    return &(*tr)[*n - 1];
}

static int process_events(FILE *f, const vt_proc_result *pr, int64_t pid, int *first)
{
    const vt_process *p = pr->p;
    char title[512], name[128];
    int rc = 0;
    rc |= emit(f, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid", (json_int_t)pid,
                            "tid", (json_int_t)0, "args", "name", vt_process_title(p, title, sizeof title)), first);
    size_t ns = p->nsteps;
    track *tr = NULL;
    size_t ntr = 0, captr = 0;
    uint64_t *tmp = vt_xcalloc(ns ? ns : 1, sizeof *tmp);
    vt_rsite *s, *st;
    HASH_ITER(hh, p->sites, s, st) {
        vt_rsite_expand(s, ns, tmp, NULL, NULL);
        track *a = track_for(&tr, &ntr, &captr, s->key.device, s->key.kind, ns);
        track *all = track_for(&tr, &ntr, &captr, s->key.device, -1, ns);
        int in_all = vt_kind_in_totals(s->key.kind);   /* not another process's, not a region */
        for (size_t i = 0; i < ns; i++) {
            a->v[i] += tmp[i];
            if (in_all) all->v[i] += tmp[i];
        }
    }
    free(tmp);
    for (size_t i = 0; i < ns && rc == 0; i++) {
        if (!p->step_time[i]) continue;
        double ts = (double)p->step_time[i] / 1000.0;
        for (size_t k = 0; k < ntr; k++) {
            if (tr[k].kind < 0) snprintf(name, sizeof name, "gpu%d live bytes", tr[k].device);
            else snprintf(name, sizeof name, "gpu%d %s live bytes", tr[k].device, vt_kind_name(tr[k].kind));
            rc |= emit(f, json_pack("{s:s, s:s, s:f, s:I, s:I, s:{s:o}}", "name", name, "ph", "C", "ts", ts,
                                    "pid", (json_int_t)pid, "tid", (json_int_t)0, "args", "bytes", jbytes(tr[k].v[i])),
                       first);
        }
        snprintf(name, sizeof name, "step %llu", (unsigned long long)p->steps[i]);
        rc |= emit(f, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I}", "name", name, "ph", "i", "s", "p", "ts", ts,
                                "pid", (json_int_t)pid, "tid", (json_int_t)0), first);
    }
    for (size_t k = 0; k < ntr; k++) free(tr[k].v);
    free(tr);
    for (size_t i = 0; i < p->nlabels && rc == 0; i++) {   /* labelled snapshots: instants */
        const vt_label *l = &p->labels[i];
        if (!l->time_ns) continue;
        rc |= emit(f, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:{s:I, s:s}}", "name", l->label, "ph", "i", "s", "p",
                                "ts", (double)l->time_ns / 1000.0, "pid", (json_int_t)pid, "tid", (json_int_t)0,
                                "args", "step", (json_int_t)l->step, "trigger", l->trigger), first);
    }
    if (p->nannots && rc == 0) {   /* annotations: their last values as the process's arguments */
        json_t *args = json_object();
        for (size_t i = 0; i < p->nannots; i++) json_object_set_new(args, p->annots[i].key, json_real(p->annots[i].value));
        rc |= emit(f, json_pack("{s:s, s:s, s:I, s:I, s:o}", "name", "process_labels", "ph", "M", "pid", (json_int_t)pid,
                                "tid", (json_int_t)0, "args", args), first);
    }
    for (size_t i = 0; i < p->nooms && rc == 0; i++) {
        const vt_oom *o = &p->ooms[i];
        const char *verdict = !o->has_mem ? "unknown" : o->free_bytes >= o->requested_bytes ? "fragmentation" : "exhaustion";
        char sz[32];
        snprintf(name, sizeof name, "OOM %s %s on gpu%d (%s)", o->api, vt_size_fmt(o->requested_bytes, sz, sizeof sz),
                 o->device, verdict);
        json_t *args = json_pack("{s:o, s:s, s:I, s:s}", "requested_bytes", jbytes(o->requested_bytes), "verdict", verdict,
                                 "step", (json_int_t)o->step, "api", o->api);
        if (o->has_mem) {
            json_object_set_new(args, "free_bytes", jbytes(o->free_bytes));
            json_object_set_new(args, "total_bytes", jbytes(o->total_bytes));
        }
        json_object_set_new(args, "tracked_bytes", jbytes(o->tracked_bytes));
        rc |= emit(f, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:o}", "name", name, "ph", "i", "s", "p",
                                "ts", (double)o->time_ns / 1000.0, "pid", (json_int_t)pid, "tid", (json_int_t)0, "args", args),
                   first);
    }
    return rc ? -1 : 0;
}

typedef struct trace_site {      /* (stack id, kind, device) -> analysed site */
    struct { int64_t stack; int32_t kind, device; } key;
    vt_site_result *r;
    UT_hash_handle hh;
} trace_site;

typedef struct trace_block {     /* a live block of the trace: (addr, device) -> its slice */
    struct { uint64_t addr; int32_t device, pad; } key;
    uint64_t id, size;
    int counted;                 /* in the device's live bytes (vt_kind_in_totals) */
    char *name;                  /* the slice's name, for its "e" event too; owned */
    UT_hash_handle hh;
} trace_block;

/* Ends block b's slice at tus (microseconds): its "e" event, its bytes out of its
 * device's live count, b removed from *live and freed. 0, or -1 when the write failed. */
static int block_end(FILE *f, trace_block **live, trace_block *b, uint64_t *dev_live, double tus, int64_t pid,
                     int *first)
{
    if (b->counted) dev_live[b->key.device] -= b->size;
    int rc = emit(f, json_pack("{s:s, s:s, s:s, s:I, s:f, s:I, s:I}", "name", b->name, "ph", "e", "cat", "allocation",
                               "id", (json_int_t)b->id, "ts", tus, "pid", (json_int_t)pid, "tid", (json_int_t)0),
                  first);
    HASH_DEL(*live, b);
    free(b->name);
    free(b);
    return rc;
}

/* The event trace's allocations and frees of process pr (trace pid pid): see the
 * design comment. 0, or -1 when a write failed (err). A trace that cannot be read
 * (a bad header, an unknown record) is said on stderr with its "file:offset: what"
 * and left out: the process keeps its per-step tracks, the other processes theirs. */
static int trace_events(FILE *f, vt_analysis *a, const vt_proc_result *pr, int64_t pid, int *first, char *err,
                        size_t cap)
{
    const vt_process *p = pr->p;
    vt_trace tr;
    int traced = vt_trace_read(p->file, &tr, err, cap);
    if (traced < 0) {
        fprintf(stderr, "vramtrace: %s (its events left out of the export)\n", err);
        err[0] = 0;
        return 0;
    }
    if (traced == 0) return 0;
    if (tr.stopped)
        fprintf(stderr, "vramtrace: %s: the event trace stops early (its size cap): its events end there\n", tr.path);
    if (tr.lost)
        fprintf(stderr, "vramtrace: %s: %llu events were not recorded (the writer fell behind): the every-event "
                "counter is not exact\n", tr.path, (unsigned long long)tr.lost);
    trace_site *sites = NULL, *ts, *tt;
    vt_rsite *s, *st;
    HASH_ITER(hh, p->sites, s, st) {
        trace_site k;
        memset(&k, 0, sizeof k);
        k.key.stack = s->key.stack;
        k.key.kind = s->key.kind;
        k.key.device = s->key.device;
        HASH_FIND(hh, sites, &k.key, sizeof k.key, ts);
        if (ts) continue;
        ts = vt_xcalloc(1, sizeof *ts);
        ts->key = k.key;
        ts->r = vt_result_of(pr, s);
        HASH_ADD(hh, sites, key, sizeof ts->key, ts);
    }
    trace_block *live = NULL, *b, *bt;
    uint64_t *dev_live = NULL;
    size_t ndev = 0;
    int rc = 0;
    char name[640], sz[32];
    for (size_t i = 0; i < tr.n && rc == 0; i++) {
        const vt_tev *e = &tr.ev[i];
        if (e->device < 0) continue;
        if ((size_t)e->device >= ndev) {
            size_t n = (size_t)e->device + 1;
            dev_live = vt_xrealloc(dev_live, n * sizeof *dev_live);
            memset(dev_live + ndev, 0, (n - ndev) * sizeof *dev_live);
            ndev = n;
        }
        trace_block k;
        memset(&k, 0, sizeof k);
        k.key.addr = e->addr;
        k.key.device = e->device;
        HASH_FIND(hh, live, &k.key, sizeof k.key, b);
        double tus = (double)e->time_ns / 1000.0;
        if (e->op == VT_TEV_ALLOC) {
            if (b)                    /* an address given again without a free seen: the old block ends here */
                rc |= block_end(f, &live, b, dev_live, tus, pid, first);
            b = vt_xcalloc(1, sizeof *b);
            b->key = k.key;
            b->id = i + 1;
            b->size = e->size;
            b->counted = vt_kind_in_totals(e->kind);
            HASH_ADD(hh, live, key, sizeof b->key, b);
            if (b->counted) dev_live[e->device] += e->size;
            trace_site q;
            memset(&q, 0, sizeof q);
            q.key.stack = e->stack == INT64_MIN ? 0 : e->stack;
            q.key.kind = e->kind;
            q.key.device = e->device;
            HASH_FIND(hh, sites, &q.key, sizeof q.key, ts);
            snprintf(name, sizeof name, "%s %s", vt_size_fmt(e->size, sz, sizeof sz),
                     ts && ts->r ? vt_site_title(a, ts->r) : "(site unknown)");
            vt_utf8_trim(name);   /* a long title cut at the buffer's end keeps whole characters (JSON wants UTF-8) */
            b->name = vt_xstrdup(name);
            rc |= emit(f, json_pack("{s:s, s:s, s:s, s:I, s:f, s:I, s:I, s:{s:o, s:o, s:o, s:s}}", "name", name,
                                    "ph", "b", "cat", "allocation", "id", (json_int_t)b->id, "ts", tus,
                                    "pid", (json_int_t)pid, "tid", (json_int_t)0, "args", "size_bytes", jbytes(e->size),
                                    "address", jbytes(e->addr),
                                    VT_KIND_OF(e->kind) == VT_KIND_ASYNC ? "stream" : "context", jbytes(e->stream), "kind",
                                    vt_kind_name(e->kind)), first);
        } else {
            if (!b) continue;         /* a free of a block the trace never saw allocated */
            rc |= block_end(f, &live, b, dev_live, tus, pid, first);
        }
        snprintf(name, sizeof name, "gpu%d live bytes, every event", e->device);
        rc |= emit(f, json_pack("{s:s, s:s, s:f, s:I, s:I, s:{s:o}}", "name", name, "ph", "C", "ts", tus,
                                "pid", (json_int_t)pid, "tid", (json_int_t)0, "args", "bytes", jbytes(dev_live[e->device])),
                   first);
    }
    HASH_ITER(hh, live, b, bt) {
        HASH_DEL(live, b);
        free(b->name);
        free(b);
    }
    HASH_ITER(hh, sites, ts, tt) {
        HASH_DEL(sites, ts);
        free(ts);
    }
    free(dev_live);
    vt_trace_free(&tr);
    if (rc) snprintf(err, cap, "write failed");
    return rc ? -1 : 0;
}

int vt_export_perfetto(FILE *f, vt_analysis *a, char *err, size_t cap)
{
    int first = 1, rc = 0;
    err[0] = 0;
    if (fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f) == EOF) rc = -1;
    for (size_t i = 0; i < a->n && rc == 0; i++) {
        int64_t pid = (int64_t)a->procs[i].p->pid;
        for (size_t j = 0; j < i; j++)   /* two inputs with the same pid (other hosts): keep tracks apart */
            if ((int64_t)a->procs[j].p->pid == pid) pid += 10000000 * (int64_t)(i + 1);
        rc = process_events(f, &a->procs[i], pid, &first);
        if (rc == 0) rc = trace_events(f, a, &a->procs[i], pid, &first, err, cap);
    }
    if (rc == 0 && fputs("\n]}\n", f) == EOF) rc = -1;
    if (rc == 0 && ferror(f)) rc = -1;
    if (rc < 0 && !err[0]) snprintf(err, cap, "write failed");
    return rc;
}
