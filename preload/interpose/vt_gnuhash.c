/* vt_gnuhash.c — a symbol's definition in one loaded object, from its DT_GNU_HASH,
 * DT_SYMTAB, DT_STRTAB and DT_VERSYM (see vt_gnuhash.h). The GNU hash layout: nbuckets,
 * symoffset, bloom_size, bloom_shift, the bloom words, the buckets, then one chain
 * word per symbol from symoffset on (low bit set on a chain's last symbol). The same
 * tables, read once per object, answer whether any loaded object may define one of a
 * list of names (vt_gnuhash_may_define).
 */
#define _GNU_SOURCE
#include "vt_gnuhash.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

static uint32_t vt__gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

/* d_ptr values are absolute in glibc's in-memory dynamic section on x86-64; kept
 * relative elsewhere, they are below the load address. */
static uintptr_t vt__abs(uintptr_t base, uintptr_t p)
{
    return p < base ? p + base : p;
}

/* An object's dynamic tables, read once for several names. */
typedef struct vt__tables {
    uintptr_t base;
    const uint32_t *gh;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Half) *versym;
} vt__tables;

/* Fills t from info's dynamic section: 1, or 0 when it has no GNU hash table (or no
 * symbol or string table) to read. */
static int vt__tables_of(const struct dl_phdr_info *info, vt__tables *t)
{
    memset(t, 0, sizeof *t);
    t->base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(t->base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_GNU_HASH: t->gh = (const uint32_t *)vt__abs(t->base, dyn->d_un.d_ptr); break;
        case DT_SYMTAB:   t->symtab = (const ElfW(Sym) *)vt__abs(t->base, dyn->d_un.d_ptr); break;
        case DT_STRTAB:   t->strtab = (const char *)vt__abs(t->base, dyn->d_un.d_ptr); break;
        case DT_VERSYM:   t->versym = (const ElfW(Half) *)vt__abs(t->base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    return t->gh && t->symtab && t->strtab && (t->gh[0] == 0 || t->gh[2] != 0);
}

/* The symbol defining name (h: its GNU hash) in t's object: with strict, the default version's and not
 * an IFUNC (what vt_gnuhash_lookup answers); without, any definition. NULL: none. */
static const ElfW(Sym) *vt__find(const vt__tables *t, const char *name, uint32_t h, int strict)
{
    const uint32_t *gh = t->gh;
    if (gh[0] == 0)
        return NULL;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], bloom_shift = gh[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gh + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    ElfW(Addr) word = bloom[(h / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> bloom_shift) % bits));
    if ((word & mask) != mask)
        return NULL;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) *s = &t->symtab[i];
        if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
            (!strict || (ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC && (!t->versym || !(t->versym[i] & 0x8000)))) &&
            !strcmp(name, t->strtab + s->st_name))
            return s;
        if (h2 & 1)
            break;
    }
    return NULL;
}

void *vt_gnuhash_lookup(const struct dl_phdr_info *info, const char *name)
{
    vt__tables t;
    if (!vt__tables_of(info, &t))
        return NULL;
    const ElfW(Sym) *s = vt__find(&t, name, vt__gnu_hash(name), 1);
    return s ? (void *)(t.base + s->st_value) : NULL;
}

/* The objects vt_gnuhash_may_define reads, but the one holding skip. */
#define VT__MAX_OBJECTS 32
typedef struct vt__objects {
    uintptr_t skip;
    vt__tables t[VT__MAX_OBJECTS];
    int n;
    int unknown;   /* an object without a GNU hash table, or too many objects */
} vt__objects;

static int vt__collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    vt__objects *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && o->skip - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
            return 0;
    }
    if (o->n == VT__MAX_OBJECTS || !vt__tables_of(info, &o->t[o->n])) {
        o->unknown = 1;
        return 1;
    }
    o->n++;
    return 0;
}

int vt_gnuhash_may_define(const void *skip, const char *const *first, size_t stride, size_t n)
{
    vt__objects o;
    o.skip = (uintptr_t)skip;
    o.n = 0;
    o.unknown = 0;
    dl_iterate_phdr(vt__collect_cb, &o);
    if (o.unknown)
        return 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = *(const char *const *)((const char *)first + i * stride);
        uint32_t h = vt__gnu_hash(name);
        for (int k = 0; k < o.n; k++)
            if (vt__find(&o.t[k], name, h, 0))
                return 1;
    }
    return 0;
}
