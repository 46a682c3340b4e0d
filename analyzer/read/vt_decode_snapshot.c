/* vt_decode_snapshot.c — a "snapshot" record into a vt_snaprec: sites in each
 * format version's form (version 1 objects, version 2 rows, version 3 rows by site
 * id and delta rows), completion of delta records, devices (version 4: carried
 * forward, vt_decode_carry.c), live list, OOM, annotations; then the checks against the process and the fold (contract in
 * vt_decode.h).
 */
#include "vt_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_display.h"
#include "vt_fold.h"
#include "vt_format.h"
#include "vt_hostsig.h"
#include "vt_jline.h"
#include "vt_util.h"

/* vt_rd_stack_of for sites[i] (the name is formatted only on failure: hot loop). */
static int lookup_site_stack(vt_rd *r, int64_t id, size_t i, vt_stack **out)
{
    *out = vt_process_rawstack(r->p, id);
    if (!*out) return vt_rd_fail(r, "sites[%zu]: stack %lld is not defined before it is used", i, (long long)id);
    return 0;
}

/* The per-site counters the analyzer does not use, still type-checked. */
static int unused_counter(const char *k)
{
    return !strcmp(k, "live_count") || !strcmp(k, "alloc_total") || !strcmp(k, "alloc_bytes_total") ||
           !strcmp(k, "growth_steps") || !strcmp(k, "growth_bytes");
}

/* Column names of a version 2 and of a version 3 site row, for messages. */
static const char *const site_cols[VT_SITE_NCOLS] = VT_SITE_COLUMN_NAMES;

/* Name of column c of a version 3 site row (0: the site id). */
static const char *site_col3(size_t c)
{
    static const int order3[VT_SITE3_NCOLS - 1] = VT_SITE3_ORDER;
    return c == 0 ? "site" : c < VT_SITE3_NCOLS ? site_cols[order3[c - 1]] : "?";
}

