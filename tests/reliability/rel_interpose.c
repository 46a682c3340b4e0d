/* rel_interpose.c — interposition safety (issue 6 item 7), run with and without
 * LD_PRELOAD=libvramtrace.so by check_reliability.py, which compares the output.
 *
 * - rel_early (a linked library) allocated from its constructor, before the
 *   preload's constructor ran, and asked dlsym(RTLD_NEXT) there (see rel_early.c);
 * - an atexit handler registered BEFORE the first CUDA call runs after the CUDA
 *   runtime's own teardown ("runtime unloading") and calls cudaMalloc/cudaFree;
 * - rel_early's destructor allocates and frees after main returned;
 * - dlsym on names vramtrace does not hook, with every kind of handle, returns
 *   exactly glibc's pointer (and glibc's dlerror() text when NULL), errno kept;
 *   dlopen answers as glibc's own called from here.
 * Prints every CUDA result code; "dlsym_mismatch" lines name any difference.
 * With VT_EXPECT_TRACKED=1 also checks the tracer saw the constructor's allocation.
 * Exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "vramtrace.h"

void rel_early_report(int *alloc_rc, int *alloc_errno, int *next_ok, int *next_null);
void rel_early_fork_report(int *alloc_rc, int *free_rc, int *keep_rc);
int rel_early_pool_alloc(size_t bytes);

static int pool_stop;   /* atomic */
static int pool_bad;

static void *pool_worker(void *arg)
{
    (void)arg;
    for (size_t i = 0; !__atomic_load_n(&pool_stop, __ATOMIC_ACQUIRE); i++)
        pool_bad |= rel_early_pool_alloc(4096 + (i % 7) * 256) != 0;
    return NULL;
}

static void late_handler(void)
{
    char line[128];
    void *p = NULL;
    int a = (int)cudaMalloc(&p, 123);
    int f = (int)cudaFree(p);
    int n = snprintf(line, sizeof line, "late_atexit malloc %d free %d\n", a, f);
    if (write(1, line, (size_t)n) < 0)
        _exit(9);
}

typedef void *(*dlsym_t)(void *, const char *);

