/* vt_hooks.h — what every hook shim shares: the call frame, the bookkeeping after the
 * real call, the export macros and the shim shapes the hook table's rows expand into
 * (vt_hook_table.h, expanded in vt_shims.c).
 *
 * The order every shim follows:
 *   1. make sure its real_ pointer is set (lazy: hooks can run before our
 *      constructor, e.g. from another library's constructor);
 *   2. vt_call_begin: depth guard; on the OUTERMOST call of an allocating function,
 *      capture the stack (before any lock);
 *   3. call the real function; keep its result and errno;
 *   4. record (outermost only, outside every lock except the core's short one);
 *   5. vt_call_end, restore errno, return the real result unchanged.
 * Frees take the record out BEFORE the real free (so a concurrent allocation that gets
 * the same address is not lost) and put it back if the real free fails.
 */
#ifndef VT_HOOKS_H
#define VT_HOOKS_H

#include <errno.h>
#include <stdint.h>
#include "vt_config.h"
#include "vt_state.h"
#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_driver.h"
#include "vt_graph.h"
#include "vt_guard.h"
#include "vt_stkcache.h"
#include "vt_ipc.h"
#include "vt_resolve.h"
#include "vt_stack.h"

#define VT_EXPORT __attribute__((visibility("default")))
/* vramtrace_live_bytes (vt_api.c) by its hidden alias: this copy's own definition,
 * wherever the global scope binds the name. */
uint64_t vt__live_bytes_here(int device) __attribute__((visibility("hidden")));
/* Exports `name` as an alias of the hidden hook vt__h_<name> (defined in the same
 * file), so that internal tables hold the address of OUR function whatever the
 * program's symbol scope says. */
#define VT_EXPORT_ALIAS(name) \
    extern __typeof__(vt__h_##name) name __attribute__((alias("vt__h_" #name), visibility("default")))

/* Device argument of vt_hook_alloc_ok / vt_hook_alloc_done: the device of the context
 * current on this thread (asked of the real driver, cached per thread). -1 is "no
 * device" (host memory that is not tied to one). */
#define VT_DEVICE_CURRENT (-2)

/* Kinds with flags, for the kind column of vt_hook_table.h (VT_KIND_<kind>): packed
 * as VT_KIND_PACK (common/vt_format.h); scripts/hook_table.py shows them as
 * "<kind> (<flag>)". */
#define VT_KIND_HOST_PINNED_REGISTERED VT_KIND_PACK(VT_KIND_HOST_PINNED, VT_FLAG_REGISTERED)
/* An array sized by its logical extent, the driver having given no size
 * (vt_cuda_arrays.c picks it or VT_KIND_ARRAY at run time). */
#define VT_KIND_ARRAY_LOGICAL_SIZE VT_KIND_PACK(VT_KIND_ARRAY, VT_FLAG_LOGICAL_SIZE)
#define VT_KIND_VMM_MULTICAST VT_KIND_PACK(VT_KIND_VMM, VT_FLAG_MULTICAST)

/* Makes sure the hook's real_<name> pointer is set (lazy: a hook can run before our
 * constructor, e.g. from another library's constructor); returns err (the family's
 * "not initialised" code, VT_NOTREADY_RT / _DRV) from the hook when the real function
 * cannot be found. */
#define VT_REAL_OR_RETURN(name, err)                                                      \
    do {                                                                                  \
        if (__builtin_expect(!__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE), 0)) {      \
            vt_preload_init();                                                            \
            vt_resolve_lazy_from(__builtin_return_address(0));                            \
            if (!__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE))                         \
                return err;                                                               \
        }                                                                                 \
    } while (0)

/* A hooked call made inside another hooked call on this thread (the runtime's
 * cudaMalloc calling the driver's cuMemAlloc_v2 through the pointer our
 * cuGetProcAddress wrapper handed out) only forwards (the outermost call records,
 * preload/README.md): when the thread's depth is not 0 and `ready` (the real pointer
 * is set), `return CALL` at once — no depth change (the outer call's depth already
 * covers anything CALL calls back), no errno handling (nothing of ours runs). */
