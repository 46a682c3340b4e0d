/* vt_encode.c — the JSON text of every record the preload writes (see vt_encode.h,
 * docs/snapshot-format.md).
 *
 * Design: one function per record type, types to bytes, like memray's record_writer
 * over its sink: nothing here opens, writes or locks. Site rows (format version 3) are
 * positional: [site id, then the counters in VT_SITE3_ORDER]; in a delta record each
 * listed row is written as its differences from the site's previous row, signed,
 * trailing zeros left out (vt__site_row). A delta record (format version 4) also
 * leaves out every device figure, and the seq, step_marked and dropped count, that did
 * not change since the file's previous record (vt_encode_last), and the leak warnings
 * (the reader finds them in the site rows); keys at their default are left out of
 * every record.
 */
#define _GNU_SOURCE
#include "vt_encode.h"
#include "vt_host.h"
#include "vt_ipc.h"
#include "vt_config.h"
#include "vt_state.h"
#include "vt_fd.h"
#include "vt_modules.h"
#include "vt_stack.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- per-file definitions ---- */

static int vt__idset_has(const vt_encode_idset *set, uint32_t id)
{
    return id < set->cap && set->on[id];
}

static void vt__idset_add(vt_encode_idset *set, uint32_t id)
{
    if (id >= set->cap) {
        size_t cap = set->cap ? set->cap : 1024;
        while (cap <= id)
            cap *= 2;
        uint8_t *p = realloc(set->on, cap);
        if (!p)
            return;  /* defined again next time (readers accept an identical site again) */
        memset(p + set->cap, 0, cap - set->cap);
        set->on = p;
        set->cap = cap;
    }
    set->on[id] = 1;
}

static void vt__idset_clear(vt_encode_idset *set)
{
    if (set->on)   /* NULL before the first id: memset(NULL, 0, 0) is UB */
        memset(set->on, 0, set->cap);
}

/* Notes a definition marked written (vt_encode_defs_mark). */
static void vt__journal(vt_encode_defs *d, void *module, uint32_t id, int site)
{
    if (d->njournal == d->capjournal) {
        size_t cap = d->capjournal ? 2 * d->capjournal : 64;
        vt_encode_jent *p = realloc(d->journal, cap * sizeof *p);
        if (!p) {
            d->journal_lost = 1;
            return;
        }
        d->journal = p;
        d->capjournal = cap;
    }
    d->journal[d->njournal++] = (vt_encode_jent){ module, id, (uint8_t)site };
}

void vt_encode_defs_mark(vt_encode_defs *d)
{
    d->njournal = 0;
    d->journal_lost = 0;
}

void vt_encode_defs_undo(vt_encode_defs *d)
{
    if (d->journal_lost) {
        vt_encode_defs_clear(d);
        return;
    }
    for (size_t i = 0; i < d->njournal; i++) {
        vt_encode_jent *j = &d->journal[i];
        if (j->module)
            ((vt_module *)j->module)->written = 0;
        else if (j->site && j->id < d->sites.cap)
            d->sites.on[j->id] = 0;
        else if (!j->site && j->id < d->stacks.cap)
            d->stacks.on[j->id] = 0;
    }
    d->njournal = 0;
}

void vt_encode_gap_record(vt_buf *b, const vt_encode_gap *g)
{
    vt_buf_cstr(b, "{\"t\":\"gap\",\"records\":");
    vt_buf_u64(b, g->records);
    if (g->has_steps) {
        vt_buf_cstr(b, ",\"first_step\":");
        vt_buf_u64(b, g->first_step);
        vt_buf_cstr(b, ",\"last_step\":");
        vt_buf_u64(b, g->last_step);
    } else {
        vt_buf_cstr(b, ",\"first_step\":null,\"last_step\":null");
    }
    vt_buf_cstr(b, ",\"first_ns\":");
    vt_buf_u64(b, g->first_ns);
    vt_buf_cstr(b, ",\"last_ns\":");
    vt_buf_u64(b, g->last_ns);
    vt_buf_cstr(b, ",\"errno\":");
    vt_buf_u64(b, (uint64_t)(g->err > 0 ? g->err : 0));
    vt_buf_cstr(b, ",\"error\":");
    vt_buf_jstr(b, g->error ? g->error : "", 200);
    vt_buf_cstr(b, "}\n");
}

void vt_encode_defs_clear(vt_encode_defs *d)
{
    d->njournal = 0;
    d->journal_lost = 0;
    vt__idset_clear(&d->stacks);
    vt__idset_clear(&d->sites);
    vt_modules_new_file();
    vt_host_new_file();
}

