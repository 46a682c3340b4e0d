/* vt_decode_carry.c — format version 4: what a delta record leaves out is carried
 * forward from the previous snapshot record of the file (contract in vt_decode.h,
 * docs/snapshot-format.md "Version 4: what a delta record leaves out").
 *
 * Design: the decoder keeps, per file, the last state of every device (its figures
 * and, per kind, the three counters the analyzer sums) and every gauge. A complete
 * record (no "sites_delta": true) replaces that state with what it lists; a delta
 * record's keys overwrite it, one device key, kind figure or gauge at a time, and
 * whatever it leaves out stays. Either way the record handed to the fold lists every
 * device and gauge with its current value: exactly what a version 3 writer wrote in
 * every record, so nothing after the decoder knows about version 4.
 */
#include "vt_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_jline.h"
#include "vt_util.h"

/* The counters of a kind the analyzer sums over kinds (vt_rec_dev calls, failed, oom). */
static const char *const kc_keys[3] = {"alloc_total", "failed_total", "oom_total"};

static vt_rd_dev *carry_device(vt_rd *r, int64_t device)
{
    for (size_t i = 0; i < r->ndevs; i++)
        if (r->devs[i].d.device == device) return &r->devs[i];
    vt_rd_dev z;
    memset(&z, 0, sizeof z);
    z.d.device = device;
    VT_PUSH(r->devs, r->ndevs, r->capdevs, z);
    return &r->devs[r->ndevs - 1];
}

/* Optional u64 key k of o into *out and *has when present (null: *has = 0). */
static int key_u64n(vt_rd *r, const json_t *o, const char *k, size_t i, uint64_t *out, int *has)
{
    char f[96];
    const json_t *v = json_object_get(o, k);
    if (!v) return 0;
    return vt_rd_u64n(r, v, vt_rd_field(f, sizeof f, "devices", i, k), out, has);
}

/* Applies the keys device entry o lists onto its carried state st. */
static int apply_device(vt_rd *r, const json_t *o, size_t i, vt_rd_dev *st)
{
    char f[160];
    vt_rec_dev *d = &st->d;
    int has;
    if (key_u64n(r, o, "free_bytes", i, &d->free_b, &d->has_free) < 0 ||
        key_u64n(r, o, "total_bytes", i, &d->total_b, &d->has_total) < 0 ||
        key_u64n(r, o, "live_bytes", i, &d->live, &has) < 0 ||
        key_u64n(r, o, "peak_bytes", i, &d->peak, &has) < 0 ||
        key_u64n(r, o, "pool_reserved_bytes", i, &d->pool_r, &d->has_pool_r) < 0 ||
        key_u64n(r, o, "pool_used_bytes", i, &d->pool_u, &d->has_pool_u) < 0 ||
        key_u64n(r, o, "graph_reserved_bytes", i, &d->graph_r, &d->has_graph_r) < 0 ||
        key_u64n(r, o, "graph_used_bytes", i, &d->graph_u, &d->has_graph_u) < 0)
        return -1;
    const json_t *v = json_object_get(o, "fragmentation");
    if (v) {
        d->has_frag = 0;
        if (!json_is_null(v)) {
            vt_rd_field(f, sizeof f, "devices", i, "fragmentation");
            if (vt_jf64(v, &d->frag, r->e, sizeof r->e) < 0) return vt_rd_fail(r, "%s: %s", f, r->e);
            if (!(d->frag >= 0 && d->frag <= 1)) return vt_rd_fail(r, "%s: %g is outside 0..1", f, d->frag);
            d->has_frag = 1;
        }
    }
    const json_t *kinds = json_object_get(o, "kinds");
    if (kinds && !json_is_null(kinds)) {
        const char *kn;
        json_t *ko;
        if (!json_is_object(kinds))
            return vt_rd_fail(r, "devices[%zu].kinds: expected an object, got %s", i, vt_jtype(kinds));
        json_object_foreach((json_t *)kinds, kn, ko) {
            int k = vt_kind_from_name(kn);
            if (k < 0) return vt_rd_fail(r, "devices[%zu].kinds: unknown kind \"%.40s\"", i, kn);
            if (!json_is_object(ko))
                return vt_rd_fail(r, "devices[%zu].kinds.%.40s: expected an object, got %s", i, kn, vt_jtype(ko));
            for (int c = 0; c < 3; c++) {
                const json_t *cv = json_object_get(ko, kc_keys[c]);
                uint64_t u;
                if (!cv) continue;
                snprintf(f, sizeof f, "devices[%zu].kinds.%.40s.%s", i, kn, kc_keys[c]);
                if (vt_rd_u64n(r, cv, f, &u, &has) < 0) return -1;
                st->kc[k][c] = has ? u : 0;
                if (c == 2 && has) st->koom[k] = 1;
            }
        }
    }
    d->calls = d->failed = d->oom = 0;
    d->has_oom = 0;
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        d->calls = vt_sat_add(d->calls, st->kc[k][0]);
        d->failed = vt_sat_add(d->failed, st->kc[k][1]);
        d->oom = vt_sat_add(d->oom, st->kc[k][2]);
        d->has_oom |= st->koom[k];
    }
    return 0;
}