#define VT_NESTED_FORWARD(ready, CALL)                                                    \
    do {                                                                                  \
        if (vt_guard_depth() != 0 && (ready))                                             \
            return CALL;                                                                  \
    } while (0)

/* The exported front of a hook (rows marked FRONT in vt_hook_table.h): a nested call
 * (vt_guard_depth() != 0, see VT_NESTED_FORWARD) jumps straight through
 * vt__fwd_<name> before any register is saved: the real function once resolved
 * (vt_resolve.c sets it with real_<name>, through the hook table's fwd), the hook's
 * body until then (which resolves it and, the call being nested, only forwards);
 * anything else tail-calls the hook's body vt__b_<name>, which this macro declares
 * and the code after it defines (`VT_HOOK_FRONT(...) { body }`). The body runs in the
 * hook's frame (a sibling call), so a stack captured there still has the hook's
 * caller as frame 0; where the compiler does not make it a sibling call,
 * vt_stack_capture_hook's frame check takes the general path. */
/* (The front is not instrumented by ThreadSanitizer, whose function exit hook after
 * the body's call would keep it from being a sibling call; it touches only this
 * thread's depth and an atomic.) */
#define VT_HOOK_FRONT(ret_t, name, PARAMS, ARGS)                                          \
    static __attribute__((noinline)) ret_t vt__b_##name PARAMS;                           \
    vt_##name##_t vt__fwd_##name = vt__b_##name;                                          \
    __attribute__((no_sanitize("thread"))) ret_t vt__h_##name PARAMS                      \
    {                                                                                     \
        if (vt_guard_depth() != 0)                                                        \
            return __atomic_load_n(&vt__fwd_##name, __ATOMIC_ACQUIRE) ARGS;               \
        return vt__b_##name ARGS;                                                         \
    }                                                                                     \
    VT_EXPORT_ALIAS(name);                                                                \
    static __attribute__((noinline)) ret_t vt__b_##name PARAMS

/* The body of a free shim (after its VT_REAL_OR_RETURN): takes the record at addr out
 * before CALL (so a concurrent allocation that gets the same address is not lost)
 * and puts it back when CALL does not return ok (kind: the VT_KIND_ the row frees,
 * which says how to ask the driver whether addr is still allocated). Result and
 * errno are CALL's: the code before CALL keeps errno (vt_call_begin,
 * vt_core_post_free) and the code after it either touches nothing errno-related (the
 * common path) or saves and restores it (vt_hook_free_failed). */
#define VT_FREE_BODY(ret_t, kind, addr, ok, CALL)                                         \
    vt_call c;                                                                            \
    vt_taken t;                                                                           \
    vt_call_begin(&c, 0);                                                                 \
    uint64_t tk = vt_hook_free_begin(&c, (uint64_t)(addr), &t);                           \
    ret_t r = CALL;                                                                       \
    vt_hook_free_end(tk, &t, r == (ok), (uint64_t)(addr), kind);   /* keeps errno */     \
    vt_call_end(&c);                                                                      \
    return r

/* The body of a shim that records no allocation itself (after its VT_REAL_OR_RETURN):
 * forwards CALL under the depth guard (hooked calls the driver makes inside it are
 * not the program's) and, when this is the outermost hooked call with tracking on
 * and CALL returned ok, runs the statement AFTER (`(void)0` for none). Result and
 * errno are CALL's. */
#define VT_PASS_BODY(ret_t, ok, CALL, AFTER)                                              \
    VT_NESTED_FORWARD(1, CALL);                                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 0);                                                                 \
    ret_t r = CALL;                                                                       \
    int e = errno;                                                                        \
    if (c.rec && r == (ok))                                                               \
        AFTER;                                                                            \
    vt_call_end(&c);                                                                      \
    errno = e;                                                                            \
    return r

