/* prog_dliter.c — prog_dliter LIB: the process's first hooked call (cudaMalloc, then
 * cudaFree) is made inside a dl_iterate_phdr callback while another thread is inside
 * dlopen(LIB). Built as prog_dliter_local (VT_DLITER_PLUGIN; no CUDA library linked):
 * prog_dliter_local LIB PLUGIN loads PLUGIN (locallib.c) RTLD_LOCAL, and the first
 * hooked call is the plugin's cuMemAlloc_v2, whose real function the preload has not
 * found yet: it must find it there without the loader (its symbol tables).
 * VT_DLITER_OOM=1 (with SIMCUDA_FAIL_AT=1): that first call fails out of memory
 * (cudaErrorMemoryAllocation, 2), which must come back as it is, without a deadlock. The callback holds the loader's write lock; the other thread holds the
 * loader's load lock and waits for the write lock (it adds LIB to the list of
 * objects). A hooked call that takes the load lock there deadlocks, which the
 * program's own calls (the runtime is initialised before, by an unhooked call) never
 * do. With VT_EXPECT_TRACKED=1 the allocation must be tracked too: 4096 live bytes
 * after cudaMalloc (read after the callback returned), 0 after the cudaFree of a
 * second one made outside it. Exit 0: both calls returned 0 and the other thread's dlopen succeeded; exit 3:
 * still blocked after 20 s (the deadlock); 1: a call failed; 2: usage. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "vramtrace.h"

static const char *lib;
static int in_callback;     /* atomic: the main thread holds the write lock */
static void *loaded;

static void *loader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&in_callback, __ATOMIC_ACQUIRE))
        usleep(1000);
    loaded = dlopen(lib, RTLD_NOW | RTLD_LOCAL);   /* blocks until the callback returns */
    return NULL;
}

static int rc_malloc = -1, rc_free = -1;
static void *kept;

#ifdef VT_DLITER_PLUGIN
/* the plugin's entry points (locallib.c) */
static int (*p_init)(void);
static int (*p_alloc)(unsigned long long *, size_t);
static int (*p_free)(unsigned long long);
static int do_alloc(void **p, size_t n)
{
    unsigned long long d = 0;
    int r = p_alloc(&d, n);
    *p = (void *)(uintptr_t)d;
    return r;
}
static int do_free(void *p) { return p_free((unsigned long long)(uintptr_t)p); }
#else
static int do_alloc(void **p, size_t n) { return (int)cudaMalloc(p, n); }
static int do_free(void *p) { return (int)cudaFree(p); }
#endif

static int callback(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info; (void)size; (void)arg;
    __atomic_store_n(&in_callback, 1, __ATOMIC_RELEASE);
    struct timespec ts = {0, 300 * 1000 * 1000};   /* the loader thread is in dlopen */
    nanosleep(&ts, NULL);
    void *p = NULL;
    rc_malloc = do_alloc(&p, 4096);
    kept = p;
    return 1;   /* once */
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "prog_dliter: deadlock: still blocked after 20 s\n";
    if (write(2, m, sizeof m - 1) < 0) { /* nothing more to do */ }
    _exit(3);
}

int main(int argc, char **argv)
{
#ifdef VT_DLITER_PLUGIN
    if (argc != 3) {
        fprintf(stderr, "usage: prog_dliter_local LIB PLUGIN\n");
        return 2;
    }
    lib = argv[1];
    void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    p_init = h ? (int (*)(void))dlsym(h, "plugin_driver_init") : NULL;
    p_alloc = h ? (int (*)(unsigned long long *, size_t))dlsym(h, "plugin_driver_alloc") : NULL;
    p_free = h ? (int (*)(unsigned long long))dlsym(h, "plugin_driver_free") : NULL;
    /* unhooked: the driver initialised, its context current on this thread */
    if (!p_init || !p_alloc || !p_free || p_init() != 0) {
        fprintf(stderr, "plugin: %s\n", h ? "no entry points or no device" : dlerror());
        return 1;
    }
#else
    if (argc != 2) {
        fprintf(stderr, "usage: prog_dliter LIB\n");
        return 2;
    }
    lib = argv[1];
    int n = 0;
    /* unhooked calls: the runtime is initialised, the simulated driver's per-thread
     * state of this thread exists (its first use would take the loader's TLS lock) */
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1 || cudaSetDevice(0) != cudaSuccess) {
        fprintf(stderr, "no device\n");
        return 1;
    }
#endif
    signal(SIGALRM, on_alarm);
    alarm(20);
    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    dl_iterate_phdr(callback, NULL);
    pthread_join(t, NULL);
    alarm(0);
    int oom = getenv("VT_DLITER_OOM") && !strcmp(getenv("VT_DLITER_OOM"), "1");
    int tracked = !oom && getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    int bad = 0;
    if (tracked && vramtrace_live_bytes(-1) != 4096) {
        fprintf(stderr, "live %llu != 4096\n", (unsigned long long)vramtrace_live_bytes(-1));
        bad = 1;
    }
    rc_free = rc_malloc == 0 ? do_free(kept) : -1;   /* (not with VT_DLITER_OOM) */
    if (tracked && vramtrace_live_bytes(-1) != 0) {
        fprintf(stderr, "live %llu != 0 after the free\n", (unsigned long long)vramtrace_live_bytes(-1));
        bad = 1;
    }
    printf("prog_dliter: cudaMalloc %d, cudaFree %d, dlopen %s\n", rc_malloc, rc_free, loaded ? "ok" : dlerror());
    if (oom) {   /* VT_DLITER_OOM=1 with SIMCUDA_FAIL_AT=1: the failure's own code */
        printf("prog_dliter: out of memory as expected: %d\n", rc_malloc);
        return rc_malloc == 2 && loaded ? 0 : 1;
    }
    return rc_malloc == 0 && rc_free == 0 && loaded && !bad ? 0 : 1;
}
