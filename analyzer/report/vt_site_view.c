/* vt_site_view.c — how a site is presented (contract in vt_site_view.h). */
#include "vt_site_view.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vt_format.h"
#include "vt_size.h"

const vt_sym *vt_site_frame(vt_analysis *a, const vt_site_result *r, uint32_t i)
{
    const vt_stack *st = r->stack;
    if (i >= st->nview) return NULL;
    int32_t v = st->view[i];
    return v >= 0 ? vt_sym_frame_at(a->sym, &st->frames[VT_VIEW_NATIVE(v)], VT_VIEW_DEPTH(v))
                  : vt_sym_pyframe(a->sym, &st->py[-1 - v]);
}

uint32_t vt_site_nframes(const vt_site_result *r)
{
    return r->stack->nview;
}

uint32_t vt_site_title_index(const vt_site_result *r)
{
    return r->stack->title < r->stack->nview ? r->stack->title : 0;
}

const char *vt_site_title(vt_analysis *a, const vt_site_result *r)
{
    if (r->title) return r->title;
    const vt_sym *s = vt_site_frame(a, r, vt_site_title_index(r));
    return s ? s->label : "(no frames)";
}

static uint64_t nonneg(double v)
{
    return v > 0 ? (v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v) : 0;
}

int vt_torch_line(const vt_device *dv, char *buf, size_t cap)
{
    char b1[32], b2[32];
    size_t o = 0;
    buf[0] = 0;
    if (!dv->has_torch) return 0;
#define PUT(...) do { int w_ = snprintf(buf + o, cap - o, __VA_ARGS__); if (w_ > 0) o = o + (size_t)w_ >= cap ? cap - 1 : o + (size_t)w_; } while (0)
    PUT("PyTorch");
    if (dv->has_torch & VT_TORCH_ALLOCATED) PUT(" allocated %s", vt_size_fmt(nonneg(dv->torch_allocated), b1, sizeof b1));
    if (dv->has_torch & VT_TORCH_RESERVED)
        PUT("%s reserved %s", dv->has_torch & VT_TORCH_ALLOCATED ? "," : "", vt_size_fmt(nonneg(dv->torch_reserved), b1, sizeof b1));
    if ((dv->has_torch & (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) == (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED))
        PUT(": %s reserved but not allocated (max %s)", vt_size_fmt(nonneg(dv->torch_reserved - dv->torch_allocated), b1, sizeof b1),
            vt_size_fmt(nonneg(dv->torch_cached_max), b2, sizeof b2));
    if (dv->has_torch & VT_TORCH_INACTIVE_SPLIT)
        PUT("%s inactive split %s", (dv->has_torch & (VT_TORCH_ALLOCATED | VT_TORCH_RESERVED)) ? "," : "",
            vt_size_fmt(nonneg(dv->torch_inactive_split), b1, sizeof b1));
    PUT("; the driver saw %s live", vt_size_fmt(dv->live_bytes, b1, sizeof b1));
#undef PUT
    return 1;
}

char *vt_sparkline(const uint64_t *v, size_t n, size_t width, char *buf, size_t cap)
{
    static const char *const bars[8] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
    size_t cells = n < width ? n : width, o = 0;
    uint64_t mx = 0;
    for (size_t i = 0; i < n; i++) if (v[i] > mx) mx = v[i];
    buf[0] = 0;
    for (size_t c = 0; c < cells && o + 4 < cap; c++) {
        size_t b = c * n / cells, e = (c + 1) * n / cells;
        uint64_t m = 0;
        for (size_t i = b; i < e; i++) if (v[i] > m) m = v[i];
        int lvl = mx ? (int)((double)m / (double)mx * 7.0 + 0.5) : 0;
        memcpy(buf + o, bars[lvl], 3);
        o += 3;
    }
    buf[o] = 0;
    return buf;
}

size_t vt_peak_parts(const vt_proc_result *pr, const vt_peakcomp *pc, vt_peak_part *out)
{
    size_t n = 0;
    for (size_t i = 0; pc && pc->present && i < pc->n; i++) {
        vt_site_result *r = vt_result_of(pr, pc->s[i].site);
        size_t k = 0;
        while (k < n && !(r && out[k].r == r)) k++;
        if (k == n) out[n++] = (vt_peak_part){r, 0};
        out[k].bytes += pc->s[i].bytes;
    }
    for (size_t i = 1; i < n; i++)   /* insertion sort, bytes descending (stable) */
        for (size_t k = i; k > 0 && out[k].bytes > out[k - 1].bytes; k--) {
            vt_peak_part t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

int vt_peak_line(vt_analysis *a, const vt_proc_result *pr, const vt_peakcomp *pc, size_t most, char *buf,
                 size_t cap)
{
    buf[0] = 0;
    if (!pc || !pc->present) return 0;
    vt_peak_part parts[VT_PEAKCOMP_MAX];
    size_t n = vt_peak_parts(pr, pc, parts);
    char b1[32];
    size_t len = vt_process_no_steps(pr->p)   /* no step to name */
                     ? (size_t)snprintf(buf, cap, "at the peak (%s):", vt_size_fmt(pc->bytes, b1, sizeof b1))
                     : (size_t)snprintf(buf, cap, "at the peak (%s, during step %llu):",
                                        vt_size_fmt(pc->bytes, b1, sizeof b1), (unsigned long long)pc->step);
    uint64_t rest = pc->other_bytes, nrest = pc->other_sites;
    for (size_t i = 0; i < n; i++) {
        if (i >= most) {
            rest += parts[i].bytes;
            nrest++;
            continue;
        }
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s %s %s", i ? "," : "",
                                    vt_size_fmt(parts[i].bytes, b1, sizeof b1),
                                    parts[i].r ? vt_site_title(a, parts[i].r) : "(a site not listed)");
    }
    if (nrest && len < cap)
        snprintf(buf + len, cap - len, "%s %s in %llu other site%s", n ? "," : "", vt_size_fmt(rest, b1, sizeof b1),
                 (unsigned long long)nrest, nrest == 1 ? "" : "s");
    return 1;
}

int vt_site_never_held(const vt_site_result *r)
{
    return r->st.verdict == VT_STABLE && !r->peak_bytes && !r->unfreed_exit;
}

size_t vt_sites_listed(const vt_proc_result *pr, vt_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; i < pr->nsites; i++)
        n += pr->sites[i].st.verdict == v && (pr->sites[i].peak_bytes || pr->sites[i].unfreed_exit);
    return n;
}

int vt_process_no_steps(const vt_process *p)
{
    return p->nsteps == 0;
}

uint64_t vt_during_step(uint64_t rec_step)
{
    return rec_step == UINT64_MAX ? rec_step : rec_step + 1;
}

const char *vt_site_verdict_label(const vt_proc_result *pr, const vt_site_result *r)
{
    if (r->st.verdict == VT_TOO_FEW && vt_process_no_steps(pr->p)) return VT_NO_STEPS_LABEL;
    return vt_verdict_label(r->st.verdict);
}

int vt_step_range_unmatched(const vt_process *p, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!p->step_range || p->step_marked) return 0;
    snprintf(buf, cap, "--step-range %s never matched an NVTX range (0 range ends seen), so no step was marked and "
             "steps were cut by the snapshot interval; name the range the program opens once per step "
             "(nvtxRangePush, nvtxRangeStart or a framework's step range)", p->step_range);
    return 1;
}

