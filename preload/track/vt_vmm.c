/* vt_vmm.c — VMM physical allocations (cuMemCreate handles) and their mappings
 * (CUDA driver API "Virtual Memory Management"; contracts in vt_core.h).
 *
 * vt_vmm: one cuMemCreate physical allocation, uthash vt__core.vmms keyed by handle.
 * It carries its references (create, retains, releases), its mappings and the calls
 * in flight that hold it (releases, maps): it is live memory while referenced, mapped
 * or being mapped (vt__vmm_settle), counted at its site under VT_KIND_VMM.
 * vt_map: one cuMemMap mapping, uthash vt__core.maps keyed by virtual address, linked
 * to its allocation's other mappings. For fragmentation an allocation counts at its
 * lowest mapped address (vt__vmm_range). Every function takes the core lock.
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"

/* Under lock: notes the change of v's range from before (vt__vmm_range earlier). */
static void vt__fj_vmm(const vt_vmm *v, uint64_t before)
{
    uint64_t now = vt__vmm_range(v);
    if (now == before)
        return;
    if (before)
        vt__fj_note(before, v->size, v->site->kind, v->site->slot, 1);
    if (now)
        vt__fj_note(now, v->size, v->site->kind, v->site->slot, 0);
}


/* Under lock: counts v as live memory while it is referenced, mapped or being
 * mapped, and stops counting it when none of these holds (a failed release or a
 * map that raced a release counts it again: restore = the free counter is undone);
 * notes its range's change (before: vt__vmm_range earlier); frees it when it is not
 * live and no release in flight holds it. Returns v, or NULL when freed. */
static vt_vmm *vt__vmm_settle(vt_vmm *v, uint64_t before)
{
    int live = v->refs > 0 || v->maps > 0 || v->mapping > 0;
    if (live && !v->counted) {
        v->counted = 1;
        vt__acct_add(v->site, v->size, v->seq, 1);
    } else if (!live && v->counted) {
        v->counted = 0;
        vt__acct_sub(v->site, v->size, v->seq);
    }
    vt__fj_vmm(v, before);
    if (live || v->pending)
        return v;
    HASH_DELETE(hh, vt__core.vmms, v);
    vt_mem_free(v);
    return NULL;
}

/* cuMemCreate and cuMulticastCreate (kind VT_KIND_VMM, with its flags) or
 * cuMemImportFromShareableHandle (VT_KIND_IPC_IMPORT); kind packed (VT_KIND_PACK). */
static int vt__vmm_create(uint64_t handle, uint64_t size, int device, uint32_t stack, int kind)
{
    if (!vt_core_enabled())
        return -1;
    uint64_t now = vt_now_ns();
    int tid = vt_guard_tid();
    int rc = 0;
    vt__lock();
    vt_site *s = vt__site_get(stack, kind, device);
    vt_vmm *v = s ? vt_mem_calloc(sizeof *v) : NULL;
    if (!v) {
        vt__oom_latch();
        rc = -1;
        goto out;
    }
    vt_vmm *old;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, old);
    if (old) {   /* the driver gave the value out again: the old one is gone, with
                  * any mapping still listed for it (its unmap not tracked yet: a late
                  * one must not end the new allocation's mappings) */
        for (vt_map *m = old->mlist, *next; m; m = next) {
            next = m->sib_next;
            HASH_DELETE(hh, vt__core.maps, m);
            vt_mem_free(m);
        }
        old->mlist = NULL;
        HASH_DELETE(hh, vt__core.vmms, old);
        if (vt__vmm_range(old))
            vt__fj_note(old->va, old->size, old->site->kind, old->site->slot, 1);
        if (old->counted)
            vt__acct_sub(old->site, old->size, old->seq);
        old->counted = 0;
        if (old->pending)
            old->orphan = 1;   /* its release's commit/restore frees it */
        else
            vt_mem_free(old);
    }
    v->handle = handle;
    v->size = size;
    v->birth_ns = vt__next_birth(now);
    v->seq = v->birth_ns;
    v->site = s;
    v->step = (uint32_t)__atomic_load_n(&vt__core_step, __ATOMIC_RELAXED);
    v->tid = tid;
    v->refs = 1;
    v->counted = 1;
    HASH_ADD(hh, vt__core.vmms, handle, sizeof v->handle, v);
    if (vt__hash_oom) {
        vt_mem_free(v);
        vt__oom_latch();
        rc = -1;
        goto out;
    }
    vt__acct_add(s, size, v->seq, 0);
