/* vt_config.h — the preload's settings, read once from VRAMTRACE_* variables.
 *
 * Every variable is documented in preload/README.md with its default. An unknown
 * VRAMTRACE_* name or a bad value gets ONE warning line and the default; nothing here
 * ever stops the program. Read in the constructor (or lazily by the first hook) and
 * never written afterwards, so any thread may read vt__config without a lock. What
 * may change at run time (the stack depth in effect, forward-only) lives in
 * vt_state.h, which vt_config_load starts from these settings.
 */
#ifndef VT_CONFIG_H
#define VT_CONFIG_H

#include <limits.h>

#define VT_DEPTH_MAX 256  /* largest accepted VRAMTRACE_DEPTH */

typedef struct vt_config {   /* the two paths last: vt_config_parse writes only their starts */
    int  interval_ms;        /* VRAMTRACE_INTERVAL_MS: periodic snapshots (1000; 0 = off)  */
    int  host_interval_ms;   /* VRAMTRACE_HOST_INTERVAL_MS: least time between two samples of
                                the host signals (/proc, cgroup, NVML), ms (1000; 1..86400000) */
    int  depth;              /* VRAMTRACE_DEPTH: stack frames kept (32; 0 = no stacks)     */
    int  signal;             /* VRAMTRACE_SIGNAL: snapshot signal (SIGUSR1; 0 = none)      */
    int  step_every;         /* VRAMTRACE_STEP_EVERY: step snapshot every N marks (1)      */
    int  log_level;          /* VRAMTRACE_LOG: VT_LOG_* (warn)                             */
    int  disable;            /* VRAMTRACE_DISABLE: 1 = forward everything, record nothing  */
    int  leak_steps;         /* VRAMTRACE_LEAK_STEPS: online leak warning threshold (10)   */
    long test_fail_alloc_at; /* VRAMTRACE_TEST_FAIL_ALLOC_AT: TEST ONLY, 0 = off; the Nth
                                internal allocation of the core fails                     */
    int  python;             /* VRAMTRACE_PYTHON: VT_PYTHON_* (auto); see vt_python.h     */
    int  nvml;               /* VRAMTRACE_NVML: 1 = sample NVML on the writer thread (default);
                                0 = never load libnvidia-ml.so.1 (vt_host.c)              */
    int  compress;           /* VRAMTRACE_COMPRESS: 1 = the stream as zstd frames, one per
                                write, file *.jsonl.zst (default); 0 = plain *.jsonl      */
    int  trace;              /* VRAMTRACE_TRACE: 1 = every allocation and free also written
                                to the event trace beside the stream, <stem>.trace (0)  */
    int  stack_cache;        /* VRAMTRACE_STACK_CACHE: 1 = the hooks reuse a thread's recent
                                stacks when the stack memory proves them unchanged
                                (capture/vt_stkcache.h; default 1), 0 = unwind every time */
    int  py_cache;           /* VRAMTRACE_PY_CACHE: 1 = a thread's Python capture reuses the
                                frames of its previous one that are provably unchanged
                                (vt_python.h vt_py_capture_cached; default 1), 0 = walk
                                every frame, 2 = check: every cached capture is compared
                                with an uncached one (tests)                             */
    int  clock;              /* VRAMTRACE_CLOCK: how hooks stamp events: 0 auto (the TSC
                                where CLOCK_MONOTONIC is built on it, else CLOCK_MONOTONIC),
                                1 monotonic, 2 tsc (track/vt_clock.h VT_CLOCK_*)          */
    int  stack_check;        /* VRAMTRACE_STACK_CHECK: 1 = every stack the cache gives is
                                compared with a full unwind (tests; 0)                   */
    /* VRAMTRACE_STEP_RANGE: "NAME" or "DOMAIN:NAME" (split at the first ':'; an empty
     * DOMAIN is NVTX's default domain): the end of each outermost NVTX range of that
     * name is a step (interpose/vt_nvtx.c). Unset: step_range_on 0.                 */
    int  step_range_on;
    int  step_range_any_domain;  /* no ':' given: a range of that name in any domain  */
    char step_range_domain[128]; /* with ':': the domain's name ("" = the default one) */
    char step_range_name[256];   /* the range's name, never empty when on             */
    unsigned long long max_bytes; /* VRAMTRACE_MAX_BYTES: the stream's size cap in bytes as
                                written (1 GiB; 0 = none): older steps folded into a summary
                                when the file reaches it (write/vt_cap.h)                 */
    char output[PATH_MAX];   /* VRAMTRACE_OUTPUT: snapshot folder ("vramtrace-out")      */
    char prometheus[PATH_MAX]; /* VRAMTRACE_PROMETHEUS: textfile folder ("" = off); vt_prom.h */
} vt_config;

/* Smallest accepted VRAMTRACE_MAX_BYTES (but 0): below it the kept definitions alone
 * would fill the cap. */
#define VT_MAX_BYTES_MIN (64ull * 1024)

/* VRAMTRACE_PYTHON values: auto = Python frames when a supported CPython is in the
 * process; on = the same, plus a warning when none is; off = native stacks only. */
enum { VT_PYTHON_AUTO = 0, VT_PYTHON_ON = 1, VT_PYTHON_OFF = 2 };

extern vt_config vt__config;

/* Fills vt__config from the environment (once; later calls return at once).
 * Thread safety: the first caller parses; concurrent first callers may both parse
 * the same environment and store identical values. */
void vt_config_load(void);

/* Test helper: parses from an explicit NULL-terminated "NAME=VALUE" array into *out,
 * warning like vt_config_load. Returns the number of warnings issued. */
int vt_config_parse(char *const *env, vt_config *out);

#endif /* VT_CONFIG_H */
