/* vt_state.h — process-wide flags that several modules read: whether the snapshot
 * writer has its file open, and whether process exit has begun.
 *
 * Each flag has one writer module (named below) and any number of readers; all reads
 * and writes are atomic (acquire/release), so any thread, a signal handler included,
 * may read them without a lock. No allocation, no system call. Calls nothing above
 * sys/.
 */
#ifndef VT_STATE_H
#define VT_STATE_H

/* The snapshot writer's file state (set by write/vt_writer.c only). */
enum vt_state_writer {
    VT_STATE_WRITER_NONE = 0,     /* not started (or a fork child that has not started) */
    VT_STATE_WRITER_OPEN = 1,     /* the file is open and the header written          */
    VT_STATE_WRITER_FAILED = -1,  /* could not start, or a write failed, or closed at exit */
};
int  vt_state_writer(void);
void vt_state_set_writer(int state);

/* Exit has begun (the preload's exit marker ran, or its destructor): nothing may call
 * the CUDA driver any more. Set once by vt_state_exit_begin (interpose/ through
 * vt_writer_exit_begun); never cleared, not even in a fork child. */
void vt_state_exit_begin(void);
int  vt_state_exiting(void);

#endif /* VT_STATE_H */
