/* vt_core.h — the core's public API: what the hook shims, the writer, the client API
 * and the unit tests call. The hooks' inline fast path is vt_core_fast.h; the core's
 * own state is vt_core_internal.h.
 *
 * The core owns the allocation table (keyed by address), VMM physical allocations
 * (keyed by CUmemGenericAllocationHandle) and their mappings (keyed by virtual
 * address), per device x kind totals with peaks, per-site totals keyed by (stack id,
 * kind, device), the step counter, the online leak detector and the scope counter.
 * It never calls CUDA, the loader or stdio: the hooks do that outside the lock and
 * hand the results in.
 *
 * Units: sizes in bytes, times in nanoseconds (CLOCK_MONOTONIC). Devices are CUDA
 * ordinals 0..VT_MAX_DEVICES-1; -1 means "unknown" (no current context); larger
 * ordinals are folded into -1.
 * Thread safety: every function may be called from any thread. One lock (vt_lock.h)
 * guards the tables. The hooks' events reach them through a lock-free ring
 * (vt_ring.h) that every locked call and every query applies first; queries then read
 * atomics without the lock.
 * Failure: if the core cannot get memory for its own tables it latches tracking off
 * (vt_core_latch_off, one "vramtrace:" line) and every later call is a no-op; the
 * program is never affected.
 */
#ifndef VT_CORE_H
#define VT_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "vt_collect.h"   /* snapshot types, VT_MAX_DEVICES */
#include "vt_format.h"

/* One allocation as the hook saw it (input of vt_core_alloc). */
typedef struct vt_alloc_info {
    uint64_t addr;      /* device/host pointer returned by CUDA                     */
    uint64_t size;      /* bytes the program asked for (pitch: pitch*height)        */
    uint64_t stream;    /* CUstream/cudaStream_t for stream-ordered kinds, else 0   */
    uint64_t ctx;       /* CUcontext current at the call (0 unknown)                */
    int      device;    /* CUDA ordinal or -1                                       */
    int      kind;      /* vt_kind, with the site's flags: VT_KIND_PACK(kind, VT_FLAG_*) */
    uint32_t stack;     /* vt_stack id (0 = none)                                   */
} vt_alloc_info;

/* What a free took out of the table, to put back if the real free fails
 * (vt_core_restore; VMM: vt_core_vmm_restore). Caller-owned, on the stack. */
typedef struct vt_taken {
    void    *rec;       /* opaque; NULL when nothing was taken                      */
    uint64_t addr, size, birth_ns, ctx_stream;   /* a copy of the record: it is
                                                    recycled at once               */
    uint32_t step;
    int32_t  tid;
    uint32_t drops;     /* vt_core_drop_context calls before the take               */
    uint32_t misses;    /* vt_core_untracked_free calls before the take             */
    uint8_t  missed;    /* the take found no record of addr (t->addr set): if the
                           real free succeeds, say so with vt_core_untracked_free   */
    uint64_t ticket;    /* a ring free's ticket (vt_core_post_free), 0: none        */
    int8_t   alive;     /* set by the caller before vt_core_restore: 1 the driver
                           says an allocation still starts at addr, 0 none does,
                           -1 not known (vt_core_take sets -1)                      */
} vt_taken;

/* ---- lifecycle ---- */

/* Initialises the core (idempotent, thread-safe). Reads vt__config for the test
 * failure injection. Returns 0, or -1 if the core is latched off. */
int  vt_core_init(void);
/* vt_core_init without numbering the event ring (nothing large touched): the
 * preload's start-up; vt_core_init (or the first event) numbers it. Same result. */
int  vt_core_setup(void);
/* 1 while tracking is on (not disabled, not latched off). Lock-free: one relaxed
 * load of vt__core_state (bits VT_CORE_OFF, and VT_CORE_HOOKS_READY: vt_core_fast.h). */
extern int vt__core_state;
#define VT_CORE_OFF 1   /* latched off, or VRAMTRACE_DISABLE */
static inline int vt_core_enabled(void)
{
    return !(__atomic_load_n(&vt__core_state, __ATOMIC_RELAXED) & VT_CORE_OFF);
}
/* The preload finished initialising (vt_preload_init, after its ready flag). */
void vt_core_hooks_ready(void);
/* Latches tracking off for good; the first caller prints one line
 * "vramtrace: <why>; tracking is off". Thread-safe, idempotent. */
void vt_core_latch_off(const char *why);
/* pthread_atfork prepare/parent: hold the core lock across fork (ring events stay in
 * the ring). Child: empties every table (the parent's records are not the child's);
 * call only from the child handler, single-threaded. */
void vt_core_fork_prepare(void);
void vt_core_fork_parent(void);
void vt_core_after_fork_child(void);

/* ---- allocations and frees (synchronous; the hooks' ring path is vt_core_fast.h) ---- */

