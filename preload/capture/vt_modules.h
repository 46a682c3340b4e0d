/* vt_modules.h — which loaded ELF object holds a program counter.
 *
 * Answers pc -> (module id, path, build-id, load bias) with dl_iterate_phdr, caching
 * each object's PT_LOAD range, and dladdr for a function name. Used only while a
 * snapshot is written, never on the hook path (dl_iterate_phdr takes the loader lock);
 * vt_modules_load_range also serves the stack store's start-up (its own text range).
 * Not thread-safe: called under the writer's output lock.
 */
#ifndef VT_MODULES_H
#define VT_MODULES_H

#include <stdint.h>

typedef struct vt_module {
    int       id;          /* unique within the current output file, from 1  */
    uintptr_t lo, hi;      /* [lo, hi) covering the object's PT_LOAD segments */
    uintptr_t bias;        /* dlpi_addr: pc - bias = ELF virtual address      */
    char      build_id[41];/* lowercase hex of NT_GNU_BUILD_ID (cut at 20 B)   */
    int       written;     /* its "module" record is in the current file      */
    char     *path;        /* owned                                           */
} vt_module;

/* Finds the module holding pc, refreshing the cache from dl_iterate_phdr on a miss.
 * Returns NULL when no loaded object holds it (JIT code, unloaded library). */
vt_module *vt_modules_find(uintptr_t pc);

/* Function name dladdr reports for pc when that exported symbol's size covers pc
 * (pointer into the loader's string table, valid while the object stays loaded), or
 * NULL. */
const char *vt_modules_symbol(uintptr_t pc);

/* [*lo, *hi): the addresses the PT_LOAD segments of a dl_iterate_phdr entry cover
 * (*hi == 0 when it has none). Async-signal-unsafe like dl_iterate_phdr itself;
 * thread-safe (reads only info). */
struct dl_phdr_info;
void vt_modules_load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);

/* A new output file begins: every module must be written again. */
void vt_modules_new_file(void);

#endif /* VT_MODULES_H */
