/* vt_main.c — the `vramtrace` command: argument parsing and dispatch.
 *
 *   vramtrace run [-o DIR] [--interval MS] [--depth N] [--tensors] [--step-range [DOMAIN:]NAME]
 *                 [--check [CHECK-OPTIONS]] -- CMD [ARG...]
 *   vramtrace report [--format text|json|html] [-o FILE] [--force] [--warmup STEPS] [--python-only] [--rank LIST] PATH...
 *   vramtrace check [--max-growth SIZE] [--max-unfreed SIZE] [--max-peak SIZE]
 *                   [--warmup STEPS] [--baseline PATH --max-peak-increase PCT]
 *                   [--allow-incomplete] [--allow-oom] [--allow-short] [--allow-gaps] [--junit FILE [--force]] PATH...
 *   vramtrace diff [--format text|json] [--warmup STEPS] [--rank LIST] BASE NEW
 *   vramtrace export --format torch|perfetto|collapsed [--metric live|leaked|peak] [-o FILE] [--force]
 *                    [--python-only] PATH...
 *
 * Exit codes: 0 pass, 1 a check failed, 2 bad usage or unreadable
 * input (the reader's "file:line: what" on stderr), 3 inconclusive (check: too few
 * steps to judge, vt_check.h). `run` exits with the program's status; with --check,
 * a program that failed (non-zero status or a signal) keeps its own status,
 * otherwise the check's 0/1/2/3 is the result.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vt_analysis.h"
#include "vt_check.h"
#include "vt_diff.h"
#include "vt_display.h"
#include "vt_export.h"
#include "vt_format.h"
#include "vt_reader.h"
#include "vt_lineparse.h"
#include "vt_report.h"
#include "vt_run.h"
#include "vt_size.h"

static void usage(FILE *f)
{
    fputs("usage:\n"
          "  vramtrace run [-o DIR] [--interval MS] [--depth N] [--tensors] [--step-range [DOMAIN:]NAME]\n"
          "                [--check [CHECK-OPTIONS]] -- CMD [ARG...]\n"
          "  vramtrace report [--format text|json|html] [-o FILE] [--force] [--warmup STEPS] [--python-only]\n"
          "                   [--rank LIST] PATH...\n"
          "  vramtrace check [--max-growth SIZE] [--max-unfreed SIZE] [--max-peak SIZE] [--warmup STEPS]\n"
          "                  [--baseline PATH --max-peak-increase PCT] [--allow-incomplete] [--allow-oom]\n"
          "                  [--allow-short] [--allow-unreadable] [--allow-gaps] [--junit FILE [--force]] [--rank LIST] PATH...\n"
          "  vramtrace diff [--format text|json] [--warmup STEPS] [--rank LIST] BASE NEW   (also: vramtrace compare)\n"
          "  vramtrace export --format torch|perfetto|collapsed [--metric live|leaked|peak] [-o FILE] [--force]\n"
          "                   [--warmup STEPS] [--python-only] [--rank LIST] PATH...\n"
          "  vramtrace --version\n"
          "--tensors: switch PyTorch, TensorFlow, JAX, CuPy and RMM to one CUDA allocation per tensor (their own settings)\n"
          "--python-only: show only the Python frames of Python call stacks, one site per Python call site\n"
          "--rank LIST: only the processes of these ranks (LIST: 0,3-5); processes without a rank are left out\n"
          "PATH: a snapshot folder or snapshot files (*.jsonl, *.jsonl.zst, *.jsonl.gz). SIZE: 4096, 4KiB, 1.5GiB, 2MB.\n"
          "check: a process fails when it leaks (above --max-growth), ended without an exit record\n"
          "  (killed or _exit; --allow-incomplete), had an out-of-memory failure (--allow-oom), traced\n"
          "  nothing, or passes a --max-* limit; a process with too few steps to judge is inconclusive\n"
          "  (--allow-short); a folder with files that could not be read fails (--allow-unreadable);\n"
          "  a process whose stream records lost records (a disk full, the file removed) fails (--allow-gaps).\n"
          "  --junit FILE: also a JUnit XML file, one test case per process and gate.\n"
          "exit status: 0 pass, 1 a check failed, 2 bad usage or unreadable input,\n"
          "  3 inconclusive (check: too few steps to judge)\n",
          f);
}

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("vramtrace: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    usage(stderr);
    return 2;
}

/* getopt_long's error (opterr is 0, optstrings start with ':'): one line naming the
 * option as the user wrote it, then the usage; exit status 2. c is ':' for a missing
 * value, anything else for an unknown option. */
