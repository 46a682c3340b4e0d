/* vt_report_text.c — the default text report: one screen, biggest problems first.
 *
 * Order: with more than one process, a summary across them first (vt_ranks.h: a
 * leak or an out-of-memory site once with the processes it happens on, the largest
 * and smallest peak; at most SUMMARY_LIST lines each, so a 64-rank report's first
 * screen is the summary); then per process a header line and totals; then leaks (with a sparkline of
 * live bytes per step and the device exhaustion forecast), out-of-memory events,
 * unfreed at exit, churn, plateau, stable (summarised), devices. Each list is cut
 * at a few entries with "... and N more" so a run with thousands of sites still
 * fits a screen; `--format json` has everything.
 */
#include "vt_report.h"
#include "vt_trace_read.h"
#include "vt_display.h"
#include "vt_ranks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vt_allocators.h"
#include "vt_format.h"
#include "vt_hostsig.h"
#include "vt_size.h"
#include "vt_slots.h"

#define MAX_LIST 5
#define SUMMARY_LIST 10
#define SPARK_W 40

static const char *C_RED = "\033[1;31m", *C_YEL = "\033[33m", *C_BOLD = "\033[1m", *C_DIM = "\033[2m",
                  *C_OFF = "\033[0m";

/* max frames from the title on; frames inside the title (native frames of a
 * C extension called from Python) are summed up in one line first. */
static void frames(FILE *f, vt_analysis *a, const vt_site_result *r, const char *indent, uint32_t max, const char *dim,
                   const char *off)
{
    uint32_t n = vt_site_nframes(r), t = vt_site_title_index(r);
    if (!n) {
        fprintf(f, "%s(no frames)\n", indent);
        return;
    }
    if (t) fprintf(f, "%s%s(%u frame%s inside, innermost %s)%s\n", indent, dim, t, t == 1 ? "" : "s",
                   vt_site_frame(a, r, 0)->label, off);
    for (uint32_t i = t; i < n && i - t < max; i++)
        fprintf(f, "%s%s%s%s%s\n", indent, i > t ? "  " : "at ", i > t ? dim : "", vt_site_frame(a, r, i)->label,
                i > t ? off : "");
    if (n - t > max) fprintf(f, "%s  %s... %u more frame%s%s\n", indent, dim, n - t - max, n - t - max == 1 ? "" : "s", off);
}

static const char *top_label(vt_analysis *a, const vt_site_result *r)
{
    return vt_site_title(a, r);
}

typedef struct warn_ctx {
    FILE *f;
    const char *on, *off;
} warn_ctx;

static void warn_line(void *ctx, const char *text)
{
    const warn_ctx *w = ctx;
    fprintf(w->f, "   %swarning: %s%s\n", w->on, text, w->off);
}

static void host_text(FILE *f, const vt_host *h)
{
    char b1[32], b2[32];
    if (!h->present || (!h->rss.known && !h->swap.known && !h->has_cgroup)) return;
    fputs("  host:", f);
    const char *sep = " ";
    if (h->rss.known) {
        fprintf(f, "%sRSS %s (peak %s)", sep, vt_size_fmt(h->rss.last, b1, sizeof b1),
                vt_size_fmt(h->rss_peak.known ? h->rss_peak.max : h->rss.max, b2, sizeof b2));
        sep = ", ";
    }
    if (h->swap.known) {
        fprintf(f, "%sswap %s (max %s)", sep, vt_size_fmt(h->swap.last, b1, sizeof b1), vt_size_fmt(h->swap.max, b2, sizeof b2));
        sep = ", ";
    }
    if (h->has_cgroup) {
        fprintf(f, "%scgroup", sep);
        if (h->cg_version > 0) fprintf(f, " v%" PRId64, h->cg_version);
        if (h->cg_current.known) fprintf(f, " memory %s", vt_size_fmt(h->cg_current.last, b1, sizeof b1));
        if (h->cg_max.known) fprintf(f, " of %s", vt_size_fmt(h->cg_max.last, b2, sizeof b2));
        if (h->cg_oom.known) fprintf(f, ", oom %" PRIu64, h->cg_oom.last);
        if (h->cg_oom_kill.known) fprintf(f, ", oom_kill %" PRIu64, h->cg_oom_kill.last);
    }
    fputc('\n', f);
}

