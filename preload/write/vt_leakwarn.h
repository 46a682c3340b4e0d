/* vt_leakwarn.h — the online leak warning: one `vramtrace: possible leak: ...` line per
 * site that crossed the leak threshold (VRAMTRACE_LEAK_STEPS consecutive floor rises,
 * the core's leak detector, track/vt_sites.c) in a collection.
 *
 * The site is named as well as the process can name it without loading anything:
 * the first frame that is not CUDA's own, as "function (module)" (the function from
 * the module's ELF symbol tables, static functions included, else from dladdr; an
 * Itanium C++ name demangled by the process's own __cxa_demangle when loaded, else by
 * a small reader of plain and nested names), else "module+0xoffset"; or, when the
 * stack has Python frames, the innermost one of the program's own code (else the
 * innermost). The analyzer names it with DWARF later (`vramtrace run` repeats it).
 *
 * Called on the writer thread (or the thread writing a snapshot), outside the core
 * lock; takes no lock of ours; writes only to stderr through vt_log.
 */
#ifndef VT_LEAKWARN_H
#define VT_LEAKWARN_H

#include "vt_core.h"

/* One line per site of c with leak_new set (each site once per process: the core
 * sets leak_new only in the collection where it crossed). */
void vt_leakwarn_log(const vt_collect *c);

#endif /* VT_LEAKWARN_H */
