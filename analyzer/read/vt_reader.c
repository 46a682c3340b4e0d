/* vt_reader.c — snapshot files and folders into a vt_runset (contract in
 * vt_reader.h): listing a folder and its sub-folders (a bad file there is a note,
 * not an error), reading a file into lines, handing each line to
 * the decoder (vt_decode.h) on this thread or through the parser workers
 * (vt_lineparse.h), a torn last line, and two copies of one process's stream.
 *
 * Design: a file's bytes come through rd_src: plain, a sequence of zstd frames
 * (libzstd streaming), or gzip (zlib), told apart by the first bytes, not the name;
 * a zstd frame that ends in a whole block is a stream still being written (read as
 * is), one cut inside a block is a torn write, and a gzip member cut short a torn
 * tail: each ends the file there with a note. Then
 * into a growing buffer, split at '\n', check the line's length;
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
#include <zlib.h>
#include <zstd.h>

#include "vt_decode.h"
#include "vt_display.h"
#include "vt_fold.h"
#include "vt_slots.h"
#include "vt_trace_read.h"
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

/* A snapshot file's decoded bytes. */
typedef struct {
    int fd;
    int kind;              /* 0 plain, 1 zstd, 2 gzip                                */
    ZSTD_DCtx *dz;
    char *zin;             /* compressed bytes read, zin_len of them, zin_pos used   */
    size_t zin_len, zin_pos;
    int zin_eof;
    int mid_frame;         /* zstd: input consumed since the last frame ended        */
    size_t hint;           /* zstd: the last ZSTD_decompressStream return (its hint)  */
    unsigned long long frame_end, consumed;   /* zstd: file offsets                  */
    gzFile gz;
    int torn;              /* 1: the file ends inside a block (gzip: inside a member) */
    char err[256];
} rd_src;

#define RD_ZIN (1u << 17)
#define RD_ZSTD_BLOCK_HEADER 3   /* bytes of a zstd block header (RFC 8878 3.1.1.2) */

/* Opens the source on fd (owned from here: rd_src_close closes it). 0, or -1 with
 * s->err. */
static int rd_src_open(rd_src *s, int fd)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    unsigned char m[4];
    ssize_t n = pread(fd, m, sizeof m, 0);
    if (n == 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
        s->kind = 1;
        s->dz = ZSTD_createDCtx();
        s->zin = vt_xmalloc(RD_ZIN);
        if (!s->dz) {
            snprintf(s->err, sizeof s->err, "out of memory for a zstd context");
            return -1;
        }
    } else if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
        s->kind = 2;
        s->gz = gzdopen(fd, "rb");
        if (!s->gz) {
            snprintf(s->err, sizeof s->err, "cannot read as gzip");
            return -1;
        }
        s->fd = -1;   /* the gzFile's now */
        gzbuffer(s->gz, RD_ZIN);
    }
    return 0;
}

/* Up to cap decoded bytes into buf: their number, 0 at the end (s->torn set when the
 * file ends inside a frame), -1 with s->err. */
