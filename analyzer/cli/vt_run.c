/* vt_run.c — launcher for programs under the preload (contract in vt_run.h). */
#include "vt_run.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vt_reader.h"
#include "vt_tensors.h"
#include "vt_util.h"

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    int e = errno;   /* a handler must not change the interrupted code's errno */
    if (child_pid > 0) kill(child_pid, sig);
    errno = e;
}

/* The library's places relative to the folder of this executable, tried in order.
 * VT_LIBDIR_FROM_BINDIR (the install layout's bin -> lib, e.g. "../lib") and
 * VT_LIB_SOVERSION come from the build; "../lib" also covers the build folder
 * (build/bin, build/lib) and the Python wheel (vramtrace/_prefix/bin, .../lib). */
#ifndef VT_LIBDIR_FROM_BINDIR
#define VT_LIBDIR_FROM_BINDIR "../lib"
#endif
#ifdef VT_LIB_SOVERSION
#define VT_LIB_VERSIONED "libvramtrace.so." VT_LIB_SOVERSION
#else
#define VT_LIB_VERSIONED "libvramtrace.so"
#endif
static const char *const lib_places[] = {
    VT_LIBDIR_FROM_BINDIR "/" VT_LIB_VERSIONED, VT_LIBDIR_FROM_BINDIR "/libvramtrace.so",
    "../lib/" VT_LIB_VERSIONED, "../lib/libvramtrace.so",
};

static int find_lib(char *buf, size_t cap)
{
    const char *env = getenv("VRAMTRACE_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) {
            fprintf(stderr, "vramtrace: VRAMTRACE_LIB=%s: %s\n", env, strerror(errno));
            return -1;
        }
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "vramtrace: cannot find my own executable: %s\n", strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    char first[PATH_MAX + 64] = "";
    for (size_t i = 0; i < sizeof lib_places / sizeof lib_places[0]; i++) {
        char probe[PATH_MAX + 64], real[PATH_MAX];
        snprintf(probe, sizeof probe, "%s/%s", exe, lib_places[i]);
        if (!first[0]) snprintf(first, sizeof first, "%s", probe);
        if (realpath(probe, real) && access(real, R_OK) == 0) {
            if (strlen(real) >= cap) {
                fprintf(stderr, "vramtrace: %s: path too long\n", real);
                return -1;
            }
            snprintf(buf, cap, "%s", real);
            return 0;
        }
    }
    fprintf(stderr, "vramtrace: %s: %s (set VRAMTRACE_LIB to the library)\n", first, strerror(ENOENT));
    return -1;
}

/* mkdir -p: creates the missing parents of path (mode 0700); 0 or -1 (errno set). */
static int mkdir_parents(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) < 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return 0;
}

/* Number of snapshot files (vt_snapshot_name: *.jsonl, *.jsonl.zst, *.jsonl.gz)
 * directly in dir (0 when it cannot be read). */
int vt_run_count_snapshots(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (vt_snapshot_name(e->d_name) == 1) n++;
    }
    closedir(d);
    return n;
}

static int make_outdir(vt_run_opts *o)
{
    if (o->outdir) {
        if (mkdir_parents(o->outdir) < 0 || (mkdir(o->outdir, 0700) < 0 && errno != EEXIST)) {
            fprintf(stderr, "vramtrace: cannot create %s: %s\n", o->outdir, strerror(errno));
            return -1;
        }
        struct stat st;
        if (stat(o->outdir, &st) < 0 || !S_ISDIR(st.st_mode)) {   /* a file of that name: said here,
                                                                    not by a latched-off preload */
            fprintf(stderr, "vramtrace: %s exists and is not a folder; the program was not started\n", o->outdir);
            return -1;
        }
        snprintf(o->outbuf, sizeof o->outbuf, "%s", o->outdir);
        return 0;
    }
    if (mkdir("vramtrace-out", 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "vramtrace: cannot create vramtrace-out: %s\n", strerror(errno));
        return -1;
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int i = 0; i < 1000; i++) {
        if (i) snprintf(o->outbuf, sizeof o->outbuf, "vramtrace-out/run-%s-%d-%d", stamp, (int)getpid(), i);
        else snprintf(o->outbuf, sizeof o->outbuf, "vramtrace-out/run-%s-%d", stamp, (int)getpid());
        if (mkdir(o->outbuf, 0700) == 0) return 0;
        if (errno != EEXIST) {
            fprintf(stderr, "vramtrace: cannot create %s: %s\n", o->outbuf, strerror(errno));
            return -1;
        }
    }
    fprintf(stderr, "vramtrace: cannot find a new folder name under vramtrace-out\n");
    return -1;
}

