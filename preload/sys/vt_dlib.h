/* vt_dlib.h — a shared library the preload needs only once a process uses CUDA,
 * loaded with dlopen when first needed instead of linked: a process that never
 * calls CUDA maps none of it (nor what it links in turn).
 *
 * A wrapper (one file per library: write/vt_zstd.c, capture/vt_libelf.c,
 * capture/vt_libunwind.c) lists the functions it uses as a vt_dlib_fn table and
 * calls them through the pointers vt_dlib_load fills. The tables are const (their
 * relocations land on pages the loader writes anyway, not on more of ours). Loading takes the loader's
 * locks: never inside a dl_iterate_phdr callback (vt_guard_in_iterate) nor with a
 * lock of ours held that a thread inside dlopen could wait for.
 */
#ifndef VT_DLIB_H
#define VT_DLIB_H

#include <stddef.h>

typedef struct vt_dlib_fn {
    const char *name;   /* the symbol, as the library exports it      */
    void      **slot;   /* where its address goes (NULL until loaded) */
} vt_dlib_fn;

typedef struct vt_dlib {
    const char       *soname;   /* e.g. "libzstd.so.1"                        */
    const char       *what;     /* what goes without it, for the one log line */
    const vt_dlib_fn *fns;
    size_t            n;
    int              *state;    /* vt_dlib.c's (atomic; 0 = not tried)        */
} vt_dlib;

/* Loads l once (dlopen RTLD_NOW | RTLD_LOCAL, then dlsym of every function of its
 * table). Returns 0 when every slot is filled; -1 when the library or one of its
 * functions is missing: then every slot stays NULL, one "vramtrace:" warning says
 * what goes without it, and later calls return -1 at once (latched); 1 when another
 * thread of this process is loading it: no wait, which could deadlock on the loader's
 * lock; the caller tries again later or goes without. In a fork child whose parent
 * was loading it, the child loads it itself.
 * Thread-safe; keeps errno; the program's pending dlerror() message is the caller's
 * business (vt_dlerr_save). Cheap after the first call (one load). */
int vt_dlib_load(const vt_dlib *l);

/* 1 once l is loaded (its slots filled), else 0. Any thread; async-signal-safe. */
static inline int vt_dlib_ready(const vt_dlib *l)
{
    return __atomic_load_n(l->state, __ATOMIC_ACQUIRE) == 2;
}

#endif /* VT_DLIB_H */
