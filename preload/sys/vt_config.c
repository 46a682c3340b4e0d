/* vt_config.c — parse VRAMTRACE_* settings (see vt_config.h, preload/README.md).
 *
 * Design: walk `environ` once (no getenv in a loop, no setenv), match each
 * VRAMTRACE_ name against a fixed table, parse strictly (whole string must be a
 * number in range), and on any problem print one warning and keep the default.
 */
#define _GNU_SOURCE
#include "vt_config.h"
#include "vt_state.h"
#include "vt_log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <limits.h>
#include <unistd.h>

vt_config vt__config;
static int vt__config_loaded;

extern char **environ;

static void vt__config_defaults(vt_config *c)
{
    /* every field but the paths, which need only their first bytes: a process that
     * never calls CUDA touches as few pages of ours as it can */
    memset(c, 0, offsetof(vt_config, output));
    strcpy(c->output, "vramtrace-out");
    if (c->prometheus[0])
        c->prometheus[0] = 0;
    c->interval_ms = 1000;
    c->host_interval_ms = 1000;
    c->nvml = 1;
    c->compress = 1;
    c->max_bytes = 1ull << 30;
    c->depth = 32;
    c->signal = SIGUSR1;
    c->step_every = 1;
    c->log_level = VT_LOG_WARN;
    c->disable = 0;
    c->leak_steps = 10;
    c->test_fail_alloc_at = 0;
    c->python = VT_PYTHON_AUTO;
    c->stack_cache = 1;
    c->py_cache = 1;
    c->stack_check = 0;
    c->clock = 0;
}

/* Parses a whole decimal string into [lo, hi]. Returns 0 or -1. */
static int vt__parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end != 0 || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Parses a byte count: a whole decimal number with an optional suffix K, KiB, M, MiB,
 * G, GiB (powers of 1024; case-insensitive; B alone accepted). Returns 0 and *out,
 * or -1 (bad form, or above 2^62). */
static int vt__parse_bytes(const char *s, unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !end)
        return -1;
    /* the vramtrace command's SIZE spellings (analyzer/base/vt_size.h): K/KiB/M/MiB/
     * G/GiB powers of 1024, kB/KB/MB/GB powers of 1000 */
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1}, {"B", 1}, {"K", 1ull << 10}, {"KiB", 1ull << 10}, {"M", 1ull << 20}, {"MiB", 1ull << 20},
        {"G", 1ull << 30}, {"GiB", 1ull << 30}, {"kB", 1000}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(end, units[i].unit) != 0)
            continue;
        if (v > (1ull << 62) / units[i].mul)
            return -1;
        *out = v * units[i].mul;
        return 0;
    }
    return -1;
}

/* 1 when sig may carry the snapshot request: SIGUSR1, SIGUSR2 or a real-time signal.
 * Every other signal means something to the program or the system (SEGV, PIPE,
 * CHLD, INT, TERM, ...): taking it over would change the program. */
static int vt__signal_ok(long n)
{
    return n == SIGUSR1 || n == SIGUSR2 || (n >= SIGRTMIN && n <= SIGRTMAX);
}

/* Parses a signal name ("SIGUSR1", "USR2", "usr1", "RTMIN+3", "SIGRTMAX-1"), number,
 * or 0/none/off. Returns 0 and *out (0 = none), or -1 for anything but SIGUSR1,
 * SIGUSR2 and SIGRTMIN..SIGRTMAX (see vt__signal_ok). */
static int vt__parse_signal(const char *s, int *out)
{
    if (!strcasecmp(s, "none") || !strcasecmp(s, "off") || !strcmp(s, "0")) {
        *out = 0;
        return 0;
    }
    long n;
    if (vt__parse_long(s, 1, SIGRTMAX, &n) == 0) {
        if (!vt__signal_ok(n))
            return -1;
        *out = (int)n;
        return 0;
    }
    const char *name = s;
    if (!strncasecmp(name, "SIG", 3))
        name += 3;
    if (!strcasecmp(name, "USR1")) { *out = SIGUSR1; return 0; }
    if (!strcasecmp(name, "USR2")) { *out = SIGUSR2; return 0; }
    int base = 0, sign = 0;
    if (!strncasecmp(name, "RTMIN", 5)) { base = SIGRTMIN; sign = 1; }
    else if (!strncasecmp(name, "RTMAX", 5)) { base = SIGRTMAX; sign = -1; }
    else return -1;
    name += 5;
    long off = 0;
    if (*name) {
        if ((sign > 0 && *name != '+') || (sign < 0 && *name != '-'))
            return -1;
        if (vt__parse_long(name + 1, 0, SIGRTMAX, &off))
            return -1;
    }
    n = base + sign * off;
    if (!vt__signal_ok(n))
        return -1;
    *out = (int)n;
    return 0;
}

