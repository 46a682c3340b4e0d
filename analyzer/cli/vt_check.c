/* vt_check.c — CI gates over an analysis (contract in vt_check.h).
 *
 * Each gate of each process is judged into one vt_gate (pass, fail or
 * inconclusive, with its text); the text output and the JUnit file are two
 * printings of that one list.
 */
#define _GNU_SOURCE
#include "vt_check.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_junit.h"
#include "vt_report.h"
#include "vt_series.h"
#include "vt_size.h"
#include "vt_slots.h"
#include "vt_util.h"

/* Three frames from the site's title on (vt_site_title_index). */
static void site_frames(FILE *out, vt_analysis *a, const vt_site_result *r)
{
    uint32_t t = vt_site_title_index(r), n = vt_site_nframes(r);
    for (uint32_t i = t; i < t + 3 && i < n; i++)
        fprintf(out, "%s%s", i > t ? " <- " : "", vt_site_frame(a, r, i)->label);
    if (!n) fputs("(no frames)", out);
    fputc('\n', out);
}

static const vt_proc_result *baseline_for(vt_analysis *a, vt_analysis *base, size_t i)
{
    const vt_process *p = a->procs[i].p;
    if (p->has_rank) {
        for (size_t k = 0; k < base->n; k++)
            if (base->procs[k].p->has_rank && base->procs[k].p->rank == p->rank) return &base->procs[k];
        return NULL;
    }
    if (base->n == a->n) return &base->procs[i];
    return NULL;
}

/* The gates judged so far (room for every gate is made before the first). */
typedef struct gates {
    vt_gate *v;
    size_t n;
} gates;

static vt_gate *gate_add(gates *g, const char *title, const char *name)
{
    vt_gate *gt = &g->v[g->n++];
    memset(gt, 0, sizeof *gt);
    snprintf(gt->process, sizeof gt->process, "%s", title);
    gt->name = name;
    return gt;
}

/* Starts gt's text with state; write to the stream, then gate_end. */
static FILE *gate_say(vt_gate *gt, int state)
{
    gt->state = state;
    FILE *f = open_memstream(&gt->text, &gt->len);
    if (!f) {
        fputs("vramtrace: out of memory\n", stderr);
        exit(2);
    }
    return f;
}

static void gate_end(FILE *f)
{
    if (fclose(f) != 0) {
        fputs("vramtrace: out of memory\n", stderr);
        exit(2);
    }
}

/* Live bytes of p's last step snapshot (0 when it wrote none). */
static uint64_t last_live(const vt_process *p)
{
    return p->nsteps && p->step_total ? p->step_total[p->nsteps - 1] : 0;
}