const char *vt_steps_how(const vt_process *p, char *buf, size_t cap)
{
    if (!p->step_marked && p->step_range)
        snprintf(buf, cap, "cut by the snapshot interval: --step-range %s matched no range", p->step_range);
    else if (!p->step_marked)
        snprintf(buf, cap, "cut by the snapshot interval");
    else if (p->step_range)
        snprintf(buf, cap, "marked by NVTX ranges %s", p->step_range);
    else
        snprintf(buf, cap, "marked by vramtrace_step");
    return buf;
}

const char *vt_growth_since(const vt_site_stats *st, int lead, char *buf, size_t cap)
{
    const char *l = lead ? "floor first rose at " : "";
    if (!st->has_first_growth)
        snprintf(buf, cap, "%s", "");
    else if (st->first_growth_in_warmup)
        snprintf(buf, cap, "%sstep %" PRIu64 " (during warm-up; judged from step %" PRIu64 ")", l,
                 st->first_growth_step, st->judged_from_step);
    else
        snprintf(buf, cap, "%sstep %" PRIu64, l, st->first_growth_step);
    return buf;
}

const char *vt_leaked_since(const vt_site_stats *st, char *buf, size_t cap)
{
    snprintf(buf, cap, "since step %" PRIu64 " (%s)", st->base_step,
             st->warmup ? "the end of warm-up" : "its first step; no warm-up");
    return buf;
}

const char *vt_livewarn_text(vt_analysis *a, const vt_proc_result *pr, const vt_livewarn *w, char *buf, size_t cap)
{
    const vt_rsite *s, *t, *hit = NULL;
    HASH_ITER(hh, pr->p->sites, s, t)   /* the warning has no flags: any site of that stack, kind and device */
        if (s->key.stack == w->key.stack && s->key.kind == w->key.kind && s->key.device == w->key.device) {
            hit = s;
            break;
        }
    const vt_site_result *r = hit ? vt_result_of(pr, hit) : NULL;
    char rate[32], title[64];
    if (!r) snprintf(title, sizeof title, "stack %lld", (long long)w->key.stack);
    snprintf(buf, cap, "possible leak: %s growing %s/step (%" PRIu64 " steps in a row by step %" PRIu64 ") (%s, device %d)",
             r ? vt_site_title(a, r) : title, vt_size_fmt(w->growth_bytes_per_step, rate, sizeof rate),
             w->growth_steps, w->step, vt_kind_name(w->key.kind), (int)w->key.device);
    return buf;
}