int vt_config_parse(char *const *env, vt_config *c)
{
    static const char pfx[] = "VRAMTRACE_";
    int warnings = 0;
    vt__config_defaults(c);
    /* VRAMTRACE_LOG first, so that "quiet" also silences warnings about the others. */
    for (char *const *e = env; e && *e; e++)
        if (!strncmp(*e, "VRAMTRACE_LOG=", 14)) {
            const char *v = *e + 14;
            if (!strcasecmp(v, "quiet")) c->log_level = VT_LOG_QUIET;
            else if (!strcasecmp(v, "warn")) c->log_level = VT_LOG_WARN;
            else if (!strcasecmp(v, "info")) c->log_level = VT_LOG_INFO;
            else if (!strcasecmp(v, "debug")) c->log_level = VT_LOG_DEBUG;
            else {
                vt__log_level = VT_LOG_WARN;
                vt_log(VT_LOG_WARN, "VRAMTRACE_LOG=%s is not quiet|warn|info|debug; using warn", v);
                warnings++;
            }
        }
    vt__log_level = c->log_level;

    for (char *const *e = env; e && *e; e++) {
        if (strncmp(*e, pfx, sizeof pfx - 1))
            continue;
        const char *kv = *e + sizeof pfx - 1;
        const char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        size_t klen = (size_t)(eq - kv);
        const char *v = eq + 1;
        long n;
        int bad = 0;
#define VT_KEY(k) (klen == sizeof(k) - 1 && !memcmp(kv, k, klen))
        if (VT_KEY("LOG")) {
            continue;
        } else if (VT_KEY("OUTPUT")) {
            if (!*v || strlen(v) >= sizeof c->output - 64) bad = 1;
            else strcpy(c->output, v);
        } else if (VT_KEY("INTERVAL_MS")) {
            if (vt__parse_long(v, 0, 86400000L, &n)) bad = 1; else c->interval_ms = (int)n;
        } else if (VT_KEY("HOST_INTERVAL_MS")) {
            if (vt__parse_long(v, 1, 86400000L, &n)) bad = 1; else c->host_interval_ms = (int)n;
        } else if (VT_KEY("DEPTH")) {
            if (vt__parse_long(v, 0, VT_DEPTH_MAX, &n)) bad = 1; else c->depth = (int)n;
        } else if (VT_KEY("SIGNAL")) {
            if (vt__parse_signal(v, &c->signal)) { bad = 1; c->signal = SIGUSR1; }
        } else if (VT_KEY("STEP_EVERY")) {
            if (vt__parse_long(v, 1, 1000000000L, &n)) bad = 1; else c->step_every = (int)n;
        } else if (VT_KEY("DISABLE")) {
            if (vt__parse_long(v, 0, 1, &n)) bad = 1; else c->disable = (int)n;
        } else if (VT_KEY("LEAK_STEPS")) {
            if (vt__parse_long(v, 1, 1000000000L, &n)) bad = 1; else c->leak_steps = (int)n;
        } else if (VT_KEY("PYTHON")) {
            if (!strcasecmp(v, "auto")) c->python = VT_PYTHON_AUTO;
            else if (!strcasecmp(v, "on")) c->python = VT_PYTHON_ON;
            else if (!strcasecmp(v, "off")) c->python = VT_PYTHON_OFF;
            else bad = 1;
        } else if (VT_KEY("PROMETHEUS")) {
            if (!*v || strlen(v) >= sizeof c->prometheus - 64) bad = 1; else strcpy(c->prometheus, v);
        } else if (VT_KEY("NVML")) {
            if (!strcasecmp(v, "off")) c->nvml = 0;          /* as VRAMTRACE_PYTHON's words */
            else if (!strcasecmp(v, "on")) c->nvml = 1;
            else if (vt__parse_long(v, 0, 1, &n)) bad = 1;
            else c->nvml = (int)n;
        } else if (VT_KEY("COMPRESS")) {
            if (!strcasecmp(v, "off")) c->compress = 0;
            else if (!strcasecmp(v, "on")) c->compress = 1;
            else if (vt__parse_long(v, 0, 1, &n)) bad = 1;
            else c->compress = (int)n;
        } else if (VT_KEY("STACK_CACHE")) {
            if (vt__parse_long(v, 0, 1, &n)) bad = 1; else c->stack_cache = (int)n;
        } else if (VT_KEY("PY_CACHE")) {
            if (!strcasecmp(v, "check")) c->py_cache = 2;
            else if (vt__parse_long(v, 0, 2, &n)) bad = 1;
            else c->py_cache = (int)n;
        } else if (VT_KEY("CLOCK")) {
            if (!strcasecmp(v, "auto")) c->clock = 0;
            else if (!strcasecmp(v, "monotonic")) c->clock = 1;
            else if (!strcasecmp(v, "tsc")) c->clock = 2;
            else bad = 1;
        } else if (VT_KEY("STACK_CHECK")) {
            if (vt__parse_long(v, 0, 1, &n)) bad = 1; else c->stack_check = (int)n;
        } else if (VT_KEY("TRACE")) {
            if (!strcasecmp(v, "off")) c->trace = 0;
            else if (!strcasecmp(v, "on")) c->trace = 1;
            else if (vt__parse_long(v, 0, 1, &n)) bad = 1;
            else c->trace = (int)n;
        } else if (VT_KEY("STEP_RANGE")) {
            const char *colon = strchr(v, ':');
            const char *name = colon ? colon + 1 : v;
            size_t dl = colon ? (size_t)(colon - v) : 0;
            if (!*name || strlen(name) >= sizeof c->step_range_name || dl >= sizeof c->step_range_domain) {
                bad = 1;
                c->step_range_on = 0;
            } else {
                c->step_range_on = 1;
                c->step_range_any_domain = colon == NULL;
                memcpy(c->step_range_domain, v, dl);
                c->step_range_domain[dl] = 0;
                strcpy(c->step_range_name, name);
            }
        } else if (VT_KEY("MAX_BYTES")) {
            unsigned long long mb;
            if (vt__parse_bytes(v, &mb)) {
                bad = 1;
            } else if (mb && mb < VT_MAX_BYTES_MIN) {   /* said apart: the reason is not the spelling */
                vt_log(VT_LOG_WARN, "VRAMTRACE_MAX_BYTES=%s is below the smallest cap, 64 KiB (0 = no cap); "
                       "using 64 KiB", v);
                warnings++;
                c->max_bytes = VT_MAX_BYTES_MIN;
            } else {
                c->max_bytes = mb;
            }
        } else if (VT_KEY("TEST_FAIL_ALLOC_AT")) {
            if (vt__parse_long(v, 0, 1000000000L, &n)) bad = 1; else c->test_fail_alloc_at = n;
        } else if (VT_KEY("READ_THREADS") || VT_KEY("NO_DWARF") || VT_KEY("LIB") || VT_KEY("TENSORS") || VT_KEY("PYTHONPATH")) {
            continue;   /* the vramtrace command's and the Python package's, not ours */
        } else {
            vt_log(VT_LOG_WARN, "unknown setting VRAMTRACE_%.*s ignored", (int)klen, kv);
            warnings++;
            continue;
        }
#undef VT_KEY
        if (bad) {
            vt_log(VT_LOG_WARN, "bad value VRAMTRACE_%.*s=%s; using the default", (int)klen, kv, v);
            warnings++;
        }
    }
    if (c->step_range_on) {   /* the ranges reach us only as the program's NVTX tool */
        int injected = 0;
        for (char *const *e = env; e && *e && !injected; e++)
            injected = !strncmp(*e, "NVTX_INJECTION64_PATH=", 22) && (*e)[22];
        if (!injected) {
            vt_log(VT_LOG_WARN, "VRAMTRACE_STEP_RANGE is set but NVTX_INJECTION64_PATH is not: the program's NVTX "
                   "ranges reach no tool and mark no step (set it to this library, or use vramtrace run --step-range)");
            warnings++;
        }
    }
    return warnings;
}

