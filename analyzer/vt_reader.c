/* vt_reader.c — snapshot stream reader (contract in vt_reader.h).
 *
 * Design: read(2) into a growing buffer, split at '\n', parse each line with the
 * vt_json pull cursor. A record is decoded completely into small reusable
 * scratch vectors (its sites, devices, live list) before anything is applied to
 * the process, so key order inside a record does not matter and a record that
 * fails half-way changes nothing. Applying a series snapshot updates each site's
 * step state; when the step number changes the previous step is closed: every
 * site touched in it, and every site that was non-zero before, gets its value for
 * that step appended to its run-length series (absent from the step's last
 * snapshot = 0 live bytes, docs/snapshot-format.md "sites"). The exit record
 * (trigger "exit" / unfreed_at_exit true) is not a step: it gives unfreed bytes.
 */
#include "vt_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_format.h"
#include "vt_json.h"
#include "vt_util.h"

/* Frames whose module basename starts with one of these are CUDA's or ours. */
static const char *const trim_modules[] = {"libvramtrace", "libcudart", "libcuda.", "libcuda-"};

typedef struct site_ent {
    vt_site_key key;
    uint64_t live, ipeak, free_total;
    struct vt_stack *canon;     /* resolved stack */
    struct vt_rsite *site;      /* filled when applied */
} site_ent;

typedef struct dev_ent {
    int64_t device;
    int has_free, has_total, has_frag, has_pool_r, has_pool_u;
    uint64_t free_b, total_b, live, peak, pool_r, pool_u;
    double frag;
} dev_ent;

typedef struct alloc_ent {
    uint64_t addr, size;
    int64_t stack;
    int32_t kind, device;
} alloc_ent;

typedef struct rd {
    vt_runset *rs;
    const char *path;
    uint64_t line;
    vt_process *p;
    site_ent *se; size_t nse, capse;
    dev_ent *de; size_t nde, capde;
    alloc_ent *ae; size_t nae, capae;
    uint64_t record_mark;
    char s[4096];               /* string scratch */
} rd;

static int rd_fail(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rd_fail(rd *r, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->rs->err, sizeof r->rs->err, "%s:%llu: %s", r->path, (unsigned long long)r->line, msg);
    return -1;
}

/* "<record>.<field>: <json error>" */
static int jfail(rd *r, vt_json *j, const char *field)
{
    if (!j->err[0]) vt_json_fail(j, "invalid value");
    return rd_fail(r, "%s: %s", field, j->err);
}

/* Bounded copy: at most cap-1 bytes and a NUL. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t u64max(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* "<array>[<i>].<key>: <json error>", formatted only on failure. */
static int field_fail(rd *r, vt_json *j, const char *arr, size_t i, const char *k, size_t kn)
{
    char f[128];
    snprintf(f, sizeof f, "%s[%zu]%s%.*s", arr, i, kn ? "." : "", (int)(kn > 40 ? 40 : kn), k);
    return jfail(r, j, f);
}

static int kind_of(rd *r, vt_json *j, int32_t *out)
{
    char b[32];
    if (vt_json_str(j, b, sizeof b, NULL) < 0) return -1;
    int k = vt_kind_from_name(b);
    if (k < 0) return vt_json_fail(j, "unknown kind \"%s\"", b);
    (void)r;
    *out = k;
    return 0;
}

static int int32_of(vt_json *j, int32_t *out)
{
    int64_t v;
    if (vt_json_i64(j, &v) < 0) return -1;
    if (v < INT32_MIN || v > INT32_MAX) return vt_json_fail(j, "%lld out of range", (long long)v);
    *out = (int32_t)v;
    return 0;
}

/* ---- small typed readers with field names for messages ---- */

static int get_u64(rd *r, vt_json *j, const char *f, uint64_t *v)
{
    return vt_json_u64(j, v) < 0 ? jfail(r, j, f) : 0;
}

static int get_i64(rd *r, vt_json *j, const char *f, int64_t *v)
{
    return vt_json_i64(j, v) < 0 ? jfail(r, j, f) : 0;
}

/* u64 or null: *has = 0 for null. */
static int get_u64n(rd *r, vt_json *j, const char *f, uint64_t *v, int *has)
{
    int n = vt_json_null(j);
    if (n < 0) return jfail(r, j, f);
    if (n) { *has = 0; return 0; }
    *has = 1;
    return get_u64(r, j, f, v);
}

static int get_str(rd *r, vt_json *j, const char *f, size_t cap)
{
    if (cap > sizeof r->s) cap = sizeof r->s;
    return vt_json_str(j, r->s, cap, NULL) < 0 ? jfail(r, j, f) : 0;
}

static int get_int32(rd *r, vt_json *j, const char *f, int32_t *out)
{
    int64_t v;
    if (get_i64(r, j, f, &v) < 0) return -1;
    if (v < INT32_MIN || v > INT32_MAX) return rd_fail(r, "%s: %lld out of range", f, (long long)v);
    *out = (int32_t)v;
    return 0;
}

static int get_kind(rd *r, vt_json *j, const char *f, int32_t *out)
{
    if (get_str(r, j, f, 32) < 0) return -1;
    int k = vt_kind_from_name(r->s);
    if (k < 0) return rd_fail(r, "%s: unknown kind \"%s\"", f, r->s);
    *out = k;
    return 0;
}

/* Finds the record type: 0 with r->s = type, -1 on error. Leaves j untouched. */
static int record_type(rd *r, const vt_json *j0)
{
    vt_json j = *j0;
    const char *k;
    size_t kn;
    int rc;
    if (vt_json_peek(&j) != VT_JSON_OBJECT) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (the first line is not a JSON object)");
        return rd_fail(r, "record is not a JSON object (%s)", j.err[0] ? j.err : vt_json_class_name(vt_json_peek(&j)));
    }
    if (vt_json_obj_begin(&j) < 0) return jfail(r, &j, "record");
    while ((rc = vt_json_obj_next(&j, &k, &kn)) == 1) {
        if (VT_JSON_KEY(k, kn, "t")) return get_str(r, &j, "t", 64);
        if (vt_json_skip(&j) < 0) break;
    }
    if (rc == 0) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (the first record has no \"t\")");
        return rd_fail(r, "record has no \"t\" (record type)");
    }
    if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (line 1 is not valid JSON: %s)", j.err);
    return jfail(r, &j, "record");
}

