/* vt_cuda_ipc.c — the shims of imported memory that fit no shape of the hook table
 * (rows of shape HAND in the "imported memory" sections of vt_hook_table.h): opening
 * and closing legacy IPC handles, runtime and driver. Follows cuda.h and
 * cuda_runtime_api.h of CUDA 13 ("Interprocess communication": a handle opened again
 * in the context that opened it returns the same pointer and counts a reference;
 * cuIpcCloseMemHandle takes one and unmaps at the last).
 *
 * What is recorded: the first open of a handle in a context records its bytes
 * (asked of the driver, cuMemGetAddressRange_v2) as kind ipc_import with the opener's
 * stack; later opens of it only count (track/vt_ipc.h); the last close frees the
 * record. The core keeps ipc_import bytes out of the device's and the process's live
 * bytes (another process owns them). A failed open is counted as a failed allocation
 * of kind ipc_import with its code.
 *
 * Every shim returns the real result unchanged and preserves errno; a nested call
 * (the runtime's call into the driver) only forwards; when the real function cannot
 * be found it returns the family's "not initialised" code and does nothing else.
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"

/* After a successful open of imported memory at addr on the outermost level with
 * tracking on: one more open of an import already recorded, or a new record of
 * size bytes (0: asked of the driver). refcounted: a legacy handle. */
static inline __attribute__((always_inline)) void vt__import_ok(const vt_call *c, uint64_t addr,
                                                                uint64_t size, uint64_t digest,
                                                                int refcounted)
{
    if (!size && vt_driver_range_size(addr, &size) != 0)
        size = 0;
    if (vt_ipc_import_open(addr, digest, size, refcounted) != 0)
        vt_hook_alloc_ok(c->stack, VT_KIND_IPC_IMPORT, addr, size, 0, VT_DEVICE_CURRENT);
}

/* A failed open: counted as a failed ipc_import allocation with its code. */
#define VT_IMPORT_FAILED(c, api, r, oom) \
    vt_hook_alloc_done(&(c), api, VT_KIND_IPC_IMPORT, 0, (int)(r), oom, 0, 0, 0, VT_DEVICE_CURRENT)

/* A close of the legacy import at addr: before the real call, takes one open and, at
 * the last (or for an address the table does not know), the record (vt_hook_free_begin);
 * after it, commits or gives both back. */
typedef struct vt__close {
    int      left;      /* opens left after this close; -1: not a known import */
    uint64_t ticket;
    vt_taken t;
} vt__close;

static inline __attribute__((always_inline)) void vt__close_begin(vt_call *c, vt__close *k, uint64_t addr)
{
    k->left = -1;
    k->ticket = 0;
    k->t.rec = NULL;
    if (!c->rec || !addr)
        return;
    k->left = vt_ipc_import_close_begin(addr);
    if (k->left <= 0)
        k->ticket = vt_hook_free_begin(c, addr, &k->t);
}

static inline __attribute__((always_inline)) void vt__close_end(vt_call *c, vt__close *k, uint64_t addr, int ok)
{
    if (!c->rec || !addr)
        return;
    if (k->left >= 0)
        vt_ipc_import_close_end(addr, ok);
    if (k->left <= 0)
        vt_hook_free_end(k->ticket, &k->t, ok, addr);
}

/* ---- legacy IPC handles ---- */

cudaError_t vt__h_cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    VT_REAL_OR_RETURN(cudaIpcOpenMemHandle, VT_NOTREADY_RT);
    VT_NESTED_FORWARD(1, real_cudaIpcOpenMemHandle(devPtr, handle, flags));
    vt_call c;
    vt_call_begin(&c, 1);
    cudaError_t r = real_cudaIpcOpenMemHandle(devPtr, handle, flags);
    int e = errno;
    if (c.rec) {
        if (r == cudaSuccess)
            vt__import_ok(&c, (uint64_t)(uintptr_t)*devPtr, 0, vt_ipc_digest(&handle, sizeof handle), 1);
        else
            VT_IMPORT_FAILED(c, "cudaIpcOpenMemHandle", r, r == cudaErrorMemoryAllocation);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaIpcOpenMemHandle);

CUresult vt__h_cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    VT_REAL_OR_RETURN(cuIpcOpenMemHandle_v2, VT_NOTREADY_DRV);
    VT_NESTED_FORWARD(1, real_cuIpcOpenMemHandle_v2(pdptr, handle, Flags));
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
    int e = errno;
    if (c.rec) {
        if (r == CUDA_SUCCESS)
            vt__import_ok(&c, (uint64_t)*pdptr, 0, vt_ipc_digest(&handle, sizeof handle), 1);
        else
            VT_IMPORT_FAILED(c, "cuIpcOpenMemHandle_v2", r, r == CUDA_ERROR_OUT_OF_MEMORY);
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuIpcOpenMemHandle_v2);

cudaError_t vt__h_cudaIpcCloseMemHandle(void *devPtr)
{
    VT_REAL_OR_RETURN(cudaIpcCloseMemHandle, VT_NOTREADY_RT);
    VT_NESTED_FORWARD(1, real_cudaIpcCloseMemHandle(devPtr));
    vt_call c;
    vt__close k;
    vt_call_begin(&c, 0);
    vt__close_begin(&c, &k, (uint64_t)(uintptr_t)devPtr);
    cudaError_t r = real_cudaIpcCloseMemHandle(devPtr);
    int e = errno;
    vt__close_end(&c, &k, (uint64_t)(uintptr_t)devPtr, r == cudaSuccess);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cudaIpcCloseMemHandle);

CUresult vt__h_cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    VT_REAL_OR_RETURN(cuIpcCloseMemHandle, VT_NOTREADY_DRV);
    VT_NESTED_FORWARD(1, real_cuIpcCloseMemHandle(dptr));
    vt_call c;
    vt__close k;
    vt_call_begin(&c, 0);
    vt__close_begin(&c, &k, (uint64_t)dptr);
    CUresult r = real_cuIpcCloseMemHandle(dptr);
    int e = errno;
    vt__close_end(&c, &k, (uint64_t)dptr, r == CUDA_SUCCESS);
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuIpcCloseMemHandle);
