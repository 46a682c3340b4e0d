/* vt_diff.h — `vramtrace diff BASE NEW`: what changed between two runs.
 *
 * Totals over all processes of each run (peak = sum of process peaks, unfreed at
 * exit, leaking sites), then per-site changes. Sites are matched across runs by
 * their symbolized frames, never by stack ids (ids are per file): first by kind
 * plus up to 8 frames as "function file:line" (or module+offset when there is
 * no symbol), then, for sites still unmatched, by kind plus function names only
 * (survives edits that move lines). Sites of several processes with the same key
 * are summed. Single-threaded.
 */
#ifndef VT_DIFF_H
#define VT_DIFF_H

#include <stdio.h>

#include "vt_analysis.h"

/* Prints the comparison to out. Returns 0 (or -1 if out failed). */
int vt_diff(vt_analysis *base, vt_analysis *now, FILE *out);

#endif /* VT_DIFF_H */
