/* vt_diff.h — `vramtrace diff BASE NEW`: what changed between two runs.
 *
 * Totals over all processes of each run (peak = sum of process peaks, unfreed at
 * exit, leaking sites), then per-site changes. Sites are matched across runs by
 * their symbolized frames, never by stack ids (ids are per file): first by kind
 * plus up to 8 frames as "function file:line" (or module+offset when there is
 * no symbol), then, for sites still unmatched, by kind plus function names only
 * (survives edits that move lines). Sites of several processes with the same key
 * are summed. Single-threaded.
 *
 * The output names its two runs first (text: a "base" and a "new" line with the
 * paths as given and their process counts; JSON: the "base" and "new" objects), so
 * every "was -> now" figure reads base -> new.
 *
 * JSON (--format json): {"format": "vramtrace-diff", "version": 1,
 *   "base": {"path", "processes", "peak_bytes", "unfreed_at_exit_bytes", "leaking_sites"},
 *   "new": {the same},
 *   "changes": [{"change": "new"|"gone"|"changed", "title",
 *                "base": null | {"verdict", "peak_bytes", "unfreed_at_exit_bytes", "growth_bytes_per_step"},
 *                "new": null | {the same}}]}
 * in the text's order, every changed site (the text shows the first 20).
 */
#ifndef VT_DIFF_H
#define VT_DIFF_H

#include <stdio.h>

#include "vt_analysis.h"

/* Prints the comparison of base (read from base_path, as the user named it) with
 * now (from new_path) to out, as text, or as JSON when json is non-zero. Returns 0
 * (or -1 if out failed). */
int vt_diff(vt_analysis *base, vt_analysis *now, const char *base_path, const char *new_path, int json, FILE *out);

#endif /* VT_DIFF_H */
