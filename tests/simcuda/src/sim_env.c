/*
 * sim_env.c - parsing of SIMCUDA_MEM / SIMCUDA_DEVICES / SIMCUDA_FAIL_AT.
 * See sim_env.h for the contract.
 */
#include "sim_env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sim_parse_size(const char *s, size_t *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    while (*end == ' ')
        end++;
    unsigned long long mul = 1;
    static const struct { const char *suffix; unsigned long long mul; } tab[] = {
        {"", 1ULL},
        {"B", 1ULL},
        {"K", 1ULL << 10}, {"KiB", 1ULL << 10}, {"KB", 1000ULL},
        {"M", 1ULL << 20}, {"MiB", 1ULL << 20}, {"MB", 1000000ULL},
        {"G", 1ULL << 30}, {"GiB", 1ULL << 30}, {"GB", 1000000000ULL},
        {"T", 1ULL << 40}, {"TiB", 1ULL << 40}, {"TB", 1000000000000ULL},
    };
    size_t i;
    for (i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        /* exact spelling; single-letter suffixes also in lower case ("2g") */
        if (strcmp(end, tab[i].suffix) == 0 ||
            (strlen(tab[i].suffix) == 1 && strcasecmp(end, tab[i].suffix) == 0)) {
            mul = tab[i].mul;
            break;
        }
    }
    if (i == sizeof tab / sizeof tab[0])
        return -1;
    if (v != 0 && mul > ~0ULL / v)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

void sim_env_load(sim_env *env)
{
    memset(env, 0, sizeof *env);
    env->capacity = SIM_DEFAULT_MEM;
    env->devices = 1;

    const char *mem = getenv("SIMCUDA_MEM");
    if (mem && *mem) {
        size_t v;
        if (sim_parse_size(mem, &v) == 0 && v >= ((size_t)16 << 20))
            env->capacity = v;
        else
            fprintf(stderr, "simcuda: ignoring SIMCUDA_MEM='%s' (need a size >= 16MiB)\n", mem);
    }
    const char *dev = getenv("SIMCUDA_DEVICES");
    if (dev && *dev) {
        char *end;
        long n = strtol(dev, &end, 10);
        if (*end == '\0' && n >= 0 && n <= SIM_MAX_DEVICES)
            env->devices = (int)n;
        else
            fprintf(stderr, "simcuda: ignoring SIMCUDA_DEVICES='%s' (0..%d)\n", dev, SIM_MAX_DEVICES);
    }
    const char *fail = getenv("SIMCUDA_FAIL_AT");
    if (fail && *fail) {
        const char *p = fail;
        while (*p && env->nfail < SIM_MAX_FAIL_AT) {
            char *end;
            unsigned long long n = strtoull(p, &end, 10);
            if (end == p || n == 0) {
                fprintf(stderr, "simcuda: malformed SIMCUDA_FAIL_AT='%s'\n", fail);
                break;
            }
            env->fail_at[env->nfail++] = n;
            p = end;
            while (*p == ',' || isspace((unsigned char)*p))
                p++;
        }
    }
}
