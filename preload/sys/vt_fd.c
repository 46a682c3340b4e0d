/* vt_fd.c — high descriptor numbers for libvramtrace's own files (see vt_fd.h).
 *
 * Design: F_DUPFD_CLOEXEC returns the lowest free descriptor >= its argument, so one
 * fcntl moves a descriptor to the top of the program's range. The start is
 * max(1000, soft RLIMIT_NOFILE - 64): above the numbers programs use in practice,
 * below the limit. When that fails (a small limit, the top range full) lower starts
 * are tried, never below the descriptor itself. Small-file reads and whole writes
 * loop over short transfers and EINTR, in one place.
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

/* Fills buf from fd: read(2) (positional 0) or pread(2) from offset 0 (positional 1),
 * up to cap - 1 bytes, then a NUL. */
static size_t vt__fill(int fd, char *buf, size_t cap, int positional)
{
    if (cap == 0)
        return 0;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = positional ? pread(fd, buf + n, cap - 1 - n, (off_t)n) : read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
    return n;
}

size_t vt_fd_read_small(const char *path, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = vt__fill(fd, buf, cap, 0);
    close(fd);
    return n;
}

size_t vt_fd_pread_small(int fd, char *buf, size_t cap)
{
    return vt__fill(fd, buf, cap, 1);
}

int vt_fd_write_counted(int fd, const char *p, size_t n, size_t *done)
{
    *done = 0;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        *done += (size_t)w;
    }
    return 0;
}

int vt_fd_write_all(int fd, const char *p, size_t n)
{
    size_t done;
    return vt_fd_write_counted(fd, p, n, &done);
}
