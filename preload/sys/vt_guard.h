/* vt_guard.h — per-thread hook depth: the OUTERMOST hooked call on a thread records.
 *
 * Design: with the shared runtime, cudaMalloc (hooked) calls the driver's cuMemAlloc_v2
 * through a pointer the runtime resolved via our cuGetProcAddress wrapper, so the driver
 * hook fires too. The outermost hooked call records, inner calls only
 * forward. Each hook increments the thread's depth on entry and restores it on exit;
 * "outer" means the depth was 0 on entry. The depth is initial-exec TLS so reading it
 * never allocates or takes the loader lock (libvramtrace is always loaded at start-up
 * through LD_PRELOAD or a link, so the static TLS block exists).
 *
 * Thread safety: per thread by construction. Async-signal-safe.
 */
#ifndef VT_GUARD_H
#define VT_GUARD_H

#include <stdint.h>

/* Per-thread state of the hooks (defined in vt_guard.c). */
typedef struct vt_tls {
    int      depth;        /* nesting of hooked calls on this thread (0 = none)  */
    int      tid;          /* cached gettid(), 0 until first use                 */
    uint64_t ctx;          /* last CUcontext seen (vt_driver_device_current)    */
    int      ctx_device;   /* its device                                         */
    uint32_t ctx_gen;      /* vt__ctx_gen when cached (vt_driver.h)              */
    int      unwind;       /* libunwind running for vramtrace (vt_fd.h)          */
    int     *errno_ptr;    /* &errno of this thread, 0 until first use           */
    int      core;         /* > 0 while this thread takes or holds the core lock  */
    int      no_sync;      /* > 0: a client call made inside a hook (vt_api.c):
                              the core applies no ring events for it             */
    int      iterate;      /* > 0 inside dl_iterate_phdr (vt_hooks_dl.c): the
                              loader's write lock is held, its load lock must not
                              be taken                                            */
    int      writing;      /* > 0 while this thread takes or holds the writer's
                              output or collection lock (write/vt_writer.c)       */
    char    *dlerr;        /* the program's dlerror() message kept across our own
                              look-ups (vt_hooks_dl.c), malloc'ed; NULL: none     */
    char    *dlerr_shown;  /* the last kept message dlerror() returned (freed at
                              the next call, as glibc frees its own)              */
    uint64_t lock_waits;   /* waits for the core lock on this thread, their      */
    uint64_t lock_waits_over_1ms; /* ... count over 1 ms, longest and total (ns)   */
    uint64_t lock_wait_max_ns;    /* (vt_core_lock_waits)                          */
    uint64_t lock_wait_sum_ns;
    struct vt_stkc *stkc;  /* this thread's stack cache (capture/vt_stkcache.h): NULL
                              until its first fill, VT_STKC_OFF when it has none   */
    struct vt_py_cache *pyc; /* this thread's Python capture cache (capture/vt_python.h,
                              owned by capture/vt_stack.c): NULL until its first
                              Python capture, (void *)1 when it has none             */
} vt_tls;

extern __thread vt_tls vt__tls __attribute__((tls_model("initial-exec")));

/* Enters a hooked call. Returns 1 when this is the outermost hooked call on the
 * thread (it records), 0 when nested (it only forwards). Pair with vt_guard_leave. */
static inline int vt_guard_enter(void)
{
    return vt__tls.depth++ == 0;
}

/* Leaves a hooked call entered with vt_guard_enter. */
static inline void vt_guard_leave(void)
{
    vt__tls.depth--;
}

/* 1 while this thread is inside dl_iterate_phdr (its callback runs with the loader's
 * write lock held: taking the loader's load lock or its TLS lock there, as dlopen,
 * dladdr, dlsym and pthread_create do, deadlocks with a thread inside dlopen). */
static inline int vt_guard_in_iterate(void)
{
    return vt__tls.iterate > 0;
}

/* Current depth (0 = no hooked call active on this thread). */
static inline int vt_guard_depth(void)
{
    return vt__tls.depth;
}

/* This thread's kernel id (gettid), cached per thread (inline: every allocation). */
int vt_guard_tid_slow(void);
static inline int vt_guard_tid(void)
{
    int t = vt__tls.tid;
    return __builtin_expect(t != 0, 1) ? t : vt_guard_tid_slow();
}

/* &errno of this thread (glibc's __errno_location), cached per thread: the address
 * never changes during a thread's life (a fork child's thread keeps it). Inline: every
 * allocation hook saves and restores errno around its bookkeeping. */
int *vt_guard_errno_slow(void);
static inline int *vt_guard_errno(void)
{
    int *p = vt__tls.errno_ptr;
    return __builtin_expect(p != 0, 1) ? p : vt_guard_errno_slow();
}

/* Fork child: the calling thread's cache holds the parent's tid. */
void vt_guard_after_fork_child(void);

#endif /* VT_GUARD_H */
