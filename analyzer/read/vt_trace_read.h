/* vt_trace_read.h — the event trace beside a snapshot stream (VRAMTRACE_TRACE=1;
 * docs/snapshot-format.md "Event trace"): <stem>.trace, the stream's name up to
 * ".jsonl". Read whole into memory; a caller that finds none goes on without it.
 */
#ifndef VT_TRACE_READ_H
#define VT_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

enum { VT_TEV_ALLOC = 1, VT_TEV_FREE = 2 };

/* One allocation or free, in the order the preload applied them. */
typedef struct vt_tev {
    uint64_t time_ns;   /* CLOCK_MONOTONIC ns, made non-decreasing in file order */
    uint64_t addr, size, stream;
    int64_t  stack;     /* the stream's stack id; INT64_MIN: none (0 in the file) */
    int32_t  device;    /* CUDA ordinal or -1 */
    uint8_t  kind;      /* vt_kind */
    uint8_t  op;        /* VT_TEV_* */
} vt_tev;

typedef struct vt_trace {
    vt_tev  *ev;        /* owned */
    size_t   n;
    uint64_t lost;      /* events the preload counted as lost (LOST records) */
    int      stopped;   /* a STOP record: the trace ends early (the cap, a fault) */
    char     path[4096];
} vt_trace;

/* Reads the trace beside stream_path into *t. Returns 1 (read), 0 (no such file:
 * *t empty) or -1 with "file:offset: what" in err (a bad header, an unknown record
 * kind; a torn last record is dropped without error). */
int vt_trace_read(const char *stream_path, vt_trace *t, char *err, size_t cap);

void vt_trace_free(vt_trace *t);

/* The event trace's path for stream_path (<stem>.trace) into out; 1 when it is a
 * regular file there, else 0. Reads nothing. */
int vt_trace_beside(const char *stream_path, char *out, size_t cap);

/* For an event trace at trace_path, its stream beside it (<stem>.jsonl.zst, .jsonl or
 * .jsonl.gz, the first that exists) into out; 1 when found, else 0 with out
 * "<stem>.jsonl.zst". */
int vt_trace_stream(const char *trace_path, char *out, size_t cap);

/* 1 when the first bytes of a file (n of them) are an event trace's magic "VTTRACE1". */
int vt_trace_magic(const unsigned char *head, size_t n);

#endif /* VT_TRACE_READ_H */
