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
/* One gauge: its key (NUL-terminated) and value. */
typedef struct vt_annot_entry {
    char   key[VT_ANNOT_KEY_MAX + 1];
    double val;
} vt_annot_entry;

/* What a file's previous record said of the gauges: n entries, in the order they
 * were first set. Zero-initialised = none. */
typedef struct vt_annot_vals {
    int            n;
    vt_annot_entry e[VT_ANNOT_MAX];
} vt_annot_vals;

/* Copies the gauges (when a snapshot is collected): a malloc'ed array of *n entries
 * in the order they were first set (the caller frees it), or NULL with *n = 0 when
 * none is set or there is no memory for the copy (the record then carries none). */
vt_annot_entry *vt_annot_copy(int *n);

/* Appends ,"annotations":{...} for the n gauges cur to b: every one when complete
 * (a complete record), else only those whose value differs from last or that last
 * lacks (format version 4: an absent key is unchanged); nothing when none is
 * written. Then makes last hold cur (last is the caller's record of what the
 * current file says; the writer's, under its output lock). */
void vt_annot_format(vt_buf *b, const vt_annot_entry *cur, int n, vt_annot_vals *last, int complete);

/* Forgets every gauge (fork child). */
void vt_annot_reset(void);

#endif
