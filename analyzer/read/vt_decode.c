/* vt_decode.c — snapshot lines into records: the line checks, the record
 * dispatch, the header, module, stack and (version 3) site records, and the
 * typed getters every decoder uses (contract in vt_decode.h).
 */
#include "vt_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_display.h"
#include "vt_fold.h"
#include "vt_format.h"
#include "vt_jline.h"
#include "vt_util.h"

#define VT_MAX_SITE_ID 0xFFFFFFFFll   /* v3: site ids are 1..2^32-1 (the writer's uint32_t) */
#define VT_MAX_FRAMES 1024            /* native or Python frames of one stack record */

int vt_rd_fail(vt_rd *r, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->rs->err, sizeof r->rs->err, "%s:%llu: %s", r->path, (unsigned long long)r->line, msg);
    return -1;
}


/* ---- typed getters: "<field>: <what>" on failure ---- */

int vt_rd_u64(vt_rd *r, const json_t *v, const char *f, uint64_t *out)
{
    return vt_ju64(v, out, r->e, sizeof r->e) < 0 ? vt_rd_fail(r, "%s: %s", f, r->e) : 0;
}

int vt_rd_i64(vt_rd *r, const json_t *v, const char *f, int64_t *out)
{
    return vt_ji64(v, out, r->e, sizeof r->e) < 0 ? vt_rd_fail(r, "%s: %s", f, r->e) : 0;
}

int vt_rd_u64n(vt_rd *r, const json_t *v, const char *f, uint64_t *out, int *has)
{
    *has = 0;
    if (!v || json_is_null(v)) return 0;
    if (vt_rd_u64(r, v, f, out) < 0) return -1;
    *has = 1;
    return 0;
}

int vt_rd_bool(vt_rd *r, const json_t *v, const char *f, int *out)
{
    return vt_jbool(v, out, r->e, sizeof r->e) < 0 ? vt_rd_fail(r, "%s: %s", f, r->e) : 0;
}

const char *vt_rd_str(vt_rd *r, const json_t *v, const char *f, size_t max)
{
    const char *s = vt_jstr(v, max, r->e, sizeof r->e);
    if (!s) vt_rd_fail(r, "%s: %s", f, r->e);
    return s;
}

/* The exporters and reports index by device, so an absurd id must not reach them. */
int vt_rd_device_ok(vt_rd *r, int64_t x, const char *f)
{
    if (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX) return vt_rd_fail(r, "%s: device %lld out of range", f, (long long)x);
    return 0;
}

int vt_rd_device(vt_rd *r, const json_t *v, const char *f, int32_t *out)
{
    int64_t x;
    if (vt_rd_i64(r, v, f, &x) < 0 || vt_rd_device_ok(r, x, f) < 0) return -1;
    *out = (int32_t)x;
    return 0;
}

int vt_rd_kind(vt_rd *r, const json_t *v, const char *f, int32_t *out)
{
    const char *s = vt_rd_str(r, v, f, 31);
    if (!s) return -1;
    int k = vt_kind_from_name(s);
    if (k < 0) return vt_rd_fail(r, "%s: unknown kind \"%s\"", f, s);
    *out = k;
    return 0;
}

int vt_rd_flags(vt_rd *r, const json_t *v, const char *f, int32_t *out)
{
    char where[128];
    size_t i;
    json_t *e;
    if (!json_is_array(v)) return vt_rd_fail(r, "%s: expected an array of flag names, got %s", f, vt_jtype(v));
    *out = 0;
    json_array_foreach(v, i, e) {
        snprintf(where, sizeof where, "%s[%zu]", f, i);
        const char *s = vt_rd_str(r, e, where, 31);
        if (!s) return -1;
        int bit = vt_flag_from_name(s);
        if (!bit) return vt_rd_fail(r, "%s: unknown flag \"%s\"", where, s);
        *out |= bit;
    }
    return 0;
}

const char *vt_rd_field(char *buf, size_t cap, const char *arr, size_t i, const char *key)
{
    snprintf(buf, cap, "%s[%zu]%s%.40s", arr, i, key[0] ? "." : "", key);
    return buf;
}

int vt_rd_stack_of(vt_rd *r, int64_t id, const char *where, vt_stack **out)
{
    *out = vt_process_rawstack(r->p, id);
    if (!*out) return vt_rd_fail(r, "%s: stack %lld is not defined before it is used", where, (long long)id);
    return 0;
}

