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
    vt_sym sym;             /* depth 0: the innermost logical frame */
    vt_sym *outer;          /* depths 1 .. nlogical-1: the functions it is inlined into,
                               innermost first, the last the physical frame's own */
    uint32_t nlogical;      /* >= 1 */
    UT_hash_handle hh;
} sym_ent;

/* One logical frame of a physical frame, as read from DWARF. */
typedef struct lframe {
    const char *name;       /* linkage name (mangled) or qualified DWARF name; owned when qualified */
    char *qualified;        /* the owned one, or NULL */
    const char *file;       /* libdw's string */
    int line;
} lframe;
#define VT_MAX_INLINE 64

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
        for (uint32_t d = 0; d + 1 < e->nlogical; d++) {
            free((char *)e->outer[d].function);
            free((char *)e->outer[d].signature);
            free((char *)e->outer[d].file);
            free((char *)e->outer[d].label);
        }
        free(e->outer);
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

/* The DIE a function DIE takes its name from: itself, or through
 * DW_AT_abstract_origin / DW_AT_specification the declaration that has one. */
static Dwarf_Die named_origin(Dwarf_Die d)
{
    Dwarf_Attribute a;
    Dwarf_Die spec;
    for (int k = 0; k < 4 && !dwarf_hasattr(&d, DW_AT_name); k++) {
        if (dwarf_attr(&d, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &spec)) d = spec;
        else if (dwarf_attr(&d, DW_AT_specification, &a) && dwarf_formref_die(&a, &spec)) d = spec;
        else break;
    }
    return d;
}

/* The name of function DIE d qualified by the scopes that enclose its declaration,
 * as the demangler writes them: namespaces ("(anonymous namespace)" for an unnamed
 * one), classes, structures and unions ("{unnamed type}"), enclosing functions; for
 * a DIE without a linkage name (GCC gives none to functions of an anonymous
 * namespace). Owned by the caller; NULL when d has no name. */
static char *qualified_name(Dwarf_Die *d)
{
    Dwarf_Die origin = named_origin(*d);
    const char *base = dwarf_diename(&origin);
    if (!base) return NULL;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes_die(&origin, &scopes);   /* origin first, then its parents */
    size_t cap = strlen(base) + 1, len = 0;
    for (int i = 1; i < n; i++) cap += (dwarf_diename(&scopes[i]) ? strlen(dwarf_diename(&scopes[i])) : 24) + 2;
    char *out = vt_xmalloc(cap);
    out[0] = 0;
    for (int i = n - 1; i >= 1; i--) {
        int tag = dwarf_tag(&scopes[i]);
        const char *nm = dwarf_diename(&scopes[i]);
        const char *part = NULL;
        if (tag == DW_TAG_namespace) part = nm ? nm : "(anonymous namespace)";
        else if (tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
            part = nm ? nm : "{unnamed type}";
        else if (tag == DW_TAG_subprogram && nm) part = nm;
        if (!part) continue;
        len += (size_t)snprintf(out + len, cap - len, "%s::", part);
    }
    snprintf(out + len, cap - len, "%s", base);
    free(scopes);
    return out;
}

/* The logical frames at addr, innermost first (addr2line -i): the inlined
 * subroutines whose ranges hold addr, then the subprogram they are inlined into.
 * Frame 0's file and line are addr's; frame k's (k >= 1) are the call site of frame
 * k-1 (its DW_AT_call_file / DW_AT_call_line). Names: the linkage name where the DIE
 * has one (mangled C++, demangled by the caller), else the qualified DWARF name.
 * Returns the count (0: no DWARF for addr). */
static int dwarf_chain(Dwfl_Module *mod, GElf_Addr addr, lframe *out, int max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
    if (!cu) return 0;
    Dwarf_Die *at = NULL, *scopes = NULL;
    int na = dwarf_getscopes(cu, addr - bias, &at);
    /* dwarf_getscopes follows an inlined instance into its abstract definition's
     * scopes; the callers are the concrete parents of the innermost function DIE
     * (dwarf_getscopes_die), as eu-addr2line -i walks them */
    int first = 0;
    while (first < na && dwarf_tag(&at[first]) != DW_TAG_subprogram &&
           dwarf_tag(&at[first]) != DW_TAG_inlined_subroutine)
        first++;
    int ns = first < na ? dwarf_getscopes_die(&at[first], &scopes) : 0;
    free(at);
    if (ns < 0) ns = 0;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
    int n = 0;
    const char *call_file = NULL;
    int call_line = 0, have_call = 0;
    for (int i = 0; i < ns && n < max; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
        lframe *lf = &out[n];
        memset(lf, 0, sizeof *lf);
        Dwarf_Attribute a;
        if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a) ||
            dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &a))
            lf->name = dwarf_formstring(&a);
        if (!lf->name) lf->name = lf->qualified = qualified_name(&scopes[i]);
        if (have_call) {
            lf->file = call_file;
            lf->line = call_line;
        }
        n++;
        have_call = 0;
        if (tag == DW_TAG_subprogram) break;   /* the physical function: the chain ends */
        /* this inlined subroutine's call site is where its caller's frame is */
        Dwarf_Word w;
        if (files && dwarf_attr(&scopes[i], DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0)
            call_file = dwarf_filesrc(files, (size_t)w, NULL, NULL);
        else
            call_file = NULL;
        call_line = dwarf_attr(&scopes[i], DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0 ? (int)w : 0;
        have_call = 1;
    }
    free(scopes);
    return n;
}

