/* vt_cancel.h — unwinding with cancellation left on, made safe by pthread_cancel.
 *
 * The capture calls unw_backtrace on the program's thread. libunwind may reach a
 * cancellation point in there (read() of its validation pipe, open() of a file on
 * some configurations), some under its own or the loader's lock: a thread cancelled
 * there would die holding them. The capture disables cancellation around an unwind
 * only once the process has cancelled a thread, and keeps the common path safe
 * instead: libvramtrace exports pthread_cancel (vt_hooks_cancel.c), which
 * announces every cancel and waits until no unguarded unwind is in progress before
 * passing the cancel on. The argument, and what it does not cover, is at the top of
 * vt_cancel.c.
 *
 * Thread safety: everything here is thread-safe and lock-free; the fast path is two
 * atomic read-modify-writes and two loads.
 */
#ifndef VT_CANCEL_H
#define VT_CANCEL_H

/* vt__cancel_guard bits; any bit set: unwind with cancellation disabled. */
#define VT_CANCEL_UNARMED 1   /* our pthread_cancel is not (known to be) the program's */
#define VT_CANCEL_SEEN    2   /* a thread of this process was cancelled (or is being) */
#define VT_CANCEL_FORKED  4   /* fork child whose forking thread was inside an unwind */
#define VT_CANCEL_FORKING 8   /* a fork's prepare handler is settling: a new unwind waits
                                 until the fork is done (vt_cancel_fork_wait) */

/* Hidden (declared so, not only defined so): the hooks address them directly. */
extern int  vt__cancel_guard __attribute__((visibility("hidden")));   /* atomic;
                                                  starts VT_CANCEL_UNARMED          */
extern long vt__cancel_active __attribute__((visibility("hidden")));  /* atomic:
                                                  unguarded unwinds in progress     */
extern long vt__unwind_guarded __attribute__((visibility("hidden"))); /* atomic:
                                                  guarded unwinds in progress (read
                                                  only by the fork-child handler)   */

/* Begins an unwind. Returns 1 when it may run with cancellation left as it is (it is
 * then counted in vt__cancel_active: end it with vt_cancel_unguarded_end), 0 when the
 * caller must disable cancellation around it (nothing to end). Always inlined: the
 * hooks unwind from their own frame (vt_stack_unwind_here). The order matters (see
 * vt_cancel.c): the count is raised (sequentially consistent read-modify-write)
 * BEFORE the guard is read (sequentially consistent load). */
static inline __attribute__((always_inline)) int vt_cancel_unguarded_begin(void)
{
    __atomic_fetch_add(&vt__cancel_active, 1, __ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&vt__cancel_guard, __ATOMIC_SEQ_CST) != 0, 0)) {
        __atomic_fetch_sub(&vt__cancel_active, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return 1;
}

/* Ends an unwind that vt_cancel_unguarded_begin let run unguarded. */
static inline __attribute__((always_inline)) void vt_cancel_unguarded_end(void)
{
    __atomic_fetch_sub(&vt__cancel_active, 1, __ATOMIC_RELEASE);
}

/* The interposed pthread_cancel is the one the program's calls reach: unguarded
 * unwinds may begin (clears VT_CANCEL_UNARMED; a cancel seen already keeps the guard). */
void vt_cancel_arm(void);

/* Called by the pthread_cancel interposer before it calls the real one: sets
 * VT_CANCEL_SEEN (every later unwind is guarded), then waits, yielding, until no
 * unguarded unwind is in progress, at most VT_CANCEL_WAIT_NS (a canceller that holds
 * a lock an unwinding thread waits for must not deadlock). Returns 1 when none is in
 * progress, 0 when the wait timed out. errno is preserved. */
#define VT_CANCEL_WAIT_NS 1000000000LL
int vt_cancel_quiesce(void);

/* Out of line, for vt_cancel_guarded_begin: a fork is settling (VT_CANCEL_FORKING):
 * lowers this unwind's count, waits, yielding, until the fork is done (at most
 * VT_CANCEL_FORK_WAIT_NS; the fork's parent and child handlers clear the bit), and
 * raises the count again. errno is preserved. */
#define VT_CANCEL_FORK_WAIT_NS 1000000000LL
void vt_cancel_fork_wait(void);

/* A guarded unwind (cancellation disabled around it): counted from before libunwind
 * runs to after it returned, so that a fork child knows whether libunwind's own locks
 * may have been held at the fork (vt_cancel_fork_child). Every unwind that starts
 * while a fork is settling comes here (the FORKING bit sends vt_cancel_unguarded_begin
 * down this path) and waits for the fork before libunwind runs: the count is raised
 * (sequentially consistent) BEFORE the bit is read, and vt_cancel_fork_settle sets the
 * bit before it reads the counts, so either the unwind sees the bit or the settle sees
 * the unwind. */
static inline __attribute__((always_inline)) void vt_cancel_guarded_begin(void)
{
    __atomic_fetch_add(&vt__unwind_guarded, 1, __ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&vt__cancel_guard, __ATOMIC_SEQ_CST) & VT_CANCEL_FORKING, 0))
        vt_cancel_fork_wait();
}
static inline __attribute__((always_inline)) void vt_cancel_guarded_end(void)
{
    __atomic_fetch_sub(&vt__unwind_guarded, 1, __ATOMIC_RELEASE);
}

/* fork prepare (pthread_atfork), the LAST of our prepare steps (vt_lifecycle.c: after
 * the writer's, the core's and the stack store's locks are held, so that no wait for
 * them lets new captures begin behind the settle): sets VT_CANCEL_FORKING (unwinds
 * that begin from now on wait for the fork, vt_cancel_guarded_begin), then waits,
 * yielding, until no stack capture is in progress, at most VT_CANCEL_SETTLE_NS (a
 * capture blocked on a lock the forking thread holds, such as the loader's, must not
 * stall the fork). self_in_unwind: the forking thread is itself inside a capture (fork
 * from a signal handler), which cannot end meanwhile: no wait. errno is preserved. */
#define VT_CANCEL_SETTLE_NS 10000000LL
void vt_cancel_fork_settle(int self_in_unwind);

/* fork parent (pthread_atfork): the fork is done; clears VT_CANCEL_FORKING. */
void vt_cancel_fork_parent(void);

/* fork child (pthread_atfork): the child has only the forking thread, so the count
 * of the parent's other threads is void. in_unwind: the forking thread itself is
 * inside an unwind (fork from a signal handler that interrupted one, vt_fd_in_unwind):
 * its interrupted unwind will still end, so the child keeps the guard for good.
 * Returns 1 when some unwind (guarded or not, this thread's included) was in progress
 * at the fork: libunwind may then hold its own locks (a frame-cache mutex, held
 * across dl_iterate_phdr) in the child, where no thread will ever release them, and
 * the child must not unwind again (vt_hook_fork_nostacks). */
int vt_cancel_fork_child(int in_unwind);   /* also clears VT_CANCEL_FORKING */

#endif /* VT_CANCEL_H */
