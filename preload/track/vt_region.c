/* vt_region.c — heaps and the regions announced inside them (contracts: vt_region.h).
 *
 * Two uthash tables under the core lock: vt__core.heaps by handle, vt__core.regions
 * by address. A region carries its heap's handle; resetting or unregistering a heap
 * walks the region table (announcing heaps is rare, resets are per heap, not per
 * region). A region is counted through the same per-site accounting as any record
 * (vt__acct_add / vt__acct_sub), whose process part leaves kind region out of the
 * totals (vt_table.c vt__own_bytes); the live-list copy lists it as an allocation row
 * (vt_collect.c), never as a fragmentation range (vt__frag_counts).
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"
#include "vt_region.h"

/* Under lock: frees region r (its bytes leave its site) and forgets it. */
static void vt__region_free(vt_region *r)
{
    vt__acct_sub(r->site, r->size, r->birth_ns);
    HASH_DELETE(hh, vt__core.regions, r);
    vt_mem_free(r);
}

/* Under lock: frees every region of heap. */
static void vt__heap_free_regions(uint64_t heap)
{
    vt_region *r, *t;
    HASH_ITER(hh, vt__core.regions, r, t) {
        if (r->heap == heap)
            vt__region_free(r);
    }
}

void vt_region_heap_add(uint64_t heap, uint64_t base, uint64_t size)
{
    if (!vt_core_enabled() || heap == 0 || vt__no_lock_here())
        return;
    vt__lock();
    vt_heap *h;
    HASH_FIND(hh, vt__core.heaps, &heap, sizeof heap, h);
    if (!h) {
        h = vt_mem_calloc(sizeof *h);
        if (!h) {
            vt__oom_latch();
            goto out;
        }
        h->handle = heap;
        HASH_ADD(hh, vt__core.heaps, handle, sizeof h->handle, h);
        if (vt__hash_oom) {
            vt_mem_free(h);
            vt__oom_latch();
            goto out;
        }
    }
    h->base = base;
    h->size = size;
out:
    vt__unlock();
}

void vt_region_heap_remove(uint64_t heap)
{
    if (!vt_core_enabled() || heap == 0 || vt__no_lock_here())
        return;
    vt__lock();
    vt_heap *h;
    HASH_FIND(hh, vt__core.heaps, &heap, sizeof heap, h);
    if (h) {
        vt__heap_free_regions(heap);
        HASH_DELETE(hh, vt__core.heaps, h);
        vt_mem_free(h);
    }
    vt__unlock();
}

void vt_region_heap_reset(uint64_t heap)
{
    if (!vt_core_enabled() || vt__no_lock_here())
        return;
    vt__lock();
    vt_heap *h = NULL;
    if (heap != 0)
        HASH_FIND(hh, vt__core.heaps, &heap, sizeof heap, h);
    if (heap == 0 || h)
        vt__heap_free_regions(heap);
    vt__unlock();
}

void vt_region_add(uint64_t heap, uint64_t addr, uint64_t size, int device, uint32_t stack)
{
    if (!vt_core_enabled() || size == 0 || vt__no_lock_here())
        return;
    uint64_t now = vt_now_ns();
    int tid = vt_guard_tid();
    vt__lock();
    vt_heap *h = NULL;
    if (heap != 0) {
        HASH_FIND(hh, vt__core.heaps, &heap, sizeof heap, h);
        if (!h)
            goto out;   /* a heap we were never told of */
        const vt_site *hs = vt__site_of_live(h->base);
        if (hs)
            device = hs->device;   /* the heap's own allocation's device */
    }
    vt_region *r;
    HASH_FIND(hh, vt__core.regions, &addr, sizeof addr, r);
    if (r)   /* registered again without an unregister: the old one is gone */
        vt__region_free(r);
    vt_site *s = vt__site_get(stack, VT_KIND_PACK(VT_KIND_REGION, 0), device);
    r = s ? vt_mem_calloc(sizeof *r) : NULL;
    if (!r) {
        vt__oom_latch();
        goto out;
    }
    r->addr = addr;
    r->size = size;
    r->heap = heap;
    r->birth_ns = vt__next_birth(now);
    r->site = s;
    r->step = (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    r->tid = tid;
    HASH_ADD(hh, vt__core.regions, addr, sizeof r->addr, r);
    if (vt__hash_oom) {
        vt_mem_free(r);
        vt__oom_latch();
        goto out;
    }
    vt__acct_add(s, size, r->birth_ns, 0);
out:
    vt__unlock();
}

void vt_region_resize(uint64_t addr, uint64_t size)
{
    if (!vt_core_enabled() || vt__no_lock_here())
        return;
    vt__lock();
    vt_region *r;
    HASH_FIND(hh, vt__core.regions, &addr, sizeof addr, r);
    if (r && size == 0) {
        vt__region_free(r);
    } else if (r && size != r->size) {
        vt__acct_sub(r->site, r->size, r->birth_ns);
        r->size = size;
        vt__acct_add(r->site, size, r->birth_ns, 0);
    }
    vt__unlock();
}

void vt_region_remove(uint64_t addr)
{
    if (!vt_core_enabled() || vt__no_lock_here())
        return;
    vt__lock();
    vt_region *r;
    HASH_FIND(hh, vt__core.regions, &addr, sizeof addr, r);
    if (r)
        vt__region_free(r);
    vt__unlock();
}
