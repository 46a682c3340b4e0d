/* vt_libunwind.c — libunwind loaded at activation (contract in vt_libunwind.h). */
#include "vt_libunwind.h"
#include "vt_dlib.h"

vt_unw_backtrace_fn vt__unw_backtrace;

static const vt_dlib_fn vt__unw_fns[] = {
    { "unw_backtrace", (void **)&vt__unw_backtrace },
};

static int vt__unw_state;
static const vt_dlib vt__unw_lib = {
    "libunwind.so.8", "allocations are recorded without stacks",
    vt__unw_fns, 1, &vt__unw_state
};

int vt_libunwind_load(void)
{
    return vt_dlib_load(&vt__unw_lib);
}
