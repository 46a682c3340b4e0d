/* vt_export_collapsed.c — folded stacks for flamegraph.pl and speedscope
 * (vt_export.h).
 *
 * Design: one line per merged site, "root;...;leaf BYTES", root first (the
 * reverse of the snapshot's innermost-first frames), the leaf being the
 * function that called CUDA, with its source line when known ("step (train.c:42)"):
 * flame graphs merge equal names, and two allocation sites in one function are two
 * sites. With several processes each line starts with the
 * process ("rank 1, pid 42 on node7") so one graph shows them apart. Frame
 * names are the exports' names (vt_export_frame_name; Python frames interleaved
 * as the reports show them, "train.py:95 in remember_batch"); ';' inside a name becomes
 * ':' and control bytes become ' ', so a line always splits back into its frames
 * and the count after the last space. Render:
 *   flamegraph.pl --countname bytes --colors mem out.folded > out.svg
 */
#include "vt_export.h"

#include <inttypes.h>
#include <string.h>

#include "vt_report.h"

const char *vt_export_frame_name(const vt_sym *s)
{
    if (s->python) return s->label;
    return s->function ? s->function : s->label;
}

static void put_name(FILE *f, const char *s)
{
    for (; *s; s++) fputc(*s == ';' ? ':' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
}

int vt_export_collapsed(FILE *f, vt_analysis *a, vt_metric m, char *err, size_t cap)
{
    char title[512];
    for (size_t i = 0; i < a->n; i++) {
        vt_proc_result *pr = &a->procs[i];
        for (size_t k = 0; k < pr->nsites; k++) {
            const vt_site_result *r = &pr->sites[k];
            uint64_t v = m == VT_METRIC_LIVE ? r->st.last_live : m == VT_METRIC_PEAK ? r->peak_bytes
                       : r->st.verdict == VT_LEAK ? r->st.leaked_bytes : 0;
            if (!v) continue;
            int sep = 0;
            if (a->n > 1) {
                put_name(f, vt_process_title(pr->p, title, sizeof title));
                sep = 1;
            }
            for (uint32_t j = vt_site_nframes(r); j-- > 0;) {
                if (sep) fputc(';', f);
                const vt_sym *s = vt_site_frame(a, r, j);
                put_name(f, vt_export_frame_name(s));
                if (j == 0 && !s->python && s->function && s->file && s->line > 0) {
                    /* the leaf (the CUDA caller) with its line: two allocation sites
                     * in one function stay two boxes, as the report keeps them apart */
                    const char *base = strrchr(s->file, '/');
                    fputs(" (", f);
                    put_name(f, base ? base + 1 : s->file);
                    fprintf(f, ":%d)", s->line);
                }
                sep = 1;
            }
            if (!sep) fputs("(no frames)", f);
            fprintf(f, " %" PRIu64 "\n", v);
        }
    }
    if (ferror(f)) {
        snprintf(err, cap, "write failed");
        return -1;
    }
    return 0;
}