/* One version 2 site row: [stack, "kind", device, 8 non-negative integers]. */
static int rd_site_row(vt_rd *r, const json_t *a, size_t i, vt_rec_site *e)
{
    if (!json_is_array(a))
        return vt_rd_fail(r, "sites[%zu]: expected a site row (array), got %s", i, vt_jtype(a));
    size_t n = json_array_size(a);
    if (n != VT_SITE_NCOLS)
        return vt_rd_fail(r, "sites[%zu]: expected %d columns [stack, kind, device, live_bytes, live_count, "
                       "interval_peak_bytes, alloc_total, alloc_bytes_total, free_total, growth_steps, "
                       "growth_bytes], got %zu", i, VT_SITE_NCOLS, n);
    int k = VT_SITE_STACK;
    int bad = vt_ji64(json_array_get(a, VT_SITE_STACK), &e->key.stack, r->e, sizeof r->e);
    if (!bad) {
        k = VT_SITE_KIND;
        const char *ks = vt_jstr(json_array_get(a, VT_SITE_KIND), 31, r->e, sizeof r->e);
        if (!ks) bad = -1;
        else if ((e->key.kind = vt_kind_from_name(ks)) < 0) {
            snprintf(r->e, sizeof r->e, "unknown kind \"%s\"", ks);
            bad = -1;
        }
    }
    if (!bad) {
        int64_t x;
        k = VT_SITE_DEVICE;
        bad = vt_ji64(json_array_get(a, VT_SITE_DEVICE), &x, r->e, sizeof r->e);
        if (!bad && (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX)) {
            snprintf(r->e, sizeof r->e, "device %lld out of range", (long long)x);
            bad = -1;
        }
        e->key.device = (int32_t)x;
    }
    for (k = bad ? k : VT_SITE_LIVE_BYTES; !bad && k < VT_SITE_NCOLS; k++) {
        bad = vt_ju64(json_array_get(a, (size_t)k), &e->row[k - VT_SITE_LIVE_BYTES], r->e, sizeof r->e);
        if (bad) break;
    }
    if (bad) return vt_rd_fail(r, "sites[%zu][%d] (%s): %s", i, k, site_cols[k], r->e);
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

/* One version 3 site row: [site id, 8 non-negative integers in VT_SITE3_ORDER];
 * in a delta record (diff) [site id, 0 to 8 signed differences] (the missing ones
 * 0), left in e->row as two's complement until add_previous_row adds the previous
 * row. e->row is in version 2's order whatever the file's. */
static int rd_site_row3(vt_rd *r, const json_t *a, size_t i, vt_rec_site *e, int diff)
{
    static const int order3[8] = VT_SITE3_ORDER;
    if (!json_is_array(a))
        return vt_rd_fail(r, "sites[%zu]: expected a site row (array), got %s", i, vt_jtype(a));
    size_t n = json_array_size(a);
    if (diff ? n < 1 || n > VT_SITE3_NCOLS : n != VT_SITE3_NCOLS)
        return vt_rd_fail(r, "sites[%zu]: expected %s%d columns%s [site, alloc_total, alloc_bytes_total, free_total, "
                       "live_bytes, live_count, interval_peak_bytes, growth_steps, growth_bytes], got %zu", i,
                       diff ? "1 to " : "", VT_SITE3_NCOLS, diff ? " in a delta record" : "", n);
    int64_t id;
    int k = 0;
    int bad = vt_ji64(json_array_get(a, 0), &id, r->e, sizeof r->e);
    vt_site_def *d = r->sdef_last;
    if (!bad && (!d || d->id != id)) {
        if (id >= 0 && id < VT_SDEF_DIRECT && (uint64_t)id < r->nsdef_by_id) d = r->sdef_by_id[id];
        else HASH_FIND(hh, r->sdefs, &id, sizeof id, d);
        if (!d) {
            snprintf(r->e, sizeof r->e, "site %lld is not defined before it is used", (long long)id);
            bad = -1;
        }
        r->sdef_last = d;
    }
    if (bad) return vt_rd_fail(r, "sites[%zu][0] (site): %s", i, r->e);
    e->key = d->key;
    e->canon = d->canon;
    if (!d->site) d->site = vt_process_site(r->p, &d->key, d->canon);
    e->site = d->site;
    memset(e->row, 0, sizeof e->row);
    for (k = 1; k < (int)n; k++) {
        uint64_t *dst = &e->row[order3[k - 1] - VT_SITE_LIVE_BYTES];
        if (diff) {
            int64_t x;
            bad = vt_ji64(json_array_get(a, (size_t)k), &x, r->e, sizeof r->e);
            *dst = (uint64_t)x;
        } else {
            bad = vt_ju64(json_array_get(a, (size_t)k), dst, r->e, sizeof r->e);
        }
        if (bad) return vt_rd_fail(r, "sites[%zu][%d] (%s): %s", i, k, site_col3((size_t)k), r->e);
    }
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

static int rd_sites(vt_rd *r, const json_t *arr, int delta)
{
    char f[96];
    size_t i;
    json_t *o;
    if (!json_is_array(arr)) return vt_rd_fail(r, "snapshot.sites: expected an array, got %s", vt_jtype(arr));
    if (r->version >= VT_FORMAT_DELTA_ROWS) {
        json_array_foreach(arr, i, o) {
            vt_rec_site e;
            e.site = NULL;
            if (rd_site_row3(r, o, i, &e, delta) < 0) return -1;
            VT_PUSH(r->rec.se, r->rec.nse, r->rec.capse, e);
        }
        return 0;
    }
    if (r->version >= 2) {
        json_array_foreach(arr, i, o) {
            vt_rec_site e;
            memset(&e, 0, sizeof e);
            if (rd_site_row(r, o, i, &e) < 0) return -1;
            if (lookup_site_stack(r, e.key.stack, i, &e.canon) < 0) return -1;
            VT_PUSH(r->rec.se, r->rec.nse, r->rec.capse, e);
        }
        return 0;
    }
    json_array_foreach(arr, i, o) {
        vt_rec_site e;
        memset(&e, 0, sizeof e);
        int have_stack = 0, have_kind = 0, have_live = 0;
        if (!json_is_object(o)) return vt_rd_fail(r, "sites[%zu]: expected an object, got %s", i, vt_jtype(o));
        const char *k;
        json_t *v;
        /* one pass over the members (no hashing): this is the hot loop */
        json_object_foreach(o, k, v) {
            /* field names are formatted only on failure */
            int bad = 0;
            uint64_t u;
            int64_t x;
            if (!strcmp(k, "stack")) { bad = vt_ji64(v, &e.key.stack, r->e, sizeof r->e); have_stack = 1; }
            else if (!strcmp(k, "kind")) {
                const char *ks = vt_jstr(v, 31, r->e, sizeof r->e);
                have_kind = 1;
                if (!ks) bad = -1;
                else if ((e.key.kind = vt_kind_from_name(ks)) < 0) {
                    snprintf(r->e, sizeof r->e, "unknown kind \"%s\"", ks);
                    bad = -1;
                }
            } else if (!strcmp(k, "device")) {
                bad = vt_ji64(v, &x, r->e, sizeof r->e);
                if (!bad && (x < VT_DEVICE_MIN || x > VT_DEVICE_MAX)) {
                    snprintf(r->e, sizeof r->e, "device %lld out of range", (long long)x);
                    bad = -1;
                }
                e.key.device = (int32_t)x;
            }
            else if (!strcmp(k, "live_bytes")) { bad = vt_ju64(v, &e.live, r->e, sizeof r->e); have_live = 1; }
            else if (!strcmp(k, "interval_peak_bytes")) bad = vt_ju64(v, &e.ipeak, r->e, sizeof r->e);
            else if (!strcmp(k, "free_total")) bad = vt_ju64(v, &e.free_total, r->e, sizeof r->e);
            else if (unused_counter(k)) bad = vt_ju64(v, &u, r->e, sizeof r->e);
            if (bad < 0) return vt_rd_fail(r, "%s: %s", vt_rd_field(f, sizeof f, "sites", i, k), r->e);
        }
        if (!have_stack || !have_kind || !have_live)
            return vt_rd_fail(r, "sites[%zu]: needs \"stack\", \"kind\" and \"live_bytes\"", i);
        if (lookup_site_stack(r, e.key.stack, i, &e.canon) < 0) return -1;
        VT_PUSH(r->rec.se, r->rec.nse, r->rec.capse, e);
    }
    return 0;
}


/* devices[i].kinds: {"<kind>": {"alloc_total":.., "failed_total":.., "oom_total":..,
 * ...}} (docs/snapshot-format.md "snapshot"); the three cumulative counters are
 * summed over the kinds into d, region's left out (its "allocations" are NVTX
 * announcements inside another allocation, not calls). Absent counters count 0; oom_total is newer
 * than the others (d->has_oom says whether any kind carried it). */
static int rd_kind_counters(vt_rd *r, const json_t *kinds, size_t i, vt_rec_dev *d)
{
    static const char *const keys[] = {"alloc_total", "failed_total", "oom_total"};
    char f[160];
    const char *kn;
    json_t *ko;
    if (!kinds || json_is_null(kinds)) return 0;
    if (!json_is_object(kinds))
        return vt_rd_fail(r, "devices[%zu].kinds: expected an object, got %s", i, vt_jtype(kinds));
    json_object_foreach((json_t *)kinds, kn, ko) {
        if (!json_is_object(ko))
            return vt_rd_fail(r, "devices[%zu].kinds.%.40s: expected an object, got %s", i, kn, vt_jtype(ko));
        if (vt_kind_from_name(kn) == VT_KIND_REGION)
            continue;   /* announced sub-allocations, not CUDA calls */
        uint64_t *dst[] = {&d->calls, &d->failed, &d->oom};
        for (int k = 0; k < 3; k++) {
            json_t *v = json_object_get(ko, keys[k]);
            uint64_t u;
            if (!v || json_is_null(v)) continue;
            if (vt_ju64(v, &u, r->e, sizeof r->e) < 0) {   /* the field's name is formatted only then */
                snprintf(f, sizeof f, "devices[%zu].kinds.%.40s.%s", i, kn, keys[k]);
                return vt_rd_fail(r, "%s: %s", f, r->e);
            }
            *dst[k] = vt_sat_add(*dst[k], u);
            if (k == 2) d->has_oom = 1;
        }
    }
    return 0;
}

static int rd_devices(vt_rd *r, const json_t *arr)
{
    char f[96];
    size_t i;
    json_t *o;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return vt_rd_fail(r, "snapshot.devices: expected an array, got %s", vt_jtype(arr));
    json_array_foreach(arr, i, o) {
        vt_rec_dev d;
        memset(&d, 0, sizeof d);
        if (!json_is_object(o)) return vt_rd_fail(r, "devices[%zu]: expected an object, got %s", i, vt_jtype(o));
        json_t *v;
        int has;
        if ((v = json_object_get(o, "device")) && vt_rd_i64(r, v, vt_rd_field(f, sizeof f, "devices", i, "device"), &d.device) < 0)
            return -1;
        if (vt_rd_device_ok(r, d.device, vt_rd_field(f, sizeof f, "devices", i, "device")) < 0) return -1;
        if (rd_kind_counters(r, json_object_get(o, "kinds"), i, &d) < 0) return -1;
        if (vt_rd_u64n(r, json_object_get(o, "free_bytes"), vt_rd_field(f, sizeof f, "devices", i, "free_bytes"), &d.free_b, &d.has_free) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "total_bytes"), vt_rd_field(f, sizeof f, "devices", i, "total_bytes"), &d.total_b, &d.has_total) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "live_bytes"), vt_rd_field(f, sizeof f, "devices", i, "live_bytes"), &d.live, &has) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "peak_bytes"), vt_rd_field(f, sizeof f, "devices", i, "peak_bytes"), &d.peak, &has) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "pool_reserved_bytes"), vt_rd_field(f, sizeof f, "devices", i, "pool_reserved_bytes"), &d.pool_r, &d.has_pool_r) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "pool_used_bytes"), vt_rd_field(f, sizeof f, "devices", i, "pool_used_bytes"), &d.pool_u, &d.has_pool_u) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "graph_reserved_bytes"), vt_rd_field(f, sizeof f, "devices", i, "graph_reserved_bytes"), &d.graph_r, &d.has_graph_r) < 0 ||
            vt_rd_u64n(r, json_object_get(o, "graph_used_bytes"), vt_rd_field(f, sizeof f, "devices", i, "graph_used_bytes"), &d.graph_u, &d.has_graph_u) < 0)
            return -1;
        if ((v = json_object_get(o, "fragmentation")) && !json_is_null(v)) {
            vt_rd_field(f, sizeof f, "devices", i, "fragmentation");
            if (vt_jf64(v, &d.frag, r->e, sizeof r->e) < 0) return vt_rd_fail(r, "%s: %s", f, r->e);
            if (!(d.frag >= 0 && d.frag <= 1)) return vt_rd_fail(r, "%s: %g is outside 0..1", f, d.frag);
            d.has_frag = 1;
        }
        VT_PUSH(r->rec.de, r->rec.nde, r->rec.capde, d);
    }
    return 0;
}

