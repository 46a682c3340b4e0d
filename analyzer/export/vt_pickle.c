/* vt_pickle.c — pickle protocol 4 writer (contract in vt_pickle.h).
 *
 * Design: every call writes its opcode bytes straight to the stdio stream; the
 * opcode values are those of CPython's Lib/pickle.py. Integers use the smallest
 * of BININT1 (0..255), BININT2 (0..65535), BININT (signed 32-bit) and LONG1
 * (little-endian two's complement, minimal length), as CPython's pickler does.
 */
#include "vt_pickle.h"

#include <string.h>

enum {
    OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_NONE = 'N',
    OP_BINUNICODE = 'X', OP_APPENDS = 'e', OP_LONG_BINGET = 'j', OP_EMPTY_LIST = ']', OP_EMPTY_DICT = '}',
    OP_SETITEMS = 'u', OP_PROTO = 0x80, OP_TUPLE2 = 0x86, OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_SHORT_BINUNICODE = 0x8c, OP_MEMOIZE = 0x94,
};

static void put(vt_pickle *pk, const void *b, size_t n)
{
    if (n && fwrite(b, 1, n, pk->f) != n) pk->err = 1;
}

static void op(vt_pickle *pk, int code)
{
    unsigned char c = (unsigned char)code;
    put(pk, &c, 1);
}

static void le(vt_pickle *pk, uint64_t v, int n)
{
    unsigned char b[8];
    for (int i = 0; i < n; i++) b[i] = (unsigned char)(v >> (8 * i));
    put(pk, b, (size_t)n);
}

void vt_pk_begin(vt_pickle *pk, FILE *f)
{
    pk->f = f;
    pk->memo = 0;
    pk->err = 0;
    op(pk, OP_PROTO);
    op(pk, 4);
}

int vt_pk_end(vt_pickle *pk)
{
    op(pk, OP_STOP);
    if (ferror(pk->f)) pk->err = 1;
    return pk->err ? -1 : 0;
}

void vt_pk_dict(vt_pickle *pk) { op(pk, OP_EMPTY_DICT); }
void vt_pk_list(vt_pickle *pk) { op(pk, OP_EMPTY_LIST); }
void vt_pk_mark(vt_pickle *pk) { op(pk, OP_MARK); }
void vt_pk_setitems(vt_pickle *pk) { op(pk, OP_SETITEMS); }
void vt_pk_appends(vt_pickle *pk) { op(pk, OP_APPENDS); }
void vt_pk_tuple2(vt_pickle *pk) { op(pk, OP_TUPLE2); }
void vt_pk_none(vt_pickle *pk) { op(pk, OP_NONE); }
void vt_pk_bool(vt_pickle *pk, int v) { op(pk, v ? OP_NEWTRUE : OP_NEWFALSE); }

void vt_pk_int(vt_pickle *pk, int64_t v)
{
    if (v >= 0 && v <= 0xff) {
        op(pk, OP_BININT1);
        le(pk, (uint64_t)v, 1);
    } else if (v >= 0 && v <= 0xffff) {
        op(pk, OP_BININT2);
        le(pk, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        op(pk, OP_BININT);
        le(pk, (uint64_t)(uint32_t)(int32_t)v, 4);
    } else {
        /* minimal two's complement length: drop redundant sign bytes */
        int n = 8;
        while (n > 1) {
            uint8_t top = (uint8_t)((uint64_t)v >> (8 * (n - 1)));
            uint8_t next = (uint8_t)((uint64_t)v >> (8 * (n - 2)));
            if ((top == 0x00 && !(next & 0x80)) || (top == 0xff && (next & 0x80))) n--;
            else break;
        }
        op(pk, OP_LONG1);
        le(pk, (uint64_t)n, 1);
        le(pk, (uint64_t)v, n);
    }
}

void vt_pk_uint(vt_pickle *pk, uint64_t v)
{
    if (v <= INT64_MAX) {
        vt_pk_int(pk, (int64_t)v);
        return;
    }
    op(pk, OP_LONG1);   /* 9 bytes: the value and a 0 sign byte */
    le(pk, 9, 1);
    le(pk, v, 8);
    le(pk, 0, 1);
}

/* Length of a valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || (n == 2 && s[0] < 0xc2)) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

void vt_pk_str(vt_pickle *pk, const char *s)
{
    size_t n = strlen(s), bad = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len((const unsigned char *)s + i);
        if (!k) { bad = 1; break; }
        i += k;
    }
    if (n <= 0xff) {
        op(pk, OP_SHORT_BINUNICODE);
        le(pk, n, 1);
    } else {
        op(pk, OP_BINUNICODE);
        le(pk, n > UINT32_MAX ? UINT32_MAX : n, 4);
        if (n > UINT32_MAX) n = UINT32_MAX;
    }
    if (!bad) {
        put(pk, s, n);
        return;
    }
    for (size_t i = 0; i < n;) {   /* same length: each invalid byte becomes '?' */
        size_t k = utf8_len((const unsigned char *)s + i);
        if (k && i + k <= n) {
            put(pk, s + i, k);
            i += k;
        } else {
            put(pk, "?", 1);
            i++;
        }
    }
}

uint32_t vt_pk_memoize(vt_pickle *pk)
{
    op(pk, OP_MEMOIZE);
    return pk->memo++;
}

void vt_pk_get(vt_pickle *pk, uint32_t idx)
{
    op(pk, OP_LONG_BINGET);
    le(pk, idx, 4);
}

void vt_pk_kv_str(vt_pickle *pk, const char *k, const char *v)
{
    vt_pk_str(pk, k);
    vt_pk_str(pk, v);
}

void vt_pk_kv_int(vt_pickle *pk, const char *k, int64_t v)
{
    vt_pk_str(pk, k);
    vt_pk_int(pk, v);
}

void vt_pk_kv_uint(vt_pickle *pk, const char *k, uint64_t v)
{
    vt_pk_str(pk, k);
    vt_pk_uint(pk, v);
}
