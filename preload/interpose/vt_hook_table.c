/* vt_hook_table.c — the real-function pointers and the resolver's rows, both
 * generated from the hook table (vt_hook_table.h).
 *
 * real_<name>: the real library's function, NULL until found. Written only by
 * vt_resolve.c (atomic stores of the same value from any thread), read by the shims
 * (atomic loads).
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_resolve.h"

#define VT_HOOK_REAL(name, ...) vt_##name##_t real_##name;
VT_HOOK_TABLE(VT_HOOK_REAL)

#define VT_HOOK_ROW_FWD_FRONT(name) (void **)&vt__fwd_##name
#define VT_HOOK_ROW_FWD_NOFRONT(name) NULL
#define VT_HOOK_ROW(name, fam, kind, shape, front, ...) \
    {#name, (void **)&real_##name, (void *)vt__h_##name, VT_HOOK_ROW_FWD_##front(name)},
const vt_hook_entry vt__hooks[] = {VT_HOOK_TABLE(VT_HOOK_ROW)};
const size_t vt__n_hooks = sizeof vt__hooks / sizeof vt__hooks[0];