static int rd_allocations(vt_rd *r, const json_t *arr, int *present)
{
    char where[64], f[96];
    size_t i;
    json_t *row;
    if (!arr || json_is_null(arr)) return 0;
    *present = 1;
    if (!json_is_array(arr)) return vt_rd_fail(r, "snapshot.allocations: expected an array, got %s", vt_jtype(arr));
    json_array_foreach(arr, i, row) {
        vt_alloc a;
        memset(&a, 0, sizeof a);
        snprintf(where, sizeof where, "allocations[%zu]", i);
        if (!json_is_array(row)) return vt_rd_fail(r, "%s: expected an array, got %s", where, vt_jtype(row));
        size_t ncol = json_array_size(row), c;
        if (ncol < VT_ALLOC_STACK + 1) return vt_rd_fail(r, "%s: a row needs at least %d columns", where, VT_ALLOC_STACK + 1);
        if (ncol > VT_ALLOC_NCOLS) {   /* the optional flags column; later ones are ignored */
            snprintf(f, sizeof f, "%s[%d]", where, VT_ALLOC_NCOLS);
            if (vt_rd_flags(r, json_array_get(row, VT_ALLOC_NCOLS), f, &a.flags) < 0) return -1;
        }
        for (c = 0; c < ncol && c < VT_ALLOC_NCOLS; c++) {
            json_t *v = json_array_get(row, c);
            snprintf(f, sizeof f, "%s[%zu]", where, c);
            int bad = 0;
            uint64_t u;
            switch (c) {
            case VT_ALLOC_ADDR: bad = vt_rd_u64(r, v, f, &a.addr); break;
            case VT_ALLOC_SIZE: bad = vt_rd_u64(r, v, f, &a.size); break;
            case VT_ALLOC_KIND: bad = vt_rd_kind(r, v, f, &a.kind); break;
            case VT_ALLOC_DEVICE: bad = vt_rd_device(r, v, f, &a.device); break;
            case VT_ALLOC_STACK:
                if (json_is_null(v)) a.stack = INT64_MIN;
                else bad = vt_rd_i64(r, v, f, &a.stack);
                break;
            case VT_ALLOC_BIRTH_NS: bad = vt_rd_u64(r, v, f, &a.birth_ns); break;
            case VT_ALLOC_STREAM: bad = vt_rd_u64(r, v, f, &a.stream); break;
            default: bad = vt_rd_u64(r, v, f, &u); break;
            }
            if (bad < 0) return -1;
        }
        if (a.stack != INT64_MIN) {
            vt_stack *st;
            if (vt_rd_stack_of(r, a.stack, where, &st) < 0) return -1;
        }
        VT_PUSH(r->rec.ae, r->rec.nae, r->rec.capae, a);
    }
    return 0;
}

