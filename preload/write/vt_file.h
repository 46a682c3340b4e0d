/* vt_file.h — the snapshot file as a byte sink: folder and file creation, the
 * descriptor check, whole-line appends. It knows nothing of records (vt_encode.h
 * turns records into bytes; vt_writer.c decides what to write).
 *
 * File rules (docs/snapshot-format.md "Files"): folder $VRAMTRACE_OUTPUT and missing
 * parents created 0700; the folder must be safe (vt_file_create); the file
 * vt.<host>.<pid>.<start_ns>.jsonl (…-<n>.jsonl when the name exists) is created new
 * with O_CREAT|O_EXCL|O_NOFOLLOW|O_APPEND|O_CLOEXEC, mode 0600, and moved to a high
 * descriptor number (vt_fd.h).
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
} vt_file;

/* Creates the folder `dir` and a new file in it named after the host, the pid and
 * start_ns (CLOCK_REALTIME nanoseconds). Writes the name to f->path (cleared when the
 * name does not fit or nothing could be created) and returns the new descriptor (high
 * number), with *dev and *ino of the file; -1 on failure (tracking latched off). f->fd
 * is left alone: the caller stores the descriptor under its output lock. */
int vt_file_create(vt_file *f, const char *dir, uint64_t start_ns, dev_t *dev, ino_t *ino);

/* Appends n bytes (whole records) with write(2), after making sure f->fd still refers
 * to f's file: a program that closed it (a daemon's close-all) or put its own file at
 * that number (dup2) gets it reopened by path (O_APPEND|O_NOFOLLOW, same dev+ino) at a
 * high number; the program's descriptor is never written to nor closed. Returns 0, or
 * -EIO when the file cannot be written or was removed (tracking latched off, f->fd
 * closed if ours and set to -1). */
int vt_file_append(vt_file *f, const char *p, size_t n);

/* Closes f->fd when it still refers to f's file (never the program's descriptor at
 * that number) and sets it to -1. */
void vt_file_close(vt_file *f);

#endif /* VT_FILE_H */
