/* vt_hostsig.c — lenient reader and warnings for the "host" snapshot key
 * (contract in vt_hostsig.h).
 *
 * Design: each snapshot's values update first/last/max per counter; GPUs are a
 * small array matched by UUID (else NVML index), at most VT_MAX_GPUS.
 */
#include "vt_hostsig.h"
#include "vt_display.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vt_util.h"

static const char *const hc_names[VT_HC_N] = {
    "ecc_volatile_corrected", "ecc_volatile_uncorrected", "ecc_aggregate_corrected", "ecc_aggregate_uncorrected",
    "retired_pages_single_bit", "retired_pages_double_bit", "remapped_rows_corrected", "remapped_rows_uncorrected"};
static const char *const hc_texts[VT_HC_N] = {
    "ECC volatile single-bit (corrected)", "ECC volatile double-bit (uncorrected)",
    "ECC aggregate single-bit (corrected)", "ECC aggregate double-bit (uncorrected)",
    "retired pages (single-bit)", "retired pages (double-bit)",
    "remapped rows (corrected)", "remapped rows (uncorrected)"};

const char *vt_hc_name(int c)
{
    return c >= 0 && c < VT_HC_N ? hc_names[c] : "?";
}

/* A non-negative JSON integer, else "not known". */
static int num(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0) return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static void count(vt_hcount *c, const json_t *v)
{
    uint64_t x;
    if (!num(v, &x)) return;
    if (!c->known) {
        c->known = 1;
        c->first = c->max = x;
    }
    c->last = x;
    if (x > c->max) c->max = x;
}

static void flag(int *first, int *last, const json_t *v)
{
    if (!json_is_boolean(v)) return;
    int b = json_is_true(v);
    if (*first < 0) *first = b;
    *last = b;
}


static vt_gpu_health *gpu_for(vt_host *h, const json_t *d)
{
    const json_t *u = json_object_get(d, "uuid");
    char uuid[sizeof ((vt_gpu_health *)0)->uuid];   /* its display form (vt_display.h), cut whole */
    vt_display(uuid, sizeof uuid, json_is_string(u) ? json_string_value(u) : "");
    uint64_t x;
    int64_t index = num(json_object_get(d, "index"), &x) && x <= INT32_MAX ? (int64_t)x : -1;
    if (!uuid[0] && index < 0) return NULL;   /* nothing to match it by */
    for (size_t i = 0; i < h->ngpus; i++) {
        vt_gpu_health *g = &h->gpus[i];
        if (uuid[0] ? strcmp(g->uuid, uuid) == 0 : (!g->uuid[0] && g->index == index)) return g;
    }
    if (h->ngpus >= VT_MAX_GPUS) return NULL;
    vt_gpu_health g;
    memset(&g, 0, sizeof g);
    memcpy(g.uuid, uuid, sizeof g.uuid);
    g.index = index;
    g.device = -1;
    g.pending_first = g.pending_last = g.failure_first = g.failure_last = -1;
    VT_PUSH(h->gpus, h->ngpus, h->capgpus, g);
    return &h->gpus[h->ngpus - 1];
}

