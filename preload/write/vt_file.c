/* vt_file.c — bytes to the snapshot file (see vt_file.h).
 *
 * Design: the file is found by dev+ino, not by descriptor number: every append checks
 * the number first (vt_fd_is) and reopens by path when the program took it. A removed
 * file (st_nlink 0) or folder is a write failure: records would go nowhere.
 *
 * Write faults (vt_file.h): the append counts the bytes each write(2) took; on a
 * fault the file's end (lseek: O_APPEND writes leave the offset there) less those
 * bytes is f->good, and the file is cut back to it at once (a process that dies
 * during the fault leaves no torn record). vt_file_resume cuts again (in case that
 * failed), ends the open frame with an empty raw last block and resets the
 * compressor, or, when the file is gone, creates it again through the same code
 * as the first file (vt__create) without latching anything off.
 */
#define _GNU_SOURCE
#include "vt_file.h"
#include "vt_core.h"
#include "vt_fd.h"
#include "vt_log.h"
#include "vt_zstd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

/* zstd level 3 (zstd's default). Window 256 KiB: the redundancy is between one
 * record and the few before it (a step record is 1-15 KiB), and it bounds the
 * compressor's memory (about 1.5 MiB) and any reader's. */
#define VT_ZSTD_LEVEL 3
#define VT_ZSTD_WINDOW_LOG 18

