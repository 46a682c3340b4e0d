/* vt_lineparse.h — parses the lines of one snapshot file with jansson on worker
 * threads and hands every line back to the caller's thread in file order.
 *
 * Why: jansson's parse is about 80 % of reading a snapshot file
 * (docs/performance.md "Analyzer reading speed"); folding the trees into the
 * model is sequential, but parsing lines is independent work.
 *
 * Shapes: the caller pushes whole lines (without '\n', at most
 * VT_LP_MAX_LINE bytes; copied) with vt_lp_push; lines are grouped in batches
 * (about VT_LP_BATCH bytes), each parsed by one worker with vt_jline_load into
 * its own arena (vt_jarena.h). Up to max(4, 2 x threads) batches are in flight; when the
 * ring is full, vt_lp_push waits for the oldest batch and calls fold() for each
 * of its lines in order, on the calling thread. vt_lp_finish does the same for
 * every batch left. fold(ctx, text, len, root, err): root is the parsed tree
 * (borrowed, valid during the call only, never json_decref'd), or NULL with err
 * (vt_jline_load's message). A non-zero return from fold stops everything: it is
 * returned by this and every later vt_lp_push / vt_lp_finish, which fold nothing
 * more.
 *
 * Memory: the batches in flight, line copies plus their parsed trees (about 13
 * times a batch's bytes each, ~200 KiB), independent of the file's size.
 * Errors: vt_lp_new returns NULL when no thread could be started (the caller
 * parses on its own thread). Thread safety: one vt_lp per file, used by one
 * thread; the workers touch only batches handed to them.
 */
#ifndef VT_LINEPARSE_H
#define VT_LINEPARSE_H

#include <jansson.h>
#include <stddef.h>

#define VT_LP_BATCH    ((size_t)16 << 10)   /* bytes of lines per batch (at least one line) */
#define VT_LP_MAX_LINE ((size_t)8 << 20)    /* longer lines: the caller parses them itself */
#define VT_LP_MAX_THREADS 8
#define VT_LP_MAX_SLOTS (2 * VT_LP_MAX_THREADS) /* batches in flight: 2 per thread, at least 4 */

typedef int (*vt_lp_fold_fn)(void *ctx, const char *text, size_t len, json_t *root, const char *err);

typedef struct vt_lp vt_lp;

/* Starts nthreads (1..VT_LP_MAX_THREADS) parser threads. NULL on failure. */
vt_lp *vt_lp_new(int nthreads);

/* Adds one line (copied). 0, or fold's non-zero result. */
int vt_lp_push(vt_lp *lp, const char *line, size_t len, vt_lp_fold_fn fold, void *ctx);

/* Parses what is left and folds every pushed line not folded yet, in order. The
 * pool stays usable (lines pushed later follow). 0, or fold's non-zero result. */
int vt_lp_finish(vt_lp *lp, vt_lp_fold_fn fold, void *ctx);

/* Waits for the workers to finish what they hold, stops and joins them, frees
 * everything (folding nothing more). NULL is a no-op. */
void vt_lp_free(vt_lp *lp);

/* Parser threads to use on this machine: 0 with fewer than 2 CPUs this process may
 * run on (sched_getaffinity; online CPUs where that fails), else
 * min(those CPUs, VT_LP_MAX_THREADS). */
int vt_lp_default_threads(void);

#endif /* VT_LINEPARSE_H */
