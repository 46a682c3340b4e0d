/* vt_reader.c — snapshot files and folders into a vt_runset (contract in
 * vt_reader.h): listing a folder, reading a file into lines, handing each line to
 * the decoder (vt_decode.h) on this thread or through the parser workers
 * (vt_lineparse.h), a torn last line, and two copies of one process's stream.
 *
 * Design: read(2) into a growing buffer, split at '\n', check the line's length;
 * lines up to VT_LP_MAX_LINE go to rs->read_threads workers (when > 0) and are
 * decoded here in order, longer ones are parsed here. A file is one process; it
 * joins rs->procs only once completely read.
 */
#include "vt_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_decode.h"
#include "vt_display.h"
#include "vt_fold.h"
#include "vt_lineparse.h"
#include "vt_util.h"

/* A note on stderr (a file skipped, a torn line ignored), its paths and names in
 * their display form (vt_display.h): one line. */
static void rd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rd_note(const char *fmt, ...)
{
    char raw[3 * 4096 + 256], shown[4 * sizeof raw];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    vt_display(shown, sizeof shown, raw);
    fprintf(stderr, "%s\n", shown);
}

static int same_process(const vt_process *a, const vt_process *b)
{
    return a->pid == b->pid && a->start_ns == b->start_ns && strcmp(a->host, b->host) == 0;
}

int vt_load_file(vt_runset *rs, const char *path, int in_dir)
{
    vt_rd r;
    memset(&r, 0, sizeof r);
    r.rs = rs;
    r.path = path;
    rs->err[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (in_dir ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (errno == ELOOP) snprintf(rs->err, sizeof rs->err, "%s:0: is a symbolic link in a snapshot folder (not followed; name it explicitly)", path);
        else snprintf(rs->err, sizeof rs->err, "%s:0: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(rs->err, sizeof rs->err, "%s:0: %s", path,
                 S_ISDIR(st.st_mode) ? "is a folder" : "not a regular file");
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);

    size_t cap = 1 << 20, len = 0, pos = 0;
    char *buf = vt_xmalloc(cap);
    int rc = 0, eof = 0;
    /* lines up to VT_LP_MAX_LINE are parsed by rs->read_threads workers and
     * folded here in order; longer ones (and all, without workers) here */
    vt_lp *lp = rs->read_threads > 0 ? vt_lp_new(rs->read_threads) : NULL;
    while (rc == 0) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        if (nl) {
            size_t ll = (size_t)(nl - (buf + pos));
            if (lp && ll <= VT_LP_MAX_LINE) {
                rc = vt_lp_push(lp, buf + pos, ll, vt_rd_parsed, &r) ? -1 : 0;
            } else {
                if (lp) rc = vt_lp_finish(lp, vt_rd_parsed, &r) ? -1 : 0;
                if (rc == 0) {
                    r.line++;
                    rc = vt_rd_line(&r, buf + pos, ll);
                }
            }
            pos = (size_t)(nl - buf) + 1;
            continue;
        }
        if (eof) break;
        if (pos) {
            memmove(buf, buf + pos, len - pos);
            len -= pos;
            pos = 0;
        }
        if (len == cap) {
            if (cap >= VT_MAX_LINE) {
                if (lp && vt_lp_finish(lp, vt_rd_parsed, &r)) {
                    rc = -1;
                    break;
                }
                r.line++;
                rc = vt_rd_fail(&r, "line longer than %u MiB", VT_MAX_LINE >> 20);
                break;
            }
            cap *= 2;
            buf = vt_xrealloc(buf, cap + 1);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (lp && vt_lp_finish(lp, vt_rd_parsed, &r)) {
                rc = -1;
                break;
            }
            r.line++;
            rc = vt_rd_fail(&r, "read error: %s", strerror(errno));
            break;
        }
        if (n == 0) eof = 1;
        len += (size_t)n;
    }
    if (rc == 0 && lp) rc = vt_lp_finish(lp, vt_rd_parsed, &r) ? -1 : 0;
    vt_lp_free(lp);
    if (rc == 0 && len > pos) {
        /* a torn last line: the writer was killed mid-record */
        if (r.p) r.p->torn_tail = 1;
        if (rs->verbose)
            rd_note("%s:%llu: ignoring a torn last line (%zu bytes without a newline)", path,
                    (unsigned long long)r.line + 1, len - pos);
    }
    free(buf);
    close(fd);
    if (rc == 0 && !r.p) {
        if (in_dir) {
            /* a process that died (or hit a full disk) before its first
             * record: not a reason to refuse the rest of the folder */
            rd_note("vramtrace: %s: no complete record (skipped)", path);
            vt_rd_release(&r);
            return 1;
        }
        r.line = 1;
        rc = vt_rd_fail(&r, len ? "no complete record (only a torn line)" : "empty file");
    }
    vt_rd_release(&r);
    if (rc < 0) {
        vt_process_free(r.p);
        return -1;
    }
    vt_process *p = r.p;
    vt_fold_finish(p);
    for (size_t i = 0; i < rs->n; i++) {
        if (same_process(rs->procs[i], p)) {
            /* two copies of one process's stream (a copy taken while it ran, a backup):
             * the fuller one is read, whichever sorts first */
            vt_process *q = rs->procs[i];
            int fuller = p->exited != q->exited ? p->exited > q->exited : p->nsnapshots > q->nsnapshots;
            if (fuller) {
                rs->procs[i] = p;
                p = q;
            }
            rd_note("vramtrace: %s: same process (host %s, pid %llu) as %s, the copy kept (as many records or more); skipped",
                    p->file, p->host, (unsigned long long)p->pid, rs->procs[i]->file);
            vt_process_free(p);
            return 0;
        }
    }
    VT_PUSH(rs->procs, rs->n, rs->cap, p);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(vt_runset *rs, const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        snprintf(rs->err, sizeof rs->err, "%s:0: cannot open folder: %s", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".jsonl") == 0 && e->d_name[0] != '.') {
            char *full = vt_xmalloc(strlen(path) + l + 2);
            sprintf(full, "%s/%s", path, e->d_name);
            VT_PUSH(names, n, cap, full);
        }
    }
    closedir(d);
    int rc = 0;
    if (!n) {
        snprintf(rs->err, sizeof rs->err, "%s:0: folder has no snapshot files (*.jsonl)", path);
        rc = -1;
    }
    if (n)   /* qsort(NULL, 0, ...) is undefined (UBSan) */
        qsort(names, n, sizeof *names, cmp_str);
    size_t complete = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            rc = vt_load_file(rs, names[i], 1);
            if (rc == 0) complete++;
            else if (rc > 0) rc = 0;    /* skipped: no complete record */
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && n && !complete) {
        snprintf(rs->err, sizeof rs->err, "%s:0: no snapshot file in the folder has a complete record", path);
        rc = -1;
    }
    return rc;
}

int vt_load_paths(vt_runset *rs, char *const *paths, int npaths)
{
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) < 0) {
            snprintf(rs->err, sizeof rs->err, "%s:0: cannot open: %s", paths[i], strerror(errno));
            return -1;
        }
        int rc = S_ISDIR(st.st_mode) ? load_dir(rs, paths[i]) : vt_load_file(rs, paths[i], 0);
        if (rc < 0) return -1;
    }
    if (!rs->n) {
        snprintf(rs->err, sizeof rs->err, "%s:0: no snapshots", npaths ? paths[0] : "-");
        return -1;
    }
    return 0;
}
