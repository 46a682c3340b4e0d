/* vt_hooks_dl.c — dlopen, dlerror and dl_iterate_phdr, interposed (see vt_hooks_dl.h).
 *
 * dlopen. A library loaded with RTLD_DEEPBIND (alone or with RTLD_LOCAL) looks its
 * symbols up in its own scope (itself, then its dependencies) before the global one,
 * and so do the libraries that load brings in: a plugin linked against the CUDA
 * runtime calls the runtime's cudaMalloc directly, that runtime calls the C library's
 * dlsym directly (so the driver's cuGetProcAddress is never swapped), and LD_PRELOAD
 * is bypassed. glibc decides the caller's object from dlopen's return address (its
 * namespace, $ORIGIN, its RPATH/RUNPATH for a bare name), so our dlopen is a few
 * instructions of assembly that jump to the C library's with the caller's return
 * address intact: the load itself is exactly the program's. After a DEEPBIND load,
 * every loaded object's references to the functions we export are bound to our hooks
 * again (vt_relink.c: the GOT/PLT slots that hold the real function, or a lazy PLT
 * entry the object's own scope would resolve to it, get our hook, as the global scope
 * would have given): at once, before dlopen returns, when glibc's dlopen called from
 * here loads exactly what it loads for the caller (a path with '/' and no '$', a
 * caller in the base namespace, no DT_RPATH anywhere: vt__same_as_caller); else at
 * the next dlopen or dlsym any thread makes after that load finished (the count of
 * loads, dl_phdr_info.dlpi_adds, moved; the load is noted in vt__dl_work).
 * Not covered: calls the library makes inside dlopen (its constructors); in the
 * second case, calls through function pointers it handed out before the program's
 * next dlopen or dlsym; dlmopen (a new namespace holds no preloaded library).
 *
 * dlerror. glibc keeps one message per thread; every dlopen/dlsym/dlinfo/dlclose
 * resets it. Our own look-ups made inside a hooked CUDA call (lazy real functions,
 * the resolver's scans) would reset the program's pending message: vt_dlerr_save /
 * vt_dlerr_restore keep it, and our dlerror returns it once.
 *
 * dl_iterate_phdr. Its callbacks run with the loader's write lock held; a thread in
 * dlopen holds the load lock (and the TLS lock) and waits for the write lock. Our
 * wrapper marks the thread (vt_guard_in_iterate) so that a hooked call made from a
 * callback takes neither lock (the writer's start is put off: vt_hook_start).
 * glibc's dl_iterate_phdr uses its caller only for the caller's namespace: every
 * object that binds to our export is in the base namespace, as we are.
 *
 * Thread safety: the kept message is per thread; vt__dl_work and the load count are
 * atomics; the re-link runs on one thread at a time (vt_relink_all).
 */
#define _GNU_SOURCE
#include "vt_hooks_dl.h"
#include "vt_stkcache.h"
#include "vt_hooks.h"
#include "vt_relink.h"
#include "vt_resolve.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

__attribute__((used)) void *(*vt__real_dlopen)(const char *, int);   /* read by dlopen's assembly */
char *vt__dlerror_export(void);
static void *vt__real_dlopen_cache;
static void *vt__real_dlerror;                 /* char *(*)(void) */
static void *vt__real_iterate;                 /* dl_iterate_phdr */

/* Read by the assembly of dlopen and dlsym (vt_resolve.c): 0 on the fast path.
 * Bit 0: a DEEPBIND load was seen and not re-linked yet; the rest: 2 per thread that
 * keeps a dlerror message. */
__attribute__((visibility("hidden"), used)) int vt__dl_work;
#define VT_DL_RELINK 1
#define VT_DL_KEPT   2
static unsigned long long vt__adds_seen;       /* dlpi_adds when the DEEPBIND load began */

/* A sanitizer runtime reaches these (its own dl_iterate_phdr and dlopen interceptors
 * call ours) while it initialises, before it can run instrumented code. */
#define VT_EARLY __attribute__((no_sanitize("address", "thread", "undefined")))

typedef char *(*vt_dlerror_t)(void);
typedef int (*vt_iterate_t)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