void vt_encode_last_reset(vt_encode_last *l)
{
    l->valid = 0;
    memset(l->known, 0, sizeof l->known);
}

/* ---- small helpers ---- */

static void vt__kv_u64(vt_buf *b, const char *key, uint64_t v)
{
    vt_buf_cstr(b, key);
    vt_buf_u64(b, v);
}

/* key then the value, or null when not known */
static void vt__kv_opt(vt_buf *b, const char *key, int known, uint64_t v)
{
    vt_buf_cstr(b, key);
    vt_buf_u64_or_null(b, known, v);
}

static void vt__kv_int_env(vt_buf *b, const char *key, const char *env)
{
    vt_buf_cstr(b, key);
    const char *v = getenv(env);
    char *end = NULL;
    long long n = v && *v ? strtoll(v, &end, 10) : 0;
    if (v && *v && end && *end == 0)
        vt_buf_i64(b, n);
    else
        vt_buf_cstr(b, "null");
}

void vt_encode_header(vt_buf *b, uint64_t start_ns)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    vt_buf_cstr(b, "{\"t\":\"header\",\"format\":\"" VT_FORMAT_NAME "\",\"version\":");
    vt_buf_u64(b, VT_FORMAT_VERSION);
    vt_buf_cstr(b, ",\"pid\":");
    vt_buf_u64(b, (uint64_t)getpid());
    vt_buf_cstr(b, ",\"ppid\":");
    vt_buf_u64(b, (uint64_t)getppid());
    vt_buf_cstr(b, ",\"host\":");
    vt_buf_jstr(b, host, 0);
    vt_buf_cstr(b, ",\"exe\":");
    vt_buf_jstr(b, exe, 0);
    vt_buf_cstr(b, ",\"cmdline\":[");
    static char cmd[65536];
    size_t len = vt_fd_read_small("/proc/self/cmdline", cmd, sizeof cmd);
    for (size_t i = 0; i < len;) {
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, cmd + i, 0);
        i += strlen(cmd + i) + 1;
    }
    vt_buf_cstr(b, "]");
    vt__kv_int_env(b, ",\"rank\":", "RANK");
    vt__kv_int_env(b, ",\"local_rank\":", "LOCAL_RANK");
    vt__kv_int_env(b, ",\"world_size\":", "WORLD_SIZE");
    /* the restart count of an elastic job (torchrun's, else Slurm's requeue count):
     * written only when one of them is set, so that one rank's processes across
     * restarts stay apart */
    const char *restart = getenv("TORCHELASTIC_RESTART_COUNT");
    if (!restart || !*restart) restart = getenv("SLURM_RESTART_COUNT");
    if (restart && *restart) {
        char *end = NULL;
        long long n = strtoll(restart, &end, 10);
        if (end && *end == 0 && n >= 0) {
            vt_buf_cstr(b, ",\"restart\":");
            vt_buf_i64(b, n);
        }
    }
    /* the frameworks' allocator settings the program started with (what
     * `vramtrace run --tensors` or the user chose): only those set */
    static const char *const alloc_env[] = {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
                                            "TF_GPU_ALLOCATOR", "XLA_PYTHON_CLIENT_ALLOCATOR",
                                            "XLA_PYTHON_CLIENT_PREALLOCATE", "VRAMTRACE_TENSORS"};
    int nenv = 0;
    for (size_t i = 0; i < sizeof alloc_env / sizeof alloc_env[0]; i++) {
        const char *v = getenv(alloc_env[i]);
        if (!v) continue;
        vt_buf_cstr(b, nenv++ ? "," : ",\"allocator_env\":{");
        vt_buf_jstr(b, alloc_env[i], 0);
        vt_buf_put(b, ":", 1);
        vt_buf_jstr(b, v, 0);
    }
    if (nenv) vt_buf_put(b, "}", 1);
    if (vt__config.step_range_on) {   /* steps marked by NVTX ranges (VRAMTRACE_STEP_RANGE) */
        char sr[sizeof vt__config.step_range_domain + sizeof vt__config.step_range_name + 2];
        if (vt__config.step_range_any_domain)
            snprintf(sr, sizeof sr, "%s", vt__config.step_range_name);
        else
            snprintf(sr, sizeof sr, "%s:%s", vt__config.step_range_domain, vt__config.step_range_name);
        vt_buf_cstr(b, ",\"step_range\":");
        vt_buf_jstr(b, sr, 0);
    }
    vt_buf_cstr(b, ",\"start_ns\":");
    vt_buf_u64(b, start_ns);
    vt_buf_cstr(b, ",\"clock\":\"CLOCK_MONOTONIC\",\"mono_start_ns\":");
    vt_buf_u64(b, vt_now_ns());
    vt_buf_cstr(b, ",\"depth\":");
    vt_buf_u64(b, (uint64_t)vt_state_depth());
    vt_buf_cstr(b, ",\"interval_ms\":");
    vt_buf_u64(b, (uint64_t)vt__config.interval_ms);
    vt_buf_cstr(b, ",\"step_every\":");
    vt_buf_u64(b, (uint64_t)vt__config.step_every);
    vt_buf_cstr(b, ",\"leak_steps\":");
    vt_buf_u64(b, (uint64_t)vt__config.leak_steps);
    vt_buf_cstr(b, "}\n");
}