/* NVML's view of CUDA device dev: "NVML: 40.0 GiB of 140 GiB used on the GPU, 2.0 GiB
 * by this process (largest sample 2.5 GiB)". The preload reads NVML once per snapshot
 * interval (docs/snapshot-format.md "host"), so when the largest sample is below the
 * tracked peak (peak_bytes) the line says that the peak fell between samples: NVML's
 * figure also holds the CUDA context, so a sample below the peak is never the whole
 * story. */
static void nvml_text(FILE *f, const vt_host *h, int dev, uint64_t peak_bytes)
{
    char b1[32], b2[32];
    for (size_t i = 0; i < h->ngpus; i++) {
        const vt_gpu_health *g = &h->gpus[i];
        if (g->device != dev || (!g->used.known && !g->process_used.known)) continue;
        fputs("    NVML:", f);
        if (g->used.known)
            fprintf(f, " %s of %s used on the GPU", vt_size_fmt(g->used.last, b1, sizeof b1),
                    g->total.known ? vt_size_fmt(g->total.last, b2, sizeof b2) : "?");
        if (g->process_used.known)
        {
            fprintf(f, "%s%s by this process (largest sample %s", g->used.known ? ", " : " ",
                    vt_size_fmt(g->process_used.last, b1, sizeof b1), vt_size_fmt(g->process_used.max, b2, sizeof b2));
            if (g->process_used.max < peak_bytes)
                fputs("; sampled once per snapshot interval, below the tracked peak, which fell between samples", f);
            fputc(')', f);
        }
        fputc('\n', f);
    }
}

/* Failed allocation calls of a device (devices[].kinds failed_total / oom_total,
 * docs/snapshot-format.md): out-of-memory failures are reported as OOM events;
 * this line covers the others (e.g. cudaErrorNoDevice, cudaErrorInsufficientDriver)
 * and the case where no call succeeded at all (no GPU and no runtime). */
static void failed_text(FILE *f, const vt_device *dv, const char *red, const char *off)
{
    if (!dv->failed_calls) return;
    uint64_t oom = dv->oom_calls <= dv->failed_calls ? dv->oom_calls : dv->failed_calls;
    if (!dv->alloc_calls) {
        fprintf(f, "    %severy allocation call failed: %" PRIu64 " failed, none succeeded", red, dv->failed_calls);
        if (dv->has_oom_total)
            fprintf(f, " (%" PRIu64 " out of memory, %" PRIu64 " other error%s)", oom, dv->failed_calls - oom,
                    dv->failed_calls - oom == 1 ? "" : "s");
        fprintf(f, "; is there a GPU, and a CUDA runtime on the library path?%s\n", off);
    } else if (dv->has_oom_total && dv->failed_calls > oom) {
        fprintf(f, "    %s%" PRIu64 " allocation call%s failed with errors other than out-of-memory (%" PRIu64
                " failed in all, %" PRIu64 " succeeded)%s\n", red, dv->failed_calls - oom,
                dv->failed_calls - oom == 1 ? "" : "s", dv->failed_calls, dv->alloc_calls, off);
    }
}

