/* vt_report_html.c — `report --format html`: one self-contained file.
 *
 * Everything is inline: the page's data (one JSON object, vt_report_html.h), its own
 * scripts and styles (vt_html_assets.h), SVG; no font, no image, no network, so the
 * file opens anywhere from file:// (and in headless Chromium for the test). Its
 * content security policy allows only its own scripts and styles, by hash. The
 * scripts draw the interactive views into #vt-app; below them the same findings
 * stand as static tables, readable without script. With more than one process, first
 * the summary across them (vt_ranks.h). Per process: the leak table with stacks, OOM
 * forensics, unfreed at exit, imported memory still open, the other sites, devices
 * (the curves are the timeline view's, drawn by script: html/timeline.js).
 */
#include "vt_report.h"
#include "vt_report_html.h"
#include "vt_trace_read.h"
#include "vt_html_assets.h"
#include "vt_display.h"
#include "vt_ranks.h"
#include "vt_allocators.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_hostsig.h"
#include "vt_size.h"
#include "vt_util.h"
#include "vt_slots.h"

/* Out-of-memory events listed per process in the static tables (each row holds up
 * to a few stacks); the rest are counted. The OOM view's data has its own cap. */
#define STATIC_OOMS 50

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void stack_html(FILE *f, vt_analysis *a, const vt_site_result *r)
{
    fputs("<details><summary>", f);
    esc(f, vt_site_title(a, r));
    fputs("</summary><ol class=\"stack\">", f);
    for (uint32_t i = 0; i < vt_site_nframes(r); i++) {
        const vt_sym *s = vt_site_frame(a, r, i);
        fputs(s->python ? "<li class=\"py\">" : "<li>", f);
        esc(f, s->label);
        const char *where = s->python ? s->file : s->module;   /* Python: the whole path */
        if (where) {
            fputs(" <span class=\"mod\">", f);
            esc(f, where);
            fputs("</span>", f);
        }
        fputs("</li>", f);
    }
    fputs("</ol></details>", f);
}

static void no_line(void *ctx, const char *text)
{
    (void)ctx;
    (void)text;
}

static void warn_html(void *ctx, const char *text)
{
    FILE *f = ctx;
    fputs("<li>", f);
    esc(f, text);
    fputs("</li>", f);
}

