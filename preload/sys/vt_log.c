/* vt_log.c — "vramtrace: " lines on stderr with one write(2) each (see vt_log.h). */
#include "vt_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int vt__log_level = VT_LOG_WARN;

void vt_log_raw(const char *msg, unsigned len)
{
    int saved = errno;
    /* write(2) is a cancellation point; a line may be written under the core lock
     * (latching off), and a thread cancelled there would leave the lock held */
    int oldcs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
    while (len > 0) {
        ssize_t n = write(2, msg, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        msg += n;
        len -= (unsigned)n;
    }
    pthread_setcancelstate(oldcs, NULL);
    errno = saved;
}

/* One line, nothing a terminal acts on, valid UTF-8: names the program chose (paths,
 * frames, Python code names) may hold ESC, CR or LF, bytes that are not UTF-8, the
 * C1 controls (U+0080..U+009F, e.g. CSI), line separators or bidi overrides; each
 * byte of such a character becomes '?' (the length stays, so a cut line stays cut
 * where it was). Same classes as the analyzer's display form (analyzer/vt_display.h). */
static void vt__log_clean(char *s, size_t n)
{
    unsigned char *u = (unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c >= 0x20 && c < 0x7f) { i++; continue; }
        size_t len = 0;
        uint32_t v = 0, min = 0;
        if (c >= 0xc2 && c <= 0xdf) { len = 2; v = c & 0x1f; min = 0x80; }
        else if (c >= 0xe0 && c <= 0xef) { len = 3; v = c & 0x0f; min = 0x800; }
        else if (c >= 0xf0 && c <= 0xf4) { len = 4; v = c & 0x07; min = 0x10000; }
        int ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) {
            if ((u[i + k] & 0xc0) != 0x80) ok = 0;
            v = (v << 6) | (u[i + k] & 0x3f);
        }
        if (ok && (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v <= 0x9f ||
                   v == 0x2028 || v == 0x2029 || (v >= 0x202a && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069)))
            ok = 0;
        if (ok) { i += len; continue; }
        size_t bad = len && i + len <= n ? len : 1;   /* a refused character, or one byte */
        if (len) {   /* only as far as the sequence really goes */
            bad = 1;
            while (bad < len && i + bad < n && (u[i + bad] & 0xc0) == 0x80) bad++;
        }
        for (size_t k = 0; k < bad; k++) u[i + k] = '?';
        i += bad;
    }
}

void vt_log(int level, const char *fmt, ...)
{
    if (level > vt__log_level)
        return;
    int saved = errno;
    char buf[1024];
    static const char prefix[] = "vramtrace: ";
    size_t p = sizeof prefix - 1;
    memcpy(buf, prefix, p);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + p, sizeof buf - p - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof buf - p - 2)
        n = (int)(sizeof buf - p - 2);
    vt__log_clean(buf + p, (size_t)n);
    p += (size_t)n;
    buf[p++] = '\n';
    vt_log_raw(buf, (unsigned)p);
    errno = saved;
}
