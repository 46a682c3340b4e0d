/* vt_tracefile.h — the event trace file (VRAMTRACE_TRACE=1): the records the core
 * noted (track/vt_trace.h) appended to <stem>.trace beside the snapshot stream
 * (the stream's name up to ".jsonl"), format in docs/snapshot-format.md "Event trace".
 *
 * Writer side only (the writer thread, and the exit path after it ended): never on
 * the hook path. Bounded: when the file would pass VRAMTRACE_MAX_BYTES (its own
 * budget, the same figure as the stream's cap; 0 = none) one STOP record is written,
 * one `vramtrace:` line says so, and later events are dropped. A write fault stops
 * the trace the same way (the stream goes on). Thread safety: one internal mutex.
 */
#ifndef VT_TRACEFILE_H
#define VT_TRACEFILE_H

/* Takes the core's pending records and appends them (opening the file at the first
 * call, named after stream_path; NULL or "": nothing written, the records dropped). */
void vt_tracefile_flush(const char *stream_path);

/* Closes the file (the process ends). */
void vt_tracefile_close(void);

/* In a fork child: the parent's file and pending records are the parent's; the
 * child's trace starts afresh beside its own stream. */
void vt_tracefile_fork_child(void);

#endif /* VT_TRACEFILE_H */
