/* vt_pyview.c — interleaved native/Python views and --python-only stacks
 * (contract in vt_pyview.h).
 *
 * Design: a view is an index list built once per stack by vt_analyze_ex; the
 * reports walk it through vt_site_frame. Python frames are bucketed by their
 * native_index (counting sort, stable), so a view costs O(native + Python
 * frames) whatever order the writer used.
 */
#include "vt_pyview.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vt_frames.h"
#include "vt_symbolize.h"
#include "vt_util.h"

int vt_pyframe_is_own(const vt_pyframe *f)
{
    const char *slash = strrchr(f->file, '/');
    if (!slash) return 0;
    size_t dirlen = (size_t)(slash - f->file);
    static const char pkg[] = "vramtrace";
    size_t pl = sizeof pkg - 1;
    if (dirlen < pl || memcmp(slash - pl, pkg, pl) != 0) return 0;
    return dirlen == pl || slash[-(ptrdiff_t)pl - 1] == '/';
}

int vt_pyframe_is_installed(const vt_pyframe *f)
{
    return vt_frames_python_installed(f->file);
}

static int prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Native frame i of a stack with Python frames is how Python reached the call:
 * an eval frame; any frame of an interpreter, libffi or ctypes module; in a
 * program that embeds the interpreter under another name (evalmod[i]: the frame
 * shares a module with an eval frame), a frame the writer named as CPython's
 * (_Py*, Py*, *vectorcall*) — the program's own frames there stay. */
static int glue_frame(const vt_stack *st, uint32_t i, const char *evalmod, const char *evalhit)
{
    const vt_frame *f = &st->frames[i];
    if (evalhit[i]) return 1;
    if (!f->mod) return 0;
    const char *b = vt_basename(f->mod->path);
    if (prefix(b, "libpython") || prefix(b, "python") || prefix(b, "libffi") || prefix(b, "_ctypes")) return 1;
    const char *fn = f->function;
    return evalmod[i] && fn && (prefix(fn, "_Py") || prefix(fn, "Py") || strstr(fn, "vectorcall"));
}

void vt_stack_view(vt_stack *st)
{
    free(st->view);
    st->view = NULL;
    st->nview = 0;
    size_t cap = (size_t)st->nframes + st->npy;
    int32_t *v = vt_xmalloc((cap ? cap : 1) * sizeof *v);
    uint32_t n = 0;
    if (!st->npy) {
        for (uint32_t i = 0; i < st->nframes; i++) v[n++] = (int32_t)i;
        st->view = v;
        st->nview = n;
        st->title = 0;
        return;
    }
    /* buckets: start[i] .. start[i+1] hold the Python frames of native frame i;
     * bucket nframes holds native_index -1 */
    uint32_t nb = st->nframes + 1;
    uint32_t *start = vt_xcalloc((size_t)nb + 1, sizeof *start), *order = vt_xmalloc(st->npy * sizeof *order);
    char *evalhit = vt_xcalloc(st->nframes ? st->nframes : 1, 1), *evalmod = vt_xcalloc(st->nframes ? st->nframes : 1, 1);
    for (uint32_t k = 0; k < st->npy; k++) {
        int32_t ni = st->py[k].native_index;
        uint32_t b = ni < 0 || (uint32_t)ni >= st->nframes ? st->nframes : (uint32_t)ni;
        start[b + 1]++;
    }
    for (uint32_t b = 0; b < nb; b++) start[b + 1] += start[b];
    uint32_t *fill = vt_xmalloc((size_t)nb * sizeof *fill);
    memcpy(fill, start, (size_t)nb * sizeof *fill);
    for (uint32_t k = 0; k < st->npy; k++) {
        int32_t ni = st->py[k].native_index;
        uint32_t b = ni < 0 || (uint32_t)ni >= st->nframes ? st->nframes : (uint32_t)ni;
        order[fill[b]++] = k;
    }
    free(fill);
    /* evalhit: the eval frames; evalmod: frames in a module that holds one (the
     * distinct modules are few: one interpreter) */
    const vt_module **mods = vt_xmalloc(st->npy * sizeof *mods);
    uint32_t nmods = 0;
    for (uint32_t k = 0; k < st->npy; k++) {
        int32_t ni = st->py[k].native_index;
        if (ni < 0 || (uint32_t)ni >= st->nframes) continue;
        evalhit[ni] = 1;
        const vt_module *m = st->frames[ni].mod;
        uint32_t q = 0;
        while (q < nmods && mods[q] != m) q++;
        if (m && q == nmods) mods[nmods++] = m;
    }
    for (uint32_t i = 0; i < st->nframes; i++)
        for (uint32_t q = 0; q < nmods && !evalmod[i]; q++)
            if (st->frames[i].mod == mods[q]) evalmod[i] = 1;
    free(mods);
    for (uint32_t i = 0; i <= st->nframes; i++) {
        for (uint32_t j = start[i]; j < start[i + 1]; j++) v[n++] = -1 - (int32_t)order[j];
        if (i < st->nframes && !glue_frame(st, i, evalmod, evalhit)) v[n++] = (int32_t)i;
    }
    free(start);
    free(order);
    free(evalhit);
    free(evalmod);
    st->view = v;
    st->nview = n;
    /* the innermost Python frame of the program's own code; else the innermost one
     * that is not vramtrace's; else the first frame */
    st->title = n;
    for (uint32_t j = 0; j < n && st->title == n; j++)
        if (v[j] < 0 && !vt_pyframe_is_own(&st->py[-1 - v[j]]) && !vt_pyframe_is_installed(&st->py[-1 - v[j]]))
            st->title = j;
    for (uint32_t j = 0; j < n && st->title == n; j++)
        if (v[j] < 0 && !vt_pyframe_is_own(&st->py[-1 - v[j]]))
            st->title = j;
    if (st->title == n)
        st->title = 0;
}