static int opt_error(const char *cmd, int c, char **argv)
{
    const char *what = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        fprintf(stderr, "vramtrace: %s: option %s needs a value\n", cmd, what);
    else if (what[0] == '-' && what[1] == '-')   /* a long option, without any =VALUE */
        fprintf(stderr, "vramtrace: %s: unknown option %.*s\n", cmd, (int)strcspn(what, "="), what);
    else
        fprintf(stderr, "vramtrace: %s: unknown option -%c\n", cmd, optopt > 0 && optopt < 256 ? optopt : '?');
    usage(stderr);
    return 2;
}

static int parse_size(const char *opt, const char *s, uint64_t *out)
{
    if (vt_size_parse(s, out) < 0) {
        fprintf(stderr, "vramtrace: %s: bad size \"%s\" (examples: 4096, 4KiB, 1.5GiB, 2MB)\n", opt, s);
        return -1;
    }
    return 0;
}

static int parse_steps(const char *s, long *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || e == s || *e || v < 0) {
        fprintf(stderr, "vramtrace: --warmup: bad step count \"%s\"\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* --rank LIST: ranges lo[i]..hi[i] (inclusive); n == 0: no filter. Set once by the
 * command's option parsing, read by load_ex. */
static struct {
    int64_t lo[256], hi[256];
    size_t n;
    const char *text;
} rank_filter;

/* Parses "0,3-5" into rank_filter; -1 after a message. */
static int parse_ranks(const char *s)
{
    rank_filter.n = 0;
    rank_filter.text = s;
    const char *c = s;
    while (1) {
        char *e;
        errno = 0;
        long long lo = strtoll(c, &e, 10), hi = lo;
        if (e == c || errno || lo < 0) goto bad;
        c = e;
        if (*c == '-') {
            c++;
            hi = strtoll(c, &e, 10);
            if (e == c || errno || hi < lo) goto bad;
            c = e;
        }
        if (rank_filter.n == sizeof rank_filter.lo / sizeof rank_filter.lo[0]) goto bad;
        rank_filter.lo[rank_filter.n] = lo;
        rank_filter.hi[rank_filter.n++] = hi;
        if (!*c) return 0;
        if (*c++ != ',') goto bad;
    }
bad:
    fprintf(stderr, "vramtrace: --rank: bad rank list \"%s\" (examples: 3, 0,3-5; at most 256 parts)\n", s);
    return -1;
}

static int rank_wanted(const vt_process *p)
{
    if (!p->has_rank) return 0;
    for (size_t i = 0; i < rank_filter.n; i++)
        if (p->rank >= rank_filter.lo[i] && p->rank <= rank_filter.hi[i]) return 1;
    return 0;
}

/* Keeps the processes --rank names (all when there is no filter); -1 after a message
 * when none is left. */
static int filter_ranks(vt_runset *rs)
{
    if (!rank_filter.n) return 0;
    size_t k = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (rank_wanted(rs->procs[i])) rs->procs[k++] = rs->procs[i];
        else vt_process_free(rs->procs[i]);
    }
    rs->n = k;
    if (k) return 0;
    fprintf(stderr, "vramtrace: --rank %s: no process of these ranks in the input\n", rank_filter.text);
    return -1;
}

/* Loads and analyzes paths; 0 or 2 (message printed). keep_allocs: keep live lists;
 * python_only: group sites by Python frames (vt_analyze_opts). */
static int load_ex(char *const *paths, int n, long warmup, int verbose, int keep_allocs, int python_only, vt_runset *rs,
                   vt_analysis *a)
{
    memset(rs, 0, sizeof *rs);
    rs->verbose = verbose;
    rs->keep_allocs = keep_allocs;
    rs->read_threads = vt_lp_default_threads();
    const char *rt = getenv("VRAMTRACE_READ_THREADS");
    if (rt && *rt) {
        char *e;
        long v = strtol(rt, &e, 10);
        if (*e || v < 0 || v > VT_LP_MAX_THREADS) {
            fprintf(stderr, "vramtrace: VRAMTRACE_READ_THREADS must be 0..%d, not \"%s\"\n", VT_LP_MAX_THREADS, rt);
            return 2;
        }
        rs->read_threads = (int)v;   /* 0: parse on this thread */
    }
    if (vt_load_paths(rs, paths, n) < 0) {
        char shown[sizeof rs->err * 4];   /* the path and what it quotes, as shown (vt_display.h) */
        vt_display(shown, sizeof shown, rs->err);
        fprintf(stderr, "%s\n", shown);
        vt_runset_free(rs);
        return 2;
    }
    if (filter_ranks(rs) < 0) {
        vt_runset_free(rs);
        return 2;
    }
    vt_analyze_opts o = {.warmup = warmup, .no_dwarf = getenv("VRAMTRACE_NO_DWARF") != NULL, .python_only = python_only};
    vt_analyze_ex(rs, &o, a);
    for (size_t i = 0; warmup >= 0 && i < a->n; i++) {
        const vt_proc_result *pr = &a->procs[i];
        if (pr->p->nsteps_real >= 2 && (uint64_t)warmup >= pr->p->nsteps_real - 1) {
            char title[512];
            fprintf(stderr, "vramtrace: note: --warmup %ld leaves no steps to judge in %s (%zu steps): "
                    "no growth can be found there\n", warmup, vt_process_title(pr->p, title, sizeof title),
                    (size_t)pr->p->nsteps_real);
        }
    }
    return 0;
}

static int load(char *const *paths, int n, long warmup, int verbose, vt_runset *rs, vt_analysis *a)
{
    return load_ex(paths, n, warmup, verbose, 0, 0, rs, a);
}

/* 1 (after one message) when what was written to stdout could not all be written
 * (a full disk, a closed pipe): a gate that printed nothing must not pass. */
static int stdout_failed(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    fprintf(stderr, "vramtrace: writing to stdout failed: %s\n", strerror(errno ? errno : EIO));
    return 1;
}

/* The folder part of path into buf ("." for a bare name); returns buf. */
static const char *parent_dir(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, cap, ".");
    else if (slash == path) snprintf(buf, cap, "/");
    else snprintf(buf, cap, "%.*s", (int)(slash - path), path);
    return buf;
}

