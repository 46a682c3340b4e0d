/* vt_modules.c — pc -> loaded ELF object, with build-id (see vt_modules.h).
 *
 * Design: a small array of vt_module, searched newest first (an object loaded later at
 * an address an unloaded one used wins). A miss re-walks dl_iterate_phdr and adds the
 * objects not seen before (same path and bias = same object). Build-ids come from the
 * PT_NOTE segments mapped in memory; no file is opened.
 */
#define _GNU_SOURCE
#include "vt_modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static vt_module *vt__mods;
static int vt__nmods, vt__capmods, vt__next_id = 1;

static void vt__build_id(struct dl_phdr_info *info, char out[41])
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const unsigned char *desc = (const unsigned char *)(name + ((nh->n_namesz + 3) & ~3u));
            const char *next = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                unsigned n = nh->n_descsz > 20 ? 20 : nh->n_descsz;
                for (unsigned k = 0; k < n; k++) {
                    out[2 * k] = "0123456789abcdef"[desc[k] >> 4];
                    out[2 * k + 1] = "0123456789abcdef"[desc[k] & 15];
                }
                out[2 * n] = 0;
                return;
            }
            p = next;
        }
    }
}

void vt_modules_load_range(const struct dl_phdr_info *info, uintptr_t *lo_out, uintptr_t *hi_out)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    *lo_out = lo;
    *hi_out = hi;
}

static int vt__mods_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t lo, hi;
    vt_modules_load_range(info, &lo, &hi);
    if (hi == 0)
        return 0;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    for (int i = 0; i < vt__nmods; i++)
        if (vt__mods[i].bias == info->dlpi_addr && vt__mods[i].lo == lo &&
            !strcmp(vt__mods[i].path, path))
            return 0;
    if (vt__nmods == vt__capmods) {
        int cap = vt__capmods ? vt__capmods * 2 : 64;
        vt_module *m = realloc(vt__mods, (size_t)cap * sizeof *m);
        if (!m)
            return 1;
        vt__mods = m;
        vt__capmods = cap;
    }
    char *dup = strdup(path);
    if (!dup)
        return 1;
    vt_module *m = &vt__mods[vt__nmods++];
    memset(m, 0, sizeof *m);
    m->id = vt__next_id++;
    m->lo = lo;
    m->hi = hi;
    m->bias = info->dlpi_addr;
    m->path = dup;
    vt__build_id(info, m->build_id);
    return 0;
}

static vt_module *vt__mods_search(uintptr_t pc)
{
    for (int i = vt__nmods - 1; i >= 0; i--)
        if (pc >= vt__mods[i].lo && pc < vt__mods[i].hi)
            return &vt__mods[i];
    return NULL;
}

vt_module *vt_modules_find(uintptr_t pc)
{
    vt_module *m = vt__mods_search(pc);
    if (m)
        return m;
    dl_iterate_phdr(vt__mods_cb, NULL);
    return vt__mods_search(pc);
}

const char *vt_modules_symbol(uintptr_t pc)
{
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    /* dladdr answers with the nearest exported symbol below pc, even one that ends
     * before it (a static function after it): only a symbol whose size covers pc */
    if (dladdr1((void *)pc, &di, (void **)&sym, RTLD_DL_SYMENT) && di.dli_sname && di.dli_saddr && sym &&
        pc - (uintptr_t)di.dli_saddr < (sym->st_size ? sym->st_size : 1))
        return di.dli_sname;
    return NULL;
}

void vt_modules_new_file(void)
{
    for (int i = 0; i < vt__nmods; i++)
        vt__mods[i].written = 0;
}
