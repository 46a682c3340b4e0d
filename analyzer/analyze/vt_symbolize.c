/* vt_symbolize.c — libdw offline symbolization (contract in vt_symbolize.h).
 *
 * Design: one Dwfl per module file (modules are few, frames many), created on
 * first use and cached by (path, build-id) together with a failure flag; one
 * cache entry per (module, offset, written name) with the finished strings.
 */
#include "vt_symbolize.h"
#include "vt_display.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_demangle.h"
#include "vt_util.h"

typedef struct mod_ent {
    char *key;              /* path NUL build_id */
    size_t keylen;
    Dwfl *dwfl;             /* NULL: not usable */
    Dwfl_Module *mod;
    UT_hash_handle hh;
} mod_ent;

typedef struct sym_key {
    const vt_module *mod;
    uint64_t offset;
    const char *fallback;   /* snapshot function (pointer identity is enough: per stack);
                               Python frames: mod NULL, offset UINT64_MAX, the vt_pyframe's address */
} sym_key;

typedef struct sym_ent {
    sym_key key;
    vt_sym sym;
    UT_hash_handle hh;
} sym_ent;

struct vt_symbolizer {
    int disable_dwarf;
    mod_ent *mods;
    sym_ent *syms;
    char *debuginfo_path;
    Dwfl_Callbacks cb;
};

vt_symbolizer *vt_sym_new(int disable_dwarf)
{
    vt_symbolizer *s = vt_xcalloc(1, sizeof *s);
    s->disable_dwarf = disable_dwarf;
    unsetenv("DEBUGINFOD_URLS");   /* offline only */
    s->cb.find_elf = dwfl_build_id_find_elf;
    s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    s->cb.section_address = dwfl_offline_section_address;
    s->cb.debuginfo_path = &s->debuginfo_path;
    return s;
}

void vt_sym_free(vt_symbolizer *s)
{
    if (!s) return;
    mod_ent *m, *mt;
    HASH_ITER(hh, s->mods, m, mt) {
        HASH_DEL(s->mods, m);
        if (m->dwfl) dwfl_end(m->dwfl);
        free(m->key);
        free(m);
    }
    sym_ent *e, *et;
    HASH_ITER(hh, s->syms, e, et) {
        HASH_DEL(s->syms, e);
        free((char *)e->sym.function);
        free((char *)e->sym.signature);
        free((char *)e->sym.file);
        free((char *)e->sym.label);
        free(e);
    }
    free(s);
}

static mod_ent *module_for(vt_symbolizer *s, const vt_module *vm)
{
    size_t pl = strlen(vm->path), bl = strlen(vm->build_id);
    size_t kl = pl + 1 + bl;
    char *key = vt_xmalloc(kl + 1);
    memcpy(key, vm->path, pl + 1);
    memcpy(key + pl + 1, vm->build_id, bl + 1);
    mod_ent *m;
    HASH_FIND(hh, s->mods, key, kl, m);
    if (m) {
        free(key);
        return m;
    }
    m = vt_xcalloc(1, sizeof *m);
    m->key = key;
    m->keylen = kl;
    HASH_ADD_KEYPTR(hh, s->mods, m->key, m->keylen, m);
    if (s->disable_dwarf || vm->path[0] != '/') return m;
    /* The path comes from a snapshot: it may name a FIFO, a device or a socket
     * (or a file since replaced by one). O_NONBLOCK keeps open() itself from
     * blocking on a FIFO without a writer; then only a non-empty regular file
     * is used, read in blocking mode. */
    int fd = open(vm->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return m;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(fd);
        return m;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        close(fd);
        return m;
    }
    Dwfl *d = dwfl_begin(&s->cb);
    if (!d) {
        close(fd);
        return m;
    }
    dwfl_report_begin(d);
    /* base 0: addresses are the file's own virtual addresses (= snapshot offsets).
     * dwfl takes ownership of fd. */
    Dwfl_Module *mod = dwfl_report_elf(d, vt_basename(vm->path), vm->path, fd, 0, false);
    dwfl_report_end(d, NULL, NULL);
    if (!mod) {
        dwfl_end(d);
        return m;
    }
    if (bl) {
        const unsigned char *bits;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(mod, &bits, &vaddr);
        char hex[256];
        size_t hl = 0;
        for (int i = 0; i < n && hl + 2 < sizeof hex; i++) hl += (size_t)snprintf(hex + hl, sizeof hex - hl, "%02x", bits[i]);
        hex[hl] = 0;
        if (n <= 0 || strcmp(hex, vm->build_id) != 0) {
            dwfl_end(d);   /* a different file than the one that ran */
            return m;
        }
    }
    m->dwfl = d;
    m->mod = mod;
    return m;
}

/* The name of the innermost function (inlined or not) containing addr, from
 * DWARF: its linkage name (DW_AT_linkage_name, mangled for C++, demangled by the
 * caller) where it has one, else DW_AT_name; NULL if none. */
