/* vt_pickle.h — a writer of Python pickles, protocol 4 (PEP 3154), limited to
 * the opcodes that PyTorch's memory_viz JavaScript unpickler understands
 * (torch/utils/viz/MemoryViz.js; docs: ../shared/docs/prior-art.md §1):
 * PROTO, EMPTY_DICT, EMPTY_LIST, MARK, SETITEMS, APPENDS, SHORT_BINUNICODE,
 * BINUNICODE, BININT1, BININT2, BININT, LONG1, TUPLE2, NONE,
 * NEWTRUE, NEWFALSE, MEMOIZE, LONG_BINGET, STOP. No FRAME opcodes are written
 * (framing is optional for readers).
 *
 * Usage: values are pushed in pickle order onto the unpickler's stack:
 *   vt_pk_begin(pk, f);  vt_pk_dict(pk); vt_pk_mark(pk);
 *     vt_pk_str(pk, "key"); vt_pk_int(pk, 5); ...   vt_pk_setitems(pk);
 *   vt_pk_end(pk);       (writes STOP)
 * Memo: vt_pk_memoize stores the value on top of the stack and returns its memo
 * index; vt_pk_get pushes that object again (frame lists are shared this way).
 * Errors: write failures are sticky in pk->err (checked by vt_pk_end, which
 * returns -1). Strings must be valid UTF-8 (pickle decodes them as such);
 * vt_pk_str replaces bytes that are not with '?'. Single-threaded; the writer
 * owns nothing but its position and counters.
 */
#ifndef VT_PICKLE_H
#define VT_PICKLE_H

#include <stdint.h>
#include <stdio.h>

typedef struct vt_pickle {
    FILE *f;
    uint32_t memo;              /* next memo index */
    int err;
} vt_pickle;

void vt_pk_begin(vt_pickle *pk, FILE *f);   /* PROTO 4 */
int vt_pk_end(vt_pickle *pk);               /* STOP; 0, or -1 if any write failed */

void vt_pk_dict(vt_pickle *pk);             /* EMPTY_DICT */
void vt_pk_list(vt_pickle *pk);             /* EMPTY_LIST */
void vt_pk_mark(vt_pickle *pk);             /* MARK */
void vt_pk_setitems(vt_pickle *pk);         /* SETITEMS: pops key/value pairs to the mark into the dict below */
void vt_pk_appends(vt_pickle *pk);          /* APPENDS: pops values to the mark into the list below */
void vt_pk_tuple2(vt_pickle *pk);           /* TUPLE2 of the two topmost values */

void vt_pk_none(vt_pickle *pk);
void vt_pk_bool(vt_pickle *pk, int v);
void vt_pk_int(vt_pickle *pk, int64_t v);   /* BININT1/2/BININT, or LONG1 beyond 32 bits */
void vt_pk_uint(vt_pickle *pk, uint64_t v); /* LONG1 for values above 2^31-1 */
void vt_pk_str(vt_pickle *pk, const char *s);

uint32_t vt_pk_memoize(vt_pickle *pk);      /* MEMOIZE; returns the index */
void vt_pk_get(vt_pickle *pk, uint32_t idx);/* LONG_BINGET */

/* Key then value helpers for dicts under construction. */
void vt_pk_kv_str(vt_pickle *pk, const char *k, const char *v);
void vt_pk_kv_int(vt_pickle *pk, const char *k, int64_t v);
void vt_pk_kv_uint(vt_pickle *pk, const char *k, uint64_t v);

#endif /* VT_PICKLE_H */