VT_EARLY void vt_hooks_dl_init(void)
{
    static const char *const v_open[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    static const char *const v_err[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    static const char *const v_it[] = {"GLIBC_2.2.4"};
    int e = errno;
    void *f = vt_resolve_next_libc(&vt__real_dlopen_cache, "dlopen", v_open, 2);
    if (f)
        __atomic_store_n(&vt__real_dlopen, (void *(*)(const char *, int))f, __ATOMIC_RELEASE);
    vt_resolve_next_libc(&vt__real_dlerror, "dlerror", v_err, 2);
    vt_resolve_next_libc(&vt__real_iterate, "dl_iterate_phdr", v_it, 1);
    errno = e;
}

VT_EARLY static char *vt__libc_dlerror(void)
{
    vt_dlerror_t f = (vt_dlerror_t)__atomic_load_n(&vt__real_dlerror, __ATOMIC_ACQUIRE);
    if (!f) {
        vt_hooks_dl_init();
        f = (vt_dlerror_t)__atomic_load_n(&vt__real_dlerror, __ATOMIC_ACQUIRE);
    }
    return f ? f() : NULL;
}

void vt_dlerr_clear(void)
{
    vt__libc_dlerror();
}

/* ---- the program's pending message ---- */

VT_EARLY static char *vt__kept_take(void)
{
    char *k = vt__tls.dlerr;
    if (k) {
        vt__tls.dlerr = NULL;
        __atomic_fetch_sub(&vt__dl_work, VT_DL_KEPT, __ATOMIC_ACQ_REL);
    }
    return k;
}

char *vt_dlerr_save(void)
{
    int e = errno;
    char *kept = vt__kept_take();
    const char *m = vt__libc_dlerror();
    if (m) {              /* glibc's message is the newer one */
        free(kept);
        kept = strdup(m);
    }
    errno = e;
    return kept;
}

void vt_dlerr_restore(char *saved)
{
    int e = errno;
    vt__libc_dlerror();   /* what our own calls left is not the program's */
    if (saved) {
        free(vt__kept_take());
        vt__tls.dlerr = saved;
        __atomic_fetch_add(&vt__dl_work, VT_DL_KEPT, __ATOMIC_ACQ_REL);
    }
    errno = e;
}

/* char *dlerror(void): glibc's message when it has one (a call the program made after
 * our look-ups), else the one kept across our look-ups, else NULL. The string stays
 * valid until the thread's next dlerror(), as glibc's. */
VT_EARLY char *vt__dlerror_export(void)
{
    if (__builtin_expect(!vt__tls.dlerr && !vt__tls.dlerr_shown, 1))
        return vt__libc_dlerror();
    int e = errno;
    free(vt__tls.dlerr_shown);
    vt__tls.dlerr_shown = NULL;
    char *kept = vt__kept_take();
    char *m = vt__libc_dlerror();
    if (!m && kept) {
        vt__tls.dlerr_shown = kept;
        m = kept;
    } else {
        free(kept);
    }
    errno = e;
    return m;
}
extern __typeof__(vt__dlerror_export) dlerror __attribute__((alias("vt__dlerror_export"), visibility("default")));

int vt_libc_dlclose(void *handle)
{
    static const char *const v[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    static void *real;
    int (*f)(void *) = (int (*)(void *))vt_resolve_next_libc(&real, "dlclose", v, 2);
    return f ? f(handle) : -1;
}

int vt_libc_dlinfo(void *handle, int request, void *arg)
{
    static const char *const v[] = {"GLIBC_2.34", "GLIBC_2.3.3"};
    static void *real;
    int (*f)(void *, int, void *) = (int (*)(void *, int, void *))vt_resolve_next_libc(&real, "dlinfo", v, 2);
    return f ? f(handle, request, arg) : -1;
}

/* int dlclose(void *), int dlinfo(void *, int, void *) of the program: the C
 * library's, after the kept message is dropped (the program's call resets glibc's
 * message: it succeeds with none, or fails with its own). Neither depends on its
 * caller's address. */
VT_EARLY VT_EXPORT int dlclose(void *handle)
{
    if (__builtin_expect(vt__tls.dlerr != NULL, 0))
        free(vt__kept_take());
    vt_stkc_invalidate();   /* before the unmapping and after: cached stacks are stale */
    int r = vt_libc_dlclose(handle);
    vt_stkc_invalidate();
    return r;
}

VT_EARLY VT_EXPORT int dlinfo(void *handle, int request, void *arg)
{
    if (__builtin_expect(vt__tls.dlerr != NULL, 0))
        free(vt__kept_take());
    return vt_libc_dlinfo(handle, request, arg);
}

void vt_hooks_dl_fork_child(void)
{
    vt_relink_fork_child();
    int was = __atomic_load_n(&vt__dl_work, __ATOMIC_ACQUIRE);
    int w = (was & VT_DL_RELINK) | (vt__tls.dlerr ? VT_DL_KEPT : 0);
    if (w != was)   /* written only when it changes: each page written in the child is a copy */
        __atomic_store_n(&vt__dl_work, w, __ATOMIC_RELEASE);
}

/* ---- dl_iterate_phdr ---- */

VT_EARLY VT_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    vt_iterate_t f = (vt_iterate_t)__atomic_load_n(&vt__real_iterate, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!f, 0)) {
        vt_hooks_dl_init();
        f = (vt_iterate_t)__atomic_load_n(&vt__real_iterate, __ATOMIC_ACQUIRE);
        if (!f)
            return 0;
    }
    vt__tls.iterate++;
    int r = f(cb, data);
    vt__tls.iterate--;
    return r;
}

VT_EARLY static int vt__adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

/* The loader's count of loads so far (0 when unknown). */
VT_EARLY static unsigned long long vt__adds_now(void)
{
    vt_iterate_t f = (vt_iterate_t)__atomic_load_n(&vt__real_iterate, __ATOMIC_ACQUIRE);
    unsigned long long n = 0;
    if (f)
        f(vt__adds_cb, &n);
    return n;
}

/* ---- the work the dlopen and dlsym trampolines do off their fast path ---- */

/* Called by both trampolines, with the caller's arguments saved, when vt__dl_work is
 * not 0: the program's dlopen/dlsym resets glibc's message, so the kept one goes too;
 * a DEEPBIND load that has finished since it was seen is re-linked. Never inside a
 * dl_iterate_phdr callback (the re-link takes the loader's locks). errno kept. */
VT_EARLY __attribute__((visibility("hidden"), used)) void vt__loader_enter(void)
{
    int e = errno;
    if (vt__tls.dlerr)
        free(vt__kept_take());
    if ((__atomic_load_n(&vt__dl_work, __ATOMIC_ACQUIRE) & VT_DL_RELINK) && !vt_guard_in_iterate() &&
        vt__adds_now() != __atomic_load_n(&vt__adds_seen, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_and(&vt__dl_work, ~VT_DL_RELINK, __ATOMIC_ACQ_REL);
        vt_relink_all();
        vt__libc_dlerror();   /* our look-ups' failures; the program's call comes next */
    }
    errno = e;
}

/* 1 when one object holds a DT_RPATH (vt__any_rpath's callback). */
static int vt__rpath_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_RPATH) {
                *(int *)arg = 1;
                return 1;
            }
    }
    return 0;
}

