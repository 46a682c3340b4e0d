/* vt_pyview.h — how a stack with Python frames is shown, and the
 * `--python-only` grouping of sites by their Python frames.
 *
 * A stack's Python frames (docs/snapshot-format.md "stack", key "py") each name
 * the native frame of the interpreter's eval loop (_PyEval_EvalFrameDefault)
 * that runs them. Reports show one interleaved list (native -> Python ->
 * native), innermost first:
 *   - at native frame i, the Python frames whose native_index is i, in order,
 *     in place of that eval frame; Python frames with native_index -1 after the
 *     last native frame;
 *   - in a stack that has Python frames, native frames of the interpreter
 *     itself (eval frames, modules named libpython* or python*), of libffi and
 *     of ctypes (_ctypes*) are left out: they are how Python reached the call,
 *     and the Python frames say it better. In a program that embeds the
 *     interpreter under another name, only its frames named _Py*, Py* or
 *     *vectorcall* are left out. Every other native frame stays (a C extension
 *     such as libtorch between two Python frames is shown).
 * The site's title (the one frame named in summaries, `check` and `diff`) is the
 * innermost Python frame outside vramtrace's own Python package, else the first
 * frame shown. Stacks without Python frames are shown as they are.
 *
 * Units: frame indices. Ownership: views belong to their vt_stack; stacks made
 * by vt_python_only_stack belong to the process (p->stacks). Single-threaded.
 */
#ifndef VT_PYVIEW_H
#define VT_PYVIEW_H

#include "vt_model.h"

/* Builds st->view, st->nview and st->title from st->frames and st->py as
 * described above (replacing an earlier view). Exits on OOM; cannot fail. */
void vt_stack_view(vt_stack *st);

/* Expands every native entry of st->view into its logical frames (inlined calls
 * first, vt_symbolize.h vt_sym_frame_at), leaving out the first st->inline_skip
 * logical frames of frames[0]; st->title follows its frame. Call after
 * vt_stack_view. Exits on OOM; cannot fail. */
struct vt_symbolizer;
void vt_stack_view_inline(vt_stack *st, struct vt_symbolizer *sym);

/* The stack the sites of st are grouped under with --python-only: st itself
 * when it has no Python frames; otherwise the process's stack made of st's Python
 * frames alone (file, function and line; native_index -1; no native frames),
 * interned in p->pyonly_by_key, created on first use and appended to p->stacks
 * (with its view built). Exits on OOM. */
vt_stack *vt_python_only_stack(vt_process *p, vt_stack *st);

/* 1 when f's file lies in vramtrace's own Python package: its folder is named
 * "vramtrace" (".../site-packages/vramtrace/__init__.py", "vramtrace/_torch.py"),
 * else 0. (A user's own script in a folder named vramtrace is taken for it too.) */
int vt_pyframe_is_own(const vt_pyframe *f);

/* 1 when f's file is installed code rather than the program's: under a
 * "site-packages" or "dist-packages" folder (a library: Numba's driver, PyTorch), or
 * the standard library (".../lib/python3.N/..."), else 0. A site's title prefers the
 * program's own frames (vt_stack_view). */
int vt_pyframe_is_installed(const vt_pyframe *f);

#endif /* VT_PYVIEW_H */
