/* vt_allocators.h — frames of the caching allocators and memory pools of the
 * frameworks (docs/allocators.md): a site whose stack runs through one is a segment
 * or pool block that allocator reserved from CUDA, not one tensor, and is named by
 * the first frame outside it.
 *
 * The table (vt_allocators.c) matches demangled C++ function names (from the
 * symbolizer, vt_symbolize.h) by namespace/class prefix, Cython function names by
 * their mangled module part, and Python frames by file path; each row names its
 * allocator for the report ("the PyTorch caching allocator"). Pure functions of
 * the names; single-threaded callers only where the symbolizer is involved.
 */
#ifndef VT_ALLOCATORS_H
#define VT_ALLOCATORS_H

#include "vt_model.h"
#include "vt_symbolize.h"

/* The allocator a native function name (demangled, as vt_sym.function) belongs to:
 * an index for vt_allocator_name, or -1 (also for NULL). */
int vt_allocator_of_function(const char *function);

/* The same for a Python frame's file (co_filename as written), or -1. */
int vt_allocator_of_pyfile(const char *file);

/* "the PyTorch caching allocator", ...; "" for an index out of range. */
const char *vt_allocator_name(int a);

/* 1 when allocator a hands out blocks inside memory it reserved from CUDA (a cache
 * or pool: its sites are segments that hide tensors), 0 when it calls CUDA once
 * per buffer (its frames are a wrapper; out of range: 0). */
int vt_allocator_segments(int a);

/* Sets st->allocator (the allocator of the innermost allocator frame in the view,
 * -1 when none) and, when the title frame is one of the innermost run of allocator
 * frames (native frames from the view's start, up to the first frame outside
 * them), moves the title to the first frame after that run. A Python title (the
 * program's own line) is left as it is. Needs st->view (vt_pyview.h). */
void vt_allocator_title(vt_stack *st, vt_symbolizer *sym);

#endif /* VT_ALLOCATORS_H */
