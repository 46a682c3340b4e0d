/* vt_core.c — the core's state, its lock, lifecycle (init, latch off, fork), steps
 * and the queries (contracts: vt_core.h; the state: vt_core_internal.h).
 *
 * Locking: one lock, vt__core.lock (vt_lock.h), guards every table and counter;
 * critical sections are a hash operation and a few additions (a drain: up to
 * VT_DRAIN_CHUNK events). Values that the client API reads without the lock
 * (live/peak/scope/changes/live count) are written with __atomic stores under the
 * lock and read with __atomic loads, after vt__sync has applied the ring's pending
 * events. Nothing in the core calls CUDA, the loader or stdio.
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"
#include "vt_clock.h"
#include "vt_graph.h"
#include "vt_config.h"
#include "vt_state.h"
#include "vt_log.h"

#include <sched.h>
#include <string.h>
#include <time.h>

vt_core_state vt__core = { .lock = VT_LOCK_INIT, .free_id = VT_NO_ID };
uint64_t vt__core_step;   /* atomic: the step counter (vt_core_step)           */

uint64_t vt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vt_core_lock_waits(vt_lock_waits *out, int reset)
{
    out->n = vt__tls.lock_waits;
    out->over_1ms = vt__tls.lock_waits_over_1ms;
    out->max_ns = vt__tls.lock_wait_max_ns;
    out->sum_ns = vt__tls.lock_wait_sum_ns;
    if (reset) {
        vt__tls.lock_waits = vt__tls.lock_waits_over_1ms = 0;
        vt__tls.lock_wait_max_ns = vt__tls.lock_wait_sum_ns = 0;
    }
}

void vt__yield_to_waiters(void)
{
    if (!__atomic_load_n(&vt__core.waiters, __ATOMIC_RELAXED))
        return;
    uint64_t until = vt_now_ns() + VT_COLLECT_YIELD_NS;
    while (__atomic_load_n(&vt__core.waiters, __ATOMIC_RELAXED) && vt_now_ns() < until)
        sched_yield();
}

/* ---- lifecycle ---- */

int vt__core_state;   /* atomic: VT_CORE_OFF (vt_core.h) | VT_CORE_HOOKS_READY (vt_core_fast.h) */

/* Reads the settings and sets the OFF bit once; touches no large buffer. */
static void vt__core_settle(void)
{
    if (!__atomic_load_n(&vt__core.inited, __ATOMIC_ACQUIRE)) {
        vt_config_load();
        if (__atomic_exchange_n(&vt__core.inited, 1, __ATOMIC_ACQ_REL) == 0) {
            if (vt__config.test_fail_alloc_at > 0)
                vt_mem_fail_at(vt__config.test_fail_alloc_at);
            if (vt__config.disable || vt_state_forward_only())
                __atomic_or_fetch(&vt__core_state, VT_CORE_OFF, __ATOMIC_RELEASE);
        }
    }
}

int vt_core_setup(void)
{
    vt__core_settle();
    return (__atomic_load_n(&vt__core_state, __ATOMIC_ACQUIRE) & VT_CORE_OFF) ? -1 : 0;
}

int vt_core_init(void)
{
    vt__core_settle();
    if (__atomic_load_n(&vt__core_state, __ATOMIC_ACQUIRE) & VT_CORE_OFF)
        return -1;
    if (!__atomic_load_n(&vt__ring.inited, __ATOMIC_ACQUIRE)) {
        vt__lock_raw();
        /* before any event is stamped: no hook records yet, the ring is empty */
        vt_clock_init(vt__config.clock, vt__config.trace);
        vt_ring_init(&vt__ring);   /* 1 MiB resident from here on */
        vt__unlock();
    }
    return 0;
}

void vt_core_hooks_ready(void)
{
    __atomic_or_fetch(&vt__core_state, VT_CORE_HOOKS_READY, __ATOMIC_RELEASE);
}