/* 1 when the folder `dir` holds a snapshot file (vt_snapshot_name) that is the file `so`
 * (same device and inode: `so` is a hard link to it, under any name). A report of
 * another name in the folder may be replaced with --force. */
static int dir_holds(const char *dir, const struct stat *so)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    struct stat st;
    while (!found && (e = readdir(d))) {
        if (!vt_snapshot_name(e->d_name)) continue;   /* only what the reader reads */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_dev == so->st_dev && st.st_ino == so->st_ino)
            found = 1;
    }
    closedir(d);
    return found;
}

/* 1 when writing -o `out` would destroy or spoil one of the inputs: `out` is one of
 * the input files or a file inside an input folder (same device and inode: also
 * through a hard link of another name), or a snapshot file's name inside an input folder or
 * beside an input file (the reader would take it for a snapshot file next time). Checked before the file
 * is opened, with or without --force: nothing a user recorded is overwritten. */
static int out_is_input(const char *out, char *const *paths, int n)
{
    struct stat so, sp, sd;
    int out_exists = stat(out, &so) == 0;
    const char *base = strrchr(out, '/');
    int jsonl = vt_snapshot_name(base ? base + 1 : out) != 0;
    char dir[4096];
    int dir_ok = stat(parent_dir(out, dir, sizeof dir), &sd) == 0;
    for (int i = 0; i < n; i++) {
        if (stat(paths[i], &sp) != 0) continue;
        if (out_exists && sp.st_dev == so.st_dev && sp.st_ino == so.st_ino) return 1;
        if (out_exists && S_ISDIR(sp.st_mode) && dir_holds(paths[i], &so)) return 1;
        if (S_ISDIR(sp.st_mode) && jsonl && dir_ok && sp.st_dev == sd.st_dev && sp.st_ino == sd.st_ino)
            return 1;
        if (!S_ISDIR(sp.st_mode) && jsonl && dir_ok) {   /* a *.jsonl beside a snapshot file named */
            char pdir[4096], real[PATH_MAX];
            struct stat spd;
            if (stat(parent_dir(paths[i], pdir, sizeof pdir), &spd) == 0 && spd.st_dev == sd.st_dev &&
                spd.st_ino == sd.st_ino)
                return 1;
            /* named through a symbolic link: the folder of the file itself too */
            if (realpath(paths[i], real) && stat(parent_dir(real, pdir, sizeof pdir), &spd) == 0 &&
                spd.st_dev == sd.st_dev && spd.st_ino == sd.st_ino)
                return 1;
        }
    }
    return 0;
}