static void process_text(FILE *f, vt_analysis *a, vt_proc_result *pr, int color)
{
    const char *red = color ? C_RED : "", *yel = color ? C_YEL : "", *bold = color ? C_BOLD : "",
               *dim = color ? C_DIM : "", *off = color ? C_OFF : "";
    vt_process *p = pr->p;
    char t[200], b1[32], b2[32], b3[32], b4[32];
    fprintf(f, "%s== %s%s%s%s\n", bold, vt_process_title(p, t, sizeof t), p->cmdline ? ": " : "",
            p->cmdline ? p->cmdline : "", off);
    char *file_shown = vt_xdisplay(p->file);
    fprintf(f, "   %ssnapshots %s%s\n", dim, file_shown, off);
    free(file_shown);
    char tp[4096];
    if (vt_trace_beside(p->file, tp, sizeof tp)) {   /* VRAMTRACE_TRACE=1 wrote every event beside it */
        char *tp_shown = vt_xdisplay(tp);
        fprintf(f, "   %sevent trace %s (every allocation and free): `vramtrace export --format torch|perfetto` "
                "on the stream shows it%s\n", dim, tp_shown, off);
        free(tp_shown);
    }
    if (p->alloc_env)
        fprintf(f, "   allocators: %s%s\n", p->alloc_env,
                p->tensors ? " (switched to one CUDA allocation per tensor: --tensors)" : "");
    char bk[96] = "", how[400];
    if (p->slot_width > 1)   /* the series were kept in buckets of steps (vt_slots.h) */
        snprintf(bk, sizeof bk, ", in %zu buckets of %" PRIu64, p->nsteps, p->slot_width);
    fprintf(f, "   %" PRIu64 " step%s%s (%s), warm-up %" PRIu64 "   peak %s   unfreed at exit %s",
            vt_process_steps(p), vt_process_steps(p) == 1 ? "" : "s", bk,
            vt_steps_how(p, how, sizeof how), pr->warmup_steps, vt_size_fmt(p->peak_bytes, b1, sizeof b1),
            p->exited ? vt_size_fmt(p->unfreed_exit_bytes, b2, sizeof b2) : "unknown (no exit record)");
    if (p->exited && pr->unfreed_sites) fprintf(f, " in %zu site%s", pr->unfreed_sites, pr->unfreed_sites == 1 ? "" : "s");
    /* a site that never held memory (every call of it failed, e.g. a too-large probe
     * that an OOM names) is "stable" in the JSON but not listed below: said apart */
    size_t failed_only = 0;
    for (size_t i = 0; i < pr->nsites; i++) failed_only += vt_site_never_held(&pr->sites[i]);
    fprintf(f, "\n   sites: %zu leak, %zu churn, %zu plateau, %zu stable", pr->count[VT_LEAK], pr->count[VT_CHURN],
            pr->count[VT_PLATEAU], pr->count[VT_STABLE] - failed_only);
    if (pr->count[VT_TRANSIENT]) fprintf(f, ", %zu transient", pr->count[VT_TRANSIENT]);
    if (pr->count[VT_TOO_FEW] && vt_process_no_steps(p))
        fprintf(f, ", %zu not judged (no steps)", pr->count[VT_TOO_FEW]);
    else if (pr->count[VT_TOO_FEW])
        fprintf(f, ", %zu with too few steps to judge", pr->count[VT_TOO_FEW]);
    if (failed_only) fprintf(f, ", %zu whose calls all failed", failed_only);
    fputc('\n', f);
    char unm[512];
    if (vt_step_range_unmatched(p, unm, sizeof unm)) fprintf(f, "   %swarning: %s%s\n", yel, unm, off);
    if (p->dropped_records) fprintf(f, "   %swarning: the preload dropped %" PRIu64 " records%s\n", yel, p->dropped_records, off);
    if (p->has_summary) {
        char mb[32];
        fprintf(f, "   steps %" PRIu64 "-%" PRIu64 " summarised in %u bucket%s (VRAMTRACE_MAX_BYTES=%s): floor and peak per bucket\n",
                p->summary_first, p->summary_last, p->summary_buckets, p->summary_buckets == 1 ? "" : "s",
                vt_size_fmt(p->summary_max_bytes, mb, sizeof mb));
    }
    for (size_t g = 0; g < p->ngaps && g < VT_GAPS_SHOWN; g++) {   /* write faults (disk full, EIO, removed) */
        char gt[320];
        fprintf(f, "   %swarning: %s (the snapshot file could not be written; tracing went on)%s\n", yel,
                vt_gap_text(&p->gaps[g], gt, sizeof gt), off);
    }
    if (p->ngaps > VT_GAPS_SHOWN)
        fprintf(f, "   %swarning: and %zu more gaps; %" PRIu64 " records lost in all%s\n", yel,
                p->ngaps - VT_GAPS_SHOWN, p->lost_records, off);
    warn_ctx wc = {f, red, off};
    vt_hostsig_warnings(&p->hostsig, warn_line, &wc);

    size_t shown = 0;
    if (pr->count[VT_LEAK]) fprintf(f, "\n%sLEAKS%s\n", red, off);
    for (size_t i = 0; i < pr->nsites; i++) {
        vt_site_result *r = &pr->sites[i];
        if (r->st.verdict != VT_LEAK) continue;
        if (shown++ == MAX_LIST) {
            fprintf(f, "  ... and %zu more leaking sites\n", pr->count[VT_LEAK] - MAX_LIST);
            break;
        }
        char sp[SPARK_W * 3 + 4], rate[32];
        vt_size_fmt_signed(r->st.slope, rate, sizeof rate);
        fprintf(f, "  %s%s/step%s  leaked %s", red, rate, off, vt_size_fmt(r->st.leaked_bytes, b1, sizeof b1));
        char since[128];
        if (r->st.has_first_growth) fprintf(f, ", %s", vt_growth_since(&r->st, 1, since, sizeof since));
        char fl[64];
        fprintf(f, "  (%s%s, device %d)\n", vt_kind_name(r->kind), vt_flags_text(r->flags, " ", fl, sizeof fl),
                r->device);
        /* the curve spans every step; the two numbers are the floor at the end of
         * warm-up (what "leaked" counts from) and the live bytes at the last step */
        fprintf(f, "    %s  %s at the end of step %" PRIu64 " (%s) .. %s at the end of step %" PRIu64 "\n",
                vt_sparkline(r->curve, p->nsteps, SPARK_W, sp, sizeof sp), vt_size_fmt(r->st.floor_base, b2, sizeof b2),
                r->st.base_step, r->st.warmup ? "end of warm-up" : "first step", vt_size_fmt(r->st.last_live, b3, sizeof b3),
                p->last_step);
        if (r->oom_cut_step >= 0)
            fprintf(f, "    grew until its own allocation failed with out-of-memory during step %" PRIu64
                    " (device %d ran out)\n", vt_during_step((uint64_t)r->oom_cut_step), r->device);
        else if (r->exhaustion_step >= 0)
            fprintf(f, "    alone it would use up device %d's free memory at step %" PRId64 "\n", r->device, r->exhaustion_step);
        if (r->stack->allocator >= 0)
            fprintf(f, "    %s %s\n", vt_allocator_segments(r->stack->allocator) ? "a segment of" : "allocated through",
                    vt_allocator_name(r->stack->allocator));
        if (r->kind == VT_KIND_REGION) {
            uint64_t haddr = 0;
            const vt_site_result *h = vt_region_heap(pr, r, &haddr);
            if (h)
                fprintf(f, "    inside heap 0x%" PRIx64 " of %s (NVTX memory API): that allocation holds these "
                        "bytes (not counted again in the device's)\n", haddr, top_label(a, h));
            else
                fprintf(f, "    regions of a heap announced through the NVTX memory API: the heap's own "
                        "allocation holds these bytes (not counted again in the device's)\n");
        }
        frames(f, a, r, "    ", 4, dim, off);
    }
    int segment_leak = -1;
    for (size_t i = 0; i < pr->nsites && segment_leak < 0; i++)
        if (pr->sites[i].st.verdict == VT_LEAK && vt_allocator_segments(pr->sites[i].stack->allocator))
            segment_leak = pr->sites[i].stack->allocator;
    if (segment_leak >= 0)
        fprintf(f, "  %sA segment leak: %s reserved more memory from CUDA\n"
                   "  at this call and kept it. Either the program keeps tensors alive (a list of losses\n"
                   "  kept on the GPU, a cache of its own) or the allocator's cache grows; the tensors are\n"
                   "  not visible at this level. `vramtrace run --tensors` shows each tensor at its line.%s\n",
                dim, vt_allocator_name(segment_leak), off);

    if (p->nooms) fprintf(f, "\n%sOUT OF MEMORY%s\n", red, off);
    for (size_t i = 0; i < p->nooms && i < MAX_LIST; i++) {
        vt_oom *o = &p->ooms[i];
        const char *verdict = !o->has_mem ? "unknown (free memory not known)"
                              : o->free_bytes >= o->requested_bytes ? "fragmentation: enough memory is free, no gap fits"
                                                                     : "exhaustion: not enough memory is free";
        fprintf(f, "  during step %" PRIu64 ": %s of %s on device %d failed (error %" PRId64 ") — %s\n",
                vt_during_step(o->step), o->api,
                vt_size_fmt(o->requested_bytes, b1, sizeof b1), o->device, o->result, verdict);
        if (o->has_mem) {
            char b4[32];
            fprintf(f, "    free %s of %s; tracked %s, untracked %s%s\n", vt_size_fmt(o->free_bytes, b1, sizeof b1),
                    vt_size_fmt(o->total_bytes, b2, sizeof b2), vt_size_fmt(o->tracked_bytes, b3, sizeof b3),
                    o->untracked_bytes < 0 ? "-" : "",
                    vt_size_fmt((uint64_t)(o->untracked_bytes < 0 ? -o->untracked_bytes : o->untracked_bytes), b4, sizeof b4));
        }
        if (o->site) {
            vt_site_result *r = vt_result_of(pr, o->site);
            if (r) fprintf(f, "    failing call at %s\n", top_label(a, r));
        }
        for (int k = 0; k < o->ntop; k++) {
            vt_site_result *r = vt_result_of(pr, o->top[k].site);
            fprintf(f, "    %s %9s  %s\n", k ? "   " : "top", vt_size_fmt(o->top[k].bytes, b1, sizeof b1),
                    r ? top_label(a, r) : "?");
        }
        if (o->has_allocs && o->gap_count)
            fprintf(f, "    gaps between this process's blocks: %" PRIu64 ", %s in all, largest %s "
                    "(own-block gap ratio %.2f)\n", o->gap_count,
                    vt_size_fmt(o->gap_total, b1, sizeof b1), vt_size_fmt(o->gap_largest, b2, sizeof b2),
                    o->gap_total ? 1.0 - (double)o->gap_largest / (double)o->gap_total : 0.0);
        for (int k = 0; k < o->nsplit && o->has_mem && o->free_bytes >= o->requested_bytes; k++) {
            vt_site_result *r = vt_result_of(pr, o->split[k].site);
            fprintf(f, "    %s %" PRIu64 " block%s freeing one opens %s%s  %s\n", k ? "         " : "splitting",
                    o->split[k].split_blocks, o->split[k].split_blocks == 1 ? ", " : "s,",
                    vt_size_fmt(o->split[k].gap_if_freed, b1, sizeof b1),
                    o->split[k].gap_if_freed >= o->requested_bytes ? " (fits the request)" : "",
                    r ? top_label(a, r) : "?");
        }
    }
    if (p->nooms + p->ooms_dropped > MAX_LIST)
        fprintf(f, "  ... and %zu more out-of-memory events\n", (size_t)(p->nooms + p->ooms_dropped - MAX_LIST));

    if (p->exited && p->unfreed_exit_bytes) {
        fprintf(f, "\n%sUNFREED AT EXIT%s  %s in %zu site%s\n", yel, off, vt_size_fmt(p->unfreed_exit_bytes, b1, sizeof b1),
                pr->unfreed_sites, pr->unfreed_sites == 1 ? "" : "s");
        /* biggest first: a small selection over the sorted list */
        char *done = calloc(pr->nsites ? pr->nsites : 1, 1);
        for (size_t k = 0; k < MAX_LIST && k < pr->unfreed_sites && done; k++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < pr->nsites; i++)
                if (!done[i] && pr->sites[i].unfreed_exit &&
                    (best == SIZE_MAX || pr->sites[i].unfreed_exit > pr->sites[best].unfreed_exit))
                    best = i;
            if (best == SIZE_MAX) break;
            done[best] = 1;
            fprintf(f, vt_process_no_steps(p) ? "  %9s  %s  %s\n" : "  %9s  %-7s %s\n",
                    vt_size_fmt(pr->sites[best].unfreed_exit, b1, sizeof b1),
                    vt_site_verdict_label(pr, &pr->sites[best]), top_label(a, &pr->sites[best]));
        }
        if (pr->unfreed_sites > MAX_LIST) fprintf(f, "  ... and %zu more sites\n", pr->unfreed_sites - MAX_LIST);
        free(done);
    }

    if (p->nimports) {
        vt_import_group *g;
        size_t ng = vt_imports_by_exporter(a, p, &g);
        fprintf(f, "\n%sIMPORTED%s (memory other processes own; not in this process's bytes)\n", bold, off);
        for (size_t k = 0; k < ng; k++) {
            fprintf(f, "  imported, still open at %s: %s from ", p->imports_at_exit ? "exit" : "the last snapshot",
                    vt_size_fmt(g[k].bytes, b1, sizeof b1));
            if (g[k].exporter_pid)
                fprintf(f, "pid %" PRIu64, g[k].exporter_pid);
            else
                fprintf(f, "an unknown exporter (not in these snapshots)");
            fprintf(f, "  (%" PRIu64 " mapping%s, %" PRIu64 " open%s)\n", g[k].mappings, g[k].mappings == 1 ? "" : "s",
                    g[k].opens, g[k].opens == 1 ? "" : "s");
        }
        free(g);
    }

    static const struct { vt_verdict v; const char *title; } rest[] = {
        {VT_CHURN, "CHURN (given back and taken again; not a leak)"},
        {VT_PLATEAU, "PLATEAU (grew, then stopped; not a leak)"},
        {VT_TOO_FEW, "TOO FEW STEPS TO JUDGE (leak, plateau or stable: mark steps, or snapshot more often)"},
        {VT_TRANSIENT, "TRANSIENT (held inside a step or two, then given back)"},
        {VT_STABLE, "STABLE"}};
    for (size_t g = 0; g < sizeof rest / sizeof rest[0]; g++) {
        size_t listed = vt_sites_listed(pr, rest[g].v);   /* no header over nothing */
        if (!listed) continue;
        int nosteps = rest[g].v == VT_TOO_FEW && vt_process_no_steps(p);
        fprintf(f, "\n%s%s%s\n", bold,
                nosteps ? "NO STEPS: NOT JUDGED (mark steps with vramtrace_step or --step-range, or snapshot more often)"
                        : rest[g].title, off);
        shown = 0;
        for (size_t i = 0; i < pr->nsites; i++) {
            vt_site_result *r = &pr->sites[i];
            if (r->st.verdict != rest[g].v || (!r->peak_bytes && !r->unfreed_exit)) continue;
            if (shown++ == MAX_LIST) {
                fprintf(f, "  ... and %zu more\n", listed - MAX_LIST);
                break;
            }
            if (nosteps)   /* no floor without steps: what it still held at exit */
                fprintf(f, "  peak %9s  unfreed at exit %9s  ", vt_size_fmt(r->peak_bytes, b1, sizeof b1),
                        p->exited ? vt_size_fmt(r->unfreed_exit, b2, sizeof b2) : "unknown");
            else
                fprintf(f, "  peak %9s  floor %9s  ", vt_size_fmt(r->peak_bytes, b1, sizeof b1),
                        vt_size_fmt(r->st.floor_end, b2, sizeof b2));
            if (r->st.verdict == VT_CHURN) fprintf(f, "%3u give-backs  ", r->st.churn_events);
            fprintf(f, "%s\n", top_label(a, r));
        }
    }

    /* labelled snapshots (vramtrace_snapshot) and the program's annotations
     * (vramtrace_annotate): the last MAX_LIST of each */
    if (p->nlabels) {
        fprintf(f, "\n%sLABELS%s  %zu labelled snapshot%s%s\n", bold, off, p->nlabels + (size_t)p->labels_dropped,
                p->nlabels + p->labels_dropped == 1 ? "" : "s", p->nlabels > MAX_LIST ? " (the last ones)" : "");
        for (size_t i = p->nlabels > MAX_LIST ? p->nlabels - MAX_LIST : 0; i < p->nlabels; i++)
            fprintf(f, "  during step %" PRIu64 ": %s (%s snapshot, record %" PRIu64 ")\n",
                    vt_during_step(p->labels[i].step), p->labels[i].label,
                    p->labels[i].trigger[0] ? p->labels[i].trigger : "a", p->labels[i].seq);
    }
    if (p->marks_not_written)   /* the preload writes at most one NVTX mark a second */
        fprintf(f, "%s  %" PRIu64 " NVTX mark%s not written (rate bound)\n", p->nlabels ? "" : "\n",
                p->marks_not_written, p->marks_not_written == 1 ? "" : "s");
    if (p->nannots) {
        fprintf(f, "\n%sANNOTATIONS%s\n", bold, off);
        for (size_t i = 0; i < p->nannots && i < MAX_LIST; i++)
            fprintf(f, "  %s = %.15g (max %.15g) at step %" PRIu64 "\n", p->annots[i].key, p->annots[i].value,
                    p->annots[i].max, p->annots[i].step);
        if (p->nannots > MAX_LIST) fprintf(f, "  ... and %zu more (JSON: annotations)\n", p->nannots - MAX_LIST);
    }

    if (p->ndevices || p->hostsig.present) fprintf(f, "\n%sDEVICES%s\n", bold, off);
    char pl[1200];
    /* what was live at the peak: the process's (all devices) when it has more than one
     * device, then each device's first */
    if (p->ndevices > 1 && vt_peak_line(a, pr, p->peak_comp, 6, pl, sizeof pl))
        fprintf(f, "  all devices: %s\n", pl);
    for (size_t d = 0; d < p->ndevices; d++) {
        vt_device *dv = &p->devices[d];
        if (dv->device < 0)   /* calls made while no context was current (or all of them failed) */
            fprintf(f, "  no device known: ");
        else
            fprintf(f, "  device %d: ", dv->device);
        if (vt_peak_line(a, pr, &dv->peak_comp, 6, pl, sizeof pl))
            fprintf(f, "%s\n    ", pl);
        fprintf(f, "peak %s", vt_size_fmt(dv->peak_max, b1, sizeof b1));
        if (dv->has_mem)
            fprintf(f, ", free %s of %s", vt_size_fmt(dv->free_bytes, b2, sizeof b2), vt_size_fmt(dv->total_bytes, b3, sizeof b3));
        /* the gap ratio between this process's own blocks is not shown here: it says
         * nothing of the device's free memory (15.9 GiB free in one piece reads 0.97
         * with a few small holes of the program's); it is shown at an out-of-memory,
         * where it explains the failure */
        if (dv->pool_reserved || dv->retention_max)
            fprintf(f, ", pool retention %s (max %s)",
                    vt_size_fmt(dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0, b1, sizeof b1),
                    vt_size_fmt(dv->retention_max, b2, sizeof b2));
        fprintf(f, "\n");
        if (dv->has_graph && vt_graph_retention(dv))
            fprintf(f, "    graph memory pool: %s reserved, %s in live graph allocations: %s kept reserved after the "
                       "graphs that used it are gone (max %s; cudaDeviceGraphMemTrim gives it back)\n",
                    vt_size_fmt(dv->graph_reserved, b1, sizeof b1), vt_size_fmt(dv->graph_used, b2, sizeof b2),
                    vt_size_fmt(vt_graph_retention(dv), b3, sizeof b3),
                    vt_size_fmt(dv->graph_retention_max, b4, sizeof b4));
        else if (dv->has_graph)
            fprintf(f, "    graph memory pool: %s reserved, %s in live graph allocations (max kept unused %s)\n",
                    vt_size_fmt(dv->graph_reserved, b1, sizeof b1), vt_size_fmt(dv->graph_used, b2, sizeof b2),
                    vt_size_fmt(dv->graph_retention_max, b3, sizeof b3));
        failed_text(f, dv, red, off);
        char tl[400];
        if (vt_torch_line(dv, tl, sizeof tl)) fprintf(f, "    %s\n", tl);
        nvml_text(f, &p->hostsig, dv->device, dv->peak_max);
        double rate = vt_device_leak_rate(pr, dv->device);
        int64_t ex = vt_device_exhaustion_step(pr, dv->device);
        if (rate > 0 && ex >= 0)
            fprintf(f, "    %sleaking %s/step in all: free memory runs out at step %" PRId64 "%s\n", red,
                    vt_size_fmt_signed(rate, b1, sizeof b1), ex, off);
    }
    host_text(f, &p->hostsig);
}

