/* vt_log.c — "vramtrace: " lines on stderr with one write(2) each (see vt_log.h). */
#include "vt_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
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
    /* one line, nothing a terminal acts on: names the program chose (paths, frames,
     * Python code names) may hold ESC, CR or LF; each control byte becomes '?' */
    for (size_t i = p; i < p + (size_t)n; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            buf[i] = '?';
    p += (size_t)n;
    buf[p++] = '\n';
    vt_log_raw(buf, (unsigned)p);
    errno = saved;
}
