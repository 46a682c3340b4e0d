/* vt_size.c — SIZE parsing and human-readable byte formatting (see vt_size.h). */
#include "vt_size.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int vt_size_parse(const char *s, uint64_t *out)
{
    if (!s || !*s) return -1;
    const char *p = s;
    uint64_t ip = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (ip > (UINT64_MAX - d) / 10) return -1;
        ip = ip * 10 + d;
        p++;
        digits++;
    }
    double frac = 0, scale = 0.1;
    int fdigits = 0;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            frac += (*p - '0') * scale;
            scale /= 10;
            p++;
            fdigits++;
        }
        if (!fdigits) return -1;
    }
    if (!digits) return -1;
    static const struct { const char *name; double mult; } units[] = {
        {"", 1}, {"b", 1},
        {"k", 1024.0}, {"kib", 1024.0}, {"m", 1048576.0}, {"mib", 1048576.0},
        {"g", 1073741824.0}, {"gib", 1073741824.0}, {"t", 1099511627776.0}, {"tib", 1099511627776.0},
        {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(p, units[i].name) != 0) continue;
        if (units[i].mult == 1 && !fdigits) { *out = ip; return 0; }
        double v = ((double)ip + frac) * units[i].mult;
        if (!(v < 18446744073709551616.0)) return -1;
        uint64_t r = (uint64_t)llround(v);
        if (units[i].mult == 1 && fdigits) return -1; /* fractional bytes */
        *out = r;
        return 0;
    }
    return -1;
}

char *vt_size_fmt(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int i = 0;
    while (v >= 1024 && i < 6) { v /= 1024; i++; }
    if (v >= 99.95 || v == floor(v)) snprintf(buf, cap, "%.0f %s", v, u[i]);
    else snprintf(buf, cap, "%.1f %s", v, u[i]);
    return buf;
}

char *vt_size_fmt_signed(double bytes, char *buf, size_t cap)
{
    char tmp[32];
    double a = fabs(bytes);
    vt_size_fmt(a >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(a), tmp, sizeof tmp);
    snprintf(buf, cap, "%s%s", bytes < 0 ? "-" : "+", tmp);
    return buf;
}