/* ---- stacks and sites ---- */

/* Appends ,"py":[[file,function,line,native_index],...] for the Python frames of
 * stack id (nothing when it has none). native_index: the native frame (index into
 * pcs) of the interpreter eval loop (_PyEval_EvalFrameDefault) that runs the
 * frame's activation (vt_py_frame.group: the g-th eval frame counted from the
 * innermost), -1 when the native stack was cut before it. */
static void vt__define_py(vt_buf *b, uint32_t id, const uintptr_t *pcs, int n)
{
    const vt_py_frame *py = NULL;
    int npy = 0;
    if (vt_stack_get_py(id, &py, &npy) < 0 || npy == 0)
        return;
    int evals[VT_DEPTH_MAX], nev = 0;
    for (int i = 0; i < n && nev < VT_DEPTH_MAX; i++) {
        const char *fn = vt_modules_symbol(pcs[i] - 1);
        if (fn && !strcmp(fn, "_PyEval_EvalFrameDefault"))
            evals[nev++] = i;
    }
    vt_buf_cstr(b, ",\"py\":[");
    for (int i = 0; i < npy; i++) {
        char file[1024], func[256];
        int line;
        vt_py_describe(&py[i], file, sizeof file, func, sizeof func, &line);
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        vt_buf_jstr(b, file, 1024);
        vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, func, 256);
        vt_buf_put(b, ",", 1);
        vt_buf_u64(b, (uint64_t)(line > 0 ? line : 0));
        if (py[i].group < (uint32_t)nev) {
            vt_buf_put(b, ",", 1);
            vt_buf_u64(b, (uint64_t)evals[py[i].group]);
        } else {
            vt_buf_cstr(b, ",-1");
        }
        vt_buf_put(b, "]", 1);
    }
    vt_buf_put(b, "]", 1);
}

void vt_encode_stack_def(vt_buf *b, vt_encode_defs *d, uint32_t id)
{
    if (vt__idset_has(&d->stacks, id))
        return;
    const uintptr_t *pcs = NULL;
    int n = 0;
    if (vt_stack_get(id, &pcs, &n) < 0)
        n = 0;
    /* modules first */
    for (int i = 0; i < n; i++) {
        vt_module *m = vt_modules_find(pcs[i] - 1);
        if (!m || m->written)
            continue;
        vt_buf_cstr(b, "{\"t\":\"module\",\"id\":");
        vt_buf_u64(b, (uint64_t)m->id);
        vt_buf_cstr(b, ",\"path\":");
        vt_buf_jstr(b, m->path, 0);
        vt_buf_cstr(b, ",\"build_id\":\"");
        vt_buf_cstr(b, m->build_id);
        vt_buf_cstr(b, "\",\"bias\":");
        vt_buf_u64(b, (uint64_t)m->bias);
        vt_buf_cstr(b, "}\n");
        m->written = 1;
        vt__journal(d, m, 0, 0);
    }
    vt_buf_cstr(b, "{\"t\":\"stack\",\"id\":");
    vt_buf_u64(b, id);
    vt_buf_cstr(b, ",\"frames\":[");
    for (int i = 0; i < n; i++) {
        /* Every captured pc is a return address. The first frame is written as
         * pc - 1 (inside the call instruction) so that it is looked up as is; the
         * others are return addresses that readers look up at offset - 1. */
        uintptr_t pc = i == 0 ? pcs[i] - 1 : pcs[i];
        vt_module *m = vt_modules_find(pcs[i] - 1);
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        if (m) {
            vt_buf_u64(b, (uint64_t)m->id);
            vt_buf_put(b, ",", 1);
            vt_buf_u64(b, (uint64_t)(pc - m->bias));
        } else {
            vt_buf_cstr(b, "-1,");
            vt_buf_u64(b, (uint64_t)pc);
        }
        vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, vt_modules_symbol(pcs[i] - 1), 512);
        vt_buf_put(b, "]", 1);
    }
    vt_buf_put(b, "]", 1);
    vt__define_py(b, id, pcs, n);
    vt_buf_cstr(b, "}\n");
    vt__idset_add(&d->stacks, id);
    vt__journal(d, NULL, id, 0);
}