typedef struct vt_call {
    int      outer;     /* outermost hooked call on this thread                   */
    int      rec;       /* outer and tracking on: this call records               */
    int      err;       /* errno to return with                                   */
    uint32_t stack;     /* stack id captured before the real call (allocations)   */
} vt_call;

/* Out of line: the stack store is out of memory (vt_stack_capture_hook returned
 * UINT32_MAX): latches the tracker off and returns 0 (no stack). */
uint32_t vt_hook_capture_oom(void);

/* Fork steps of the stack capture (vt_hooks_cancel.c), called by vt_lifecycle.c's
 * pthread_atfork handlers. prepare: LAST of the prepare steps, with the writer's, the
 * core's and the stack store's locks held: gives captures in progress on other threads
 * a short, bounded time to leave libunwind and makes new ones wait for the fork
 * (vt_cancel_fork_settle), so that the child is rarely one that must go without
 * stacks. parent: lets them go on. child: FIRST of the child steps: a child forked
 * while some capture was inside libunwind records without stacks
 * (vt_hook_fork_nostacks). */
void vt_hooks_cancel_fork_prepare(void);
/* For the re-linker (vt_relink.c): our pthread_cancel and the C library's (NULL when
 * not found yet). */
void vt_hooks_cancel_target(void **hook, void **real);
void vt_hooks_cancel_fork_parent(void);
void vt_hooks_cancel_fork_child(void);

/* Lazy initialisation (constructor may not have run yet). Cheap after the first.
 * Touches no large buffer, opens no descriptor. */
void vt_preload_init(void);
/* The process's first hooked CUDA call (or API call): vt_preload_init, then the
 * core's ring, libunwind and Python detection, then hooks record. While another
 * thread activates, waits for it (at most 200 ms, once: it may need the loader lock
 * this thread holds), then returns; while a frame of this thread below the caller
 * activates (a nested call, a signal handler), returns at once: the caller then
 * forwards. Cheap after the first (one load). Keeps errno. */
void vt_preload_activate(void);
/* An allocating hook forwarded unrecorded because activation was still in progress
 * (counted only then). vt_preload_missed_count: how many, for the exit warning. */
void vt_preload_missed(void);
uint64_t vt_preload_missed_count(void);

/* The bodies of vramtrace_step and vramtrace_snapshot(label) (vt_api.c), for the
 * other front doors of the library (the NVTX injection, vt_nvtx.c): same contracts. */
void vt_api_step(void);
int  vt_api_snapshot(const char *label);
/* Fork child (one thread): the NVTX marks' rate bound and count of marks not written
 * start over (the parent's are the parent's to say). */
void vt_nvtx_fork_child(void);

/* Looks up the C library's _exit and _Exit behind ours (vt_hooks_exit.c), at start-up,
 * so the hooks make no loader call. */
void vt_hooks_exit_init(void);
/* Looks up the C library's pipe2 behind ours (vt_hooks_fd.c), at start-up, so that
 * libunwind's pipe2 makes no loader call. */
void vt_hooks_fd_init(void);
extern int vt__preload_ready;   /* atomic: 2 once vt_preload_init finished */

/* Captures the stack for an allocation (VRAMTRACE_DEPTH frames, from the return
 * address into the hook's caller; docs/snapshot-format.md "stack"); 0 when the depth
 * is 0 or nothing was captured. A macro, not a function: unw_backtrace must be called
 * from the hook's own frame, so that the hook is the only frame of ours libunwind
 * walks (vt_stack_capture_hook checks that and falls back otherwise). First the
 * thread's stack cache (capture/vt_stkcache.h) is asked with the hook's return
 * address and CFA (the hooks keep frame pointers: CFA = frame address + 16); on a miss
 * the hook unwinds and may fill an entry. The pc buffer is a block-scope VLA of
 * depth + 1 words (<= 2 KiB), released before the real call.
 * Keeps errno; ep is &errno (taken once by the hook: __errno_location is const, so
 * the compiler reuses it for the hook's own errno save after the real call). */