/* ---- header ---- */

static int rd_header(rd *r, vt_json *j)
{
    vt_process *p = vt_xcalloc(1, sizeof *p);
    p->file = vt_xstrdup(r->path);
    r->p = p;   /* owned by r until pushed */
    const char *k;
    size_t kn;
    int rc, have_format = 0, have_version = 0, have_pid = 0, have_start = 0;
    uint64_t version = 0;
    char format[128] = "";
    if (vt_json_obj_begin(j) < 0) return jfail(r, j, "header");
    while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
        if (VT_JSON_KEY(k, kn, "format")) {
            if (vt_json_peek(j) != VT_JSON_STRING)
                return rd_fail(r, "not a vramtrace snapshot file (\"format\" is a %s)", vt_json_class_name(vt_json_peek(j)));
            if (get_str(r, j, "format", sizeof format) < 0) return -1;
            copy_str(format, sizeof format, r->s);
            have_format = 1;
        } else if (VT_JSON_KEY(k, kn, "version")) {
            if (vt_json_peek(j) == VT_JSON_NUMBER && vt_json_u64(j, &version) == 0) { have_version = 1; continue; }
            return jfail(r, j, "header.version");
        } else if (VT_JSON_KEY(k, kn, "pid")) {
            if (get_u64(r, j, "header.pid", &p->pid) < 0) return -1;
            have_pid = 1;
        } else if (VT_JSON_KEY(k, kn, "ppid")) {
            int has;
            if (get_u64n(r, j, "header.ppid", &p->ppid, &has) < 0) return -1;
        } else if (VT_JSON_KEY(k, kn, "host")) {
            if (get_str(r, j, "header.host", 256) < 0) return -1;
            free(p->host);
            p->host = vt_xstrdup(r->s);
        } else if (VT_JSON_KEY(k, kn, "exe")) {
            if (vt_json_null(j) == 1) continue;
            if (get_str(r, j, "header.exe", 4096) < 0) return -1;
            free(p->exe);
            p->exe = vt_xstrdup(r->s);
        } else if (VT_JSON_KEY(k, kn, "cmdline")) {
            if (vt_json_null(j) == 1) continue;
            char joined[4096];
            size_t n = 0;
            joined[0] = 0;
            if (vt_json_arr_begin(j) < 0) return jfail(r, j, "header.cmdline");
            while ((rc = vt_json_arr_next(j)) == 1) {
                if (get_str(r, j, "header.cmdline[]", 4096) < 0) return -1;
                int w = snprintf(joined + n, sizeof joined - n, "%s%s", n ? " " : "", r->s);
                if (w > 0) n = n + (size_t)w >= sizeof joined ? sizeof joined - 1 : n + (size_t)w;
            }
            if (rc < 0) return jfail(r, j, "header.cmdline");
            free(p->cmdline);
            p->cmdline = vt_xstrdup(joined);
        } else if (VT_JSON_KEY(k, kn, "rank") || VT_JSON_KEY(k, kn, "local_rank") || VT_JSON_KEY(k, kn, "world_size")) {
            int64_t v;
            int n = vt_json_null(j);
            if (n < 0) return jfail(r, j, "header.rank");
            if (n) continue;
            if (get_i64(r, j, VT_JSON_KEY(k, kn, "rank") ? "header.rank" : "header.local_rank", &v) < 0) return -1;
            if (VT_JSON_KEY(k, kn, "rank")) { p->rank = v; p->has_rank = 1; }
            else if (VT_JSON_KEY(k, kn, "local_rank")) p->local_rank = v;
            else p->world_size = v;
        } else if (VT_JSON_KEY(k, kn, "start_ns")) {
            if (get_u64(r, j, "header.start_ns", &p->start_ns) < 0) return -1;
            have_start = 1;
        } else if (VT_JSON_KEY(k, kn, "depth")) {
            if (get_u64(r, j, "header.depth", &p->depth) < 0) return -1;
        } else if (VT_JSON_KEY(k, kn, "interval_ms")) {
            if (get_u64(r, j, "header.interval_ms", &p->interval_ms) < 0) return -1;
        } else if (vt_json_skip(j) < 0) {
            return jfail(r, j, "header");
        }
    }
    if (rc < 0) return jfail(r, j, "header");
    if (vt_json_end(j) < 0) return jfail(r, j, "header");
    if (!have_format) return rd_fail(r, "not a vramtrace snapshot file (header has no \"format\")");
    if (strcmp(format, VT_FORMAT_NAME) != 0)
        return rd_fail(r, "foreign format \"%s\" (expected \"%s\")", format, VT_FORMAT_NAME);
    if (!have_version) return rd_fail(r, "header has no \"version\"");
    if (version != VT_FORMAT_VERSION)
        return rd_fail(r, "unsupported snapshot format version %llu (this vramtrace reads version %d)",
                       (unsigned long long)version, VT_FORMAT_VERSION);
    if (!have_pid) return rd_fail(r, "header has no \"pid\"");
    if (!have_start) return rd_fail(r, "header has no \"start_ns\"");
    if (!p->host) p->host = vt_xstrdup("");
    return 0;
}

/* ---- module ---- */