/* Records a successful allocation. 0, or -1 when not recorded (tracking off, or out
 * of memory, which latches off). A second record at a live address replaces the old
 * one (counted as freed: CUDA reused the address). */
int  vt_core_alloc(const vt_alloc_info *a);
/* Counts a failed allocation of kind on device; oom != 0 when it failed with
 * out-of-memory (cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY). */
void vt_core_alloc_failed(int device, int kind, int oom);
/* Before a real free: removes the live record at addr into *t. 1 if addr was live,
 * 0 if not (stale or foreign: nothing counted; t->missed set when no record is at
 * addr). kind_mask: a bit per vt_kind this free may release, 0 any. */
int  vt_core_take(uint64_t addr, unsigned kind_mask, vt_taken *t);
/* A free whose take found nothing (t->missed) succeeded: the address was live after
 * all, its record taken by a concurrent free of the same pointer (a double free race
 * of the program) whose real free will fail; that free's restore must not put the
 * record back. */
void vt_core_untracked_free(uint64_t addr);
/* The real free failed: puts back, with its counters undone, the record that the
 * take (t->rec) or the ring free (t->ticket; kept for one ring's worth of positions,
 * older is counted as dropped) took. It is not put back when:
 *  - the address was handed out again meanwhile (the newer record stays);
 *  - a vt_core_drop_context since the take covers it (the memory went with the
 *    context, which is why the free failed);
 *  - t->alive is 0 (the driver says nothing is allocated there any more);
 *  - t->alive is -1 and a free of the same address succeeded or missed since
 *    (vt_core_untracked_free). */
void vt_core_restore(vt_taken *t);
/* The vt_kind of the record a free took into *t (its synchronous take, t->rec, or its
 * ring event, t->ticket), so that a failed free through another kind's API asks the
 * driver the right question before vt_core_restore; -1 when it took nothing or is no
 * longer kept. Takes the lock (ring: applies the ring up to the free's event). */
int  vt_core_taken_kind(const vt_taken *t);
/* Implicit free (context teardown): drops every ordinary record (device, managed,
 * host_pinned; never async pool memory or VMM) with sequence < before_seq that belongs
 * to ctx (ctx != 0) or, when ctx == 0, to device. Returns the number dropped. */
uint64_t vt_core_drop_context(int device, uint64_t ctx, uint64_t before_seq);
/* Sequence number the next allocation will get (for vt_core_drop_context): its
 * birth_ns, made strictly increasing under the lock (max(now, previous + 1)). */
uint64_t vt_core_next_seq(void);
/* Sets the function the producers call every VT_RING_KICK events to have the ring
 * drained soon (the writer's; async-signal-safe, keeps errno). NULL: none. */
void vt_core_set_drain_kick(void (*kick)(void));
/* Applies every ring event claimed so far, VT_DRAIN_CHUNK per hold of the lock. */
void vt_core_drain(void);

/* ---- VMM (CUDA driver API "Virtual Memory Management") ----
 * Physical memory is live from cuMemCreate until every reference is released
 * (create and each cuMemRetainAllocationHandle give one, each cuMemRelease takes
 * one) AND every mapping is unmapped; a cuMemMap in flight keeps it live too.
 * vt_core_vmm_create: flags, the site flags of the allocation (VT_SITE_FLAGS, e.g.
 * VT_FLAG_MULTICAST for a cuMulticastCreate object; 0 for cuMemCreate memory): its
 * site is (stack, VT_KIND_PACK(VT_KIND_VMM, flags), device). */
int  vt_core_vmm_create(uint64_t handle, uint64_t size, int device, uint32_t stack, int flags);
/* cuMemImportFromShareableHandle: like vt_core_vmm_create, for another process's
 * memory (kind ipc_import: counted in its kind and site, never in the device's or
 * the process's live bytes); mapped, retained, released and unmapped as any handle. */
int  vt_core_vmm_import(uint64_t handle, uint64_t size, int device, uint32_t stack);
/* Whether handle's allocation is live (counted): 1 with its lowest mapped address
 * (0 while unmapped) and its mappings, 0 when not, -1 when this thread may not look
 * (it is inside the core). */
int  vt_core_vmm_state(uint64_t handle, uint64_t *va, uint32_t *maps);
/* After a successful cuMemRetainAllocationHandle: one more reference. */
void vt_core_vmm_retain(uint64_t handle);
/* Before cuMemRetainAllocationHandle(addr): holds live the allocation whose mapping
 * starts at addr, so a racing unmap and release cannot end it before the retain is
 * counted. 1 and *handle when held; end it with vt_core_vmm_map_end(0, 0, *handle, 1, 0). */
int  vt_core_vmm_hold_at(uint64_t addr, uint64_t *handle);
/* Before cuMemRelease: takes a reference (freeing the memory if it was the last and
 * nothing is mapped). 1 and *t if the handle was known with a reference left; then
 * call _commit (the real call succeeded) or _restore (it failed: the reference is
 * given back), whatever other threads do meanwhile. */
