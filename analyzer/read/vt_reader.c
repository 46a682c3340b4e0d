/* vt_reader.c — snapshot stream reader (contract in vt_reader.h).
 *
 * Design: read(2) into a growing buffer, split at '\n', check the line's length,
 * parse it with jansson (vt_jline_load: one tree per line, freed before the
 * next), and fold it into the model. A record is decoded completely into small
 * reusable scratch vectors (its sites, devices, live list) before anything is
 * applied to the process, so a record that fails half-way changes nothing.
 * Applying a series snapshot updates each site's step state; when the step
 * number changes the previous step is closed: every site touched in it, and
 * every site that was non-zero before, gets its value for that step appended to
 * its run-length series (absent from the step's last snapshot = 0 live bytes,
 * docs/snapshot-format.md "sites"). The exit record (trigger "exit" /
 * unfreed_at_exit true) is not a step: it gives unfreed bytes.
 *
 * Versions: version 1 sites are objects; version 2 sites are rows (VT_SITE_*
 * columns), and a record with "sites_delta":true lists only the sites that
 * changed since the previous snapshot of the file. Such a record is completed
 * before it is applied: every site of the previous record with live bytes > 0
 * that it does not list is added with its previous values (r->prev). That gives
 * the record exactly the rows a version 1 writer would have written (every site
 * with live bytes > 0, plus the changed ones), so both versions fold into the
 * model by the same code and give the same results. Version 3 delta records write
 * each listed row as differences from the site's row in the previous record
 * (trailing zeros left out); add_previous_row turns them back into the row
 * (vt_rsite.row keeps each site's last row), after which version 3 is version 2.
 */
#include "vt_reader.h"
#include "vt_display.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_format.h"
#include "vt_hostsig.h"
#include "vt_jarena.h"
#include "vt_jline.h"
#include "vt_lineparse.h"
#include "vt_util.h"

/* Frames whose module basename starts with one of these are CUDA's or ours. */
static const char *const trim_modules[] = {"libvramtrace", "libcudart", "libcuda.", "libcuda-"};

#define VT_MAX_SITE_ID 0xFFFFFFFFll   /* v3: site ids are 1..2^32-1 (the writer's uint32_t) */

typedef struct site_def {      /* v3: a "site" record, in rd.sdefs by id */
    int64_t id;
    vt_site_key key;
    struct vt_stack *canon;
    UT_hash_handle hh;
} site_def;

typedef struct site_ent {
    vt_site_key key;
    uint64_t live, ipeak, free_total;
    uint64_t row[8];            /* v2+: columns 3..10 (v3 delta record: differences until completed) */
    struct vt_stack *canon;     /* resolved stack */
    struct vt_rsite *site;      /* filled when applied */
} site_ent;

typedef struct dev_ent {
    int64_t device;
    int has_free, has_total, has_frag, has_pool_r, has_pool_u;
    uint64_t free_b, total_b, live, peak, pool_r, pool_u;
    double frag;
    uint64_t calls, failed, oom;     /* summed over kinds: alloc_total, failed_total, oom_total */
    int has_oom;                     /* some kind carried oom_total (absent before it existed) */
} dev_ent;

typedef vt_alloc alloc_ent;

typedef struct annot_ent {
    const char *key;            /* borrowed from the tree */
    double value;
} annot_ent;