/* Opens -o FILE (never overwriting unless force; never an input, see out_is_input;
 * O_NOFOLLOW: --force replaces a file, never the target of a symbolic link planted at
 * the -o path, e.g. in a shared /tmp) or returns stdout; NULL after a message. */
static FILE *open_out(const char *out, int force, char *const *inputs, int n_inputs, int *regular)
{
    *regular = 0;
    if (!out) return stdout;
    if (out_is_input(out, inputs, n_inputs)) {
        fprintf(stderr, "vramtrace: %s is one of the snapshot files read (or would be read as one); "
                        "not written, even with --force\n", out);
        return NULL;
    }
    FILE *f = NULL;
    int fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (force ? O_TRUNC : O_EXCL), 0644);
    struct stat st;
    *regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);   /* ours to remove on failure */
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        if (errno == EEXIST) fprintf(stderr, "vramtrace: %s already exists; not overwritten (--force overwrites)\n", out);
        else fprintf(stderr, "vramtrace: cannot write %s: %s\n", out, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    return f;
}

enum { O_FORMAT = 256, O_FORCE, O_WARMUP, O_MAXG, O_MAXU, O_MAXP, O_BASE, O_MAXPI, O_INTERVAL, O_DEPTH, O_CHECK, O_VERBOSE,
       O_PYONLY, O_ALLOW_INC, O_ALLOW_OOM, O_ALLOW_SHORT, O_JUNIT, O_ALLOW_UNREAD, O_RANK, O_TENSORS, O_ALLOW_GAPS };

typedef struct check_args {
    vt_check_opts o;
    long warmup;
    const char *baseline;
    int force;                  /* --force: --junit may replace an existing file */
    int livewarns;              /* `run --check`: the warnings of this run's processes first */
    uint64_t run_start_ns;      /* CLOCK_REALTIME when `run` started the program */
} check_args;

/* `run`: the leak warnings the preload printed while the program ran, once more on
 * stderr, each site named as the report names it (vt_livewarn_text), for the
 * processes of this run (started at or after since_ns: the folder may hold earlier
 * runs'). Returns how many were printed. */
static size_t print_livewarns(vt_analysis *a, uint64_t since_ns)
{
    size_t said = 0;
    for (size_t i = 0; i < a->n; i++) {
        const vt_proc_result *pr = &a->procs[i];
        if (pr->p->start_ns < since_ns) continue;
        for (size_t k = 0; k < pr->p->nlivewarns; k++) {
            char line[1400];
            if (!said++) fputs("vramtrace: the leak warnings printed while it ran, named as the report names them:\n", stderr);
            fprintf(stderr, "vramtrace:   pid %llu: %s\n", (unsigned long long)pr->p->pid,
                    vt_livewarn_text(a, pr, &pr->p->livewarns[k], line, sizeof line));
        }
        if (pr->p->livewarns_dropped)
            fprintf(stderr, "vramtrace:   pid %llu: and up to %llu more\n", (unsigned long long)pr->p->pid,
                    (unsigned long long)pr->p->livewarns_dropped);
    }
    return said;
}

/* Handles a check option; 1 handled, 0 not a check option, -1 bad value. */
static int check_option(int c, const char *arg, check_args *ca)
{
    switch (c) {
    case O_MAXG: return parse_size("--max-growth", arg, &ca->o.max_growth) < 0 ? -1 : 1;
    case O_MAXU: ca->o.has_max_unfreed = 1; return parse_size("--max-unfreed", arg, &ca->o.max_unfreed) < 0 ? -1 : 1;
    case O_MAXP: ca->o.has_max_peak = 1; return parse_size("--max-peak", arg, &ca->o.max_peak) < 0 ? -1 : 1;
    case O_WARMUP: return parse_steps(arg, &ca->warmup) < 0 ? -1 : 1;
    case O_BASE: ca->baseline = arg; return 1;
    case O_ALLOW_INC: ca->o.allow_incomplete = 1; return 1;
    case O_ALLOW_GAPS: ca->o.allow_gaps = 1; return 1;
    case O_ALLOW_OOM: ca->o.allow_oom = 1; return 1;
    case O_ALLOW_SHORT: ca->o.allow_short = 1; return 1;
    case O_ALLOW_UNREAD: ca->o.allow_unreadable = 1; return 1;
    case O_JUNIT: ca->o.junit_path = arg; return 1;
    case O_FORCE: ca->force = 1; return 1;
    case O_RANK: return parse_ranks(arg) < 0 ? -1 : 1;
    case O_MAXPI: {
        char *e;
        double v = strtod(arg, &e);
        if (e != arg && *e == '%')   /* "10%" as well as "10" */
            e++;
        if (e == arg || *e || !(v >= 0)) {
            fprintf(stderr, "vramtrace: --max-peak-increase: bad percentage \"%s\"\n", arg);
            return -1;
        }
        ca->o.has_max_peak_increase = 1;
        ca->o.max_peak_increase = v;
        return 1;
    }
    default: return 0;
    }
}

