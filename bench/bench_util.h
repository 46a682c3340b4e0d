/* bench_util.h — what the two benchmark programs (bench_alloc.c, bench_core.c)
 * share: a monotonic clock and a reading of /proc/self/status. Header-only (each
 * program is one file); single-threaded helpers, no allocation on the clock path. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The kB value of a /proc/self/status line ("VmRSS", "VmHWM", ...), or -1. */
static inline long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':')
            v = atol(line + kl + 1);
    if (f)
        fclose(f);
    return v;
}

#endif /* BENCH_UTIL_H */