/* The eight figures of a kind, in the order they are written. */
#define VT__KIND_FIGS(s) { (s)->live_bytes, (s)->live_count, (s)->peak_bytes, (s)->alloc_total, (s)->free_total, \
                           (s)->failed_total, (s)->oom_total, (s)->alloc_bytes_total }
static const char *const vt__kind_keys[8] = { "live_bytes", "live_count", "peak_bytes", "alloc_total",
                                              "free_total", "failed_total", "oom_total", "alloc_bytes_total" };

/* Writes the device's "kinds" object. Complete (prev NULL): the kinds that have any
 * figure above 0, each with its eight figures; a kind left out has every figure 0.
 * Against prev (the device as the previous record said it): only the kinds with a
 * changed figure, each with only its changed figures; nothing at all when none
 * changed (docs/snapshot-format.md "snapshot", "Version 4"). */
static void vt__format_kinds(vt_buf *b, const vt_dev_stats *d, const vt_dev_stats *prev)
{
    int n = 0;
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        const uint64_t cur[8] = VT__KIND_FIGS(&d->kinds[k]);
        uint64_t old[8] = { 0 }, any = 0;
        if (prev) {
            const uint64_t o[8] = VT__KIND_FIGS(&prev->kinds[k]);
            memcpy(old, o, sizeof old);
        }
        for (int f = 0; f < 8; f++)
            any |= prev ? cur[f] ^ old[f] : cur[f];
        if (!any)
            continue;
        vt_buf_cstr(b, n++ ? ",\"" : ",\"kinds\":{\"");
        vt_buf_cstr(b, vt_kind_name(k));
        vt_buf_cstr(b, "\":{");
        int m = 0;
        for (int f = 0; f < 8; f++) {
            if (prev && cur[f] == old[f])
                continue;
            vt_buf_cstr(b, m++ ? ",\"" : "\"");
            vt_buf_cstr(b, vt__kind_keys[f]);
            vt_buf_cstr(b, "\":");
            vt_buf_u64(b, cur[f]);
        }
        vt_buf_put(b, "}", 1);
    }
    if (n)
        vt_buf_put(b, "}", 1);
    else if (!prev)
        vt_buf_cstr(b, ",\"kinds\":{}");
}

/* Fragmentation as written (6 decimals), -1 for null: what "changed" compares. */
static int64_t vt__frag_key(double v)
{
    return !(v >= 0.0) || v > 1e15 ? -1 : (int64_t)(v * 1e6 + 0.5);
}

/* One entry of "devices". Complete (prev NULL): every key. Against prev: "device"
 * and only the keys whose value changed (free and total as a pair); returns 0 and
 * writes nothing when nothing changed. Returns 1 when written. */