#define VT_HOOK_CAPTURE(out, ep)                                                        \
    do {                                                                              \
        int vt__d = vt_state_depth();                                                 \
        (out) = 0;                                                                    \
        if (vt__d > 0) {                                                              \
            int *vt__ep = (ep), vt__e = *vt__ep;                                      \
            uintptr_t vt__ra = (uintptr_t)__builtin_return_address(0);               \
            uintptr_t vt__cfa = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *); \
            uint32_t vt__id = vt_stkc_lookup(vt__ra, vt__cfa, vt__d); \
            if (!vt__id) {                                                            \
                uintptr_t vt__pcs[vt__d + 1];                                         \
                int vt__n = vt_stack_unwind_here(vt__pcs, vt__d + 1);                 \
                vt__id = vt_stack_capture_hook(vt__pcs, vt__n, vt__d);                \
                if (vt__n == vt__d + 1 && vt__id != UINT32_MAX)                        \
                    vt_stkc_fill(vt__ra, vt__cfa, vt__pcs, vt__n, vt__d, vt__id); \
            }                                                                         \
            (out) = __builtin_expect(vt__id == UINT32_MAX, 0) ? vt_hook_capture_oom() \
                                                              : vt__id;               \
            *vt__ep = vt__e;                                                          \
        }                                                                             \
    } while (0)

/* Depth guard, and on the outermost call of an allocating hook (capture = 1) the
 * stack. Always inlined into the hook (see VT_HOOK_CAPTURE): a helper that calls it
 * must be always_inline too, or the capture takes the slower general path. */
static inline __attribute__((always_inline)) void vt_call_begin(vt_call *c, int capture)
{
    /* one load: initialised (vt_core_hooks_ready after vt__preload_ready == 2) and
     * tracking on */
    if (__builtin_expect(vt_core_hooks_record(), 1)) {
        c->outer = vt_guard_enter();
        c->rec = c->outer;
    } else {
        /* Returns at once while another thread initialises (waiting could deadlock on
         * the loader lock): this call then forwards without recording, rather than
         * read half-loaded settings or a stack store not yet set up. */
        vt_preload_activate();
        c->outer = vt_guard_enter();
        c->rec = c->outer && vt_core_hooks_record();
        if (capture && c->outer && !c->rec)
            vt_preload_missed();
    }
    c->stack = 0;
    if (c->rec && capture)
        VT_HOOK_CAPTURE(c->stack, vt_guard_errno());
}

static inline void vt_call_end(vt_call *c)
{
    (void)c;
    vt_guard_leave();
}

extern int vt__started;                 /* vt_hooks_common.c: vt_hook_start has run   */

/* First allocation call of the process: starts the writer, registers the exit marker.
 * Cheap after the first call. */
void vt_hook_start(void);
/* Fork child: the child's first allocation starts its own writer again. */
void vt_hook_after_fork_child(void);
/* Fork child forked while some thread was inside libunwind (vt_cancel_fork_child):
 * libunwind's locks may be held by a thread that does not exist here, so this process
 * captures no stacks (depth 0: every allocation gets stack 0, and the header says
 * so); its first allocation says so in one warning (a child that only execs prints
 * nothing). Only from the fork-child handler (one thread). */
void vt_hook_fork_nostacks(void);

/* Graph memory (vt_cuda_graph.c). vt_hook_capture_graph: whether stream is capturing
 * (asked of the driver under the depth guard): 1 and *graph, else 0. Keeps errno.
 * vt_hook_captured_alloc: after a successful stream-ordered allocation while some
 * capture is in progress: when stream captures, notes addr as an allocation node of
 * the capture's graph (size bytes on device, the call's stack) and returns 1 (nothing
 * is recorded now); 0 when stream does not capture. Keeps errno.
 * vt_hook_graph_launched: after a successful graph launch on the outermost level:
 * starts the writer if needed and counts the exec's memory nodes (vt_graph_launched). */
int  vt_hook_capture_graph(uint64_t stream, uint64_t *graph);
int  vt_hook_captured_alloc(uint32_t stack, uint64_t addr, uint64_t size, uint64_t stream, int device);
void vt_hook_graph_launched(uint64_t exec, uint64_t stream);

