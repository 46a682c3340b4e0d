/* vt_cuda_ipc.c — the shims of imported memory that fit no shape of the hook table
 * (rows of shape HAND in the "imported memory" sections of vt_hook_table.h), runtime
 * and driver: opening and closing legacy IPC handles, importing pool pointers,
 * importing VMM shareable handles, external memory; and the exporter's note for
 * cuMemExportToShareableHandle (a PASS row). Follows cuda.h and cuda_runtime_api.h of
 * CUDA 13 ("Interprocess communication": a handle opened again in the context that
 * opened it returns the same pointer and counts a reference; cuIpcCloseMemHandle
 * takes one and unmaps at the last).
 *
 * What is recorded: the first open of a legacy handle in a context records its bytes
 * (asked of the driver, cuMemGetAddressRange_v2) as kind ipc_import with the opener's
 * stack; later opens of it only count (track/vt_ipc.h); the last close frees the
 * record. A pool pointer or an external memory buffer is one record each; an imported
 * VMM handle is physical memory in the core's VMM tables. The core keeps ipc_import
 * bytes out of the device's and the process's live bytes (another process owns them).
 * A failed import is counted as a failed allocation of kind ipc_import with its code.
 *
 * Every shim returns the real result unchanged and preserves errno; a nested call
 * (the runtime's call into the driver) only forwards; when the real function cannot
 * be found it returns the family's "not initialised" code and does nothing else.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
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
    int first = vt_ipc_import_open(addr, digest, size, refcounted);
    if (first == 0 && vt_core_live_kind(addr) == -1) {
        /* counted as a second open, but the record is gone (context teardown) */
        vt_ipc_import_restart(addr, digest, size);
        first = 1;
    }
    if (first != 0)
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
        vt_hook_free_end(k->ticket, &k->t, ok, addr, VT_KIND_IPC_IMPORT);
}

/* The body of an open shim (after VT_REAL_OR_RETURN): forwards CALL; as the
 * outermost recording call, a success records the import at ADDR (an expression on
 * the call's outputs) with the digest of the n bytes at DIGEST_OF, a failure is
 * counted. refcounted: a legacy handle. Result and errno are CALL's. */
#define VT_IMPORT_BODY(ret_t, ok, oom, api, CALL, ADDR, DIGEST_OF, n, refcounted)        \
    VT_NESTED_FORWARD(1, CALL);                                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 1);                                                                 \
    ret_t r = CALL;                                                                       \
    int e = errno;                                                                        \
    if (c.rec) {                                                                          \
        if (r == (ok))                                                                    \
            vt__import_ok(&c, (uint64_t)(uintptr_t)(ADDR), 0, vt_ipc_digest(DIGEST_OF, n), \
                          refcounted);                                                    \
        else                                                                              \
            VT_IMPORT_FAILED(c, api, r, r == (oom));                                      \
    }                                                                                     \
    vt_call_end(&c);                                                                      \
    errno = e;                                                                            \
    return r

/* ---- pools shared between processes: an imported pointer is one import, freed by the
 * free rows (cudaFree, cuMemFree_v2, *FreeAsync); its table row goes with its record ---- */

cudaError_t vt__h_cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool,
                                           struct cudaMemPoolPtrExportData *exportData)
{
    VT_REAL_OR_RETURN(cudaMemPoolImportPointer, VT_NOTREADY_RT);
    VT_IMPORT_BODY(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation, "cudaMemPoolImportPointer",
                   real_cudaMemPoolImportPointer(ptr, memPool, exportData), *ptr, exportData,
                   sizeof *exportData, 0);
}
VT_EXPORT_ALIAS(cudaMemPoolImportPointer);

CUresult vt__h_cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{
    VT_REAL_OR_RETURN(cuMemPoolImportPointer, VT_NOTREADY_DRV);
    VT_IMPORT_BODY(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, "cuMemPoolImportPointer",
                   real_cuMemPoolImportPointer(ptr_out, pool, shareData), *ptr_out, shareData,
                   sizeof *shareData, 0);
}
VT_EXPORT_ALIAS(cuMemPoolImportPointer);

/* ---- legacy IPC handles ---- */

cudaError_t vt__h_cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    VT_REAL_OR_RETURN(cudaIpcOpenMemHandle, VT_NOTREADY_RT);
    VT_IMPORT_BODY(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation, "cudaIpcOpenMemHandle",
                   real_cudaIpcOpenMemHandle(devPtr, handle, flags), *devPtr, &handle, sizeof handle, 1);
}
VT_EXPORT_ALIAS(cudaIpcOpenMemHandle);

CUresult vt__h_cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    VT_REAL_OR_RETURN(cuIpcOpenMemHandle_v2, VT_NOTREADY_DRV);
    VT_IMPORT_BODY(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, "cuIpcOpenMemHandle_v2",
                   real_cuIpcOpenMemHandle_v2(pdptr, handle, Flags), *pdptr, &handle, sizeof handle, 1);
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