static int rd_module(rd *r, vt_json *j)
{
    const char *k;
    size_t kn;
    int rc, have_id = 0;
    int64_t id = 0;
    uint64_t bias = 0;
    char *path = NULL, *bid = NULL;
    if (vt_json_obj_begin(j) < 0) return jfail(r, j, "module");
    while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
        if (VT_JSON_KEY(k, kn, "id")) {
            if (get_i64(r, j, "module.id", &id) < 0) goto fail;
            have_id = 1;
        } else if (VT_JSON_KEY(k, kn, "path")) {
            if (get_str(r, j, "module.path", 4096) < 0) goto fail;
            free(path);
            path = vt_xstrdup(r->s);
        } else if (VT_JSON_KEY(k, kn, "build_id")) {
            if (vt_json_null(j) == 1) continue;
            if (get_str(r, j, "module.build_id", 256) < 0) goto fail;
            free(bid);
            bid = vt_xstrdup(r->s);
        } else if (VT_JSON_KEY(k, kn, "bias")) {
            if (get_u64(r, j, "module.bias", &bias) < 0) goto fail;
        } else if (vt_json_skip(j) < 0) {
            jfail(r, j, "module");
            goto fail;
        }
    }
    if (rc < 0 || vt_json_end(j) < 0) { jfail(r, j, "module"); goto fail; }
    if (!have_id) { rd_fail(r, "module has no \"id\""); goto fail; }
    if (!path) { rd_fail(r, "module %lld has no \"path\"", (long long)id); goto fail; }
    vt_module *m;
    HASH_FIND(hh, r->p->module_by_id, &id, sizeof id, m);
    if (m) { rd_fail(r, "module %lld is defined twice", (long long)id); goto fail; }
    m = vt_xcalloc(1, sizeof *m);
    m->id = id;
    m->path = path;
    m->build_id = bid ? bid : vt_xstrdup("");
    m->bias = bias;
    HASH_ADD(hh, r->p->module_by_id, id, sizeof m->id, m);
    VT_PUSH(r->p->modules, r->p->nmodules, r->p->capmodules, m);
    return 0;
fail:
    free(path);
    free(bid);
    return -1;
}

/* ---- stack ---- */

static int trimmed_module(const vt_module *m)
{
    if (!m) return 0;
    const char *b = vt_basename(m->path);
    for (size_t i = 0; i < sizeof trim_modules / sizeof trim_modules[0]; i++)
        if (strncmp(b, trim_modules[i], strlen(trim_modules[i])) == 0) return 1;
    return 0;
}

/* CUDA runtime/driver API names, for a statically linked runtime (frames in the
 * program's own module): cudaXxx, cuXxx, __cudart*. */
static int cuda_function(const char *fn)
{
    if (!fn) return 0;
    if (strncmp(fn, "__cudart", 8) == 0) return 1;
    if (strncmp(fn, "cuda", 4) == 0 && fn[4] >= 'A' && fn[4] <= 'Z') return 1;
    if (strncmp(fn, "cu", 2) == 0 && fn[2] >= 'A' && fn[2] <= 'Z') return 1;
    return 0;
}

#define VT_MAX_FRAMES 1024

static int rd_stack(rd *r, vt_json *j)
{
    const char *k;
    size_t kn;
    int rc, have_id = 0, have_frames = 0;
    int64_t id = 0;
    vt_frame *fr = NULL;
    size_t nfr = 0, capfr = 0;
    if (vt_json_obj_begin(j) < 0) return jfail(r, j, "stack");
    while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
        if (VT_JSON_KEY(k, kn, "id")) {
            if (get_i64(r, j, "stack.id", &id) < 0) goto fail;
            have_id = 1;
        } else if (VT_JSON_KEY(k, kn, "frames")) {
            have_frames = 1;
            if (vt_json_arr_begin(j) < 0) { jfail(r, j, "stack.frames"); goto fail; }
            while ((rc = vt_json_arr_next(j)) == 1) {
                vt_frame f = {0};
                int64_t mid;
                if (nfr >= VT_MAX_FRAMES) { rd_fail(r, "stack: more than %d frames", VT_MAX_FRAMES); goto fail; }
                if (vt_json_arr_begin(j) < 0) { jfail(r, j, "stack.frames[]"); goto fail; }
                if (vt_json_arr_next(j) != 1 || get_i64(r, j, "stack.frames[][0] (module id)", &mid) < 0) {
                    if (!r->rs->err[0]) jfail(r, j, "stack.frames[]");
                    goto fail;
                }
                if (vt_json_arr_next(j) != 1 || get_u64(r, j, "stack.frames[][1] (offset)", &f.offset) < 0) {
                    if (!r->rs->err[0]) jfail(r, j, "stack.frames[] (needs [module, offset, function])");
                    goto fail;
                }
                if ((rc = vt_json_arr_next(j)) == 1) {
                    int n = vt_json_null(j);
                    if (n < 0) { jfail(r, j, "stack.frames[][2]"); goto fail; }
                    if (!n) {
                        if (get_str(r, j, "stack.frames[][2] (function)", 4096) < 0) goto fail;
                        f.function = vt_xstrdup(r->s);
                    }
                    while ((rc = vt_json_arr_next(j)) == 1)
                        if (vt_json_skip(j) < 0) break;
                }
                if (rc < 0) { free(f.function); jfail(r, j, "stack.frames[]"); goto fail; }
                if (mid != -1) {
                    HASH_FIND(hh, r->p->module_by_id, &mid, sizeof mid, f.mod);
                    if (!f.mod) {
                        free(f.function);
                        rd_fail(r, "stack: frame uses module %lld, which is not defined before it", (long long)mid);
                        goto fail;
                    }
                }
                VT_PUSH(fr, nfr, capfr, f);
            }
            if (rc < 0) { jfail(r, j, "stack.frames"); goto fail; }
        } else if (vt_json_skip(j) < 0) {
            jfail(r, j, "stack");
            goto fail;
        }
    }
    if (rc < 0 || vt_json_end(j) < 0) { jfail(r, j, "stack"); goto fail; }
    if (!have_id) { rd_fail(r, "stack has no \"id\""); goto fail; }
    if (!have_frames) { rd_fail(r, "stack %lld has no \"frames\"", (long long)id); goto fail; }
    vt_rawstack *raw;
    HASH_FIND(hh, r->p->rawstacks, &id, sizeof id, raw);
    if (raw) { rd_fail(r, "stack %lld is defined twice", (long long)id); goto fail; }

    /* Trim: frames in our/CUDA's libraries anywhere, then a leading run of CUDA
     * API functions (static runtime inside the program). Keep all if nothing is left. */
    size_t keep = 0;
    vt_frame *tf = vt_xcalloc(nfr ? nfr : 1, sizeof *tf);
    int leading = 1;
    for (size_t i = 0; i < nfr; i++) {
        if (trimmed_module(fr[i].mod)) continue;
        if (leading && cuda_function(fr[i].function)) continue;
        leading = 0;
        tf[keep++] = fr[i];
    }
    if (keep == 0) {
        memcpy(tf, fr, nfr * sizeof *fr);
        keep = nfr;
    }
    /* intern by (module pointer, offset) */
    size_t keylen = keep * (sizeof(void *) + sizeof(uint64_t));
    char *key = vt_xmalloc(keylen ? keylen : 1);
    for (size_t i = 0; i < keep; i++) {
        memcpy(key + i * 16, &tf[i].mod, sizeof(void *));
        memcpy(key + i * 16 + sizeof(void *), &tf[i].offset, sizeof(uint64_t));
    }
    vt_stack *st;
    HASH_FIND(hh, r->p->stack_by_key, key, keylen, st);
    if (st) {
        free(key);
        for (size_t i = 0; i < nfr; i++) free(fr[i].function);
        free(tf);
    } else {
        st = vt_xcalloc(1, sizeof *st);
        st->index = (uint32_t)r->p->nstacks;
        st->nframes = (uint32_t)keep;
        st->frames = tf;
        for (size_t i = 0; i < keep; i++) tf[i].function = tf[i].function ? vt_xstrdup(tf[i].function) : NULL;
        for (size_t i = 0; i < nfr; i++) free(fr[i].function);
        st->key = key;
        st->keylen = keylen;
        HASH_ADD_KEYPTR(hh, r->p->stack_by_key, st->key, st->keylen, st);
        VT_PUSH(r->p->stacks, r->p->nstacks, r->p->capstacks, st);
    }
    free(fr);
    raw = vt_xcalloc(1, sizeof *raw);
    raw->id = id;
    raw->canon = st;
    HASH_ADD(hh, r->p->rawstacks, id, sizeof raw->id, raw);
    return 0;
