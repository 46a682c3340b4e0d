/* vt_elfsym.c — function names from ELF symbol tables (contract in vt_elfsym.h).
 *
 * Per object: every STT_FUNC / STT_GNU_IFUNC symbol with a size and a section of
 * .symtab (else .dynsym), as [lo, hi) ranges sorted by lo, names copied into one
 * block; a binary search answers a lookup. An object that cannot be read is cached
 * with no functions, so it is not read again.
 */
#define _GNU_SOURCE
#include "vt_elfsym.h"
#include "vt_libelf.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct vt__fn {
    uint64_t lo, hi;
    const char *name;             /* into vt__obj.names */
} vt__fn;

typedef struct vt__obj {
    char   *path;
    vt__fn *fns;
    size_t  n;
    char   *names;
} vt__obj;

static vt__obj vt__objs[VT_ELFSYM_FILES];
static int     vt__nobjs;

static int vt__fn_cmp(const void *a, const void *b)
{
    const vt__fn *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Symbol i of the table (data, string section link) when it is a defined function
 * with a size: its name, and *sym; else NULL. */
static const char *vt__fn_sym(Elf *e, Elf_Data *data, size_t link, size_t i, GElf_Sym *sym)
{
    if (!vt_libelf.getsym(data, (int)i, sym))
        return NULL;
    int t = GELF_ST_TYPE(sym->st_info);
    if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !sym->st_size || sym->st_shndx == SHN_UNDEF)
        return NULL;
    const char *nm = vt_libelf.strptr(e, link, sym->st_name);
    return nm && nm[0] ? nm : NULL;
}

/* Reads the function symbols of the table in section scn (of type SHT_SYMTAB or
 * SHT_DYNSYM) into o: one pass to size the arrays, one to fill them. 0, or -1 out
 * of memory. */
static int vt__read_table(Elf *e, Elf_Scn *scn, vt__obj *o)
{
    GElf_Shdr sh;
    Elf_Data *data;
    GElf_Sym sym;
    if (!vt_libelf.getshdr(scn, &sh) || !sh.sh_entsize || !(data = vt_libelf.getdata(scn, NULL)))
        return 0;
    size_t count = sh.sh_size / sh.sh_entsize, n = 0, bytes = 0;
    for (size_t i = 0; i < count; i++) {
        const char *nm = vt__fn_sym(e, data, sh.sh_link, i, &sym);
        if (nm) {
            n++;
            bytes += strlen(nm) + 1;
        }
    }
    if (!n)
        return 0;
    o->fns = malloc(n * sizeof *o->fns);
    o->names = malloc(bytes);
    if (!o->fns || !o->names)
        return -1;
    char *w = o->names;
    for (size_t i = 0; i < count && o->n < n; i++) {
        const char *nm = vt__fn_sym(e, data, sh.sh_link, i, &sym);
        if (!nm)
            continue;
        size_t len = strlen(nm) + 1;
        memcpy(w, nm, len);
        o->fns[o->n++] = (vt__fn){ sym.st_value, sym.st_value + sym.st_size, w };
        w += len;
    }
    qsort(o->fns, o->n, sizeof *o->fns, vt__fn_cmp);
    return 0;
}

/* Fills o from the file at path: .symtab when it has one, else .dynsym. Leaves o
 * empty when the file cannot be read; -1 only out of memory. */
static int vt__load(vt__obj *o, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int rc = 0;
    vt_libelf.version(EV_CURRENT);
    Elf *e = vt_libelf.begin(fd, ELF_C_READ_MMAP, NULL);
    if (e && vt_libelf.kind(e) == ELF_K_ELF) {
        Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
        while ((scn = vt_libelf.nextscn(e, scn))) {
            GElf_Shdr sh;
            if (!vt_libelf.getshdr(scn, &sh))
                continue;
            if (sh.sh_type == SHT_SYMTAB)
                symtab = scn;
            else if (sh.sh_type == SHT_DYNSYM)
                dynsym = scn;
        }
        if (symtab)
            rc = vt__read_table(e, symtab, o);
        if (!rc && !o->n && dynsym)
            rc = vt__read_table(e, dynsym, o);
    }
    if (e)
        vt_libelf.end(e);
    close(fd);
    return rc;
}

const char *vt_elfsym_lookup(const char *path, uint64_t vaddr)
{
    if (!path || !path[0] || !vt_libelf_ready())
        return NULL;   /* libelf missing or not loaded yet: nothing cached */
    vt__obj *o = NULL;
    for (int i = 0; i < vt__nobjs; i++)
        if (!strcmp(vt__objs[i].path, path)) {
            o = &vt__objs[i];
            break;
        }
    if (!o) {
        if (vt__nobjs == VT_ELFSYM_FILES)
            return NULL;
        char *p = strdup(path);
        if (!p)
            return NULL;
        o = &vt__objs[vt__nobjs++];
        o->path = p;
        if (vt__load(o, path) < 0) {   /* out of memory: keep it empty */
            free(o->fns);
            free(o->names);
            o->fns = NULL;
            o->names = NULL;
            o->n = 0;
        }
    }
    size_t lo = 0, hi = o->n;   /* the last range starting at or before vaddr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->fns[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* ranges may nest (aliases, local labels): look back a few for one holding vaddr */
    for (size_t k = lo, tries = 0; k > 0 && tries < 8; k--, tries++)
        if (vaddr >= o->fns[k - 1].lo && vaddr < o->fns[k - 1].hi)
            return o->fns[k - 1].name;
    return NULL;
}
