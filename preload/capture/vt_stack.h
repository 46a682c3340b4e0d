/* vt_stack.h — stack capture (libunwind) and the deduplicating stack store.
 *
 * A stack is up to VT_DEPTH_MAX program counters, innermost first, beginning at the
 * return address into the caller of the hooked CUDA function (frames inside
 * libvramtrace are dropped). Identical stacks get the same id, so an allocation
 * record carries one 32-bit id. Ids start at 1; 0 means "no stack" (depth 0 or
 * capture failed). Entries are immutable and never move or die; a fork child keeps
 * the parent's store, so its ids stay valid there.
 * A stack may also hold the calling thread's Python frames (vt_python.h), innermost
 * first, up to min(depth, 128); they are part of its identity.
 */
#ifndef VT_STACK_H
#define VT_STACK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vt_cancel.h"
#include "vt_fd.h"
#include "vt_python.h"
#include "vt_libunwind.h"


/* Warms libunwind up (its first call may allocate and dl_iterate_phdr) and, when
 * trim_own is 1, finds the address range of the object that holds this code so that
 * vt_stack_capture drops those frames. Unless VRAMTRACE_PYTHON=off it also looks
 * for a CPython in the process (vt_py_init; warns when =on and none is found).
 * Idempotent; call from the constructor, after vt_config_load. */
void vt_stack_init(int trim_own);
/* vt_stack_init in two steps: setup (our address range, Python detection; loader
 * calls, no descriptor, nothing large) and warm (libunwind loaded with dlopen,
 * vt_libunwind.h, and its first walk: its caches and its validation pipe). Setup is
 * idempotent and comes before the first capture. Warm does nothing before setup or
 * inside a dl_iterate_phdr callback (vt_guard_in_iterate: the load takes the loader's
 * locks) or while another thread loads libunwind: call it again later (captures
 * until then have no stack); once done, it does nothing. */
void vt_stack_setup(int trim_own);
void vt_stack_warm(void);

/* Captures the calling thread's stack, at most depth frames after trimming, plus
 * its Python frames (at most min(depth, 128); none when VRAMTRACE_PYTHON=off or no
 * CPython was found by vt_stack_init), and interns it. Must be called with NO lock held (libunwind may take the loader lock).
 * Returns the stack id, or 0 when depth is 0 or nothing was captured.
 * Returns UINT32_MAX if the store is out of memory (the caller latches off).
 * Thread-safe; no stdio; allocation only when a new stack enters the store. */
uint32_t vt_stack_capture(int depth);

/* Runs unw_backtrace(buf, want) for vramtrace, flagged for the pipe2() interposer
 * (vt_fd.h). Cancellation: libunwind may reach a cancellation point (reading its
 * validation pipe, opening files), some under its own or the loader's lock, and a
 * thread cancelled in there would die holding them. Once any thread of the process
 * has been cancelled (or when our pthread_cancel is not the program's), cancellation
 * is disabled around the call; otherwise it is left on, and the interposed
 * pthread_cancel waits for this unwind to end before it cancels anything
 * (vt_cancel.h; the proof is in vt_cancel.c). buf[0] is a pc in the function this is
 * inlined into (unw_backtrace's caller), buf[1] that function's return address, and
 * so on. Returns the number of pcs written (<= want; 0 when libunwind failed or is
 * not loaded).
 * Always inlined, so that "the caller" is the function that calls this, never a
 * helper of ours. Thread-safe; no lock of ours; errno may change (the caller keeps
 * it). */
