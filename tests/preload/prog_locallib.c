/* prog_locallib.c — prog_locallib [--deepbind|--deepbind-local|--deepbind-lazy]
 * PLUGIN [FILLER]: dlopen's PLUGIN (locallib.c) with RTLD_NOW | RTLD_LOCAL (or
 * RTLD_NOW | RTLD_DEEPBIND, RTLD_NOW | RTLD_DEEPBIND | RTLD_LOCAL, RTLD_LAZY |
 * RTLD_DEEPBIND: the plugin and the runtime it brings bind to their own scope first,
 * past the preload) and allocates through it, runtime and driver. --deepbind-registry:
 * RTLD_NOW | RTLD_DEEPBIND, and the entry points come from the plugin's constructor
 * (prog_locallib_register), with no dlsym after the dlopen. --dlerror: RTLD_NOW |
 * RTLD_LOCAL, the driver initialised (no hooked call), and before the first allocation (the driver's, whose hook looks its
 * real function up in the plugin's scope under the preload) a dlopen of a missing
 * file fails: dlerror() after the allocation must still name that file. Links no CUDA
 * library. Every call must return 0 as it does without the preload; with
 * VT_EXPECT_TRACKED=1 the preload must also have tracked the bytes (its hooks find
 * the real functions in the calling object's own scope). With FILLER: then dlclose's
 * PLUGIN, dlopen's FILLER (so that a reload lands elsewhere) and PLUGIN again, and
 * calls once more: it must not crash (a real function kept from the first load must
 * not point at unmapped code); the codes are printed, not judged (the simulated runtime
 * unloaded and loaded again answers 201; under the preload it stays loaded: 0).
 * Exit 0 = as expected. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

/* The plugin's constructor registers its entry points here (locallib.c). */
static void *reg[4];
__attribute__((visibility("default"))) void prog_locallib_register(void *ralloc, void *rfree, void *dalloc, void *dfree)
{
    reg[0] = ralloc;
    reg[1] = rfree;
    reg[2] = dalloc;
    reg[3] = dfree;
}