static int vt__format_device(vt_buf *b, const vt_dev_stats *d, const vt_dev_stats *prev, int first)
{
    size_t mark = b->len;
    vt_buf_cstr(b, first ? "{\"device\":" : ",{\"device\":");
    vt_buf_i64(b, d->device);
    size_t head = b->len;
    if (!prev || d->meminfo_known != prev->meminfo_known || d->free_bytes != prev->free_bytes ||
        d->total_bytes != prev->total_bytes) {
        vt__kv_opt(b, ",\"free_bytes\":", d->meminfo_known, d->free_bytes);
        vt__kv_opt(b, ",\"total_bytes\":", d->meminfo_known, d->total_bytes);
    }
    if (!prev || d->live_bytes != prev->live_bytes)
        vt__kv_u64(b, ",\"live_bytes\":", d->live_bytes);
    if (!prev || d->peak_bytes != prev->peak_bytes)
        vt__kv_u64(b, ",\"peak_bytes\":", d->peak_bytes);
    if (!prev || vt__frag_key(d->fragmentation) != vt__frag_key(prev->fragmentation)) {
        vt_buf_cstr(b, ",\"fragmentation\":");
        vt_buf_fixed6(b, d->fragmentation);
    }
    if (!prev || d->pool_known != prev->pool_known || d->pool_reserved_bytes != prev->pool_reserved_bytes)
        vt__kv_opt(b, ",\"pool_reserved_bytes\":", d->pool_known, d->pool_reserved_bytes);
    if (!prev || d->pool_used_bytes != prev->pool_used_bytes)
        vt__kv_u64(b, ",\"pool_used_bytes\":", d->pool_used_bytes);
    if (d->graph_known && (!prev || !prev->graph_known || d->graph_reserved_bytes != prev->graph_reserved_bytes ||
                           d->graph_used_bytes != prev->graph_used_bytes)) {
        vt__kv_u64(b, ",\"graph_reserved_bytes\":", d->graph_reserved_bytes);
        vt__kv_u64(b, ",\"graph_used_bytes\":", d->graph_used_bytes);
    }
    vt__format_kinds(b, d, prev);
    if (prev && b->len == head && !b->oom) {   /* nothing changed: no entry */
        b->len = mark;
        return 0;
    }
    vt_buf_put(b, "}", 1);
    return 1;
}

/* The kind and device: keyed, `,"kind":"<kind>","device":<device>` (objects); not
 * keyed, `,"<kind>",<device>` (the columns of a positional row). */
static void vt__kind_device(vt_buf *b, int kind, int device, int keyed)
{
    vt_buf_cstr(b, keyed ? ",\"kind\":\"" : ",\"");
    vt_buf_cstr(b, vt_kind_name(kind));
    vt_buf_cstr(b, keyed ? "\",\"device\":" : "\",");
    vt_buf_i64(b, device);
}

/* A site's flags (VT_SITE_FLAGS), written only when it has any: keyed,
 * `,"flags":["registered",...]` (objects); not keyed, `,["registered",...]` (the
 * optional last column of a positional row). */
static void vt__flags(vt_buf *b, int flags, int keyed)
{
    if (!flags)
        return;
    vt_buf_cstr(b, keyed ? ",\"flags\":[" : ",[");
    int n = 0;
#define VT__FLAG_NAME(e, bit, name)            \
    if (flags & (bit)) {                       \
        vt_buf_cstr(b, n++ ? ",\"" : "\"");     \
        vt_buf_cstr(b, name "\"");             \
    }
    VT_SITE_FLAGS(VT__FLAG_NAME)
#undef VT__FLAG_NAME
    vt_buf_put(b, "]", 1);
}

/* {"stack":N,"kind":"...","device":D[,"flags":[...]]  — the key of a site row (left
 * open). */
static void vt__site_key(vt_buf *b, const vt_site_row *s)
{
    vt__kv_u64(b, "{\"stack\":", s->stack);
    vt__kind_device(b, s->kind, s->device, 1);
    vt__flags(b, s->flags, 1);
}

/* Site definitions (format version 3): {"t":"site","id":N,"stack":S,"kind":"...",
 * "device":D[,"flags":[...]]}, written once per file before the first row that uses
 * site N. */
void vt_encode_site_def(vt_buf *b, vt_encode_defs *d, const vt_site_row *s)
{
    if (vt__idset_has(&d->sites, s->id))
        return;
    vt__kv_u64(b, "{\"t\":\"site\",\"id\":", s->id);
    vt__kv_u64(b, ",\"stack\":", s->stack);
    vt__kind_device(b, s->kind, s->device, 1);
    vt__flags(b, s->flags, 1);
    vt_buf_cstr(b, "}\n");
    vt__idset_add(&d->sites, s->id);
    vt__journal(d, NULL, s->id, 1);
}

/* A row's counters indexed by their version 2 column (VT_SITE_*; the key columns 0). */
static void vt__site_cols(const vt_site_row *s, uint64_t col[VT_SITE_NCOLS])
{
    const uint64_t c[VT_SITE_NCOLS] = {
        [VT_SITE_LIVE_BYTES] = s->live_bytes,       [VT_SITE_LIVE_COUNT] = s->live_count,
        [VT_SITE_INTERVAL_PEAK_BYTES] = s->interval_peak_bytes,
        [VT_SITE_ALLOC_TOTAL] = s->alloc_total,     [VT_SITE_ALLOC_BYTES_TOTAL] = s->alloc_bytes_total,
        [VT_SITE_FREE_TOTAL] = s->free_total,       [VT_SITE_GROWTH_STEPS] = s->growth_steps,
        [VT_SITE_GROWTH_BYTES] = s->growth_bytes };
    memcpy(col, c, sizeof c);
}