fail:
    for (size_t i = 0; i < nfr; i++) free(fr[i].function);
    free(fr);
    return -1;
}

/* ---- snapshot ---- */

static vt_rsite *get_site(vt_process *p, const vt_site_key *key, vt_stack *canon)
{
    vt_rsite *s;
    HASH_FIND(hh, p->sites, key, sizeof *key, s);
    if (s) return s;
    s = vt_xcalloc(1, sizeof *s);
    s->key = *key;
    s->canon = canon;
    HASH_ADD(hh, p->sites, key, sizeof s->key, s);
    p->nsites++;
    return s;
}

static int lookup_stack(rd *r, int64_t id, const char *where, vt_stack **out)
{
    vt_rawstack *raw;
    HASH_FIND(hh, r->p->rawstacks, &id, sizeof id, raw);
    if (!raw) return rd_fail(r, "%s: stack %lld is not defined before it is used", where, (long long)id);
    *out = raw->canon;
    return 0;
}

static int rd_sites(rd *r, vt_json *j)
{
    int rc;
    const char *k;
    size_t kn;
    char where[64];
    if (vt_json_arr_begin(j) < 0) return jfail(r, j, "snapshot.sites");
    while ((rc = vt_json_arr_next(j)) == 1) {
        site_ent e;
        memset(&e, 0, sizeof e);
        int have_stack = 0, have_kind = 0, have_live = 0;
        if (vt_json_obj_begin(j) < 0) return field_fail(r, j, "sites", r->nse, "", 0);
        while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
            uint64_t v;
            int bad;
            if (VT_JSON_KEY(k, kn, "stack")) { bad = vt_json_i64(j, &e.key.stack); have_stack = 1; }
            else if (VT_JSON_KEY(k, kn, "kind")) { bad = kind_of(r, j, &e.key.kind); have_kind = 1; }
            else if (VT_JSON_KEY(k, kn, "device")) bad = int32_of(j, &e.key.device);
            else if (VT_JSON_KEY(k, kn, "live_bytes")) { bad = vt_json_u64(j, &e.live); have_live = 1; }
            else if (VT_JSON_KEY(k, kn, "interval_peak_bytes")) bad = vt_json_u64(j, &e.ipeak);
            else if (VT_JSON_KEY(k, kn, "free_total")) bad = vt_json_u64(j, &e.free_total);
            else if (VT_JSON_KEY(k, kn, "live_count") || VT_JSON_KEY(k, kn, "alloc_total") ||
                     VT_JSON_KEY(k, kn, "alloc_bytes_total") || VT_JSON_KEY(k, kn, "growth_steps") ||
                     VT_JSON_KEY(k, kn, "growth_bytes")) bad = vt_json_u64(j, &v);
            else bad = vt_json_skip(j);
            if (bad < 0) return field_fail(r, j, "sites", r->nse, k, kn);
        }
        if (rc < 0) return field_fail(r, j, "sites", r->nse, "", 0);
        if (!have_stack || !have_kind || !have_live)
            return rd_fail(r, "sites[%zu]: needs \"stack\", \"kind\" and \"live_bytes\"", r->nse);
        vt_rawstack *raw;
        HASH_FIND(hh, r->p->rawstacks, &e.key.stack, sizeof e.key.stack, raw);
        if (!raw) {
            snprintf(where, sizeof where, "sites[%zu]", r->nse);
            return lookup_stack(r, e.key.stack, where, &e.canon);
        }
        e.canon = raw->canon;
        VT_PUSH(r->se, r->nse, r->capse, e);
    }
    if (rc < 0) return jfail(r, j, "snapshot.sites");
    return 0;
}

static int rd_devices(rd *r, vt_json *j)
{
    int rc;
    const char *k;
    size_t kn;
    char where[64];
    if (vt_json_null(j) == 1) return 0;
    if (vt_json_arr_begin(j) < 0) return jfail(r, j, "snapshot.devices");
    while ((rc = vt_json_arr_next(j)) == 1) {
        dev_ent d;
        memset(&d, 0, sizeof d);
        snprintf(where, sizeof where, "devices[%zu]", r->nde);
        if (vt_json_obj_begin(j) < 0) return jfail(r, j, where);
        while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
            char f[96];
            snprintf(f, sizeof f, "%s.%.*s", where, (int)(kn > 40 ? 40 : kn), k);
            if (VT_JSON_KEY(k, kn, "device")) { if (get_i64(r, j, f, &d.device) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "free_bytes")) { if (get_u64n(r, j, f, &d.free_b, &d.has_free) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "total_bytes")) { if (get_u64n(r, j, f, &d.total_b, &d.has_total) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "live_bytes")) { if (get_u64(r, j, f, &d.live) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "peak_bytes")) { if (get_u64(r, j, f, &d.peak) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "pool_reserved_bytes")) { if (get_u64n(r, j, f, &d.pool_r, &d.has_pool_r) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "pool_used_bytes")) { if (get_u64n(r, j, f, &d.pool_u, &d.has_pool_u) < 0) return -1; }
            else if (VT_JSON_KEY(k, kn, "fragmentation")) {
                int n = vt_json_null(j);
                if (n < 0) return jfail(r, j, f);
                if (n) continue;
                if (vt_json_f64(j, &d.frag) < 0) return jfail(r, j, f);
                if (!(d.frag >= 0 && d.frag <= 1)) return rd_fail(r, "%s: %g is outside 0..1", f, d.frag);
                d.has_frag = 1;
            } else if (vt_json_skip(j) < 0) return jfail(r, j, where);
        }
        if (rc < 0) return jfail(r, j, where);
        if (d.device < INT32_MIN || d.device > INT32_MAX) return rd_fail(r, "%s.device: out of range", where);
        VT_PUSH(r->de, r->nde, r->capde, d);
    }
    if (rc < 0) return jfail(r, j, "snapshot.devices");
    return 0;
}