void vt_stack_view_inline(vt_stack *st, vt_symbolizer *sym)
{
    size_t cap = 0;
    for (uint32_t j = 0; j < st->nview; j++)
        cap += st->view[j] >= 0 ? vt_sym_frame_depth(sym, &st->frames[st->view[j]]) : 1;
    if (cap == st->nview && !st->inline_skip) return;   /* nothing inlined */
    int32_t *v = vt_xmalloc((cap ? cap : 1) * sizeof *v);
    uint32_t n = 0, title = st->nview;
    for (uint32_t j = 0; j < st->nview; j++) {
        if (j == st->title) title = n;
        int32_t e = st->view[j];
        if (e < 0) {
            v[n++] = e;
            continue;
        }
        uint32_t depth = vt_sym_frame_depth(sym, &st->frames[e]);
        uint32_t from = e == 0 && st->inline_skip < depth ? st->inline_skip : 0;
        for (uint32_t d = from; d < depth && d < 128; d++) v[n++] = VT_VIEW_MAKE(e, d);
    }
    free(st->view);
    st->view = v;
    st->nview = n;
    st->title = title < n ? title : 0;
}

vt_stack *vt_python_only_stack(vt_process *p, vt_stack *st)
{
    if (!st->npy) return st;
    size_t keylen = 0;
    for (uint32_t k = 0; k < st->npy; k++)
        keylen += strlen(st->py[k].file) + 1 + strlen(st->py[k].function) + 1 + sizeof st->py[k].line;
    char *key = vt_xmalloc(keylen), *o = key;
    for (uint32_t k = 0; k < st->npy; k++) {
        size_t l = strlen(st->py[k].file) + 1;
        memcpy(o, st->py[k].file, l);
        o += l;
        l = strlen(st->py[k].function) + 1;
        memcpy(o, st->py[k].function, l);
        o += l;
        memcpy(o, &st->py[k].line, sizeof st->py[k].line);
        o += sizeof st->py[k].line;
    }
    vt_stack *g;
    HASH_FIND(hh, p->pyonly_by_key, key, keylen, g);
    if (g) {
        free(key);
        return g;
    }
    g = vt_xcalloc(1, sizeof *g);
    g->index = (uint32_t)p->nstacks;
    g->frames = NULL;
    g->nframes = 0;
    g->npy = st->npy;
    g->py = vt_xcalloc(st->npy, sizeof *g->py);
    for (uint32_t k = 0; k < st->npy; k++) {
        g->py[k].file = vt_xstrdup(st->py[k].file);
        g->py[k].function = vt_xstrdup(st->py[k].function);
        g->py[k].line = st->py[k].line;
        g->py[k].native_index = -1;
    }
    g->key = key;
    g->keylen = keylen;
    g->group = g;
    g->allocator = st->allocator;   /* the first member's: its Python line is the same */
    vt_stack_view(g);
    HASH_ADD_KEYPTR(hh, p->pyonly_by_key, g->key, g->keylen, g);
    VT_PUSH(p->stacks, p->nstacks, p->capstacks, g);
    return g;
}
