/* vt_resolve.c — the dlsym override and real-function resolution (see vt_resolve.h).
 *
 * CUDA 13's runtime (shared and static) reaches the driver with dlopen("libcuda.so.1")
 * and ONE dlsym(handle, "cuGetProcAddress_v2"); every other entry point comes through
 * that resolver (docs/cuda-interposition.md). So vramtrace exports `dlsym`: the real
 * glibc dlsym runs first, and a result that is a real function we wrap is replaced by
 * its hook. Names that do not start with "cu" return glibc's answer untouched, with no
 * extra work. The resolver shims (cuGetProcAddress/_v2, cudaGetDriverEntryPoint*:
 * rows of shape RESOLVE in vt_hook_table.h) use vt_resolve_swap the same way.
 *
 * dlsym(RTLD_NEXT, name) searches relative to the CALLER's object. An ordinary C
 * wrapper would make glibc see libvramtrace as the caller, so on x86-64 the exported
 * `dlsym` is a few instructions of assembly that tail-jump to the real dlsym for
 * RTLD_NEXT with the caller's return address intact; every other handle goes to
 * vt__dlsym_impl. (Elsewhere a C fallback is used and RTLD_NEXT is resolved relative
 * to libvramtrace; documented in preload/README.md.)
 */
#define _GNU_SOURCE
#include "vt_resolve.h"
#include "vt_driver.h"
#include "vt_guard.h"
#include "vt_hooks_dl.h"
#include "vt_gnuhash.h"
#include "vt_log.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

__attribute__((visibility("hidden"), used)) void *(*vt__real_dlsym)(void *, const char *);
/* vt_hooks_dl.c: loader work the trampoline does first when not 0 */
extern int vt__dl_work;
void vt__loader_enter(void);

/* Runs before the sanitizers' runtimes are initialised when an ASan-instrumented
 * build is preloaded (ASan's own start-up calls dlsym(RTLD_NEXT, ...)): no
 * instrumentation here. */