static int rd_oom(vt_rd *r, const json_t *o, vt_rec_oom *m)
{
    json_t *v;
    const char *s;
    if (!o || json_is_null(o)) return 0;
    if (!json_is_object(o)) return vt_rd_fail(r, "snapshot.oom: expected an object or null, got %s", vt_jtype(o));
    m->present = 1;
    m->stack = -1;
    if ((v = json_object_get(o, "api"))) {
        if (!(s = vt_rd_str(r, v, "oom.api", VT_MAX_FIELD))) return -1;
        vt_display(m->api, sizeof m->api, s);
    }
    if ((v = json_object_get(o, "kind")) && vt_rd_kind(r, v, "oom.kind", &m->kind) < 0) return -1;
    if ((v = json_object_get(o, "device")) && vt_rd_device(r, v, "oom.device", &m->device) < 0) return -1;
    if (!(v = json_object_get(o, "requested_bytes"))) return vt_rd_fail(r, "oom: has no \"requested_bytes\"");
    if (vt_rd_u64(r, v, "oom.requested_bytes", &m->requested) < 0) return -1;
    if ((v = json_object_get(o, "result")) && vt_rd_i64(r, v, "oom.result", &m->result) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(o, "free_bytes"), "oom.free_bytes", &m->free_b, &m->has_free) < 0 ||
        vt_rd_u64n(r, json_object_get(o, "total_bytes"), "oom.total_bytes", &m->total_b, &m->has_total) < 0 ||
        vt_rd_u64n(r, json_object_get(o, "tracked_bytes"), "oom.tracked_bytes", &m->tracked, &m->has_tracked) < 0)
        return -1;
    if ((v = json_object_get(o, "stack")) && !json_is_null(v) && vt_rd_i64(r, v, "oom.stack", &m->stack) < 0) return -1;
    if (m->stack != -1) {
        vt_stack *st;
        if (vt_rd_stack_of(r, m->stack, "oom", &st) < 0) return -1;
    }
    return 0;
}

