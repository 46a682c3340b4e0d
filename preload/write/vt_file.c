/* vt_file.c — bytes to the snapshot file (see vt_file.h).
 *
 * Design: the file is found by dev+ino, not by descriptor number: every append checks
 * the number first (vt_fd_is) and reopens by path when the program took it. A removed
 * file (st_nlink 0) or folder is a write failure: records would go nowhere.
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

int vt_file_create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino)
{
    if (vt__mkdirs(dir) < 0) {
        vt__fail("cannot create output folder", dir, strerror(errno));
        return -1;
    }
    const char *unsafe = vt__dir_unsafe(dir);
    if (unsafe) {
        char why[PATH_MAX + 96];
        snprintf(why, sizeof why, "output folder %s is not safe (%s)", dir, unsafe);
        vt_core_latch_off(why);
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
            char why[PATH_MAX + 96];
            snprintf(why, sizeof why, "snapshot file name too long (%d bytes, PATH_MAX %d) in "
                     "VRAMTRACE_OUTPUT=%.200s...", len, PATH_MAX, dir);
            vt_core_latch_off(why);
            f->path[0] = 0;
            return -1;
        }
        fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        vt__fail("cannot create", f->path, strerror(errno));
        f->path[0] = 0;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        vt__fail("cannot examine", f->path, strerror(e));
        return -1;
    }
    fchmod(fd, 0600);              /* created by us: 0600 whatever the umask */
    if (f->zctx)                   /* a new file (a fork child's): a new frame */
        vt_zstd.CCtx_reset((ZSTD_CCtx *)f->zctx, ZSTD_reset_session_only);
    *dev = st.st_dev;
    *ino = st.st_ino;
    return vt_fd_move_high(fd);    /* out of the program's low numbers (vt_fd.h) */
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
    int gone = 0;   /* the file (or its folder) was removed: records would go nowhere */
    if ((gone = vt__fd_check(f) < 0) || vt_fd_write_all(f->fd, p, n) < 0 ||
        (gone = fstat(f->fd, &st) == 0 && st.st_nlink == 0)) {
        int e = errno;
        char why[PATH_MAX + 64];
        size_t pl = strlen(f->path);
        if (pl > PATH_MAX - 1) pl = PATH_MAX - 1;
        memcpy(why, "cannot write ", 13);
        memcpy(why + 13, f->path, pl);
        why[13 + pl] = 0;
        strcat(why, ": ");
        strcat(why, gone ? "the file was removed" : strerror(e));
        vt_core_latch_off(why);
        vt_file_close(f);
        return -EIO;
    }
    return 0;
}

int vt_file_append(vt_file *f, const char *p, size_t n)
{
    return vt__append(f, p, n, 0);
}

int vt_file_end(vt_file *f)
{
    if (!f->compress || !f->zctx || f->fd < 0)
        return 0;
    return vt__append(f, "", 0, 1);
}

void vt_file_close(vt_file *f)
{
    if (vt_fd_is(f->fd, f->dev, f->ino))
        close(f->fd);
    f->fd = -1;
}
