/* rel_early.c — a library whose constructor and destructor call the CUDA runtime
 * (issue 6 item 7, interposition safety). Linked into rel_interpose; with
 * LD_PRELOAD=libvramtrace.so its constructor runs BEFORE libvramtrace's (the
 * checker proves the order with LD_DEBUG=libs), so the hooks run before the
 * preload's constructor; its destructor runs after main returned, after the
 * runtime's teardown and after libvramtrace's destructor.
 *
 * It also asks dlsym(RTLD_NEXT, "rel_probe_sym") from its constructor, before the
 * preload's constructor ran: glibc answers relative to the CALLER (this library),
 * and no later object defines the name, so the right answer is NULL; an override
 * that resolves RTLD_NEXT relative to itself would return this library's own
 * definition. Results are read by rel_interpose through rel_early_report().
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) int rel_probe_sym = 42;

static void *early_ptr;
static int early_alloc_rc = -1;
static int early_alloc_errno = -1;   /* errno after the call: set to a marker before it */
static void *early_next_probe = (void *)1;
static void *early_next_glibc = (void *)1;

/* Fork handlers registered from this constructor, which runs before libvramtrace's
 * (a library the program links): without libvramtrace's __register_atfork they would
 * come before its own registration, so this prepare would run after its prepare, with
 * its locks held, and these parent/child handlers before its parent/child handlers.
 * REL_EARLY_FORK_ALLOC=1: prepare allocates 7000 bytes and frees them; parent
 * allocates 7001 bytes and keeps them (recorded, live at exit). The fork pool: prepare
 * takes rel_early's pool mutex (parent/child release it), and rel_early_pool_alloc
 * holds that mutex around cudaMalloc/cudaFree, as a fork-safe allocator would: a
 * thread inside it waits on the preload's locks while holding the mutex. */
static int fork_alloc_rc = -1, fork_free_rc = -1, fork_keep_rc = -1;
static void *fork_kept;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static void rel_early_fork_prepare(void)
{
    if (getenv("REL_EARLY_FORK_ALLOC")) {
        void *p = NULL;
        fork_alloc_rc = (int)cudaMalloc(&p, 7000);
        fork_free_rc = p ? (int)cudaFree(p) : -1;
    }
    pthread_mutex_lock(&pool_mu);
}

static void rel_early_fork_parent(void)
{
    pthread_mutex_unlock(&pool_mu);
    if (getenv("REL_EARLY_FORK_ALLOC") && !fork_kept)
        fork_keep_rc = (int)cudaMalloc(&fork_kept, 7001);
}

static void rel_early_fork_child(void)
{
    pthread_mutex_init(&pool_mu, NULL);
}

__attribute__((visibility("default"))) void rel_early_fork_report(int *alloc_rc, int *free_rc, int *keep_rc)
{
    *alloc_rc = fork_alloc_rc;
    *free_rc = fork_free_rc;
    *keep_rc = fork_keep_rc;
}

/* One allocation and free with the pool mutex held; the CUDA results or'ed. */
__attribute__((visibility("default"))) int rel_early_pool_alloc(size_t bytes)
{
    pthread_mutex_lock(&pool_mu);
    void *p = NULL;
    int rc = (int)cudaMalloc(&p, bytes);
    if (!rc)
        rc |= (int)cudaFree(p);
    pthread_mutex_unlock(&pool_mu);
    return rc;
}

__attribute__((constructor)) static void rel_early_ctor(void)
{
    pthread_atfork(rel_early_fork_prepare, rel_early_fork_parent, rel_early_fork_child);
    early_next_probe = dlsym(RTLD_NEXT, "rel_probe_sym");
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *(*glibc_dlsym)(void *, const char *) = NULL;
    if (libc)
        glibc_dlsym = (void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.34");
    if (!glibc_dlsym && libc)
        glibc_dlsym = (void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.2.5");
    early_next_glibc = glibc_dlsym ? glibc_dlsym(RTLD_NEXT, "rel_probe_sym") : (void *)2;
    errno = 4242;
    early_alloc_rc = (int)cudaMalloc(&early_ptr, 5000);
    early_alloc_errno = errno;
}

__attribute__((destructor)) static void rel_early_dtor(void)
{
    char line[128];
    void *p = NULL;
    errno = 4343;
    int a = (int)cudaMalloc(&p, 6000);
    int ae = errno;
    int f = p ? (int)cudaFree(p) : -1;
    int g = (int)cudaFree(early_ptr);
    int n = snprintf(line, sizeof line, "early_dtor malloc %d errno %d free %d free_early %d\n", a, ae, f, g);
    if (write(1, line, (size_t)n) < 0)
        return;
}

/* ctor results: allocation code and the errno it left (the marker 4242 unless the
 * runtime itself set one), and whether dlsym(RTLD_NEXT) matched glibc's. */
__attribute__((visibility("default"))) void rel_early_report(int *alloc_rc, int *alloc_errno, int *next_ok,
                                                            int *next_null)
{
    *alloc_rc = early_alloc_rc;
    *alloc_errno = early_alloc_errno;
    *next_ok = early_next_probe == early_next_glibc;
    *next_null = early_next_probe == NULL;
}