typedef struct rd {
    vt_runset *rs;
    const char *path;
    uint64_t line;
    vt_process *p;
    site_ent *se; size_t nse, capse;
    dev_ent *de; size_t nde, capde;
    alloc_ent *ae; size_t nae, capae;
    annot_ent *an; size_t nan, capan;
    site_ent *prev; size_t nprev, capprev;   /* v2: previous snapshot's sites with live > 0 */
    int have_prev;              /* v2: a snapshot record was read (prev is its state) */
    uint64_t nrecord;           /* v2: snapshot records decoded (vt_rsite.delta_mark) */
    int version;                /* header's format version */
    site_def *sdefs;            /* v3: "site" records by id (a hash: memory grows with the
                                   definitions a file has, not with the ids it names) */
    site_def *sdef_last;        /* v3: the last one looked up (rows of one site come in runs) */
    vt_jarena arena;            /* jansson memory of the current line (vt_jarena.h) */
    uint64_t record_mark;
    char e[300];                /* message scratch for vt_j* getters */
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

/* A note on stderr (a file skipped, a torn line ignored), its paths and names in
 * their display form (vt_display.h): one line. */
static void rd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rd_note(const char *fmt, ...)
{
    char raw[3 * 4096 + 256], shown[4 * sizeof raw];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    vt_display(shown, sizeof shown, raw);
    fprintf(stderr, "%s\n", shown);
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

/* ---- typed readers: "<field>: <what>" on failure ---- */

static int get_u64(rd *r, const json_t *v, const char *f, uint64_t *out)
{
    return vt_ju64(v, out, r->e, sizeof r->e) < 0 ? rd_fail(r, "%s: %s", f, r->e) : 0;
}

static int get_i64(rd *r, const json_t *v, const char *f, int64_t *out)
{
    return vt_ji64(v, out, r->e, sizeof r->e) < 0 ? rd_fail(r, "%s: %s", f, r->e) : 0;
}

/* Optional u64 that may be null: absent or null -> *has = 0. */
static int get_u64n(rd *r, const json_t *v, const char *f, uint64_t *out, int *has)
{
    *has = 0;
    if (!v || json_is_null(v)) return 0;
    if (get_u64(r, v, f, out) < 0) return -1;
    *has = 1;
    return 0;
}

static int get_bool(rd *r, const json_t *v, const char *f, int *out)
{
    return vt_jbool(v, out, r->e, sizeof r->e) < 0 ? rd_fail(r, "%s: %s", f, r->e) : 0;
}

/* A string of at most max bytes, borrowed from v; NULL after rd_fail. */
static const char *get_str(rd *r, const json_t *v, const char *f, size_t max)
{
    const char *s = vt_jstr(v, max, r->e, sizeof r->e);
    if (!s) rd_fail(r, "%s: %s", f, r->e);
    return s;
}

/* A device id, VT_DEVICE_MIN..VT_DEVICE_MAX (vt_reader.h): the exporters and
 * reports index by device, so an absurd id must not reach them. */
static int device_ok(rd *r, int64_t x, const char *f)
{
    if (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX) return rd_fail(r, "%s: device %lld out of range", f, (long long)x);
    return 0;
}

static int get_device(rd *r, const json_t *v, const char *f, int32_t *out)
{
    int64_t x;
    if (get_i64(r, v, f, &x) < 0 || device_ok(r, x, f) < 0) return -1;
    *out = (int32_t)x;
    return 0;
}

static int get_kind(rd *r, const json_t *v, const char *f, int32_t *out)
{
    const char *s = get_str(r, v, f, 31);
    if (!s) return -1;
    int k = vt_kind_from_name(s);
    if (k < 0) return rd_fail(r, "%s: unknown kind \"%s\"", f, s);
    *out = k;
    return 0;
}

/* "<array>[<i>].<key>" into buf. */
static const char *field_name(char *buf, size_t cap, const char *arr, size_t i, const char *key)
{
    snprintf(buf, cap, "%s[%zu]%s%.40s", arr, i, key[0] ? "." : "", key);
    return buf;
}

/* ---- header ---- */

static int rd_header(rd *r, json_t *o)
{
    vt_process *p = vt_xcalloc(1, sizeof *p);
    p->file = vt_xstrdup(r->path);
    r->p = p;   /* owned by r until pushed */
    json_t *v = json_object_get(o, "format");
    if (!v) return rd_fail(r, "not a vramtrace snapshot file (header has no \"format\")");
    if (!json_is_string(v)) return rd_fail(r, "not a vramtrace snapshot file (\"format\" is a %s)", vt_jtype(v));
    if (strcmp(json_string_value(v), VT_FORMAT_NAME) != 0)
        return rd_fail(r, "foreign format \"%.100s\" (expected \"%s\")", json_string_value(v), VT_FORMAT_NAME);
    uint64_t version;
    v = json_object_get(o, "version");
    if (!v) return rd_fail(r, "header has no \"version\"");
    if (get_u64(r, v, "header.version", &version) < 0) return -1;
    if (version < VT_FORMAT_VERSION_MIN || version > VT_FORMAT_VERSION)
        return rd_fail(r, "unsupported snapshot format version %llu (this vramtrace reads versions %d to %d)",
                       (unsigned long long)version, VT_FORMAT_VERSION_MIN, VT_FORMAT_VERSION);
    r->version = (int)version;
    if (!(v = json_object_get(o, "pid"))) return rd_fail(r, "header has no \"pid\"");
    if (get_u64(r, v, "header.pid", &p->pid) < 0) return -1;
    if (!(v = json_object_get(o, "start_ns"))) return rd_fail(r, "header has no \"start_ns\"");
    if (get_u64(r, v, "header.start_ns", &p->start_ns) < 0) return -1;
    int has;
    if (get_u64n(r, json_object_get(o, "ppid"), "header.ppid", &p->ppid, &has) < 0) return -1;
    if (get_u64n(r, json_object_get(o, "depth"), "header.depth", &p->depth, &has) < 0) return -1;
    if (get_u64n(r, json_object_get(o, "interval_ms"), "header.interval_ms", &p->interval_ms, &has) < 0) return -1;
    const char *s;
    if ((v = json_object_get(o, "host"))) {
        if (!(s = get_str(r, v, "header.host", VT_MAX_FIELD))) return -1;
        p->host = vt_xdisplay(s);
    } else {
        p->host = vt_xstrdup("");
    }
    if ((v = json_object_get(o, "exe")) && !json_is_null(v)) {
        if (!(s = get_str(r, v, "header.exe", VT_MAX_FIELD))) return -1;
        p->exe = vt_xdisplay(s);
    }
    if ((v = json_object_get(o, "cmdline")) && !json_is_null(v)) {
        if (!json_is_array(v)) return rd_fail(r, "header.cmdline: expected an array, got %s", vt_jtype(v));
        /* joined with spaces; each argument is bounded by the line, so the
         * joined string is too (at most the line's bytes) */
        char *joined = NULL;
        size_t n = 0, cap = 0, i;
        json_t *a;
        json_array_foreach(v, i, a) {
            if (!(s = get_str(r, a, "header.cmdline[]", VT_MAX_FIELD))) {
                free(joined);
                return -1;
            }
            size_t l = json_string_length(a);
            vt_grow((void **)&joined, &cap, n + l + 2, 1);
            if (n) joined[n++] = ' ';
            memcpy(joined + n, s, l);
            n += l;
        }
        vt_grow((void **)&joined, &cap, n + 1, 1);
        joined[n] = 0;
        p->cmdline = vt_xdisplay(joined);   /* shown, never run: vt_display.h */
        free(joined);
    }
    static const char *const rk[] = {"rank", "local_rank", "world_size"};
    int64_t *dst[] = {&p->rank, &p->local_rank, &p->world_size};
    for (int i = 0; i < 3; i++) {
        char f[32];
        v = json_object_get(o, rk[i]);
        if (!v || json_is_null(v)) continue;
        snprintf(f, sizeof f, "header.%s", rk[i]);
        if (get_i64(r, v, f, dst[i]) < 0) return -1;
        if (i == 0) p->has_rank = 1;
    }
    return 0;
}

/* ---- module ---- */

static int rd_module(rd *r, json_t *o)
{
    int64_t id;
    uint64_t bias = 0;
    int has_bias;
    const char *path, *bid = "";
    json_t *v;
    if (!(v = json_object_get(o, "id"))) return rd_fail(r, "module has no \"id\"");
    if (get_i64(r, v, "module.id", &id) < 0) return -1;
    if (!(v = json_object_get(o, "path"))) return rd_fail(r, "module %lld has no \"path\"", (long long)id);
    if (!(path = get_str(r, v, "module.path", VT_MAX_FIELD))) return -1;
    if ((v = json_object_get(o, "build_id")) && !json_is_null(v) && !(bid = get_str(r, v, "module.build_id", 255)))
        return -1;
    if (get_u64n(r, json_object_get(o, "bias"), "module.bias", &bias, &has_bias) < 0) return -1;
    vt_module *m;
    HASH_FIND(hh, r->p->module_by_id, &id, sizeof id, m);
    if (m) return rd_fail(r, "module %lld is defined twice", (long long)id);
    m = vt_xcalloc(1, sizeof *m);
    m->id = id;
    m->path = vt_xstrdup(path);
    m->shown = vt_xdisplay(path);
    m->build_id = vt_xstrdup(bid);
    m->bias = bias;
    HASH_ADD(hh, r->p->module_by_id, id, sizeof m->id, m);
    VT_PUSH(r->p->modules, r->p->nmodules, r->p->capmodules, m);
    return 0;
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
 * program's own module): cuda[A-Z]*, cu[A-Z]*, __cudart*, and the static runtime's own
 * local symbols, libcudart_static_<hash> (seen on a real H200, docs/gpu-validation.md). */
int vt_is_cuda_function(const char *fn)
{
    if (!fn) return 0;
    if (strncmp(fn, "libcudart_static_", 17) == 0) return 1;
    if (strncmp(fn, "__cudart", 8) == 0) return 1;
    if (strncmp(fn, "cuda", 4) == 0 && fn[4] >= 'A' && fn[4] <= 'Z') return 1;
    if (strncmp(fn, "cu", 2) == 0 && fn[2] >= 'A' && fn[2] <= 'Z') return 1;
    return 0;
}

#define VT_MAX_FRAMES 1024

/* One frame [module_id, offset, function-or-null, ...] into *f (function
 * borrowed from the tree). */
static int rd_frame(rd *r, const json_t *a, size_t i, vt_frame *f)
{
    char fld[96];
    int64_t mid;
    if (!json_is_array(a) || json_array_size(a) < 2)
        return rd_fail(r, "stack.frames[%zu]: expected [module, offset, function], got %s", i,
                       json_is_array(a) ? "a shorter array" : vt_jtype(a));
    snprintf(fld, sizeof fld, "stack.frames[%zu][0] (module id)", i);
    if (get_i64(r, json_array_get(a, 0), fld, &mid) < 0) return -1;
    snprintf(fld, sizeof fld, "stack.frames[%zu][1] (offset)", i);
    if (get_u64(r, json_array_get(a, 1), fld, &f->offset) < 0) return -1;
    const json_t *fn = json_array_get(a, 2);
    f->function = NULL;
    if (fn && !json_is_null(fn)) {
        snprintf(fld, sizeof fld, "stack.frames[%zu][2] (function)", i);
        const char *s = get_str(r, fn, fld, VT_MAX_FIELD);
        if (!s) return -1;
        f->function = (char *)s;
    }
    f->mod = NULL;
    if (mid != -1) {
        HASH_FIND(hh, r->p->module_by_id, &mid, sizeof mid, f->mod);
        if (!f->mod)
            return rd_fail(r, "stack: frame uses module %lld, which is not defined before it", (long long)mid);
    }
    return 0;
}

/* The stack's "py" list (issue 8, docs/snapshot-format.md "stack"): each entry
 * [file, function, line, native_index] into py[] (strings borrowed from the
 * tree). nfr: the number of raw native frames (native_index is -1 or below it). */
static int rd_pyframes(rd *r, const json_t *arr, size_t nfr, vt_pyframe **out, size_t *nout)
{
    char fld[96];
    *out = NULL;
    *nout = 0;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return rd_fail(r, "stack.py: expected an array, got %s", vt_jtype(arr));
    size_t n = json_array_size(arr);
    if (n > VT_MAX_FRAMES) return rd_fail(r, "stack: more than %d Python frames", VT_MAX_FRAMES);
    if (!n) return 0;
    vt_pyframe *py = vt_xcalloc(n, sizeof *py);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(arr, i);
        const char *file, *fn;
        uint64_t line;
        int64_t ni;
        if (!json_is_array(a) || json_array_size(a) != 4) {
            rd_fail(r, "stack.py[%zu]: expected [file, function, line, native_index], got %s", i,
                    json_is_array(a) ? "an array of another length" : vt_jtype(a));
            goto fail;
        }
        snprintf(fld, sizeof fld, "stack.py[%zu][0] (file)", i);
        if (!(file = get_str(r, json_array_get(a, 0), fld, VT_MAX_FIELD))) goto fail;
        snprintf(fld, sizeof fld, "stack.py[%zu][1] (function)", i);
        if (!(fn = get_str(r, json_array_get(a, 1), fld, VT_MAX_FIELD))) goto fail;
        snprintf(fld, sizeof fld, "stack.py[%zu][2] (line)", i);
        if (get_u64(r, json_array_get(a, 2), fld, &line) < 0) goto fail;
        if (line > INT32_MAX) {
            rd_fail(r, "%s: %llu out of range", fld, (unsigned long long)line);
            goto fail;
        }
        snprintf(fld, sizeof fld, "stack.py[%zu][3] (native_index)", i);
        if (get_i64(r, json_array_get(a, 3), fld, &ni) < 0) goto fail;
        if (ni < -1 || ni >= (int64_t)nfr) {
            rd_fail(r, "%s: %lld is neither -1 nor the index of one of the stack's %zu frames", fld, (long long)ni, nfr);
            goto fail;
        }
        py[i].file = (char *)file;
        py[i].function = (char *)fn;
        py[i].line = (uint32_t)line;
        py[i].native_index = (int32_t)ni;
    }
    *out = py;
    *nout = n;
    return 0;
fail:
    free(py);
    return -1;
}

/* Appends n bytes to a growing key buffer. */
static void key_put(char **key, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) vt_grow((void **)key, cap, *len + n, 1);
    memcpy(*key + *len, p, n);
    *len += n;
}

static int rd_stack(rd *r, json_t *o)
{
    int64_t id;
    json_t *v, *frames;
    if (!(v = json_object_get(o, "id"))) return rd_fail(r, "stack has no \"id\"");
    if (get_i64(r, v, "stack.id", &id) < 0) return -1;
    if (!(frames = json_object_get(o, "frames"))) return rd_fail(r, "stack %lld has no \"frames\"", (long long)id);
    if (!json_is_array(frames)) return rd_fail(r, "stack.frames: expected an array, got %s", vt_jtype(frames));
    size_t nfr = json_array_size(frames);
    if (nfr > VT_MAX_FRAMES) return rd_fail(r, "stack: more than %d frames", VT_MAX_FRAMES);
    vt_rawstack *raw;
    HASH_FIND(hh, r->p->rawstacks, &id, sizeof id, raw);
    if (raw) return rd_fail(r, "stack %lld is defined twice", (long long)id);
    vt_frame *fr = vt_xcalloc(nfr ? nfr : 1, sizeof *fr);   /* functions borrowed from the tree */
    for (size_t i = 0; i < nfr; i++) {
        if (rd_frame(r, json_array_get(frames, i), i, &fr[i]) < 0) {
            free(fr);
            return -1;
        }
    }
    vt_pyframe *py;
    size_t npy;
    if (rd_pyframes(r, json_object_get(o, "py"), nfr, &py, &npy) < 0) {
        free(fr);
        return -1;
    }

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
        if (leading && vt_is_cuda_function(fr[i].function)) continue;
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
    HASH_FIND(hh, r->p->stack_by_key, key, keylen, st);
    if (st) {
        free(key);
        free(tf);
        free(py);
    } else {
        st = vt_xcalloc(1, sizeof *st);
        st->index = (uint32_t)r->p->nstacks;
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
        HASH_ADD_KEYPTR(hh, r->p->stack_by_key, st->key, st->keylen, st);
        VT_PUSH(r->p->stacks, r->p->nstacks, r->p->capstacks, st);
    }
    raw = vt_xcalloc(1, sizeof *raw);
    raw->id = id;
    raw->canon = st;
    HASH_ADD(hh, r->p->rawstacks, id, sizeof raw->id, raw);
    return 0;
}

static int lookup_stack(rd *r, int64_t id, const char *where, vt_stack **out);

static void free_site_defs(rd *r)
{
    site_def *d, *tmp;
    HASH_ITER(hh, r->sdefs, d, tmp) {
        HASH_DEL(r->sdefs, d);
        free(d);
    }
    r->sdef_last = NULL;
}

/* Version 3 "site" record: {"t":"site","id":N,"stack":S,"kind":"...","device":D}.
 * The stack must be defined before it; an id defined again must name the same
 * (stack, kind, device) (a writer that lost track of its definitions repeats them). */
static int rd_site(rd *r, json_t *o)
{
    int64_t id, stack, device;
    json_t *v;
    if (!(v = json_object_get(o, "id"))) return rd_fail(r, "site has no \"id\"");
    if (get_i64(r, v, "site.id", &id) < 0) return -1;
    if (id < 1 || id > VT_MAX_SITE_ID)
        return rd_fail(r, "site.id: %lld out of range (1 to %lld)", (long long)id, (long long)VT_MAX_SITE_ID);
    if (!(v = json_object_get(o, "stack"))) return rd_fail(r, "site %lld has no \"stack\"", (long long)id);
    if (get_i64(r, v, "site.stack", &stack) < 0) return -1;
    if (!(v = json_object_get(o, "kind"))) return rd_fail(r, "site %lld has no \"kind\"", (long long)id);
    const char *ks = get_str(r, v, "site.kind", 31);
    if (!ks) return -1;
    int kind = vt_kind_from_name(ks);
    if (kind < 0) return rd_fail(r, "site.kind: unknown kind \"%s\"", ks);
    if (!(v = json_object_get(o, "device"))) return rd_fail(r, "site %lld has no \"device\"", (long long)id);
    if (get_i64(r, v, "site.device", &device) < 0) return -1;
    if (device < VT_DEVICE_MIN || device > VT_DEVICE_MAX)
        return rd_fail(r, "site.device: device %lld out of range", (long long)device);
    vt_stack *canon;
    if (lookup_stack(r, stack, "site.stack", &canon) < 0) return -1;
    site_def *d;
    HASH_FIND(hh, r->sdefs, &id, sizeof id, d);
    if (d) {
        if (d->key.stack != stack || d->key.kind != kind || d->key.device != (int32_t)device)
            return rd_fail(r, "site %lld is defined twice, as (stack %lld, kind %s, device %d) and (stack %lld, kind "
                           "%s, device %lld)", (long long)id, (long long)d->key.stack, vt_kind_name(d->key.kind),
                           (int)d->key.device, (long long)stack, ks, (long long)device);
        return 0;   /* the same again: a writer that lost track of its definitions */
    }
    d = vt_xcalloc(1, sizeof *d);   /* zeroed: the key is hashed whole, padding included */
    d->id = id;
    d->key.stack = stack;
    d->key.kind = kind;
    d->key.device = (int32_t)device;
    d->canon = canon;
    HASH_ADD(hh, r->sdefs, id, sizeof d->id, d);
    return 0;
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

/* lookup_stack for sites[i] (the name is formatted only on failure: hot loop). */
static int lookup_site_stack(rd *r, int64_t id, size_t i, vt_stack **out)
{
    vt_rawstack *raw;
    HASH_FIND(hh, r->p->rawstacks, &id, sizeof id, raw);
    if (!raw) return rd_fail(r, "sites[%zu]: stack %lld is not defined before it is used", i, (long long)id);
    *out = raw->canon;
    return 0;
}

/* The per-site counters the analyzer does not use, still type-checked. */
static int unused_counter(const char *k)
{
    return !strcmp(k, "live_count") || !strcmp(k, "alloc_total") || !strcmp(k, "alloc_bytes_total") ||
           !strcmp(k, "growth_steps") || !strcmp(k, "growth_bytes");
}

/* Column names of a version 2 and of a version 3 site row, for messages. */
static const char *const site_cols[VT_SITE_NCOLS] = {
    "stack", "kind", "device", "live_bytes", "live_count", "interval_peak_bytes",
    "alloc_total", "alloc_bytes_total", "free_total", "growth_steps", "growth_bytes"};
static const char *const site_cols3[VT_SITE3_NCOLS] = {
    "site", "alloc_total", "alloc_bytes_total", "free_total", "live_bytes", "live_count",
    "interval_peak_bytes", "growth_steps", "growth_bytes"};

/* One version 2 site row: [stack, "kind", device, 8 non-negative integers]. */
static int rd_site_row(rd *r, const json_t *a, size_t i, site_ent *e)
{
    if (!json_is_array(a))
        return rd_fail(r, "sites[%zu]: expected a site row (array), got %s", i, vt_jtype(a));
    size_t n = json_array_size(a);
    if (n != VT_SITE_NCOLS)
        return rd_fail(r, "sites[%zu]: expected %d columns [stack, kind, device, live_bytes, live_count, "
                       "interval_peak_bytes, alloc_total, alloc_bytes_total, free_total, growth_steps, "
                       "growth_bytes], got %zu", i, VT_SITE_NCOLS, n);
    int k = VT_SITE_STACK;
    int bad = vt_ji64(json_array_get(a, VT_SITE_STACK), &e->key.stack, r->e, sizeof r->e);
    if (!bad) {
        k = VT_SITE_KIND;
        const char *ks = vt_jstr(json_array_get(a, VT_SITE_KIND), 31, r->e, sizeof r->e);
        if (!ks) bad = -1;
        else if ((e->key.kind = vt_kind_from_name(ks)) < 0) {
            snprintf(r->e, sizeof r->e, "unknown kind \"%s\"", ks);
            bad = -1;
        }
    }
    if (!bad) {
        int64_t x;
        k = VT_SITE_DEVICE;
        bad = vt_ji64(json_array_get(a, VT_SITE_DEVICE), &x, r->e, sizeof r->e);
        if (!bad && (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX)) {
            snprintf(r->e, sizeof r->e, "device %lld out of range", (long long)x);
            bad = -1;
        }
        e->key.device = (int32_t)x;
    }
    for (k = bad ? k : VT_SITE_LIVE_BYTES; !bad && k < VT_SITE_NCOLS; k++) {
        bad = vt_ju64(json_array_get(a, (size_t)k), &e->row[k - VT_SITE_LIVE_BYTES], r->e, sizeof r->e);
        if (bad) break;
    }
    if (bad) return rd_fail(r, "sites[%zu][%d] (%s): %s", i, k, site_cols[k], r->e);
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

/* One version 3 site row: [site id, 8 non-negative integers in VT_SITE3_ORDER];
 * in a delta record (diff) [site id, 0 to 8 signed differences] (the missing ones
 * 0), left in e->row as two's complement until add_previous_row adds the previous
 * row. e->row is in version 2's order whatever the file's. */
static int rd_site_row3(rd *r, const json_t *a, size_t i, site_ent *e, int diff)
{
    static const int order3[8] = VT_SITE3_ORDER;
    if (!json_is_array(a))
        return rd_fail(r, "sites[%zu]: expected a site row (array), got %s", i, vt_jtype(a));
    size_t n = json_array_size(a);
    if (diff ? n < 1 || n > VT_SITE3_NCOLS : n != VT_SITE3_NCOLS)
        return rd_fail(r, "sites[%zu]: expected %s%d columns%s [site, alloc_total, alloc_bytes_total, free_total, "
                       "live_bytes, live_count, interval_peak_bytes, growth_steps, growth_bytes], got %zu", i,
                       diff ? "1 to " : "", VT_SITE3_NCOLS, diff ? " in a delta record" : "", n);
    int64_t id;
    int k = 0;
    int bad = vt_ji64(json_array_get(a, 0), &id, r->e, sizeof r->e);
    site_def *d = r->sdef_last;
    if (!bad && (!d || d->id != id)) {
        HASH_FIND(hh, r->sdefs, &id, sizeof id, d);
        if (!d) {
            snprintf(r->e, sizeof r->e, "site %lld is not defined before it is used", (long long)id);
            bad = -1;
        }
        r->sdef_last = d;
    }
    if (bad) return rd_fail(r, "sites[%zu][0] (site): %s", i, r->e);
    e->key = d->key;
    e->canon = d->canon;
    memset(e->row, 0, sizeof e->row);
    for (k = 1; k < (int)n; k++) {
        uint64_t *dst = &e->row[order3[k - 1] - VT_SITE_LIVE_BYTES];
        if (diff) {
            int64_t x;
            bad = vt_ji64(json_array_get(a, (size_t)k), &x, r->e, sizeof r->e);
            *dst = (uint64_t)x;
        } else {
            bad = vt_ju64(json_array_get(a, (size_t)k), dst, r->e, sizeof r->e);
        }
        if (bad) return rd_fail(r, "sites[%zu][%d] (%s): %s", i, k, site_cols3[k], r->e);
    }
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

static int rd_sites(rd *r, const json_t *arr, int delta)
{
    char f[96];
    size_t i;
    json_t *o;
    if (!json_is_array(arr)) return rd_fail(r, "snapshot.sites: expected an array, got %s", vt_jtype(arr));
    if (r->version >= VT_FORMAT_DELTA_ROWS) {
        json_array_foreach(arr, i, o) {
            site_ent e;
            e.site = NULL;
            if (rd_site_row3(r, o, i, &e, delta) < 0) return -1;
            VT_PUSH(r->se, r->nse, r->capse, e);
        }
        return 0;
    }
    if (r->version >= 2) {
        json_array_foreach(arr, i, o) {
            site_ent e;
            memset(&e, 0, sizeof e);
            if (rd_site_row(r, o, i, &e) < 0) return -1;
            if (lookup_site_stack(r, e.key.stack, i, &e.canon) < 0) return -1;
            VT_PUSH(r->se, r->nse, r->capse, e);
        }
        return 0;
    }
    json_array_foreach(arr, i, o) {
        site_ent e;
        memset(&e, 0, sizeof e);
        int have_stack = 0, have_kind = 0, have_live = 0;
        if (!json_is_object(o)) return rd_fail(r, "sites[%zu]: expected an object, got %s", i, vt_jtype(o));
        const char *k;
        json_t *v;
        /* one pass over the members (no hashing): this is the hot loop */
        json_object_foreach(o, k, v) {
            /* field names are formatted only on failure */
            int bad = 0;
            uint64_t u;
            int64_t x;
            if (!strcmp(k, "stack")) { bad = vt_ji64(v, &e.key.stack, r->e, sizeof r->e); have_stack = 1; }
            else if (!strcmp(k, "kind")) {
                const char *ks = vt_jstr(v, 31, r->e, sizeof r->e);
                have_kind = 1;
                if (!ks) bad = -1;
                else if ((e.key.kind = vt_kind_from_name(ks)) < 0) {
                    snprintf(r->e, sizeof r->e, "unknown kind \"%s\"", ks);
                    bad = -1;
                }
            } else if (!strcmp(k, "device")) {
                bad = vt_ji64(v, &x, r->e, sizeof r->e);
                if (!bad && (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX)) {
                    snprintf(r->e, sizeof r->e, "device %lld out of range", (long long)x);
                    bad = -1;
                }
                e.key.device = (int32_t)x;
            }
            else if (!strcmp(k, "live_bytes")) { bad = vt_ju64(v, &e.live, r->e, sizeof r->e); have_live = 1; }
            else if (!strcmp(k, "interval_peak_bytes")) bad = vt_ju64(v, &e.ipeak, r->e, sizeof r->e);
            else if (!strcmp(k, "free_total")) bad = vt_ju64(v, &e.free_total, r->e, sizeof r->e);
            else if (unused_counter(k)) bad = vt_ju64(v, &u, r->e, sizeof r->e);
            if (bad < 0) return rd_fail(r, "%s: %s", field_name(f, sizeof f, "sites", i, k), r->e);
        }
        if (!have_stack || !have_kind || !have_live)
            return rd_fail(r, "sites[%zu]: needs \"stack\", \"kind\" and \"live_bytes\"", i);
        if (lookup_site_stack(r, e.key.stack, i, &e.canon) < 0) return -1;
        VT_PUSH(r->se, r->nse, r->capse, e);
    }
    return 0;
}

/* devices[i].kinds: {"<kind>": {"alloc_total":.., "failed_total":.., "oom_total":..,
 * ...}} (docs/snapshot-format.md "snapshot"); the three cumulative counters are
 * summed over the kinds into d. Absent counters count 0; oom_total is newer
 * than the others (d->has_oom says whether any kind carried it). */
static int rd_kind_counters(rd *r, const json_t *kinds, size_t i, dev_ent *d)
{
    static const char *const keys[] = {"alloc_total", "failed_total", "oom_total"};
    char f[160];
    const char *kn;
    json_t *ko;
    if (!kinds || json_is_null(kinds)) return 0;
    if (!json_is_object(kinds))
        return rd_fail(r, "devices[%zu].kinds: expected an object, got %s", i, vt_jtype(kinds));
    json_object_foreach((json_t *)kinds, kn, ko) {
        if (!json_is_object(ko))
            return rd_fail(r, "devices[%zu].kinds.%.40s: expected an object, got %s", i, kn, vt_jtype(ko));
        uint64_t *dst[] = {&d->calls, &d->failed, &d->oom};
        for (int k = 0; k < 3; k++) {
            json_t *v = json_object_get(ko, keys[k]);
            uint64_t u;
            int has;
            snprintf(f, sizeof f, "devices[%zu].kinds.%.40s.%s", i, kn, keys[k]);
            if (get_u64n(r, v, f, &u, &has) < 0) return -1;
            if (!has) continue;
            *dst[k] = sat_add(*dst[k], u);
            if (k == 2) d->has_oom = 1;
        }
    }
    return 0;
}

static int rd_devices(rd *r, const json_t *arr)
{
    char f[96];
    size_t i;
    json_t *o;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return rd_fail(r, "snapshot.devices: expected an array, got %s", vt_jtype(arr));
    json_array_foreach(arr, i, o) {
        dev_ent d;
        memset(&d, 0, sizeof d);
        if (!json_is_object(o)) return rd_fail(r, "devices[%zu]: expected an object, got %s", i, vt_jtype(o));
        json_t *v;
        int has;
        if ((v = json_object_get(o, "device")) && get_i64(r, v, field_name(f, sizeof f, "devices", i, "device"), &d.device) < 0)
            return -1;
        if (device_ok(r, d.device, field_name(f, sizeof f, "devices", i, "device")) < 0) return -1;
        if (rd_kind_counters(r, json_object_get(o, "kinds"), i, &d) < 0) return -1;
        if (get_u64n(r, json_object_get(o, "free_bytes"), field_name(f, sizeof f, "devices", i, "free_bytes"), &d.free_b, &d.has_free) < 0 ||
            get_u64n(r, json_object_get(o, "total_bytes"), field_name(f, sizeof f, "devices", i, "total_bytes"), &d.total_b, &d.has_total) < 0 ||
            get_u64n(r, json_object_get(o, "live_bytes"), field_name(f, sizeof f, "devices", i, "live_bytes"), &d.live, &has) < 0 ||
            get_u64n(r, json_object_get(o, "peak_bytes"), field_name(f, sizeof f, "devices", i, "peak_bytes"), &d.peak, &has) < 0 ||
            get_u64n(r, json_object_get(o, "pool_reserved_bytes"), field_name(f, sizeof f, "devices", i, "pool_reserved_bytes"), &d.pool_r, &d.has_pool_r) < 0 ||
            get_u64n(r, json_object_get(o, "pool_used_bytes"), field_name(f, sizeof f, "devices", i, "pool_used_bytes"), &d.pool_u, &d.has_pool_u) < 0)
            return -1;
        if ((v = json_object_get(o, "fragmentation")) && !json_is_null(v)) {
            field_name(f, sizeof f, "devices", i, "fragmentation");
            if (vt_jf64(v, &d.frag, r->e, sizeof r->e) < 0) return rd_fail(r, "%s: %s", f, r->e);
            if (!(d.frag >= 0 && d.frag <= 1)) return rd_fail(r, "%s: %g is outside 0..1", f, d.frag);
            d.has_frag = 1;
        }
        VT_PUSH(r->de, r->nde, r->capde, d);
    }
    return 0;
}

static int rd_allocations(rd *r, const json_t *arr, int *present)
{
    char where[64], f[96];
    size_t i;
    json_t *row;
    if (!arr || json_is_null(arr)) return 0;
    *present = 1;
    if (!json_is_array(arr)) return rd_fail(r, "snapshot.allocations: expected an array, got %s", vt_jtype(arr));
    json_array_foreach(arr, i, row) {
        alloc_ent a;
        memset(&a, 0, sizeof a);
        snprintf(where, sizeof where, "allocations[%zu]", i);
        if (!json_is_array(row)) return rd_fail(r, "%s: expected an array, got %s", where, vt_jtype(row));
        size_t ncol = json_array_size(row), c;
        if (ncol < VT_ALLOC_STACK + 1) return rd_fail(r, "%s: a row needs at least %d columns", where, VT_ALLOC_STACK + 1);
        for (c = 0; c < ncol && c < VT_ALLOC_NCOLS; c++) {
            json_t *v = json_array_get(row, c);
            snprintf(f, sizeof f, "%s[%zu]", where, c);
            int bad = 0;
            uint64_t u;
            switch (c) {
            case VT_ALLOC_ADDR: bad = get_u64(r, v, f, &a.addr); break;
            case VT_ALLOC_SIZE: bad = get_u64(r, v, f, &a.size); break;
            case VT_ALLOC_KIND: bad = get_kind(r, v, f, &a.kind); break;
            case VT_ALLOC_DEVICE: bad = get_device(r, v, f, &a.device); break;
            case VT_ALLOC_STACK:
                if (json_is_null(v)) a.stack = INT64_MIN;
                else bad = get_i64(r, v, f, &a.stack);
                break;
            case VT_ALLOC_BIRTH_NS: bad = get_u64(r, v, f, &a.birth_ns); break;
            case VT_ALLOC_STREAM: bad = get_u64(r, v, f, &a.stream); break;
            default: bad = get_u64(r, v, f, &u); break;
            }
            if (bad < 0) return -1;
        }
        if (a.stack != INT64_MIN) {
            vt_stack *st;
            if (lookup_stack(r, a.stack, where, &st) < 0) return -1;
        }
        VT_PUSH(r->ae, r->nae, r->capae, a);
    }
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

static int rd_oom(rd *r, const json_t *o, oom_ent *m)
{
    json_t *v;
    const char *s;
    if (!o || json_is_null(o)) return 0;
    if (!json_is_object(o)) return rd_fail(r, "snapshot.oom: expected an object or null, got %s", vt_jtype(o));
    m->present = 1;
    m->stack = -1;
    if ((v = json_object_get(o, "api"))) {
        if (!(s = get_str(r, v, "oom.api", VT_MAX_FIELD))) return -1;
        vt_display(m->api, sizeof m->api, s);
    }
    if ((v = json_object_get(o, "kind")) && get_kind(r, v, "oom.kind", &m->kind) < 0) return -1;
    if ((v = json_object_get(o, "device")) && get_device(r, v, "oom.device", &m->device) < 0) return -1;
    if (!(v = json_object_get(o, "requested_bytes"))) return rd_fail(r, "oom: has no \"requested_bytes\"");
    if (get_u64(r, v, "oom.requested_bytes", &m->requested) < 0) return -1;
    if ((v = json_object_get(o, "result")) && get_i64(r, v, "oom.result", &m->result) < 0) return -1;
    if (get_u64n(r, json_object_get(o, "free_bytes"), "oom.free_bytes", &m->free_b, &m->has_free) < 0 ||
        get_u64n(r, json_object_get(o, "total_bytes"), "oom.total_bytes", &m->total_b, &m->has_total) < 0 ||
        get_u64n(r, json_object_get(o, "tracked_bytes"), "oom.tracked_bytes", &m->tracked, &m->has_tracked) < 0)
        return -1;
    if ((v = json_object_get(o, "stack")) && !json_is_null(v) && get_i64(r, v, "oom.stack", &m->stack) < 0) return -1;
    if (m->stack != -1) {
        vt_stack *st;
        if (lookup_stack(r, m->stack, "oom", &st) < 0) return -1;
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
        if (nd) qsort(r->ae, nd, sizeof *r->ae, cmp_alloc_addr);
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

/* ---- annotations (docs/snapshot-format.md "annotations") ---- */

static int annot_key_ok(const char *k)
{
    size_t n = 0;
    for (; k[n]; n++) {
        char c = k[n];
        if (n >= 63) return 0;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return 0;
    }
    return n > 0;
}

static int rd_annotations(rd *r, const json_t *o)
{
    const char *k;
    json_t *v;
    if (!o || json_is_null(o)) return 0;
    if (!json_is_object(o)) return rd_fail(r, "snapshot.annotations: expected an object, got %s", vt_jtype(o));
    json_object_foreach((json_t *)o, k, v) {
        annot_ent e;
        if (!annot_key_ok(k))
            return rd_fail(r, "annotations: key \"%.80s\" is not 1-63 bytes of [A-Za-z0-9_.:-]", k);
        if (vt_jf64(v, &e.value, r->e, sizeof r->e) < 0) return rd_fail(r, "annotations.%s: %s", k, r->e);
        if (!isfinite(e.value)) return rd_fail(r, "annotations.%s: not a finite number", k);
        e.key = k;
        VT_PUSH(r->an, r->nan, r->capan, e);
    }
    return 0;
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
static void apply_annotations(rd *r, uint64_t step)
{
    vt_process *p = r->p;
    for (size_t i = 0; i < r->nan; i++) {
        const annot_ent *e = &r->an[i];
        vt_annot *a = NULL;
        if (i < p->nannots && !strcmp(p->annots[i].key, e->key)) a = &p->annots[i];   /* same order as before */
        for (size_t k = 0; !a && k < p->nannots; k++)
            if (!strcmp(p->annots[k].key, e->key)) a = &p->annots[k];
        if (!a) {
            vt_annot na;
            memset(&na, 0, sizeof na);
            copy_str(na.key, sizeof na.key, e->key);
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
    for (size_t d = 0; r->nan && d < p->ndevices; d++) {
        vt_device *dv = &p->devices[d];
        if ((dv->has_torch & (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) != (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) continue;
        double cached = dv->torch_reserved - dv->torch_allocated;
        if (cached > dv->torch_cached_max) dv->torch_cached_max = cached;
    }
}

/* Version 3 delta record: e's columns are differences; adds the site's row in the
 * previous snapshot record (0 when that record had no row for it). A result below
 * 0 or above 2^63-1 is an error naming the column. */
static int add_previous_row(rd *r, size_t i, site_ent *e, const vt_rsite *s, uint64_t ord)
{
    static const int order3[8] = VT_SITE3_ORDER;
    int have = s->row_mark != 0 && s->row_mark + 1 == ord;
    for (int j = 0; j < 8; j++) {   /* file column 1 + j */
        int k = order3[j] - VT_SITE_LIVE_BYTES;
        uint64_t base = have ? s->row[k] : 0;
        int64_t d = (int64_t)e->row[k];
        uint64_t v = base + (uint64_t)d;
        int below = d < 0 && (uint64_t)0 - (uint64_t)d > base;
        if (below || v > (uint64_t)INT64_MAX)
            return rd_fail(r, "sites[%zu][%d] (%s): the difference %lld %s (the previous snapshot's row has %llu)",
                           i, j + 1, site_cols3[j + 1], (long long)d,
                           below ? "takes the value below 0" : "takes the value above 2^63-1",
                           (unsigned long long)base);
        e->row[k] = v;
    }
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

/* Version 2: rejects a site listed twice in one record; for a delta record
 * ("sites_delta":true) adds every site of the previous record with live bytes > 0
 * that the record does not list, with its previous values (see the top of the
 * file). Creates the listed sites (empty) to mark them; nothing else changes. */
static int rd_complete_sites(rd *r, int delta)
{
    uint64_t ord = ++r->nrecord;
    if (delta && !r->have_prev)
        return rd_fail(r, "snapshot has \"sites_delta\":true but no snapshot comes before it in this file "
                       "(a delta needs the previous snapshot's sites)");
    size_t nlisted = r->nse;
    for (size_t i = 0; i < nlisted; i++) {
        site_ent *e = &r->se[i];
        vt_rsite *s = get_site(r->p, &e->key, e->canon);
        if (s->delta_mark == ord)
            return rd_fail(r, "sites[%zu]: site (stack %lld, kind %s, device %d) is listed twice in one snapshot",
                           i, (long long)e->key.stack, vt_kind_name(e->key.kind), (int)e->key.device);
        s->delta_mark = ord;
        e->site = s;
        if (delta && r->version >= VT_FORMAT_DELTA_ROWS && add_previous_row(r, i, e, s, ord) < 0)
            return -1;
    }
    if (!delta) return 0;
    for (size_t i = 0; i < r->nprev; i++) {
        if (r->prev[i].site->delta_mark == ord) continue;   /* listed: its new row counts */
        VT_PUSH(r->se, r->nse, r->capse, r->prev[i]);
    }
    return 0;
}

/* Version 2: the record's (completed) sites with live bytes > 0 become the state a
 * following delta record is completed from. */
static void keep_prev(rd *r)
{
    r->nprev = 0;
    for (size_t i = 0; i < r->nse; i++) {
        site_ent *e = &r->se[i];
        if (e->live) VT_PUSH(r->prev, r->nprev, r->capprev, *e);
        /* version 3: the row a following delta record's differences start from */
        memcpy(e->site->row, e->row, sizeof e->row);
        e->site->row_mark = r->nrecord;
    }
    r->have_prev = 1;
}

static int rd_snapshot(rd *r, json_t *o)
{
    vt_process *p = r->p;
    int has, step_marked = 0, unfreed = 0, have_allocs = 0;
    uint64_t step = 0, seq = 0, time_ns = 0, dropped = 0;
    char trigger[32] = "";
    json_t *v;
    const char *s;
    oom_ent o_;
    oom_ent *const po = &o_;
    memset(po, 0, sizeof *po);
    r->nse = r->nde = r->nae = r->nan = 0;
    if (!(v = json_object_get(o, "step"))) return rd_fail(r, "snapshot has no \"step\"");
    if (get_u64(r, v, "snapshot.step", &step) < 0) return -1;
    if (get_u64n(r, json_object_get(o, "seq"), "snapshot.seq", &seq, &has) < 0 ||
        get_u64n(r, json_object_get(o, "time_ns"), "snapshot.time_ns", &time_ns, &has) < 0 ||
        get_u64n(r, json_object_get(o, "dropped_records"), "snapshot.dropped_records", &dropped, &has) < 0)
        return -1;
    if ((v = json_object_get(o, "trigger"))) {
        if (!(s = get_str(r, v, "snapshot.trigger", 31))) return -1;
        copy_str(trigger, sizeof trigger, s);
    }
    if ((v = json_object_get(o, "step_marked")) && get_bool(r, v, "snapshot.step_marked", &step_marked) < 0) return -1;
    if ((v = json_object_get(o, "unfreed_at_exit")) && get_bool(r, v, "snapshot.unfreed_at_exit", &unfreed) < 0) return -1;
    int delta = 0;
    if (r->version >= 2 && (v = json_object_get(o, VT_SITES_DELTA_KEY)) &&
        get_bool(r, v, "snapshot." VT_SITES_DELTA_KEY, &delta) < 0)
        return -1;
    if (!(v = json_object_get(o, "sites"))) return rd_fail(r, "snapshot has no \"sites\"");
    if (rd_sites(r, v, delta) < 0) return -1;
    if (r->version >= 2 && rd_complete_sites(r, delta) < 0) return -1;
    if (rd_devices(r, json_object_get(o, "devices")) < 0) return -1;
    if (rd_oom(r, json_object_get(o, "oom"), po) < 0) return -1;
    if (rd_allocations(r, json_object_get(o, "allocations"), &have_allocs) < 0) return -1;
    if (rd_annotations(r, json_object_get(o, "annotations")) < 0) return -1;
    int is_exit = unfreed || strcmp(trigger, VT_TRIGGER_EXIT) == 0;
    if (!is_exit && p->nsteps && step < p->steps[p->nsteps - 1])
        return rd_fail(r, "snapshot step %llu comes after step %llu (steps must not go backwards)",
                       (unsigned long long)step, (unsigned long long)p->steps[p->nsteps - 1]);

    size_t newkeys = 0;
    for (size_t i = 0; i < r->nan; i++) {
        if (i < p->nannots && !strcmp(p->annots[i].key, r->an[i].key)) continue;   /* the usual case */
        size_t k = 0;
        while (k < p->nannots && strcmp(p->annots[k].key, r->an[i].key)) k++;
        if (k == p->nannots) newkeys++;
    }
    if (p->nannots + newkeys > VT_MAX_ANNOT)
        return rd_fail(r, "annotations: more than %d distinct keys in one process", VT_MAX_ANNOT);

    /* ---- apply: nothing above changed the process (but for new empty sites) ---- */
    if (r->version >= 2) keep_prev(r);
    apply_annotations(r, step);
    vt_host_read(&p->hostsig, json_object_get(o, "host"));   /* lenient: cannot fail */
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
        /* cumulative counters: the latest record has the largest */
        dv->alloc_calls = u64max(dv->alloc_calls, d->calls);
        dv->failed_calls = u64max(dv->failed_calls, d->failed);
        dv->oom_calls = u64max(dv->oom_calls, d->oom);
        if (d->has_oom) dv->has_oom_total = 1;
        if (d->has_pool_r) dv->pool_reserved = d->pool_r;
        if (d->has_pool_u) dv->pool_used = d->pool_u;
        uint64_t ret = dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0;
        if (ret > dv->retention_max) dv->retention_max = ret;
    }
    if (r->rs->keep_allocs && have_allocs) {
        /* copied before build_oom, which reorders r->ae */
        vt_grow((void **)&p->alists, &p->capalists, p->nalists + 1, sizeof *p->alists);
        vt_alloc_list *al = &p->alists[p->nalists++];
        memset(al, 0, sizeof *al);
        al->seq = seq;
        al->step = step;
        al->time_ns = time_ns;
        al->is_exit = is_exit;
        copy_str(al->trigger, sizeof al->trigger, trigger);
        al->n = r->nae;
        al->rows = vt_xmalloc((r->nae ? r->nae : 1) * sizeof *al->rows);
        if (r->nae)   /* r->ae may be NULL: memcpy(p, NULL, 0) is undefined (UBSan) */
            memcpy(al->rows, r->ae, r->nae * sizeof *al->rows);
    }
    if (is_exit) {
        vt_rsite *s, *t;
        HASH_ITER(hh, p->sites, s, t) s->unfreed_exit = 0;
        p->unfreed_exit_bytes = 0;
        for (size_t i = 0; i < r->nse; i++) {
            vt_rsite *s2 = r->se[i].site ? r->se[i].site : get_site(p, &r->se[i].key, r->se[i].canon);
            s2->unfreed_exit = sat_add(s2->unfreed_exit, r->se[i].live);
            p->unfreed_exit_bytes = sat_add(p->unfreed_exit_bytes, r->se[i].live);
            s2->peak_bytes = u64max(s2->peak_bytes, u64max(r->se[i].live, r->se[i].ipeak));
        }
        p->exited = 1;
        if (po->present) build_oom(r, po, have_allocs, step, seq, time_ns);
        return 0;
    }
    if (po->present) build_oom(r, po, have_allocs, step, seq, time_ns);
    if (!p->nsteps || step > p->steps[p->nsteps - 1]) {
        close_step(p);
        VT_PUSH(p->steps, p->nsteps, p->capsteps, step);
        vt_grow((void **)&p->step_total, &p->captotal, p->nsteps, sizeof *p->step_total);
        p->step_total[p->nsteps - 1] = 0;
        vt_grow((void **)&p->step_time, &p->captime, p->nsteps, sizeof *p->step_time);
    }
    uint64_t ord = ++p->nsnapshots;
    uint32_t si = (uint32_t)(p->nsteps - 1);
    uint64_t total = 0;
    /* sum duplicates of a key within the record, then fold into step state */
    size_t nsnap = 0;
    for (size_t i = 0; i < r->nse; i++) {
        site_ent *e = &r->se[i];
        /* version 2 resolved the site already (rd_complete_sites) */
        vt_rsite *s = e->site ? e->site : get_site(p, &e->key, e->canon);
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
    p->step_time[si] = time_ns;
    return 0;
}

/* ---- line loop ---- */

static int rd_record(rd *r, json_t *root)
{
    if (!json_is_object(root)) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (the first line is not a JSON object)");
        return rd_fail(r, "record is not a JSON object (%s)", vt_jtype(root));
    }
    json_t *t = json_object_get(root, "t");
    if (!t) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (the first record has no \"t\")");
        return rd_fail(r, "record has no \"t\" (record type)");
    }
    if (!json_is_string(t)) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (\"t\" is a %s)", vt_jtype(t));
        return rd_fail(r, "t: expected a string, got %s", vt_jtype(t));
    }
    const char *type = json_string_value(t);
    if (r->line == 1) {
        if (strcmp(type, "header") != 0)
            return rd_fail(r, "not a vramtrace snapshot file (the first record is \"%.64s\", not a header)", type);
        return rd_header(r, root);
    }
    if (strcmp(type, "header") == 0) return rd_fail(r, "a second header in the same file");
    if (strcmp(type, "module") == 0) return rd_module(r, root);
    if (strcmp(type, "stack") == 0) return rd_stack(r, root);
    if (strcmp(type, "site") == 0) return rd_site(r, root);
    if (strcmp(type, "snapshot") == 0) return rd_snapshot(r, root);
    return 0;   /* unknown record types are skipped (they were valid JSON) */
}

/* Checks made before the JSON parser's: an empty line, a NUL byte. 0 or -1. */
static int rd_precheck(rd *r, const char *line, size_t len)
{
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r')) k++;
    if (k == len) return rd_fail(r, "empty line");
    if (memchr(line, 0, len)) {
        if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (binary data)");
        return rd_fail(r, "NUL byte in line (binary data)");
    }
    return 0;
}

/* A line that jansson could not parse (message jerr). Always -1. */
static int rd_not_json(rd *r, const char *jerr)
{
    if (r->line == 1) return rd_fail(r, "not a vramtrace snapshot file (line 1 is not valid JSON: %s)", jerr);
    return rd_fail(r, "not valid JSON: %s", jerr);
}

/* One line, parsed on this thread (line r->line). */
static int rd_line(rd *r, const char *line, size_t len)
{
    if (rd_precheck(r, line, len) < 0) return -1;
    /* the tree lives in r->arena and is dropped whole by vt_jarena_end (no
     * json_decref); nothing of it is kept past rd_record (strings are copied) */
    vt_jarena_begin(&r->arena);
    json_t *root = vt_jline_load(line, len, r->e, sizeof r->e);
    int rc = root ? rd_record(r, root) : rd_not_json(r, r->e);
    vt_jarena_end(&r->arena);
    return rc;
}

/* One line parsed by a vt_lineparse worker (vt_lp_fold_fn): the next line. */
static int rd_fold(void *ctx, const char *line, size_t len, json_t *root, const char *jerr)
{
    rd *r = ctx;
    r->line++;
    if (rd_precheck(r, line, len) < 0) return -1;
    return root ? rd_record(r, root) : rd_not_json(r, jerr);
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
    /* lines up to VT_LP_MAX_LINE are parsed by rs->read_threads workers and
     * folded here in order; longer ones (and all, without workers) here */
    vt_lp *lp = rs->read_threads > 0 ? vt_lp_new(rs->read_threads) : NULL;
    while (rc == 0) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        if (nl) {
            size_t ll = (size_t)(nl - (buf + pos));
            if (lp && ll <= VT_LP_MAX_LINE) {
                rc = vt_lp_push(lp, buf + pos, ll, rd_fold, &r) ? -1 : 0;
            } else {
                if (lp) rc = vt_lp_finish(lp, rd_fold, &r) ? -1 : 0;
                if (rc == 0) {
                    r.line++;
                    rc = rd_line(&r, buf + pos, ll);
                }
            }
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
                if (lp && vt_lp_finish(lp, rd_fold, &r)) {
                    rc = -1;
                    break;
                }
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
            if (lp && vt_lp_finish(lp, rd_fold, &r)) {
                rc = -1;
                break;
            }
            r.line++;
            rc = rd_fail(&r, "read error: %s", strerror(errno));
            break;
        }
        if (n == 0) eof = 1;
        len += (size_t)n;
    }
    if (rc == 0 && lp) rc = vt_lp_finish(lp, rd_fold, &r) ? -1 : 0;
    vt_lp_free(lp);
    if (rc == 0 && len > pos) {
        /* a torn last line: the writer was killed mid-record */
        if (r.p) r.p->torn_tail = 1;
        if (rs->verbose)
            rd_note("%s:%llu: ignoring a torn last line (%zu bytes without a newline)", path,
                    (unsigned long long)r.line + 1, len - pos);
    }
    free(buf);
    close(fd);
    if (rc == 0 && !r.p) {
        if (in_dir) {
            /* a process that died (or hit a full disk) before its first
             * record: not a reason to refuse the rest of the folder */
            rd_note("vramtrace: %s: no complete record (skipped)", path);
            free(r.se);
            free(r.de);
            free(r.ae);
            free(r.an);
            free(r.prev);
            free_site_defs(&r);
            vt_jarena_release(&r.arena);
            return 1;
        }
        r.line = 1;
        rc = rd_fail(&r, len ? "no complete record (only a torn line)" : "empty file");
    }
    free(r.se);
    free(r.de);
    free(r.ae);
    free(r.an);
    free(r.prev);
    free_site_defs(&r);
    vt_jarena_release(&r.arena);
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
            /* two copies of one process's stream (a copy taken while it ran, a backup):
             * the fuller one is read, whichever sorts first */
            vt_process *q = rs->procs[i];
            int fuller = p->exited != q->exited ? p->exited > q->exited : p->nsnapshots > q->nsnapshots;
            if (fuller) {
                rs->procs[i] = p;
                p = q;
            }
            rd_note("vramtrace: %s: same process (host %s, pid %llu) as %s, the copy kept (as many records or more); skipped",
                    p->file, p->host, (unsigned long long)p->pid, rs->procs[i]->file);
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
    if (n)   /* qsort(NULL, 0, ...) is undefined (UBSan) */
        qsort(names, n, sizeof *names, cmp_str);
    size_t complete = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            rc = vt_load_file(rs, names[i], 1);
            if (rc == 0) complete++;
            else if (rc > 0) rc = 0;    /* skipped: no complete record */
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && n && !complete) {
        snprintf(rs->err, sizeof rs->err, "%s:0: no snapshot file in the folder has a complete record", path);
        rc = -1;
    }
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