static ssize_t rd_src_read(rd_src *s, char *buf, size_t cap)
{
    if (s->kind == 0) {
        for (;;) {
            ssize_t n = read(s->fd, buf, cap);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) snprintf(s->err, sizeof s->err, "read error: %s", strerror(errno));
            return n;
        }
    }
    if (s->kind == 2) {
        if (cap > (1u << 30)) cap = 1u << 30;
        int n = gzread(s->gz, buf, (unsigned)cap);
        if (n > 0) return n;
        int e;
        const char *msg = gzerror(s->gz, &e);
        if (e == Z_BUF_ERROR) {   /* "unexpected end of file": a torn gzip tail */
            s->torn = 1;
            return 0;
        }
        if (n == 0) return 0;
        snprintf(s->err, sizeof s->err, "gzip: %s", e == Z_ERRNO ? strerror(errno) : msg);
        return -1;
    }
    for (;;) {
        if (s->zin_pos == s->zin_len && !s->zin_eof) {
            ssize_t n = read(s->fd, s->zin, RD_ZIN);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                snprintf(s->err, sizeof s->err, "read error: %s", strerror(errno));
                return -1;
            }
            if (n == 0) s->zin_eof = 1;
            s->zin_len = (size_t)n;
            s->zin_pos = 0;
        }
        ZSTD_inBuffer in = { s->zin, s->zin_len, s->zin_pos };
        ZSTD_outBuffer out = { buf, cap, 0 };
        size_t r = ZSTD_decompressStream(s->dz, &out, &in);
        if (ZSTD_isError(r)) {
            snprintf(s->err, sizeof s->err, "zstd frame starting at byte %llu: %s", s->frame_end, ZSTD_getErrorName(r));
            return -1;
        }
        s->consumed += in.pos - s->zin_pos;
        if (in.pos > s->zin_pos) s->mid_frame = 1;
        s->zin_pos = in.pos;
        s->hint = r;
        if (r == 0) {
            s->mid_frame = 0;
            s->frame_end = s->consumed;
        }
        if (out.pos) return (ssize_t)out.pos;
        if (s->zin_pos == s->zin_len && s->zin_eof) {
            /* Inside a frame: the stream of a process still running or killed ends
             * there. Whole blocks (every append flushed) leave libzstd waiting for
             * the next block header: its hint is exactly the header's 3 bytes; any
             * other value means a block (or header) cut short: a torn write. */
            if (s->mid_frame && s->hint != RD_ZSTD_BLOCK_HEADER)
                s->torn = 1;
            return 0;
        }
    }
}