static void judge_process(gates *g, vt_analysis *a, size_t i, const vt_check_opts *o)
{
    char t[200], b1[32], b2[32], b3[32];
    vt_proc_result *pr = &a->procs[i];
    vt_process *p = pr->p;
    vt_process_title(p, t, sizeof t);
    FILE *f;

    /* traced: a process whose every allocation call failed traced nothing: no GPU, or
     * no CUDA runtime on the library path. Passing it would let a CI job without a
     * device pass silently. */
    uint64_t ok_calls = 0, failed_calls = 0, oom_calls = 0;
    for (size_t d = 0; d < p->ndevices; d++) {
        ok_calls += p->devices[d].alloc_calls;
        failed_calls += p->devices[d].failed_calls;
        oom_calls += p->devices[d].oom_calls;
    }
    vt_gate *gt = gate_add(g, t, "traced");
    if (failed_calls && !ok_calls) {
        f = gate_say(gt, VT_GATE_FAIL);
        fprintf(f, "nothing was traced: every allocation call failed (%" PRIu64
                " failed, none succeeded); is there a GPU, and a CUDA runtime on the library path?\n",
                failed_calls);
        gate_end(f);
    }

    /* complete: no exit record means the process was killed, called _exit, or
     * crashed; what it held then is unknown to every other gate */
    gt = gate_add(g, t, "complete");
    if (!p->exited && !o->allow_incomplete) {
        f = gate_say(gt, VT_GATE_FAIL);
        fprintf(f, "pid %" PRIu64 " ended without an exit record (killed or `_exit`); its last snapshot held %s "
                "live%s (--allow-incomplete passes it)\n", p->pid, vt_size_fmt(last_live(p), b1, sizeof b1),
                p->nsnapshots ? "" : " (it wrote no snapshot at all)");
        gate_end(f);
    }

    /* gaps: records the writer could not write (disk full, EIO, the file removed);
     * only for a process whose stream says so. Fail, like "complete": what the
     * process did meanwhile is unknown to every other gate (a peak or an OOM may be
     * in the lost records; a leak's rate is still measured over the steps written) */
    if (p->ngaps) {
        gt = gate_add(g, t, "gaps");
        if (!o->allow_gaps) {
            f = gate_say(gt, VT_GATE_FAIL);
            char gtx[320];
            if (p->ngaps == 1)
                fputs("the snapshot file could not be written for a while", f);
            else
                fprintf(f, "the snapshot file could not be written %zu times (%" PRIu64 " record%s lost)", p->ngaps,
                        p->lost_records, p->lost_records == 1 ? "" : "s");
            for (size_t k = 0; k < p->ngaps && k < VT_GAPS_SHOWN; k++)
                fprintf(f, "%s%s", k ? "; " : ": ", vt_gap_text(&p->gaps[k], gtx, sizeof gtx));
            if (p->ngaps > VT_GAPS_SHOWN)
                fprintf(f, "; and %zu more gap%s", p->ngaps - VT_GAPS_SHOWN, p->ngaps == VT_GAPS_SHOWN + 1 ? "" : "s");
            fputs(" (--allow-gaps passes it)\n", f);
            gate_end(f);
        }
    }

    /* oom */
    gt = gate_add(g, t, "oom");
    uint64_t kept = p->nooms + p->ooms_dropped;
    uint64_t ooms = oom_calls > kept ? oom_calls : kept;
    if (ooms && !o->allow_oom) {
        f = gate_say(gt, VT_GATE_FAIL);
        fprintf(f, "%" PRIu64 " allocation%s failed with out-of-memory", ooms, ooms == 1 ? "" : "s");
        if (p->nooms) {
            const vt_oom *m = &p->ooms[0];
            fprintf(f, "; the first: %s of %s during step %" PRIu64 " (%s, device %d)", m->api,
                    vt_size_fmt(m->requested_bytes, b1, sizeof b1), vt_during_step(m->step), vt_kind_name(m->kind), m->device);
        }
        fputs(" (--allow-oom passes it)\n", f);
        gate_end(f);
    }

    /* steps: with too few steps after warm-up, no site can be called a leak; that
     * matters unless the process ended with everything given back */
    gt = gate_add(g, t, "steps");
    uint64_t all = vt_process_steps(p);
    size_t judged = p->nsteps > pr->warmup && all > pr->warmup_steps ? (size_t)(all - pr->warmup_steps) : 0;
    int all_back = p->exited && !p->unfreed_exit_bytes;
    if (judged < VT_JUDGE_MIN_STEPS && !all_back && !o->allow_short) {
        f = gate_say(gt, VT_GATE_INCONCLUSIVE);
        if (vt_process_no_steps(p))   /* nothing at all to judge: worded as the reports do */
            fprintf(f, VT_NO_STEPS_LABEL " (0 steps), and %s; ",
                    p->exited ? "it left memory unfreed at exit" : "its end is unknown (no exit record)");
        else
            fprintf(f, "too few steps to judge: %zu step%s after warm-up (%zu in all), a leak needs at least %d, "
                    "and %s; ", judged, judged == 1 ? "" : "s", (size_t)all, VT_JUDGE_MIN_STEPS,
                    p->exited ? "it left memory unfreed at exit" : "its end is unknown (no exit record)");
        char b4[32];
        if (p->exited) fprintf(f, "%s stayed unfreed; ", vt_size_fmt(p->unfreed_exit_bytes, b4, sizeof b4));
        char nm[512];
        if (vt_step_range_unmatched(p, nm, sizeof nm))
            fprintf(f, "%s (--allow-short passes it)\n", nm);
        else if (p->step_marked && pr->warmup_steps)   /* it marks steps: it ran too few of them */
            fputs("run more steps, or a shorter --warmup (--allow-short passes it)\n", f);
        else if (p->step_marked)   /* no warm-up to shorten */
            fputs("run more steps (--allow-short passes it)\n", f);
        else
            fputs("mark steps (vramtrace_step(), or a framework's step hook), or snapshot more often "
                  "(vramtrace run --interval MS), or run longer (--allow-short passes it)\n", f);
        gate_end(f);
    }

    /* leak */
    gt = gate_add(g, t, "leak");
    f = NULL;
    for (size_t s = 0; s < pr->nsites; s++) {
        vt_site_result *r = &pr->sites[s];
        if (r->st.verdict != VT_LEAK || !(r->st.slope > (double)o->max_growth)) continue;
        if (!f) f = gate_say(gt, VT_GATE_FAIL);
        char fl[64], since[128], base[96];
        vt_growth_since(&r->st, 1, since, sizeof since);
        fprintf(f, "leak %s/step (limit %s/step), leaked %s %s%s%s (%s%s, device %d)\n    at ",
                vt_size_fmt_signed(r->st.slope, b1, sizeof b1), vt_size_fmt(o->max_growth, b2, sizeof b2),
                vt_size_fmt(r->st.leaked_bytes, b3, sizeof b3), vt_leaked_since(&r->st, base, sizeof base),
                since[0] ? ", " : "",
                since, vt_kind_name(r->kind), vt_flags_text(r->flags, " ", fl, sizeof fl), r->device);
        site_frames(f, a, r);
    }
    if (f) gate_end(f);

    /* unfreed */
    if (o->has_max_unfreed) {
        gt = gate_add(g, t, "unfreed");
        if (p->unfreed_exit_bytes > o->max_unfreed) {
            f = gate_say(gt, VT_GATE_FAIL);
            fprintf(f, "unfreed at exit %s (limit %s) in %zu site%s\n",
                    vt_size_fmt(p->unfreed_exit_bytes, b1, sizeof b1), vt_size_fmt(o->max_unfreed, b2, sizeof b2),
                    pr->unfreed_sites, pr->unfreed_sites == 1 ? "" : "s");
            size_t shown = 0;
            for (size_t s = 0; s < pr->nsites && shown < 3; s++) {
                vt_site_result *r = &pr->sites[s];
                if (!r->unfreed_exit) continue;
                shown++;
                fprintf(f, "    %s at ", vt_size_fmt(r->unfreed_exit, b1, sizeof b1));
                site_frames(f, a, r);
            }
            gate_end(f);
        }
    }

    /* peak */
    if (o->has_max_peak) {
        gt = gate_add(g, t, "peak");
        if (p->peak_bytes > o->max_peak) {
            f = gate_say(gt, VT_GATE_FAIL);
            fprintf(f, "peak %s (limit %s); largest sites by their own peak, not necessarily held at once:\n",
                    vt_size_fmt(p->peak_bytes, b1, sizeof b1), vt_size_fmt(o->max_peak, b2, sizeof b2));
            size_t top[3];   /* the three largest sites by peak */
            int ntop = 0;
            for (size_t k = 0; k < pr->nsites; k++) {
                if (!pr->sites[k].peak_bytes) continue;
                int pos = ntop < 3 ? ntop++ : 3;
                while (pos > 0 && pr->sites[k].peak_bytes > pr->sites[top[pos - 1]].peak_bytes) {
                    if (pos < 3) top[pos] = top[pos - 1];
                    pos--;
                }
                if (pos < 3) top[pos] = k;
            }
            for (int k = 0; k < ntop; k++) {
                fprintf(f, "    %s at ", vt_size_fmt(pr->sites[top[k]].peak_bytes, b1, sizeof b1));
                site_frames(f, a, &pr->sites[top[k]]);
            }
            gate_end(f);
        }
    }
}

