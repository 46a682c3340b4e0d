/* vt_relink.c — objects that bound past the preload are bound to our hooks again
 * (see vt_relink.h; why and when: vt_hooks_dl.c).
 *
 * The loaded objects are listed with dl_iterate_phdr (names and load addresses copied
 * in its callback, nothing else done there); each is then held with
 * dlopen(RTLD_NOLOAD) while its dynamic section (link_map.l_ld: DT_SYMTAB, DT_STRTAB,
 * DT_RELA, DT_JMPREL) is read and its relocations walked: R_X86_64_JUMP_SLOT,
 * R_X86_64_GLOB_DAT and R_X86_64_64 (addend 0) against a symbol we export. The
 * real function behind a slot is the slot's value when it is the real_ we hold, else
 * dlsym on the object's own handle (its scope: itself and its dependencies, which a
 * DEEPBIND object searches first); a lazy PLT entry (a value inside the object: the lazy-binding trampoline)
 * resolves that way too. Objects with text relocations are skipped.
 */
#define _GNU_SOURCE
#include "vt_relink.h"
#include "vt_hooks.h"
#include "vt_hooks_dl.h"
#include "vt_resolve.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)

typedef struct vt_obj {
    uintptr_t addr;              /* dlpi_addr                                  */
    size_t    name;              /* offset of its name in vt_objs.names        */
} vt_obj;

typedef struct vt_objs {
    vt_obj *v;
    char   *names;
    size_t  n, cap, used, names_cap;
} vt_objs;

static int vt__count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    vt_objs *o = arg;
    o->cap++;
    o->names_cap += strlen(info->dlpi_name ? info->dlpi_name : "") + 1;
    return 0;
}

/* Copies only (the callback holds the loader's write lock). */
static int vt__copy_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    vt_objs *o = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    size_t len = strlen(name) + 1;
    if (o->n == o->cap || o->used + len > o->names_cap)
        return 1;   /* loaded since the count: the next re-link sees it */
    memcpy(o->names + o->used, name, len);
    o->v[o->n].addr = info->dlpi_addr;
    o->v[o->n].name = o->used;
    o->used += len;
    o->n++;
    return 0;
}

/* One object's tables, addresses made absolute. */
typedef struct vt_dyn {
    uintptr_t         base;
    const ElfW(Sym)  *symtab;
    const char       *strtab;
    const ElfW(Rela) *rela, *jmprel;
    size_t            nrela, njmprel;
    uintptr_t         ro_lo, ro_hi;      /* pages made read-only after relocation */
    const ElfW(Phdr) *phdr;
    int               phnum;
} vt_dyn;

/* d_ptr values are absolute in glibc's in-memory dynamic section on x86-64; kept
 * relative elsewhere, they are below the load address. */
static uintptr_t vt__abs(uintptr_t base, uintptr_t p)
{
    return p < base ? p + base : p;
}

static int vt__read_dyn(struct link_map *lm, vt_dyn *d)
{
    memset(d, 0, sizeof *d);
    d->base = lm->l_addr;
    size_t relasz = 0, relaent = sizeof(ElfW(Rela)), pltrelsz = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *e = lm->l_ld; e && e->d_tag != DT_NULL; e++) {
        switch (e->d_tag) {
        case DT_SYMTAB:   d->symtab = (const ElfW(Sym) *)vt__abs(d->base, e->d_un.d_ptr); break;
        case DT_STRTAB:   d->strtab = (const char *)vt__abs(d->base, e->d_un.d_ptr); break;
        case DT_RELA:     d->rela = (const ElfW(Rela) *)vt__abs(d->base, e->d_un.d_ptr); break;
        case DT_RELASZ:   relasz = e->d_un.d_val; break;
        case DT_RELAENT:  relaent = e->d_un.d_val; break;
        case DT_JMPREL:   d->jmprel = (const ElfW(Rela) *)vt__abs(d->base, e->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = e->d_un.d_val; break;
        case DT_PLTREL:   pltrel = (long)e->d_un.d_val; break;
        case DT_TEXTREL:  return 0;
        case DT_FLAGS:    if (e->d_un.d_val & DF_TEXTREL) return 0; break;
        default: break;
        }
    }
    if (!d->symtab || !d->strtab || relaent != sizeof(ElfW(Rela)) || pltrel != DT_RELA)
        return 0;
    d->nrela = d->rela ? relasz / sizeof(ElfW(Rela)) : 0;
    d->njmprel = d->jmprel ? pltrelsz / sizeof(ElfW(Rela)) : 0;
    return 1;
}

/* PT_LOAD and PT_GNU_RELRO of the object at base (its program headers, found again
 * through dl_iterate_phdr under the handle we hold). */
typedef struct vt_phdrs { uintptr_t base; const ElfW(Phdr) *phdr; int phnum; } vt_phdrs;

static int vt__phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    vt_phdrs *p = arg;
    if (info->dlpi_addr != p->base)
        return 0;
    p->phdr = info->dlpi_phdr;
    p->phnum = info->dlpi_phnum;
    return 1;
}

static void vt__read_phdrs(vt_dyn *d)
{
    vt_phdrs p = {d->base, NULL, 0};
    dl_iterate_phdr(vt__phdr_cb, &p);
    d->phdr = p.phdr;
    d->phnum = p.phnum;
    long pg = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < d->phnum; i++)
        if (d->phdr[i].p_type == PT_GNU_RELRO) {
            uintptr_t lo = d->base + d->phdr[i].p_vaddr;
            d->ro_lo = lo & ~(uintptr_t)(pg - 1);
            d->ro_hi = (lo + d->phdr[i].p_memsz) & ~(uintptr_t)(pg - 1);
        }
}