static void rd_src_close(rd_src *s)
{
    if (s->gz) gzclose(s->gz);
    if (s->fd >= 0) close(s->fd);
    ZSTD_freeDCtx(s->dz);
    free(s->zin);
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
        if (errno == ELOOP) snprintf(rs->err, sizeof rs->err, "%s: is a symbolic link in a snapshot folder (not followed; name it explicitly)", path);
        else snprintf(rs->err, sizeof rs->err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(rs->err, sizeof rs->err, "%s: %s", path,
                 S_ISDIR(st.st_mode) ? "is a folder" : "not a regular file");
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    unsigned char magic[8];
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    if (vt_trace_magic(magic, got == (ssize_t)sizeof magic ? sizeof magic : 0)) {
        char stream[4096];
        int have = vt_trace_stream(path, stream, sizeof stream);
        snprintf(rs->err, sizeof rs->err, "%s: this is an event trace (VTTRACE1), not a snapshot stream; read it with "
                 "`vramtrace export --format torch|perfetto %.900s`, on its stream%s", path, stream,
                 have ? "" : " (not found beside it)");
        close(fd);
        return -1;
    }
    rd_src src;
    if (rd_src_open(&src, fd) < 0) {
        snprintf(rs->err, sizeof rs->err, "%s: %s", path, src.err);
        rd_src_close(&src);
        return -1;
    }

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
        ssize_t n = rd_src_read(&src, buf + len, cap - len);
        if (n < 0) {
            if (lp && vt_lp_finish(lp, vt_rd_parsed, &r)) {
                rc = -1;
                break;
            }
            r.line++;
            rc = vt_rd_fail(&r, "%s", src.err);
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
    if (rc == 0 && src.torn && r.p) {
        /* the writer was killed mid-write: the records of its last write are lost */
        r.p->torn_tail = 1;
        if (src.kind == 1)
            rd_note("%s: ignoring a torn zstd block at the end of the file (a write cut short; the records before "
                    "it are read)", path);
        else
            rd_note("%s: the gzip stream ends early (torn tail; the records before it are read)", path);
    }
    free(buf);
    rd_src_close(&src);
    if (rc == 0 && !r.p) {
        if (in_dir) {
            /* a process that died (or hit a full disk) before its first
             * record: not a reason to refuse the rest of the folder */
            rd_note("vramtrace: %s: no complete record (skipped)", path);
            vt_rd_release(&r);
            return 1;
        }
        r.line = 1;
        rc = vt_rd_fail(&r, len ? "no complete record (only a torn line)"
                            : src.torn ? "no complete record (only a torn compressed frame)" : "empty file");
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
    vt_slots_fit(rs->procs, rs->n, vt_points_budget());   /* the series of all processes stay bounded */
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when t is "", ".zst" or ".gz" (a compressed stream's suffix). */
static int compressed_or_plain(const char *t)
{
    return !*t || !strcmp(t, ".zst") || !strcmp(t, ".gz");
}

int vt_snapshot_name(const char *name)
{
    if (name[0] == '.') return 0;
    const char *x = strstr(name, ".jsonl");
    for (; x; x = strstr(x + 1, ".jsonl")) {
        if (x == name) continue;
        const char *t = x + 6;
        if (compressed_or_plain(t)) return 1;
        /* logrotate's names: <stream>.N, <stream>.N.zst, and <stream>.zst.N (rename of a
         * compressed stream) */
        if (!strncmp(t, ".zst.", 5) || !strncmp(t, ".gz.", 4)) {
            const char *d = t + (t[1] == 'z' ? 5 : 4);
            if (*d >= '0' && *d <= '9') {
                while (*d >= '0' && *d <= '9') d++;
                if (!*d) return 2;
            }
        }
        if (*t++ != '.' || !(*t >= '0' && *t <= '9')) continue;
        while (*t >= '0' && *t <= '9') t++;
        if (compressed_or_plain(t)) return 2;
    }
    return 0;
}
#define snapshot_name vt_snapshot_name

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
        snprintf(rs->err, sizeof rs->err, "%s: cannot open folder: %s", path, strerror(errno));
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
                rd_note("%s: cannot examine: %s (skipped)", full, strerror(errno));
            if (!rs->skipped_files++)
                snprintf(rs->first_skipped, sizeof rs->first_skipped, "%s: cannot examine: %s", full, strerror(errno));
            }
            free(full);
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            struct stat to;
            if (kind) {
                dc->seen++;
                rd_note("%s: is a symbolic link in a snapshot folder (not followed; name it explicitly)", full);
            } else if (stat(full, &to) == 0 && S_ISDIR(to.st_mode)) {
                rd_note("%s: is a symbolic link to a folder (not followed; name it to read it)", full);
            }
            free(full);
        } else if (S_ISDIR(st.st_mode)) {
            if (depth < VT_DIR_DEPTH) {
                VT_PUSH(dirs, nd, capd, full);
            } else {
                if (has_snapshot_names(full))
                    rd_note("%s: a folder deeper than %d levels below %s (not read; name it to read it)", full,
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
                rd_note("%s: a rotated copy, read as a process of its own (the preload never rotates its stream: "
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
        snprintf(rs->err, sizeof rs->err, "%s: folder has no snapshot files (*.jsonl, *.jsonl.zst, *.jsonl.gz)", path);
        return -1;
    }
    if (!dc.read) {
        snprintf(rs->err, sizeof rs->err, "%s: no snapshot file in the folder has a complete record", path);
        return -1;
    }
    return 0;
}

int vt_load_paths(vt_runset *rs, char *const *paths, int npaths)
{
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) < 0) {
            snprintf(rs->err, sizeof rs->err, "%s: cannot open: %s", paths[i], strerror(errno));
            return -1;
        }
        int rc = S_ISDIR(st.st_mode) ? load_dir(rs, paths[i]) : vt_load_file(rs, paths[i], 0);
        if (rc < 0) return -1;
    }
    if (!rs->n) {
        snprintf(rs->err, sizeof rs->err, "%s: no snapshots", npaths ? paths[0] : "-");
        return -1;
    }
    return 0;
}
