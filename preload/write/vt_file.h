/* vt_file.h — the snapshot file as a byte sink: folder and file creation, the
 * descriptor check, whole-line appends. It knows nothing of records (vt_encode.h
 * turns records into bytes; vt_writer.c decides what to write).
 *
 * File rules (docs/snapshot-format.md "Files"): folder $VRAMTRACE_OUTPUT and missing
 * parents created 0700; the folder must be safe (vt_file_create); the file
 * vt.<host>.<pid>.<start_ns>.jsonl.zst (…-<n>.jsonl.zst when the name exists; .jsonl
 * without the .zst when not compressed) is created new
 * with O_CREAT|O_EXCL|O_NOFOLLOW|O_APPEND|O_CLOEXEC, mode 0600, and moved to a high
 * descriptor number (vt_fd.h).
 *
 * Compression (f->compress): the file is one zstd frame (RFC 8878), written as a
 * stream: each append is compressed with the records before it as context and
 * flushed, so the file always ends with complete blocks and a reader decodes every
 * append but a torn last one (the only records a killed writer loses). The frame is
 * ended by vt_file_end at the process's last write; a file without its end (a killed
 * process) reads the same. One frame per append would lose the context between
 * records: measured on examples/training_loop, 1.9x smaller than plain text against
 * 11x for the stream (docs/performance.md). The compression context is made at the
 * first compressed append (nothing is allocated in a process that never writes),
 * reset for each new file, and kept for the process's life. A failed write leaves the
 * stream unusable: the file is closed (as for a plain file).
 *
 * Errors: every failure latches tracking off through vt_core_latch_off with one line
 * saying why, and the caller gets -1 (create) or -EIO (append).
 * Thread safety: none of its own; the writer calls these under its output lock (create:
 * under its start lock; the result is stored under the output lock).
 */
#ifndef VT_FILE_H
#define VT_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct vt_file {
    int   fd;                 /* -1 none; may be found closed or replaced (vt_file_append) */
    dev_t dev;                /* the file fd must refer to                               */
    ino_t ino;
    char  path[PATH_MAX];     /* "" none                                                  */
    int   compress;           /* set before vt_file_create: 1 = zstd frames, *.jsonl.zst;
                                 cleared there when libzstd cannot be loaded (vt_zstd.h)  */
    void *zctx;               /* ZSTD_CCtx, NULL until the first compressed append        */
    char *zbuf;               /* one frame's bytes (malloc'ed), zcap bytes                */
    size_t zcap;
} vt_file;

/* Creates the folder `dir` and a new file in it named after the host, the pid and
 * start_ns (CLOCK_REALTIME nanoseconds). Writes the name to f->path (cleared when the
 * name does not fit or nothing could be created) and returns the new descriptor (high
 * number), with *dev and *ino of the file; -1 on failure (tracking latched off). f->fd
 * is left alone: the caller stores the descriptor under its output lock. */
int vt_file_create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino);

/* Appends n bytes (whole records) with write(2), as one zstd frame when f->compress, after making sure f->fd still refers
 * to f's file: a program that closed it (a daemon's close-all) or put its own file at
 * that number (dup2) gets it reopened by path (O_APPEND|O_NOFOLLOW, same dev+ino) at a
 * high number; the program's descriptor is never written to nor closed. Returns 0, or
 * -EIO when the file cannot be written or was removed (tracking latched off, f->fd
 * closed if ours and set to -1). */
int vt_file_append(vt_file *f, const char *p, size_t n);

/* Ends the compressed stream's frame (nothing when not compressed): the last write
 * of a process. Returns 0 or -EIO as vt_file_append. */
int vt_file_end(vt_file *f);

/* Closes f->fd when it still refers to f's file (never the program's descriptor at
 * that number) and sets it to -1. */
void vt_file_close(vt_file *f);

#endif /* VT_FILE_H */