/* ---- VMM shareable handles: an imported handle is physical memory like a
 * cuMemCreate'd one (the core's VMM tables: mapped, retained, released and unmapped
 * by the same hooks), of kind ipc_import; one allocation mapped at two addresses
 * counts once, live while referenced or mapped ---- */

/* Digest of a POSIX file descriptor: the (st_dev, st_ino) of the file it names.
 * Exporter and importer hold descriptors of the same memory object (passed with
 * SCM_RIGHTS or by pidfd_getfd), so fstat gives both the same pair. 0 and *digest,
 * or -1. Keeps errno. */
static int vt__fd_digest(int fd, uint64_t *digest, uint64_t *size)
{
    int e = errno;
    struct stat st;
    int rc = fstat(fd, &st);
    errno = e;
    if (rc != 0)
        return -1;
    *digest = vt_ipc_digest_file((uint64_t)st.st_dev, (uint64_t)st.st_ino);
    if (size)
        *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return 0;
}

void vt_hook_vmm_export(uint64_t handle, const void *shareable, int handle_type)
{
    uint64_t digest, va;
    uint32_t maps;
    if (!shareable || handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        vt__fd_digest(*(const int *)shareable, &digest, NULL) != 0)
        return;
    vt_core_vmm_state(handle, &va, &maps);
    vt_ipc_export_note(va, digest);
}

/* The size recorded is the descriptor's file size (what the driver's object spans). */
CUresult vt__h_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                              CUmemAllocationHandleType shHandleType)
{
    VT_REAL_OR_RETURN(cuMemImportFromShareableHandle, VT_NOTREADY_DRV);
    VT_NESTED_FORWARD(1, real_cuMemImportFromShareableHandle(handle, osHandle, shHandleType));
    vt_call c;
    vt_call_begin(&c, 1);
    CUresult r = real_cuMemImportFromShareableHandle(handle, osHandle, shHandleType);
    int e = errno;
    if (c.rec) {
        uint64_t digest = 0, size = 0, ctx;
        int dev = vt_driver_device_current(&ctx);
        if (r == CUDA_SUCCESS) {
            if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
                vt__fd_digest((int)(intptr_t)osHandle, &digest, &size) != 0)
                digest = vt_ipc_digest(&osHandle, sizeof osHandle);   /* other handle kinds */
            vt_hook_start();
            vt_core_vmm_import((uint64_t)*handle, size, dev, c.stack);
            vt_ipc_import_vmm((uint64_t)*handle, digest, size);
        } else {
            VT_IMPORT_FAILED(c, "cuMemImportFromShareableHandle", r, r == CUDA_ERROR_OUT_OF_MEMORY);
        }
    }
    vt_call_end(&c);
    errno = e;
    return r;
}
VT_EXPORT_ALIAS(cuMemImportFromShareableHandle);

/* ---- external memory: the object only names the memory (its descriptor's digest,
 * taken before the call: the driver owns the descriptor after it); each mapped buffer
 * is one import of the buffer's size, freed by cuMemFree_v2 / cudaFree (their rows)
 * or, with every other buffer of the object, by the object's destroy ---- */

/* Digest of an import descriptor's file, or of its bytes for a handle kind that is
 * not a descriptor. */
static uint64_t vt__ext_digest(int is_fd, int fd, const void *desc, size_t n)
{
    uint64_t d;
    if (is_fd && vt__fd_digest(fd, &d, NULL) == 0)
        return d;
    return vt_ipc_digest(desc, n);
}

#define VT_EXT_IMPORT_BODY(ret_t, ok, CALL, OUT, IS_FD, FD, DESC)                          \
    VT_NESTED_FORWARD(1, CALL);                                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 0);                                                                 \
    uint64_t vt__d = c.rec && (DESC) ? vt__ext_digest(IS_FD, FD, DESC, sizeof *(DESC)) : 0; \
    ret_t r = CALL;                                                                       \
    int e = errno;                                                                        \
    if (c.rec && r == (ok))                                                               \
        vt_ipc_ext_note((uint64_t)(uintptr_t)*(OUT), vt__d);                              \
    vt_call_end(&c);                                                                      \
    errno = e;                                                                            \
    return r

cudaError_t vt__h_cudaImportExternalMemory(cudaExternalMemory_t *extMem_out,
                                           const struct cudaExternalMemoryHandleDesc *memHandleDesc)
{
    VT_REAL_OR_RETURN(cudaImportExternalMemory, VT_NOTREADY_RT);
    VT_EXT_IMPORT_BODY(cudaError_t, cudaSuccess, real_cudaImportExternalMemory(extMem_out, memHandleDesc),
                       extMem_out, memHandleDesc && memHandleDesc->type == cudaExternalMemoryHandleTypeOpaqueFd,
                       memHandleDesc ? memHandleDesc->handle.fd : -1, memHandleDesc);
}
VT_EXPORT_ALIAS(cudaImportExternalMemory);