/* After a successful allocating real call on the outermost level with tracking on:
 * records addr as size bytes of kind with the captured stack (an event in the core's
 * ring, vt_core_post_alloc_at). device VT_DEVICE_CURRENT: the current context's
 * device (asked of the real driver, cached per thread); stream: the CUstream of a
 * stream-ordered allocation, else 0. Inline in every allocation hook: the common path
 * makes no call. The caller restores errno (every allocation hook saves it after the
 * real call and puts it back before returning). Nothing here is a cancellation point
 * (the ring event, arithmetic, the driver's context query); the writer start (first
 * allocation only) turns cancellation off itself. */
static inline __attribute__((always_inline)) void vt_hook_alloc_ok(uint32_t stack, int kind,
                                                                    uint64_t addr, uint64_t size,
                                                                    uint64_t stream, int device)
{
    if (__builtin_expect(!__atomic_load_n(&vt__started, __ATOMIC_ACQUIRE), 0))
        vt_hook_start();
    uint64_t ctx;
    int cur = vt_driver_device_current(&ctx);
    if (device == VT_DEVICE_CURRENT)
        device = cur;
    if (kind == VT_KIND_ASYNC) {
        /* a stream-ordered allocation on a capturing stream is an allocation node of
         * the capture's graph: nothing is allocated until that graph launches */
        if (__builtin_expect(vt_graph_captures() > 0, 0) &&
            vt_hook_captured_alloc(stack, addr, size, stream, device))
            return;
        vt_driver_pool_seen(device);
    }
    vt_core_post_alloc_at(addr, size, kind == VT_KIND_ASYNC ? stream : ctx, device, kind, stack);
}
/* After an allocation from pool (a *MallocFromPoolAsync on the outermost level that
 * succeeded): notes the pool on the current context's device, so that the writer
 * samples its reserve (sys/vt_driver.h vt_driver_pool_note). Keeps errno. */
void vt_hook_pool_used(uint64_t pool);

/* After a failed allocating real call on the outermost level: counts the failure;
 * out-of-memory results (oom) write an "oom" snapshot for the first failure of each
 * size class (result: the CUDA error code, api: the hooked function's name). The
 * caller restores errno. */
void vt_hook_alloc_failed(uint32_t stack, const char *api, int kind, int result, int oom,
                          uint64_t size, int device);

/* After an allocating real call on the outermost level: vt_hook_alloc_ok when ok
 * (addr is the new allocation), else vt_hook_alloc_failed. Inline so that the common
 * success path passes six register arguments and no more. */
static inline __attribute__((always_inline)) void vt_hook_alloc_done(const vt_call *c, const char *api, int kind, int ok,
                                      int result, int oom, uint64_t addr, uint64_t size,
                                      uint64_t stream, int device)
{
    if (!c->rec)
        return;
    if (__builtin_expect(ok, 1))
        vt_hook_alloc_ok(c->stack, kind, addr, size, stream, device);
    else
        vt_hook_alloc_failed(c->stack, api, kind, result, oom, size, device);
}

/* Outermost free: hands the free to the core before the real free (the event ring;
 * a synchronous take when the ring is full). Returns the ticket (vt_core_post_free),
 * 0 when nothing was handed over. */
static inline __attribute__((always_inline)) uint64_t vt_hook_free_begin(vt_call *c, uint64_t addr,
                                                                          vt_taken *t)
{
    if (!c->rec || !addr)
        return 0;
    return vt_core_post_free(addr, t);
}
/* After a real free of addr (of kind, as the row says) that failed: asks the driver
 * whether an allocation still starts at addr (for kind array: whether addr is still
 * a live array handle), then puts back what the free took (by its ring ticket, or the
 * synchronous take's copy in *t) unless it is gone. Preserves errno. */
