/* vt_cuda_runtime.c — the runtime shims that fit no shape of the hook table
 * (vt_hook_table.h rows of family RT, shape HAND). Follows cuda_runtime_api.h of
 * CUDA 13.
 *
 * These fire for programs that use the SHARED runtime (libcudart.so.13). Every shim
 * returns the real cudaError_t unchanged and preserves errno; when the real function
 * cannot be found it returns cudaErrorInitializationError without doing anything.
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"

/* The program resets its current device: every ordinary allocation of that device's
 * primary context is gone (stream-ordered pool memory survives, as in the driver). */
cudaError_t vt__h_cudaDeviceReset(void)
{
    VT_REAL_OR_RETURN(cudaDeviceReset, VT_NOTREADY_RT);
    vt_call c;
    vt_call_begin(&c, 0);
    uint64_t ctx = 0;
    int dev = c.rec ? vt_driver_device_current(&ctx) : -1;
    uint64_t before = vt_core_next_seq();
    cudaError_t r = real_cudaDeviceReset();
    int e = errno;
    if (r == cudaSuccess) {
        vt_driver_ctx_changed();
        if (c.rec && dev >= 0)
            vt_core_drop_context(dev, 0, before);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaDeviceReset);

