/* vt_decode_summary.c — a "summary" record (docs/snapshot-format.md "summary"):
 * the steps a writer under VRAMTRACE_MAX_BYTES folded, per site and device, into
 * buckets of floor and peak. Each bucket is handed to the fold as one snapshot
 * record at the bucket's first step number (a site's live bytes = its floor, its
 * interval peak = its peak), so every later stage sees ordinary, coarser steps and
 * nothing below read/ knows about summaries (contract in vt_decode.h).
 */
#include "vt_decode.h"

#include <stdlib.h>
#include <string.h>

#include "vt_fold.h"
#include "vt_jline.h"
#include "vt_util.h"

/* o[key] as an array of n integers >= 0 into out (n entries). */
static int rd_u64_list(vt_rd *r, const json_t *a, size_t n, const char *what, uint64_t *out)
{
    if (!json_is_array(a)) return vt_rd_fail(r, "summary.%s: expected an array, got %s", what, vt_jtype(a));
    if (json_array_size(a) != n)
        return vt_rd_fail(r, "summary.%s: expected %zu values (one per bucket), got %zu", what, n, json_array_size(a));
    for (size_t i = 0; i < n; i++)
        if (vt_ju64(json_array_get(a, i), &out[i], r->e, sizeof r->e) < 0)
            return vt_rd_fail(r, "summary.%s[%zu]: %s", what, i, r->e);
    return 0;
}

/* One series row [id, [floor...], [peak...](, [frees...])]: ncols lists after the id. */
static int rd_series(vt_rd *r, const json_t *row, size_t i, const char *what, size_t nb, size_t ncols,
                     int64_t *id, uint64_t *cols)
{
    char f[64];
    if (!json_is_array(row) || json_array_size(row) != ncols + 1)
        return vt_rd_fail(r, "summary.%s[%zu]: expected [id, %zu lists], got %s", what, i, ncols,
                          json_is_array(row) ? "another length" : vt_jtype(row));
    if (vt_ji64(json_array_get(row, 0), id, r->e, sizeof r->e) < 0)
        return vt_rd_fail(r, "summary.%s[%zu][0]: %s", what, i, r->e);
    for (size_t c = 0; c < ncols; c++) {
        snprintf(f, sizeof f, "%s[%zu][%zu]", what, i, c + 1);
        if (rd_u64_list(r, json_array_get(row, c + 1), nb, f, cols + c * nb) < 0) return -1;
    }
    return 0;
}