/* ---- header ---- */

static int rd_header(vt_rd *r, json_t *o)
{
    vt_process *p = vt_xcalloc(1, sizeof *p);
    p->file = vt_xstrdup(r->path);
    r->p = p;   /* owned by r until pushed */
    json_t *v = json_object_get(o, "format");
    if (!v) return vt_rd_fail(r, "not a vramtrace snapshot file (header has no \"format\")");
    if (!json_is_string(v)) return vt_rd_fail(r, "not a vramtrace snapshot file (\"format\" is a %s)", vt_jtype(v));
    if (strcmp(json_string_value(v), VT_FORMAT_NAME) != 0)
        return vt_rd_fail(r, "foreign format \"%.100s\" (expected \"%s\")", json_string_value(v), VT_FORMAT_NAME);
    uint64_t version;
    v = json_object_get(o, "version");
    if (!v) return vt_rd_fail(r, "header has no \"version\"");
    if (vt_rd_u64(r, v, "header.version", &version) < 0) return -1;
    if (version < VT_FORMAT_VERSION_MIN || version > VT_FORMAT_VERSION)
        return vt_rd_fail(r, "unsupported snapshot format version %llu (this vramtrace reads versions %d to %d)",
                       (unsigned long long)version, VT_FORMAT_VERSION_MIN, VT_FORMAT_VERSION);
    r->version = (int)version;
    if (!(v = json_object_get(o, "pid"))) return vt_rd_fail(r, "header has no \"pid\"");
    if (vt_rd_u64(r, v, "header.pid", &p->pid) < 0) return -1;
    if (!(v = json_object_get(o, "start_ns"))) return vt_rd_fail(r, "header has no \"start_ns\"");
    if (vt_rd_u64(r, v, "header.start_ns", &p->start_ns) < 0) return -1;
    int has;
    if (vt_rd_u64n(r, json_object_get(o, "ppid"), "header.ppid", &p->ppid, &has) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(o, "depth"), "header.depth", &p->depth, &has) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(o, "interval_ms"), "header.interval_ms", &p->interval_ms, &has) < 0) return -1;
    const char *s;
    if ((v = json_object_get(o, "host"))) {
        if (!(s = vt_rd_str(r, v, "header.host", VT_MAX_FIELD))) return -1;
        p->host = vt_xdisplay(s);
    } else {
        p->host = vt_xstrdup("");
    }
    if ((v = json_object_get(o, "exe")) && !json_is_null(v)) {
        if (!(s = vt_rd_str(r, v, "header.exe", VT_MAX_FIELD))) return -1;
        p->exe = vt_xdisplay(s);
    }
    if ((v = json_object_get(o, "cmdline")) && !json_is_null(v)) {
        if (!json_is_array(v)) return vt_rd_fail(r, "header.cmdline: expected an array, got %s", vt_jtype(v));
        /* joined with spaces; each argument is bounded by the line, so the
         * joined string is too (at most the line's bytes) */
        char *joined = NULL;
        size_t n = 0, cap = 0, i;
        json_t *a;
        json_array_foreach(v, i, a) {
            if (!(s = vt_rd_str(r, a, "header.cmdline[]", VT_MAX_FIELD))) {
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
        if (vt_rd_i64(r, v, f, dst[i]) < 0) return -1;
        if (i == 0) p->has_rank = 1;
    }
    v = json_object_get(o, "step_range");   /* optional: steps marked by NVTX ranges */
    if (v && !json_is_null(v)) {
        if (!(s = vt_rd_str(r, v, "header.step_range", VT_MAX_FIELD))) return -1;
        free(p->step_range);
        p->step_range = vt_xdisplay(s);
    }
    v = json_object_get(o, "allocator_env");   /* optional: the frameworks' allocator settings */
    if (v && !json_is_null(v)) {
        if (!json_is_object(v)) return vt_rd_fail(r, "header.allocator_env: expected an object, got %s", vt_jtype(v));
        char *joined = NULL;
        size_t n = 0, cap = 0;
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            if (!(s = vt_rd_str(r, e, "header.allocator_env value", VT_MAX_FIELD))) {
                free(joined);
                return -1;
            }
            size_t kl = strlen(k), l = json_string_length(e);
            if (kl > VT_MAX_FIELD) kl = VT_MAX_FIELD;
            vt_grow((void **)&joined, &cap, n + kl + l + 4, 1);
            if (n) { joined[n++] = ','; joined[n++] = ' '; }
            memcpy(joined + n, k, kl);
            n += kl;
            joined[n++] = '=';
            memcpy(joined + n, s, l);
            n += l;
            if (!strcmp(k, "VRAMTRACE_TENSORS") && !strcmp(s, "1")) p->tensors = 1;
        }
        if (joined) {
            joined[n] = 0;
            free(p->alloc_env);
            p->alloc_env = vt_xdisplay(joined);   /* shown, never run */
            free(joined);
        }
    }
    v = json_object_get(o, "restart");   /* optional: written when the job set a restart count */
    if (v && !json_is_null(v)) {
        if (vt_rd_i64(r, v, "header.restart", &p->restart) < 0) return -1;
        p->has_restart = 1;
    }
    return 0;
}