static const char *dwarf_function(Dwfl_Module *mod, GElf_Addr addr)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
    if (!cu) return NULL;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(cu, addr - bias, &scopes);
    const char *name = NULL;
    for (int i = 0; i < n && !name; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
        Dwarf_Attribute a;
        Dwarf_Die origin = scopes[i], spec;
        /* follow abstract_origin / specification to the declaration that has the name */
        for (int k = 0; k < 4 && !dwarf_hasattr(&origin, DW_AT_name); k++) {
            if (dwarf_attr(&origin, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &spec)) origin = spec;
            else if (dwarf_attr(&origin, DW_AT_specification, &a) && dwarf_formref_die(&a, &spec)) origin = spec;
            else break;
        }
        if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a) ||
            dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &a))
            name = dwarf_formstring(&a);
        if (!name) name = dwarf_diename(&origin);
    }
    free(scopes);
    return name;
}

const vt_sym *vt_sym_frame(vt_symbolizer *s, const vt_frame *f)
{
    sym_key k;
    memset(&k, 0, sizeof k);
    k.mod = f->mod;
    k.offset = f->offset;
    k.fallback = f->function;
    sym_ent *e;
    HASH_FIND(hh, s->syms, &k, sizeof k, e);
    if (e) return &e->sym;
    e = vt_xcalloc(1, sizeof *e);
    e->key = k;
    e->sym.offset = f->offset;
    e->sym.module = f->mod ? f->mod->shown : NULL;
    const char *fn = NULL, *file = NULL;
    int line = 0;
    if (f->mod) {
        mod_ent *m = module_for(s, f->mod);
        if (m->mod) {
            /* every frame is a return address: the call is the byte before it */
            GElf_Addr addr = f->offset ? f->offset - 1 : 0;
            GElf_Off off;
            GElf_Sym sym;
            fn = dwarf_function(m->mod, addr);
            if (!fn) fn = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
            Dwfl_Line *dl = dwfl_module_getsrc(m->mod, addr);
            if (dl) {
                int ln = 0;
                const char *src = dwfl_lineinfo(dl, NULL, &ln, NULL, NULL, NULL);
                if (src) {
                    file = src;
                    line = ln;
                }
            }
        }
    }
    if (!fn) fn = f->function;
    if (fn) {
        /* ELF symbol versions ("__libc_start_main@@GLIBC_2.34") are not part of the name */
        char *plain = vt_xstrndup(fn, strcspn(fn, "@"));
        char *sig = vt_demangle(plain);
        if (sig) {
            e->sym.function = vt_demangled_name(sig);
            e->sym.signature = sig;
            free(plain);
        } else {
            e->sym.function = plain;
            e->sym.signature = vt_xstrdup(plain);
        }
        /* names a program chose: their display form (vt_display.h) */
        if (!vt_display_clean(e->sym.function)) {
            char *d = vt_xdisplay(e->sym.function);
            free((char *)e->sym.function);
            e->sym.function = d;
        }
        if (!vt_display_clean(e->sym.signature)) {
            char *d = vt_xdisplay(e->sym.signature);
            free((char *)e->sym.signature);
            e->sym.signature = d;
        }
        fn = e->sym.signature;   /* labels show the signature */
    }
    e->sym.file = file ? vt_xdisplay(file) : NULL;
    e->sym.line = line;
    char buf[8192];
    const char *mb = f->mod ? vt_basename(f->mod->shown) : NULL;
    if (fn && file)
        snprintf(buf, sizeof buf, "%s (%s:%d)", fn, vt_basename(file), line);
    else if (fn && mb)
        snprintf(buf, sizeof buf, "%s (%s+0x%" PRIx64 ")", fn, mb, f->offset);
    else if (fn)
        snprintf(buf, sizeof buf, "%s (0x%" PRIx64 ")", fn, f->offset);
    else if (mb)
        snprintf(buf, sizeof buf, "%s+0x%" PRIx64, mb, f->offset);
    else
        snprintf(buf, sizeof buf, "0x%" PRIx64, f->offset);
    vt_utf8_trim(buf);   /* a name cut at the buffer's end keeps whole characters */
    e->sym.label = vt_xdisplay(buf);
    HASH_ADD(hh, s->syms, key, sizeof e->key, e);
    return &e->sym;
}

const vt_sym *vt_sym_pyframe(vt_symbolizer *s, const vt_pyframe *f)
{
    sym_key k;
    memset(&k, 0, sizeof k);
    k.mod = NULL;
    k.offset = UINT64_MAX;
    k.fallback = (const char *)f;
    sym_ent *e;
    HASH_FIND(hh, s->syms, &k, sizeof k, e);
    if (e) return &e->sym;
    e = vt_xcalloc(1, sizeof *e);
    e->key = k;
    int known_fn = strcmp(f->function, "?") != 0, known_file = strcmp(f->file, "?") != 0;
    e->sym.function = known_fn ? vt_xdisplay(f->function) : NULL;
    e->sym.signature = known_fn ? vt_xdisplay(f->function) : NULL;
    e->sym.file = known_file ? vt_xdisplay(f->file) : NULL;
    e->sym.line = (int)f->line;
    e->sym.module = "python";
    e->sym.offset = 0;
    e->sym.python = 1;
    size_t n = strlen(f->file) + strlen(f->function) + 32;
    char *buf = vt_xmalloc(n);
    if (f->line)
        snprintf(buf, n, "%s:%u in %s", vt_basename(f->file), f->line, f->function);
    else
        snprintf(buf, n, "%s in %s", vt_basename(f->file), f->function);
    e->sym.label = vt_xdisplay(buf);
    free(buf);
    HASH_ADD(hh, s->syms, key, sizeof e->key, e);
    return &e->sym;
}