static inline __attribute__((always_inline)) int vt_stack_unwind_here(uintptr_t *buf, int want)
{
    vt_unw_backtrace_fn bt = __atomic_load_n(&vt__unw_backtrace, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!bt, 0))
        return 0;   /* libunwind not loaded (yet): vt_stack_warm */
    int n;
    vt_fd_unwind_enter();   /* first: covers the count below (vt_cancel_fork_child) */
    if (__builtin_expect(vt_cancel_unguarded_begin(), 1)) {
        n = bt((void **)buf, want);
        vt_cancel_unguarded_end();
    } else {
        int oldcs;
        vt_cancel_guarded_begin();   /* a fork child must know libunwind was running */
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
        n = bt((void **)buf, want);
        pthread_setcancelstate(oldcs, NULL);
        vt_cancel_guarded_end();
    }
    vt_fd_unwind_leave();
    return n;
}

/* The hooks' capture (vt_hooks.h, vt_call_begin): buf[0..n) are the pcs that
 * vt_stack_unwind_here(buf, depth + 1) wrote IN THE HOOK ITSELF, so buf[0] is in
 * the hook (by construction: a macro and always-inlined functions) and buf[1] is the
 * return address into the program's caller: one frame of ours to drop, known in
 * advance (no learning, no slack). Checks that buf[1] is outside libvramtrace (see
 * vt_stack_init's trim_own; before the range is known the check passes); when it is
 * not (a hooked call made through another of our frames) it falls back to
 * vt_stack_capture(depth), which finds our frames by address. Native stacks of at
 * least 8 frames take a leaf fast path (no call on a hit). Adds the Python frames
 * as vt_stack_capture does. Same results, locking and thread safety as
 * vt_stack_capture: the id, 0 for nothing captured, UINT32_MAX when out of memory.
 * depth: 1..VT_DEPTH_MAX; buf is only read. */
uint32_t vt_stack_capture_hook(const uintptr_t *buf, int n, int depth);

/* Interns pcs[0..n) (1 <= n <= depth), captured by the calling thread, with its
 * Python frames as vt_stack_capture adds them (the stack cache's hit with Python,
 * vt_stkcache.h). Same results and thread safety as vt_stack_capture_hook. */
uint32_t vt_stack_finish(const uintptr_t *pcs, int n, int depth);

/* 1 when pc lies in libvramtrace (the range vt_stack_setup found with trim_own; 0
 * before that, or without trimming). Any thread. */
int vt_stack_own_pc(uintptr_t pc);

/* Interns pcs[0..n) (n <= VT_DEPTH_MAX; pcs may be NULL when n is 0). Returns the
 * id (>= 1; an empty stack also gets one), or UINT32_MAX when out of memory.
 * Thread-safe, lock-free when the stack is already known. */
uint32_t vt_stack_intern(const uintptr_t *pcs, int n);

/* pthread_atfork handlers: the store's insert lock is held across fork (taken last,
 * after the writer's and the core's), so a child forked while another thread was
 * inserting a stack does not inherit a lock that nobody will release. The child
 * keeps the parent's store. */
void vt_stack_fork_prepare(void);
void vt_stack_fork_parent(void);
void vt_stack_fork_child(void);

/* Interns pcs[0..n) plus Python frames py[0..npy) (npy <= VT_DEPTH_MAX; py may
 * be NULL when npy is 0). Same results and thread safety as vt_stack_intern. */
uint32_t vt_stack_intern_py(const uintptr_t *pcs, int n, const vt_py_frame *py, int npy);

/* The Python frames of an id, innermost first: *py (process lifetime, read-only;
 * describe them with vt_py_describe) and *npy (0 when none). Returns 0, or -1 for
 * an unknown id (0 included). Thread-safe. */
int vt_stack_get_py(uint32_t id, const vt_py_frame **py, int *npy);

/* Looks an id up. On success sets *pcs (valid for the process lifetime, read-only)
 * and *n and returns 0; returns -1 for an unknown id (0 included). Thread-safe. */
int vt_stack_get(uint32_t id, const uintptr_t **pcs, int *n);

/* Number of distinct stacks stored, and the bytes the store uses. */
uint32_t vt_stack_count(void);
size_t   vt_stack_bytes(void);

#endif /* VT_STACK_H */
