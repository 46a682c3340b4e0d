/* vt_hooks_fd.c — pipe2() interposer: libunwind's validation pipe goes high.
 *
 * libunwind 1.6 (x86_64 Ginit.c) validates addresses while unwinding by writing one
 * byte from them into a pipe it creates with pipe2(O_CLOEXEC|O_NONBLOCK) at its lazy
 * init, and re-creates when a read on it fails. Created at the program's lowest free
 * numbers (3, 4), that pipe collides with the program's own files (a daemon that
 * closes everything and opens its files gets 3 and 4; libunwind would then read and
 * write them). libunwind imports pipe2 (not pipe) through its PLT, so this exported
 * pipe2 sees its calls. Every call is forwarded untouched to the next pipe2 (glibc);
 * only a call made while libunwind runs for vramtrace (vt_fd_in_unwind: vt_stack.c's
 * capture or warm-up on this thread) gets both ends moved high (vt_fd.h).
 * Thread-safe; errno is the real call's.
 */
#define _GNU_SOURCE
#include "vt_fd.h"
#include "vt_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*vt_pipe2_t)(int[2], int);

static vt_pipe2_t vt__real_pipe2;   /* atomic */

/* Looked up at start-up, not at libunwind's first pipe2: that may come inside a
 * dl_iterate_phdr callback (the loader's write lock held), where dlvsym would wait on
 * the load lock a thread in dlopen holds while it waits for the write lock. */
void vt_hooks_fd_init(void)
{
    if (!__atomic_load_n(&vt__real_pipe2, __ATOMIC_ACQUIRE)) {
        vt_pipe2_t f = (vt_pipe2_t)dlvsym(RTLD_NEXT, "pipe2", "GLIBC_2.9");
        if (f)
            __atomic_store_n(&vt__real_pipe2, f, __ATOMIC_RELEASE);
    }
}

VT_EXPORT int pipe2(int fds[2], int flags)
{
    vt_pipe2_t f = __atomic_load_n(&vt__real_pipe2, __ATOMIC_ACQUIRE);
    if (!f && !vt_fd_in_unwind()) {
        vt_hooks_fd_init();
        f = __atomic_load_n(&vt__real_pipe2, __ATOMIC_ACQUIRE);
    }
    int r = f ? f(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
    if (r == 0 && vt_fd_in_unwind()) {
        int e = errno;
        fds[0] = vt_fd_move_high(fds[0]);
        fds[1] = vt_fd_move_high(fds[1]);
        errno = e;
    }
    return r;
}