/* ---- module ---- */

static int rd_module(vt_rd *r, json_t *o)
{
    int64_t id;
    uint64_t bias = 0;
    int has_bias;
    const char *path, *bid = "";
    json_t *v;
    if (!(v = json_object_get(o, "id"))) return vt_rd_fail(r, "module has no \"id\"");
    if (vt_rd_i64(r, v, "module.id", &id) < 0) return -1;
    if (!(v = json_object_get(o, "path"))) return vt_rd_fail(r, "module %lld has no \"path\"", (long long)id);
    if (!(path = vt_rd_str(r, v, "module.path", VT_MAX_FIELD))) return -1;
    if ((v = json_object_get(o, "build_id")) && !json_is_null(v) && !(bid = vt_rd_str(r, v, "module.build_id", 255)))
        return -1;
    if (vt_rd_u64n(r, json_object_get(o, "bias"), "module.bias", &bias, &has_bias) < 0) return -1;
    vt_module *m;
    HASH_FIND(hh, r->p->module_by_id, &id, sizeof id, m);
    if (m) return vt_rd_fail(r, "module %lld is defined twice", (long long)id);
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

/* One frame [module_id, offset, function-or-null, ...] into *f (function
 * borrowed from the tree). */
static int rd_frame(vt_rd *r, const json_t *a, size_t i, vt_frame *f)
{
    char fld[96];
    int64_t mid;
    if (!json_is_array(a) || json_array_size(a) < 2)
        return vt_rd_fail(r, "stack.frames[%zu]: expected [module, offset, function], got %s", i,
                       json_is_array(a) ? "a shorter array" : vt_jtype(a));
    snprintf(fld, sizeof fld, "stack.frames[%zu][0] (module id)", i);
    if (vt_rd_i64(r, json_array_get(a, 0), fld, &mid) < 0) return -1;
    snprintf(fld, sizeof fld, "stack.frames[%zu][1] (offset)", i);
    if (vt_rd_u64(r, json_array_get(a, 1), fld, &f->offset) < 0) return -1;
    const json_t *fn = json_array_get(a, 2);
    f->function = NULL;
    if (fn && !json_is_null(fn)) {
        snprintf(fld, sizeof fld, "stack.frames[%zu][2] (function)", i);
        const char *s = vt_rd_str(r, fn, fld, VT_MAX_FIELD);
        if (!s) return -1;
        f->function = (char *)s;
    }
    f->mod = NULL;
    if (mid != -1) {
        HASH_FIND(hh, r->p->module_by_id, &mid, sizeof mid, f->mod);
        if (!f->mod)
            return vt_rd_fail(r, "stack: frame uses module %lld, which is not defined before it", (long long)mid);
    }
    return 0;
}

/* The stack's "py" list (docs/snapshot-format.md "stack"): each entry
 * [file, function, line, native_index] into py[] (strings borrowed from the
 * tree). nfr: the number of raw native frames (native_index is -1 or below it). */
static int rd_pyframes(vt_rd *r, const json_t *arr, size_t nfr, vt_pyframe **out, size_t *nout)
{
    char fld[96];
    *out = NULL;
    *nout = 0;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return vt_rd_fail(r, "stack.py: expected an array, got %s", vt_jtype(arr));
    size_t n = json_array_size(arr);
    if (n > VT_MAX_FRAMES) return vt_rd_fail(r, "stack: more than %d Python frames", VT_MAX_FRAMES);
    if (!n) return 0;
    vt_pyframe *py = vt_xcalloc(n, sizeof *py);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(arr, i);
        const char *file, *fn;
        uint64_t line;
        int64_t ni;
        if (!json_is_array(a) || json_array_size(a) != 4) {
            vt_rd_fail(r, "stack.py[%zu]: expected [file, function, line, native_index], got %s", i,
                    json_is_array(a) ? "an array of another length" : vt_jtype(a));
            goto fail;
        }
        snprintf(fld, sizeof fld, "stack.py[%zu][0] (file)", i);
        if (!(file = vt_rd_str(r, json_array_get(a, 0), fld, VT_MAX_FIELD))) goto fail;
        snprintf(fld, sizeof fld, "stack.py[%zu][1] (function)", i);
        if (!(fn = vt_rd_str(r, json_array_get(a, 1), fld, VT_MAX_FIELD))) goto fail;
        snprintf(fld, sizeof fld, "stack.py[%zu][2] (line)", i);
        if (vt_rd_u64(r, json_array_get(a, 2), fld, &line) < 0) goto fail;
        if (line > INT32_MAX) {
            vt_rd_fail(r, "%s: %llu out of range", fld, (unsigned long long)line);
            goto fail;
        }
        snprintf(fld, sizeof fld, "stack.py[%zu][3] (native_index)", i);
        if (vt_rd_i64(r, json_array_get(a, 3), fld, &ni) < 0) goto fail;
        if (ni < -1 || ni >= (int64_t)nfr) {
            vt_rd_fail(r, "%s: %lld is neither -1 nor the index of one of the stack's %zu frames", fld, (long long)ni, nfr);
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

static int rd_stack(vt_rd *r, json_t *o)
{
    int64_t id;
    json_t *v, *frames;
    if (!(v = json_object_get(o, "id"))) return vt_rd_fail(r, "stack has no \"id\"");
    if (vt_rd_i64(r, v, "stack.id", &id) < 0) return -1;
    if (!(frames = json_object_get(o, "frames"))) return vt_rd_fail(r, "stack %lld has no \"frames\"", (long long)id);
    if (!json_is_array(frames)) return vt_rd_fail(r, "stack.frames: expected an array, got %s", vt_jtype(frames));
    size_t nfr = json_array_size(frames);
    if (nfr > VT_MAX_FRAMES) return vt_rd_fail(r, "stack: more than %d frames", VT_MAX_FRAMES);
    vt_rawstack *raw;
    HASH_FIND(hh, r->p->rawstacks, &id, sizeof id, raw);
    if (raw) return vt_rd_fail(r, "stack %lld is defined twice", (long long)id);
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
    vt_fold_stack(r->p, id, fr, nfr, py, npy);
    return 0;
}

/* ---- site (version 3) ---- */

static void free_site_defs(vt_rd *r)
{
    vt_site_def *d, *tmp;
    HASH_ITER(hh, r->sdefs, d, tmp) {
        HASH_DEL(r->sdefs, d);
        free(d);
    }
    r->sdef_last = NULL;
}

/* Version 3 "site" record: {"t":"site","id":N,"stack":S,"kind":"...","device":D
 * [,"flags":["registered",...]]}.
 * The stack must be defined before it; an id defined again must name the same
 * (stack, kind, device) (a writer that lost track of its definitions repeats them). */
static int rd_site(vt_rd *r, json_t *o)
{
    int64_t id, stack, device;
    json_t *v;
    if (!(v = json_object_get(o, "id"))) return vt_rd_fail(r, "site has no \"id\"");
    if (vt_rd_i64(r, v, "site.id", &id) < 0) return -1;
    if (id < 1 || id > VT_MAX_SITE_ID)
        return vt_rd_fail(r, "site.id: %lld out of range (1 to %lld)", (long long)id, (long long)VT_MAX_SITE_ID);
    if (!(v = json_object_get(o, "stack"))) return vt_rd_fail(r, "site %lld has no \"stack\"", (long long)id);
    if (vt_rd_i64(r, v, "site.stack", &stack) < 0) return -1;
    if (!(v = json_object_get(o, "kind"))) return vt_rd_fail(r, "site %lld has no \"kind\"", (long long)id);
    const char *ks = vt_rd_str(r, v, "site.kind", 31);
    if (!ks) return -1;
    int kind = vt_kind_from_name(ks);
    if (kind < 0) return vt_rd_fail(r, "site.kind: unknown kind \"%s\"", ks);
    if (!(v = json_object_get(o, "device"))) return vt_rd_fail(r, "site %lld has no \"device\"", (long long)id);
    if (vt_rd_i64(r, v, "site.device", &device) < 0) return -1;
    if (device < VT_DEVICE_MIN || device > VT_DEVICE_MAX)
        return vt_rd_fail(r, "site.device: device %lld out of range", (long long)device);
    int32_t flags = 0;
    if ((v = json_object_get(o, "flags")) && vt_rd_flags(r, v, "site.flags", &flags) < 0) return -1;
    vt_stack *canon;
    if (vt_rd_stack_of(r, stack, "site.stack", &canon) < 0) return -1;
    vt_site_def *d;
    HASH_FIND(hh, r->sdefs, &id, sizeof id, d);
    if (d) {
        if (d->key.stack != stack || d->key.kind != kind || d->key.device != (int32_t)device ||
            d->key.flags != flags)
            return vt_rd_fail(r, "site %lld is defined twice, as (stack %lld, kind %s, device %d) and (stack %lld, kind "
                           "%s, device %lld)", (long long)id, (long long)d->key.stack, vt_kind_name(d->key.kind),
                           (int)d->key.device, (long long)stack, ks, (long long)device);
        return 0;   /* the same again: a writer that lost track of its definitions */
    }
    d = vt_xcalloc(1, sizeof *d);   /* zeroed: the key is hashed whole, padding included */
    d->id = id;
    d->key.stack = stack;
    d->key.kind = kind;
    d->key.device = (int32_t)device;
    d->key.flags = flags;
    d->canon = canon;
    HASH_ADD(hh, r->sdefs, id, sizeof d->id, d);
    if (id >= 0 && id < VT_SDEF_DIRECT) {   /* the writer's ids are 1, 2, ...: found by index */
        size_t cap = r->nsdef_by_id;
        if ((size_t)id >= cap) {
            vt_grow((void **)&r->sdef_by_id, &cap, (size_t)id + 1, sizeof *r->sdef_by_id);
            memset(r->sdef_by_id + r->nsdef_by_id, 0, (cap - r->nsdef_by_id) * sizeof *r->sdef_by_id);
            r->nsdef_by_id = cap;
        }
        r->sdef_by_id[id] = d;
    }
    return 0;
}

void vt_rd_release(vt_rd *r)
{
    vt_snaprec_free(&r->rec);
    free(r->sdef_by_id);
    r->sdef_by_id = NULL;
    r->nsdef_by_id = 0;
    free(r->prev);
    r->prev = NULL;
    r->nprev = r->capprev = 0;
    free_site_defs(r);
    vt_rd_carry_release(r);
    vt_jarena_release(&r->arena);
}

/* "gap" record: {"t":"gap","records":N,"first_step":A|null,"last_step":B|null,
 * "first_ns":..,"last_ns":..,"errno":E,"error":"..."} (docs/snapshot-format.md "gap").
 * Every key but records is optional (read as not known). */
static int rd_gap(vt_rd *r, json_t *root)
{
    vt_gap g;
    memset(&g, 0, sizeof g);
    if (vt_rd_u64(r, json_object_get(root, "records"), "records", &g.records) < 0) return -1;
    int has_first = 0, has_last = 0, has;
    if (vt_rd_u64n(r, json_object_get(root, "first_step"), "first_step", &g.first_step, &has_first) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(root, "last_step"), "last_step", &g.last_step, &has_last) < 0) return -1;
    if (has_first != has_last) return vt_rd_fail(r, "gap: first_step and last_step must both be given or both null");
    if (has_first && g.last_step < g.first_step)
        return vt_rd_fail(r, "gap: last_step %llu before first_step %llu", (unsigned long long)g.last_step,
                          (unsigned long long)g.first_step);
    g.has_steps = has_first;
    if (vt_rd_u64n(r, json_object_get(root, "first_ns"), "first_ns", &g.first_ns, &has) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(root, "last_ns"), "last_ns", &g.last_ns, &has) < 0) return -1;
    json_t *e = json_object_get(root, "errno");
    if (e && !json_is_null(e) && vt_rd_i64(r, e, "errno", &g.err) < 0) return -1;
    json_t *t = json_object_get(root, "error");
    if (t && !json_is_null(t)) {
        const char *s = vt_rd_str(r, t, "error", 4096);
        if (!s) return -1;
        vt_display(g.error, sizeof g.error, s);
    }
    vt_process *p = r->p;
    if (p->ngaps == p->capgaps) {
        p->capgaps = p->capgaps ? 2 * p->capgaps : 4;
        p->gaps = vt_xrealloc(p->gaps, p->capgaps * sizeof *p->gaps);
    }
    p->gaps[p->ngaps++] = g;
    p->lost_records += g.records;
    return 0;
}

/* ---- line loop ---- */

static int rd_record(vt_rd *r, json_t *root)
{
    if (!json_is_object(root)) {
        if (r->line == 1) return vt_rd_fail(r, "not a vramtrace snapshot file (the first line is not a JSON object)");
        return vt_rd_fail(r, "record is not a JSON object (%s)", vt_jtype(root));
    }
    json_t *t = json_object_get(root, "t");
    if (!t) {
        if (r->line == 1) return vt_rd_fail(r, "not a vramtrace snapshot file (the first record has no \"t\")");
        return vt_rd_fail(r, "record has no \"t\" (record type)");
    }
    if (!json_is_string(t)) {
        if (r->line == 1) return vt_rd_fail(r, "not a vramtrace snapshot file (\"t\" is a %s)", vt_jtype(t));
        return vt_rd_fail(r, "t: expected a string, got %s", vt_jtype(t));
    }
    const char *type = json_string_value(t);
    if (r->line == 1) {
        /* a record of ours first: the stream's head is missing (a copy of its tail,
         * or the part logrotate's copytruncate left), not a foreign file */
        if (!strcmp(type, "snapshot") || !strcmp(type, "stack") || !strcmp(type, "module") || !strcmp(type, "site") ||
            !strcmp(type, "gap"))
            return vt_rd_fail(r, "no header: the first record is a \"%s\" (the start of the stream is missing: "
                                 "a copy of its tail, or what logrotate's copytruncate left)", type);
        if (strcmp(type, "header") != 0)
            return vt_rd_fail(r, "not a vramtrace snapshot file (the first record is \"%.64s\", not a header)", type);
        return rd_header(r, root);
    }
    if (strcmp(type, "header") == 0) return vt_rd_fail(r, "a second header in the same file");
    if (strcmp(type, "module") == 0) return rd_module(r, root);
    if (strcmp(type, "stack") == 0) return rd_stack(r, root);
    if (strcmp(type, "site") == 0) return rd_site(r, root);
    if (strcmp(type, "snapshot") == 0) return vt_rd_snapshot(r, root);
    if (strcmp(type, "summary") == 0) return vt_rd_summary(r, root);
    if (strcmp(type, "gap") == 0) return rd_gap(r, root);
    return 0;   /* unknown record types are skipped (they were valid JSON) */
}

/* Checks made before the JSON parser's: an empty line, a NUL byte. 0 or -1. */
static int rd_precheck(vt_rd *r, const char *line, size_t len)
{
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r')) k++;
    if (k == len) return vt_rd_fail(r, "empty line");
    if (memchr(line, 0, len)) {
        if (r->line == 1) return vt_rd_fail(r, "not a vramtrace snapshot file (binary data)");
        return vt_rd_fail(r, "NUL byte in line (binary data)");
    }
    return 0;
}

/* A line that jansson could not parse (message jerr). Always -1. */
static int rd_not_json(vt_rd *r, const char *jerr)
{
    if (r->line == 1) return vt_rd_fail(r, "not a vramtrace snapshot file (line 1 is not valid JSON: %s)", jerr);
    return vt_rd_fail(r, "not valid JSON: %s", jerr);
}

/* One line, parsed on this thread (line r->line). */
int vt_rd_line(vt_rd *r, const char *line, size_t len)
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
int vt_rd_parsed(void *ctx, const char *line, size_t len, json_t *root, const char *jerr)
{
    vt_rd *r = ctx;
    r->line++;
    if (rd_precheck(r, line, len) < 0) return -1;
    return root ? rd_record(r, root) : rd_not_json(r, jerr);
}
