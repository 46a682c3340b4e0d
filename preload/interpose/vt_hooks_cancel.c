/* vt_hooks_cancel.c — pthread_cancel() interposer: no thread is cancelled inside
 * an unguarded unwind (vt_cancel.h; the argument is at the top of vt_cancel.c).
 *
 * Every call sets the "a cancel was seen" bit, waits (bounded) until no capture is
 * inside unw_backtrace with cancellation enabled, then calls the next pthread_cancel
 * (glibc's) with the same argument and returns its result unchanged; errno is
 * whatever the real call leaves (ours is restored before it). The constructor arms
 * the unguarded path only when the global scope's pthread_cancel is this one. The
 * fork handlers here are steps of vt_lifecycle.c's one pthread_atfork registration,
 * which fixes their place among the others (a constructor of their own would depend
 * on the order the linker gives the constructors; link-time optimisation reversed
 * it). Thread-safe.
 */
#define _GNU_SOURCE
#include "vt_cancel.h"
#include "vt_fd.h"
#include "vt_hooks.h"
#include "vt_hooks_dl.h"
#include "vt_resolve.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

typedef int (*vt_pthread_cancel_t)(pthread_t);

static void *vt__real_pthread_cancel;   /* atomic */

static vt_pthread_cancel_t vt__find_real(void)
{
    static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    return (vt_pthread_cancel_t)vt_resolve_next_libc(&vt__real_pthread_cancel, "pthread_cancel", vers, 2);
}

static int vt__pthread_cancel(pthread_t th)
{
    vt_pthread_cancel_t f = vt__find_real();
    vt_cancel_quiesce();   /* waits at most VT_CANCEL_WAIT_NS; passes the cancel on anyway */
    if (!f)
        return ESRCH;      /* no pthread_cancel behind us: nothing can be cancelled */
    return f(th);
}
extern __typeof__(vt__pthread_cancel) pthread_cancel
    __attribute__((alias("vt__pthread_cancel"), visibility("default")));

void vt_hooks_cancel_target(void **hook, void **real)
{
    *hook = (void *)vt__pthread_cancel;
    *real = __atomic_load_n(&vt__real_pthread_cancel, __ATOMIC_ACQUIRE);
}

void vt_hooks_cancel_fork_prepare(void)
{
    vt_cancel_fork_settle(vt_fd_in_unwind());
}

void vt_hooks_cancel_fork_parent(void)
{
    vt_cancel_fork_parent();
}

void vt_hooks_cancel_fork_child(void)
{
    if (vt_cancel_fork_child(vt_fd_in_unwind()))
        vt_hook_fork_nostacks();   /* libunwind may be locked for good in this child */
}

__attribute__((constructor)) static void vt__cancel_ctor(void)
{
    int e = errno;
    /* our own address (the hidden function), not a GOT entry that may name another
     * copy's export; dlsym here is ours, which passes this name to glibc untouched */
    if (vt__find_real() && dlsym(RTLD_DEFAULT, "pthread_cancel") == (void *)vt__pthread_cancel)
        vt_cancel_arm();
    vt_dlerr_clear();
    errno = e;
}