static int rd_allocations(rd *r, vt_json *j, int *present)
{
    int rc;
    char where[64];
    if (vt_json_null(j) == 1) return 0;
    *present = 1;
    if (vt_json_arr_begin(j) < 0) return jfail(r, j, "snapshot.allocations");
    while ((rc = vt_json_arr_next(j)) == 1) {
        alloc_ent a;
        memset(&a, 0, sizeof a);
        snprintf(where, sizeof where, "allocations[%zu]", r->nae);
        if (vt_json_arr_begin(j) < 0) return jfail(r, j, where);
        int col = 0;
        while ((rc = vt_json_arr_next(j)) == 1) {
            char f[96];
            snprintf(f, sizeof f, "%s[%d]", where, col);
            switch (col) {
            case VT_ALLOC_ADDR: if (get_u64(r, j, f, &a.addr) < 0) return -1; break;
            case VT_ALLOC_SIZE: if (get_u64(r, j, f, &a.size) < 0) return -1; break;
            case VT_ALLOC_KIND: if (get_kind(r, j, f, &a.kind) < 0) return -1; break;
            case VT_ALLOC_DEVICE: if (get_int32(r, j, f, &a.device) < 0) return -1; break;
            case VT_ALLOC_STACK: {
                int n = vt_json_null(j);
                if (n < 0) return jfail(r, j, f);
                if (n) a.stack = INT64_MIN;
                else if (get_i64(r, j, f, &a.stack) < 0) return -1;
                break;
            }
            default: {
                uint64_t v;
                if (col < VT_ALLOC_NCOLS) { if (get_u64(r, j, f, &v) < 0) return -1; }
                else if (vt_json_skip(j) < 0) return jfail(r, j, f);
            }
            }
            col++;
        }
        if (rc < 0) return jfail(r, j, where);
        if (col < VT_ALLOC_STACK + 1) return rd_fail(r, "%s: a row needs at least %d columns", where, VT_ALLOC_STACK + 1);
        if (a.stack != INT64_MIN) {
            vt_stack *st;
            if (lookup_stack(r, a.stack, where, &st) < 0) return -1;
        }
        VT_PUSH(r->ae, r->nae, r->capae, a);
    }
    if (rc < 0) return jfail(r, j, "snapshot.allocations");
    return 0;
}

typedef struct oom_ent {
    int present;
    char api[64];
    int32_t kind, device;
    uint64_t requested, free_b, total_b, tracked;
    int has_free, has_total, has_tracked;
    int64_t result, stack;
} oom_ent;

static int rd_oom(rd *r, vt_json *j, oom_ent *o)
{
    int rc;
    const char *k;
    size_t kn;
    int n = vt_json_null(j);
    if (n < 0) return jfail(r, j, "snapshot.oom");
    if (n) return 0;
    o->present = 1;
    o->stack = -1;
    int have_req = 0;
    if (vt_json_obj_begin(j) < 0) return jfail(r, j, "snapshot.oom");
    while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
        char f[96];
        snprintf(f, sizeof f, "oom.%.*s", (int)(kn > 40 ? 40 : kn), k);
        if (VT_JSON_KEY(k, kn, "api")) { if (get_str(r, j, f, sizeof o->api) < 0) return -1; copy_str(o->api, sizeof o->api, r->s); }
        else if (VT_JSON_KEY(k, kn, "kind")) { if (get_kind(r, j, f, &o->kind) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "device")) { if (get_int32(r, j, f, &o->device) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "requested_bytes")) { if (get_u64(r, j, f, &o->requested) < 0) return -1; have_req = 1; }
        else if (VT_JSON_KEY(k, kn, "result")) { if (get_i64(r, j, f, &o->result) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "free_bytes")) { if (get_u64n(r, j, f, &o->free_b, &o->has_free) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "total_bytes")) { if (get_u64n(r, j, f, &o->total_b, &o->has_total) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "tracked_bytes")) { if (get_u64n(r, j, f, &o->tracked, &o->has_tracked) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "stack")) {
            int z = vt_json_null(j);
            if (z < 0) return jfail(r, j, f);
            if (!z && get_i64(r, j, f, &o->stack) < 0) return -1;
        } else if (vt_json_skip(j) < 0) return jfail(r, j, "oom");
    }
    if (rc < 0) return jfail(r, j, "oom");
    if (!have_req) return rd_fail(r, "oom: has no \"requested_bytes\"");
    if (o->stack != -1) {
        vt_stack *st;
        if (lookup_stack(r, o->stack, "oom", &st) < 0) return -1;
    }
    return 0;
}

