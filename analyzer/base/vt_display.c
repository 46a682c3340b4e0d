/* vt_display.c — the display form of strings a traced program chose (vt_display.h).
 *
 * Design: one decoder step (utf8_next) classifies the next character of the input:
 * kept as it is, escaped as \xNN (a byte), or escaped as \uNNNN (a code point).
 * vt_display appends piece by piece and stops before a piece that would not fit, so
 * a cut never splits a character or an escape; it keeps counting to return the
 * whole length.
 */
#include "vt_display.h"
#include "vt_util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 character at s (RFC 3629, Table 3-7 of the Unicode
 * standard), with its code point in *cp; 0 when the bytes at s are not one. */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t n;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; v = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; v = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;   /* also stops at the NUL */
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

/* Code points shown as \uNNNN: C1 controls, line/paragraph separators, bidi
 * embeddings, overrides and isolates. */
static int cp_escaped(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The next piece of s: into piece (at most 7 bytes + NUL) the text to show, and the
 * number of input bytes it stands for. */
static size_t next_piece(const unsigned char *s, char piece[8], size_t *plen)
{
    uint32_t cp = 0;
    size_t n = utf8_char(s, &cp);
    if (n == 1 && (cp < 0x20 || cp == 0x7f)) n = 0;   /* C0 control or DEL: a byte escape */
    if (!n) {
        *plen = (size_t)snprintf(piece, 8, "\\x%02x", s[0]);
        return 1;
    }
    if (cp_escaped(cp)) {
        *plen = (size_t)snprintf(piece, 8, "\\u%04x", (unsigned)cp);
        return n;
    }
    memcpy(piece, s, n);
    piece[n] = 0;
    *plen = n;
    return n;
}

size_t vt_display(char *dst, size_t cap, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0, total = 0;
    int full = 0;
    while (*p) {
        char piece[8];
        size_t plen;
        p += next_piece(p, piece, &plen);
        if (!full && out + plen < cap) {
            memcpy(dst + out, piece, plen);
            out += plen;
        } else {
            full = 1;   /* nothing after a piece that did not fit */
        }
        total += plen;
    }
    if (cap) dst[out] = 0;
    return total;
}

int vt_display_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p >= 0x20 && *p < 0x7f) { p++; continue; }
        uint32_t cp;
        size_t n = utf8_char(p, &cp);
        if (!n || n == 1 || cp_escaped(cp)) return 0;
        p += n;
    }
    return 1;
}

char *vt_xdisplay(const char *s)
{
    if (!s) return NULL;
    if (vt_display_clean(s)) return vt_xstrdup(s);
    size_t n = vt_display(NULL, 0, s);
    char *d = vt_xmalloc(n + 1);
    vt_display(d, n + 1, s);
    return d;
}

void vt_utf8_trim(char *s)
{
    size_t n = strlen(s), i = n;
    /* back over at most 3 continuation bytes to the lead byte of the last character */
    while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)s[i - 1];
    if (lead < 0xc0) return;   /* ASCII last (or a stray continuation run): keep */
    size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (n - (i - 1) < want) s[i - 1] = 0;   /* the last character was cut: drop it */
}
