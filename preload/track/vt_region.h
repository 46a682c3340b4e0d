/* vt_region.h — sub-allocations a program announces inside its own memory: the heaps
 * and regions of the NVTX memory extension (nvtx3/nvToolsExtMem.h), as the NVTX front
 * door (preload/interpose/vt_nvtx.c) hands them in.
 *
 * A heap is a range [base, base + size) of the program's memory that it sub-allocates
 * (nvtxMemHeapRegister), keyed by the handle the front door gave it; heap 0 is NVTX's
 * process-wide heap, always known, with no range. A region is a range inside a heap
 * (nvtxMemRegionsRegister), keyed by its address. A region is live memory of kind
 * region at its site (the registering call's stack, kind region, and the device of
 * the heap's own allocation when the table has a live record at the heap's base, else
 * the device passed in) from its registration until it is unregistered, its heap is
 * reset or unregistered, or a new region is registered at its address (counted as
 * freed then). A resize changes its bytes in place (a free of the old size and an
 * allocation of the new one at its site). Region bytes count in their kind and site
 * only, never in the device's or the process's totals, nor in fragmentation
 * (vt_kind_in_totals): the heap's own allocation counts them already.
 *
 * Handles and addresses are only compared, never dereferenced. Unknown heaps and
 * addresses are ignored.
 * Thread safety: any thread; the tables are under the core lock (the ring's pending
 * events are applied first, so a heap allocated just before is found).
 * Failure: out of memory for the tables latches tracking off (vt_core_latch_off), as
 * for any record.
 */
#ifndef VT_REGION_H
#define VT_REGION_H

#include <stddef.h>
#include <stdint.h>

/* nvtxMemHeapRegister: heap (non-zero) covers [base, base + size). A heap already
 * known under that handle is replaced (its regions stay, now in the new range). */
void vt_region_heap_add(uint64_t heap, uint64_t base, uint64_t size);
/* nvtxMemHeapUnregister: frees every region of heap and forgets it. */
void vt_region_heap_remove(uint64_t heap);
/* nvtxMemHeapReset: frees every region of heap (0: of the process-wide heap). */
void vt_region_heap_reset(uint64_t heap);
/* nvtxMemRegionsRegister, one region: size bytes at addr inside heap, registered by
 * the call with stack id stack on device (-1 unknown; the heap's allocation's device
 * wins). Ignored when heap is unknown or size is 0. */
void vt_region_add(uint64_t heap, uint64_t addr, uint64_t size, int device, uint32_t stack);
/* nvtxMemRegionsResize, one region: the region at addr now has size bytes. */
void vt_region_resize(uint64_t addr, uint64_t size);
/* nvtxMemRegionsUnregister, one region: the region at addr is freed. */
void vt_region_remove(uint64_t addr);

#endif /* VT_REGION_H */
