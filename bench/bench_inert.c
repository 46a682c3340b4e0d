/* bench_inert.c — what a process that never calls CUDA pays under the preload.
 *
 *   bench_inert fork N   forks N children that _exit(0) at once, waits for each;
 *                        prints "fork_us=<mean µs per fork+wait> cpu_us=<mean CPU
 *                        µs per fork+wait, user+sys of this process and the children>"
 *   bench_inert fds      prints "fds=<the open descriptor numbers, comma-separated>"
 *                        (/proc/self/fd, the directory's own descriptor left out)
 * No CUDA call is made. Run untraced and under LD_PRELOAD=libvramtrace.so side by
 * side (bench/vt_bench.py figure "inert", tests/preload preload_inert_fds).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* user+sys CPU µs of this process plus its waited-for children */
static double cpu_us(void)
{
    struct rusage s, c;
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    return (s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) * 1e6 +
           s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "fork")) {
        int n = atoi(argv[2]);
        double t0 = now_us(), c0 = cpu_us();
        for (int i = 0; i < n; i++) {
            pid_t p = fork();
            if (p == 0)
                _exit(0);
            if (p < 0 || waitpid(p, NULL, 0) != p)
                return 1;
        }
        double t = now_us() - t0, c = cpu_us() - c0;
        printf("fork_us=%.1f cpu_us=%.1f\n", t / n, c / n);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "fds")) {
        DIR *d = opendir("/proc/self/fd");
        if (!d)
            return 1;
        int fds[1024], n = 0, self = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d)) && n < 1024)
            if (e->d_name[0] != '.' && atoi(e->d_name) != self)
                fds[n++] = atoi(e->d_name);
        closedir(d);
        qsort(fds, (size_t)n, sizeof fds[0], cmp_int);
        printf("fds=");
        for (int i = 0; i < n; i++)
            printf("%s%d", i ? "," : "", fds[i]);
        printf("\n");
        return 0;
    }
    fprintf(stderr, "usage: bench_inert fork N | fds\n");
    return 2;
}