void vt_hostsig_read(vt_host *h, const json_t *host)
{
    if (!json_is_object(host)) return;
    h->present = 1;
    count(&h->rss, json_object_get(host, "rss_bytes"));
    count(&h->rss_peak, json_object_get(host, "rss_peak_bytes"));
    count(&h->swap, json_object_get(host, "swap_bytes"));
    const json_t *cg = json_object_get(host, "cgroup");
    if (json_is_object(cg)) {
        uint64_t v;
        if (!h->has_cgroup) h->cg_version = -1;
        h->has_cgroup = 1;
        if (num(json_object_get(cg, "version"), &v) && v <= 2) h->cg_version = (int64_t)v;
        const json_t *path = json_object_get(cg, "path");
        if (json_is_string(path)) vt_display(h->cg_path, sizeof h->cg_path, json_string_value(path));
        count(&h->cg_oom, json_object_get(cg, "oom"));
        count(&h->cg_oom_kill, json_object_get(cg, "oom_kill"));
        count(&h->cg_current, json_object_get(cg, "memory_current_bytes"));
        count(&h->cg_max, json_object_get(cg, "memory_max_bytes"));
    }
    const json_t *nvml = json_object_get(host, "nvml");
    const json_t *devs = json_is_object(nvml) ? json_object_get(nvml, "devices") : NULL;
    if (!json_is_array(devs)) return;
    size_t i;
    const json_t *d;
    json_array_foreach(devs, i, d) {
        if (!json_is_object(d)) continue;
        vt_gpu_health *g = gpu_for(h, d);
        if (!g) continue;
        uint64_t x;
        if (num(json_object_get(d, "device"), &x) && x <= INT32_MAX) g->device = (int64_t)x;
        count(&g->used, json_object_get(d, "used_bytes"));
        count(&g->total, json_object_get(d, "total_bytes"));
        count(&g->process_used, json_object_get(d, "process_used_bytes"));
        for (int c = 0; c < VT_HC_N; c++) count(&g->c[c], json_object_get(d, hc_names[c]));
        flag(&g->pending_first, &g->pending_last, json_object_get(d, "remapped_rows_pending"));
        flag(&g->failure_first, &g->failure_last, json_object_get(d, "remapped_rows_failure"));
    }
}

/* Appends printf text to buf (cap bytes, truncating). */
static void put(char *buf, size_t cap, size_t *o, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *o, cap - *o, fmt, ap);
    va_end(ap);
    if (w > 0) *o = *o + (size_t)w >= cap ? cap - 1 : *o + (size_t)w;
}

static int rose(const vt_hcount *c)
{
    return c->known && c->last > c->first;
}

size_t vt_hostsig_warnings(const vt_host *h, void (*line)(void *ctx, const char *text), void *ctx)
{
    char buf[1024];
    size_t n = 0;
    for (size_t i = 0; i < h->ngpus; i++) {
        const vt_gpu_health *g = &h->gpus[i];
        size_t o = 0;
        int parts = 0;
        if (g->device >= 0) put(buf, sizeof buf, &o, "GPU %" PRId64, g->device);
        else put(buf, sizeof buf, &o, "NVML device %" PRId64, g->index);
        if (g->uuid[0]) put(buf, sizeof buf, &o, " (%s)", g->uuid);
        put(buf, sizeof buf, &o, ": memory errors during the run:");
        for (int c = 0; c < VT_HC_N; c++)
            if (rose(&g->c[c]))
                put(buf, sizeof buf, &o, "%s %s %" PRIu64 " -> %" PRIu64, parts++ ? "," : "", hc_texts[c], g->c[c].first,
                    g->c[c].last);
        if (g->pending_last == 1)
            put(buf, sizeof buf, &o, "%s remapped rows pending%s", parts++ ? "," : "",
                g->pending_first == 1 ? " (already at the first snapshot)" : " (became true)");
        if (g->failure_last == 1)
            put(buf, sizeof buf, &o, "%s row remapping failed%s", parts++ ? "," : "",
                g->failure_first == 1 ? " (already at the first snapshot)" : " (became true)");
        if (!parts) continue;
        line(ctx, buf);
        n++;
    }
    if (h->has_cgroup && (rose(&h->cg_oom) || rose(&h->cg_oom_kill))) {
        size_t o = 0;
        put(buf, sizeof buf, &o, "memory cgroup %s: out-of-memory events during the run:", h->cg_path[0] ? h->cg_path : "?");
        if (rose(&h->cg_oom)) put(buf, sizeof buf, &o, " oom %" PRIu64 " -> %" PRIu64, h->cg_oom.first, h->cg_oom.last);
        if (rose(&h->cg_oom_kill))
            put(buf, sizeof buf, &o, "%s oom_kill %" PRIu64 " -> %" PRIu64, rose(&h->cg_oom) ? "," : "", h->cg_oom_kill.first,
                h->cg_oom_kill.last);
        line(ctx, buf);
        n++;
    }
    return n;
}
