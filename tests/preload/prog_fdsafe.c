/* prog_fdsafe.c — programs whose behaviour libvramtrace must not change (issue:
 * "the preload must never change the program it traces"). check_preload.py runs
 * each mode with and without LD_PRELOAD and compares stdout, exit status and the
 * files the program writes.
 *
 * usage: prog_fdsafe MODE [args]
 *   firstopen        open("/dev/null") first thing in main, no CUDA: prints the fd (3)
 *   fds              no CUDA: prints its open descriptors (/proc/self/fd), forks, and
 *                    the child prints its own
 *   daemon IN OUT    cudaMalloc, close every fd >= 3, open IN and OUT (3 and 4), a worker
 *                    thread allocates (libunwind validates its outermost frame), a
 *                    forked child allocates and writes OUT and OUT.side (fd 5), the
 *                    parent copies IN to OUT
 *   replace OUT      cudaMalloc, then dup2 its own file OUT onto every other open fd >= 3
 *                    (the snapshot file among them), allocates, snapshots ("after"),
 *                    writes one line to OUT; OUT must hold only that line
 *   chdir DIR        cudaMalloc, chdir(DIR), cudaMalloc, snapshot: output stays put
 *   sigdisp          cudaMalloc, prints whether SEGV/USR1/USR2/RTMIN+2 are default
 *   lowfd N          N times: allocate, free, close(0), open("/dev/null") must return 0
 *                    while the writer thread takes periodic snapshots
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vramtrace.h"

static void *worker(void *a)
{
    (void)a;
    void *p;
    for (int i = 0; i < 3; i++)
        if (cudaMalloc(&p, 4096 + i) != cudaSuccess)
            return (void *)1;
    return NULL;
}

static int close_all(void)
{
    struct rlimit rl;
    int top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
        top = (int)rl.rlim_cur;
    for (int fd = 3; fd < top; fd++)
        close(fd);
    return top;
}

/* "<who>: 0,1,2,..." of /proc/self/fd, the listing's own descriptor left out. */
static int print_fds(const char *who)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 1;
    int self = dirfd(d);
    char line[4096];
    size_t n = 0;
    int fds[512], k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < 512)
        if (e->d_name[0] != '.' && atoi(e->d_name) != self)
            fds[k++] = atoi(e->d_name);
    closedir(d);
    for (int i = 1; i < k; i++)   /* insertion sort: readdir's order is the kernel's */
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int t = fds[j]; fds[j] = fds[j - 1]; fds[j - 1] = t;
        }
    for (int i = 0; i < k && n + 16 < sizeof line; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%d", i ? "," : "", fds[i]);
    line[n] = 0;
    printf("%s: %s\n", who, line);
    return 0;
}

static int mode_fds(void)
{
    if (print_fds("parent"))
        return 1;
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        int rc = print_fds("child");
        fflush(stdout);
        _exit(rc);
    }
    int st;
    return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int mode_daemon(const char *in_path, const char *out_path)
{
    void *p;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess)
        return 10;
    close_all();
    int in = open(in_path, O_RDONLY);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char side_path[4096];
    snprintf(side_path, sizeof side_path, "%s.side", out_path);
    int side = open(side_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);   /* 5: the old snapshot fd */
    printf("in=%d out=%d side=%d\n", in, out, side);
    fflush(stdout);
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, &r);
    pid_t c = fork();
    if (c == 0) {
        void *q;
        cudaMalloc(&q, 777);
        dprintf(out, "child\n");
        dprintf(side, "child\n");   /* the fork handlers must not have closed it */
        _exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    char buf[128] = {0};
    ssize_t n = read(in, buf, sizeof buf - 1);
    dprintf(out, "copied: %s", buf);
    void *q;
    cudaMalloc(&q, 8192);
    vramtrace_snapshot("after");
    printf("worker %s, child status %d, read %zd bytes\n", r ? "failed" : "ok", st, n);
    return 0;
}

static int mode_replace(const char *out_path)
{
    void *p;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess)
        return 10;
    int u = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fds[256], n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 256) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != u && fd != dirfd(d))
            fds[n++] = fd;
    }
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        dup2(u, fds[i]);            /* the program's own file at every other number */
    void *q[8];
    for (int i = 0; i < 8; i++)
        cudaMalloc(&q[i], 1000 + i);
    vramtrace_snapshot("after");
    dprintf(u, "USER\n");
    printf("replaced %s\n", n > 0 ? "some" : "none");
    return 0;
}

static int mode_chdir(const char *dir)
{
    void *p, *q;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess || chdir(dir) != 0)
        return 10;
    if (cudaMalloc(&q, 1 << 21) != cudaSuccess)
        return 11;
    vramtrace_snapshot("moved");
    printf("ok\n");
    return 0;
}

static int mode_sigdisp(void)
{
    void *p;
    if (cudaMalloc(&p, 64) != cudaSuccess)
        return 10;
    int sigs[] = {SIGSEGV, SIGUSR1, SIGUSR2, SIGRTMIN + 2};
    const char *names[] = {"SEGV", "USR1", "USR2", "RTMIN+2"};
    for (int i = 0; i < 4; i++) {
        struct sigaction old;
        sigaction(sigs[i], NULL, &old);
        printf("%s %s\n", names[i], old.sa_handler == SIG_DFL ? "default" : "handled");
    }
    return 0;
}

static int mode_lowfd(int n)
{
    void *p;
    if (cudaMalloc(&p, 64) != cudaSuccess)
        return 10;
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        void *q;
        cudaMalloc(&q, 100 + (i & 7));
        cudaFree(q);
        close(0);
        int fd = open("/dev/null", O_RDONLY);   /* POSIX: the lowest free descriptor, 0 */
        if (fd != 0) {
            wrong++;
            close(fd);
        }
    }
    printf("open() did not return 0: %d times\n", wrong);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "firstopen")) {
        int fd = open("/dev/null", O_RDONLY);   /* first thing: POSIX lowest free = 3 */
        printf("first fd %d\n", fd);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "fds"))
        return mode_fds();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 4 && !strcmp(argv[1], "daemon"))
        return mode_daemon(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "replace"))
        return mode_replace(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "chdir"))
        return mode_chdir(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "lowfd"))
        return mode_lowfd(atoi(argv[2]));
    if (argc >= 2 && !strcmp(argv[1], "sigdisp"))
        return mode_sigdisp();
    fprintf(stderr, "usage: prog_fdsafe firstopen|daemon IN OUT|replace OUT|chdir DIR|sigdisp\n");
    return 2;
}
