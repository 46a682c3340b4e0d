/* vt_cancel.c — why the capture may unwind with cancellation enabled (vt_cancel.h).
 *
 * Claim: no thread acts on a cancellation request (deferred or asynchronous) while
 * it is inside an unwind that vt_cancel_unguarded_begin let run unguarded.
 *
 * Premises.
 *  P1. Every cancellation request of the process is made through libvramtrace's
 *      pthread_cancel (vt_hooks_cancel.c). The guard starts with VT_CANCEL_UNARMED
 *      and vt_cancel_arm clears that bit only after checking that the global scope's
 *      pthread_cancel IS ours (a program or library that wraps pthread_cancel
 *      itself, or a sanitizer runtime that does, keeps every unwind guarded).
 *  P2. That pthread_cancel sets VT_CANCEL_SEEN (S, a sequentially consistent RMW)
 *      before it reads the count (Q, sequentially consistent loads) and before it
 *      calls the real pthread_cancel (R), and only calls R once Q read <= 0 (or the
 *      wait timed out, see below). VT_CANCEL_SEEN is never cleared.
 *  P3. An unguarded unwind U on thread T raises the count (A, seq_cst RMW), THEN
 *      loads the guard (L, seq_cst) and sees 0, runs unw_backtrace, and lowers the
 *      count (D, release RMW). Every +1 is matched by exactly one later -1 of the
 *      same unwind, so the count stays >= 1 from A until D.
 *
 * Proof. All seq_cst operations are in one total order. L read 0, so L precedes S
 * (otherwise L would read VT_CANCEL_SEEN). A precedes L in T's program order, hence
 * A precedes S, which precedes every Q of that cancel: each Q reads A's increment or
 * a later value of the count, and so reads >= 1 until D. A Q that reads <= 0 reads
 * D's decrement or a later one, so D happens-before Q (release / seq_cst load) and
 * therefore before R: the request is made only after U ended. An unwind whose L
 * follows S sees the bit and is guarded (cancellation disabled around it, as before
 * this file existed). So when R runs, no unguarded unwind is in progress and none
 * can begin: the request cannot act inside one, deferred or asynchronous alike.
 * A cancellation that was already pending on T (T had disabled cancellation when
 * it was cancelled) was requested through P1, so VT_CANCEL_SEEN was set: T's
 * unwinds are guarded.
 *
 * Around it.
 *  - Programs that never cancel a thread pay two locked RMWs and two loads per
 *    capture instead of two pthread_setcancelstate calls. The first cancel turns
 *    the guard on for the rest of the process (45 instructions per capture more).
 *  - The wait yields and is bounded (VT_CANCEL_WAIT_NS, 1 s): a canceller that holds
 *    a lock an unwinding thread waits for (the loader's, from inside a
 *    dl_iterate_phdr callback) must not deadlock. On timeout the cancel is passed on
 *    anyway; only then, and only if it targets that very thread while libunwind
 *    still has a cancellation point ahead, can it act inside libunwind.
 *  - A signal handler that allocates while its thread is inside an unwind nests a
 *    begin/end pair: the count stays balanced. A handler that calls pthread_cancel
 *    (not async-signal-safe) while its own thread is inside an unguarded unwind
 *    waits for an unwind that cannot progress: it times out as above.
 *  - fork: the child has only the forking thread; the other threads' share of the
 *    count is void, so vt_cancel_fork_child sets it to 0. If the forking thread
 *    was itself inside an unwind (fork from a signal handler), its interrupted unwind
 *    will still lower the count in the child: the child then keeps the guard for
 *    good (VT_CANCEL_FORKED), so the count being below 0 there changes nothing.
 *    A child forked while any thread was inside libunwind (either count above 0)
 *    may have inherited libunwind's locks held: it captures no stacks at all. The
 *    fork's settle (last prepare step, our locks held) sets VT_CANCEL_FORKING before
 *    it reads the counts; an unwind raises its count before it reads the bit and,
 *    seeing it, lowers the count and waits for the fork (vt_cancel_fork_wait): no
 *    unwind begins between the settle and the fork.
 *  - Not covered (P1 does not hold): a cancel that bypasses the global scope — a
 *    library loaded with RTLD_DEEPBIND before the preload re-links its references
 *    (its constructors), a pthread_cancel looked up with dlsym or
 *    dlvsym on libc's own handle, a cancel made by libc internally. Such a request
 *    still acts inside libunwind only if it targets a thread inside an unguarded
 *    unwind and libunwind meets a cancellation point before returning (libunwind
 *    1.6's unw_backtrace validates no addresses, so it reads no pipe; a cache miss
 *    takes the loader's lock, which is not a cancellation point).
 *  - Threads cancelled for real stay cancellable exactly as the program asked:
 *    the guarded path restores the previous state, the unguarded path never
 *    touches it.
 */
