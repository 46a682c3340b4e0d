/* vt_sites.c — the site table and the online leak detector.
 *
 * A site is the totals of one (stack id, kind with its flags, device): uthash
 * vt__core.sites keyed by stack<<16 | packed kind (VT_KIND_PACK)<<8 | device slot, with a 64-entry direct-mapped cache in front
 * (vt__site_get, vt_core_internal.h: a program allocates from few sites at a time).
 * Sites are never removed (a fork child starts over); ids are 1, 2, ... in creation
 * order.
 *
 * Leak detector (online, per site): each step snapshot closes a step. The site's
 * floor for that step is the smallest live value it had during the step. If the floor
 * rose compared with the previous step, growth_steps += 1 and growth_bytes += rise;
 * if it stayed or fell, both reset to 0 (a leak raises the floor at every step; churn
 * falls back). A site with growth_steps >= the threshold (VRAMTRACE_LEAK_STEPS) is
 * reported (leak_warn; leak_new the first time).
 */
#define _GNU_SOURCE
#include "vt_core_internal.h"

#include <string.h>

vt_site *vt__site_lookup(uint64_t key, vt_site **c)
{
    int slot = (int)(key & 0xff), kind = (int)((key >> 8) & 0xff);
    uint32_t stack = (uint32_t)(key >> 16);
    vt_site *s;
    HASH_FIND(hh, vt__core.sites, &key, sizeof key, s);
    if (!s) {
        s = vt_mem_calloc(sizeof *s);
        if (!s)
            return NULL;
        s->key = key;
        s->stack = stack;
        s->kind = (int16_t)VT_KIND_OF(kind);
        s->flags = (uint8_t)VT_FLAGS_OF(kind);
        s->slot = (int16_t)slot;
        s->device = (int16_t)vt__dev_of_slot(slot);
        HASH_ADD(hh, vt__core.sites, key, sizeof s->key, s);
        if (vt__hash_oom) {
            vt_mem_free(s);
            return NULL;
        }
        s->id = (uint32_t)++vt__core.n_sites;   /* sites are never removed (fork starts over) */
        vt__core.dev_active[slot] = 1;
    }
    *c = s;
    return s;
}


/* Under lock: the leak detector closes site s's step (a step snapshot). The floor of
 * the step is the smallest live value the site had during it; a floor above the
 * previous step's counts one more growth step (and the rise in bytes), any other
 * resets both to 0. */
static void vt__site_close_step(vt_site *s)
{
    uint64_t floor = s->step_min;
    if (s->floor_valid && floor > s->prev_floor) {
        s->growth_steps++;
        s->growth_bytes += floor - s->prev_floor;
    } else {
        s->growth_steps = 0;
        s->growth_bytes = 0;
    }
    s->prev_floor = floor;
    s->floor_valid = 1;
    s->step_min = s->live_bytes;
}

static void vt__site_row(vt_site_row *row, const vt_site *s, int warn)
{
    row->id = s->id;
    row->stack = s->stack;
    row->kind = s->kind;
    row->flags = s->flags;
    row->device = s->device;
    row->live_bytes = s->live_bytes;
    row->live_count = s->live_count;
    row->interval_peak_bytes = s->interval_peak;
    row->alloc_total = s->alloc_total;
    row->alloc_bytes_total = s->alloc_bytes_total;
    row->free_total = s->free_total;
    row->growth_steps = s->growth_steps;
    row->growth_bytes = s->growth_bytes;
    row->leak_warn = warn;
    row->leak_new = warn && !s->warned;
}

void vt__sites_collect(vt_collect *c, unsigned flags, int leak_steps)
{
    /* count/total columns per device slot x kind: sums of the sites' */
    static struct { uint64_t live_count, alloc_total, alloc_bytes_total, free_total; }
        sum[VT_DEV_SLOTS][VT_KIND_COUNT];   /* under the lock: one collector at a time */
    memset(sum, 0, sizeof sum);
    vt_site *s, *stmp;
    HASH_ITER(hh, vt__core.sites, s, stmp) {
        sum[s->slot][s->kind].live_count += s->live_count;
        sum[s->slot][s->kind].alloc_total += s->alloc_total;
        sum[s->slot][s->kind].alloc_bytes_total += s->alloc_bytes_total;
        sum[s->slot][s->kind].free_total += s->free_total;
        if (flags & VT_COLLECT_STEP)
            vt__site_close_step(s);
        int warn = leak_steps > 0 && s->growth_steps >= (uint32_t)leak_steps;
        if (s->live_bytes || s->dirty || warn) {
            vt__site_row(&c->sites[c->n_sites++], s, warn);
            if (warn)
                s->warned = 1;
        }
        s->dirty = 0;
        s->interval_peak = s->live_bytes;
    }
    for (int i = 0; i < c->n_devs; i++) {
        int slot = vt__slot(c->devs[i].device);
        for (int k = 0; k < VT_KIND_COUNT; k++) {
            c->devs[i].kinds[k].live_count = sum[slot][k].live_count;
            c->devs[i].kinds[k].alloc_total = sum[slot][k].alloc_total;
            c->devs[i].kinds[k].alloc_bytes_total = sum[slot][k].alloc_bytes_total;
            c->devs[i].kinds[k].free_total = sum[slot][k].free_total;
        }
    }
}