static int run_check(char *const *paths, int n, check_args *ca, int verbose)
{
    if (ca->o.has_max_peak_increase != (ca->baseline != NULL)) {
        fputs("vramtrace: --baseline and --max-peak-increase go together\n", stderr);
        return 2;
    }
    vt_runset rs, brs;
    vt_analysis a, b;
    int rc = load(paths, n, ca->warmup, verbose, &rs, &a);
    if (rc) return rc;
    if (ca->livewarns) print_livewarns(&a, ca->run_start_ns);
    if (ca->o.junit_path) {
        int regular;
        ca->o.junit = open_out(ca->o.junit_path, ca->force, paths, n, &regular);
        if (!ca->o.junit) {
            vt_analysis_free(&a);
            vt_runset_free(&rs);
            return 2;
        }
    }
    if (ca->baseline) {
        char *bp[1] = {(char *)ca->baseline};
        size_t nfilter = rank_filter.n;   /* --rank picks the processes checked; the baseline's
                                             are matched to them by rank (vt_check.c) */
        rank_filter.n = 0;
        rc = load(bp, 1, ca->warmup, verbose, &brs, &b);
        rank_filter.n = nfilter;
        if (rc) {
            vt_analysis_free(&a);
            vt_runset_free(&rs);
            return rc;
        }
    }
    rc = vt_check(&a, ca->baseline ? &b : NULL, &ca->o, stdout);
    if (stdout_failed()) rc = 2;
    if (ca->baseline) {
        vt_analysis_free(&b);
        vt_runset_free(&brs);
    }
    vt_analysis_free(&a);
    vt_runset_free(&rs);
    return rc;
}

static const struct option check_longopts[] = {
    {"max-growth", required_argument, 0, O_MAXG}, {"max-unfreed", required_argument, 0, O_MAXU},
    {"max-peak", required_argument, 0, O_MAXP}, {"warmup", required_argument, 0, O_WARMUP},
    {"baseline", required_argument, 0, O_BASE}, {"max-peak-increase", required_argument, 0, O_MAXPI},
    {"allow-incomplete", no_argument, 0, O_ALLOW_INC}, {"allow-oom", no_argument, 0, O_ALLOW_OOM},
    {"allow-short", no_argument, 0, O_ALLOW_SHORT}, {"junit", required_argument, 0, O_JUNIT},
    {"allow-unreadable", no_argument, 0, O_ALLOW_UNREAD}, {"allow-gaps", no_argument, 0, O_ALLOW_GAPS},
    {"force", no_argument, 0, O_FORCE}, {"rank", required_argument, 0, O_RANK},
    {"verbose", no_argument, 0, O_VERBOSE}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};

static int cmd_check(int argc, char **argv)
{
    check_args ca = {.warmup = -1};
    int c, verbose = 0;
    while ((c = getopt_long(argc, argv, ":h", check_longopts, NULL)) != -1) {
        int r = check_option(c, optarg, &ca);
        if (r < 0) return 2;
        if (r) continue;
        if (c == O_VERBOSE) verbose = 1;
        else if (c == 'h') { usage(stdout); return stdout_failed() ? 2 : 0; }
        else return opt_error("check", c, argv);
    }
    if (optind >= argc) return bad_usage("check: no PATH given%s", "");
    return run_check(argv + optind, argc - optind, &ca, verbose);
}

