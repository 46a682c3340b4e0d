/* vt_guard.c — storage of the per-thread hook state (see vt_guard.h). */
#define _GNU_SOURCE
#include <errno.h>
#include "vt_guard.h"

#include <unistd.h>
#include <sys/syscall.h>

__thread vt_tls vt__tls __attribute__((tls_model("initial-exec")));

int vt_guard_tid_slow(void)
{
    vt__tls.tid = (int)syscall(SYS_gettid);
    return vt__tls.tid;
}

int *vt_guard_errno_slow(void)
{
    vt__tls.errno_ptr = &errno;
    return vt__tls.errno_ptr;
}

void vt_guard_after_fork_child(void)
{
    vt__tls.tid = 0;
    vt__tls.ctx = 0;
    vt__tls.ctx_gen = 0;
}