__attribute__((no_sanitize("address", "undefined", "thread")))
static void vt__find_real_dlsym(void)
{
    if (__atomic_load_n(&vt__real_dlsym, __ATOMIC_ACQUIRE))
        return;
    static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    void *p = NULL;
    for (size_t i = 0; i < sizeof vers / sizeof vers[0] && !p; i++)
        p = dlvsym(RTLD_NEXT, "dlsym", vers[i]);
    if (p)
        __atomic_store_n(&vt__real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

/* 1 when p lies in libvramtrace itself: a scope that holds our library (a plugin
 * linked with -lvramtrace, run under the preload too) answers a lookup with our own
 * hook, which as a "real" function would call itself forever. */
static int vt__is_ours(void *p)
{
    static char vt__self;   /* an address inside libvramtrace */
    Dl_info a, b;
    return dladdr(p, &a) && dladdr(&vt__self, &b) && a.dli_fbase == b.dli_fbase;
}

static void vt__set(void **slot, void *p)
{
    if (p && !__atomic_load_n(slot, __ATOMIC_ACQUIRE) && !vt__is_ours(p))
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
}

/* 1 when p lies in a copy of libvramtrace (ours or another one: an object that
 * defines vramtrace_enabled itself). A driver function vramtrace calls for its own use
 * must be the driver's: another copy's hook for it would call back into ours. */
static int vt__in_a_vramtrace(void *p)
{
    Dl_info a, b;
    if (!dladdr(p, &a) || !a.dli_fname)
        return 0;
    void *h = dlopen(a.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *api = vt__real_dlsym(h, "vramtrace_enabled");
    int in = api && dladdr(api, &b) && b.dli_fbase == a.dli_fbase;
    vt_libc_dlclose(h);
    return in;
}

/* A driver query's slot (sys/vt_driver.h): the driver's function only. */
static void vt__set_driver_fn(void **slot, void *p)
{
    if (p && !__atomic_load_n(slot, __ATOMIC_ACQUIRE) && !vt__in_a_vramtrace(p))
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
}

/* A hook's real function, and its front's nested-call target (the real function
 * from now on instead of the hook's body). */
static void vt__set_hook(const vt_hook_entry *h, void *p)
{
    vt__set(h->real, p);
    void *real = __atomic_load_n(h->real, __ATOMIC_ACQUIRE);
    if (h->fwd && real)
        __atomic_store_n(h->fwd, real, __ATOMIC_RELEASE);
}

/* Fills empty slots by looking each name up with handle. */
static void vt__fill_from(void *handle)
{
    for (size_t i = 0; i < vt__n_hooks; i++)
        if (!__atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE))
            vt__set_hook(&vt__hooks[i], vt__real_dlsym(handle, vt__hooks[i].name));
    for (size_t i = 0; i < vt__n_driver_fns; i++)
        if (!__atomic_load_n(vt__driver_fns[i].slot, __ATOMIC_ACQUIRE))
            vt__set_driver_fn(vt__driver_fns[i].slot, vt__real_dlsym(handle, vt__driver_fns[i].name));
    vt_dlerr_clear();  /* our failed look-ups must not show in the program's dlerror() */
}

void vt_resolve_init(void)
{
    vt__find_real_dlsym();
    if (!vt__real_dlsym)
        return;
    int e = errno;
    /* A look-up of a name no loaded object defines (every name, in a process that
     * never loaded CUDA) costs the loader an error message each: skipped when no
     * object may define any (dlsym could find none of them). */
    if (vt_gnuhash_may_define((const void *)&vt_resolve_init, &vt__hooks[0].name, sizeof vt__hooks[0], vt__n_hooks) ||
        vt_gnuhash_may_define((const void *)&vt_resolve_init, &vt__driver_fns[0].name, sizeof vt__driver_fns[0],
                              vt__n_driver_fns))
        vt__fill_from(RTLD_NEXT);
    errno = e;
}

/* Objects already scanned for missing reals (by load base), to do it once each. */
static void *vt__scanned[32];
static unsigned vt__nscanned;

static void vt__fill_from_object_of(void *p)
{
    Dl_info di;
    if (!dladdr(p, &di) || !di.dli_fname || !di.dli_fbase)
        return;
    if (vt__is_ours(p))
        return;   /* our own object: its scope has our hooks, never the reals */
    unsigned n = __atomic_load_n(&vt__nscanned, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && i < 32; i++)
        if (__atomic_load_n(&vt__scanned[i], __ATOMIC_RELAXED) == di.dli_fbase)
            return;
    void *h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        vt__fill_from(h);
        vt_libc_dlclose(h);
    }
    vt_dlerr_clear();
    unsigned slot = __atomic_fetch_add(&vt__nscanned, 1, __ATOMIC_ACQ_REL);
    if (slot < 32)
        __atomic_store_n(&vt__scanned[slot], di.dli_fbase, __ATOMIC_RELEASE);
}

/* dl_iterate_phdr callback: collects the names of the loaded CUDA runtimes and
 * drivers (libcudart.so*, libcuda.so*), also those loaded RTLD_LOCAL. Only copies:
 * dlopen here would take the loader's load lock while dl_iterate_phdr holds its
 * write lock, the reverse of dlopen's own order (a deadlock with a thread in dlopen). */
#define VT_CUDA_LIBS 8
typedef struct vt_cuda_libs { char name[VT_CUDA_LIBS][512]; int n; } vt_cuda_libs;

static int vt__collect_cuda_libs(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    vt_cuda_libs *l = arg;
    const char *name = info->dlpi_name;
    if (!name || !*name || l->n >= VT_CUDA_LIBS || strlen(name) >= sizeof l->name[0])
        return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libcudart.so", 12) && strncmp(base, "libcuda.so", 10))
        return 0;
    strcpy(l->name[l->n++], name);
    return 0;
}

/* Keeps the object that p lives in loaded for good (RTLD_NODELETE on the object
 * already loaded): a real function found in a library loaded RTLD_LOCAL is called
 * through our hook by whoever binds to it, so that library must not be unloaded under
 * the slot (a dlclose and a reload elsewhere would leave the slot pointing at unmapped
 * code). The cost: such a runtime stays loaded after the program's dlclose. */
static void vt__pin_object_of(void *p)
{
    Dl_info di;
    if (!p || !dladdr(p, &di) || !di.dli_fname || !di.dli_fname[0])
        return;
    void *h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (h)
        vt_libc_dlclose(h);   /* the NODELETE mark stays; the reference goes back */
}

/* Pins the object of every slot that went from empty to set since `before`. */
static void vt__pin_new(void *const *before)
{
    void *last = NULL;
    for (size_t i = 0; i < vt__n_hooks; i++) {
        void *now = __atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE);
        if (now && !before[i] && now != last) {
            vt__pin_object_of(now);
            last = now;
        }
    }
}