/* One row of "sites", version 3 (docs/snapshot-format.md "sites"): [site id, then
 * the counters in VT_SITE3_ORDER]. delta 0: all 9 columns, absolute (complete
 * records). delta 1: each counter minus its value in prev (the site's row in the
 * previous record; NULL = 0), signed, without the trailing zeros: a site that
 * allocated and freed a temporary since the previous record is [id,1,size,1]. */
static void vt__site_row(vt_buf *b, const vt_site_row *s, int delta, const vt_site_row *prev)
{
    /* one room check per row, not per field: rows are the bulk of a periodic record */
    if (!vt_buf_reserve(b, VT_SITE3_NCOLS * (VT_BUF_U64_MAX + 2) + 4))
        return;
    char *p = b->p + b->len, *p0 = p;
    *p++ = '[';
    p += vt_buf_u64_at(p, s->id);
    static const int order[8] = VT_SITE3_ORDER;
    uint64_t cur[VT_SITE_NCOLS], old[VT_SITE_NCOLS] = { 0 }, v[8];
    vt__site_cols(s, cur);
    if (delta && prev)
        vt__site_cols(prev, old);
    for (int i = 0; i < 8; i++)
        v[i] = cur[order[i]] - old[order[i]];
    int n = 8;                 /* a difference is the two's complement of the signed value */
    if (delta)
        while (n > 0 && v[n - 1] == 0)
            n--;
    for (int i = 0; i < n; i++) {
        *p++ = ',';
        if (delta && (int64_t)v[i] < 0) {
            *p++ = '-';
            p += vt_buf_u64_at(p, (uint64_t)0 - v[i]);
        } else {
            p += vt_buf_u64_at(p, v[i]);
        }
    }
    *p++ = ']';
    b->len += (size_t)(p - p0);
}

/* ---- the snapshot record ---- */

