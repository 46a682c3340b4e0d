/* vt_peak.c — what was live at the peak: for each device and for the process, the
 * sites holding the most bytes at the moment the total reached a new peak.
 *
 * Per-site peaks cannot say what was live at the peak: each site peaks at its own
 * moment. So at the moment a total (a device's live bytes, or the process's) rises
 * to a new peak, the accounting of that rise (vt_table.c vt__acct_process, under the
 * core lock, in the order the events are applied) copies the per-site live bytes:
 * the VT_PEAK_TOP sites with the most bytes (of that device; of every device for the
 * process), and the rest summed as "other". The copy is exact for its moment: a
 * buffer allocated and freed inside one step is in it at its size.
 *
 * Hysteresis: a copy walks every site, so not every new peak is copied. A new peak is
 * copied when it is at least 1 % above the last copied one, or when it is above it
 * at all and the last copy is older than the snapshot interval (VRAMTRACE_INTERVAL_MS;
 * 1 s when periodic snapshots are off). Bound on the error: the copied total is
 * never more than 1 % below the highest peak (a peak 1 % above the copy would have
 * been copied), and once an interval has passed the next rise is copied exactly. A
 * ramp from A to B bytes makes at most log(B/A)/log(1.01) + 1 copies, plus one per
 * interval of its duration.
 *
 * Where it runs: where the ring's events are applied (vt_table.c): normally the
 * writer thread's drain or a query; a hook applies events only when it finds the ring
 * full or makes a synchronous (VMM) call, and may then take a copy. The copy's cost
 * is one pass over the sites (O(sites x VT_PEAK_TOP)), bounded by the hysteresis.
 *
 * Ids: site ids (vt_sites.c), so a snapshot names the sites its file defines.
 * Thread safety: everything here runs under the core lock.
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"
#include "vt_config.h"

#include <string.h>

/* Adds (s, bytes) to p's top list (bytes descending), or to "other". */
static void vt__peak_add(vt_peak_comp *p, const vt_site *s, uint64_t bytes)
{
    uint32_t n = p->n;
    if (n == VT_PEAK_TOP && bytes <= p->top[n - 1].bytes) {
        p->other_bytes += bytes;
        p->other_sites++;
        return;
    }
    if (n == VT_PEAK_TOP) {   /* the smallest named site moves to "other" */
        p->other_bytes += p->top[n - 1].bytes;
        p->other_sites++;
        n--;
    }
    uint32_t i = n;
    while (i > 0 && p->top[i - 1].bytes < bytes) {
        p->top[i] = p->top[i - 1];
        i--;
    }
    p->top[i] = (vt_peak_site){ .id = s->id, .stack = s->stack, .kind = s->kind,
                                .device = s->device, .flags = s->flags, .bytes = bytes };
    p->n = n + 1;
}

void vt__peak_rise(int slot, uint64_t total, uint64_t now_ns, uint32_t step)
{
    vt_peak_comp *p = &vt__core.pk[slot];
    if (p->gen && total <= p->bytes)
        return;
    uint64_t every = (uint64_t)(vt__config.interval_ms > 0 ? vt__config.interval_ms : 1000) * 1000000ull;
    /* the next copy: a peak at least 1 % above this one, or any new peak once the
     * interval has passed (vt__peak_check) */
    vt__core.pk_due_bytes[slot] = total + total / 100 + (total % 100 != 0);
    vt__core.pk_due_ns[slot] = now_ns + every;
    p->device = slot == VT_DEV_SLOTS ? VT_PEAK_PROCESS : vt__dev_of_slot(slot);
    p->n = 0;
    p->other_bytes = 0;
    p->other_sites = 0;
    vt_site *s, *tmp;
    HASH_ITER(hh, vt__core.sites, s, tmp) {
        if (!s->live_bytes || s->kind == VT_KIND_IPC_IMPORT)   /* another process's memory */
            continue;
        if (slot != VT_DEV_SLOTS && s->slot != slot)
            continue;
        vt__peak_add(p, s, s->live_bytes);
    }
    p->gen = vt__core.pk_gen + 1;
    __atomic_store_n(&vt__core.pk_gen, p->gen, __ATOMIC_RELAXED);   /* vt_core_peak_sites */
    p->bytes = total;
    p->time_ns = now_ns;
    p->step = (uint64_t)step + 1;
}

void vt__peak_collect(vt_collect *c)
{
    c->n_peaks = 0;
    if (!c->peaks)
        return;
    if (vt__core.pk[VT_DEV_SLOTS].gen)
        c->peaks[c->n_peaks++] = vt__core.pk[VT_DEV_SLOTS];
    for (int slot = 0; slot < VT_DEV_SLOTS; slot++)
        if (vt__core.pk[slot].gen)
            c->peaks[c->n_peaks++] = vt__core.pk[slot];
}

int vt_core_peak_sites(int device, vt_peak_comp *out)
{
    memset(out, 0, sizeof *out);
    /* none copied yet (a process that never allocated: no lock taken) */
    if (!__atomic_load_n(&vt__core.pk_gen, __ATOMIC_RELAXED) && !vt_ring_pending(&vt__ring))
        return 0;
    if (vt__no_lock_here())
        return 0;
    int slot = device == VT_PEAK_PROCESS ? VT_DEV_SLOTS : vt__slot(device);
    vt__lock();
    *out = vt__core.pk[slot];
    vt__unlock();
    return out->gen != 0;
}

void vt__peak_after_fork(void)
{
    memset(vt__core.pk, 0, sizeof vt__core.pk);
    memset(vt__core.pk_due_bytes, 0, sizeof vt__core.pk_due_bytes);
    memset(vt__core.pk_due_ns, 0, sizeof vt__core.pk_due_ns);
    vt__core.pk_gen = 0;
}