/* dl_iterate_phdr callback for a look-up inside another dl_iterate_phdr callback:
 * fills empty slots from the symbol tables of the loaded CUDA runtimes and drivers
 * (libcudart.so*, libcuda.so*), read directly (vt_gnuhash.c): the loader's write lock is
 * held, so neither dlsym nor dladdr may run (their load lock is taken in the reverse
 * order by a thread in dlopen). The library is not pinned (that needs dlopen): a
 * dlclose of a runtime found this way and loaded again elsewhere is not covered. */
static int vt__fill_elf_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const char *name = info->dlpi_name;
    if (!name || !*name)
        return 0;
    const char *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    int rt = !strncmp(b, "libcudart.so", 12), drv = !strncmp(b, "libcuda.so", 10);
    if (!rt && !drv)
        return 0;
    for (size_t i = 0; i < vt__n_hooks; i++)
        if (!__atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE)) {
            void *p = vt_gnuhash_lookup(info, vt__hooks[i].name);
            if (p) {
                __atomic_store_n(vt__hooks[i].real, p, __ATOMIC_RELEASE);
                if (vt__hooks[i].fwd)
                    __atomic_store_n(vt__hooks[i].fwd, p, __ATOMIC_RELEASE);
            }
        }
    for (size_t i = 0; drv && i < vt__n_driver_fns; i++)
        if (!__atomic_load_n(vt__driver_fns[i].slot, __ATOMIC_ACQUIRE)) {
            void *p = vt_gnuhash_lookup(info, vt__driver_fns[i].name);
            if (p)
                __atomic_store_n(vt__driver_fns[i].slot, p, __ATOMIC_RELEASE);
        }
    return 0;
}

void vt_resolve_lazy_from(void *caller)
{
    /* Inside a dl_iterate_phdr callback every look-up below would take the loader's
     * load lock under its write lock (a deadlock with a thread in dlopen): the symbol
     * tables of the loaded CUDA libraries are read instead. */
    if (vt_guard_in_iterate()) {
        int e = errno;
        dl_iterate_phdr(vt__fill_elf_cb, NULL);
        errno = e;
        return;
    }
    int e = errno;
    char *dlerr = vt_dlerr_save();
    vt_resolve_init();
    if (!__atomic_load_n(&vt__real_dlsym, __ATOMIC_ACQUIRE)) {
        vt_dlerr_restore(dlerr);
        errno = e;
        return;
    }
    void *before[VT_RESOLVE_MAX_HOOKS];   /* the slots as RTLD_NEXT left them */
    size_t n = vt__n_hooks < VT_RESOLVE_MAX_HOOKS ? vt__n_hooks : VT_RESOLVE_MAX_HOOKS;
    for (size_t i = 0; i < n; i++)
        before[i] = __atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE);
    /* The definition the caller would have bound to without us lives in its own
     * scope (the object and its dependencies): a library dlopen'ed RTLD_LOCAL that
     * links the runtime, e.g. a Python extension module, reaches our hook through the
     * global scope while its libcudart is in no scope RTLD_NEXT searches. */
    if (caller)
        vt__fill_from_object_of(caller);
    /* then any CUDA runtime or driver loaded at all (a caller we could not place:
     * the hook's front called its body, so the return address is our own) */
    vt_cuda_libs libs;
    libs.n = 0;
    dl_iterate_phdr(vt__collect_cuda_libs, &libs);
    for (int i = 0; i < libs.n; i++) {
        void *h = dlopen(libs.name[i], RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            vt__fill_from(h);
            vt_libc_dlclose(h);
        }
    }
    if (n == vt__n_hooks)
        vt__pin_new(before);
    vt_dlerr_restore(dlerr);
    errno = e;
}

