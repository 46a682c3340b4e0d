/* vt_resolve.h — where the real CUDA functions come from, and which pointer a
 * resolver may hand out.
 *
 * Every hooked function has one typed `real_` pointer and one row of vt__hooks[]
 * {exported name, &real_, hook, front}, both generated from its row of the hook table
 * (vt_hook_table.h). Reals are found by
 * dlsym(RTLD_NEXT) at start-up (program linked against libcudart/libcuda), or, when
 * the library was dlopen'ed privately (cudart's own dlopen of libcuda.so.1, Python
 * ctypes), from the object a resolver's result lives in: the first time a resolver
 * returns a pointer we have no real for, that object is opened with RTLD_NOLOAD and
 * the missing reals are looked up in it. A hook called with its slot still empty (a
 * library dlopen'ed RTLD_LOCAL that links the runtime or driver itself, e.g. a Python
 * extension module, binds to our hook through the global scope) looks in the caller's
 * own scope, then in every loaded libcudart.so* / libcuda.so* (vt_resolve_lazy_from).
 * Slots are written with atomic stores of the
 * same value from any thread: no lock, so a resolver call from inside the loader (a
 * constructor calling dlsym) cannot deadlock.
 *
 * vt_resolve_swap implements the resolver rule (docs/cuda-interposition.md, preload/README.md): call the real resolver first, keep
 * NULL and errors, and replace the result only when it IS the real function a hook
 * wraps (pointer equality with the real exported symbol, e.g. cuMemAlloc_v2 or
 * cuMemAllocAsync_ptsz), so legacy ABIs and per-thread-stream variants pass through.
 */
#ifndef VT_RESOLVE_H
#define VT_RESOLVE_H

#include <stddef.h>

typedef struct vt_hook_entry {
    const char *name;    /* exported symbol of the real library ("cuMemAlloc_v2")  */
    void      **real;    /* its real_ pointer (vt_hook_table.c)                     */
    void       *hook;    /* our function with the same ABI                         */
    void      **fwd;     /* hooks with a front (VT_HOOK_FRONT): where its nested calls
                            go, set to the real function with it; else NULL         */
} vt_hook_entry;

/* One row per row of VT_HOOK_TABLE, in its order (vt_hook_table.c). */
extern const vt_hook_entry vt__hooks[];
extern const size_t        vt__n_hooks;
/* vt_resolve_lazy_from pins newly found libraries only while the table has at most
 * this many rows. */
#define VT_RESOLVE_MAX_HOOKS 256

/* The real dlsym (glibc's), found with dlvsym. */
extern void *(*vt__real_dlsym)(void *, const char *);

/* Finds the real dlsym and every real reachable through RTLD_NEXT (no look-up at all
 * while no loaded object but ours may define a name: vt_gnuhash_may_define).
 * Idempotent. */
void vt_resolve_init(void);

/* Slow path of a shim whose real_ is NULL: vt_resolve_init (RTLD_NEXT for every
 * empty slot), then fills the empty slots from the scope of the object holding
 * `caller` (the hook's return address; NULL: skipped), then from every loaded
 * libcudart.so* / libcuda.so*. Inside a dl_iterate_phdr callback only the last, from
 * those libraries' symbol tables read directly (no loader call; vt_gnuhash.h). For a library dlopen'ed RTLD_LOCAL that links the
 * runtime or driver: its calls bind to our hooks, its real functions are in no scope
 * RTLD_NEXT searches. Preserves errno. Thread-safe (atomic slot stores). */
void vt_resolve_lazy_from(void *caller);

/* The re-linker's question (vt_relink.c): row is a hook whose exported name an
 * object's relocation refers to, real the function that object binds (or would bind)
 * it to. Fills row's empty real_ slot with real (pinning real's library, as
 * vt_resolve_lazy_from does) and returns row's hook when the slot then holds real;
 * NULL when real is one of ours or the slot holds another function. Thread-safe. */
void *vt_resolve_adopt(const vt_hook_entry *row, void *real);

/* Returns the hook to hand out instead of p, or p itself (see the file comment).
 * p may be NULL. Preserves errno. Thread-safe. */
void *vt_resolve_swap(void *p);

/* The C library's own `name` behind ours (the libc functions libvramtrace interposes:
 * pthread_cancel, __register_atfork): dlvsym(RTLD_NEXT, name, v) for each of the
 * nversions versions in order, then the unversioned next one (another C library).
 * Cached in *cache (atomic; the first non-NULL answer stays). NULL when there is none.
 * Preserves errno. Thread-safe, and not sanitizer-instrumented: a sanitizer runtime
 * registers its fork handlers through our __register_atfork while it initialises. */
void *vt_resolve_next_libc(void **cache, const char *name, const char *const *versions, size_t nversions);

#endif /* VT_RESOLVE_H */