int vt_rd_summary(vt_rd *r, json_t *o)
{
    vt_process *p = r->p;
    json_t *v;
    uint64_t records = 0, last = 0, max_bytes = 0;
    int has;
    if (vt_rd_u64n(r, json_object_get(o, "records"), "summary.records", &records, &has) < 0 ||
        vt_rd_u64n(r, json_object_get(o, "last_step"), "summary.last_step", &last, &has) < 0 ||
        vt_rd_u64n(r, json_object_get(o, "max_bytes"), "summary.max_bytes", &max_bytes, &has) < 0)
        return -1;
    const json_t *steps = json_object_get(o, "steps");
    if (!json_is_array(steps)) return vt_rd_fail(r, "summary.steps: expected an array, got %s", vt_jtype(steps));
    size_t nb = json_array_size(steps);
    if (!nb) return 0;
    uint64_t *step = vt_xmalloc(nb * sizeof *step), *tns = vt_xcalloc(nb, sizeof *tns);
    const json_t *sites = json_object_get(o, "sites"), *devs = json_object_get(o, "devices");
    size_t ns = json_is_array(sites) ? json_array_size(sites) : 0, nd = json_is_array(devs) ? json_array_size(devs) : 0;
    uint64_t *sv = vt_xmalloc((ns ? ns : 1) * 3 * nb * sizeof *sv), *dv = vt_xmalloc((nd ? nd : 1) * 2 * nb * sizeof *dv);
    vt_site_def **sd = vt_xcalloc(ns ? ns : 1, sizeof *sd);
    int64_t *did = vt_xcalloc(nd ? nd : 1, sizeof *did);
    int rc = -1;
    if (rd_u64_list(r, steps, nb, "steps", step) < 0) goto out;
    if ((v = json_object_get(o, "time_ns")) && rd_u64_list(r, v, nb, "time_ns", tns) < 0) goto out;
    for (size_t i = 1; i < nb; i++)
        if (step[i] <= step[i - 1]) {
            vt_rd_fail(r, "summary.steps[%zu]: %llu after %llu (bucket steps must increase)", i,
                       (unsigned long long)step[i], (unsigned long long)step[i - 1]);
            goto out;
        }
    if (p->nsteps && step[0] < p->steps[p->nsteps - 1]) {
        vt_rd_fail(r, "summary step %llu comes after step %llu (steps must not go backwards)",
                   (unsigned long long)step[0], (unsigned long long)p->steps[p->nsteps - 1]);
        goto out;
    }
    if (json_object_get(o, "last_step") && last < step[nb - 1]) {
        vt_rd_fail(r, "summary.last_step: %llu before the last bucket's step %llu", (unsigned long long)last,
                   (unsigned long long)step[nb - 1]);
        goto out;
    }
    if (json_object_get(o, "records") && records < nb) {
        vt_rd_fail(r, "summary.records: %llu, fewer than its %zu buckets", (unsigned long long)records, nb);
        goto out;
    }
    if ((v = json_object_get(o, "width"))) {
        uint64_t width;
        if (vt_rd_u64(r, v, "summary.width", &width) < 0) goto out;
        if (!width) { vt_rd_fail(r, "summary.width: 0 (a bucket holds at least one step)"); goto out; }
    }
    if (sites && !json_is_array(sites)) { vt_rd_fail(r, "summary.sites: expected an array, got %s", vt_jtype(sites)); goto out; }
    if (devs && !json_is_array(devs)) { vt_rd_fail(r, "summary.devices: expected an array, got %s", vt_jtype(devs)); goto out; }
    for (size_t i = 0; i < ns; i++) {
        int64_t id;
        if (rd_series(r, json_array_get(sites, i), i, "sites", nb, 3, &id, sv + i * 3 * nb) < 0) goto out;
        HASH_FIND(hh, r->sdefs, &id, sizeof id, sd[i]);
        if (!sd[i]) { vt_rd_fail(r, "summary.sites[%zu][0] (site): site %lld is not defined before it is used", i, (long long)id); goto out; }
        for (size_t k = 0; k < i; k++)
            if (sd[k] == sd[i]) { vt_rd_fail(r, "summary.sites[%zu][0] (site): site %lld is listed twice", i, (long long)id); goto out; }
        for (size_t b = 0; b < nb; b++)
            if (sv[i * 3 * nb + b] > sv[i * 3 * nb + nb + b]) {
                vt_rd_fail(r, "summary.sites[%zu]: bucket %zu's floor %llu is above its peak %llu", i, b,
                           (unsigned long long)sv[i * 3 * nb + b], (unsigned long long)sv[i * 3 * nb + nb + b]);
                goto out;
            }
    }
    for (size_t i = 0; i < nd; i++) {
        if (rd_series(r, json_array_get(devs, i), i, "devices", nb, 2, &did[i], dv + i * 2 * nb) < 0) goto out;
        if (vt_rd_device_ok(r, did[i], "summary.devices[][0]") < 0) goto out;
    }
    /* apply: one record per bucket */
    vt_snaprec *rec = &r->rec;
    for (size_t b = 0; b < nb; b++) {
        vt_snaprec_clear(rec);
        rec->step = step[b];
        rec->time_ns = tns[b];
        vt_strlcpy(rec->trigger, sizeof rec->trigger, "summary");
        for (size_t i = 0; i < ns; i++) {
            const uint64_t *c = sv + i * 3 * nb;
            uint64_t floor = c[b], peak = c[nb + b], frees = c[2 * nb + b];
            if (!floor && !peak && (b == 0 ? !frees : frees == c[2 * nb + b - 1])) continue;
            vt_rec_site e;
            memset(&e, 0, sizeof e);
            e.key = sd[i]->key;
            e.canon = sd[i]->canon;
            e.live = floor;
            e.ipeak = peak;
            e.free_total = frees;
            VT_PUSH(rec->se, rec->nse, rec->capse, e);
        }
        for (size_t i = 0; i < nd; i++) {
            vt_rec_dev d;
            memset(&d, 0, sizeof d);
            d.device = did[i];
            d.live = dv[i * 2 * nb + b];
            d.peak = dv[i * 2 * nb + nb + b];
            VT_PUSH(rec->de, rec->nde, rec->capde, d);
        }
        vt_fold_snapshot(p, rec, 0);
    }
    vt_snaprec_clear(rec);
    p->has_summary = 1;
    p->summary_first = step[0];
    p->summary_last = last > step[nb - 1] ? last : step[nb - 1];
    p->summary_buckets = (uint32_t)nb;
    p->summary_records = records;
    p->summary_max_bytes = max_bytes;
    rc = 0;
out:
    free(step);
    free(tns);
    free(sv);
    free(dv);
    free(sd);
    free(did);
    return rc;
}