/* Creates dir and missing parents with mode 0700. Returns 0 or -1 (errno). */
static int vt__mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != 0)
            continue;
        char c = tmp[i];
        tmp[i] = 0;
        if (mkdir(tmp, 0700) < 0) {
            if (errno != EEXIST)
                return -1;
        } else {
            chmod(tmp, 0700);   /* ours: 0700 whatever the program's umask (0777 too) */
        }
        tmp[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Threat model: the output folder may sit in a shared, world-writable place (/tmp)
 * where another user planted a symbolic link, or a folder of their own, at its name
 * before the run, to collect or tamper with the snapshots. The folder is used only if
 * it is owned by us (or root), is not writable by others unless sticky, and, if the
 * name is a symbolic link, the link is ours (or root's). Files are then created new
 * (O_EXCL|O_NOFOLLOW, 0600), so nothing existing is ever opened or overwritten.
 * Returns NULL when safe, else what is wrong. */
static const char *vt__dir_unsafe(const char *dir)
{
    struct stat ls, st;
    uid_t me = geteuid();
    if (lstat(dir, &ls) < 0 || stat(dir, &st) < 0)
        return "cannot be examined";
    if (S_ISLNK(ls.st_mode) && ls.st_uid != me && ls.st_uid != 0)
        return "a symbolic link owned by another user";
    if (st.st_uid != me && st.st_uid != 0)
        return "owned by another user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return "writable by others";
    return NULL;
}

/* Latches tracking off with "<what> <path>: <error>". */
static void vt__fail(const char *what, const char *path, const char *error)
{
    char why[PATH_MAX + 96];
    snprintf(why, sizeof why, "%s %s: %s", what, path, error);
    vt_core_latch_off(why);
}

/* Creates the folder and the file (see vt_file_create). Returns the descriptor, or -1
 * with why (a sentence) and errno; f->path as vt_file_create. */
static int vt__create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino, char *why,
                      size_t whylen)
{
    if (vt__mkdirs(dir) < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot create output folder %s: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    const char *unsafe = vt__dir_unsafe(dir);
    if (unsafe) {
        snprintf(why, whylen, "output folder %s is not safe (%s)", dir, unsafe);
        errno = EACCES;
        return -1;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)   /* a name of one path component, nothing a terminal acts on */
        if (*p == '/' || (unsigned char)*p <= ' ' || *p == 0x7f)
            *p = '_';
    int fd = -1;
    if (f->compress && vt_zstd_load() != 0)
        f->compress = 0;           /* libzstd missing (logged) or being loaded: plain text */
    const char *sfx = f->compress ? ".jsonl.zst" : ".jsonl";
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        int len;
        if (attempt)
            len = snprintf(f->path, sizeof f->path, "%s/vt.%s.%d.%llu-%d%s", dir, host, (int)getpid(),
                           (unsigned long long)start_ns, attempt, sfx);
        else
            len = snprintf(f->path, sizeof f->path, "%s/vt.%s.%d.%llu%s", dir, host, (int)getpid(),
                           (unsigned long long)start_ns, sfx);
        if (len < 0 || (size_t)len >= sizeof f->path) {
            /* never a truncated name: that would be a file nobody looks for */
            snprintf(why, whylen, "snapshot file name too long (%d bytes, PATH_MAX %d) in "
                     "VRAMTRACE_OUTPUT=%.200s...", len, PATH_MAX, dir);
            f->path[0] = 0;
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot create %s: %s", f->path, strerror(e));
        f->path[0] = 0;
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        snprintf(why, whylen, "cannot examine %s: %s", f->path, strerror(e));
        errno = e;
        return -1;
    }
    fchmod(fd, 0600);              /* created by us: 0600 whatever the umask */
    if (f->zctx)                   /* a new file (a fork child's): a new frame */
        vt_zstd.CCtx_reset((ZSTD_CCtx *)f->zctx, ZSTD_reset_session_only);
    f->frame_open = 0;
    f->err = 0;
    f->good = 0;
    *dev = st.st_dev;
    *ino = st.st_ino;
    return vt_fd_move_high(fd);    /* out of the program's low numbers (vt_fd.h) */
}

int vt_file_create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino)
{
    char why[PATH_MAX + 160];
    int fd = vt__create(f, dir, start_ns, dev, ino, why, sizeof why);
    if (fd < 0)
        vt_core_latch_off(why);
    return fd;
}

/* Makes sure f->fd still refers to f's file; reopens it by path otherwise. Returns 0,
 * or -1 (errno) when the file cannot be reached any more (removed or renamed). */
static int vt__fd_check(vt_file *f)
{
    if (vt_fd_is(f->fd, f->dev, f->ino))
        return 0;
    f->fd = -1;   /* not ours (any more): never written to, never closed */
    int fd = open(f->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!vt_fd_is(fd, f->dev, f->ino)) {
        close(fd);
        errno = ENOENT;   /* another file under our name: ours was removed */
        return -1;
    }
    f->fd = vt_fd_move_high(fd);
    vt_log(VT_LOG_DEBUG, "snapshot descriptor was closed or replaced by the program; reopened %s", f->path);
    return 0;
}

/* The n bytes at p through the stream's compressor, flushed (every block of them
 * complete), into f->zbuf: its length, or 0 with *err set (out of memory, or zstd's
 * own error). end: the frame is ended after them (the process's last write). Writer
 * thread, under the output lock. */
static size_t vt__zstream(vt_file *f, const char *p, size_t n, int end, const char **err)
{
    ZSTD_CCtx *z = f->zctx;
    if (!z) {
        if (!(z = vt_zstd.createCCtx())) {
            *err = "out of memory for the zstd context";
            return 0;
        }
        vt_zstd.CCtx_setParameter(z, ZSTD_c_compressionLevel, VT_ZSTD_LEVEL);
        vt_zstd.CCtx_setParameter(z, ZSTD_c_windowLog, VT_ZSTD_WINDOW_LOG);
        f->zctx = z;
    }
    ZSTD_inBuffer in = { p, n, 0 };
    size_t len = 0, r;
    do {
        size_t want = len + vt_zstd.compressBound(n - in.pos) + 64;
        if (want > f->zcap) {
            char *nb = realloc(f->zbuf, want);
            if (!nb) {
                *err = "out of memory for compressed records";
                return 0;
            }
            f->zbuf = nb;
            f->zcap = want;
        }
        ZSTD_outBuffer out = { f->zbuf, f->zcap, len };
        r = vt_zstd.compressStream2(z, &out, &in, end ? ZSTD_e_end : ZSTD_e_flush);
        if (vt_zstd.isError(r)) {
            *err = vt_zstd.getErrorName(r);
            return 0;
        }
        len = out.pos;
    } while (r != 0);
    return len;
}


/* A write fault: records it in f (err, why, good) and cuts the torn bytes off.
 * removed: the file or its folder is gone. Returns -e. */
static int vt__fault(vt_file *f, int e, int removed, size_t done)
{
    f->err = e ? e : EIO;
    snprintf(f->why, sizeof f->why, "%s", removed ? "the file was removed" : strerror(f->err));
    f->good = -1;   /* not known: vt_file_resume keeps the file's size */
    if (!removed && f->fd >= 0) {
        off_t end = lseek(f->fd, 0, SEEK_CUR);
        struct stat st;
        if (end < 0 && fstat(f->fd, &st) == 0)
            end = st.st_size;
        if (end >= (off_t)done) {
            f->good = end - (off_t)done;
            if (done)
                (void)!ftruncate(f->fd, f->good);   /* vt_file_resume cuts again if this fails */
        }
    }
    return -f->err;
}

/* The append itself; end: the compressed stream's frame is ended after p. */
static int vt__append(vt_file *f, const char *p, size_t n, int end)
{
    if (f->compress && (n || end)) {
        const char *err = NULL;
        size_t zn = vt__zstream(f, p, n, end, &err);
        if (!zn) {
            vt__fail("cannot compress records for", f->path, err);
            vt_file_close(f);
            return -EIO;
        }
        p = f->zbuf;
        n = zn;
    }
    struct stat st;
    size_t done = 0;
    if (vt__fd_check(f) < 0) {   /* our file is not at its path any more: removed */
        int e = errno;
        return vt__fault(f, e, e == ENOENT, 0);
    }
    if (vt_fd_write_counted(f->fd, p, n, &done) < 0)
        return vt__fault(f, errno, 0, done);
    if (fstat(f->fd, &st) == 0 && st.st_nlink == 0)   /* records would go nowhere */
        return vt__fault(f, ENOENT, 1, done);
    if (f->compress)
        f->frame_open = !end;
    return 0;
}

/* RFC 8878 3.1.1.2: Last_Block 1, Block_Type Raw (0), Block_Size 0, little-endian.
 * It ends a frame completely only without a content checksum (ZSTD_c_checksumFlag
 * is left at 0: docs/snapshot-format.md "Files"); with one, 4 bytes would follow. */
static const char vt__zstd_last_block[3] = { 0x01, 0x00, 0x00 };

int vt_file_resume(vt_file *f, const char *dir, uint64_t start_ns)
{
    struct stat st;
    if (vt__fd_check(f) == 0 && fstat(f->fd, &st) == 0 && st.st_nlink > 0) {
        /* the same file: cut back to the end of its last whole append */
        if (f->good < 0)
            f->good = st.st_size;
        if (st.st_size > f->good && ftruncate(f->fd, f->good) < 0)
            return -1;
        if (st.st_size < f->good) {   /* cut by someone else meanwhile: its frame is broken anyway */
            f->good = st.st_size;
            f->frame_open = 0;
        }
        if (f->compress && f->frame_open) {
            size_t done = 0;
            if (vt_fd_write_counted(f->fd, vt__zstd_last_block, sizeof vt__zstd_last_block, &done) < 0) {
                int e = errno;
                if (done)
                    (void)!ftruncate(f->fd, f->good);
                errno = e;
                return -1;
            }
            f->good += (off_t)sizeof vt__zstd_last_block;
            f->frame_open = 0;
        }
        if (f->zctx)   /* a new frame, without the lost records as context */
            vt_zstd.CCtx_reset((ZSTD_CCtx *)f->zctx, ZSTD_reset_session_only);
        f->err = 0;
        return 0;
    }
    /* gone: a new file by the same rules as the first */
    vt_file_close(f);
    char keep[PATH_MAX], why[PATH_MAX + 160];
    memcpy(keep, f->path, sizeof keep);
    dev_t dev;
    ino_t ino;
    int fd = vt__create(f, dir, start_ns, &dev, &ino, why, sizeof why);
    if (fd < 0) {
        int e = errno;
        memcpy(f->path, keep, sizeof keep);
        errno = e;
        return -1;
    }
    f->fd = fd;
    f->dev = dev;
    f->ino = ino;
    return 1;
}

int vt_file_append(vt_file *f, const char *p, size_t n)
{
    return vt__append(f, p, n, 0);
}

int vt_file_end(vt_file *f)
{
    if (!f->compress || !f->zctx || f->fd < 0 || f->err)
        return 0;
    return vt__append(f, "", 0, 1);
}

/* Copies the bytes of the file at path (which must be f's: dev+ino) from offset
 * `from` to its end into fd. 0 or -1 (errno). */
static int vt__copy_tail(const vt_file *f, uint64_t from, int fd)
{
    int in = open(f->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -1;
    struct stat st;
    int rc = -1;
    if (fstat(in, &st) < 0)
        goto out;
    if (st.st_dev != f->dev || st.st_ino != f->ino || (uint64_t)st.st_size < from) {
        errno = ESTALE;   /* another file under our name, or shorter than the keep point */
        goto out;
    }
    loff_t off = (loff_t)from;
    size_t left = (size_t)((uint64_t)st.st_size - from);
    while (left) {   /* in the kernel where it can (same file system), else read/write */
        ssize_t n = copy_file_range(in, &off, fd, NULL, left, 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL))
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
        left -= (size_t)n;
    }
    char buf[65536];
    while (left) {
        ssize_t n = pread(in, buf, left < sizeof buf ? left : sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            goto out;
        }
        if (vt_fd_write_all(fd, buf, (size_t)n) < 0)
            goto out;
        off += n;
        left -= (size_t)n;
    }
    rc = 0;
out:;
    int e = errno;
    close(in);
    errno = e;
    return rc;
}

int vt_file_replace(vt_file *f, const char *head, size_t n, uint64_t from)
{
    char tmp[PATH_MAX];
    int len = snprintf(tmp, sizeof tmp, "%s.tmp", f->path);
    if (len < 0 || (size_t)len >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* O_APPEND once written: copy_file_range does not write to an appending file */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)   /* ours, left by a killed replace */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    fchmod(fd, 0600);
    const char *p = head;
    int e = EIO;
    struct stat st;
    ZSTD_CCtx *z = NULL;
    char *zb = NULL;
    if (f->compress) {   /* the head as a frame of its own, ended */
        size_t cap = vt_zstd.compressBound(n) + 64, r;
        z = vt_zstd.createCCtx();
        zb = malloc(cap);
        if (!z || !zb) {
            e = ENOMEM;
            goto fail;
        }
        vt_zstd.CCtx_setParameter(z, ZSTD_c_compressionLevel, VT_ZSTD_LEVEL);
        vt_zstd.CCtx_setParameter(z, ZSTD_c_windowLog, VT_ZSTD_WINDOW_LOG);
        ZSTD_inBuffer in = { head, n, 0 };
        ZSTD_outBuffer out = { zb, cap, 0 };
        r = vt_zstd.compressStream2(z, &out, &in, ZSTD_e_end);
        if (vt_zstd.isError(r) || r != 0) {   /* the bound holds the whole frame */
            e = ENOMEM;
            goto fail;
        }
        p = zb;
        n = out.pos;
    }
    if (vt_fd_write_all(fd, p, n) < 0 || vt__copy_tail(f, from, fd) < 0 || fstat(fd, &st) < 0 ||
        fcntl(fd, F_SETFL, O_APPEND) < 0 || rename(tmp, f->path) < 0) {
        e = errno;
        goto fail;
    }
    if (z)
        vt_zstd.freeCCtx(z);
    free(zb);
    vt_file_close(f);
    f->fd = vt_fd_move_high(fd);
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return 0;
fail:
    if (z)
        vt_zstd.freeCCtx(z);
    free(zb);
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
}

void vt_file_close(vt_file *f)
{
    if (vt_fd_is(f->fd, f->dev, f->ino))
        close(f->fd);
    f->fd = -1;
}
