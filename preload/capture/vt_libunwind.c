/* vt_libunwind.c — libunwind loaded at activation (contract in vt_libunwind.h). */
#include "vt_libunwind.h"
#include "vt_dlib.h"

vt_unw_backtrace_fn vt__unw_backtrace;
vt_unw_cursor_api vt__unw_cursor;

/* unw_backtrace last: the table is filled in order, so a thread that sees it set sees
 * the cursor functions too (vt_dlib publishes the slots before marking the load done). */
static const vt_dlib_fn vt__unw_fns[] = {
#if defined(__x86_64__)
    { "_Ux86_64_getcontext",        (void **)&vt__unw_cursor.getcontext },
    { "_ULx86_64_init_local",       (void **)&vt__unw_cursor.init_local },
    { "_ULx86_64_step",             (void **)&vt__unw_cursor.step },
    { "_ULx86_64_get_reg",          (void **)&vt__unw_cursor.get_reg },
    { "_ULx86_64_get_save_loc",     (void **)&vt__unw_cursor.get_save_loc },
    { "_ULx86_64_is_signal_frame",  (void **)&vt__unw_cursor.is_signal_frame },
#endif
    { "unw_backtrace", (void **)&vt__unw_backtrace },
};

static int vt__unw_state;
static const vt_dlib vt__unw_lib = {
    "libunwind.so.8", "allocations are recorded without stacks",
    vt__unw_fns, sizeof vt__unw_fns / sizeof vt__unw_fns[0], &vt__unw_state
};

int vt_libunwind_load(void)
{
    return vt_dlib_load(&vt__unw_lib);
}