static void process_html(FILE *f, vt_analysis *a, vt_proc_result *pr)
{
    vt_process *p = pr->p;
    char t[200], b1[32], b2[32], b3[32];
    fputs("<section><h2>", f);
    esc(f, vt_process_title(p, t, sizeof t));
    if (p->cmdline) { fputs(": <code>", f); esc(f, p->cmdline); fputs("</code>", f); }
    fputs("</h2>\n<p class=\"meta\">", f);
    char bk[96] = "", how[400];
    if (p->slot_width > 1)
        snprintf(bk, sizeof bk, " in %zu buckets of %llu", p->nsteps, (unsigned long long)p->slot_width);
    fprintf(f, "%llu step%s%s (", (unsigned long long)vt_process_steps(p), vt_process_steps(p) == 1 ? "" : "s", bk);
    esc(f, vt_steps_how(p, how, sizeof how));   /* names the header's step_range */
    size_t never_held = 0;   /* counted apart, as the text report does */
    for (size_t i = 0; i < pr->nsites; i++) never_held += vt_site_never_held(&pr->sites[i]);
    fprintf(f, "), warm-up %llu &middot; peak %s &middot; unfreed at exit %s &middot; %zu leak, %zu churn, "
               "%zu plateau, %zu stable, %zu transient, %zu %s",
            (unsigned long long)pr->warmup_steps,
            vt_size_fmt(p->peak_bytes, b1, sizeof b1), p->exited ? vt_size_fmt(p->unfreed_exit_bytes, b2, sizeof b2) : "unknown",
            pr->count[VT_LEAK], pr->count[VT_CHURN], pr->count[VT_PLATEAU], pr->count[VT_STABLE] - never_held,
            pr->count[VT_TRANSIENT], pr->count[VT_TOO_FEW],
            vt_process_no_steps(p) ? "not judged (no steps)" : "too few steps to judge");
    if (never_held) fprintf(f, ", %zu whose calls all failed", never_held);
    fputs(" &middot; ", f);
    char *file_shown = vt_xdisplay(p->file);
    esc(f, file_shown);
    free(file_shown);
    char tp[4096];
    if (vt_trace_beside(p->file, tp, sizeof tp)) {   /* VRAMTRACE_TRACE=1 wrote every event beside it */
        fputs("<br>event trace ", f);
        esc(f, tp);
        fputs(" (every allocation and free): <code>vramtrace export --format torch|perfetto</code> on the stream shows it", f);
    }
    if (p->alloc_env) {
        fputs("<br>allocators: <code>", f);
        esc(f, p->alloc_env);
        fputs(p->tensors ? "</code> (switched to one CUDA allocation per tensor: --tensors)" : "</code>", f);
    }
    fputs("</p>\n", f);
    char unm[512];
    if (vt_step_range_unmatched(p, unm, sizeof unm)) {
        fputs("<ul class=\"bad\"><li>warning: ", f);
        esc(f, unm);
        fputs("</li></ul>\n", f);
    }
    if (p->ngaps) {   /* write faults: records the stream lacks */
        fputs("<ul class=\"bad\">", f);
        for (size_t g = 0; g < p->ngaps && g < VT_GAPS_SHOWN; g++) {
            char gt[320];
            fputs("<li>", f);
            esc(f, vt_gap_text(&p->gaps[g], gt, sizeof gt));
            fputs(" (the snapshot file could not be written; tracing went on)</li>", f);
        }
        if (p->ngaps > VT_GAPS_SHOWN)
            fprintf(f, "<li>and %zu more gaps; %llu records lost in all</li>", p->ngaps - VT_GAPS_SHOWN,
                    (unsigned long long)p->lost_records);
        fputs("</ul>\n", f);
    }
    if (vt_hostsig_warnings(&p->hostsig, no_line, NULL)) {
        fputs("<ul class=\"bad\">", f);
        vt_hostsig_warnings(&p->hostsig, warn_html, f);
        fputs("</ul>\n", f);
    }
    if (pr->count[VT_LEAK]) {
        fputs("<h3 class=\"bad\">Leaks</h3><table><tr><th>growth/step</th><th>leaked</th><th>floor first rose at</th>"
              "<th>device runs out at step</th><th>kind</th><th>stack</th></tr>\n", f);
        for (size_t s = 0; s < pr->nsites; s++) {
            vt_site_result *r = &pr->sites[s];
            if (r->st.verdict != VT_LEAK) continue;
            char base[96];   /* digits and plain words: nothing to escape */
            fprintf(f, "<tr><td>%s</td><td>%s %s</td><td>", vt_size_fmt_signed(r->st.slope, b1, sizeof b1),
                    vt_size_fmt(r->st.leaked_bytes, b2, sizeof b2), vt_leaked_since(&r->st, base, sizeof base));
            char since[128];   /* digits and plain words: nothing to escape */
            fputs(vt_growth_since(&r->st, 0, since, sizeof since), f);
            fputs("</td><td>", f);
            if (r->exhaustion_step >= 0) fprintf(f, "%" PRId64, r->exhaustion_step);
            fprintf(f, "</td><td>%s %d</td><td>", vt_kind_name(r->kind), r->device);
            if (vt_allocator_segments(r->stack->allocator))
                fprintf(f, "a segment of %s (run with --tensors to see its tensors) ", vt_allocator_name(r->stack->allocator));
            else if (r->stack->allocator >= 0)
                fprintf(f, "allocated through %s ", vt_allocator_name(r->stack->allocator));
            stack_html(f, a, r);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (p->nooms) {
        fputs("<h3 class=\"bad\">Out of memory</h3><table><tr><th>step</th><th>call</th><th>requested</th><th>free</th>"
              "<th>total</th><th>tracked</th><th>untracked</th><th>verdict</th><th>top sites</th></tr>\n", f);
        for (size_t i = 0; i < p->nooms && i < STATIC_OOMS; i++) {
            vt_oom *o = &p->ooms[i];
            fprintf(f, "<tr><td>%" PRIu64 "</td><td>", o->step);
            esc(f, o->api);
            fprintf(f, " (device %d)</td><td>%s</td>", o->device, vt_size_fmt(o->requested_bytes, b1, sizeof b1));
            if (o->has_mem)
                fprintf(f, "<td>%s</td><td>%s</td>", vt_size_fmt(o->free_bytes, b2, sizeof b2), vt_size_fmt(o->total_bytes, b3, sizeof b3));
            else
                fputs("<td>?</td><td>?</td>", f);
            fprintf(f, "<td>%s</td><td>%s</td><td>%s</td><td>", vt_size_fmt(o->tracked_bytes, b1, sizeof b1),
                    vt_size_fmt_signed((double)o->untracked_bytes, b2, sizeof b2),
                    !o->has_mem ? "unknown" : o->free_bytes >= o->requested_bytes ? "fragmentation" : "exhaustion");
            if (o->has_allocs && o->gap_count)
                fprintf(f, "gaps between this process's blocks: %" PRIu64 ", %s in all, largest %s "
                        "(own-block gap ratio %.2f)<br>", o->gap_count, vt_size_fmt(o->gap_total, b1, sizeof b1),
                        vt_size_fmt(o->gap_largest, b2, sizeof b2),
                        o->gap_total ? 1.0 - (double)o->gap_largest / (double)o->gap_total : 0.0);
            for (int k = 0; k < o->ntop; k++) {
                vt_site_result *r = vt_result_of(pr, o->top[k].site);
                fprintf(f, "%s ", vt_size_fmt(o->top[k].bytes, b1, sizeof b1));
                if (r) stack_html(f, a, r);
            }
            for (int k = 0; k < o->nsplit; k++) {
                vt_site_result *r = vt_result_of(pr, o->split[k].site);
                fprintf(f, "splits the free space (freeing one block opens %s): ",
                        vt_size_fmt(o->split[k].gap_if_freed, b1, sizeof b1));
                if (r) stack_html(f, a, r);
            }
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
        if (p->nooms + p->ooms_dropped > STATIC_OOMS)
            fprintf(f, "<p>... and %" PRIu64 " more out-of-memory events (counted, not listed)</p>\n",
                    (uint64_t)(p->nooms + p->ooms_dropped - STATIC_OOMS));
    }
    if (p->nimports) {
        vt_import_group *g;
        size_t ng = vt_imports_by_exporter(a, p, &g);
        fprintf(f, "<h3>Imported, still open at %s</h3><p>memory other processes own; not in this process's bytes</p>"
                "<table><tr><th>bytes</th><th>from</th><th>mappings</th><th>opens</th></tr>\n",
                p->imports_at_exit ? "exit" : "the last snapshot");
        for (size_t k = 0; k < ng; k++) {
            fprintf(f, "<tr><td>%s</td><td>", vt_size_fmt(g[k].bytes, b1, sizeof b1));
            if (g[k].exporter_pid)
                fprintf(f, "pid %" PRIu64, g[k].exporter_pid);
            else
                fputs("an unknown exporter", f);
            fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", g[k].mappings, g[k].opens);
        }
        fputs("</table>\n", f);
        free(g);
    }
    fputs("<h3>All sites</h3><table><tr><th>verdict</th><th>peak</th><th>floor at end</th><th>unfreed at exit</th>"
          "<th>kind</th><th>stack</th></tr>\n", f);
    for (size_t s = 0; s < pr->nsites; s++) {
        vt_site_result *r = &pr->sites[s];
        fprintf(f, "<tr><td class=\"v-%s\">%s%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s %d</td><td>",
                vt_verdict_name(r->st.verdict), vt_site_verdict_label(pr, r),
                vt_site_never_held(r) ? " (its calls all failed)" : "", vt_size_fmt(r->peak_bytes, b1, sizeof b1),
                vt_process_no_steps(p) ? "none (no steps)" : vt_size_fmt(r->st.floor_end, b2, sizeof b2), vt_size_fmt(r->unfreed_exit, b3, sizeof b3),
                vt_kind_name(r->kind), r->device);
        stack_html(f, a, r);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (p->nlabels) {   /* labelled snapshots (vramtrace_snapshot) */
        fputs("<h3>Labels</h3><table><tr><th>during step</th><th>label</th><th>snapshot (record)</th></tr>\n", f);
        for (size_t i = 0; i < p->nlabels; i++) {
            fprintf(f, "<tr><td>%" PRIu64 "</td><td>", vt_during_step(p->labels[i].step));
            esc(f, p->labels[i].label);
            fprintf(f, "</td><td>%s %" PRIu64 "</td></tr>\n", p->labels[i].trigger, p->labels[i].seq);
        }
        fputs("</table>\n", f);
    }
    if (p->nannots) {   /* the program's annotations (vramtrace_annotate) */
        fputs("<h3>Annotations</h3><table><tr><th>key</th><th>last value</th><th>max</th><th>at step</th></tr>\n", f);
        for (size_t i = 0; i < p->nannots; i++) {
            fputs("<tr><td>", f);
            esc(f, p->annots[i].key);
            fprintf(f, "</td><td>%.17g</td><td>%.17g</td><td>%" PRIu64 "</td></tr>\n", p->annots[i].value,
                    p->annots[i].max, p->annots[i].step);
        }
        fputs("</table>\n", f);
    }
    if (p->ndevices) {
        fputs("<h3>Devices</h3>\n", f);
        /* what was live at the peak: the process's (more than one device), then each
         * device's, before the table */
        char pl[1200];
        if (p->ndevices > 1 && vt_peak_line(a, pr, p->peak_comp, 6, pl, sizeof pl)) {
            fputs("<p class=\"peak\">all devices: ", f);
            esc(f, pl);
            fputs("</p>\n", f);
        }
        for (size_t d = 0; d < p->ndevices; d++)
            if (vt_peak_line(a, pr, &p->devices[d].peak_comp, 6, pl, sizeof pl)) {
                fprintf(f, "<p class=\"peak\">device %d: ", p->devices[d].device);
                esc(f, pl);
                fputs("</p>\n", f);
            }
        fputs("<table><tr><th>device</th><th>peak</th><th>free / total</th>"
              "<th>pool retention (max)</th><th>PyTorch caching allocator</th></tr>\n", f);
        for (size_t d = 0; d < p->ndevices; d++) {
            vt_device *dv = &p->devices[d];
            fprintf(f, "<tr><td>%d</td><td>%s</td><td>", dv->device, vt_size_fmt(dv->peak_max, b1, sizeof b1));
            if (dv->has_mem) fprintf(f, "%s / %s", vt_size_fmt(dv->free_bytes, b2, sizeof b2), vt_size_fmt(dv->total_bytes, b3, sizeof b3));
            fprintf(f, "</td><td>%s (%s)</td><td>", vt_size_fmt(dv->pool_reserved > dv->pool_used ? dv->pool_reserved - dv->pool_used : 0, b1, sizeof b1),
                    vt_size_fmt(dv->retention_max, b2, sizeof b2));
            char tl[400];
            if (vt_torch_line(dv, tl, sizeof tl)) esc(f, tl);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n", f);
}

/* The summary across processes (vt_ranks.h), as the text report prints it: every
 * matched leak and OOM site (a table has room for all of them), then the largest
 * and the smallest peak. */
static void summary_html(FILE *f, vt_analysis *a)
{
    vt_rank_summary s;
    vt_rank_summary_build(a, &s);
    const char *unit = s.all_ranked ? "ranks" : "processes";
    char list[400], b1[32], b2[32], t[200];
    fprintf(f, "<section><h2>Across %zu %s</h2>\n", s.nranks, unit);
    if (s.nranks != s.nprocs) fprintf(f, "<p class=\"meta\">%zu processes; a restarted rank counts once</p>\n", s.nprocs);
    if (s.nleaks) {
        fprintf(f, "<h3 class=\"bad\">Leaks</h3><table><tr><th>site</th><th>kind</th><th>%s</th><th>growth/step</th>"
                   "<th>which</th></tr>\n", unit);
        for (size_t i = 0; i < s.nleaks; i++) {
            const vt_xsite *x = &s.leaks[i];
            fputs("<tr><td><code>", f);
            esc(f, x->label);
            fprintf(f, "</code></td><td>%s</td><td>%zu of %zu</td><td>", vt_kind_name(x->kind), x->nranks, s.nranks);
            vt_size_fmt_signed(x->rate_min, b1, sizeof b1);
            vt_size_fmt_signed(x->rate_max, b2, sizeof b2);
            if (!strcmp(b1, b2)) fprintf(f, "%s%s", b1, x->nprocs > 1 ? " each" : "");
            else fprintf(f, "%s to %s", b1, b2);
            fputs("</td><td>", f);
            esc(f, vt_rank_list(a, x->procs, x->nprocs, list, sizeof list));
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (s.nooms) {
        fprintf(f, "<h3 class=\"bad\">Out of memory</h3><table><tr><th>failing call</th><th>kind</th><th>%s</th>"
                   "<th>events</th><th>the first during step</th><th>which</th></tr>\n", unit);
        for (size_t i = 0; i < s.nooms; i++) {
            const vt_xsite *x = &s.ooms[i];
            fputs("<tr><td><code>", f);
            esc(f, x->label);
            fprintf(f, "</code></td><td>%s</td><td>%zu of %zu</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>",
                    vt_kind_name(x->kind), x->nranks, s.nranks, x->events, vt_during_step(x->first_step));
            esc(f, vt_rank_list(a, x->procs, x->nprocs, list, sizeof list));
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (!s.nleaks && !s.nooms) fputs("<p>No leak and no out-of-memory event in any of them.</p>\n", f);
    if (s.nprocs) {
        const vt_process *pmax = a->procs[s.peak_max_proc].p, *pmin = a->procs[s.peak_min_proc].p;
        fprintf(f, "<p>Largest peak %s on ", vt_size_fmt(pmax->peak_bytes, b1, sizeof b1));
        esc(f, vt_process_title(pmax, t, sizeof t));
        fprintf(f, "; smallest %s on ", vt_size_fmt(pmin->peak_bytes, b2, sizeof b2));
        esc(f, vt_process_title(pmin, t, sizeof t));
        fputs(".</p>\n", f);
    }
    fputs("</section>\n", f);
    vt_rank_summary_free(&s);
}

/* The standard base64 of the 32 bytes whose hex digits are HEX (64 of them), into
 * out (at least 45 bytes). */
static const char *b64_of_hex(const char *hex, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char b[33] = {0};
    for (int i = 0; i < 32; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * i + k];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        b[i] = (unsigned char)v;
    }
    char *o = out;
    for (int i = 0; i < 33; i += 3) {
        unsigned v = (unsigned)b[i] << 16 | (unsigned)b[i + 1] << 8 | b[i + 2];
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < 32 ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < 32 ? tab[v & 63] : '=';
    }
    *o = 0;
    return out;
}

/* The policy: nothing from anywhere (default-src 'none'), except this file's own
 * scripts and styles by their SHA-256, and images drawn from data: URLs. */
static void csp(FILE *f)
{
    char b64[48];
    fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src", f);
    for (unsigned i = 0; i < vt_html_nassets; i++)
        if (vt_html_assets[i].type == VT_ASSET_SCRIPT)
            fprintf(f, " 'sha256-%s'", b64_of_hex(vt_html_assets[i].sha256_hex, b64));
    fputs("; style-src", f);
    for (unsigned i = 0; i < vt_html_nassets; i++)
        if (vt_html_assets[i].type == VT_ASSET_STYLE)
            fprintf(f, " 'sha256-%s'", b64_of_hex(vt_html_assets[i].sha256_hex, b64));
    fputs("; img-src data:\">\n", f);
}

static void assets(FILE *f, int type)
{
    for (unsigned i = 0; i < vt_html_nassets; i++) {
        const vt_html_asset *x = &vt_html_assets[i];
        if (x->type != type) continue;
        fputs(type == VT_ASSET_STYLE ? "<style>" : "<script>", f);
        fwrite(x->bytes, 1, x->len, f);   /* byte for byte: the hash covers exactly these */
        fputs(type == VT_ASSET_STYLE ? "</style>\n" : "</script>\n", f);
    }
}

/* The data object as JSON inside <script type="application/json">: every '<' is
 * written \u003c, so no "</script>" or "<!--" in a name can end or bend the
 * element. -1 when out of memory. */
static int data_block(FILE *f, vt_analysis *a)
{
    json_t *d = vt_html_data(a);
    char *s = d ? json_dumps(d, JSON_COMPACT) : NULL;
    json_decref(d);
    if (!s) return -1;
    fputs("<script type=\"application/json\" id=\"vt-data\">", f);
    for (const char *c = s; *c; c++) {
        if (*c == '<') fputs("\\u003c", f);
        else fputc(*c, f);
    }
    fputs("</script>\n", f);
    free(s);
    return 0;
}

int vt_report_html(FILE *f, vt_analysis *a)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", f);
    csp(f);
    fputs("<meta name=\"viewport\" content=\"width=device-width\">\n<title>vramtrace report</title>\n", f);
    assets(f, VT_ASSET_STYLE);
    fputs("</head><body>\n<h1>vramtrace report</h1>\n"
          "<svg id=\"vt-ns\" width=\"0\" height=\"0\" aria-hidden=\"true\"></svg>\n<div id=\"vt-app\"></div>\n<div id=\"vt-static\">\n", f);
    if (a->n > 1) summary_html(f, a);
    unsigned char *full = vt_xcalloc(a->n ? a->n : 1, 1);
    vt_html_full_procs(a, full);
    for (size_t i = 0; i < a->n; i++) {
        if (full[i]) {
            process_html(f, a, &a->procs[i]);
            continue;
        }
        char t[200];   /* one of many: a line saying how to see it alone */
        const vt_process *p = a->procs[i].p;
        fputs("<section class=\"vt-reduced\"><h2>", f);
        esc(f, vt_process_title(p, t, sizeof t));
        fprintf(f, "</h2>\n<p class=\"meta\">%zu leak, %zu out-of-memory events; peak ", a->procs[i].count[VT_LEAK], p->nooms);
        char b[32];
        esc(f, vt_size_fmt(p->peak_bytes, b, sizeof b));
        fprintf(f, ". This page keeps the views and tables of %d of its %zu processes (those with an out-of-memory "
                   "event, then the most leaks, then the largest peak); ", VT_HTML_FULL_PROCS, a->n);
        if (p->has_rank)
            fprintf(f, "<code>vramtrace report --format html --rank %lld</code> reports this one alone.</p></section>\n",
                    (long long)p->rank);
        else {
            fputs("<code>vramtrace report --format html ", f);
            char *shown = vt_xdisplay(p->file);
            esc(f, shown);
            free(shown);
            fputs("</code> reports this one alone.</p></section>\n", f);
        }
    }
    free(full);
    fputs("</div>\n", f);
    if (data_block(f, a) < 0) return -1;
    assets(f, VT_ASSET_SCRIPT);
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
