/* vt_run.h — `vramtrace run`: start a program under libvramtrace.so.
 *
 * Finds the library ($VRAMTRACE_LIB, else <dir of this executable>/../lib/
 * libvramtrace.so.N or libvramtrace.so, or the install layout's library folder when
 * it is not ../lib: vt_run.c lib_places; no build-tree path), prepends it to
 * LD_PRELOAD, sets VRAMTRACE_OUTPUT (the -o folder, else a new folder
 * vramtrace-out/run-YYYYmmdd-HHMMSS-<pid>[-N] created 0700 with mkdir, never an
 * existing one; made absolute with realpath so a program that chdir()s writes there
 * too), VRAMTRACE_INTERVAL_MS and VRAMTRACE_DEPTH when given (and with tensors,
 * vt_tensors_apply), then fork/execvp/waitpid. While waiting it ignores SIGINT and
 * SIGQUIT (the terminal delivers them to the program) and forwards SIGTERM, SIGHUP,
 * SIGUSR1 and SIGUSR2 to it (SIGUSR1 asks the preload for a snapshot). A library
 * path with a space, tab, newline or colon is refused (-1): LD_PRELOAD splits at
 * those and cannot carry it. Single-threaded; changes this process's environment.
 */
#ifndef VT_RUN_H
#define VT_RUN_H

typedef struct vt_run_opts {
    const char *outdir;         /* NULL: a new folder under ./vramtrace-out */
    const char *interval_ms;    /* NULL: the preload's default */
    const char *depth;          /* NULL: the preload's default */
    int tensors;                /* --tensors: the frameworks' per-tensor switches (vt_tensors.h) */
    const char *step_range;     /* --step-range [DOMAIN:]NAME: VRAMTRACE_STEP_RANGE; NULL none */
    char *const *argv;          /* program and arguments, NULL-terminated */
    char outbuf[4096];          /* OUT: the folder used, absolute */
} vt_run_opts;

/* Runs the program. Returns its exit status (0..255; death by signal N gives
 * 128+N; a program that cannot be started gives 127, or 126 if not executable),
 * or -1 with a message on stderr if vramtrace itself could not set up (no
 * library or one whose path LD_PRELOAD cannot carry, folder not creatable,
 * fork failed). */
int vt_run(vt_run_opts *o);

/* Number of snapshot files (*.jsonl) directly in dir; 0 when it cannot be read. */
int vt_run_count_snapshots(const char *dir);

#endif /* VT_RUN_H */