CUresult vt__h_cuImportExternalMemory(CUexternalMemory *extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc)
{
    VT_REAL_OR_RETURN(cuImportExternalMemory, VT_NOTREADY_DRV);
    VT_EXT_IMPORT_BODY(CUresult, CUDA_SUCCESS, real_cuImportExternalMemory(extMem_out, memHandleDesc),
                       extMem_out, memHandleDesc && memHandleDesc->type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
                       memHandleDesc ? memHandleDesc->handle.fd : -1, memHandleDesc);
}
VT_EXPORT_ALIAS(cuImportExternalMemory);

#define VT_EXT_BUFFER_BODY(ret_t, ok, oom, api, CALL, ADDR, EXT, SIZE)                    \
    VT_NESTED_FORWARD(1, CALL);                                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 1);                                                                 \
    ret_t r = CALL;                                                                       \
    int e = errno;                                                                        \
    if (c.rec) {                                                                          \
        if (r == (ok)) {                                                                  \
            uint64_t vt__a = (uint64_t)(uintptr_t)(ADDR), vt__n = (SIZE);                 \
            if (vt_ipc_import_ext(vt__a, (uint64_t)(uintptr_t)(EXT), vt__n) != 0)         \
                vt_hook_alloc_ok(c.stack, VT_KIND_IPC_IMPORT, vt__a, vt__n, 0, VT_DEVICE_CURRENT); \
        } else {                                                                          \
            VT_IMPORT_FAILED(c, api, r, r == (oom));                                      \
        }                                                                                 \
    }                                                                                     \
    vt_call_end(&c);                                                                      \
    errno = e;                                                                            \
    return r

cudaError_t vt__h_cudaExternalMemoryGetMappedBuffer(void **devPtr, cudaExternalMemory_t extMem,
                                                    const struct cudaExternalMemoryBufferDesc *bufferDesc)
{
    VT_REAL_OR_RETURN(cudaExternalMemoryGetMappedBuffer, VT_NOTREADY_RT);
    VT_EXT_BUFFER_BODY(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation, "cudaExternalMemoryGetMappedBuffer",
                       real_cudaExternalMemoryGetMappedBuffer(devPtr, extMem, bufferDesc), *devPtr, extMem,
                       bufferDesc->size);
}
VT_EXPORT_ALIAS(cudaExternalMemoryGetMappedBuffer);

CUresult vt__h_cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
                                               const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc)
{
    VT_REAL_OR_RETURN(cuExternalMemoryGetMappedBuffer, VT_NOTREADY_DRV);
    VT_EXT_BUFFER_BODY(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, "cuExternalMemoryGetMappedBuffer",
                       real_cuExternalMemoryGetMappedBuffer(devPtr, extMem, bufferDesc), *devPtr, extMem,
                       bufferDesc->size);
}
VT_EXPORT_ALIAS(cuExternalMemoryGetMappedBuffer);

/* After a successful destroy of ext: the records of its buffers end. */
static void vt__ext_destroyed(uint64_t ext)
{
    uint64_t addrs[256];
    size_t n = vt_ipc_ext_destroy(ext, addrs, sizeof addrs / sizeof addrs[0]);
    for (size_t i = 0; i < n; i++) {
        vt_taken t;
        if (vt_core_take(addrs[i], 1u << VT_KIND_IPC_IMPORT, &t))
            vt_core_commit(&t);
    }
}

/* A destroy of external memory: forwarded under the depth guard; its success, as the
 * outermost call, ends the records of the object's mapped buffers. */
#define VT_EXT_DESTROY_BODY(ret_t, ok, CALL, EXT) \
    VT_PASS_BODY(ret_t, ok, CALL, vt__ext_destroyed((uint64_t)(uintptr_t)(EXT)))

cudaError_t vt__h_cudaDestroyExternalMemory(cudaExternalMemory_t extMem)
{
    VT_REAL_OR_RETURN(cudaDestroyExternalMemory, VT_NOTREADY_RT);
    VT_EXT_DESTROY_BODY(cudaError_t, cudaSuccess, real_cudaDestroyExternalMemory(extMem), extMem);
}
VT_EXPORT_ALIAS(cudaDestroyExternalMemory);

CUresult vt__h_cuDestroyExternalMemory(CUexternalMemory extMem)
{
    VT_REAL_OR_RETURN(cuDestroyExternalMemory, VT_NOTREADY_DRV);
    VT_EXT_DESTROY_BODY(CUresult, CUDA_SUCCESS, real_cuDestroyExternalMemory(extMem), extMem);
}
VT_EXPORT_ALIAS(cuDestroyExternalMemory);