/* Whether glibc's dlopen called from libvramtrace loads file exactly as called from
 * caller. glibc takes from the caller's object: its namespace (ours is the base one),
 * $ORIGIN in the name, the RPATH/RUNPATH searched for a name without '/', and the
 * DT_RPATH of its chain of loaders, searched for the new object's dependencies. So:
 * a name with '/' and no '$', a caller in the base namespace, and no loaded object with
 * a DT_RPATH (libvramtrace has none). */
static int vt__same_as_caller(const char *file, void *caller)
{
    if (!file || !strchr(file, '/') || strchr(file, '$'))
        return 0;
    Dl_info di;
    struct link_map *lm = NULL;
    Lmid_t ns = -1;
    if (!caller || !dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
        vt_libc_dlinfo(lm, RTLD_DI_LMID, &ns) != 0 || ns != LM_ID_BASE)
        return 0;
    int rpath = 0;
    vt_iterate_t f = (vt_iterate_t)__atomic_load_n(&vt__real_iterate, __ATOMIC_ACQUIRE);
    if (!f)
        return 0;
    f(vt__rpath_cb, &rpath);
    return !rpath;
}

/* dlopen of a DEEPBIND library made here (vt__same_as_caller): glibc's dlopen, then
 * the re-link before the program gets the handle, so a function the library handed
 * out from its constructor (a registry) is ours too. Result, dlerror() state and errno
 * are the real call's. */
VT_EARLY static void *vt__dlopen_relinked(const char *file, int mode)
{
    void *(*f)(const char *, int) = __atomic_load_n(&vt__real_dlopen, __ATOMIC_ACQUIRE);
    void *h = f(file, mode);
    if (h) {
        int e = errno;
        vt_relink_all();
        vt__libc_dlerror();   /* a successful dlopen leaves no message */
        errno = e;
    }
    return h;
}

