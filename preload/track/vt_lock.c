/* vt_lock.c — the sleeping half of the core's futex lock (see vt_lock.h). */
#define _GNU_SOURCE
#include "vt_lock.h"

#if !defined(__SANITIZE_THREAD__)
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void vt_lock_slow(vt_lock_t *l)
{
    int e = errno;   /* the futex call may set it; the traced program's errno stays */
    int c = 0;
    if (__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        goto out;
    if (c != 2)
        c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        /* sleeps only while the value is still 2; EAGAIN / EINTR just retry */
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
    }
out:
    errno = e;
}

void vt_lock_wake(vt_lock_t *l)
{
    int e = errno;
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = e;
}
#endif
typedef int vt__lock_c_nonempty;   /* keeps the unit non-empty under TSan */