/* ---- leak_warnings: read leniently (a warning the preload printed; side data that
 * never makes a file unreadable): an entry that is not an object with a defined
 * stack, a known kind and a device is passed over ---- */

static void rd_livewarns(vt_process *p, uint64_t step, const json_t *a)
{
    size_t i;
    json_t *e;
    if (!json_is_array(a)) return;
    json_array_foreach(a, i, e) {
        json_t *st = json_object_get(e, "stack"), *kd = json_object_get(e, "kind"), *dv = json_object_get(e, "device");
        json_t *gs = json_object_get(e, "growth_steps"), *gb = json_object_get(e, "growth_bytes_per_step");
        if (!json_is_integer(st) || !json_is_string(kd) || !json_is_integer(dv)) continue;
        int kind = vt_kind_from_name(json_string_value(kd));
        json_int_t dev = json_integer_value(dv);
        if (kind < 0 || dev < -1 || dev > INT32_MAX || !vt_process_rawstack(p, json_integer_value(st))) continue;
        size_t k = 0;
        while (k < p->nlivewarns && !(p->livewarns[k].key.stack == json_integer_value(st) &&
                                      p->livewarns[k].key.kind == kind && p->livewarns[k].key.device == (int32_t)dev))
            k++;
        if (k < p->nlivewarns) continue;   /* warned once: the first record that named it */
        if (p->nlivewarns == VT_MAX_LIVEWARN) {
            p->livewarns_dropped++;   /* a site past the cap may be counted again: a bound, not a count */
            continue;
        }
        vt_livewarn w;
        memset(&w, 0, sizeof w);
        w.key.stack = json_integer_value(st);
        w.key.kind = kind;
        w.key.device = (int32_t)dev;
        w.step = step;
        w.growth_steps = json_is_integer(gs) && json_integer_value(gs) > 0 ? (uint64_t)json_integer_value(gs) : 0;
        w.growth_bytes_per_step = json_is_integer(gb) && json_integer_value(gb) > 0 ? (uint64_t)json_integer_value(gb) : 0;
        VT_PUSH(p->livewarns, p->nlivewarns, p->caplivewarns, w);
    }
}

/* ---- annotations (docs/snapshot-format.md "annotations") ---- */

static int annot_key_ok(const char *k)
{
    size_t n = 0;
    for (; k[n]; n++) {
        char c = k[n];
        if (n >= 63) return 0;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return 0;
    }
    return n > 0;
}

static int rd_annotations(vt_rd *r, const json_t *o)
{
    const char *k;
    json_t *v;
    if (!o || json_is_null(o)) return 0;
    if (!json_is_object(o)) return vt_rd_fail(r, "snapshot.annotations: expected an object, got %s", vt_jtype(o));
    json_object_foreach((json_t *)o, k, v) {
        vt_rec_annot e;
        if (!annot_key_ok(k))
            return vt_rd_fail(r, "annotations: key \"%.80s\" is not 1-63 bytes of [A-Za-z0-9_.:-]", k);
        if (vt_jf64(v, &e.value, r->e, sizeof r->e) < 0) return vt_rd_fail(r, "annotations.%s: %s", k, r->e);
        if (!isfinite(e.value)) return vt_rd_fail(r, "annotations.%s: not a finite number", k);
        e.key = k;
        VT_PUSH(r->rec.an, r->rec.nan, r->rec.capan, e);
    }
    return 0;
}

/* "exports":[[addr,"digest"],...] / "imports":[[addr,"digest",size,opens],...]
 * (docs/snapshot-format.md): absent or null is none; digest is 16 hex digits. */
static int rd_ipc(vt_rd *r, const json_t *a, const char *key, int imports)
{
    if (!a || json_is_null(a)) return 0;
    if (!json_is_array(a)) return vt_rd_fail(r, "snapshot.%s: expected an array, got %s", key, vt_jtype(a));
    size_t i;
    json_t *row;
    char f[96];
    json_array_foreach(a, i, row) {
        vt_ipc_row e = {0};
        size_t want = imports ? 4 : 2;
        snprintf(f, sizeof f, "%s[%zu]", key, i);
        if (!json_is_array(row) || json_array_size(row) < want)
            return vt_rd_fail(r, "%s: expected an array of %zu values", f, want);
        if (vt_rd_u64(r, json_array_get(row, 0), f, &e.addr) < 0) return -1;
        const char *hex = vt_rd_str(r, json_array_get(row, 1), f, 16);
        if (!hex) return -1;
        char *end = NULL;
        e.digest = strtoull(hex, &end, 16);
        if (!*hex || *end) return vt_rd_fail(r, "%s: digest \"%s\" is not hex digits", f, hex);
        if (imports && (vt_rd_u64(r, json_array_get(row, 2), f, &e.size) < 0 ||
                        vt_rd_u64(r, json_array_get(row, 3), f, &e.opens) < 0))
            return -1;
        if (imports) VT_PUSH(r->rec.ix, r->rec.nix, r->rec.capix, e);
        else VT_PUSH(r->rec.ex, r->rec.nex, r->rec.capex, e);
    }
    return 0;
}