static int cmd_report(int argc, char **argv)
{
    static const struct option lo[] = {{"format", required_argument, 0, O_FORMAT}, {"output", required_argument, 0, 'o'},
                                       {"force", no_argument, 0, O_FORCE}, {"warmup", required_argument, 0, O_WARMUP},
                                       {"verbose", no_argument, 0, O_VERBOSE}, {"python-only", no_argument, 0, O_PYONLY},
                                       {"rank", required_argument, 0, O_RANK}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *format = "text", *out = NULL;
    int force = 0, verbose = 0, python_only = 0, c;
    long warmup = -1;
    while ((c = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
        switch (c) {
        case O_FORMAT: format = optarg; break;
        case 'o': out = optarg; break;
        case O_FORCE: force = 1; break;
        case O_VERBOSE: verbose = 1; break;
        case O_PYONLY: python_only = 1; break;
        case O_RANK: if (parse_ranks(optarg) < 0) return 2; break;
        case O_WARMUP: if (parse_steps(optarg, &warmup) < 0) return 2; break;
        case 'h': usage(stdout); return stdout_failed() ? 2 : 0;
        default: return opt_error("report", c, argv);
        }
    }
    if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "html"))
        return bad_usage("report: --format must be text, json or html, not \"%s\"", format);
    if (optind >= argc) return bad_usage("report: no PATH given%s", "");
    vt_runset rs;
    vt_analysis a;
    int rc = load_ex(argv + optind, argc - optind, warmup, verbose, 0, python_only, &rs, &a);
    if (rc) return rc;
    int regular;
    FILE *f = open_out(out, force, argv + optind, argc - optind, &regular);
    if (!f) {
        vt_analysis_free(&a);
        vt_runset_free(&rs);
        return 2;
    }
    int color = !out && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    errno = 0;   /* still 0 after a failure: no write failed, the report's data could not be built */
    if (!strcmp(format, "json")) rc = vt_report_json(f, &a);
    else if (!strcmp(format, "html")) rc = vt_report_html(f, &a);
    else rc = vt_report_text(f, &a, color);
    if (fflush(f) != 0) rc = -1;
    if (out && fclose(f) != 0) rc = -1;
    if (rc < 0) {
        fprintf(stderr, "vramtrace: writing %s failed: %s\n", out ? out : "the report",
                errno ? strerror(errno) : "its data could not be built (out of memory, or text that is not UTF-8)");
        if (out && regular) unlink(out);   /* a file we created or replaced: no half file left;
                                              never a device or FIFO named with --force */
    }
    vt_analysis_free(&a);
    vt_runset_free(&rs);
    return rc < 0 ? 2 : 0;
}

enum { O_METRIC = 300, O_STEPR };

