/* vt_buf.c — JSON formatting into a growable buffer (see vt_buf.h). */
#include "vt_buf.h"

#include <stdlib.h>
#include <string.h>

void vt_buf_init(vt_buf *b) { memset(b, 0, sizeof *b); }

void vt_buf_free(vt_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void vt_buf_reset(vt_buf *b)
{
    b->len = 0;
    b->oom = 0;
}

static int vt__buf_room(vt_buf *b, size_t n)
{
    if (b->oom)
        return 0;
    if (b->len + n <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void vt_buf_put(vt_buf *b, const char *s, size_t n)
{
    if (!vt__buf_room(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void vt_buf_cstr(vt_buf *b, const char *s) { vt_buf_put(b, s, strlen(s)); }

/* "00" "01" ... "99": two digits per division (a snapshot of 10,000 sites formats
 * about 110,000 numbers) */
static const char vt__digits2[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

size_t vt_buf_u64_at(char *dst, uint64_t v)
{
    char tmp[20];
    int i = (int)sizeof tmp;
    while (v >= 100) {
        unsigned q = (unsigned)(v % 100);
        v /= 100;
        i -= 2;
        memcpy(tmp + i, vt__digits2 + 2 * q, 2);
    }
    if (v >= 10) {
        i -= 2;
        memcpy(tmp + i, vt__digits2 + 2 * v, 2);
    } else {
        tmp[--i] = (char)('0' + v);
    }
    memcpy(dst, tmp + i, sizeof tmp - (size_t)i);
    return sizeof tmp - (size_t)i;
}

int vt_buf_reserve(vt_buf *b, size_t n)
{
    return vt__buf_room(b, n);
}

void vt_buf_u64(vt_buf *b, uint64_t v)
{
    if (vt__buf_room(b, VT_BUF_U64_MAX))
        b->len += vt_buf_u64_at(b->p + b->len, v);
}

void vt_buf_u64_or_null(vt_buf *b, int known, uint64_t v)
{
    if (known)
        vt_buf_u64(b, v);
    else
        vt_buf_cstr(b, "null");
}

void vt_buf_i64(vt_buf *b, int64_t v)
{
    if (v < 0) {
        vt_buf_put(b, "-", 1);
        vt_buf_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        vt_buf_u64(b, (uint64_t)v);
    }
}

void vt_buf_hex(vt_buf *b, uint64_t v)
{
    char tmp[16];
    int i = 16;
    do {
        tmp[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    vt_buf_put(b, tmp + i, 16 - (size_t)i);
}

void vt_buf_fixed6(vt_buf *b, double v)
{
    if (!(v >= 0.0) || v > 1e15) {
        vt_buf_cstr(b, "null");
        return;
    }
    uint64_t scaled = (uint64_t)(v * 1e6 + 0.5);
    vt_buf_u64(b, scaled / 1000000);
    char frac[7];
    uint64_t f = scaled % 1000000;
    for (int i = 5; i >= 0; i--) {
        frac[i] = (char)('0' + f % 10);
        f /= 10;
    }
    frac[6] = 0;
    vt_buf_put(b, ".", 1);
    vt_buf_put(b, frac, 6);
}

/* Length of a valid UTF-8 sequence at s (n bytes available), or 0. */
static size_t vt__utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0xC2) return 0;
    if (c < 0xE0) { len = 2; min = 0x80; }
    else if (c < 0xF0) { len = 3; min = 0x800; }
    else if (c < 0xF5) { len = 4; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    unsigned cp = c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

void vt_buf_jstr(vt_buf *b, const char *s, size_t max)
{
    if (!s) {
        vt_buf_cstr(b, "null");
        return;
    }
    size_t n = strlen(s);
    if (max && n > max)
        n = max;
    const unsigned char *u = (const unsigned char *)s;
    vt_buf_put(b, "\"", 1);
    size_t run = 0;  /* start of a run of plain bytes */
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        const char *esc = NULL;
        char ubuf[7];
        size_t adv = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\t') esc = "\\t";
        else if (c == '\r') esc = "\\r";
        else if (c < 0x20 || c == 0x7F) {
            memcpy(ubuf, "\\u00", 4);
            ubuf[4] = "0123456789abcdef"[c >> 4];
            ubuf[5] = "0123456789abcdef"[c & 15];
            ubuf[6] = 0;
            esc = ubuf;
        } else if (c >= 0x80) {
            size_t l = vt__utf8_len(u + i, n - i);
            if (l) {
                i += l;
                continue;
            }
            memcpy(ubuf, "\\u00", 4);
            ubuf[4] = "0123456789abcdef"[c >> 4];
            ubuf[5] = "0123456789abcdef"[c & 15];
            ubuf[6] = 0;
            esc = ubuf;
        } else {
            i++;
            continue;
        }
        vt_buf_put(b, s + run, i - run);
        vt_buf_cstr(b, esc);
        i += adv;
        run = i;
    }
    vt_buf_put(b, s + run, n - run);
    vt_buf_put(b, "\"", 1);
}
