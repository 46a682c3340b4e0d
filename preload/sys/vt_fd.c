/* vt_fd.c — high descriptor numbers for libvramtrace's own files (see vt_fd.h).
 *
 * Design: F_DUPFD_CLOEXEC returns the lowest free descriptor >= its argument, so one
 * fcntl moves a descriptor to the top of the program's range. The start is
 * max(1000, soft RLIMIT_NOFILE - 64): above the numbers programs use in practice,
 * below the limit. When that fails (a small limit, the top range full) lower starts
 * are tried, never below the descriptor itself.
 */
#define _GNU_SOURCE
#include "vt_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int vt__floor;   /* atomic: 0 = not computed yet */

int vt_fd_floor(void)
{
    int f = __atomic_load_n(&vt__floor, __ATOMIC_RELAXED);
    if (f > 0)
        return f;
    struct rlimit rl;
    long soft = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        soft = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 30) ? (1 << 30) : (long)rl.rlim_cur;
    long want = soft - 64 > 1000 ? soft - 64 : 1000;
    if (want >= soft)                 /* small limit: stay below it */
        want = soft > 80 ? soft - 16 : soft / 2;
    if (want < 3)
        want = 3;
    f = (int)want;
    __atomic_store_n(&vt__floor, f, __ATOMIC_RELAXED);
    return f;
}

int vt_fd_move_high(int fd)
{
    if (fd < 0)
        return fd;
    int e = errno;
    int nfd = -1;
    for (int start = vt_fd_floor(); start > fd; start /= 2) {
        nfd = fcntl(fd, F_DUPFD_CLOEXEC, start);
        if (nfd >= 0)
            break;
    }
    if (nfd >= 0) {
        close(fd);
        fd = nfd;
    }
    errno = e;
    return fd;
}

int vt_fd_is(int fd, dev_t dev, ino_t ino)
{
    if (fd < 0)
        return 0;
    int e = errno;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
    errno = e;
    return ok;
}
