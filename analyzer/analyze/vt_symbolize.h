/* vt_symbolize.h — offline symbolization of snapshot frames with elfutils libdw.
 *
 * A frame is (module path, build-id, offset) as docs/snapshot-format.md writes
 * it; offset is an address in the ELF file's own virtual-address space. The
 * module file is opened read-only and reported to a Dwfl at base 0
 * (dwfl_report_elf), its GNU build-id compared with the snapshot's; debug info
 * is found next to it or under /usr/lib/debug by build-id
 * (dwfl_standard_find_debuginfo; DEBUGINFOD_URLS is cleared so nothing is
 * fetched from the network). No program is ever run. Every frame's pc, the
 * innermost included, is a return address (docs/snapshot-format.md "stack"),
 * so offset-1, a byte of the call instruction, is looked up.
 *
 * Inlined calls (DW_TAG_inlined_subroutine) make one physical frame several logical
 * frames (vt_sym_frame_at); a function DIE without a linkage name is named from its
 * enclosing scopes (namespaces, anonymous namespaces, classes) as the demangler
 * would. Fallbacks, in order: the DWARF/ELF answer; the function name the preload wrote;
 * "module+0xoffset". C++ names (Itanium ABI "_Z...") are demangled
 * (vt_demangle.h) into a signature and a name without parameters. A build-id mismatch (the file changed since the run) or an
 * unreadable module skips libdw for that module.
 *
 * Results are cached per (module, offset); strings returned are owned by the
 * symbolizer and live until vt_sym_free. Single-threaded.
 */
#ifndef VT_SYMBOLIZE_H
#define VT_SYMBOLIZE_H

#include <stdint.h>

#include "vt_model.h"

typedef struct vt_symbolizer vt_symbolizer;

typedef struct vt_sym {
    const char *function;   /* NULL if unknown; C++: demangled, without parameters ("ns::Foo::step") */
    const char *signature;  /* NULL if unknown; C++: the demangled signature ("ns::Foo::step(int)");
                               otherwise the same text as function */
    const char *file;       /* source file, NULL if unknown */
    int line;               /* 0 if unknown */
    const char *module;     /* module path, NULL for a frame without module */
    uint64_t offset;        /* as written in the snapshot */
    const char *label;      /* one-line text: "sig (file.c:42)", "sig (libx.so+0x1f2)", "libx.so+0x1f2";
                               Python: "train.py:95 in remember_batch" */
    int python;             /* 1: a Python frame (vt_sym_pyframe): module is "python", offset 0 */
    int inlined;            /* 1: inlined into the next logical frame of the same physical frame */
} vt_sym;

/* Creates a symbolizer; never NULL (exits on OOM). disable_dwarf: use only
 * snapshot names (for tests and --no-symbolize). */
vt_symbolizer *vt_sym_new(int disable_dwarf);
void vt_sym_free(vt_symbolizer *s);

/* Symbolizes frame f: its innermost logical frame (an inlined function's, where the
 * call was inlined). Never fails. */
const vt_sym *vt_sym_frame(vt_symbolizer *s, const vt_frame *f);
/* The logical frames of physical frame f (addr2line -i, perf, heaptrack): 1 + the
 * number of inlined calls at its address (DW_TAG_inlined_subroutine chain). >= 1. */
uint32_t vt_sym_frame_depth(vt_symbolizer *s, const vt_frame *f);
/* Logical frame depth of f, innermost (0) first: depth k >= 1 is the function the
 * logical frame k-1 was inlined into, with the file and line of that call
 * (DW_AT_call_file / DW_AT_call_line); the last is the physical frame's own
 * function. depth >= vt_sym_frame_depth: frame 0. Never fails. */
const vt_sym *vt_sym_frame_at(vt_symbolizer *s, const vt_frame *f, uint32_t depth);

/* The same record for a Python frame: function and signature are the
 * written function, file the written file (both NULL when written as "?"), line
 * (0 unknown), module "python", python 1, label "<basename of file>:<line> in
 * <function>" (":<line>" left out when unknown). Cached by the address of f,
 * which must stay valid and unchanged until vt_sym_free. Never fails. */
const vt_sym *vt_sym_pyframe(vt_symbolizer *s, const vt_pyframe *f);

#endif /* VT_SYMBOLIZE_H */