/* " (managed)": the kind when it is not plain device memory */
static const char *kind_note(int kind, char *buf, size_t cap)
{
    if (kind == VT_KIND_DEVICE) return "";
    snprintf(buf, cap, " (%s)", vt_kind_name(kind));
    return buf;
}

static void summary_text(FILE *f, vt_analysis *a, int color)
{
    const char *red = color ? C_RED : "", *bold = color ? C_BOLD : "", *off = color ? C_OFF : "";
    vt_rank_summary s;
    vt_rank_summary_build(a, &s);
    const char *unit = s.all_ranked ? "ranks" : "processes";
    char list[96], b1[32], b2[32], kn[48], t1[200], t2[200];   /* list: a rank list cut to fit a line */
    fprintf(f, "\n%sACROSS %zu %s%s", bold, s.nranks, s.all_ranked ? "RANKS" : "PROCESSES", off);
    if (s.nranks != s.nprocs) fprintf(f, " (%zu processes; a restarted rank counts once)", s.nprocs);
    fputc('\n', f);
    for (size_t i = 0; i < s.nleaks && i < SUMMARY_LIST; i++) {
        const vt_xsite *x = &s.leaks[i];
        vt_size_fmt_signed(x->rate_min, b1, sizeof b1);
        vt_size_fmt_signed(x->rate_max, b2, sizeof b2);
        fprintf(f, "  %sleak%s at %s%s on %zu of %zu %s, ", red, off, x->label, kind_note(x->kind, kn, sizeof kn),
                x->nranks, s.nranks, unit);
        if (!strcmp(b1, b2)) fprintf(f, "%s/step%s", b1, x->nprocs > 1 ? " each" : "");
        else fprintf(f, "%s/step to %s/step", b1, b2);
        fprintf(f, ", %s\n", vt_rank_list(a, x->procs, x->nprocs, list, sizeof list));
    }
    if (s.nleaks > SUMMARY_LIST) fprintf(f, "  ... and %zu more leaking sites (below, per process)\n", s.nleaks - SUMMARY_LIST);
    for (size_t i = 0; i < s.nooms && i < SUMMARY_LIST; i++) {
        const vt_xsite *x = &s.ooms[i];
        fprintf(f, "  %sout of memory%s at %s%s on %zu of %zu %s (%" PRIu64 " event%s, the first during step %" PRIu64 "), %s\n",
                red, off, x->label, kind_note(x->kind, kn, sizeof kn), x->nranks, s.nranks, unit, x->events,
                x->events == 1 ? "" : "s", vt_during_step(x->first_step), vt_rank_list(a, x->procs, x->nprocs, list, sizeof list));
    }
    if (s.nooms > SUMMARY_LIST) fprintf(f, "  ... and %zu more out-of-memory sites (below, per process)\n", s.nooms - SUMMARY_LIST);
    if (!s.nleaks && !s.nooms) fprintf(f, "  no leak and no out-of-memory event in any of them\n");
    if (s.nprocs) {
        const vt_process *pmax = a->procs[s.peak_max_proc].p, *pmin = a->procs[s.peak_min_proc].p;
        fprintf(f, "  largest peak %s on %s; smallest %s on %s\n", vt_size_fmt(pmax->peak_bytes, b1, sizeof b1),
                vt_process_title(pmax, t1, sizeof t1), vt_size_fmt(pmin->peak_bytes, b2, sizeof b2),
                vt_process_title(pmin, t2, sizeof t2));
    }
    vt_rank_summary_free(&s);
}

int vt_report_text(FILE *f, vt_analysis *a, int color)
{
    size_t leaks = 0, ooms = 0;
    for (size_t i = 0; i < a->n; i++) {
        leaks += a->procs[i].count[VT_LEAK];
        ooms += a->procs[i].p->nooms + (size_t)a->procs[i].p->ooms_dropped;
    }
    fprintf(f, "vramtrace report: %zu process%s, %zu leaking site%s, %zu out-of-memory event%s\n", a->n,
            a->n == 1 ? "" : "es", leaks, leaks == 1 ? "" : "s", ooms, ooms == 1 ? "" : "s");
    if (a->n > 1) summary_text(f, a, color);
    for (size_t i = 0; i < a->n; i++) {
        fputc('\n', f);
        process_text(f, a, &a->procs[i], color);
    }
    return ferror(f) ? -1 : 0;
}