/* Fills sym from a function name (or NULL), file and line: demangled function and
 * signature, display forms, the one-line label. */
static void fill_sym(vt_sym *sym, const vt_frame *f, const char *fn, const char *file, int line)
{
    sym->offset = f->offset;
    sym->module = f->mod ? f->mod->shown : NULL;
    if (fn) {
        /* ELF symbol versions ("__libc_start_main@@GLIBC_2.34") are not part of the name */
        char *plain = vt_xstrndup(fn, strcspn(fn, "@"));
        char *sig = vt_demangle(plain);
        if (sig) {
            sym->function = vt_demangled_name(sig);
            sym->signature = sig;
            free(plain);
        } else if (vt_clone_suffix_at(plain)) {
            /* a compiler's clone of a C function: its name, and the clone as c++filt
             * shows a C++ one ("hold [clone .constprop.0]") */
            size_t k = vt_clone_suffix_at(plain);
            sym->function = vt_xstrndup(plain, k);
            size_t sl = strlen(plain) + 16;
            char *sg = vt_xmalloc(sl);
            snprintf(sg, sl, "%.*s [clone %s]", (int)k, plain, plain + k);
            sym->signature = sg;
            free(plain);
        } else {
            sym->function = plain;
            sym->signature = vt_xstrdup(plain);
        }
        /* names a program chose: their display form (vt_display.h) */
        if (!vt_display_clean(sym->function)) {
            char *d = vt_xdisplay(sym->function);
            free((char *)sym->function);
            sym->function = d;
        }
        if (!vt_display_clean(sym->signature)) {
            char *d = vt_xdisplay(sym->signature);
            free((char *)sym->signature);
            sym->signature = d;
        }
        fn = sym->signature;   /* labels show the signature */
    }
    sym->file = file ? vt_xdisplay(file) : NULL;
    sym->line = line;
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
    sym->label = vt_xdisplay(buf);
}

static sym_ent *frame_entry(vt_symbolizer *s, const vt_frame *f)
{
    sym_key k;
    memset(&k, 0, sizeof k);
    k.mod = f->mod;
    k.offset = f->offset;
    k.fallback = f->function;
    sym_ent *e;
    HASH_FIND(hh, s->syms, &k, sizeof k, e);
    if (e) return e;
    e = vt_xcalloc(1, sizeof *e);
    e->key = k;
    e->nlogical = 1;
    lframe chain[VT_MAX_INLINE];
    int nchain = 0;
    const char *fn = NULL, *file = NULL;
    int line = 0;
    if (f->mod) {
        mod_ent *m = module_for(s, f->mod);
        if (m->mod) {
            /* every frame is a return address: the call is the byte before it */
            GElf_Addr addr = f->offset ? f->offset - 1 : 0;
            GElf_Off off;
            GElf_Sym sym;
            nchain = dwarf_chain(m->mod, addr, chain, VT_MAX_INLINE);
            if (nchain) fn = chain[0].name;
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
    fill_sym(&e->sym, f, fn, file, line);
    if (nchain > 1) {
        e->nlogical = (uint32_t)nchain;
        e->outer = vt_xcalloc((size_t)nchain - 1, sizeof *e->outer);
        for (int d = 1; d < nchain; d++) fill_sym(&e->outer[d - 1], f, chain[d].name, chain[d].file, chain[d].line);
        e->sym.inlined = 1;
        for (int d = 1; d + 1 < nchain; d++) e->outer[d - 1].inlined = 1;
    }
    for (int d = 0; d < nchain; d++) free(chain[d].qualified);
    HASH_ADD(hh, s->syms, key, sizeof e->key, e);
    return e;
}

const vt_sym *vt_sym_frame(vt_symbolizer *s, const vt_frame *f)
{
    return &frame_entry(s, f)->sym;
}

uint32_t vt_sym_frame_depth(vt_symbolizer *s, const vt_frame *f)
{
    return frame_entry(s, f)->nlogical;
}

const vt_sym *vt_sym_frame_at(vt_symbolizer *s, const vt_frame *f, uint32_t depth)
{
    sym_ent *e = frame_entry(s, f);
    if (depth == 0 || depth >= e->nlogical) return &e->sym;
    return &e->outer[depth - 1];
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
