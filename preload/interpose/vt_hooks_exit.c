/* vt_hooks_exit.c — _exit() and _Exit() interposers: the step snapshots a process
 * marked reach the file before it ends without exit().
 *
 * vramtrace_step() queues its step snapshot for the writer thread (write/vt_stepq.h).
 * exit() writes what is queued before the "exit" snapshot (the library's destructor,
 * vt_writer_exit); a process that ends with _exit (Python's os._exit, multiprocessing
 * and pool workers, a fork child) runs no destructor, so these wait, at most
 * VT_EXIT_FLUSH_NS, for the writer thread to write the steps queued so far and the
 * event trace's events (vt_writer_flush_steps: no wait when nothing is queued and the
 * trace is off), then call the C library's
 * function with the same status. glibc's exit() reaches its own _exit internally, not
 * through these. Async-signal-safe as _exit is (the look-up of the real function is
 * made by vt_hooks_exit_init at start-up; the wait is lock-free). Never returns.
 */
#define _GNU_SOURCE
#include "vt_hooks.h"
#include "vt_resolve.h"
#include "vt_writer.h"

#include <sys/syscall.h>
#include <unistd.h>

#define VT_EXIT_FLUSH_NS 1000000000ull   /* 1 s */

typedef void (*vt_exit_t)(int);

static void *vt__real_exit, *vt__real_Exit;   /* atomic */

static const char *const vt__exit_vers[] = {"GLIBC_2.2.5"};

void vt_hooks_exit_init(void)
{
    vt_resolve_next_libc(&vt__real_exit, "_exit", vt__exit_vers, 1);
    vt_resolve_next_libc(&vt__real_Exit, "_Exit", vt__exit_vers, 1);
}

static __attribute__((noreturn)) void vt__end(void **cache, const char *name, int status)
{
    vt_writer_flush_steps(VT_EXIT_FLUSH_NS);
    vt_exit_t f = (vt_exit_t)__atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f)   /* called before start-up ran (another library's constructor) */
        f = (vt_exit_t)vt_resolve_next_libc(cache, name, vt__exit_vers, 1);
    if (f)
        f(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

VT_EXPORT __attribute__((noreturn)) void _exit(int status)
{
    vt__end(&vt__real_exit, "_exit", status);
}

VT_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    vt__end(&vt__real_Exit, "_Exit", status);
}
