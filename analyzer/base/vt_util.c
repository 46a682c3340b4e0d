/* vt_util.c — checked allocation and small helpers (see vt_util.h). */
#include "vt_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vt__oom(void)
{
    fputs("vramtrace: out of memory\n", stderr);
    exit(2);
}

void *vt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) vt__oom();
    return p;
}

void *vt_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) vt__oom();
    return p;
}

void *vt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) vt__oom();
    return q;
}

char *vt_xstrdup(const char *s)
{
    return vt_xstrndup(s, strlen(s));
}

char *vt_xstrndup(const char *s, size_t n)
{
    char *d = vt_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void vt_grow(void **pv, size_t *pcap, size_t need, size_t esize)
{
    if (need <= *pcap) return;
    size_t cap = *pcap ? *pcap : 8;
    while (cap < need) {
        if (cap > ((size_t)-1) / 2 / esize) vt__oom();
        cap *= 2;
    }
    *pv = vt_xrealloc(*pv, cap * esize);
    *pcap = cap;
}

uint64_t vt_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

const char *vt_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void vt_strlcpy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}