static int cmp_alloc_addr(const void *a, const void *b)
{
    const alloc_ent *x = a, *y = b;
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

/* OOM forensics from the record's live list (or, without one, its site totals). */
static void build_oom(rd *r, const oom_ent *o, int have_allocs, uint64_t step, uint64_t seq, uint64_t time_ns)
{
    vt_process *p = r->p;
    vt_grow((void **)&p->ooms, &p->capooms, p->nooms + 1, sizeof *p->ooms);
    vt_oom *m = &p->ooms[p->nooms++];
    memset(m, 0, sizeof *m);
    m->seq = seq;
    m->step = step;
    m->time_ns = time_ns;
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
        vt_stack *st = NULL;
        lookup_stack(r, o->stack, "oom", &st);
        vt_site_key key;
        memset(&key, 0, sizeof key);
        key.stack = o->stack;
        key.kind = o->kind;
        key.device = o->device;
        m->site = get_site(p, &key, st);
    }
    /* per-site aggregation through the site's scratch fields */
    uint64_t mark = ++r->record_mark;
    vt_oom_site *acc = NULL;
    size_t nacc = 0, capacc = 0;
    uint64_t tracked_dev = 0;
    if (have_allocs) {
        for (size_t i = 0; i < r->nae; i++) {
            alloc_ent *a = &r->ae[i];
            if (a->stack == INT64_MIN) continue;
            if (a->device == o->device) tracked_dev = sat_add(tracked_dev, a->size);
            vt_site_key key;
            memset(&key, 0, sizeof key);
            key.stack = a->stack;
            key.kind = a->kind;
            key.device = a->device;
            vt_stack *st = NULL;
            lookup_stack(r, a->stack, "allocations", &st);
            vt_rsite *s = get_site(p, &key, st);
            if (s->scratch_mark != mark) {
                s->scratch_mark = mark;
                s->scratch = nacc;
                vt_oom_site z = {.site = s};
                VT_PUSH(acc, nacc, capacc, z);
            }
            acc[s->scratch].bytes = sat_add(acc[s->scratch].bytes, a->size);
            acc[s->scratch].blocks++;
        }
        /* gaps between this process's live blocks in device memory */
        size_t nd = 0;
        for (size_t i = 0; i < r->nae; i++) {
            alloc_ent *a = &r->ae[i];
            if (a->device == o->device && a->stack != INT64_MIN &&
                (a->kind == VT_KIND_DEVICE || a->kind == VT_KIND_ASYNC || a->kind == VT_KIND_VMM) && a->addr)
                r->ae[nd++] = *a;
        }
        qsort(r->ae, nd, sizeof *r->ae, cmp_alloc_addr);
        for (size_t i = 0; i + 1 < nd; i++) {
            uint64_t end = r->ae[i].addr + r->ae[i].size;
            uint64_t gap = r->ae[i + 1].addr > end ? r->ae[i + 1].addr - end : 0;
            if (gap) {
                m->gap_count++;
                m->gap_total = sat_add(m->gap_total, gap);
                if (gap > m->gap_largest) m->gap_largest = gap;
            }
        }
        for (size_t i = 1; i + 1 < nd; i++) {
            uint64_t pend = r->ae[i - 1].addr + r->ae[i - 1].size, end = r->ae[i].addr + r->ae[i].size;
            uint64_t before = r->ae[i].addr > pend ? r->ae[i].addr - pend : 0;
            uint64_t after = r->ae[i + 1].addr > end ? r->ae[i + 1].addr - end : 0;
            if (!before || !after) continue;
            vt_site_key key;
            memset(&key, 0, sizeof key);
            key.stack = r->ae[i].stack;
            key.kind = r->ae[i].kind;
            key.device = r->ae[i].device;
            vt_rsite *s;
            HASH_FIND(hh, p->sites, &key, sizeof key, s);
            if (!s || s->scratch_mark != mark) continue;
            vt_oom_site *t = &acc[s->scratch];
            t->split_blocks++;
            uint64_t merged = sat_add(sat_add(before, r->ae[i].size), after);
            if (merged > t->gap_if_freed) t->gap_if_freed = merged;
        }
    } else {
        for (size_t i = 0; i < r->nse; i++) {
            site_ent *e = &r->se[i];
            if (e->key.device == o->device) tracked_dev = sat_add(tracked_dev, e->live);
            if (!e->live) continue;
            vt_stack *st = NULL;
            lookup_stack(r, e->key.stack, "sites", &st);
            vt_rsite *s = get_site(p, &e->key, st);
            if (s->scratch_mark != mark) {
                s->scratch_mark = mark;
                s->scratch = nacc;
                vt_oom_site z = {.site = s};
                VT_PUSH(acc, nacc, capacc, z);
            }
            acc[s->scratch].bytes = sat_add(acc[s->scratch].bytes, e->live);
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

static void append_point(vt_rsite *s, uint32_t step, uint64_t live, uint64_t peak, uint32_t nfree)
{
    if (s->npts) {
        vt_point *l = &s->pts[s->npts - 1];
        if (l->live == live && l->peak == peak && l->nfree == nfree) return;
        if (l->step == step) { l->live = live; l->peak = peak; l->nfree = nfree; return; }
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

/* Closes the current (last) step: appends each concerned site's value. */
static void close_step(vt_process *p)
{
    if (!p->nsteps) return;
    uint32_t si = (uint32_t)(p->nsteps - 1), mark = si + 1;
    vt_rsite **nact = NULL;
    size_t nnact = 0, capnact = 0;
    for (size_t i = 0; i < p->ntouched; i++) {
        vt_rsite *s = p->touched[i];
        uint64_t live = s->step_seen_snap == p->last_series_snap ? s->step_live : 0;
        append_point(s, si, live, s->step_peak, s->step_nfree);
        s->closed_mark = mark;
        s->last_live = live;
        if (live || s->step_peak || s->step_nfree) VT_PUSH(nact, nnact, capnact, s);
    }
    for (size_t i = 0; i < p->nactive; i++) {
        vt_rsite *s = p->active[i];
        if (s->closed_mark == mark) continue;
        append_point(s, si, 0, 0, 0);
        s->closed_mark = mark;
        s->last_live = 0;
    }
    free(p->active);
    p->active = nact;
    p->nactive = nnact;
    p->capactive = capnact;
    p->ntouched = 0;
}

static int rd_snapshot(rd *r, vt_json *j)
{
    vt_process *p = r->p;
    const char *k;
    size_t kn;
    int rc, have_step = 0, have_sites = 0, step_marked = 0, unfreed = 0, have_allocs = 0;
    uint64_t step = 0, seq = 0, time_ns = 0, dropped = 0;
    char trigger[32] = "";
    oom_ent o;
    memset(&o, 0, sizeof o);
    r->nse = r->nde = r->nae = 0;
    if (vt_json_obj_begin(j) < 0) return jfail(r, j, "snapshot");
    while ((rc = vt_json_obj_next(j, &k, &kn)) == 1) {
        if (VT_JSON_KEY(k, kn, "step")) { if (get_u64(r, j, "snapshot.step", &step) < 0) return -1; have_step = 1; }
        else if (VT_JSON_KEY(k, kn, "seq")) { if (get_u64(r, j, "snapshot.seq", &seq) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "time_ns")) { if (get_u64(r, j, "snapshot.time_ns", &time_ns) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "dropped_records")) { if (get_u64(r, j, "snapshot.dropped_records", &dropped) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "trigger")) {
            if (get_str(r, j, "snapshot.trigger", sizeof trigger) < 0) return -1;
            copy_str(trigger, sizeof trigger, r->s);
        } else if (VT_JSON_KEY(k, kn, "step_marked")) { if (vt_json_bool(j, &step_marked) < 0) return jfail(r, j, "snapshot.step_marked"); }
        else if (VT_JSON_KEY(k, kn, "unfreed_at_exit")) { if (vt_json_bool(j, &unfreed) < 0) return jfail(r, j, "snapshot.unfreed_at_exit"); }
        else if (VT_JSON_KEY(k, kn, "sites")) { if (rd_sites(r, j) < 0) return -1; have_sites = 1; }
        else if (VT_JSON_KEY(k, kn, "devices")) { if (rd_devices(r, j) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "oom")) { if (rd_oom(r, j, &o) < 0) return -1; }
        else if (VT_JSON_KEY(k, kn, "allocations")) { if (rd_allocations(r, j, &have_allocs) < 0) return -1; }
        else if (vt_json_skip(j) < 0) return jfail(r, j, "snapshot");
    }
    if (rc < 0 || vt_json_end(j) < 0) return jfail(r, j, "snapshot");
    if (!have_step) return rd_fail(r, "snapshot has no \"step\"");
    if (!have_sites) return rd_fail(r, "snapshot has no \"sites\"");
    int is_exit = unfreed || strcmp(trigger, VT_TRIGGER_EXIT) == 0;
    if (!is_exit && p->nsteps && step < p->steps[p->nsteps - 1])
        return rd_fail(r, "snapshot step %llu comes after step %llu (steps must not go backwards)",
                       (unsigned long long)step, (unsigned long long)p->steps[p->nsteps - 1]);

    /* ---- apply: nothing above changed the process ---- */
    if (dropped > p->dropped_records) p->dropped_records = dropped;
    if (step_marked) p->step_marked = 1;
    for (size_t i = 0; i < r->nde; i++) {
        dev_ent *d = &r->de[i];
        vt_device *dv = vt_process_device(p, (int)d->device);
        if (d->has_free && d->has_total) {
            dv->has_mem = 1;
            dv->free_bytes = d->free_b;
            dv->total_bytes = d->total_b;
        }
        dv->live_bytes = d->live;
        dv->peak_bytes = d->peak;
        dv->peak_max = u64max(dv->peak_max, u64max(d->peak, d->live));
        if (d->has_frag) {
            dv->frag_last = d->frag;
            if (d->frag > dv->frag_max) dv->frag_max = d->frag;
        }
        if (d->has_pool_r) dv->pool_reserved = d->pool_r;
        if (d->has_pool_u) dv->pool_used = d->pool_u;
        uint64_t ret = dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0;
        if (ret > dv->retention_max) dv->retention_max = ret;
    }
    if (is_exit) {
        vt_rsite *s, *t;
        HASH_ITER(hh, p->sites, s, t) s->unfreed_exit = 0;
        p->unfreed_exit_bytes = 0;
        for (size_t i = 0; i < r->nse; i++) {
            vt_stack *st = NULL;
            lookup_stack(r, r->se[i].key.stack, "sites", &st);
            vt_rsite *s2 = get_site(p, &r->se[i].key, st);
            s2->unfreed_exit = sat_add(s2->unfreed_exit, r->se[i].live);
            p->unfreed_exit_bytes = sat_add(p->unfreed_exit_bytes, r->se[i].live);
            s2->peak_bytes = u64max(s2->peak_bytes, u64max(r->se[i].live, r->se[i].ipeak));
        }
        p->exited = 1;
        if (o.present) build_oom(r, &o, have_allocs, step, seq, time_ns);
        return 0;
    }
    if (o.present) build_oom(r, &o, have_allocs, step, seq, time_ns);
    if (!p->nsteps || step > p->steps[p->nsteps - 1]) {
        close_step(p);
        VT_PUSH(p->steps, p->nsteps, p->capsteps, step);
        vt_grow((void **)&p->step_total, &p->captotal, p->nsteps, sizeof *p->step_total);
        p->step_total[p->nsteps - 1] = 0;
    }
    uint64_t ord = ++p->nsnapshots;
    uint32_t si = (uint32_t)(p->nsteps - 1);
    uint64_t total = 0;
    /* sum duplicates of a key within the record, then fold into step state */
    size_t nsnap = 0;
    for (size_t i = 0; i < r->nse; i++) {
        site_ent *e = &r->se[i];
        vt_rsite *s = get_site(p, &e->key, e->canon);
        if (s->snap_mark != ord) {
            s->snap_mark = ord;
            s->snap_live = s->snap_peak = s->snap_free_total = 0;
            r->se[nsnap].site = s;   /* reuse: list of distinct sites */
            nsnap++;
        }
        s->snap_live = sat_add(s->snap_live, e->live);
        s->snap_peak = sat_add(s->snap_peak, e->ipeak);
        s->snap_free_total = sat_add(s->snap_free_total, e->free_total);
        total = sat_add(total, e->live);
    }
    for (size_t i = 0; i < nsnap; i++) {
        vt_rsite *s = r->se[i].site;
        if (s->step_mark != si + 1) {
            s->step_mark = si + 1;
            s->step_peak = 0;
            s->step_nfree = 0;
            VT_PUSH(p->touched, p->ntouched, p->captouched, s);
        }
        s->step_live = s->snap_live;
        s->step_seen_snap = ord;
        s->step_peak = u64max(s->step_peak, u64max(s->snap_peak, s->snap_live));
        if (s->snap_free_total > s->free_total) {
            uint64_t d = s->snap_free_total - s->free_total + s->step_nfree;
            s->step_nfree = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        }
        s->free_total = s->snap_free_total;
        s->peak_bytes = u64max(s->peak_bytes, s->step_peak);
    }
    p->last_series_snap = ord;
    p->step_total[si] = total;
    return 0;
}

/* ---- line loop ---- */

static int rd_line(rd *r, const char *line, size_t len)
{
    vt_json j;
    vt_json_init(&j, line, len);
    if (len == 0 || vt_json_peek(&j) == VT_JSON_NONE) return rd_fail(r, "empty line");
    if (memchr(line, 0, len)) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (binary data)");
        return rd_fail(r, "NUL byte in line (binary data)");
    }
    if (record_type(r, &j) < 0) return -1;
    if (r->line == 1) {
        if (strcmp(r->s, "header") != 0)
            return rd_fail(r, "not a vramtrace snapshot file (the first record is \"%s\", not a header)", r->s);
        return rd_header(r, &j);
    }
    if (strcmp(r->s, "header") == 0) return rd_fail(r, "a second header in the same file");
    if (strcmp(r->s, "module") == 0) return rd_module(r, &j);
    if (strcmp(r->s, "stack") == 0) return rd_stack(r, &j);
    if (strcmp(r->s, "snapshot") == 0) return rd_snapshot(r, &j);
    /* unknown record types are skipped, but must still be valid JSON */
    if (vt_json_skip(&j) < 0 || vt_json_end(&j) < 0) return jfail(r, &j, "record");
    return 0;
}

static int same_process(const vt_process *a, const vt_process *b)
{
    return a->pid == b->pid && a->start_ns == b->start_ns && strcmp(a->host, b->host) == 0;
}

int vt_load_file(vt_runset *rs, const char *path, int in_dir)
{
    rd r;
    memset(&r, 0, sizeof r);
    r.rs = rs;
    r.path = path;
    rs->err[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (in_dir ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (errno == ELOOP) snprintf(rs->err, sizeof rs->err, "%s:0: is a symbolic link in a snapshot folder (not followed; name it explicitly)", path);
        else snprintf(rs->err, sizeof rs->err, "%s:0: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(rs->err, sizeof rs->err, "%s:0: %s", path,
                 S_ISDIR(st.st_mode) ? "is a folder" : "not a regular file");
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);

    size_t cap = 1 << 20, len = 0, pos = 0;
    char *buf = vt_xmalloc(cap);
    int rc = 0, eof = 0;
    while (rc == 0) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        if (nl) {
            r.line++;
            rc = rd_line(&r, buf + pos, (size_t)(nl - (buf + pos)));
            pos = (size_t)(nl - buf) + 1;
            continue;
        }
        if (eof) break;
        if (pos) {
            memmove(buf, buf + pos, len - pos);
            len -= pos;
            pos = 0;
        }
        if (len == cap) {
            if (cap >= VT_MAX_LINE) {
                r.line++;
                rc = rd_fail(&r, "line longer than %u MiB", VT_MAX_LINE >> 20);
                break;
            }
            cap *= 2;
            buf = vt_xrealloc(buf, cap + 1);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR) continue;
            r.line++;
            rc = rd_fail(&r, "read error: %s", strerror(errno));
            break;
        }
        if (n == 0) eof = 1;
        len += (size_t)n;
    }
    if (rc == 0 && len > pos) {
        /* a torn last line: the writer was killed mid-record */
        if (r.p) r.p->torn_tail = 1;
        if (rs->verbose)
            fprintf(stderr, "%s:%llu: ignoring a torn last line (%zu bytes without a newline)\n", path,
                    (unsigned long long)r.line + 1, len - pos);
    }
    free(buf);
    close(fd);
    if (rc == 0 && !r.p) {
        r.line = 1;
        rc = rd_fail(&r, len ? "no complete record (only a torn line)" : "empty file");
    }
    free(r.se);
    free(r.de);
    free(r.ae);
    if (rc < 0) {
        vt_process_free(r.p);
        return -1;
    }
    close_step(r.p);
    vt_process *p = r.p;
    uint64_t devpeak = 0, maxtotal = 0;
    for (size_t i = 0; i < p->ndevices; i++) devpeak = sat_add(devpeak, p->devices[i].peak_max);
    for (size_t i = 0; i < p->nsteps; i++) maxtotal = u64max(maxtotal, p->step_total[i]);
    p->peak_bytes = u64max(devpeak, maxtotal);
    for (size_t i = 0; i < rs->n; i++) {
        if (same_process(rs->procs[i], p)) {
            fprintf(stderr, "vramtrace: %s: same process (host %s, pid %llu) as %s; skipped\n", path, p->host,
                    (unsigned long long)p->pid, rs->procs[i]->file);
            vt_process_free(p);
            return 0;
        }
    }
    VT_PUSH(rs->procs, rs->n, rs->cap, p);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(vt_runset *rs, const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        snprintf(rs->err, sizeof rs->err, "%s:0: cannot open folder: %s", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".jsonl") == 0 && e->d_name[0] != '.') {
            char *full = vt_xmalloc(strlen(path) + l + 2);
            sprintf(full, "%s/%s", path, e->d_name);
            VT_PUSH(names, n, cap, full);
        }
    }
    closedir(d);
    int rc = 0;
    if (!n) {
        snprintf(rs->err, sizeof rs->err, "%s:0: folder has no snapshot files (*.jsonl)", path);
        rc = -1;
    }
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) rc = vt_load_file(rs, names[i], 1);
        free(names[i]);
    }
    free(names);
    return rc;
}

int vt_load_paths(vt_runset *rs, char *const *paths, int npaths)
{
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) < 0) {
            snprintf(rs->err, sizeof rs->err, "%s:0: cannot open: %s", paths[i], strerror(errno));
            return -1;
        }
        int rc = S_ISDIR(st.st_mode) ? load_dir(rs, paths[i]) : vt_load_file(rs, paths[i], 0);
        if (rc < 0) return -1;
    }
    if (!rs->n) {
        snprintf(rs->err, sizeof rs->err, "%s:0: no snapshots", npaths ? paths[0] : "-");
        return -1;
    }
    return 0;
}
