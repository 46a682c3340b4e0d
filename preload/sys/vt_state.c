/* vt_state.c — the process-wide flags of vt_state.h: two ints, atomic accesses. */
#include "vt_state.h"

static int vt__writer_state;   /* enum vt_state_writer */
static int vt__exiting;        /* 0, then 1 */

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
