/* vt_jline.c — jansson-based line parsing and typed reads (see vt_jline.h).
 *
 * Design: a thin layer over json_loadb; the only work here is turning
 * jansson's error codes and value types into the reader's messages.
 */
#include "vt_jline.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

json_t *vt_jline_load(const char *line, size_t len, char *err, size_t cap)
{
    json_error_t e;
    /* duplicate keys would make a record mean two things: reject them */
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (root) return root;
    long col = (long)e.position;   /* bytes read when the error was found */
    switch (json_error_code(&e)) {
    case json_error_numeric_overflow:
        snprintf(err, cap, "column %ld: %s exceeds 2^63-1 (%s)", col,
                 strncmp(e.text, "real", 4) == 0 ? "number" : "integer", e.text);
        break;
    case json_error_stack_overflow:
        snprintf(err, cap, "column %ld: nesting deeper than 2048 levels (%s)", col, e.text);
        break;
    case json_error_out_of_memory:
        snprintf(err, cap, "out of memory parsing the line");
        break;
    default:
        snprintf(err, cap, "column %ld: %s", col, e.text);
        break;
    }
    return NULL;
}

const char *vt_jtype(const json_t *v)
{
    if (!v) return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "real number";
    case JSON_TRUE: case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

static int not_integer(const json_t *v, const char *wanted, char *err, size_t cap)
{
    if (json_is_real(v)) snprintf(err, cap, "%.17g is not an integer", json_real_value(v));
    else snprintf(err, cap, "expected %s, got %s", wanted, vt_jtype(v));
    return -1;
}

int vt_ju64(const json_t *v, uint64_t *out, char *err, size_t cap)
{
    if (!json_is_integer(v)) return not_integer(v, "a non-negative integer", err, cap);
    json_int_t x = json_integer_value(v);
    if (x < 0) {
        snprintf(err, cap, "negative value %" PRId64 " (expected a non-negative integer)", (int64_t)x);
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

int vt_ji64(const json_t *v, int64_t *out, char *err, size_t cap)
{
    if (!json_is_integer(v)) return not_integer(v, "an integer", err, cap);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

int vt_jf64(const json_t *v, double *out, char *err, size_t cap)
{
    if (!json_is_number(v)) {
        snprintf(err, cap, "expected a number, got %s", vt_jtype(v));
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

int vt_jbool(const json_t *v, int *out, char *err, size_t cap)
{
    if (!json_is_boolean(v)) {
        snprintf(err, cap, "expected a boolean, got %s", vt_jtype(v));
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

const char *vt_jstr(const json_t *v, size_t max, char *err, size_t cap)
{
    if (!json_is_string(v)) {
        snprintf(err, cap, "expected a string, got %s", vt_jtype(v));
        return NULL;
    }
    if (json_string_length(v) > max) {
        snprintf(err, cap, "string longer than %zu bytes", max);
        return NULL;
    }
    return json_string_value(v);
}