int  vt_core_vmm_release(uint64_t handle, vt_taken *t);
void vt_core_vmm_restore(vt_taken *t);
void vt_core_vmm_commit(vt_taken *t);
/* cuMemMap: _begin before the real call (1 when the handle is known: pass it as
 * began), _end after it (ok: it succeeded). A map at an address that still has a
 * mapping ends that mapping first. vt_core_vmm_map: _end(va, size, handle, 0, 1). */
int  vt_core_vmm_map_begin(uint64_t handle);
void vt_core_vmm_map_end(uint64_t va, uint64_t size, uint64_t handle, int began, int ok);
void vt_core_vmm_map(uint64_t va, uint64_t size, uint64_t handle);
/* After a successful cuMemUnmap: ends every mapping that starts in [va, va + size);
 * size 0: the one at va. */
void vt_core_vmm_unmap(uint64_t va, uint64_t size);

/* Driver-reported memory of device (cuMemGetInfo_v2), and its stream-ordered pools'
 * sampled bytes (cuMemPoolGetAttribute RESERVED_MEM_CURRENT and, used_known 1,
 * USED_MEM_CURRENT, summed over the default pool and the pools the program created or
 * used: vt_driver_pool_sample). A snapshot's pool_used_bytes is the sampled use when
 * known, else the live bytes of kind async. */
void vt_core_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes);
/* (vt_dev_stats.meminfo_changes keeps the change counter of that moment.) */
void vt_core_set_pool(int device, uint64_t reserved, uint64_t used, int used_known);
/* The device's graph memory pool (cuDeviceGetGraphMemAttribute RESERVED_MEM_CURRENT
 * and USED_MEM_CURRENT), bytes. */
void vt_core_set_graph_mem(int device, uint64_t reserved, uint64_t used);

/* ---- steps and queries (client API); each applies the ring's pending events first,
 * unless named _applied ---- */

/* Marks a step (vramtrace_step). Returns the new step number (first mark -> 1). */
uint64_t vt_core_step(void);
/* Periodic snapshot of a program that never marks steps: advances the step counter
 * and returns 1 (this snapshot closes a step); returns 0 once steps are marked, or
 * once vt_core_steps_by_range was called. */
int      vt_core_advance_unmarked_step(void);
/* Steps will be marked by NVTX ranges (VRAMTRACE_STEP_RANGE, our NVTX injection
 * attached): from now on a periodic snapshot never counts as a step, so the records
 * before the first range end have step 0. Any thread, any time (before the core is
 * initialised too); kept over fork. */
void     vt_core_steps_by_range(void);
uint64_t vt_core_live_bytes(int device);   /* device -1: all devices              */
uint64_t vt_core_peak_bytes(int device);   /* device -1: peak of the process total */
/* Highest process live bytes since the previous call (or the start); starts a new
 * interval at the live bytes of now. Does not change vt_core_peak_bytes. */
uint64_t vt_core_peak_interval_take(void);
/* What was live at the latest copied peak of device (-1 unknown device) or of the
 * process (VT_PEAK_PROCESS): 1 and *out, or 0 when no peak was copied yet (out->gen
 * 0). Takes the lock (applies the ring first). Hysteresis and error bound:
 * vt_peak.c. */
int      vt_core_peak_sites(int device, vt_peak_comp *out);
void     vt_core_scope_begin(void);
uint64_t vt_core_scope_leaked_bytes(void);
uint64_t vt_core_changes(void);            /* bumps on every alloc/free/drop       */
uint64_t vt_core_live_count(void);
/* Kind (vt_kind, without flags) of the live record at addr, -1 when none, -2 when
 * this thread may not look (it is inside the core: vt__no_lock_here). */
int      vt_core_live_kind(uint64_t addr);
uint64_t vt_core_changes_applied(void);    /* the same two as last applied (the   */
uint64_t vt_core_live_count_applied(void); /* periodic snapshot's decisions)       */
uint64_t vt_core_dropped_records(void);    /* allocations not recorded (latched)   */
/* Times a hook found the event ring full and applied the oldest events itself
 * (the program outran the writer's draining). No lock; applies nothing. */
uint64_t vt_core_ring_full_total(void);

/* The calling thread's waits for the core lock since its previous call with
 * reset != 0 (or its start): how many times it found the lock held, how many waits
 * took over 1 ms, the longest and their total (ns, from finding the lock held to
 * holding it). A hook takes the lock only when the ring is full or for a VMM call.
 * Per thread; no lock; timed on the contended path only. */
typedef struct vt_lock_waits {
    uint64_t n;
    uint64_t over_1ms;
    uint64_t max_ns;
    uint64_t sum_ns;
} vt_lock_waits;
void vt_core_lock_waits(vt_lock_waits *out, int reset);

/* Monotonic clock (CLOCK_MONOTONIC) in ns. */
uint64_t vt_now_ns(void);

#endif /* VT_CORE_H */