static void judge_baseline(gates *g, vt_analysis *a, vt_analysis *base, const vt_check_opts *o)
{
    char t[200], b1[32], b2[32];
    int matched = 0;
    for (size_t i = 0; i < a->n; i++) {
        const vt_proc_result *bp = baseline_for(a, base, i);
        if (!bp) continue;
        matched = 1;
        vt_gate *gt = gate_add(g, vt_process_title(a->procs[i].p, t, sizeof t), "peak_increase");
        uint64_t now = a->procs[i].p->peak_bytes, was = bp->p->peak_bytes;
        double pct = was ? ((double)now - (double)was) * 100.0 / (double)was : (now ? 1e300 : 0);
        if (pct > o->max_peak_increase) {
            FILE *f = gate_say(gt, VT_GATE_FAIL);
            fprintf(f, "peak %s is %.1f%% above the baseline's %s (limit %.1f%%)\n", vt_size_fmt(now, b1, sizeof b1),
                    pct, vt_size_fmt(was, b2, sizeof b2), o->max_peak_increase);
            gate_end(f);
        }
    }
    if (matched) return;
    uint64_t now = 0, was = 0;
    for (size_t i = 0; i < a->n; i++) if (a->procs[i].p->peak_bytes > now) now = a->procs[i].p->peak_bytes;
    for (size_t i = 0; i < base->n; i++) if (base->procs[i].p->peak_bytes > was) was = base->procs[i].p->peak_bytes;
    double pct = was ? ((double)now - (double)was) * 100.0 / (double)was : (now ? 1e300 : 0);
    vt_gate *gt = gate_add(g, "all processes", "peak_increase");
    if (pct > o->max_peak_increase) {
        FILE *f = gate_say(gt, VT_GATE_FAIL);
        fprintf(f, "largest peak %s is %.1f%% above the baseline's %s (limit %.1f%%)\n",
                vt_size_fmt(now, b1, sizeof b1), pct, vt_size_fmt(was, b2, sizeof b2), o->max_peak_increase);
        gate_end(f);
    }
}