/* One composition of "peak_composition" (docs/snapshot-format.md): bytes, step,
 * time_ns, sites [[site, bytes], ...] by site id (version 3 "site" records), other_bytes,
 * other_sites. where: "peak_composition.process" or "...devices[i]". */
static int rd_peak_one(vt_rd *r, const json_t *o, const char *where, vt_rec_peak *e)
{
    char f[96];
    int has;
    if (!json_is_object(o)) return vt_rd_fail(r, "%s: expected an object, got %s", where, vt_jtype(o));
    snprintf(f, sizeof f, "%s.bytes", where);
    if (vt_rd_u64(r, json_object_get(o, "bytes"), f, &e->bytes) < 0) return -1;
    snprintf(f, sizeof f, "%s.step", where);
    if (vt_rd_u64n(r, json_object_get(o, "step"), f, &e->step, &has) < 0) return -1;
    snprintf(f, sizeof f, "%s.time_ns", where);
    if (vt_rd_u64n(r, json_object_get(o, "time_ns"), f, &e->time_ns, &has) < 0) return -1;
    snprintf(f, sizeof f, "%s.other_bytes", where);
    if (vt_rd_u64n(r, json_object_get(o, "other_bytes"), f, &e->other_bytes, &has) < 0) return -1;
    snprintf(f, sizeof f, "%s.other_sites", where);
    if (vt_rd_u64n(r, json_object_get(o, "other_sites"), f, &e->other_sites, &has) < 0) return -1;
    const json_t *a = json_object_get(o, "sites");
    if (!json_is_array(a))
        return vt_rd_fail(r, "%s.sites: expected an array, got %s", where, a ? vt_jtype(a) : "nothing");
    if (json_array_size(a) > VT_PEAKCOMP_MAX)
        return vt_rd_fail(r, "%s.sites: more than %d sites", where, VT_PEAKCOMP_MAX);
    size_t i;
    json_t *row;
    e->n = 0;
    json_array_foreach(a, i, row) {
        int64_t id;
        snprintf(f, sizeof f, "%s.sites[%zu]", where, i);
        if (!json_is_array(row) || json_array_size(row) != 2)
            return vt_rd_fail(r, "%s: expected [site, bytes]", f);
        if (vt_rd_i64(r, json_array_get(row, 0), f, &id) < 0 ||
            vt_rd_u64(r, json_array_get(row, 1), f, &e->s[e->n].bytes) < 0)
            return -1;
        vt_site_def *d;
        HASH_FIND(hh, r->sdefs, &id, sizeof id, d);
        if (!d) return vt_rd_fail(r, "%s: site %lld is not defined before it is used", f, (long long)id);
        e->s[e->n].key = d->key;
        e->s[e->n].canon = d->canon;
        e->n++;
    }
    return 0;
}

/* "peak_composition":{"process":{...},"devices":[{"device":D,...}]}: absent is
 * "unchanged since the previous record"; files before version 3 have no site ids and
 * never carry it. */
static int rd_peaks(vt_rd *r, const json_t *o)
{
    if (!o || json_is_null(o)) return 0;
    if (r->version < 3) return 0;
    if (!json_is_object(o))
        return vt_rd_fail(r, "snapshot.peak_composition: expected an object, got %s", vt_jtype(o));
    const json_t *v = json_object_get(o, "process");
    if (v) {
        vt_rec_peak e;
        memset(&e, 0, sizeof e);
        e.process = 1;
        if (rd_peak_one(r, v, "peak_composition.process", &e) < 0) return -1;
        VT_PUSH(r->rec.pk, r->rec.npk, r->rec.cappk, e);
    }
    const json_t *a = json_object_get(o, "devices");
    if (!a) return 0;
    if (!json_is_array(a))
        return vt_rd_fail(r, "peak_composition.devices: expected an array, got %s", vt_jtype(a));
    size_t i;
    json_t *d;
    char f[96];
    json_array_foreach(a, i, d) {
        vt_rec_peak e;
        memset(&e, 0, sizeof e);
        snprintf(f, sizeof f, "peak_composition.devices[%zu]", i);
        if (!json_is_object(d)) return vt_rd_fail(r, "%s: expected an object, got %s", f, vt_jtype(d));
        char fd[112];
        snprintf(fd, sizeof fd, "%s.device", f);
        if (vt_rd_device(r, json_object_get(d, "device"), fd, &e.device) < 0) return -1;
        if (rd_peak_one(r, d, f, &e) < 0) return -1;
        VT_PUSH(r->rec.pk, r->rec.npk, r->rec.cappk, e);
    }
    return 0;
}

