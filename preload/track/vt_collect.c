/* vt_collect.c — snapshot collection in bounded lock holds (vt_core_collect, contract
 * in vt_collect.h), and the kept fragmentation set.
 *
 * Fragmentation (vt_frag.h): the collector keeps every device's live ranges sorted
 * from one periodic collection to the next (vt__fc), and the core notes each range
 * that comes or goes in a journal (vt__fj_note, vt_core_internal.h: every path that
 * changes the live list or a VMM mapping, in apply order). A collection takes the
 * journal in its first hold (one instant, with the site rows) and merges it into the
 * kept ranges without the lock; the writer thread merges it between snapshots once it
 * holds VT_FJ_KEEP entries (vt_core_frag_keep). The live list is copied and sorted
 * again only when there is no kept set: the first collection, a journal that
 * overflowed, a set dropped by a collection without fragmentation or by a memory
 * failure.
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>


/* The kept fragmentation set and the journal buffer the core does not hold: owned by
 * the collector that set busy (one at a time; vt_core_collect). */
static struct {
    int         busy;             /* atomic                                          */
    vt_frag_set set;
    uint64_t  (*spare)[2];        /* the next journal buffer, swapped with vt__core.fj */
    size_t      spare_cap;
    size_t      want;             /* journal entries to offer (grows on overflow)    */
} vt__fc;


void vt_collect_free(vt_collect *c)
{
    free(c->sites);
    free(c->allocs);
    free(c->peaks);
    c->sites = NULL;
    c->allocs = NULL;
    c->peaks = NULL;
    c->n_sites = c->n_allocs = c->n_peaks = 0;
}

/* Chunked copy of the live list (VT_COLLECT_ALLOCS) and of the ranges that
 * fragmentation needs (VT_COLLECT_FRAG).
 *
 * Records live in slabs that never move or go away (vt__core.slabs), so the copy
 * walks the slabs in order, taking the records that are in the table (site !=
 * NULL), several slabs per lock hold: a hold ends after the slab during which it
 * reached VT_COLLECT_HOLD_NS, or when the copy has no room for one more slab (room
 * is made outside the lock). Between holds the lock is released and every hook
 * that blocked on it is let through first (vt__yield_to_waiters).
 *
 * A periodic snapshot that wants fragmentation but not the live list copies only
 * (start, size, device slot) of each range that counts for fragmentation (17 bytes)
 * instead of a whole row (64 bytes): more records per hold, and no row array is
 * written and read back. A hook waits at most one hold (VT_COLLECT_HOLD_NS plus one
 * slab); each gap costs the collector a handoff to the waiting hooks, so holds are
 * not made shorter than that. */
#define VT_COLLECT_HOLD_NS  250000ull    /* a hold copies slabs until this long has passed */

static void vt__unlock_timed(uint64_t held_since, vt_collect *c)
{
    uint64_t d = vt_now_ns() - held_since;
    vt__unlock();
    if (d > c->lock_hold_max_ns)
        c->lock_hold_max_ns = d;
    c->lock_holds++;
}

/* Makes room for `more` rows after c->n_allocs (without the lock). 0 or -1. */
static int vt__rows_reserve(vt_collect *c, size_t *cap, size_t more)
{
    if (c->n_allocs + more <= *cap)
        return 0;
    size_t n = c->n_allocs + more;
    n += n / 8 + 64;
    vt_alloc_row *p = realloc(c->allocs, n * sizeof *p);
    if (!p)
        return -1;
    c->allocs = p;
    *cap = n;
    return 0;
}

/* The ranges fragmentation is computed from: every live allocation but pinned host
 * memory and unmapped VMM (address 0), with its device slot. Owned by the collector. */
typedef struct vt__ranges {
    uint64_t (*r)[2];   /* start, size */
    uint8_t   *slot;    /* device slot (vt__slot) of each */
    size_t     n, cap;
} vt__ranges;

