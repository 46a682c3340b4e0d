/* vt_json.h — a strict, non-allocating JSON pull parser for one snapshot line.
 *
 * Why not a DOM (jansson's json_loadb): the snapshot format requires integers up
 * to 2^64-1, which jansson's json_int_t (long long) rejects, and a DOM that hashes
 * every object cannot read 10,000 snapshots x 500 sites (about 1 GB of JSON) in
 * the 3 s of issue 7. This cursor walks the text once (RFC 8259 grammar), decodes
 * only what the caller asks for, and reports the first problem as a message.
 *
 * Usage: vt_json_init over a buffer, then vt_json_obj_begin / vt_json_obj_next
 * (keys) / typed getters / vt_json_skip (validates and skips any value), and
 * vt_json_end (only whitespace may follow). Every function returns -1 on error
 * and leaves a message in j->err (for "file:line: what"); after an error the
 * cursor must not be used again. Nesting deeper than VT_JSON_MAX_DEPTH is an
 * error (no unbounded recursion on hostile input). A cursor is owned by one
 * thread; it never allocates and never writes to the buffer.
 */
#ifndef VT_JSON_H
#define VT_JSON_H

#include <stddef.h>
#include <stdint.h>

#define VT_JSON_MAX_DEPTH 64

typedef struct vt_json {
    const char *start;          /* beginning of the text (for column numbers) */
    const char *p;              /* next unread byte */
    const char *end;            /* one past the last byte */
    int depth;                  /* open containers */
    unsigned char first[VT_JSON_MAX_DEPTH + 1]; /* 1 until a container's first member is read */
    char err[200];              /* first error, "" while none */
} vt_json;

/* Value classes returned by vt_json_peek. */
enum { VT_JSON_NONE = 0, VT_JSON_OBJECT, VT_JSON_ARRAY, VT_JSON_STRING,
       VT_JSON_NUMBER, VT_JSON_BOOL, VT_JSON_NULL, VT_JSON_BAD };

void vt_json_init(vt_json *j, const char *text, size_t len);

/* Records an error (printf format) unless one is already set; returns -1. */
int vt_json_fail(vt_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Class of the next value (skips whitespace; consumes nothing else). */
int vt_json_peek(vt_json *j);
/* "object", "array", "string", "number", "boolean", "null", "end of line", "invalid". */
const char *vt_json_class_name(int cls);

/* '{': 0 or -1. Then vt_json_obj_next: 1 with *key and *klen set to the raw key bytes
 * (escapes not decoded) and the cursor on the member's value; 0 after the closing
 * '}'; -1 on error. Arrays: vt_json_arr_begin, then vt_json_arr_next: 1 when an
 * element follows (cursor on it), 0 after ']', -1 on error. The caller must
 * consume each member's value (getter or vt_json_skip) before asking for the next. */
int vt_json_obj_begin(vt_json *j);
int vt_json_obj_next(vt_json *j, const char **key, size_t *klen);
int vt_json_arr_begin(vt_json *j);
int vt_json_arr_next(vt_json *j);

/* Typed getters: 0 on success, -1 with a message naming what was found instead.
 * u64: a JSON integer 0..2^64-1 (negative, fractional or larger values are errors).
 * i64: -2^63..2^63-1. f64: any JSON number. boolean: true/false. */
int vt_json_u64(vt_json *j, uint64_t *out);
int vt_json_i64(vt_json *j, int64_t *out);
int vt_json_f64(vt_json *j, double *out);
int vt_json_bool(vt_json *j, int *out);

/* If the next value is null, consumes it and returns 1; otherwise 0 (nothing consumed). */
int vt_json_null(vt_json *j);

/* A string, decoded (escapes, \uXXXX incl. surrogate pairs, to UTF-8) into buf of
 * cap bytes, NUL-terminated; *len gets the decoded length. Too long for buf is an
 * error. 0 or -1. */
int vt_json_str(vt_json *j, char *buf, size_t cap, size_t *len);

/* Validates and skips the next value of any class. 0 or -1. */
int vt_json_skip(vt_json *j);

/* Only whitespace may remain. 0 or -1. */
int vt_json_end(vt_json *j);

/* 1 if the raw key (k, n) equals the C string lit. */
#define VT_JSON_KEY(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), (n)) == 0)

#endif /* VT_JSON_H */
