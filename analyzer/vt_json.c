/* vt_json.c — strict JSON pull parser (see vt_json.h for the contract).
 *
 * Design: a cursor over one line; containers are tracked with a depth counter and
 * one "first member" flag per level, so commas are checked without a token
 * stream. Numbers are scanned by the RFC 8259 grammar first and converted second,
 * so "1.", "01", "-" and "1e" are rejected uniformly. vt_json_skip recurses at
 * most VT_JSON_MAX_DEPTH levels.
 */
#include "vt_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vt_json_init(vt_json *j, const char *text, size_t len)
{
    j->start = j->p = text;
    j->end = text + len;
    j->depth = 0;
    j->err[0] = 0;
}

int vt_json_fail(vt_json *j, const char *fmt, ...)
{
    if (j->err[0]) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
    return -1;
}

static void ws(vt_json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
        j->p++;
}

static long col(const vt_json *j)
{
    return (long)(j->p - j->start) + 1;
}

const char *vt_json_class_name(int cls)
{
    switch (cls) {
    case VT_JSON_OBJECT: return "object";
    case VT_JSON_ARRAY: return "array";
    case VT_JSON_STRING: return "string";
    case VT_JSON_NUMBER: return "number";
    case VT_JSON_BOOL: return "boolean";
    case VT_JSON_NULL: return "null";
    case VT_JSON_NONE: return "end of line";
    default: return "invalid JSON";
    }
}

int vt_json_peek(vt_json *j)
{
    ws(j);
    if (j->p >= j->end) return VT_JSON_NONE;
    switch (*j->p) {
    case '{': return VT_JSON_OBJECT;
    case '[': return VT_JSON_ARRAY;
    case '"': return VT_JSON_STRING;
    case 't': case 'f': return VT_JSON_BOOL;
    case 'n': return VT_JSON_NULL;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return VT_JSON_NUMBER;
    default: return VT_JSON_BAD;
    }
}

static int unexpected(vt_json *j, const char *wanted)
{
    if (j->p >= j->end) return vt_json_fail(j, "unexpected end of line (expected %s)", wanted);
    unsigned char c = (unsigned char)*j->p;
    if (c >= 0x20 && c < 0x7f)
        return vt_json_fail(j, "column %ld: unexpected '%c' (expected %s)", col(j), c, wanted);
    return vt_json_fail(j, "column %ld: unexpected byte 0x%02x (expected %s)", col(j), c, wanted);
}

static int wrong_class(vt_json *j, const char *wanted)
{
    int c = vt_json_peek(j);
    if (c == VT_JSON_BAD || c == VT_JSON_NONE) return unexpected(j, wanted);
    return vt_json_fail(j, "expected %s, got %s", wanted, vt_json_class_name(c));
}

static int open_container(vt_json *j, char ch, const char *name)
{
    ws(j);
    if (j->p >= j->end || *j->p != ch) return wrong_class(j, name);
    if (j->depth >= VT_JSON_MAX_DEPTH)
        return vt_json_fail(j, "column %ld: nesting deeper than %d levels", col(j), VT_JSON_MAX_DEPTH);
    j->p++;
    j->depth++;
    j->first[j->depth] = 1;
    return 0;
}

int vt_json_obj_begin(vt_json *j) { return open_container(j, '{', "object"); }
int vt_json_arr_begin(vt_json *j) { return open_container(j, '[', "array"); }

/* Scans a string starting at '"' without decoding; sets *b and *e to the raw body. */
static int scan_string(vt_json *j, const char **b, const char **e)
{
    if (j->p >= j->end || *j->p != '"') return unexpected(j, "string");
    const char *p = j->p + 1;
    *b = p;
    for (;;) {
        if (p >= j->end) { j->p = p; return vt_json_fail(j, "unterminated string"); }
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c < 0x20) { j->p = p; return vt_json_fail(j, "column %ld: control byte 0x%02x in string", col(j), c); }
        if (c == '\\') {
            p++;
            if (p >= j->end) { j->p = p; return vt_json_fail(j, "unterminated string"); }
            switch (*p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p++;
                break;
            case 'u':
                for (int i = 1; i <= 4; i++) {
                    if (p + i >= j->end || !strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) {
                        j->p = p;
                        return vt_json_fail(j, "column %ld: bad \\u escape", col(j));
                    }
                }
                p += 5;
                break;
            default:
                j->p = p;
                return vt_json_fail(j, "column %ld: bad escape", col(j));
            }
            continue;
        }
        p++;
    }
    *e = p;
    j->p = p + 1;
    return 0;
}

