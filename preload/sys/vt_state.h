/* vt_state.h — process-wide run-time state that several modules read: whether the
 * snapshot writer has its file open, whether process exit has begun, the stack depth
 * in effect, and whether this copy of the library only forwards. The settings it
 * starts from (vt_config.h) never change after they are read; this state may.
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
 * vt_writer_exit_marker, and write/ vt_writer_exit); never cleared, not even in a fork child. */
void vt_state_exit_begin(void);
int  vt_state_exiting(void);

/* Stack frames captured per allocation now: VRAMTRACE_DEPTH (set by vt_config_load),
 * or 0 for good in a fork child forked while another thread was inside libunwind
 * (set by interpose/ vt_hook_fork_nostacks, in the child's only thread). Read
 * inline by every allocation hook (one relaxed load). */
extern int vt__state_depth;
static inline int vt_state_depth(void)
{
    return __atomic_load_n(&vt__state_depth, __ATOMIC_RELAXED);
}
void vt_state_set_depth(int depth);

/* This copy of libvramtrace records nothing and only forwards: another copy comes
 * first in the global scope (set by interpose/ vt_preload_init before the core
 * starts; never cleared). The core treats it like VRAMTRACE_DISABLE=1. */
void vt_state_set_forward_only(void);
int  vt_state_forward_only(void);

#endif /* VT_STATE_H */
