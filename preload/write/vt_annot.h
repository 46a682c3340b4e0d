/* vt_annot.h — named gauges a program attaches to its snapshots (vramtrace_annotate).
 *
 * A small fixed table (VT_ANNOT_MAX keys) of key -> latest value, set by the client API
 * (e.g. the Python helper records torch.cuda.memory_allocated/reserved each step) and
 * written into every later snapshot record as "annotations":{"key":value,...}
 * (docs/snapshot-format.md). Thread safety: both functions take the table's own mutex;
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
/* Appends ,"annotations":{...} to b (nothing when no gauge was ever set). */
void vt_annot_format(vt_buf *b);
/* Forgets every gauge (fork child). */
void vt_annot_reset(void);

#endif