#define _GNU_SOURCE
#include "vt_cancel.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

int  vt__cancel_guard = VT_CANCEL_UNARMED;
long vt__cancel_active;
long vt__unwind_guarded;

void vt_cancel_arm(void)
{
    __atomic_and_fetch(&vt__cancel_guard, ~VT_CANCEL_UNARMED, __ATOMIC_SEQ_CST);
}

static long long vt__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int vt_cancel_quiesce(void)
{
    __atomic_or_fetch(&vt__cancel_guard, VT_CANCEL_SEEN, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST) <= 0)
        return 1;
    int e = errno;
    long long deadline = vt__now_ns() + VT_CANCEL_WAIT_NS;
    int ok;
    for (;;) {
        sched_yield();
        if (__atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST) <= 0) {
            ok = 1;
            break;
        }
        if (vt__now_ns() >= deadline) {
            ok = 0;
            break;
        }
    }
    errno = e;
    return ok;
}

void vt_cancel_fork_settle(int self_in_unwind)
{
    __atomic_or_fetch(&vt__cancel_guard, VT_CANCEL_FORKING, __ATOMIC_SEQ_CST);
    if (self_in_unwind)
        return;
    if (__atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST) <= 0 &&
        __atomic_load_n(&vt__unwind_guarded, __ATOMIC_SEQ_CST) <= 0)
        return;
    int e = errno;
    long long deadline = vt__now_ns() + VT_CANCEL_SETTLE_NS;
    while ((__atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST) > 0 ||
            __atomic_load_n(&vt__unwind_guarded, __ATOMIC_SEQ_CST) > 0) &&
           vt__now_ns() < deadline)
        sched_yield();
    errno = e;
}

void vt_cancel_fork_parent(void)
{
    __atomic_and_fetch(&vt__cancel_guard, ~VT_CANCEL_FORKING, __ATOMIC_SEQ_CST);
}

void vt_cancel_fork_wait(void)
{
    int e = errno;
    long long deadline = vt__now_ns() + VT_CANCEL_FORK_WAIT_NS;
    for (;;) {
        __atomic_fetch_sub(&vt__unwind_guarded, 1, __ATOMIC_RELEASE);
        while ((__atomic_load_n(&vt__cancel_guard, __ATOMIC_SEQ_CST) & VT_CANCEL_FORKING) &&
               vt__now_ns() < deadline)
            sched_yield();
        __atomic_fetch_add(&vt__unwind_guarded, 1, __ATOMIC_SEQ_CST);
        if (!(__atomic_load_n(&vt__cancel_guard, __ATOMIC_SEQ_CST) & VT_CANCEL_FORKING) ||
            vt__now_ns() >= deadline)
            break;   /* done (or a fork that takes a second: unwind anyway, as before) */
    }
    errno = e;
}

int vt_cancel_fork_child(int in_unwind)
{
    /* each store only when it changes something: a page written in the child is a copy
     * (a process that never unwound writes nothing here) */
    if (__atomic_load_n(&vt__cancel_guard, __ATOMIC_SEQ_CST) & VT_CANCEL_FORKING)
        __atomic_and_fetch(&vt__cancel_guard, ~VT_CANCEL_FORKING, __ATOMIC_SEQ_CST);
    /* Every unwind raises one of the two counts before libunwind runs and lowers it
     * after libunwind returned (seq_cst raise, release lowering), so a lock libunwind
     * held at the fork shows as a count above 0 here. A thread between the raise and
     * libunwind counts too: the child then goes without stacks needlessly, which is
     * safe. */
    int busy = __atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST) > 0 ||
               __atomic_load_n(&vt__unwind_guarded, __ATOMIC_SEQ_CST) > 0 || in_unwind;
    if (in_unwind)
        __atomic_or_fetch(&vt__cancel_guard, VT_CANCEL_FORKED, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&vt__cancel_active, __ATOMIC_SEQ_CST))
        __atomic_store_n(&vt__cancel_active, 0, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&vt__unwind_guarded, __ATOMIC_SEQ_CST))
        __atomic_store_n(&vt__unwind_guarded, 0, __ATOMIC_SEQ_CST);
    return busy;
}