void vt_core_latch_off(const char *why)
{
    static int said;
    __atomic_or_fetch(&vt__core_state, VT_CORE_OFF, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL) == 0)
        vt_log(VT_LOG_WARN, "%s; tracking is off", why);
}

void vt_core_fork_prepare(void) { vt__lock_raw(); }   /* events stay in the ring */
void vt_core_fork_parent(void)  { vt__unlock(); }

void vt_core_after_fork_child(void)
{
    /* The inherited records are the parent's; their memory is left as it is (the
     * child's copy-on-write image) rather than walked and freed. */
    vt_lock_init(&vt__core.lock);
    vt__tls.core = 0;   /* the forking thread held it across fork */
    /* A parent that never numbered the ring never posted an event: its index, site
     * cache and taken log are still the untouched zeroes of .bss/.data, and clearing
     * them would only fault their pages in (a fork of a process that never called
     * CUDA must cost nothing). */
    int used = __atomic_load_n(&vt__ring.inited, __ATOMIC_RELAXED) ||
               __atomic_load_n(&vt__ring.head, __ATOMIC_RELAXED) != 0;
    if (used) {
        vt_ring_discard(&vt__ring);   /* the parent's events, and slots its threads claimed */
        memset(&vt__core.idx, 0, sizeof vt__core.idx);
        memset(vt__core.site_cache, 0, sizeof vt__core.site_cache);
        vt__table_after_fork();
    }
    vt__core.vmms = NULL;
    vt__core.maps = NULL;
    vt__core.heaps = NULL;     /* the parent's heaps and regions: left as they are */
    vt__core.regions = NULL;
    vt__core.sites = NULL;
    vt__core.free_id = VT_NO_ID;
    vt__core.slabs = NULL;
    vt__core.n_slabs = vt__core.cap_slabs = 0;
    vt__core.waiters = 0;
    vt__core.n_sites = 0;
    vt__core.drops = 0;
    vt__core.misses = 0;
    vt__graph_after_fork();
    vt__core.live_count = 0;
    vt__core_step = 0;
    vt__core.step_marked = 0;
    vt__core.changes = 0;
    vt__core.live_total = vt__core.peak_total = vt__core.ipeak_total = 0;
    vt__core.scope_seq = vt__core.scope_bytes = 0;
    memset(vt__core.dev_live, 0, sizeof vt__core.dev_live);
    memset(vt__core.dev_peak, 0, sizeof vt__core.dev_peak);
    memset(vt__core.ks, 0, sizeof vt__core.ks);
    memset(vt__core.dev_active, 0, sizeof vt__core.dev_active);
    memset(vt__core.meminfo_known, 0, sizeof vt__core.meminfo_known);
    memset(vt__core.pool_known, 0, sizeof vt__core.pool_known);
    memset(vt__core.graph_known, 0, sizeof vt__core.graph_known);
    /* the journal and the kept set: the parent's (a collector may have held them
     * across fork); left as they are, and started over */
    vt__core.fj = NULL;
    __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);
    vt__core.fj_cap = 0;
    vt__core.fj_on = 0;
    vt__collect_after_fork();
    vt__peak_after_fork();
}

void vt_core_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes)
{
    vt__lock();
    int slot = vt__slot(device);
    vt__core.meminfo_known[slot] = 1;
    vt__core.dev_active[slot] = 1;
    vt__core.mem_free[slot] = free_bytes;
    vt__core.mem_total[slot] = total_bytes;
    vt__core.mem_changes[slot] = vt__core.changes;
    vt__unlock();
}

void vt_core_set_pool(int device, uint64_t reserved, uint64_t used, int used_known)
{
    vt__lock();
    int slot = vt__slot(device);
    vt__core.pool_known[slot] = used_known ? 2 : 1;
    vt__core.pool_reserved[slot] = reserved;
    vt__core.pool_used[slot] = used;
    vt__unlock();
}

void vt_core_set_graph_mem(int device, uint64_t reserved, uint64_t used)
{
    vt__lock();
    int slot = vt__slot(device);
    vt__core.graph_known[slot] = 1;
    vt__core.graph_reserved[slot] = reserved;
    vt__core.graph_used[slot] = used;
    if (reserved)
        vt__core.dev_active[slot] = 1;
    vt__unlock();
}

