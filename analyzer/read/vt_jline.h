/* vt_jline.h — one snapshot line parsed with jansson, and typed reads of its
 * values with messages fit for "file:line: what".
 *
 * The snapshot format (docs/snapshot-format.md) is JSON Lines whose integers are
 * all at most 2^63-1, so jansson's json_int_t (long long) holds every one of
 * them and the reader needs no JSON code of its own: each line is parsed by
 * json_loadb (RFC 8259, UTF-8 checked, duplicate keys rejected, nesting limited
 * by jansson's own JSON_PARSER_MAX_DEPTH of 2048, which its recursive-descent
 * parser reaches in well under 1 MiB of stack) into a tree that lives only
 * while that line is folded into the model.
 *
 * Messages are written into a caller's buffer (err, cap bytes, always
 * NUL-terminated) and name what was found, e.g. "expected a non-negative
 * integer, got string", "negative value -5", "1.5 is not an integer",
 * "column 31: integer exceeds 2^63-1 (too big integer near '999...')".
 * Ownership: vt_jline_load returns a new reference (json_decref it); the other
 * functions borrow. Thread safety: jansson trees are not shared between
 * threads; these functions keep no state.
 */
#ifndef VT_JLINE_H
#define VT_JLINE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Parses len bytes (one line, without its '\n') as one JSON object or array.
 * Returns the root, or NULL with a message in err: "column N: <jansson's text>",
 * "column N: integer exceeds 2^63-1 (...)", "column N: nesting deeper than 2048
 * levels (...)". The caller checks the line length before calling (the tree
 * takes several times the line's bytes). */
json_t *vt_jline_load(const char *line, size_t len, char *err, size_t cap);

/* "object", "array", "string", "integer", "real number", "boolean", "null",
 * or "nothing" for NULL (a missing key). */
const char *vt_jtype(const json_t *v);

/* A JSON integer 0..2^63-1 into *out: 0, or -1 with a message (wrong type,
 * negative, not an integer). *out is unchanged on failure. */
int vt_ju64(const json_t *v, uint64_t *out, char *err, size_t cap);

/* A JSON integer -2^63..2^63-1: 0 or -1 with a message. */
int vt_ji64(const json_t *v, int64_t *out, char *err, size_t cap);

/* Any JSON number (integer or real) as a double: 0 or -1. */
int vt_jf64(const json_t *v, double *out, char *err, size_t cap);

/* true/false as 1/0: 0 or -1. */
int vt_jbool(const json_t *v, int *out, char *err, size_t cap);

/* A string of at most max bytes (UTF-8, no NUL inside: jansson rejects \u0000):
 * returns it (borrowed from v), or NULL with a message. */
const char *vt_jstr(const json_t *v, size_t max, char *err, size_t cap);

#endif /* VT_JLINE_H */
