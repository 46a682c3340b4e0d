/* vt_fd.h — keeping libvramtrace's own file descriptors out of the program's way.
 *
 * POSIX hands out the lowest free descriptor, and programs rely on it (daemons close
 * everything and expect open() to return 3; shells dup onto 0/1/2). Descriptors that
 * libvramtrace keeps open (the snapshot file, libunwind's memory-validation pipe) are
 * therefore moved to high numbers with fcntl(F_DUPFD_CLOEXEC) right after they are
 * created. Residual risk: a program that closes every descriptor up to its limit and
 * then reuses those exact high numbers can still meet ours (the snapshot writer then
 * notices, see vt_file.c; libunwind's pipe is re-created by libunwind itself).
 *
 * Thread safety: all functions are thread-safe; vt_fd_unwind_* use initial-exec TLS
 * (vt__tls).
 */
#ifndef VT_FD_H
#define VT_FD_H

#include <stddef.h>
#include <sys/types.h>

#include "vt_guard.h"

/* Lowest number our descriptors are moved to: max(1000, soft RLIMIT_NOFILE - 64),
 * lowered when that is not below the soft limit. Computed once (getrlimit). */
int vt_fd_floor(void);

/* Moves fd to a high number (F_DUPFD_CLOEXEC at vt_fd_floor(), else the highest
 * start that works) and closes the original. Returns the new descriptor, or fd
 * itself when no higher one is available (or fd < 0). Preserves errno. File status
 * flags (O_NONBLOCK, O_APPEND) are shared by the duplicate. */
int vt_fd_move_high(int fd);

/* Per-thread "libunwind is running on behalf of vramtrace" depth: set by vt_stack.c
 * around unw_backtrace (capture and warm-up); read by the pipe2() interposer, which
 * moves libunwind's validation pipe high only then, and by the fork-child handler of
 * vt_cancel.h. Kept in the hooks' per-thread state (vt_guard.h), inline: one TLS
 * add each, at an offset the hook already holds; a signal handler on the same thread
 * sees the depth before or after, never torn. */
static inline void vt_fd_unwind_enter(void) { vt__tls.unwind++; }
static inline void vt_fd_unwind_leave(void) { vt__tls.unwind--; }
static inline int  vt_fd_in_unwind(void) { return vt__tls.unwind > 0; }

/* 1 when fd is open and refers to the file (dev, ino); 0 otherwise. errno kept. */
int vt_fd_is(int fd, dev_t dev, ino_t ino);

/* Reads a small file whole: open(path, O_RDONLY|O_CLOEXEC), read(2) until end of file
 * or cap - 1 bytes, close. buf is NUL-terminated (cap >= 1). Returns the bytes read, 0
 * when the file cannot be opened or is empty (errno: open's or read's). A read
 * interrupted by a signal is retried. The descriptor is open only during the call.
 * Thread-safe. */
size_t vt_fd_read_small(const char *path, char *buf, size_t cap);

/* The same from an open descriptor, with pread(2) from offset 0 (a /proc or cgroup
 * file kept open is regenerated at each read from 0). Returns the bytes read. */
size_t vt_fd_pread_small(int fd, char *buf, size_t cap);

/* Writes all n bytes at p to fd, retrying short writes and EINTR. Returns 0, or -1
 * with errno set (EIO when write(2) wrote nothing without an error). */
int vt_fd_write_all(int fd, const char *p, size_t n);

/* The same, with *done the bytes written, also on failure (a torn write's length). */
int vt_fd_write_counted(int fd, const char *p, size_t n, size_t *done);

#endif /* VT_FD_H */