/* ---- format versions 2 and 3: completion of delta records ---- */

/* Version 3 delta record: e's columns are differences; adds the site's row in the
 * previous snapshot record (0 when that record had no row for it). A result below
 * 0 or above 2^63-1 is an error naming the column. */
static int add_previous_row(vt_rd *r, size_t i, vt_rec_site *e, const vt_rsite *s, uint64_t ord)
{
    static const int order3[8] = VT_SITE3_ORDER;
    int have = s->row_mark != 0 && s->row_mark + 1 == ord;
    for (int j = 0; j < 8; j++) {   /* file column 1 + j */
        int k = order3[j] - VT_SITE_LIVE_BYTES;
        uint64_t base = have ? s->row[k] : 0;
        int64_t d = (int64_t)e->row[k];
        uint64_t v = base + (uint64_t)d;
        int below = d < 0 && (uint64_t)0 - (uint64_t)d > base;
        if (below || v > (uint64_t)INT64_MAX)
            return vt_rd_fail(r, "sites[%zu][%d] (%s): the difference %lld %s (the previous snapshot's row has %llu)",
                           i, j + 1, site_col3((size_t)j + 1), (long long)d,
                           below ? "takes the value below 0" : "takes the value above 2^63-1",
                           (unsigned long long)base);
        e->row[k] = v;
    }
    e->live = e->row[VT_SITE_LIVE_BYTES - VT_SITE_LIVE_BYTES];
    e->ipeak = e->row[VT_SITE_INTERVAL_PEAK_BYTES - VT_SITE_LIVE_BYTES];
    e->free_total = e->row[VT_SITE_FREE_TOTAL - VT_SITE_LIVE_BYTES];
    return 0;
}

/* Version 2: rejects a site listed twice in one record; for a delta record
 * ("sites_delta":true) adds every site of the previous record with live bytes > 0
 * that the record does not list, with its previous values (see the top of the
 * file). Creates the listed sites (empty) to mark them; nothing else changes. */
static int rd_complete_sites(vt_rd *r, int delta)
{
    uint64_t ord = ++r->nrecord;
    if (delta && !r->have_prev)
        return vt_rd_fail(r, "snapshot has \"sites_delta\":true but no snapshot comes before it in this file "
                       "(a delta needs the previous snapshot's sites)");
    size_t nlisted = r->rec.nse;
    for (size_t i = 0; i < nlisted; i++) {
        vt_rec_site *e = &r->rec.se[i];
        vt_rsite *s = e->site ? e->site : vt_process_site(r->p, &e->key, e->canon);
        if (s->delta_mark == ord)
            return vt_rd_fail(r, "sites[%zu]: site (stack %lld, kind %s, device %d) is listed twice in one snapshot",
                           i, (long long)e->key.stack, vt_kind_name(e->key.kind), (int)e->key.device);
        s->delta_mark = ord;
        e->site = s;
        if (delta && r->version >= VT_FORMAT_DELTA_ROWS && add_previous_row(r, i, e, s, ord) < 0)
            return -1;
    }
    if (!delta) return 0;
    for (size_t i = 0; i < r->nprev; i++) {
        if (r->prev[i].site->delta_mark == ord) continue;   /* listed: its new row counts */
        VT_PUSH(r->rec.se, r->rec.nse, r->rec.capse, r->prev[i]);
    }
    return 0;
}

/* Version 2: the record's (completed) sites with live bytes > 0 become the state a
 * following delta record is completed from. */
static void keep_prev(vt_rd *r)
{
    r->nprev = 0;
    for (size_t i = 0; i < r->rec.nse; i++) {
        vt_rec_site *e = &r->rec.se[i];
        if (e->live) VT_PUSH(r->prev, r->nprev, r->capprev, *e);
        /* version 3: the row a following delta record's differences start from */
        memcpy(e->site->row, e->row, sizeof e->row);
        e->site->row_mark = r->nrecord;
    }
    r->have_prev = 1;
}

/* ---- the record ---- */