/* The folder just created, made absolute in place (the program may chdir()
 * before its first snapshot; VRAMTRACE_OUTPUT must not depend on its cwd). */
static int absolute_outdir(vt_run_opts *o)
{
    char real[PATH_MAX];
    if (!realpath(o->outbuf, real)) {
        fprintf(stderr, "vramtrace: %s: %s\n", o->outbuf, strerror(errno));
        return -1;
    }
    if (snprintf(o->outbuf, sizeof o->outbuf, "%s", real) >= (int)sizeof o->outbuf) {
        fprintf(stderr, "vramtrace: %s: path too long\n", real);
        return -1;
    }
    return 0;
}

int vt_run(vt_run_opts *o)
{
    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib) < 0) return -1;
    /* ld.so splits LD_PRELOAD at spaces and colons, with no escape */
    if (strpbrk(lib, " :\t\n")) {
        fprintf(stderr, "vramtrace: the library path \"%s\" contains a space or a colon, which LD_PRELOAD "
                "cannot carry; install or copy libvramtrace.so to a path without them and set VRAMTRACE_LIB\n", lib);
        return -1;
    }
    if (make_outdir(o) < 0 || absolute_outdir(o) < 0) return -1;
    const char *old = getenv("LD_PRELOAD");
    char *pre = vt_xmalloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
    sprintf(pre, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", pre, 1);
    free(pre);
    setenv("VRAMTRACE_OUTPUT", o->outbuf, 1);
    if (o->interval_ms) setenv("VRAMTRACE_INTERVAL_MS", o->interval_ms, 1);
    if (o->depth) setenv("VRAMTRACE_DEPTH", o->depth, 1);
    if (o->tensors && vt_tensors_apply(stderr) < 0) return -1;
    if (o->step_range) setenv("VRAMTRACE_STEP_RANGE", o->step_range, 1);
    /* the library is the program's NVTX tool too (preload/interpose/vt_nvtx.c); a tool
     * the user chose already is kept */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!nvtx || !*nvtx) setenv("NVTX_INJECTION64_PATH", lib, 1);
    else if (strcmp(nvtx, lib) != 0)
        fprintf(stderr, "vramtrace: NVTX_INJECTION64_PATH=%s kept: NVTX ranges and memory regions reach that "
                "tool, not vramtrace\n", nvtx);
    fflush(NULL);

    /* forwarded to the program: SIGTERM/SIGHUP (stop it), SIGUSR1/SIGUSR2 (users
     * signal "the pid they see" to ask the preload for a snapshot; the launcher
     * must not die of them) */
    static const int fwd_sigs[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
    enum { NFWD = sizeof fwd_sigs / sizeof fwd_sigs[0] };
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward}, old_int, old_quit, old_fwd[NFWD];
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    for (int i = 0; i < NFWD; i++) sigaction(fwd_sigs[i], &fwd, &old_fwd[i]);
    /* Hold the forwarded signals until child_pid is set: a signal that arrives
     * between fork and that store (the program may signal us at once) is then
     * delivered afterwards instead of being dropped by forward(). */
    sigset_t hold, old_mask;
    sigemptyset(&hold);
    for (int i = 0; i < NFWD; i++) sigaddset(&hold, fwd_sigs[i]);
    sigprocmask(SIG_BLOCK, &hold, &old_mask);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        fprintf(stderr, "vramtrace: fork: %s\n", strerror(errno));
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        for (int i = 0; i < NFWD; i++) sigaction(fwd_sigs[i], &old_fwd[i], NULL);
        return -1;
    }
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        for (int i = 0; i < NFWD; i++) sigaction(fwd_sigs[i], &old_fwd[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        unsetenv("VRAMTRACE_LIB");   /* ours, not a preload setting */
        execvp(o->argv[0], o->argv);
        int e = errno;
        fprintf(stderr, "vramtrace: cannot run %s: %s\n", o->argv[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "vramtrace: waitpid: %s\n", strerror(errno));
            return -1;
        }
    }
    child_pid = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    for (int i = 0; i < NFWD; i++) sigaction(fwd_sigs[i], &old_fwd[i], NULL);
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 1;
}