void vt_hook_free_failed(uint64_t ticket, vt_taken *t, uint64_t addr, int kind);
/* After the real free: when it succeeded, one store (vt_core_free_done: the event, or
 * the synchronous take, did all of the bookkeeping). Preserves errno. */
static inline __attribute__((always_inline)) void vt_hook_free_end(uint64_t ticket, vt_taken *t,
                                                                    int ok, uint64_t addr, int kind)
{
    if (__builtin_expect(ok, 1))
        vt_core_free_done(ticket);
    else if (ticket != 0)
        vt_hook_free_failed(ticket, t, addr, kind);
}

/* After a successful cuMemExportToShareableHandle of handle (vt_cuda_ipc.c): for a
 * POSIX file descriptor, notes the export (vt_ipc_export_note) with the digest of the
 * descriptor's (st_dev, st_ino) and the handle's lowest mapped address. Keeps errno. */
void vt_hook_vmm_export(uint64_t handle, const void *shareable, int handle_type);

/* Implicit frees on context teardown: 1 if the calling context-release/reset/destroy
 * at return address ra is the CUDA runtime tearing itself down at exit (records stay
 * "unfreed at exit"), 0 if it is the program's own. */
int vt_hook_is_runtime_teardown(void *ra);

/* ---- shim shapes: one per `shape` of vt_hook_table.h; VT_SHIM_DEFINE expands a row ---- */

#define VT__UNPAREN(...) __VA_ARGS__
#define VT__APPLY(m, ...) m(__VA_ARGS__)

/* The shim's head: a front (FRONT) or a plain exported function (NOFRONT). */
#define VT_SHIM_HEAD_FRONT(ret_t, name, PARAMS, ARGS) VT_HOOK_FRONT(ret_t, name, PARAMS, ARGS)
#define VT_SHIM_HEAD_NOFRONT(ret_t, name, PARAMS, ARGS) \
    VT_EXPORT_ALIAS(name);                              \
    ret_t vt__h_##name PARAMS

/* One row of VT_HOOK_TABLE: its shim, or nothing for HAND rows (written by hand). */
#define VT_SHIM_DEFINE(name, fam, kind, shape, front, ret_t, PARAMS, ARGS, SARGS, note) \
    VT_SHIM_##shape(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)
#define VT_SHIM_HAND(...)

/* ALLOC, SHAPE_ARGS (out, size, stream[, after]): forwards the call unchanged, then,
 * when this is the outermost hooked call with tracking on, records *(out) as `size`
 * bytes of kind on the current context's device (vt_hook_alloc_done: a failure is
 * counted, an out-of-memory failure may write an "oom" snapshot) and, when the call
 * succeeded, runs the statement `after` (optional). size is evaluated after the call
 * (it may read r and the call's outputs). Result and errno are the real call's. */
#define VT_SHIM_ALLOC(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)                 \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT__APPLY(VT_SHIM_ALLOC_BODY, name, fam, kind, ret_t, ARGS, VT__UNPAREN SARGS)    \
    }
#define VT_SHIM_ALLOC_BODY(name, fam, kind, ret_t, ARGS, out, size, stream, ...)          \
    VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 1);                                                                 \
    ret_t r = real_##name ARGS;                                                           \
    if (c.rec) {                                                                          \
        int *vt__ep = vt_guard_errno(), vt__e = *vt__ep;                                  \
        int vt__ok = r == VT_OK_##fam;                                                    \
        vt_hook_alloc_done(&c, #name, VT_KIND_##kind, vt__ok, (int)r, r == VT_OOM_##fam,  \
                           vt__ok ? (uint64_t)(uintptr_t)*(out) : 0, (size),              \
                           (uint64_t)(uintptr_t)(stream), VT_DEVICE_CURRENT);             \
        if (vt__ok) {                                                                     \
            __VA_ARGS__;                                                                  \
        }                                                                                 \
        *vt__ep = vt__e;                                                                  \
    }                                                                                     \
    vt_call_end(&c);                                                                      \
    return r;