void vt_encode_snapshot(vt_buf *b, const vt_encode_snap *s)
{
    const vt_collect *c = s->c;
    const vt_oom_info *oom = s->oom;
    vt_encode_last *last = s->last;
    int delta = s->delta && last->valid;
    vt_buf_cstr(b, "{\"t\":\"snapshot\"");
    if (!delta || s->seq != last->seq + 1)
        vt__kv_u64(b, ",\"seq\":", s->seq);
    vt_buf_cstr(b, ",\"trigger\":\"");
    vt_buf_cstr(b, vt_trigger_name(s->trigger));
    vt_buf_put(b, "\"", 1);
    if (s->label) {
        vt_buf_cstr(b, ",\"label\":");
        vt_buf_jstr(b, s->label, 1024);
    }
    vt__kv_u64(b, ",\"time_ns\":", s->time_ns ? s->time_ns : vt_now_ns());
    vt__kv_u64(b, ",\"step\":", c->step);
    if (delta ? !c->step_marked != !last->step_marked : c->step_marked)
        vt_buf_cstr(b, c->step_marked ? ",\"step_marked\":true" : ",\"step_marked\":false");
    /* devices: all of them in a complete record; in a delta record only the changed
     * ones, the key left out when none changed */
    size_t dev_mark = b->len;
    vt_buf_cstr(b, ",\"devices\":[");
    int ndev = 0;
    for (int i = 0; i < c->n_devs; i++) {
        const vt_dev_stats *d = &c->devs[i];
        int slot = d->device + 1;
        int ok = slot >= 0 && slot < VT_DEV_SLOTS;
        /* a device new since the previous record (prev NULL): all its keys */
        const vt_dev_stats *prev = delta && ok && last->known[slot] ? &last->devs[slot] : NULL;
        ndev += vt__format_device(b, d, prev, ndev == 0);
    }
    if (delta && ndev == 0 && !b->oom)
        b->len = dev_mark;
    else
        vt_buf_put(b, "]", 1);
    if (s->delta)
        vt_buf_cstr(b, ",\"" VT_SITES_DELTA_KEY "\":true");
    vt_buf_cstr(b, ",\"sites\":[");
    size_t cursor = 0;
    int nrows = 0;
    for (size_t i = 0; i < c->n_sites; i++) {
        const vt_site_row *r = &c->sites[i], *prev = NULL;
        if (s->delta && !vt_sitediff_changed(s->prev, r, &cursor, &prev))
            continue;
        if (nrows++)
            vt_buf_put(b, ",", 1);
        vt__site_row(b, r, s->delta, prev);
    }
    vt_buf_put(b, "]", 1);
    /* leak warnings: in complete records; a delta record's are its sites with
     * growth_steps at or above the header's leak_steps (a reader restores them) */
    int nw = 0;
    for (size_t i = 0; !delta && i < c->n_sites; i++) {
        const vt_site_row *r = &c->sites[i];
        if (!r->leak_warn)
            continue;
        vt_buf_cstr(b, nw++ ? "," : ",\"leak_warnings\":[");
        vt__site_key(b, r);
        vt__kv_u64(b, ",\"growth_steps\":", r->growth_steps);
        vt__kv_u64(b, ",\"growth_bytes_per_step\":", r->growth_steps ? r->growth_bytes / r->growth_steps : 0);
        vt_buf_put(b, "}", 1);
    }
    if (nw)
        vt_buf_put(b, "]", 1);
    if (oom) {
        vt_buf_cstr(b, ",\"oom\":{\"api\":");
        vt_buf_jstr(b, oom->api, 0);
        vt__kind_device(b, oom->kind, oom->device, 1);
        /* the one integer the program chooses (cudaMalloc(&p, (size_t)-1)) */
        vt__kv_u64(b, ",\"requested_bytes\":", oom->requested > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX
                                                                                   : oom->requested);
        vt_buf_cstr(b, ",\"result\":");
        vt_buf_i64(b, oom->result);
        vt__kv_opt(b, ",\"free_bytes\":", oom->meminfo_ok, oom->free_bytes);
        vt__kv_opt(b, ",\"total_bytes\":", oom->meminfo_ok, oom->total_bytes);
        vt__kv_u64(b, ",\"tracked_bytes\":", vt_core_live_bytes(oom->device));
        vt__kv_u64(b, ",\"stack\":", oom->stack);
        vt_buf_put(b, "}", 1);
    }
    if (s->allocations && !c->rows_failed) {
        vt_buf_cstr(b, ",\"allocations\":[");
        for (size_t i = 0; i < c->n_allocs; i++) {
            const vt_alloc_row *a = &c->allocs[i];
            if (i)
                vt_buf_put(b, ",", 1);
            vt__kv_u64(b, "[", a->addr);
            vt__kv_u64(b, ",", a->size);
            vt__kind_device(b, a->kind, a->device, 0);
            vt__kv_u64(b, ",", a->stack);
            vt__kv_u64(b, ",", a->step);
            vt__kv_u64(b, ",", a->birth_ns);
            vt_buf_put(b, ",", 1);
            vt_buf_i64(b, a->tid);
            vt__kv_u64(b, ",", a->stream);
            vt__flags(b, a->flags, 0);
            vt_buf_put(b, "]", 1);
        }
        vt_buf_put(b, "]", 1);
    }
    if (s->trigger == VT_TRIG_EXIT)
        vt_buf_cstr(b, ",\"unfreed_at_exit\":true");
    if (s->trigger == VT_TRIG_EXIT && s->marks_not_written)
        vt__kv_u64(b, ",\"nvtx_marks_not_written\":", s->marks_not_written);
    if (delta ? c->dropped_records != last->dropped : c->dropped_records != 0)
        vt__kv_u64(b, ",\"dropped_records\":", c->dropped_records);

    /* what this record says, for the next one */
    if (!delta)
        memset(last->known, 0, sizeof last->known);
    for (int i = 0; i < c->n_devs; i++) {
        int slot = c->devs[i].device + 1;
        if (slot >= 0 && slot < VT_DEV_SLOTS) {
            last->devs[slot] = c->devs[i];
            last->known[slot] = 1;
        }
    }
    last->seq = s->seq;
    last->dropped = c->dropped_records;
    last->step_marked = c->step_marked;
    last->valid = 1;
}

/* ---- what was live at the peak ---- */

static void vt__peak_body(vt_buf *b, const vt_peak_comp *p)
{
    vt__kv_u64(b, "\"bytes\":", p->bytes);
    vt__kv_u64(b, ",\"step\":", p->step);
    vt__kv_u64(b, ",\"time_ns\":", p->time_ns);
    vt_buf_cstr(b, ",\"sites\":[");
    for (uint32_t i = 0; i < p->n; i++) {
        vt__kv_u64(b, i ? ",[" : "[", p->top[i].id);
        vt__kv_u64(b, ",", p->top[i].bytes);
        vt_buf_put(b, "]", 1);
    }
    vt__kv_u64(b, "],\"other_bytes\":", p->other_bytes);
    vt__kv_u64(b, ",\"other_sites\":", p->other_sites);
}