static int vt__ranges_reserve(vt__ranges *g, size_t more)
{
    if (g->n + more <= g->cap)
        return 0;
    size_t n = g->n + more;
    n += n / 8 + 64;
    uint64_t (*r)[2] = realloc(g->r, n * sizeof *r);
    if (!r)
        return -1;
    g->r = r;
    uint8_t *sl = realloc(g->slot, n);
    if (!sl)
        return -1;
    g->slot = sl;
    g->cap = n;
    return 0;
}

static void vt__ranges_free(vt__ranges *g)
{
    free(g->r);
    free(g->slot);
    memset(g, 0, sizeof *g);
}

static inline void vt__range_add(vt__ranges *g, uint64_t addr, uint64_t size, int kind, int slot)
{
    if (!vt__frag_counts(kind, addr))
        return;
    g->r[g->n][0] = addr;
    g->r[g->n][1] = vt_frag_size_tag(size, kind == VT_KIND_VMM);
    g->slot[g->n] = (uint8_t)slot;
    g->n++;
}

static void vt__row_of_rec(vt_alloc_row *a, const vt_rec *r)
{
    a->addr = r->addr;
    a->size = r->size;
    a->kind = r->site->kind;
    a->flags = r->site->flags;
    a->device = r->site->device;
    a->stack = r->site->stack;
    a->step = r->step;
    a->birth_ns = r->birth_ns;
    a->tid = r->tid;
    a->stream = r->site->kind == VT_KIND_ASYNC ? r->ctx_stream : 0;
}

static void vt__row_of_vmm(vt_alloc_row *a, const vt_vmm *v)
{
    a->addr = v->va;
    a->size = v->size;
    a->kind = v->site->kind;   /* vmm, or ipc_import for an imported handle */
    a->flags = v->site->flags;
    a->device = v->site->device;
    a->stack = v->site->stack;
    a->step = v->step;
    a->birth_ns = v->birth_ns;
    a->tid = v->tid;
    a->stream = 0;
}

static void vt__row_of_region(vt_alloc_row *a, const vt_region *r)
{
    a->addr = r->addr;
    a->size = r->size;
    a->kind = VT_KIND_REGION;
    a->flags = r->site->flags;
    a->device = r->site->device;
    a->stack = r->site->stack;
    a->step = r->step;
    a->birth_ns = r->birth_ns;
    a->tid = r->tid;
    a->stream = 0;
}

/* Copies the live records, several slabs per hold (see above), then the counted VMM
 * allocations and the announced regions (one hold: there are few): as rows into c->allocs (room *cap) when g
 * is NULL, else as ranges into g. Called without the lock. 0, or -1 out of memory. */
static int vt__collect_live(vt_collect *c, size_t *cap, vt__ranges *g)
{
    for (size_t next = 0;;) {
        /* room for one slab at least, so that every hold makes progress */
        if (g ? vt__ranges_reserve(g, VT_SLAB) : vt__rows_reserve(c, cap, VT_SLAB))
            return -1;
        vt__lock_raw();   /* rows as of the first hold: no ring events between */
        uint64_t t0 = vt_now_ns();
        while (next < vt__core.n_slabs) {
            const vt_rec *slab = vt__core.slabs[next++];
            size_t room;
            if (g) {
                for (int i = 0; i < VT_SLAB; i++) {
                    const vt_site *s = slab[i].site;
                    if (s)
                        vt__range_add(g, slab[i].addr, slab[i].size, s->kind, s->slot);
                }
                room = g->cap - g->n;
            } else {
                for (int i = 0; i < VT_SLAB; i++)
                    if (slab[i].site)
                        vt__row_of_rec(&c->allocs[c->n_allocs++], &slab[i]);
                room = *cap - c->n_allocs;
            }
            if (room < VT_SLAB || vt_now_ns() - t0 >= VT_COLLECT_HOLD_NS)
                break;
        }
        int more = next < vt__core.n_slabs;
        vt__unlock_timed(t0, c);
        if (!more)
            break;
        vt__yield_to_waiters();
    }
    for (int attempt = 0;; attempt++) {
        vt__lock_raw();   /* rows as of the first hold: no ring events between */
        uint64_t t0 = vt_now_ns();
        size_t nv = HASH_COUNT(vt__core.vmms) + HASH_COUNT(vt__core.regions);
        if (g ? g->n + nv <= g->cap : c->n_allocs + nv <= *cap) {
            vt_vmm *v, *vtmp;
            HASH_ITER(hh, vt__core.vmms, v, vtmp) {
                if (!v->counted)
                    continue;
                if (g)
                    vt__range_add(g, v->va, v->size, v->site->kind, v->site->slot);
                else
                    vt__row_of_vmm(&c->allocs[c->n_allocs++], v);
            }
            if (!g) {   /* regions are never fragmentation ranges (vt__frag_counts) */
                vt_region *r, *rtmp;
                HASH_ITER(hh, vt__core.regions, r, rtmp)
                    vt__row_of_region(&c->allocs[c->n_allocs++], r);
            }
            vt__unlock_timed(t0, c);
            return 0;
        }
        vt__unlock_timed(t0, c);
        if (attempt > 8 || (g ? vt__ranges_reserve(g, nv + nv / 4 + 16)
                              : vt__rows_reserve(c, cap, nv + nv / 4 + 16)) < 0)
            return -1;
    }
}