static int cmd_export(int argc, char **argv)
{
    static const struct option lo[] = {{"format", required_argument, 0, O_FORMAT}, {"output", required_argument, 0, 'o'},
                                       {"metric", required_argument, 0, O_METRIC}, {"force", no_argument, 0, O_FORCE},
                                       {"warmup", required_argument, 0, O_WARMUP}, {"verbose", no_argument, 0, O_VERBOSE},
                                       {"python-only", no_argument, 0, O_PYONLY}, {"rank", required_argument, 0, O_RANK},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *format = NULL, *out = NULL, *metric = "live";
    int force = 0, verbose = 0, python_only = 0, c;
    long warmup = -1;
    while ((c = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
        switch (c) {
        case O_FORMAT: format = optarg; break;
        case 'o': out = optarg; break;
        case O_METRIC: metric = optarg; break;
        case O_FORCE: force = 1; break;
        case O_VERBOSE: verbose = 1; break;
        case O_PYONLY: python_only = 1; break;
        case O_RANK: if (parse_ranks(optarg) < 0) return 2; break;
        case O_WARMUP: if (parse_steps(optarg, &warmup) < 0) return 2; break;
        case 'h': usage(stdout); return stdout_failed() ? 2 : 0;
        default: return opt_error("export", c, argv);
        }
    }
    if (!format) return bad_usage("export: --format torch|perfetto|collapsed is required%s", "");
    if (strcmp(format, "torch") && strcmp(format, "perfetto") && strcmp(format, "collapsed"))
        return bad_usage("export: --format must be torch, perfetto or collapsed, not \"%s\"", format);
    vt_metric m = VT_METRIC_LIVE;
    if (!strcmp(metric, "leaked")) m = VT_METRIC_LEAKED;
    else if (!strcmp(metric, "peak")) m = VT_METRIC_PEAK;
    else if (strcmp(metric, "live")) return bad_usage("export: --metric must be live, leaked or peak, not \"%s\"", metric);
    if (optind >= argc) return bad_usage("export: no PATH given%s", "");
    if (!strcmp(format, "torch") && !out && isatty(STDOUT_FILENO)) {
        fputs("vramtrace: export --format torch writes a binary pickle; use -o FILE\n", stderr);
        return 2;
    }
    vt_runset rs;
    vt_analysis a;
    if (python_only && strcmp(format, "collapsed"))
        return bad_usage("export: --python-only goes with --format collapsed%s", "");
    int rc = load_ex(argv + optind, argc - optind, warmup, verbose, !strcmp(format, "torch"), python_only, &rs, &a);
    if (rc) return rc;
    if (!strcmp(format, "torch") && a.n != 1) {
        fprintf(stderr, "vramtrace: export --format torch writes one process; the input has %zu (name one snapshot file)\n", a.n);
        vt_analysis_free(&a);
        vt_runset_free(&rs);
        return 2;
    }
    int regular;
    FILE *f = open_out(out, force, argv + optind, argc - optind, &regular);
    if (!f) {
        vt_analysis_free(&a);
        vt_runset_free(&rs);
        return 2;
    }
    char err[256] = "";
    if (!strcmp(format, "torch")) rc = vt_export_torch(f, &a, err, sizeof err);
    else if (!strcmp(format, "perfetto")) rc = vt_export_perfetto(f, &a, err, sizeof err);
    else rc = vt_export_collapsed(f, &a, m, err, sizeof err);
    if (fflush(f) != 0) rc = -1;
    if (out && fclose(f) != 0) rc = -1;
    if (rc < 0) {
        fprintf(stderr, "vramtrace: export to %s failed: %s\n", out ? out : "stdout", err[0] ? err : strerror(errno));
        if (out && regular) unlink(out);   /* a file we created or replaced: no half file left;
                                              never a device or FIFO named with --force */
    }
    vt_analysis_free(&a);
    vt_runset_free(&rs);
    return rc < 0 ? 2 : 0;
}

static int cmd_diff(int argc, char **argv)
{
    static const struct option lo[] = {{"warmup", required_argument, 0, O_WARMUP}, {"rank", required_argument, 0, O_RANK},
                                       {"format", required_argument, 0, O_FORMAT}, {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    long warmup = -1;
    const char *format = "text";
    int c;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        if (c == O_WARMUP) { if (parse_steps(optarg, &warmup) < 0) return 2; }
        else if (c == O_FORMAT) format = optarg;
        else if (c == O_RANK) { if (parse_ranks(optarg) < 0) return 2; }   /* both runs: the same ranks */
        else if (c == 'h') { usage(stdout); return stdout_failed() ? 2 : 0; }
        else return opt_error("diff", c, argv);
    }
    if (strcmp(format, "text") && strcmp(format, "json"))
        return bad_usage("diff: --format must be text or json, not \"%s\"", format);
    if (argc - optind != 2) return bad_usage("diff: needs BASE and NEW%s", "");
    vt_runset rb, rn;
    vt_analysis b, n;
    int rc = load(argv + optind, 1, warmup, 0, &rb, &b);
    if (rc) return rc;
    rc = load(argv + optind + 1, 1, warmup, 0, &rn, &n);
    if (rc) {
        vt_analysis_free(&b);
        vt_runset_free(&rb);
        return rc;
    }
    rc = vt_diff(&b, &n, argv[optind], argv[optind + 1], !strcmp(format, "json"), stdout) < 0 ? 2 : 0;
    if (stdout_failed()) rc = 2;
    vt_analysis_free(&b);
    vt_analysis_free(&n);
    vt_runset_free(&rb);
    vt_runset_free(&rn);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, 0, 'o'}, {"interval", required_argument, 0, O_INTERVAL},
        {"depth", required_argument, 0, O_DEPTH}, {"check", no_argument, 0, O_CHECK},
        {"tensors", no_argument, 0, O_TENSORS},
        {"max-growth", required_argument, 0, O_MAXG}, {"max-unfreed", required_argument, 0, O_MAXU},
        {"max-peak", required_argument, 0, O_MAXP}, {"warmup", required_argument, 0, O_WARMUP},
        {"baseline", required_argument, 0, O_BASE}, {"max-peak-increase", required_argument, 0, O_MAXPI},
        {"allow-incomplete", no_argument, 0, O_ALLOW_INC}, {"allow-oom", no_argument, 0, O_ALLOW_OOM},
        {"allow-short", no_argument, 0, O_ALLOW_SHORT}, {"junit", required_argument, 0, O_JUNIT},
        {"allow-unreadable", no_argument, 0, O_ALLOW_UNREAD}, {"allow-gaps", no_argument, 0, O_ALLOW_GAPS},
        {"force", no_argument, 0, O_FORCE}, {"rank", required_argument, 0, O_RANK},
        {"step-range", required_argument, 0, O_STEPR},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    vt_run_opts ro;
    memset(&ro, 0, sizeof ro);
    check_args ca = {.warmup = -1};
    int c, check = 0;
    while ((c = getopt_long(argc, argv, "+:o:h", lo, NULL)) != -1) {
        if (c == 'o') ro.outdir = optarg;
        else if (c == O_INTERVAL || c == O_DEPTH) {
            /* the preload's own ranges (preload/sys/vt_config.c: VRAMTRACE_INTERVAL_MS,
             * VRAMTRACE_DEPTH), refused here rather than warned about there */
            char *e;
            errno = 0;
            long v = strtol(optarg, &e, 10);
            long max = c == O_INTERVAL ? 86400000L : 256;
            if (e == optarg || *e || errno || v < 0 || v > max) {
                fprintf(stderr, "vramtrace: run: --%s must be a whole number from 0 to %ld, not \"%s\"\n",
                        c == O_INTERVAL ? "interval" : "depth", max, optarg);
                return 2;
            }
            if (c == O_INTERVAL) ro.interval_ms = optarg;
            else ro.depth = optarg;
        } else if (c == O_STEPR) {
            const char *nm = strchr(optarg, ':');
            if (!*(nm ? nm + 1 : optarg)) {
                fprintf(stderr, "vramtrace: run: --step-range needs a range name ([DOMAIN:]NAME), not \"%s\"\n", optarg);
                return 2;
            }
            ro.step_range = optarg;
        } else if (c == O_CHECK) check = 1;
        else if (c == O_TENSORS) ro.tensors = 1;
        else if (c == 'h') { usage(stdout); return stdout_failed() ? 2 : 0; }
        else {
            int r = check_option(c, optarg, &ca);
            if (r < 0) return 2;
            if (!r) return opt_error("run", c, argv);
            if (!check) return bad_usage("run: check options come after --check%s", "");
        }
    }
    if (optind >= argc) return bad_usage("run: no command given (vramtrace run [OPTIONS] -- CMD [ARG...])%s", "");
    ro.argv = argv + optind;
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    ca.run_start_ns = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
    int st = vt_run(&ro);
    if (st < 0) return 2;
    if (vt_run_count_snapshots(ro.outbuf) == 0) {
        fprintf(stderr, "vramtrace: no snapshots were written to %s: the program made no CUDA "
                "allocation call, could not start, or tracking was off (see any vramtrace: line above)\n",
                ro.outbuf);
        if (check) {
            fprintf(stderr, "vramtrace check: nothing to check\n");
            return st ? st : 2;
        }
        return st;
    }
    fprintf(stderr, "vramtrace: snapshots are in %s\n", ro.outbuf);
    char *paths[1] = {ro.outbuf};
    if (!check) {   /* a folder that cannot be read is check's and report's to say */
        vt_runset rs;
        vt_analysis a;
        int saved = dup(2), quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved >= 0 && quiet >= 0) dup2(quiet, 2);
        int rc = load(paths, 1, -1, 0, &rs, &a);
        if (saved >= 0 && quiet >= 0) dup2(saved, 2);
        if (saved >= 0) close(saved);
        if (quiet >= 0) close(quiet);
        if (!rc) {
            print_livewarns(&a, ca.run_start_ns);
            vt_analysis_free(&a);
            vt_runset_free(&rs);
        }
        return st;
    }
    ca.livewarns = 1;
    int rc = run_check(paths, 1, &ca, 0);
    if (st != 0) {
        fprintf(stderr, "vramtrace: the program exited with status %d; that status is kept\n", st);
        return st;
    }
    return rc;
}

int main(int argc, char **argv)
{
    opterr = 0;   /* opt_error says it once, with the vramtrace: prefix */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    argv++;
    argc--;
    optind = 1;
    if (!strcmp(cmd, "run")) return cmd_run(argc, argv);
    if (!strcmp(cmd, "report")) return cmd_report(argc, argv);
    if (!strcmp(cmd, "check")) return cmd_check(argc, argv);
    if (!strcmp(cmd, "diff") || !strcmp(cmd, "compare")) return cmd_diff(argc, argv);   /* compare: the name people try */
    if (!strcmp(cmd, "export")) return cmd_export(argc, argv);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return stdout_failed() ? 2 : 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vramtrace %s (reads snapshot formats %d to %d)\n", VT_VERSION, VT_FORMAT_VERSION_MIN, VT_FORMAT_VERSION);
        return stdout_failed() ? 2 : 0;
    }
    fprintf(stderr, "vramtrace: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
