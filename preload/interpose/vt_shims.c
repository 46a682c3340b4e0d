/* vt_shims.c — the shims generated from the hook table: every row of
 * vt_hook_table.h whose shape is not HAND becomes one exported function here
 * (the shapes are in vt_hooks.h).
 *
 * Reached three ways: PLT interposition (a program linked with -lcudart or -lcuda),
 * our dlsym override (dlsym(handle, "cudaMalloc"), Python ctypes), and the resolvers
 * (cuGetProcAddress*, cudaGetDriverEntryPoint*: the runtime, shared or static, reaches
 * every driver function that way). With the shared runtime the driver shims fire
 * underneath the runtime's: only the outermost hooked call on a thread records. A
 * statically linked runtime is not interposable: only the driver shims see it.
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"
#include "vt_resolve.h"

VT_HOOK_TABLE(VT_SHIM_DEFINE)
