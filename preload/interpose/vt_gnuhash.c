/* vt_gnuhash.c — a symbol's definition in one loaded object, from its DT_GNU_HASH,
 * DT_SYMTAB, DT_STRTAB and DT_VERSYM (see vt_gnuhash.h). The GNU hash layout: nbuckets,
 * symoffset, bloom_size, bloom_shift, the bloom words, the buckets, then one chain
 * word per symbol from symoffset on (low bit set on a chain's last symbol).
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

void *vt_gnuhash_lookup(const struct dl_phdr_info *info, const char *name)
{
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return NULL;
    const uint32_t *gh = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Half) *versym = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_GNU_HASH: gh = (const uint32_t *)vt__abs(base, dyn->d_un.d_ptr); break;
        case DT_SYMTAB:   symtab = (const ElfW(Sym) *)vt__abs(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB:   strtab = (const char *)vt__abs(base, dyn->d_un.d_ptr); break;
        case DT_VERSYM:   versym = (const ElfW(Half) *)vt__abs(base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    if (!gh || !symtab || !strtab || gh[0] == 0 || gh[2] == 0)
        return NULL;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], bloom_shift = gh[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gh + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    uint32_t h = vt__gnu_hash(name);
    ElfW(Addr) word = bloom[(h / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> bloom_shift) % bits));
    if ((word & mask) != mask)
        return NULL;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) *s = &symtab[i];
        if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC &&
            (!versym || !(versym[i] & 0x8000)) && !strcmp(name, strtab + s->st_name))
            return (void *)(base + s->st_value);
        if (h2 & 1)
            break;
    }
    return NULL;
}
