/* vt_ipc.h — memory shared between processes: what this process exported, what it
 * has imported, and the digest that joins the two sides in a report.
 *
 * Exports: (address of the exported allocation, digest of the exported handle), noted
 * at cuIpcGetMemHandle / cudaIpcGetMemHandle, cuMemPoolExportPointer /
 * cudaMemPoolExportPointer and cuMemExportToShareableHandle; at most VT_IPC_MAX each,
 * one row per digest (a later note of the same digest moves it to the new address).
 * Imports: (address, digest, size, opens) of every imported mapping still open: a
 * legacy IPC handle opened twice in one context is one import with opens 2 (the
 * driver's reference count, cuda.h cuIpcOpenMemHandle), closed at the last
 * cuIpcCloseMemHandle; a pool pointer, external memory buffer or imported VMM
 * allocation is one import with opens 1 that ends when its record in the core ends.
 * The core records the bytes themselves (kind ipc_import); this table only adds the
 * identity and the reference count.
 *
 * Digests: 64 bits (vt_ipc_digest) of the bytes both processes see: the 64 bytes of a
 * CUipcMemHandle or CUmemPoolPtrExportData, or, for a file descriptor handed from one
 * process to the other, the (st_dev, st_ino) of the file it names (vt_ipc_digest_file:
 * fstat gives the same pair on both sides for the same memory object).
 *
 * Thread safety: one lock of its own, never held while calling CUDA or the core; the
 * core lock is never taken under it. Fork child: vt_ipc_after_fork_child forgets all
 * (the parent's imports and exports are not the child's). */
#ifndef VT_IPC_H
#define VT_IPC_H

#include <stddef.h>
#include <stdint.h>

#define VT_IPC_MAX 4096

uint64_t vt_ipc_digest(const void *bytes, size_t n);
uint64_t vt_ipc_digest_file(uint64_t st_dev, uint64_t st_ino);

/* The exporter's side: the allocation at addr was exported under digest. */
void vt_ipc_export_note(uint64_t addr, uint64_t digest);

/* The importer's side. refcounted: a legacy handle (opens counted per address).
 * Returns 1 when this open starts a new import at addr (record it in the core), 0
 * when it only counts one more open of an import already recorded, -1 when the table
 * is full (record it; it is not listed). */
int  vt_ipc_import_open(uint64_t addr, uint64_t digest, uint64_t size, int refcounted);
/* vt_ipc_import_open counted an open of an import whose record the core no longer
 * holds (the context that opened it was torn down, which unmaps it): the import at
 * addr starts again with opens 1 (the caller records it). */
void vt_ipc_import_restart(uint64_t addr, uint64_t digest, uint64_t size);

/* An imported VMM handle (cuMemImportFromShareableHandle): one import keyed by the
 * handle, listed at its lowest mapped address with its mappings as opens, for as long
 * as the core counts the handle's memory (vt_core_vmm_state). */
void vt_ipc_import_vmm(uint64_t handle, uint64_t digest, uint64_t size);

/* External memory (cuImportExternalMemory): the object ext was imported from a
 * descriptor whose digest is digest (it holds no bytes here; its mapped buffers do). */
void vt_ipc_ext_note(uint64_t ext, uint64_t digest);
/* A buffer of ext mapped at addr (cuExternalMemoryGetMappedBuffer): one import with
 * the object's digest, opens 1, until its record ends (cuMemFree) or the object is
 * destroyed. Returns what vt_ipc_import_open does. */
int  vt_ipc_import_ext(uint64_t addr, uint64_t ext, uint64_t size);
/* cuDestroyExternalMemory of ext succeeded: forgets the object and its buffers;
 * writes up to max of the buffers' addresses (their records end with the object) and
 * returns how many. */
size_t vt_ipc_ext_destroy(uint64_t ext, uint64_t *addrs, size_t max);

/* Before a close of the legacy import at addr: takes one open. Returns the opens left
 * (0: this is the last close: take the record out of the core), or -1 when addr is no
 * legacy import of ours. */
int  vt_ipc_import_close_begin(uint64_t addr);
/* After that close: ok, and no opens left: the import ends. Not ok: the open taken by
 * _close_begin is given back. */
void vt_ipc_import_close_end(uint64_t addr, int ok);

/* What a snapshot lists: copies up to max rows of each into the caller's arrays.
 * live(addr): 1 when the core still holds a live ipc_import record at addr, 0 when
 * not (imports whose record ended are left out, and forgotten), -1 not known (kept); vmm_live: the same for an imported VMM handle,
 * with its address and mappings.
 * Called without this table's lock held. */
typedef struct vt_ipc_export_row { uint64_t addr, digest; } vt_ipc_export_row;
typedef struct vt_ipc_import_row { uint64_t addr, digest, size; uint32_t opens; } vt_ipc_import_row;
size_t vt_ipc_exports_copy(vt_ipc_export_row *out, size_t max);
size_t vt_ipc_imports_copy(vt_ipc_import_row *out, size_t max, int (*live)(uint64_t addr),
                           int (*vmm_live)(uint64_t handle, uint64_t *va, uint32_t *maps));

void vt_ipc_after_fork_child(void);

#endif /* VT_IPC_H */