/* FREE, SHAPE_ARGS (addr): VT_FREE_BODY around the real call. */
#define VT_SHIM_FREE(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)                  \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                       \
        VT_FREE_BODY(ret_t, VT_KIND_##kind, (uintptr_t)(VT__UNPAREN SARGS), VT_OK_##fam,   \
                     real_##name ARGS);                                                   \
    }

/* FREE_ASYNC, SHAPE_ARGS (addr, stream): a stream-ordered free. On a capturing stream
 * (asked only while some capture is in progress, and only on the outermost call) it
 * frees nothing now: it is a free node of the capture's graph (VT_PASS_BODY, then
 * vt_graph_node_free); otherwise VT_FREE_BODY. */
#define VT_SHIM_FREE_ASYNC(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)            \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                       \
        VT__APPLY(VT_SHIM_FREE_ASYNC_BODY, ret_t, fam, VT_KIND_##kind, real_##name ARGS,     \
                  VT__UNPAREN SARGS)                                                      \
    }
#define VT_SHIM_FREE_ASYNC_BODY(ret_t, fam, kind, CALL, addr, stream)                     \
    uint64_t vt__graph = 0;                                                               \
    if (__builtin_expect(vt_graph_captures() > 0, 0) && vt_guard_depth() == 0 &&          \
        vt_core_hooks_record() &&                                                         \
        vt_hook_capture_graph((uint64_t)(uintptr_t)(stream), &vt__graph) == 1) {          \
        VT_PASS_BODY(ret_t, VT_OK_##fam, CALL,                                            \
                     vt_graph_node_free(vt__graph, (uint64_t)(uintptr_t)(addr)));         \
    }                                                                                     \
    VT_FREE_BODY(ret_t, kind, (uintptr_t)(addr), VT_OK_##fam, CALL);

/* PASS, SHAPE_ARGS (statement): VT_PASS_BODY around the real call. */
#define VT_SHIM_PASS(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)                  \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                       \
        VT_PASS_BODY(ret_t, VT_OK_##fam, real_##name ARGS, VT__UNPAREN SARGS);            \
    }

/* POOL_DESTROY, SHAPE_ARGS (pool): the pool leaves the writer's samples BEFORE the real
 * call, so the writer never asks the driver about a destroyed pool
 * (vt_driver_pool_forget waits for a sample in flight), and comes back when the call
 * fails. Result and errno are the real call's. */
#define VT_SHIM_POOL_DESTROY(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)          \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                       \
        VT_NESTED_FORWARD(1, real_##name ARGS);                                           \
        uint64_t vt__pool = (uint64_t)(uintptr_t)(VT__UNPAREN SARGS);                      \
        vt_call c;                                                                        \
        vt_call_begin(&c, 0);                                                             \
        int vt__dev = vt_driver_pool_forget(vt__pool);                                    \
        ret_t r = real_##name ARGS;                                                       \
        int e = errno;                                                                    \
        if (r != VT_OK_##fam && vt__dev >= 0)                                             \
            vt_driver_pool_note(vt__pool, vt__dev);                                       \
        vt_call_end(&c);                                                                  \
        errno = e;                                                                        \
        return r;                                                                         \
    }

/* RESOLVE, SHAPE_ARGS (pfn): the real resolver first; NULL results and errors are
 * kept; a returned pointer that is a real function we hook becomes its hook
 * (vt_resolve_swap). No depth guard: a resolver records nothing. */
#define VT_SHIM_RESOLVE(name, fam, kind, front, ret_t, PARAMS, ARGS, SARGS)               \
    VT_SHIM_HEAD_##front(ret_t, name, PARAMS, ARGS)                                       \
    {                                                                                     \
        VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                       \
        ret_t r = real_##name ARGS;                                                       \
        void **vt__pfn = (VT__UNPAREN SARGS);                                             \
        if (r == VT_OK_##fam && vt__pfn && *vt__pfn)                                      \
            *vt__pfn = vt_resolve_swap(*vt__pfn);                                         \
        return r;                                                                         \
    }

#endif /* VT_HOOKS_H */