/* Makes a relative folder absolute against the working directory at start-up, so a
 * later chdir() of the program does not move the output. On failure (no cwd, too
 * long) the name stays relative, with one warning. */
static void vt__config_absolute(char *path, size_t cap, const char *what)
{
    if (path[0] == '/' || !path[0])
        return;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        vt_log(VT_LOG_WARN, "%s=%s: cannot read the working directory; left relative", what, path);
        return;
    }
    size_t lc = strlen(cwd), lp = strlen(path);
    if (lc + 1 + lp + 64 >= cap) {
        vt_log(VT_LOG_WARN, "%s=%s: absolute name too long; left relative", what, path);
        return;
    }
    memmove(path + lc + 1, path, lp + 1);
    memcpy(path, cwd, lc);
    path[lc] = '/';
}

void vt_config_load(void)
{
    /* 0 = not loaded, 1 = being parsed by one thread, 2 = ready. */
    if (__atomic_load_n(&vt__config_loaded, __ATOMIC_ACQUIRE) == 2)
        return;
    int expect = 0;
    if (__atomic_compare_exchange_n(&vt__config_loaded, &expect, 1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        vt_config_parse(environ, &vt__config);
        vt_state_set_depth(vt__config.depth);
        vt__config_absolute(vt__config.output, sizeof vt__config.output, "VRAMTRACE_OUTPUT");
        if (vt__config.prometheus[0])
            vt__config_absolute(vt__config.prometheus, sizeof vt__config.prometheus,
                                "VRAMTRACE_PROMETHEUS");
        __atomic_store_n(&vt__config_loaded, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&vt__config_loaded, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
}