/* "1 process, 30 steps", "2 processes, 30 steps each" or "3 processes, 4 to 30
 * steps": each process's own steps, never summed across processes. */
static void processes_steps(const vt_analysis *a, char *buf, size_t cap)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t k = vt_process_steps(a->procs[i].p);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    if (!a->n) lo = 0;
    if (a->n <= 1 || lo == hi)
        snprintf(buf, cap, "%zu process%s, %" PRIu64 " step%s%s", a->n, a->n == 1 ? "" : "es", hi, hi == 1 ? "" : "s",
                 a->n > 1 ? " each" : "");
    else
        snprintf(buf, cap, "%zu processes, %" PRIu64 " to %" PRIu64 " steps", a->n, lo, hi);
}

int vt_check(vt_analysis *a, vt_analysis *base, const vt_check_opts *o, FILE *out)
{
    gates g = {vt_xcalloc(a->n * VT_GATES_PER_PROCESS + 2, sizeof *g.v), 0};
    if (a->rs->skipped_files) {   /* files that could not be read: what was in them was not judged */
        vt_gate *gt = gate_add(&g, "all files", "readable");
        if (!o->allow_unreadable) {
            FILE *f = gate_say(gt, VT_GATE_FAIL);
            fprintf(f, "%zu snapshot file%s could not be read (noted above; the first: %s): a process in %s was not "
                    "judged (--allow-unreadable passes it)\n", a->rs->skipped_files,
                    a->rs->skipped_files == 1 ? "" : "s", a->rs->first_skipped, a->rs->skipped_files == 1 ? "it" : "them");
            gate_end(f);
        }
    }
    for (size_t i = 0; i < a->n; i++) judge_process(&g, a, i, o);
    if (base && o->has_max_peak_increase) judge_baseline(&g, a, base, o);

    size_t fails = 0, unsure = 0;
    for (size_t k = 0; k < g.n; k++) {
        const vt_gate *gt = &g.v[k];
        if (gt->state == VT_GATE_PASS) continue;
        if (gt->state == VT_GATE_FAIL) fails++;
        else unsure++;
        /* "FAIL <process>: <text>": a leak gate with several sites repeats the prefix */
        const char *s = gt->text;
        const char *tag = gt->state == VT_GATE_FAIL ? "FAIL" : "INCONCLUSIVE";
        while (*s) {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);
            if (strncmp(s, "    ", 4) != 0) fprintf(out, "%s %s: ", tag, gt->process);
            fwrite(s, 1, len, out);
            s += len;
        }
    }
    int rc = fails ? VT_CHECK_FAILED : unsure ? VT_CHECK_INCONCLUSIVE : VT_CHECK_PASS;
    char runs[128];
    processes_steps(a, runs, sizeof runs);
    if (fails)
        fprintf(out, "vramtrace check: %zu problem%s%s\n", fails, fails == 1 ? "" : "s",
                unsure ? ", and some processes could not be judged" : "");
    else if (unsure)
        fprintf(out, "vramtrace check: inconclusive (%s): %zu could not be judged\n", runs, unsure);
    else
        fprintf(out, "vramtrace check: passed (%s)\n", runs);
    if (o->junit && vt_junit_write(o->junit, o->junit_path, g.v, g.n) < 0) rc = VT_CHECK_ERROR;
    for (size_t k = 0; k < g.n; k++) free(g.v[k].text);
    free(g.v);
    return rc;
}