/* Fragmentation of every device in c from g (without the lock): groups the ranges
 * by device slot in place (American flag sort: each misplaced range is swapped
 * straight to its group; with one device, one vectorised read of the slots finds
 * there is nothing to group), then sorts each group and measures its gaps. Same
 * result as vt_fragmentation on each device's ranges: the value does not depend on
 * the order of equal starts. With set: every group, sorted, is loaded into it as
 * well (set->valid = 1 when all of them fit). */
static void vt__frag_devices(vt_collect *c, vt__ranges *g, vt_frag_set *set)
{
    size_t cnt[VT_DEV_SLOTS] = { 0 }, start[VT_DEV_SLOTS], next[VT_DEV_SLOTS];
    uint8_t mixed = 0;
    for (size_t i = 0; i < g->n; i++)
        mixed |= (uint8_t)(g->slot[i] ^ g->slot[0]);
    if (!mixed && g->n) {
        cnt[g->slot[0]] = g->n;
    } else {
        for (size_t i = 0; i < g->n; i++)
            cnt[g->slot[i]]++;
    }
    size_t off = 0, most = 0;
    for (int s = 0; s < VT_DEV_SLOTS; s++) {
        start[s] = next[s] = off;
        off += cnt[s];
        if (cnt[s] > most)
            most = cnt[s];
    }
    for (int s = 0; mixed && s < VT_DEV_SLOTS; s++) {
        while (next[s] < start[s] + cnt[s]) {
            size_t i = next[s];
            int t = g->slot[i];
            if (t == s) {
                next[s]++;
                continue;
            }
            size_t j = next[t]++;
            uint64_t a = g->r[i][0], z = g->r[i][1];
            g->r[i][0] = g->r[j][0];
            g->r[i][1] = g->r[j][1];
            g->r[j][0] = a;
            g->r[j][1] = z;
            g->slot[i] = g->slot[j];
            g->slot[j] = (uint8_t)t;
        }
    }
    /* scratch for the largest group; without it, qsort */
    void *scratch = most >= 64 ? malloc(vt_frag_scratch_bytes(most)) : NULL;
    double value[VT_DEV_SLOTS];
    int loaded = set != NULL;
    if (set)
        vt_frag_set_reset(set);
    for (int s = 0; s < VT_DEV_SLOTS; s++) {
        if (!cnt[s])
            continue;
        uint64_t (*sorted)[2] = vt_frag_sort(g->r + start[s], cnt[s], scratch);
        value[s] = vt_frag_sorted((const uint64_t (*)[2])sorted, cnt[s]);
        if (loaded && vt_frag_set_load(set, s, (const uint64_t (*)[2])sorted, cnt[s]) < 0)
            loaded = 0;
    }
    if (set)
        set->valid = loaded;
    for (int i = 0; i < c->n_devs; i++) {
        int s = vt__slot(c->devs[i].device);
        c->devs[i].fragmentation = cnt[s] < 2 ? 0.0 : value[s];   /* no gap: 0, as vt_fragmentation */
    }
    free(scratch);
}