/* 1 when a lies in one of the object's segments with all of flags. */
static int vt__in_segment(const vt_dyn *d, uintptr_t a, unsigned flags)
{
    for (int i = 0; i < d->phnum; i++) {
        const ElfW(Phdr) *ph = &d->phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags &&
            a >= d->base + ph->p_vaddr && a < d->base + ph->p_vaddr + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* Stores v into slot: a RELRO page is made writable for the store and read-only
 * again; anything else must lie in a writable segment. */
static void vt__store(const vt_dyn *d, void **slot, void *v)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(pg - 1);
    int ro = page >= d->ro_lo && page < d->ro_hi;
    if (!ro && !vt__in_segment(d, (uintptr_t)slot, PF_W))
        return;
    if (ro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    if (ro)
        mprotect((void *)page, (size_t)pg, PROT_READ);
}

/* Our hook for name and the real function we hold for it (NULL: not known yet);
 * row: the hook table's row, NULL for a loader function. 0: not ours. */
static int vt__target(const char *name, const vt_hook_entry **row, void **hook, void **real)
{
    *row = NULL;
    if (name[0] == 'c' && name[1] == 'u') {
        for (size_t i = 0; i < vt__n_hooks; i++)
            if (!strcmp(vt__hooks[i].name, name)) {
                *row = &vt__hooks[i];
                *hook = vt__hooks[i].hook;
                *real = __atomic_load_n(vt__hooks[i].real, __ATOMIC_ACQUIRE);
                return 1;
            }
        return 0;
    }
    if (!strcmp(name, "pthread_cancel")) {
        vt_hooks_cancel_target(hook, real);
        return *real != NULL;
    }
    return vt_hooks_dl_target(name, hook, real);
}

static void vt__relink_table(void *h, const vt_dyn *d, const ElfW(Rela) *r, size_t n)
{
    for (size_t i = 0; i < n; i++, r++) {
        unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
        size_t si = ELF64_R_SYM(r->r_info);
        if (!si || !(type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
                     (type == R_X86_64_64 && r->r_addend == 0)))
            continue;
        const char *name = d->strtab + d->symtab[si].st_name;
        const vt_hook_entry *row;
        void *hook, *real;
        if (!vt__target(name, &row, &hook, &real))
            continue;
        void **slot = (void **)(d->base + r->r_offset);
        void *cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (cur == hook)
            continue;
        void *want = (real && cur == real) ? cur : NULL;
        if (!want) {
            int lazy_entry = type == R_X86_64_JUMP_SLOT && vt__in_segment(d, (uintptr_t)cur, PF_X);
            void *own = vt__real_dlsym(h, name);
            if (!own || (!lazy_entry && own != cur))
                continue;
            want = own;
        }
        void *to = row ? vt_resolve_adopt(row, want) : (want == real ? hook : NULL);
        if (to)
            vt__store(d, slot, to);
    }
}

static void vt__relink_object(const char *name, uintptr_t addr)
{
    void *(*op)(const char *, int) = __atomic_load_n(&vt__real_dlopen, __ATOMIC_ACQUIRE);
    if (!op)
        return;
    void *h = op(name[0] ? name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    struct link_map *lm = NULL;
    vt_dyn d;
    if (vt_libc_dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_addr == addr && vt__read_dyn(lm, &d)) {
        vt__read_phdrs(&d);
        if (d.phdr) {
            vt__relink_table(h, &d, d.rela, d.nrela);
            vt__relink_table(h, &d, d.jmprel, d.njmprel);
        }
    }
    vt_libc_dlclose(h);
}

static int vt__own_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t probe = (uintptr_t)&vt_relink_all;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && probe >= info->dlpi_addr + ph->p_vaddr &&
            probe < info->dlpi_addr + ph->p_vaddr + ph->p_memsz) {
            *(uintptr_t *)arg = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

static int vt__relink_busy;   /* atomic: one re-link at a time; another caller returns */

void vt_relink_fork_child(void)
{
    if (__atomic_load_n(&vt__relink_busy, __ATOMIC_ACQUIRE))   /* a page written in the */
        __atomic_store_n(&vt__relink_busy, 0, __ATOMIC_RELEASE);  /* child is a copy */
}

void vt_relink_all(void)
{
    int *busy_p = &vt__relink_busy;
    if (__atomic_exchange_n(busy_p, 1, __ATOMIC_ACQ_REL))
        return;
    int e = errno;
    uintptr_t self = 0;
    dl_iterate_phdr(vt__own_cb, &self);
    vt_objs o;
    memset(&o, 0, sizeof o);
    dl_iterate_phdr(vt__count_cb, &o);
    o.cap += 8;                      /* a few loaded between the two walks */
    o.names_cap += 8 * 256;
    o.v = malloc(o.cap * sizeof *o.v);
    o.names = malloc(o.names_cap);
    if (o.v && o.names) {
        dl_iterate_phdr(vt__copy_cb, &o);
        for (size_t i = 0; i < o.n; i++)
            if (o.v[i].addr != self)
                vt__relink_object(o.names + o.v[i].name, o.v[i].addr);
    }
    free(o.v);
    free(o.names);
    errno = e;
    __atomic_store_n(busy_p, 0, __ATOMIC_RELEASE);
}

#else

void vt_relink_all(void)
{
}

void vt_relink_fork_child(void)
{
}

#endif