static int next_member(vt_json *j, char close)
{
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    if (!j->first[j->depth]) {
        if (j->p >= j->end || *j->p != ',') {
            char want[64];
            snprintf(want, sizeof want, "',' or '%c'", close);
            return unexpected(j, want);
        }
        j->p++;
        ws(j);
    }
    j->first[j->depth] = 0;
    return 1;
}

int vt_json_obj_next(vt_json *j, const char **key, size_t *klen)
{
    int r = next_member(j, '}');
    if (r <= 0) return r;
    const char *b, *e;
    if (j->p >= j->end || *j->p != '"') return unexpected(j, "a key string");
    if (scan_string(j, &b, &e) < 0) return -1;
    ws(j);
    if (j->p >= j->end || *j->p != ':') return unexpected(j, "':'");
    j->p++;
    ws(j);
    *key = b;
    *klen = (size_t)(e - b);
    return 1;
}

int vt_json_arr_next(vt_json *j)
{
    return next_member(j, ']');
}

/* Scans a number by the grammar; sets flags. */
static int scan_number(vt_json *j, const char **b, int *neg, int *integral)
{
    ws(j);
    const char *p = j->p;
    *b = p;
    *neg = 0;
    *integral = 1;
    if (p < j->end && *p == '-') { *neg = 1; p++; }
    if (p >= j->end || *p < '0' || *p > '9') { j->p = p; return wrong_class(j, "number"); }
    if (*p == '0') {
        p++;
        if (p < j->end && *p >= '0' && *p <= '9') { j->p = p; return vt_json_fail(j, "column %ld: leading zero in number", col(j)); }
    } else {
        while (p < j->end && *p >= '0' && *p <= '9') p++;
    }
    if (p < j->end && *p == '.') {
        *integral = 0;
        p++;
        if (p >= j->end || *p < '0' || *p > '9') { j->p = p; return unexpected(j, "digit"); }
        while (p < j->end && *p >= '0' && *p <= '9') p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        *integral = 0;
        p++;
        if (p < j->end && (*p == '+' || *p == '-')) p++;
        if (p >= j->end || *p < '0' || *p > '9') { j->p = p; return unexpected(j, "digit"); }
        while (p < j->end && *p >= '0' && *p <= '9') p++;
    }
    j->p = p;
    return 0;
}