int main(int argc, char **argv)
{
    int mode = RTLD_NOW | RTLD_LOCAL, dlerr = 0, registry = 0;
    /* --dlerror-info / --dlerror-close: the same, but a successful dlinfo or dlclose
     * comes between the allocation and dlerror(), which must then say nothing (glibc
     * resets its message at each dl* call) */
    if (argc > 1 && !strncmp(argv[1], "--dlerror", 9)) {
        dlerr = !strcmp(argv[1], "--dlerror-info") ? 2 : !strcmp(argv[1], "--dlerror-close") ? 3 : 1;
        argv++;
        argc--;
    }
    if (argc > 1 && !strcmp(argv[1], "--deepbind-registry")) {
        registry = 1;
        mode = RTLD_NOW | RTLD_DEEPBIND;
        argv++;
        argc--;
    } else if (argc > 1 && !strncmp(argv[1], "--deepbind", 10)) {
        mode = !strcmp(argv[1], "--deepbind-local") ? RTLD_NOW | RTLD_DEEPBIND | RTLD_LOCAL
             : !strcmp(argv[1], "--deepbind-lazy")  ? RTLD_LAZY | RTLD_DEEPBIND
                                                     : RTLD_NOW | RTLD_DEEPBIND;
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: prog_locallib [--dlerror|--dlerror-info|--dlerror-close|--deepbind|--deepbind-local|--deepbind-lazy|"
                        "--deepbind-registry] PLUGIN [FILLER]\n");
        return 2;
    }
    int tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    void *h = dlopen(argv[1], mode);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    /* --deepbind-registry: no dlsym after the dlopen, the constructor's registry */
    int (*ralloc)(void **, size_t) = (int (*)(void **, size_t))(registry ? reg[0] : dlsym(h, "plugin_runtime_alloc"));
    int (*rfree)(void *) = (int (*)(void *))(registry ? reg[1] : dlsym(h, "plugin_runtime_free"));
    int (*dalloc)(unsigned long long *, size_t) =
        (int (*)(unsigned long long *, size_t))(registry ? reg[2] : dlsym(h, "plugin_driver_alloc"));
    int (*dfree)(unsigned long long) = (int (*)(unsigned long long))(registry ? reg[3] : dlsym(h, "plugin_driver_free"));
    if (!ralloc || !rfree || !dalloc || !dfree) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 2;
    }
    int failures = 0, r;
    void *a = NULL;
    unsigned long long d = 0;
    if (dlerr) {
        int (*dinit)(void) = (int (*)(void))dlsym(h, "plugin_driver_init");
        if (!dinit || dinit() != 0) {
            fprintf(stderr, "cuInit failed\n");
            return 2;
        }
        void *libm = dlopen("libm.so.6", RTLD_NOW);
        void *none = dlopen("/nonexistent/libvt_none.so", RTLD_NOW);
        if ((r = dalloc(&d, 5000)) != 0) { fprintf(stderr, "cuMemAlloc -> %d\n", r); failures++; }
        Lmid_t lmid;
        if (dlerr == 2 && dlinfo(libm, RTLD_DI_LMID, &lmid) != 0) { fprintf(stderr, "dlinfo failed\n"); failures++; }
        if (dlerr == 3 && dlclose(libm) != 0) { fprintf(stderr, "dlclose failed\n"); failures++; }
        const char *m = dlerror();
        if (dlerr > 1) {
            if (m) { fprintf(stderr, "dlerror() after a successful dl call: %s\n", m); failures++; }
        } else if (none || !m || !strstr(m, "libvt_none.so")) {
            fprintf(stderr, "dlerror() after the allocation: %s\n", m ? m : "(null)");
            failures++;
        }
        if (dlerror() != NULL) { fprintf(stderr, "dlerror() twice: not NULL\n"); failures++; }
    }
    if ((r = ralloc(&a, 3000)) != 0) { fprintf(stderr, "cudaMalloc -> %d\n", r); failures++; }
    if (!dlerr && (r = dalloc(&d, 5000)) != 0) { fprintf(stderr, "cuMemAlloc -> %d\n", r); failures++; }
    if (tracked && vramtrace_live_bytes(-1) != 8000) {
        fprintf(stderr, "live %llu != 8000\n", (unsigned long long)vramtrace_live_bytes(-1));
        failures++;
    }
    if ((r = rfree(a)) != 0) { fprintf(stderr, "cudaFree -> %d\n", r); failures++; }
    if ((r = dfree(d)) != 0) { fprintf(stderr, "cuMemFree -> %d\n", r); failures++; }
    if (tracked && (vramtrace_live_bytes(-1) != 0 || vramtrace_peak_bytes(-1) != 8000)) {
        fprintf(stderr, "final live %llu peak %llu\n", (unsigned long long)vramtrace_live_bytes(-1),
                (unsigned long long)vramtrace_peak_bytes(-1));
        failures++;
    }
    /* (after the allocations: this dlsym would re-link a deferred load) a DEEPBIND
     * plugin's references to the loader functions (and pthread_cancel)
     * reach what the program's do: the preload's exports under it, glibc's without */
    void *(*fn_addr)(const char *) = (void *(*)(const char *))dlsym(h, "plugin_fn_addr");
    static const char *const fns[] = {"dlsym", "dlopen", "dlerror", "pthread_cancel"};
    for (size_t i = 0; (mode & RTLD_DEEPBIND) && i < sizeof fns / sizeof fns[0]; i++) {
        void *mine = dlsym(RTLD_DEFAULT, fns[i]), *its = fn_addr ? fn_addr(fns[i]) : NULL;
        if (mine != its) {
            fprintf(stderr, "%s: the plugin reaches %p, the program %p\n", fns[i], its, mine);
            failures++;
        }
    }
    if (argc > 2) {
        dlclose(h);
        void *filler = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!filler || !h) {
            fprintf(stderr, "reload: %s\n", dlerror());
            return 2;
        }
        ralloc = (int (*)(void **, size_t))dlsym(h, "plugin_runtime_alloc");
        rfree = (int (*)(void *))dlsym(h, "plugin_runtime_free");
        int r1 = ralloc(&a, 4096), r2 = r1 == 0 ? rfree(a) : -1;
        printf("prog_locallib: after a reload: cudaMalloc %d, cudaFree %d\n", r1, r2);
    }
    printf("prog_locallib: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