int vt_rd_devices4(vt_rd *r, const json_t *arr, int delta)
{
    char f[96];
    size_t i;
    json_t *o;
    if (!delta) r->ndevs = 0;   /* a complete record lists every device */
    if (arr && !json_is_null(arr)) {
        if (!json_is_array(arr))
            return vt_rd_fail(r, "snapshot.devices: expected an array, got %s", vt_jtype(arr));
        json_array_foreach(arr, i, o) {
            int64_t dev = 0;
            json_t *v;
            if (!json_is_object(o)) return vt_rd_fail(r, "devices[%zu]: expected an object, got %s", i, vt_jtype(o));
            if ((v = json_object_get(o, "device")) &&
                vt_rd_i64(r, v, vt_rd_field(f, sizeof f, "devices", i, "device"), &dev) < 0)
                return -1;
            if (vt_rd_device_ok(r, dev, vt_rd_field(f, sizeof f, "devices", i, "device")) < 0) return -1;
            if (apply_device(r, o, i, carry_device(r, dev)) < 0) return -1;
        }
    }
    for (i = 0; i < r->ndevs; i++) VT_PUSH(r->rec.de, r->rec.nde, r->rec.capde, r->devs[i].d);
    return 0;
}

void vt_rd_annotations4(vt_rd *r, int delta)
{
    if (!delta) {
        for (size_t k = 0; k < r->nakeys; k++) free(r->akeys[k]);
        r->nakeys = 0;
    }
    for (size_t i = 0; i < r->rec.nan; i++) {
        const vt_rec_annot *e = &r->rec.an[i];
        size_t k = 0;
        while (k < r->nakeys && strcmp(r->akeys[k], e->key)) k++;
        if (k == r->nakeys) {
            char *key = vt_xstrdup(e->key);
            VT_PUSH(r->akeys, r->nakeys, r->capakeys, key);
            vt_grow((void **)&r->avals, &r->capavals, r->nakeys, sizeof *r->avals);
        }
        r->avals[k] = e->value;
    }
    r->rec.nan = 0;
    for (size_t k = 0; k < r->nakeys; k++) {
        vt_rec_annot e = {r->akeys[k], r->avals[k]};
        VT_PUSH(r->rec.an, r->rec.nan, r->rec.capan, e);
    }
}

/* One IPC list: restored from the carried rows (*cv) when the record left it out,
 * else kept as carried for the next record. */
static void carry_rows(vt_ipc_row **rv, size_t *rn, size_t *rcap, vt_ipc_row **cv, size_t *cn, size_t *ccap,
                       int restore)
{
    vt_ipc_row **from = restore ? cv : rv, **to = restore ? rv : cv;
    size_t *nfrom = restore ? cn : rn, *nto = restore ? rn : cn, *capto = restore ? rcap : ccap;
    vt_grow((void **)to, capto, *nfrom ? *nfrom : 1, sizeof **to);
    if (*nfrom) memcpy(*to, *from, *nfrom * sizeof **to);
    *nto = *nfrom;
}

void vt_rd_ipc4(vt_rd *r, int delta, int has_exports, int has_imports)
{
    carry_rows(&r->rec.ex, &r->rec.nex, &r->rec.capex, &r->cex, &r->ncex, &r->capcex, delta && !has_exports);
    carry_rows(&r->rec.ix, &r->rec.nix, &r->rec.capix, &r->cix, &r->ncix, &r->capcix, delta && !has_imports);
}

void vt_rd_carry_release(vt_rd *r)
{
    free(r->cex);
    free(r->cix);
    r->cex = r->cix = NULL;
    r->ncex = r->capcex = r->ncix = r->capcix = 0;
    free(r->devs);
    r->devs = NULL;
    r->ndevs = r->capdevs = 0;
    for (size_t k = 0; k < r->nakeys; k++) free(r->akeys[k]);
    free(r->akeys);
    free(r->avals);
    r->akeys = NULL;
    r->avals = NULL;
    r->nakeys = r->capakeys = r->capavals = 0;
}