int main(void)
{
    int tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    int bad = 0;
    atexit(late_handler);          /* before any CUDA call of main: runs after the runtime's teardown */

    int arc, aerr, next_ok, next_null;
    rel_early_report(&arc, &aerr, &next_ok, &next_null);
    printf("early_ctor malloc %d errno %d next_ok %d next_null %d\n", arc, aerr, next_ok, next_null);
    bad |= arc != 0 || !next_ok || !next_null;

    if (getenv("REL_EARLY_FORK_ALLOC")) {
        /* rel_early's fork handlers allocate on this thread during the fork, and a
         * worker allocates inside rel_early's pool mutex, which its prepare takes */
        pthread_t w;
        pthread_create(&w, NULL, pool_worker, NULL);
        int kids = 0;
        for (int i = 0; i < 50; i++) {
            fflush(stdout);            /* a sanitizer's child may flush it again */
            pid_t pid = fork();
            if (pid == 0)
                _exit(0);
            int st = -1;
            waitpid(pid, &st, 0);
            kids += WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        __atomic_store_n(&pool_stop, 1, __ATOMIC_RELEASE);
        pthread_join(w, NULL);
        int far, ffr, fkr;
        rel_early_fork_report(&far, &ffr, &fkr);
        printf("fork: %d of 50 children exit 0; prepare handler malloc %d free %d; parent handler "
               "malloc %d; pool worker %s\n", kids, far, ffr, fkr, pool_bad ? "failed" : "ok");
        bad |= kids != 50 || far != 0 || ffr != 0 || fkr != 0 || pool_bad;
    }

    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    dlsym_t glibc = libc ? (dlsym_t)dlvsym(libc, "dlsym", "GLIBC_2.34") : NULL;
    if (!glibc && libc)
        glibc = (dlsym_t)dlvsym(libc, "dlsym", "GLIBC_2.2.5");
    if (!glibc) {
        printf("no glibc dlsym\n");
        return 1;
    }
    void *handles[5] = {RTLD_DEFAULT, RTLD_NEXT, dlopen("libcudart.so.13", RTLD_NOW),
                        dlopen("libcuda.so.1", RTLD_NOW), dlopen(NULL, RTLD_NOW)};
    static const char *const names[] = {
        "malloc", "free", "printf", "pthread_create", "dlopen", "dlclose", "dlvsym",
        "cudaGetDeviceCount", "cudaDeviceSynchronize", "cudaMemcpy", "cudaGetErrorString",
        "cuInit", "cuDeviceGet", "cuMemcpy", "cuCtxGetCurrent", "cuMemAlloc", "cuMemFree",
        "cuMemAlloc_v2_no_such", "cu", "c", "", "no_such_symbol_xyz", "rel_probe_sym",
        "cuNoSuchFunction", "cudaNoSuchFunction"};
    int compared = 0;
    for (int h = 0; h < 5; h++)
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            dlerror();
            errno = 4321;
            void *want = glibc(handles[h], names[i]);
            const char *we = dlerror();
            char want_err[512];
            snprintf(want_err, sizeof want_err, "%s", we ? we : "(none)");
            errno = 4321;
            void *got = dlsym(handles[h], names[i]);
            int e = errno;
            const char *ge = dlerror();
            if (got != want || strcmp(want_err, ge ? ge : "(none)") || e != 4321) {
                printf("dlsym_mismatch handle %d %s: %p vs glibc %p, '%s' vs '%s', errno %d\n", h, names[i],
                       got, want, ge ? ge : "(none)", want_err, e);
                bad = 1;
            }
            compared++;
        }
    /* dlopen, whoever defines it (glibc, libvramtrace's trampoline, a sanitizer
     * runtime's interceptor), answers as glibc's own called from here: the same handle
     * for a loaded bare name and for NULL, the same dlerror() text and errno for a
     * missing one (the caller's object decides the search) */
    typedef void *(*dlopen_t)(const char *, int);
    dlopen_t glibc_open = libc ? (dlopen_t)dlvsym(libc, "dlopen", "GLIBC_2.34") : NULL;
    if (!glibc_open && libc)
        glibc_open = (dlopen_t)dlvsym(libc, "dlopen", "GLIBC_2.2.5");
    static const char *const libs[] = {"libcuda.so.1", "libcudart.so.13", "libvt_no_such.so", NULL};
    for (size_t i = 0; glibc_open && i < sizeof libs / sizeof libs[0]; i++) {
        dlerror();
        errno = 4321;
        void *want = glibc_open(libs[i], RTLD_NOW | RTLD_NOLOAD);
        const char *we = dlerror();
        char want_err[512];
        snprintf(want_err, sizeof want_err, "%s", we ? we : "(none)");
        errno = 4321;
        void *got = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
        int e = errno;
        const char *ge = dlerror();
        if (got != want || strcmp(want_err, ge ? ge : "(none)") || e != 4321) {
            printf("dlopen_mismatch %s: %p vs glibc %p, '%s' vs '%s', errno %d\n", libs[i] ? libs[i] : "NULL",
                   got, want, ge ? ge : "(none)", want_err, e);
            bad = 1;
        }
        if (want)
            dlclose(want);
        if (got)
            dlclose(got);
    }
    if (!glibc_open) {
        printf("no glibc dlopen\n");
        bad = 1;
    }
    printf("dlsym compared %d\n", compared);

    void *p;
    int r = (int)cudaMalloc(&p, 1000);
    printf("main malloc %d\n", r);
    /* the constructor's 5000 + 1000, and the 7001 rel_early's fork parent handler kept */
    uint64_t want = 6000 + (getenv("REL_EARLY_FORK_ALLOC") ? 7001 : 0);
    if (tracked && vramtrace_live_bytes(-1) != want) {
        fprintf(stderr, "rel_interpose: live %llu, expected %llu (constructor's 5000 + 1000%s)\n",
                (unsigned long long)vramtrace_live_bytes(-1), (unsigned long long)want,
                want > 6000 ? " + the fork parent handler's 7001" : "");
        bad = 1;
    }
    printf("main free %d\n", (int)cudaFree(p));
    fflush(stdout);
    return bad;
}
