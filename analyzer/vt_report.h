/* vt_report.h — the three report formats of `vramtrace report` (DESIGN.md
 * "Command-line contract", issue 4 item 6), plus helpers shared with check/diff.
 *
 * All writers print to a stdio stream and return 0, or -1 if the stream failed
 * (ferror). They never change the analysis (symbolization fills its cache only).
 * Single-threaded.
 */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include <stdio.h>

#include "vt_analysis.h"

/* One screen of text, biggest problems first; ANSI colour when color != 0. */
int vt_report_text(FILE *f, vt_analysis *a, int color);

/* One JSON object: the fixed keys of DESIGN.md plus documented extras. */
int vt_report_json(FILE *f, vt_analysis *a);

/* One self-contained HTML file (inline CSS and SVG, no scripts, no network). */
int vt_report_html(FILE *f, vt_analysis *a);

/* The i-th shown frame of a site (frames are already trimmed), or NULL past the end. */
const vt_sym *vt_site_frame(vt_analysis *a, const vt_site_result *r, uint32_t i);

/* Unicode block sparkline of v[0..n-1] in at most width cells (bucket maxima,
 * scaled 0..max) into buf (cap >= 3*width+1). */
char *vt_sparkline(const uint64_t *v, size_t n, size_t width, char *buf, size_t cap);

#endif /* VT_REPORT_H */
