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
 * reset for each new file, and kept for the process's life.
 *
 * Write faults (disk full, EIO, quota, the file or its folder removed): an append
 * that fails returns -errno and leaves the file as it was before it: a partial write
 * is cut off again (ftruncate to f->good, the end of the last whole append), so the
 * file never ends in a torn record. Nothing is latched off: the writer counts what it
 * cannot write and calls vt_file_resume at its own pace. Resuming the same file ends
 * the frame the failed append left open (RFC 8878: an empty raw last block, 3 bytes,
 * no checksum) and starts a new one with a fresh compressor context, so the file is
 * a sequence of frames a reader decodes one after the other; a removed file (or
 * folder) is created again by path and the caller writes its header first.
 *
 * Errors: a failure to create the first file or to compress latches tracking off
 * through vt_core_latch_off with one line saying why, and the caller gets -1 (create)
 * or -EIO (append); write faults are as above.
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
    off_t good;               /* after a failed append: the file's bytes before it       */
    int   frame_open;         /* compressed: the file ends inside a frame (whole blocks) */
    int   err;                /* errno of the last failed append; 0 none                 */
    char  why[96];            /* its text ("the file was removed", strerror)             */
} vt_file;

/* Creates the folder `dir` and a new file in it named after the host, the pid and
 * start_ns (CLOCK_REALTIME nanoseconds). Writes the name to f->path (cleared when the
 * name does not fit or nothing could be created) and returns the new descriptor (high
 * number), with *dev and *ino of the file; -1 on failure (tracking latched off). f->fd
 * is left alone: the caller stores the descriptor under its output lock. */
int vt_file_create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino);

/* Appends n bytes (whole records) with write(2), through the zstd stream when
 * f->compress, after making sure f->fd still refers to f's file: a program that
 * closed it (a daemon's close-all) or put its own file at that number (dup2) gets it
 * reopened by path (O_APPEND|O_NOFOLLOW, same dev+ino) at a high number; the
 * program's descriptor is never written to nor closed. Returns 0; -EIO when the
 * records cannot be compressed (tracking latched off, f->fd closed); or -errno of a
 * write fault (ENOENT when the file or its folder was removed) with f->err, f->why
 * and f->good set and the torn bytes cut off: nothing more may be appended before
 * vt_file_resume succeeds. */
int vt_file_append(vt_file *f, const char *p, size_t n);

/* After a write fault: makes the file writable again. The same file when it is still
 * there (found by dev+ino, reopened by path if its descriptor was taken): cut back to
 * f->good, its open frame ended, the next append starts a new frame; returns 0.
 * Else (removed, or its folder) a new file at the same path (dir and start_ns as for
 * vt_file_create; a -N name if that is taken), the old descriptor closed if ours;
 * returns 1: the caller writes the header and every definition again. -1 (errno)
 * when it still cannot be written (f->path kept; nothing latched off). */
int vt_file_resume(vt_file *f, const char *dir, uint64_t start_ns);

/* Ends the compressed stream's frame (nothing when not compressed, or after a write
 * fault not resumed): the last write of a process, or a point the size cap keeps (the
 * next append starts a new frame). Returns 0 or -EIO as vt_file_append. */
int vt_file_end(vt_file *f);

/* Replaces the file by `head` (n bytes of whole records, from the header on) followed
 * by the file's own bytes from offset `from` to its end (none when `from` is its size):
 * written to "<path>.tmp" (created new, 0600; a stale one of ours removed first), then
 * renamed over the path, so the stream keeps its name and a reader sees the old file
 * or the new one, never a mix. Compressed, the head is one zstd frame of its own,
 * ended; `from` must then be where a frame of the old file starts (vt_file_end was
 * called there), and the stream's current frame goes on in the new file (its bytes are
 * copied unchanged). On success f->fd, dev and ino are the new file's (the old
 * descriptor closed) and 0 is returned. -1 (errno) on any failure: the new file is
 * removed, nothing of f changed, appends go on in the old file; nothing is latched
 * off. Copies in the kernel (copy_file_range) where it can. */
int vt_file_replace(vt_file *f, const char *head, size_t n, uint64_t from);

/* Closes f->fd when it still refers to f's file (never the program's descriptor at
 * that number) and sets it to -1. */
void vt_file_close(vt_file *f);

#endif /* VT_FILE_H */