out:
    vt__unlock();
    return rc;
}

int vt_core_vmm_create(uint64_t handle, uint64_t size, int device, uint32_t stack, int flags)
{
    return vt__vmm_create(handle, size, device, stack, VT_KIND_PACK(VT_KIND_VMM, flags & VT_FLAG_ALL));
}

int vt_core_vmm_import(uint64_t handle, uint64_t size, int device, uint32_t stack)
{
    return vt__vmm_create(handle, size, device, stack, VT_KIND_IPC_IMPORT);
}

int vt_core_vmm_state(uint64_t handle, uint64_t *va, uint32_t *maps)
{
    int live = 0;
    *va = 0;
    *maps = 0;
    if (!vt_core_enabled())
        return 0;
    if (vt__no_lock_here())
        return -1;
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v && v->counted) {
        live = 1;
        *va = v->va;
        *maps = v->maps;
    }
    vt__unlock();
    return live;
}

/* Adds one to the reference count (ref = 1: a retain) or to the calls in flight
 * (ref = 0: a map beginning) of handle's allocation, under the lock. 1 when the
 * handle is known. */
static int vt__vmm_add(uint64_t handle, int ref)
{
    if (!vt_core_enabled())
        return 0;
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v) {
        uint64_t before = vt__vmm_range(v);
        if (ref)
            v->refs++;
        else
            v->mapping++;
        vt__vmm_settle(v, before);
    }
    vt__unlock();
    return v != NULL;
}

void vt_core_vmm_retain(uint64_t handle)
{
    vt__vmm_add(handle, 1);
}

int vt_core_vmm_release(uint64_t handle, vt_taken *t)
{
    t->rec = NULL;
    if (!vt_core_enabled())
        return 0;
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v && v->refs > 0) {   /* none left: a release too many, the driver refuses it */
        uint64_t before = vt__vmm_range(v);
        v->refs--;
        v->pending++;
        t->rec = vt__vmm_settle(v, before);   /* kept: pending */
    }
    vt__unlock();
    return t->rec != NULL;
}

/* The release in flight that t holds (vt_core_vmm_release) has returned; gave_back:
 * it failed (its reference is given back). Takes the lock; clears t->rec. */
static void vt__vmm_release_done(vt_taken *t, int gave_back)
{
    vt_vmm *v = t->rec;
    if (!v)
        return;
    t->rec = NULL;
    vt__lock();
    v->pending--;
    if (v->orphan) {
        if (!v->pending)
            vt_mem_free(v);   /* its handle was created again: this one is history */
    } else {
        uint64_t before = vt__vmm_range(v);
        if (gave_back)
            v->refs++;
        vt__vmm_settle(v, before);
    }
    vt__unlock();
}

void vt_core_vmm_restore(vt_taken *t)
{
    vt__vmm_release_done(t, 1);
}

void vt_core_vmm_commit(vt_taken *t)
{
    vt__vmm_release_done(t, 0);
}

/* Under lock: the lowest address at which v is still mapped, or 0 (its own
 * mappings: usually one or two). */
static uint64_t vt__vmm_lowest_va(const vt_vmm *v)
{
    uint64_t lo = 0;
    for (const vt_map *m = v->mlist; m; m = m->sib_next)
        if (!lo || m->va < lo)
            lo = m->va;
    return lo;
}

/* Under lock: mapping m is gone (unmapped, or displaced by a new mapping at its
 * address): takes it out of the table and frees it; its allocation loses a mapping
 * (and may be gone: vt__vmm_settle). */