int vt_json_u64(vt_json *j, uint64_t *out)
{
    int c = vt_json_peek(j);
    if (c != VT_JSON_NUMBER) return wrong_class(j, "a non-negative integer");
    const char *b;
    int neg, integral;
    if (scan_number(j, &b, &neg, &integral) < 0) return -1;
    if (neg && !(j->p - b == 2 && b[1] == '0'))
        return vt_json_fail(j, "negative value %.*s (expected a non-negative integer)", (int)(j->p - b > 40 ? 40 : j->p - b), b);
    if (!integral)
        return vt_json_fail(j, "%.*s is not an integer", (int)(j->p - b > 40 ? 40 : j->p - b), b);
    uint64_t v = 0;
    for (const char *p = b + neg; p < j->p; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return vt_json_fail(j, "integer %.*s%s exceeds 2^64-1", (int)(j->p - b > 40 ? 40 : j->p - b), b,
                                j->p - b > 40 ? "..." : "");
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int vt_json_i64(vt_json *j, int64_t *out)
{
    int c = vt_json_peek(j);
    if (c != VT_JSON_NUMBER) return wrong_class(j, "an integer");
    const char *b;
    int neg, integral;
    if (scan_number(j, &b, &neg, &integral) < 0) return -1;
    if (!integral) return vt_json_fail(j, "%.*s is not an integer", (int)(j->p - b > 40 ? 40 : j->p - b), b);
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (const char *p = b + neg; p < j->p; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (lim - d) / 10)
            return vt_json_fail(j, "integer %.*s out of range", (int)(j->p - b > 40 ? 40 : j->p - b), b);
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int vt_json_f64(vt_json *j, double *out)
{
    int c = vt_json_peek(j);
    if (c != VT_JSON_NUMBER) return wrong_class(j, "a number");
    const char *b;
    int neg, integral;
    if (scan_number(j, &b, &neg, &integral) < 0) return -1;
    char tmp[64];
    size_t n = (size_t)(j->p - b);
    if (n >= sizeof tmp) return vt_json_fail(j, "number too long");
    memcpy(tmp, b, n);
    tmp[n] = 0;
    *out = strtod(tmp, NULL);
    return 0;
}

static int literal(vt_json *j, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return unexpected(j, "a JSON value");
    j->p += n;
    return 0;
}

int vt_json_bool(vt_json *j, int *out)
{
    if (vt_json_peek(j) != VT_JSON_BOOL) return wrong_class(j, "a boolean");
    if (*j->p == 't') { *out = 1; return literal(j, "true"); }
    *out = 0;
    return literal(j, "false");
}

int vt_json_null(vt_json *j)
{
    if (vt_json_peek(j) != VT_JSON_NULL) return 0;
    return literal(j, "null") < 0 ? -1 : 1;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

int vt_json_str(vt_json *j, char *buf, size_t cap, size_t *len)
{
    if (vt_json_peek(j) != VT_JSON_STRING) return wrong_class(j, "a string");
    const char *b, *e;
    if (scan_string(j, &b, &e) < 0) return -1;
    size_t n = 0;
    for (const char *p = b; p < e;) {
        unsigned cp;
        if (*p != '\\') {
            if (n + 1 >= cap) return vt_json_fail(j, "string longer than %zu bytes", cap - 1);
            buf[n++] = *p++;
            continue;
        }
        p++;
        switch (*p) {
        case 'b': cp = '\b'; p++; break;
        case 'f': cp = '\f'; p++; break;
        case 'n': cp = '\n'; p++; break;
        case 'r': cp = '\r'; p++; break;
        case 't': cp = '\t'; p++; break;
        case 'u':
            cp = hex4(p + 1);
            p += 5;
            if (cp >= 0xd800 && cp < 0xdc00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                unsigned lo = hex4(p + 2);
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd; /* lone surrogate */
            if (cp == 0) return vt_json_fail(j, "NUL character (\\u0000) in string");
            break;
        default: cp = (unsigned char)*p++; break; /* " \ / */
        }
        char u[4];
        size_t k;
        if (cp < 0x80) { u[0] = (char)cp; k = 1; }
        else if (cp < 0x800) { u[0] = (char)(0xc0 | cp >> 6); u[1] = (char)(0x80 | (cp & 0x3f)); k = 2; }
        else if (cp < 0x10000) { u[0] = (char)(0xe0 | cp >> 12); u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)); u[2] = (char)(0x80 | (cp & 0x3f)); k = 3; }
        else { u[0] = (char)(0xf0 | cp >> 18); u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)); u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); u[3] = (char)(0x80 | (cp & 0x3f)); k = 4; }
        if (n + k >= cap) return vt_json_fail(j, "string longer than %zu bytes", cap - 1);
        memcpy(buf + n, u, k);
        n += k;
    }
    buf[n] = 0;
    if (len) *len = n;
    return 0;
}

int vt_json_skip(vt_json *j)
{
    const char *b, *e, *k;
    size_t kn;
    int neg, integral, r, v;
    switch (vt_json_peek(j)) {
    case VT_JSON_OBJECT:
        if (vt_json_obj_begin(j) < 0) return -1;
        while ((r = vt_json_obj_next(j, &k, &kn)) == 1)
            if (vt_json_skip(j) < 0) return -1;
        return r;
    case VT_JSON_ARRAY:
        if (vt_json_arr_begin(j) < 0) return -1;
        while ((r = vt_json_arr_next(j)) == 1)
            if (vt_json_skip(j) < 0) return -1;
        return r;
    case VT_JSON_STRING: return scan_string(j, &b, &e);
    case VT_JSON_NUMBER: return scan_number(j, &b, &neg, &integral);
    case VT_JSON_BOOL: return vt_json_bool(j, &v);
    case VT_JSON_NULL: return vt_json_null(j) < 0 ? -1 : 0;
    default: return unexpected(j, "a JSON value");
    }
}

int vt_json_end(vt_json *j)
{
    ws(j);
    if (j->p < j->end) return unexpected(j, "end of line");
    return 0;
}
