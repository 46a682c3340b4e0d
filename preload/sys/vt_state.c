/* vt_state.c — the process-wide run-time state of vt_state.h: ints, atomic accesses. */
#include "vt_state.h"

static int vt__writer_state;   /* enum vt_state_writer */
static int vt__exiting;        /* 0, then 1 */
static int vt__forward_only;   /* 0, then 1 */
int vt__state_depth;           /* frames per stack now; vt_state_depth() */

int vt_state_writer(void)
{
    return __atomic_load_n(&vt__writer_state, __ATOMIC_ACQUIRE);
}

void vt_state_set_writer(int state)
{
    __atomic_store_n(&vt__writer_state, state, __ATOMIC_RELEASE);
}

void vt_state_exit_begin(void)
{
    __atomic_store_n(&vt__exiting, 1, __ATOMIC_RELEASE);
}

int vt_state_exiting(void)
{
    return __atomic_load_n(&vt__exiting, __ATOMIC_ACQUIRE);
}

void vt_state_set_depth(int depth)
{
    __atomic_store_n(&vt__state_depth, depth, __ATOMIC_RELAXED);
}

void vt_state_set_forward_only(void)
{
    __atomic_store_n(&vt__forward_only, 1, __ATOMIC_RELEASE);
}

int vt_state_forward_only(void)
{
    return __atomic_load_n(&vt__forward_only, __ATOMIC_ACQUIRE);
}