void *vt_resolve_adopt(const vt_hook_entry *row, void *real)
{
    if (!real || vt__is_ours(real))
        return NULL;
    void *before = __atomic_load_n(row->real, __ATOMIC_ACQUIRE);
    if (!before) {
        vt__set_hook(row, real);
        if (__atomic_load_n(row->real, __ATOMIC_ACQUIRE) == real)
            vt__pin_object_of(real);
    }
    return __atomic_load_n(row->real, __ATOMIC_ACQUIRE) == real ? row->hook : NULL;
}

static void *vt__match(void *p, int *is_hook, int *missing)
{
    *is_hook = 0;
    *missing = 0;
    for (size_t i = 0; i < vt__n_hooks; i++) {
        void *real = __atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE);
        if (real == p)
            return vt__hooks[i].hook;
        if (vt__hooks[i].hook == p) {
            *is_hook = 1;
            return real;  /* NULL when our hook has nothing to forward to */
        }
        if (!real)
            *missing = 1;
    }
    return NULL;
}

/* 1 when one of the driver functions vramtrace asks for itself (sys/vt_driver.h) is
 * still unknown. */
static int vt__driver_missing(void)
{
    for (size_t i = 0; i < vt__n_driver_fns; i++)
        if (!__atomic_load_n(vt__driver_fns[i].slot, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

void *vt_resolve_swap(void *p)
{
    if (!p)
        return p;
    int e = errno;
    int is_hook, missing;
    void *h = vt__match(p, &is_hook, &missing);
    /* An object we have not scanned, while a hook or a driver query still lacks its
     * function: a driver loaded after start-up (the runtime's own dlopen), also when
     * every hook found a real function elsewhere (another interposer, or a second
     * copy of libvramtrace, behind us). Each object is scanned once. */
    if (!h && !is_hook && (missing || vt__driver_missing()) && !vt_guard_in_iterate()) {
        char *dlerr = vt_dlerr_save();
        vt__fill_from_object_of(p);
        vt_dlerr_restore(dlerr);
        h = vt__match(p, &is_hook, &missing);
    }
    if (is_hook && !h && !vt_guard_in_iterate()) {
        char *dlerr = vt_dlerr_save();
        vt_resolve_init();
        vt_dlerr_restore(dlerr);
        h = vt__match(p, &is_hook, &missing);
    }
    errno = e;
    if (is_hook)
        return h ? p : NULL;  /* our own export: only if it has a real behind it */
    return h ? h : p;
}

/* Called by the dlsym trampoline below (x86-64 assembly), before it tail-jumps for
 * RTLD_NEXT, when the real dlsym is not known yet (a dlsym from another library's start-up, before our
 * constructor): the caller's return address must reach glibc untouched. */
__attribute__((visibility("hidden"), used, no_sanitize("address", "undefined", "thread")))
void vt__dlsym_find_real(void)
{
    vt__find_real_dlsym();
}

/* Not instrumented either: ASan's start-up calls dlsym(RTLD_DEFAULT, ...) too. */
__attribute__((visibility("hidden"), used, no_sanitize("address", "undefined", "thread")))
void *vt__dlsym_impl(void *handle, const char *name)
{
    if (!__atomic_load_n(&vt__real_dlsym, __ATOMIC_ACQUIRE))
        vt__find_real_dlsym();
    if (!vt__real_dlsym)
        return NULL;
    void *p = vt__real_dlsym(handle, name);
    if (!p || !name || name[0] != 'c' || name[1] != 'u' || handle == RTLD_NEXT)
        return p;
    return vt_resolve_swap(p);
}

#if defined(__x86_64__)
/* For the trampoline below: a "cu" name. redo = 1 when glibc found nothing, so that the
 * trampoline asks glibc again AS THE CALLER (dlerror() then names the caller's object,
 * exactly as without vramtrace); 0 when p is the answer (NULL included: one of our
 * hooks with no real function behind it). Returned in rax:rdx. */
typedef struct { void *p; uintptr_t redo; } vt_dlsym_res;
__attribute__((visibility("hidden"), used, no_sanitize("address", "undefined", "thread")))
vt_dlsym_res vt__dlsym_cu(void *handle, const char *name)
{
    vt_dlsym_res r = {vt__real_dlsym(handle, name), 0};
    if (!r.p)
        r.redo = 1;
    else
        r.p = vt_resolve_swap(r.p);
    return r;
}

/* void *dlsym(void *handle, const char *name). Every name that does not start with
 * "cu", and every RTLD_NEXT look-up, tail-jumps to glibc with the caller's return
 * address, so glibc sees the caller (RTLD_NEXT order, RTLD_DEFAULT's namespace,
 * dlerror() text): exactly glibc's answer. "cu" names go through vt__dlsym_cu.
 * The first call finds glibc's dlsym first, with the arguments saved. */
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, @function\n"
    ".p2align 4\n"
    "dlsym:\n"
    "    endbr64\n"
    "    movq vt__real_dlsym(%rip), %rax\n"
    "    testq %rax, %rax\n"
    "    jnz 3f\n"
    "    pushq %rdi\n"
    "    pushq %rsi\n"
    "    subq $8, %rsp\n"              /* 16-byte alignment for the call */
    "    call vt__dlsym_find_real\n"
    "    addq $8, %rsp\n"
    "    popq %rsi\n"
    "    popq %rdi\n"
    "    movq vt__real_dlsym(%rip), %rax\n"
    "    testq %rax, %rax\n"
    "    jz 1f\n"
    "3:  movl vt__dl_work(%rip), %ecx\n"   /* loader work pending (vt_hooks_dl.c) */
    "    testl %ecx, %ecx\n"
    "    jnz 5f\n"
    "6:  cmpq $-1, %rdi\n"
    "    je 2f\n"
    "    testq %rsi, %rsi\n"
    "    jz 2f\n"
    "    cmpb $0x63, (%rsi)\n"        /* 'c' */
    "    jne 2f\n"
    "    cmpb $0x75, 1(%rsi)\n"       /* 'u' */
    "    jne 2f\n"
    "    pushq %rdi\n"
    "    pushq %rsi\n"
    "    subq $8, %rsp\n"
    "    call vt__dlsym_cu\n"
    "    addq $8, %rsp\n"
    "    popq %rsi\n"
    "    popq %rdi\n"
    "    testq %rdx, %rdx\n"
    "    jnz 4f\n"
    "    ret\n"
    "4:  movq vt__real_dlsym(%rip), %rax\n"
    "2:  jmp *%rax\n"
    "1:  jmp vt__dlsym_impl\n"
    "5:  pushq %rdi\n"
    "    pushq %rsi\n"
    "    subq $8, %rsp\n"
    "    call vt__loader_enter\n"
    "    addq $8, %rsp\n"
    "    popq %rsi\n"
    "    popq %rdi\n"
    "    movq vt__real_dlsym(%rip), %rax\n"
    "    jmp 6b\n"
    ".size dlsym, .-dlsym\n"
    ".globl vt__dlsym_export\n"
    ".hidden vt__dlsym_export\n"
    ".set vt__dlsym_export, dlsym\n");
#else
__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
    if (__atomic_load_n(&vt__dl_work, __ATOMIC_ACQUIRE))
        vt__loader_enter();
    return vt__dlsym_impl(handle, name);
}
extern __typeof__(dlsym) vt__dlsym_export __attribute__((alias("dlsym"), visibility("hidden")));
#endif

__attribute__((no_sanitize("address", "thread", "undefined")))
void *vt_resolve_next_libc(void **cache, const char *name, const char *const *versions, size_t nversions)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    int e = errno;
    for (size_t i = 0; i < nversions && !f; i++)
        f = dlvsym(RTLD_NEXT, name, versions[i]);
    if (!f)   /* another C library: the unversioned next one (our dlsym tail-jumps) */
        f = dlsym(RTLD_NEXT, name);
    if (f)
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    errno = e;
    return f;
}