/* ---- steps and queries ---- */

uint64_t vt_core_step(void)
{
    __atomic_store_n(&vt__core.step_marked, 1, __ATOMIC_RELAXED);
    return __atomic_add_fetch(&vt__core_step, 1, __ATOMIC_RELAXED);
}

static int vt__steps_by_range;   /* atomic: vt_core_steps_by_range was called */

void vt_core_steps_by_range(void)
{
    __atomic_store_n(&vt__steps_by_range, 1, __ATOMIC_RELAXED);
}

int vt_core_advance_unmarked_step(void)
{
    if (__atomic_load_n(&vt__core.step_marked, __ATOMIC_RELAXED) ||
        __atomic_load_n(&vt__steps_by_range, __ATOMIC_RELAXED))
        return 0;
    __atomic_add_fetch(&vt__core_step, 1, __ATOMIC_RELAXED);
    return 1;
}

/* A counter as applied so far (lock-free), and the same after applying the ring's
 * pending events (vt__sync). */
static inline uint64_t vt__read(const uint64_t *v)
{
    return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static inline uint64_t vt__read_synced(const uint64_t *v)
{
    vt__sync();
    return vt__read(v);
}

/* total: the process-wide counter; per_dev: the device slots' (device -1: total). */
static uint64_t vt__read_dev(const uint64_t *total, const uint64_t *per_dev, int device)
{
    vt__sync();
    if (device < 0)
        return vt__read(total);
    if (device >= VT_MAX_DEVICES)
        return 0;
    return vt__read(&per_dev[device + 1]);
}

uint64_t vt_core_live_bytes(int device)
{
    return vt__read_dev(&vt__core.live_total, vt__core.dev_live, device);
}

uint64_t vt_core_peak_bytes(int device)
{
    return vt__read_dev(&vt__core.peak_total, vt__core.dev_peak, device);
}

uint64_t vt_core_peak_interval_take(void)
{
    if (vt__no_lock_here()) {   /* from the applied state; the interval goes on */
        uint64_t live = __atomic_load_n(&vt__core.live_total, __ATOMIC_RELAXED);
        uint64_t ip = __atomic_load_n(&vt__core.ipeak_total, __ATOMIC_RELAXED);
        return ip > live ? ip : live;
    }
    vt__lock();
    uint64_t live = vt__core.live_total;
    uint64_t r = vt__core.ipeak_total > live ? vt__core.ipeak_total : live;
    __atomic_store_n(&vt__core.ipeak_total, live, __ATOMIC_RELAXED);
    vt__unlock();
    return r;
}

void vt_core_scope_begin(void)
{
    if (vt__no_lock_here()) {   /* from the applied state, without the lock */
        __atomic_store_n(&vt__core.scope_seq, __atomic_load_n(&vt__core.next_seq, __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&vt__core.scope_bytes, 0, __ATOMIC_RELAXED);
        return;
    }
    vt__lock();
    __atomic_store_n(&vt__core.scope_seq, vt__core.next_seq, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__core.scope_bytes, 0, __ATOMIC_RELAXED);
    vt__unlock();
}

uint64_t vt_core_scope_leaked_bytes(void) { return vt__read_synced(&vt__core.scope_bytes); }
uint64_t vt_core_changes(void)            { return vt__read_synced(&vt__core.changes); }
uint64_t vt_core_live_count(void)         { return vt__read_synced(&vt__core.live_count); }
uint64_t vt_core_dropped_records(void)    { return vt__read_synced(&vt__core.dropped); }
uint64_t vt_core_changes_applied(void)    { return vt__read(&vt__core.changes); }
uint64_t vt_core_live_count_applied(void) { return vt__read(&vt__core.live_count); }
uint64_t vt_core_ring_full_total(void)    { return vt__read(&vt__core.ring_full); }