static void vt__unmap_one(vt_map *m)
{
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &m->handle, sizeof m->handle, v);
    HASH_DELETE(hh, vt__core.maps, m);
    if (m->sib_prev)
        m->sib_prev->sib_next = m->sib_next;
    else if (v && v->mlist == m)
        v->mlist = m->sib_next;
    if (m->sib_next)
        m->sib_next->sib_prev = m->sib_prev;
    uint64_t va = m->va;
    vt_mem_free(m);
    vt__bump_changes();
    if (!v)
        return;
    uint64_t before = vt__vmm_range(v);
    if (v->maps)
        v->maps--;
    if (v->va == va)
        v->va = v->maps ? vt__vmm_lowest_va(v) : 0;
    vt__vmm_settle(v, before);
}

int vt_core_vmm_map_begin(uint64_t handle)
{
    return vt__vmm_add(handle, 0);
}

void vt_core_vmm_map_end(uint64_t va, uint64_t size, uint64_t handle, int began, int ok)
{
    vt__lock();
    vt_vmm *v;
    HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
    if (v && ok && vt_core_enabled()) {
        vt_map *old;
        HASH_FIND(hh, vt__core.maps, &va, sizeof va, old);
        if (old) {
            vt__unmap_one(old);   /* its unmap was not seen: gone now */
            /* that may have ended v itself (the same handle, released, with no map
             * in flight) */
            HASH_FIND(hh, vt__core.vmms, &handle, sizeof handle, v);
        }
        vt_map *m = v ? vt_mem_calloc(sizeof *m) : NULL;
        if (v && !m) {
            vt__oom_latch();
        } else if (m) {
            m->va = va;
            m->size = size;
            m->handle = handle;
            HASH_ADD(hh, vt__core.maps, va, sizeof m->va, m);
            if (vt__hash_oom) {
                vt_mem_free(m);
                vt__oom_latch();
            } else {
                uint64_t before = vt__vmm_range(v);
                m->sib_next = v->mlist;
                if (v->mlist)
                    v->mlist->sib_prev = m;
                v->mlist = m;
                v->maps++;
                if (!v->va || va < v->va)
                    v->va = va;
                vt__bump_changes();
                v = vt__vmm_settle(v, before);
            }
        }
    }
    if (v && began && v->mapping) {
        uint64_t before = vt__vmm_range(v);
        v->mapping--;
        vt__vmm_settle(v, before);
    }
    vt__unlock();
}

int vt_core_vmm_hold_at(uint64_t addr, uint64_t *handle)
{
    if (!vt_core_enabled())
        return 0;
    int held = 0;
    vt__lock();
    vt_map *m;
    HASH_FIND(hh, vt__core.maps, &addr, sizeof addr, m);
    vt_vmm *v = NULL;
    if (m)
        HASH_FIND(hh, vt__core.vmms, &m->handle, sizeof m->handle, v);
    if (v) {
        uint64_t before = vt__vmm_range(v);
        v->mapping++;
        vt__vmm_settle(v, before);
        *handle = v->handle;
        held = 1;
    }
    vt__unlock();
    return held;
}

void vt_core_vmm_map(uint64_t va, uint64_t size, uint64_t handle)
{
    vt_core_vmm_map_end(va, size, handle, 0, 1);
}

void vt_core_vmm_unmap(uint64_t va, uint64_t size)
{
    if (!vt_core_enabled())
        return;
    vt__lock();
    /* the mappings side by side from va, found by address (one cuMemUnmap may span
     * several: PyTorch's expandable segments shrink so) */
    uint64_t at = va;
    int covered = 0;
    for (;;) {
        vt_map *m;
        HASH_FIND(hh, vt__core.maps, &at, sizeof at, m);
        if (!m)
            break;
        uint64_t next = m->va + m->size;
        vt__unmap_one(m);
        if (next - va >= size || next <= at) {
            covered = 1;
            break;
        }
        at = next;
    }
    if (!covered && size && at != va) {
        /* a gap on the way: every mapping that starts in [va, va + size) (a walk of
         * every mapping; not when nothing is tracked at va: a mapping of a handle
         * that is not tracked, e.g. imported, whose unmap would cost that walk under
         * the lock each time) */
        vt_map *m, *tmp;
        HASH_ITER(hh, vt__core.maps, m, tmp) {
            if (m->va - va < size)
                vt__unmap_one(m);
        }
    }
    vt__unlock();
}

