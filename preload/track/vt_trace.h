/* vt_trace.h — the event trace's in-memory side (VRAMTRACE_TRACE=1): each allocation
 * and free the table applies, as one fixed record, kept for the writer thread.
 *
 * Design: the table notes an event while it applies it (under the core lock, so in
 * the ring's one global order) into a pending buffer of VT_TRACE_PENDING records; the
 * writer thread swaps that buffer for its spare (vt_core_trace_take, O(1) under the
 * lock) and writes the records outside every lock (write/vt_tracefile.c). Nothing
 * here does I/O, and a hook never waits for the writer: when the pending buffer is
 * full, events are counted as lost (the file then holds one LOST marker with the
 * count). Memory: two buffers of VT_TRACE_PENDING * 40 bytes, from the first note.
 *
 * The record is also the file's record (docs/snapshot-format.md "Event trace"):
 * 40 bytes, little-endian, no padding.
 */
#ifndef VT_TRACE_H
#define VT_TRACE_H

#include <stddef.h>
#include <stdint.h>

enum { VT_TRACE_ALLOC = 1, VT_TRACE_FREE = 2, VT_TRACE_LOST = 3, VT_TRACE_STOP = 4 };

#define VT_TRACE_PENDING 65536u   /* records kept between two takes */

typedef struct vt_trace_rec {
    uint64_t time_ns;   /* CLOCK_MONOTONIC ns: an allocation's hook time; a free's
                           hook time when the ring carried it, else when applied      */
    uint64_t addr;
    uint64_t size;      /* bytes; LOST: the number of events lost                      */
    uint64_t stream;    /* the record's ctx_stream column (a stream-ordered call's
                           CUstream, else the CUcontext current at the call)          */
    uint32_t stack;     /* the snapshot stream's stack id (0: none)                    */
    int16_t  device;    /* CUDA ordinal or -1                                           */
    uint8_t  kind;      /* vt_kind (common/vt_format.h), without flags                 */
    uint8_t  op;        /* VT_TRACE_*                                                   */
} vt_trace_rec;

_Static_assert(sizeof(vt_trace_rec) == 40, "the trace file's record is 40 bytes");

/* 1 when VRAMTRACE_TRACE=1 (read from the settings at the first note or take). */
int vt_core_trace_on(void);

/* Writer side: hands over the records noted since the last take. *out points at them
 * (valid until the next take; one taker at a time, the caller serialises), returns
 * their number; *lost: events lost since the last take (pending buffer full). Takes
 * the core lock briefly. 0 when tracing is off or nothing is pending. */
size_t vt_core_trace_take(const vt_trace_rec **out, uint64_t *lost);

#endif /* VT_TRACE_H */