int vt_encode_peaks(vt_buf *b, const vt_collect *c, uint64_t written[VT_DEV_SLOTS + 1])
{
    int n = 0, ndev = 0;
    for (size_t i = 0; i < c->n_peaks; i++) {
        const vt_peak_comp *p = &c->peaks[i];
        int ix = vt_encode_peak_index(p->device);
        if (p->gen == written[ix])
            continue;
        vt_buf_cstr(b, n++ ? "" : ",\"peak_composition\":{");
        if (p->device == VT_PEAK_PROCESS) {   /* first in c->peaks */
            vt_buf_cstr(b, "\"process\":{");
        } else {
            vt_buf_cstr(b, ndev++ ? ",{\"device\":" : (n > 1 ? ",\"devices\":[{\"device\":" : "\"devices\":[{\"device\":"));
            vt_buf_i64(b, p->device);
            vt_buf_put(b, ",", 1);
        }
        vt__peak_body(b, p);
        vt_buf_put(b, "}", 1);
        written[ix] = p->gen;
    }
    if (ndev)
        vt_buf_put(b, "]", 1);
    if (n)
        vt_buf_put(b, "}", 1);
    return n;
}

/* ---- memory shared with other processes ---- */

/* 1 live, 0 ended, -1 not known (a snapshot written from inside the core). */
static int vt__import_live(uint64_t addr)
{
    int kind = vt_core_live_kind(addr);
    return kind == -2 ? -1 : kind == VT_KIND_IPC_IMPORT;
}

static void vt__hex64(vt_buf *b, uint64_t v)
{
    char s[19];
    static const char hex[] = "0123456789abcdef";
    s[0] = ',';
    s[1] = '"';
    for (int i = 0; i < 16; i++)
        s[2 + i] = hex[(v >> (60 - 4 * i)) & 15];
    s[18] = '"';
    vt_buf_put(b, s, sizeof s);
}

void vt_encode_ipc(vt_buf *b)
{
    vt_ipc_export_row *ex = malloc(VT_IPC_MAX * sizeof *ex);
    vt_ipc_import_row *im = malloc(VT_IPC_MAX * sizeof *im);
    if (ex) {
        size_t n = vt_ipc_exports_copy(ex, VT_IPC_MAX);
        if (n)
            vt_buf_cstr(b, ",\"exports\":[");
        for (size_t i = 0; i < n; i++) {
            vt__kv_u64(b, i ? ",[" : "[", ex[i].addr);
            vt__hex64(b, ex[i].digest);
            vt_buf_put(b, "]", 1);
        }
        if (n)
            vt_buf_put(b, "]", 1);
    }
    if (im) {
        size_t n = vt_ipc_imports_copy(im, VT_IPC_MAX, vt__import_live, vt_core_vmm_state);
        if (n)
            vt_buf_cstr(b, ",\"imports\":[");
        for (size_t i = 0; i < n; i++) {
            vt__kv_u64(b, i ? ",[" : "[", im[i].addr);
            vt__hex64(b, im[i].digest);
            vt__kv_u64(b, ",", im[i].size);
            vt__kv_u64(b, ",", im[i].opens);
            vt_buf_put(b, "]", 1);
        }
        if (n)
            vt_buf_put(b, "]", 1);
    }
    free(ex);
    free(im);
}

void vt_encode_ipc_since(vt_buf *b, const vt_buf *rows, vt_buf *last, int delta)
{
    int same = delta && !last->oom && last->len == rows->len && (!rows->len || !memcmp(last->p, rows->p, rows->len));
    if (!same) {
        if (rows->len)
            vt_buf_put(b, rows->p, rows->len);
        if (delta && !(rows->len && memmem(rows->p, rows->len, ",\"exports\":", 11)))
            vt_buf_cstr(b, ",\"exports\":[]");
        if (delta && !(rows->len && memmem(rows->p, rows->len, ",\"imports\":", 11)))
            vt_buf_cstr(b, ",\"imports\":[]");
    }
    vt_buf_reset(last);
    if (rows->len)
        vt_buf_put(last, rows->p, rows->len);
}

void vt_encode_end(vt_buf *b)
{
    vt_buf_cstr(b, "}\n");
}