/* dlopen's slow path (a DEEPBIND mode, pending work, or the real dlopen not known
 * yet), with the caller's return address: returns the function the trampoline jumps
 * to with the caller's arguments and return address: the C library's dlopen (the load
 * is the caller's own; a DEEPBIND load is noted for the next dlopen/dlsym), or
 * vt__dlopen_relinked when loading from here is the same load (then re-linked at
 * once, and noted too in case the re-link was busy on another thread). NULL: no
 * C library dlopen. */
VT_EARLY __attribute__((visibility("hidden"), used)) void *vt__dlopen_enter(const char *file, int mode,
                                                                            void *caller)
{
    if (!__atomic_load_n(&vt__real_dlopen, __ATOMIC_ACQUIRE))
        vt_hooks_dl_init();
    vt__loader_enter();
    void *real = (void *)__atomic_load_n(&vt__real_dlopen, __ATOMIC_ACQUIRE);
    if (real && (mode & RTLD_DEEPBIND)) {
        int e = errno;
        __atomic_store_n(&vt__adds_seen, vt__adds_now(), __ATOMIC_RELEASE);
        __atomic_fetch_or(&vt__dl_work, VT_DL_RELINK, __ATOMIC_ACQ_REL);
        int here = !vt_guard_in_iterate() && vt__same_as_caller(file, caller);
        vt__libc_dlerror();   /* dlinfo's; the program's dlopen resets it anyway */
        errno = e;
        if (here)
            return (void *)vt__dlopen_relinked;
    }
    return real;
}

#if defined(__x86_64__)
/* void *dlopen(const char *file, int mode): jumps to the C library's dlopen with the
 * caller's return address on the stack (glibc takes the caller's object from it);
 * the slow path (vt__dlopen_enter) runs first, with the arguments saved, for a
 * DEEPBIND mode or pending work. */
__asm__(
    ".text\n"
    ".globl dlopen\n"
    ".type dlopen, @function\n"
    ".p2align 4\n"
    "dlopen:\n"
    "    endbr64\n"
    "    movq vt__real_dlopen(%rip), %rax\n"
    "    testq %rax, %rax\n"
    "    jz 1f\n"
    "    testl $0x8, %esi\n"              /* RTLD_DEEPBIND */
    "    jnz 1f\n"
    "    movl vt__dl_work(%rip), %ecx\n"
    "    testl %ecx, %ecx\n"
    "    jnz 1f\n"
    "    jmp *%rax\n"
    "1:  pushq %rdi\n"
    "    pushq %rsi\n"
    "    subq $8, %rsp\n"
    "    movq 24(%rsp), %rdx\n"          /* the caller's return address */
    "    call vt__dlopen_enter\n"
    "    addq $8, %rsp\n"
    "    popq %rsi\n"
    "    popq %rdi\n"
    "    testq %rax, %rax\n"
    "    jz 2f\n"
    "    jmp *%rax\n"
    "2:  ret\n"                           /* no C library dlopen: NULL */
    ".size dlopen, .-dlopen\n"
    ".globl vt__dlopen_export\n"
    ".hidden vt__dlopen_export\n"
    ".set vt__dlopen_export, dlopen\n");
extern void *vt__dlopen_export(const char *, int);
#else
/* Elsewhere: a C wrapper (glibc then sees libvramtrace as the caller: a bare name is
 * searched along our RUNPATH, not the caller's). */
VT_EXPORT void *dlopen(const char *file, int mode)
{
    void *(*f)(const char *, int) = (void *(*)(const char *, int))vt__dlopen_enter(file, mode, NULL);
    return f ? f(file, mode) : NULL;
}
extern __typeof__(dlopen) vt__dlopen_export __attribute__((alias("dlopen"), visibility("hidden")));
#endif

extern void *vt__dlsym_export(void *, const char *);   /* vt_resolve.c */

int vt_hooks_dl_target(const char *name, void **hook, void **real)
{
    if (name[0] != 'd' || name[1] != 'l')
        return 0;
    if (!strcmp(name, "dlsym")) {
        *hook = (void *)vt__dlsym_export;
        *real = (void *)__atomic_load_n(&vt__real_dlsym, __ATOMIC_ACQUIRE);
    } else if (!strcmp(name, "dlopen")) {
        *hook = (void *)vt__dlopen_export;
        *real = (void *)__atomic_load_n(&vt__real_dlopen, __ATOMIC_ACQUIRE);
    } else if (!strcmp(name, "dlerror")) {
        *hook = (void *)vt__dlerror_export;
        *real = __atomic_load_n(&vt__real_dlerror, __ATOMIC_ACQUIRE);
    } else {
        return 0;
    }
    return *real != NULL;
}