#define VT_FC_WAIT_NS 20000000ull   /* 20 ms */

/* Takes vt__fc (busy = 1): at once, or within wait_ns (sched_yield between tries).
 * 1 when taken, else 0. */
static int vt__fc_acquire(uint64_t wait_ns)
{
    if (!__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
        return 1;
    if (!wait_ns)
        return 0;
    uint64_t until = vt_now_ns() + wait_ns;
    do {
        sched_yield();
        if (!__atomic_load_n(&vt__fc.busy, __ATOMIC_RELAXED) &&
            !__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
            return 1;
    } while (vt_now_ns() < until);
    return 0;
}

/* Journal sizes, in entries (16 bytes each), from the live count L: the journal
 * offered to the core holds L/4 + 16,384 (two of them exist: 8 bytes per live
 * allocation), and the writer merges it once it holds L/8 + 8,192 (half that), so
 * that it overflows only when a burst outruns the writer. */
#define VT_FJ_ROOM(live) ((size_t)(live) / 4 + 16384)
#define VT_FJ_KEEP(live) ((size_t)(live) / 8 + 8192)

/* Makes the collector's spare journal buffer hold the entries to offer the core:
 * VT_FJ_ROOM, or more after an overflow (vt__fc.want). Without the lock. 0, or -1
 * out of memory. */
static int vt__fc_reserve(void)
{
    size_t want = VT_FJ_ROOM(vt_core_live_count_applied());
    if (want < vt__fc.want)
        want = vt__fc.want;
    if (vt__fc.spare_cap >= want)
        return 0;
    free(vt__fc.spare);
    vt__fc.spare = malloc(want * sizeof *vt__fc.spare);
    vt__fc.spare_cap = vt__fc.spare ? want : 0;
    return vt__fc.spare ? 0 : -1;
}

/* Under lock, by the collector holding vt__fc: hands the core the spare buffer as a
 * new, empty journal and keeps the old one as the spare (its vt__core.fj_n entries,
 * returned, are what changed since the previous take). *was_on: the old journal
 * was complete. A journal that stopped full (fj_on = 0 with a kept set) asks for
 * twice the room next time, up to 2 x live + 65,536 (past that a full copy is the
 * cheaper way). */
static size_t vt__fj_take(int *was_on)
{
    uint64_t (*old)[2] = vt__core.fj;
    size_t n = vt__core.fj_n, cap = vt__core.fj_cap;
    *was_on = vt__core.fj_on;
    if (!vt__core.fj_on && vt__fc.set.valid && cap) {
        size_t most = 2 * (size_t)vt__core.live_count + 65536;
        vt__fc.want = 2 * cap < most ? 2 * cap : most;
    }
    vt__core.fj = vt__fc.spare;
    vt__core.fj_cap = vt__fc.spare_cap;
    __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);   /* read by vt_core_frag_keep */
    vt__core.fj_on = vt__core.fj != NULL;
    vt__fc.spare = old;
    vt__fc.spare_cap = cap;
    return n;
}

void vt_core_frag_keep(void)
{
    size_t n = __atomic_load_n(&vt__core.fj_n, __ATOMIC_RELAXED);
    if (n < VT_FJ_KEEP(vt_core_live_count_applied()))
        return;
    if (__atomic_exchange_n(&vt__fc.busy, 1, __ATOMIC_ACQUIRE))
        return;   /* a collection is using it */
    if (vt__fc.set.valid && vt__fc_reserve() == 0) {
        int whole;
        vt__lock_raw();
        n = vt__fj_take(&whole);
        vt__unlock();
        if (!whole || vt_frag_set_apply(&vt__fc.set, vt__fc.spare, n) < 0)
            vt_frag_set_reset(&vt__fc.set);   /* the next collection copies */
    }
    __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
}

/* The totals of device slot `slot` into d (fragmentation not computed). Under lock. */
static void vt__dev_copy(int slot, vt_dev_stats *d)
{
    d->device = vt__dev_of_slot(slot);
    d->meminfo_known = vt__core.meminfo_known[slot];
    d->free_bytes = vt__core.mem_free[slot];
    d->total_bytes = vt__core.mem_total[slot];
    d->meminfo_changes = vt__core.mem_changes[slot];
    d->live_bytes = vt__core.dev_live[slot];
    d->peak_bytes = vt__core.dev_peak[slot];
    d->pool_known = vt__core.pool_known[slot] != 0;
    d->pool_reserved_bytes = vt__core.pool_reserved[slot];
    d->pool_used_bytes = vt__core.pool_known[slot] == 2 ? vt__core.pool_used[slot]
                                                        : vt__core.ks[slot][VT_KIND_ASYNC].live_bytes;
    d->graph_known = vt__core.graph_known[slot];
    d->graph_reserved_bytes = vt__core.graph_reserved[slot];
    d->graph_used_bytes = vt__core.graph_used[slot];
    d->fragmentation = -1.0;
    memcpy(d->kinds, vt__core.ks[slot], sizeof d->kinds);
}

int vt_core_dev_totals(int device, vt_dev_stats *d)
{
    memset(d, 0, sizeof *d);
    d->device = device;
    d->fragmentation = -1.0;
    if (!vt_core_enabled() || vt__no_lock_here())
        return -1;
    int e = errno;
    vt__lock();   /* applies every ring event claimed before the call */
    int slot = vt__slot(device);
    int active = vt__core.dev_active[slot];
    if (active)
        vt__dev_copy(slot, d);
    vt__unlock();
    errno = e;
    return active;
}

int vt_core_collect(vt_collect *c, unsigned flags, int leak_steps)
{
    memset(c, 0, sizeof *c);
    int want_rows = (flags & VT_COLLECT_ALLOCS) != 0;
    int want_ranges = (flags & VT_COLLECT_FRAG) && !want_rows;   /* ranges only */
    /* The kept fragmentation set (vt_frag.h), when no other collector holds it: a
     * collection of ranges only brings it up to date from the journal, and a
     * collection without fragmentation drops it (and stops the journal). A
     * collection of the live list leaves both alone. A collection of ranges waits
     * for the writer's merge (vt_core_frag_keep: a few ms, holding no lock) rather
     * than copy the live list; for at most VT_FC_WAIT_NS (another collector may hold
     * it for a full copy), then it copies without the set. */
    int fc = !want_rows && vt__fc_acquire(want_ranges ? VT_FC_WAIT_NS : 0);
    if (fc && want_ranges && vt__fc_reserve() < 0) {
        __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
        fc = 0;
    }
    size_t fj_n = 0;
    int fj_whole = 0;
    uint64_t (*fj_drop)[2] = NULL;
    size_t cap_sites = 0;
    uint64_t t0 = 0;
    /* room for every composition (vt_peak.c), taken before the lock; none: no
     * compositions in this copy */
    c->peaks = malloc((VT_DEV_SLOTS + 1) * sizeof *c->peaks);
    for (int attempt = 0;; attempt++) {
        if (flags & VT_COLLECT_APPLIED)
            vt__lock_raw();
        else
            vt__lock();   /* applies every ring event claimed before the collection */
        t0 = vt_now_ns();
        size_t need_sites = vt__core.n_sites;
        if (need_sites <= cap_sites)
            break;  /* keep the lock */
        vt__unlock_timed(t0, c);
        free(c->sites);
        c->sites = NULL;
        if (attempt > 8) {
            if (fc)
                __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
            vt_collect_free(c);
            return -1;
        }
        cap_sites = need_sites + need_sites / 4 + 16;
        c->sites = malloc(cap_sites * sizeof *c->sites);
        if (!c->sites) {
            if (fc)
                __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
            vt_collect_free(c);
            return -1;
        }
    }
    /* lock held */
    if (fc && want_ranges) {
        fj_n = vt__fj_take(&fj_whole);   /* this instant's journal; a new one starts */
    } else if (fc) {
        fj_drop = vt__core.fj;   /* no fragmentation wanted: no journal (freed below) */
        vt__core.fj = NULL;
        __atomic_store_n(&vt__core.fj_n, 0, __ATOMIC_RELAXED);
        vt__core.fj_cap = 0;
        vt__core.fj_on = 0;
    }
    c->step = __atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    c->step_marked = __atomic_load_n(&vt__core.step_marked, __ATOMIC_RELAXED);
    c->changes = vt__core.changes;
    c->dropped_records = __atomic_load_n(&vt__core.dropped, __ATOMIC_RELAXED);
    for (int slot = 0; slot < VT_DEV_SLOTS; slot++) {
        if (!vt__core.dev_active[slot])
            continue;
        vt__dev_copy(slot, &c->devs[c->n_devs++]);
    }
    vt__sites_collect(c, flags, leak_steps);
    vt__peak_collect(c);
    size_t cap_rows = (want_rows || want_ranges) ? vt__core.live_count + HASH_COUNT(vt__core.vmms) : 0;   /* regions are in live_count */
    vt__unlock_timed(t0, c);

    vt__ranges g = { 0 };
    if (want_rows) {
        cap_rows += cap_rows / 8 + 64;
        c->allocs = malloc(cap_rows * sizeof *c->allocs);
        if (!c->allocs || vt__collect_live(c, &cap_rows, NULL) < 0) {
            /* totals and sites stay valid; the rows are dropped */
            free(c->allocs);
            c->allocs = NULL;
            c->n_allocs = 0;
            flags &= ~(unsigned)VT_COLLECT_FRAG;
            c->rows_failed = 1;
        } else if ((flags & VT_COLLECT_FRAG) && vt__ranges_reserve(&g, c->n_allocs) == 0) {
            for (size_t j = 0; j < c->n_allocs; j++) {
                const vt_alloc_row *a = &c->allocs[j];
                vt__range_add(&g, a->addr, a->size, a->kind, vt__slot(a->device));
            }
        } else {
            flags &= ~(unsigned)VT_COLLECT_FRAG;   /* no memory: not computed (-1) */
        }
    } else if (want_ranges && fc && fj_whole && vt__fc.set.valid &&
               vt_frag_set_apply(&vt__fc.set, vt__fc.spare, fj_n) == 0) {
        /* the kept set plus the journal: the ranges as of the first hold */
        for (int i = 0; i < c->n_devs; i++)
            c->devs[i].fragmentation = vt_frag_set_value(&vt__fc.set, vt__slot(c->devs[i].device));
        c->frag_from_journal = 1;
        flags &= ~(unsigned)VT_COLLECT_FRAG;   /* done */
    } else if (want_ranges) {
        /* a full copy (the journal, restarted at the first hold, holds every change
         * made while it runs: the kept set loaded from it is brought up to date by
         * the next collection whatever the copy saw of those) */
        if (vt__ranges_reserve(&g, cap_rows + cap_rows / 8 + 64) < 0 || vt__collect_live(c, NULL, &g) < 0) {
            flags &= ~(unsigned)VT_COLLECT_FRAG;
            c->rows_failed = 1;
        }
    }
    if (flags & VT_COLLECT_FRAG)
        vt__frag_devices(c, &g, fc && want_ranges ? &vt__fc.set : NULL);
    else if (fc && want_ranges && !c->frag_from_journal)
        vt_frag_set_reset(&vt__fc.set);   /* not loaded: the next collection copies */
    vt__ranges_free(&g);
    if (fc && !want_ranges) {
        free(fj_drop);
        free(vt__fc.spare);
        vt__fc.spare = NULL;
        vt__fc.spare_cap = 0;
        vt__fc.want = 0;
        vt_frag_set_free(&vt__fc.set);
    }
    if (fc)
        __atomic_store_n(&vt__fc.busy, 0, __ATOMIC_RELEASE);
    return 0;
}

void vt__collect_after_fork(void)
{
    memset(&vt__fc, 0, sizeof vt__fc);
}