int vt_rd_snapshot(vt_rd *r, json_t *o)
{
    vt_process *p = r->p;
    vt_snaprec *rec = &r->rec;
    int has, unfreed = 0;
    json_t *v;
    const char *s;
    vt_snaprec_clear(rec);
    int v4 = r->version >= VT_FORMAT_CARRY;
    /* version 4: a delta record's left-out keys are the previous record's (seq + 1) */
    int delta = 0;
    if (r->version >= 2 && (v = json_object_get(o, VT_SITES_DELTA_KEY)) &&
        vt_rd_bool(r, v, "snapshot." VT_SITES_DELTA_KEY, &delta) < 0)
        return -1;
    int carry = v4 && delta;
    if (carry) {
        rec->seq = r->last_seq + 1;
        rec->dropped = r->last_dropped;
        rec->step_marked = r->last_step_marked;
    }
    if (!(v = json_object_get(o, "step"))) return vt_rd_fail(r, "snapshot has no \"step\"");
    if (vt_rd_u64(r, v, "snapshot.step", &rec->step) < 0) return -1;
    if ((v = json_object_get(o, "seq")) && vt_rd_u64n(r, v, "snapshot.seq", &rec->seq, &has) < 0) return -1;
    if (vt_rd_u64n(r, json_object_get(o, "time_ns"), "snapshot.time_ns", &rec->time_ns, &has) < 0) return -1;
    if ((v = json_object_get(o, "dropped_records")) &&
        vt_rd_u64n(r, v, "snapshot.dropped_records", &rec->dropped, &has) < 0)
        return -1;
    if ((v = json_object_get(o, "nvtx_marks_not_written")) &&   /* optional, exit records */
        vt_rd_u64(r, v, "snapshot.nvtx_marks_not_written", &rec->marks_not_written) < 0)
        return -1;
    if ((v = json_object_get(o, "trigger"))) {
        if (!(s = vt_rd_str(r, v, "snapshot.trigger", 31))) return -1;
        vt_strlcpy(rec->trigger, sizeof rec->trigger, s);
    }
    if ((v = json_object_get(o, "label")) && !json_is_null(v)) {
        if (!(s = vt_rd_str(r, v, "snapshot.label", 4096))) return -1;
        rec->label = vt_xstrdup(s);
    }
    if ((v = json_object_get(o, "step_marked")) && vt_rd_bool(r, v, "snapshot.step_marked", &rec->step_marked) < 0)
        return -1;
    if ((v = json_object_get(o, "unfreed_at_exit")) && vt_rd_bool(r, v, "snapshot.unfreed_at_exit", &unfreed) < 0)
        return -1;
    if (!(v = json_object_get(o, "sites"))) return vt_rd_fail(r, "snapshot has no \"sites\"");
    if (rd_sites(r, v, delta) < 0) return -1;
    if (r->version >= 2 && rd_complete_sites(r, delta) < 0) return -1;
    if (v4 ? vt_rd_devices4(r, json_object_get(o, "devices"), delta) < 0
           : rd_devices(r, json_object_get(o, "devices")) < 0)
        return -1;
    if (rd_oom(r, json_object_get(o, "oom"), &rec->oom) < 0) return -1;
    if (rd_allocations(r, json_object_get(o, "allocations"), &rec->have_allocs) < 0) return -1;
    if (rd_annotations(r, json_object_get(o, "annotations")) < 0) return -1;
    if (v4) vt_rd_annotations4(r, delta);
    if (rd_ipc(r, json_object_get(o, "exports"), "exports", 0) < 0 ||
        rd_ipc(r, json_object_get(o, "imports"), "imports", 1) < 0)
        return -1;
    if ((v = json_object_get(o, "summarised")) && vt_rd_bool(r, v, "snapshot.summarised", &rec->summarised) < 0)
        return -1;
    if (v4) vt_rd_ipc4(r, delta, json_object_get(o, "exports") != NULL, json_object_get(o, "imports") != NULL);
    if (rd_peaks(r, json_object_get(o, "peak_composition")) < 0) return -1;
    rec->is_exit = unfreed || strcmp(rec->trigger, VT_TRIGGER_EXIT) == 0;
    if (!rec->is_exit && !rec->summarised && p->nsteps_real && rec->step < p->last_step)
        return vt_rd_fail(r, "snapshot step %llu comes after step %llu (steps must not go backwards)",
                          (unsigned long long)rec->step, (unsigned long long)p->last_step);

    size_t newkeys = 0;
    for (size_t i = 0; i < rec->nan; i++) {
        if (i < p->nannots && !strcmp(p->annots[i].key, rec->an[i].key)) continue;   /* the usual case */
        size_t k = 0;
        while (k < p->nannots && strcmp(p->annots[k].key, rec->an[i].key)) k++;
        if (k == p->nannots) newkeys++;
    }
    if (p->nannots + newkeys > VT_MAX_ANNOT)
        return vt_rd_fail(r, "annotations: more than %d distinct keys in one process", VT_MAX_ANNOT);

    /* apply: nothing above changed the process (but for new empty sites) */
    if (r->version >= 2) keep_prev(r);
    r->last_seq = rec->seq;
    r->last_dropped = rec->dropped;
    r->last_step_marked = rec->step_marked;
    vt_fold_snapshot(p, rec, r->rs->keep_allocs);
    vt_hostsig_read(&p->hostsig, json_object_get(o, "host"));   /* lenient: cannot fail */
    rd_livewarns(p, rec->step, json_object_get(o, "leak_warnings"));   /* lenient too */
    return 0;
}
