/* vt_reader.c — snapshot files and folders into a vt_runset (contract in
 * vt_reader.h): listing a folder and its sub-folders (a bad file there is a note,
 * not an error), reading a file into lines, handing each line to
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
        if (r.p) {
            r.p->torn_tail = 1;
            rd_note("%s:%llu: ignoring a torn last line (%zu bytes without a newline)", path,
                    (unsigned long long)r.line + 1, len - pos);
        }
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

/* A snapshot file's name: "*.jsonl" (1), or a rotated copy "*.jsonl.N", N decimal
 * digits (2); hidden names (a leading '.') and anything else: 0. */
static int snapshot_name(const char *name)
{
    if (name[0] == '.') return 0;
    const char *x = strstr(name, ".jsonl");
    for (; x; x = strstr(x + 1, ".jsonl")) {
        if (x == name) continue;
        const char *t = x + 6;
        if (!*t) return 1;
        if (*t++ != '.' || !*t) continue;
        while (*t >= '0' && *t <= '9') t++;
        if (!*t) return 2;
    }
    return 0;
}

/* 1 when the folder holds a snapshot file directly (a regular file or not). */
static int has_snapshot_names(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) found = snapshot_name(e->d_name) != 0;
    closedir(d);
    return found;
}

typedef struct {
    size_t seen;   /* snapshot files met (regular or not) */
    size_t read;   /* files that gave a process (or a second copy of one) */
} dir_count;

/* One folder at depth (0: the folder named) of the one named, top: its snapshot
 * files by name, then its sub-folders by name down to VT_DIR_DEPTH. A file that
 * cannot be read is one note and skipped (the rest is read); symbolic links are
 * never followed (no loop can form; a bind mount loop ends at the depth bound).
 * -1 with rs->err only when the folder itself cannot be listed. */
static int load_tree(vt_runset *rs, const char *top, const char *path, int depth, dir_count *dc)
{
    DIR *d = opendir(path);
    if (!d) {
        snprintf(rs->err, sizeof rs->err, "%s:0: cannot open folder: %s", path, strerror(errno));
        return -1;
    }
    /* every entry's path first, sorted, so the notes come in name order */
    char **ents = NULL, **files = NULL, **dirs = NULL;
    size_t ne = 0, cape = 0, nf = 0, capf = 0, nd = 0, capd = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;   /* ".", "..", hidden names */
        char *full = vt_xmalloc(strlen(path) + strlen(e->d_name) + 2);
        sprintf(full, "%s/%s", path, e->d_name);
        VT_PUSH(ents, ne, cape, full);
    }
    closedir(d);
    if (ne) qsort(ents, ne, sizeof *ents, cmp_str);   /* qsort(NULL, 0, ...) is undefined (UBSan) */
    for (size_t i = 0; i < ne; i++) {
        char *full = ents[i];
        int kind = snapshot_name(strrchr(full, '/') + 1);
        struct stat st;
        if (lstat(full, &st) < 0) {
            if (kind) {
                dc->seen++;
                rd_note("%s:0: cannot examine: %s (skipped)", full, strerror(errno));
            if (!rs->skipped_files++)
                snprintf(rs->first_skipped, sizeof rs->first_skipped, "%s:0: cannot examine: %s", full, strerror(errno));
            }
            free(full);
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            struct stat to;
            if (kind) {
                dc->seen++;
                rd_note("%s:0: is a symbolic link in a snapshot folder (not followed; name it explicitly)", full);
            } else if (stat(full, &to) == 0 && S_ISDIR(to.st_mode)) {
                rd_note("%s:0: is a symbolic link to a folder (not followed; name it to read it)", full);
            }
            free(full);
        } else if (S_ISDIR(st.st_mode)) {
            if (depth < VT_DIR_DEPTH) {
                VT_PUSH(dirs, nd, capd, full);
            } else {
                if (has_snapshot_names(full))
                    rd_note("%s:0: a folder deeper than %d levels below %s (not read; name it to read it)", full,
                            VT_DIR_DEPTH, top);
                free(full);
            }
        } else if (kind) {
            dc->seen++;
            VT_PUSH(files, nf, capf, full);   /* not a regular file: vt_load_file says so */
        } else {
            free(full);
        }
    }
    free(ents);
    for (size_t i = 0; i < nf; i++) {
        int rc = vt_load_file(rs, files[i], 1);
        if (rc < 0) {
            rd_note("%s (file skipped)", rs->err);
            if (!rs->skipped_files++)
                snprintf(rs->first_skipped, sizeof rs->first_skipped, "%s", rs->err);
        } else if (rc == 0) {
            dc->read++;
            if (snapshot_name(strrchr(files[i], '/') + 1) == 2)
                rd_note("%s:0: a rotated copy, read as a process of its own (the preload never rotates its stream: "
                        "this is an outside copy of it, or the whole stream renamed)", files[i]);
        }
        rs->err[0] = 0;
        free(files[i]);
    }
    free(files);
    for (size_t i = 0; i < nd; i++) {
        if (load_tree(rs, top, dirs[i], depth + 1, dc) < 0) {
            rd_note("%s (skipped)", rs->err);   /* a sub-folder that cannot be listed */
            rs->err[0] = 0;
        }
        free(dirs[i]);
    }
    free(dirs);
    return 0;
}

static int load_dir(vt_runset *rs, const char *path)
{
    dir_count dc = {0, 0};
    if (load_tree(rs, path, path, 0, &dc) < 0) return -1;
    if (!dc.seen) {
        snprintf(rs->err, sizeof rs->err, "%s:0: folder has no snapshot files (*.jsonl)", path);
        return -1;
    }
    if (!dc.read) {
        snprintf(rs->err, sizeof rs->err, "%s:0: no snapshot file in the folder has a complete record", path);
        return -1;
    }
    return 0;
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
