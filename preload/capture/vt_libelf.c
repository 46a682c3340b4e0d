/* vt_libelf.c — libelf loaded when the writer starts (contract in vt_libelf.h). */
#include "vt_libelf.h"
#include "vt_dlib.h"

vt_libelf_api vt_libelf;

static const vt_dlib_fn vt__libelf_fns[] = {
    { "elf_version",  (void **)&vt_libelf.version },
    { "elf_begin",    (void **)&vt_libelf.begin },
    { "elf_kind",     (void **)&vt_libelf.kind },
    { "elf_nextscn",  (void **)&vt_libelf.nextscn },
    { "elf_getdata",  (void **)&vt_libelf.getdata },
    { "elf_strptr",   (void **)&vt_libelf.strptr },
    { "elf_end",      (void **)&vt_libelf.end },
    { "gelf_getshdr", (void **)&vt_libelf.getshdr },
    { "gelf_getsym",  (void **)&vt_libelf.getsym },
};

static int vt__libelf_state;
static const vt_dlib vt__libelf_lib = {
    "libelf.so.1", "leak warnings name only exported functions",
    vt__libelf_fns, sizeof vt__libelf_fns / sizeof vt__libelf_fns[0], &vt__libelf_state
};

int vt_libelf_load(void)
{
    return vt_dlib_load(&vt__libelf_lib);
}

int vt_libelf_ready(void)
{
    return vt_dlib_ready(&vt__libelf_lib);
}
