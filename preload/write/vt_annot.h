/* vt_annot.h — named gauges a program attaches to its snapshots (vramtrace_annotate).
 *
 * A small fixed table (VT_ANNOT_MAX keys) of key -> latest value, set by the client API
 * (e.g. the Python helper records torch.cuda.memory_allocated/reserved each step) and
 * written into later snapshot records as "annotations":{"key":value,...}, each value
 * once after it changed (docs/snapshot-format.md). Thread safety: both functions take the table's own mutex;
 * neither allocates nor calls CUDA. Not used on the hook path.
 */
#ifndef VT_ANNOT_H
#define VT_ANNOT_H

#include "vt_buf.h"

#define VT_ANNOT_MAX 64
#define VT_ANNOT_KEY_MAX 63

/* Sets gauge `key` (1..63 bytes of [A-Za-z0-9_.:-], copied) to `value` (finite).
 * Returns 0, -EINVAL (bad key or value) or -ENOSPC (VT_ANNOT_MAX keys already set). */
int  vt_annot_set(const char *key, double value);
/* The gauges at one moment: n keys (NUL-terminated) and their values, in the order
 * they were first set. Zero-initialised = none. */
typedef struct vt_annot_vals {
    int    n;
    char   key[VT_ANNOT_MAX][VT_ANNOT_KEY_MAX + 1];
    double val[VT_ANNOT_MAX];
} vt_annot_vals;

/* Copies the gauges into out (when a snapshot is collected). */
void vt_annot_copy(vt_annot_vals *out);

/* Appends ,"annotations":{...} for cur to b: every key when complete (a complete
 * record), else only the keys whose value differs from last or that last lacks
 * (format version 4: an absent key is unchanged); nothing when no key is written.
 * Then makes last a copy of cur (last is the caller's record of what the current
 * file says; the writer's, under its output lock). */
void vt_annot_format(vt_buf *b, const vt_annot_vals *cur, vt_annot_vals *last, int complete);
/* Forgets every gauge (fork child). */
void vt_annot_reset(void);

#endif
