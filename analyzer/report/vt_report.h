/* vt_report.h — the three report formats of `vramtrace report --format
 * text|json|html` (keys and metrics: docs/metrics.md), plus helpers shared with
 * check, diff and
 * the exports (vt_site_view.h).
 *
 * All writers print to a stdio stream and return 0, or -1 if the stream failed
 * (ferror). They never change the analysis (symbolization fills its cache only).
 * Single-threaded.
 */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include <stdio.h>

#include "vt_analysis.h"
#include "vt_site_view.h"

/* One screen of text, biggest problems first; ANSI colour when color != 0. */
int vt_report_text(FILE *f, vt_analysis *a, int color);

/* One JSON object: its keys are documented in docs/metrics.md. */
int vt_report_json(FILE *f, vt_analysis *a);

/* One self-contained HTML file: its data, its own scripts and styles inline, no network
 * (docs/html-report.md). */
int vt_report_html(FILE *f, vt_analysis *a);

#endif /* VT_REPORT_H */
