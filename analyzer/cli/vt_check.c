/* vt_check.c — CI limits over an analysis (contract in vt_check.h). */
#include "vt_check.h"

#include <inttypes.h>

#include "vt_format.h"
#include "vt_report.h"
#include "vt_size.h"

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

int vt_check(vt_analysis *a, vt_analysis *base, const vt_check_opts *o, FILE *out)
{
    size_t fails = 0;
    char t[200], b1[32], b2[32], b3[32];
    for (size_t i = 0; i < a->n; i++) {
        vt_proc_result *pr = &a->procs[i];
        vt_process *p = pr->p;
        vt_process_title(p, t, sizeof t);
        /* A process whose every allocation call failed traced nothing: no GPU, or no
         * CUDA runtime on the library path. Passing it would let a CI job without a
         * device pass silently. */
        uint64_t ok_calls = 0, failed_calls = 0;
        for (size_t d = 0; d < p->ndevices; d++) {
            ok_calls += p->devices[d].alloc_calls;
            failed_calls += p->devices[d].failed_calls;
        }
        if (!p->nsnapshots && !p->exited)   /* a header, then nothing: it died at once */
            fprintf(out, "note %s: wrote no snapshot and no exit record (killed or crashed right after "
                    "its first CUDA allocation?): nothing of it was judged\n", t);
        if (failed_calls && !ok_calls) {
            fails++;
            fprintf(out, "FAIL %s: nothing was traced: every allocation call failed (%" PRIu64
                    " failed, none succeeded); is there a GPU, and a CUDA runtime on the library path?\n",
                    t, failed_calls);
        }
        for (size_t s = 0; s < pr->nsites; s++) {
            vt_site_result *r = &pr->sites[s];
            if (r->st.verdict != VT_LEAK || !(r->st.slope > (double)o->max_growth)) continue;
            fails++;
            size_t w = r->st.warmup < p->nsteps ? r->st.warmup : (p->nsteps ? p->nsteps - 1 : 0);
            fprintf(out, "FAIL %s: leak %s/step (limit %s/step), leaked %s since step %" PRIu64
                    " (the end of warm-up; growing since step %" PRIu64 ") (%s, device %d)\n    at ",
                    t, vt_size_fmt_signed(r->st.slope, b1, sizeof b1), vt_size_fmt(o->max_growth, b2, sizeof b2),
                    vt_size_fmt(r->st.leaked_bytes, b3, sizeof b3), p->nsteps ? p->steps[w] : 0,
                    r->st.first_growth_step, vt_kind_name(r->kind), r->device);
            site_frames(out, a, r);
        }
        if (o->has_max_unfreed && p->unfreed_exit_bytes > o->max_unfreed) {
            fails++;
            fprintf(out, "FAIL %s: unfreed at exit %s (limit %s) in %zu site%s\n", t,
                    vt_size_fmt(p->unfreed_exit_bytes, b1, sizeof b1), vt_size_fmt(o->max_unfreed, b2, sizeof b2),
                    pr->unfreed_sites, pr->unfreed_sites == 1 ? "" : "s");
            size_t shown = 0;
            for (size_t s = 0; s < pr->nsites && shown < 3; s++) {
                vt_site_result *r = &pr->sites[s];
                if (!r->unfreed_exit) continue;
                shown++;
                fprintf(out, "    %s at ", vt_size_fmt(r->unfreed_exit, b1, sizeof b1));
                site_frames(out, a, r);
            }
        }
        if (o->has_max_peak && p->peak_bytes > o->max_peak) {
            fails++;
            fprintf(out, "FAIL %s: peak %s (limit %s); largest sites by their own peak, not "
                    "necessarily held at once:\n", t, vt_size_fmt(p->peak_bytes, b1, sizeof b1),
                    vt_size_fmt(o->max_peak, b2, sizeof b2));
            /* the three largest sites by peak */
            size_t top[3];
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
                fprintf(out, "    %s at ", vt_size_fmt(pr->sites[top[k]].peak_bytes, b1, sizeof b1));
                site_frames(out, a, &pr->sites[top[k]]);
            }
        }
    }
    if (base && o->has_max_peak_increase) {
        int matched = 0;
        for (size_t i = 0; i < a->n; i++) {
            const vt_proc_result *bp = baseline_for(a, base, i);
            if (!bp) continue;
            matched = 1;
            uint64_t now = a->procs[i].p->peak_bytes, was = bp->p->peak_bytes;
            double pct = was ? ((double)now - (double)was) * 100.0 / (double)was : (now ? 1e300 : 0);
            if (pct > o->max_peak_increase) {
                fails++;
                fprintf(out, "FAIL %s: peak %s is %.1f%% above the baseline's %s (limit %.1f%%)\n",
                        vt_process_title(a->procs[i].p, t, sizeof t), vt_size_fmt(now, b1, sizeof b1), pct,
                        vt_size_fmt(was, b2, sizeof b2), o->max_peak_increase);
            }
        }
        if (!matched) {
            uint64_t now = 0, was = 0;
            for (size_t i = 0; i < a->n; i++) if (a->procs[i].p->peak_bytes > now) now = a->procs[i].p->peak_bytes;
            for (size_t i = 0; i < base->n; i++) if (base->procs[i].p->peak_bytes > was) was = base->procs[i].p->peak_bytes;
            double pct = was ? ((double)now - (double)was) * 100.0 / (double)was : (now ? 1e300 : 0);
            if (pct > o->max_peak_increase) {
                fails++;
                fprintf(out, "FAIL largest peak %s is %.1f%% above the baseline's %s (limit %.1f%%)\n",
                        vt_size_fmt(now, b1, sizeof b1), pct, vt_size_fmt(was, b2, sizeof b2), o->max_peak_increase);
            }
        }
    }
    if (fails) {
        fprintf(out, "vramtrace check: %zu problem%s\n", fails, fails == 1 ? "" : "s");
        return 1;
    }
    size_t steps = 0;
    for (size_t i = 0; i < a->n; i++) steps += a->procs[i].p->nsteps;
    fprintf(out, "vramtrace check: passed (%zu process%s, %zu steps)\n", a->n, a->n == 1 ? "" : "es", steps);
    return 0;
}
