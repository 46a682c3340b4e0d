/* vt_libelf.h — the elfutils libelf functions vt_elfsym uses, called through
 * pointers that vt_libelf_load fills (libelf is loaded with dlopen when the writer
 * starts, not linked: sys/vt_dlib.h). libelf.h and gelf.h give the types only.
 */
#ifndef VT_LIBELF_H
#define VT_LIBELF_H

#include <gelf.h>
#include <libelf.h>

typedef struct vt_libelf_api {
    unsigned (*version)(unsigned);
    Elf *(*begin)(int, Elf_Cmd, Elf *);
    Elf_Kind (*kind)(Elf *);
    Elf_Scn *(*nextscn)(Elf *, Elf_Scn *);
    Elf_Data *(*getdata)(Elf_Scn *, Elf_Data *);
    char *(*strptr)(Elf *, size_t, size_t);
    int (*end)(Elf *);
    GElf_Shdr *(*getshdr)(Elf_Scn *, GElf_Shdr *);
    GElf_Sym *(*getsym)(Elf_Data *, int, GElf_Sym *);
} vt_libelf_api;

/* Filled by vt_libelf_load; read only after it returned 0 or vt_libelf_ready(). */
extern vt_libelf_api vt_libelf;

/* Loads libelf.so.1 once: 0; -1 missing (one "vramtrace:" warning: the online leak
 * warnings then name functions as dladdr does, exported symbols only; latched); 1
 * another thread is loading it. Never inside a dl_iterate_phdr callback nor with a
 * lock of ours held (vt_hook_start calls it before the writer's start). Thread-safe;
 * keeps errno. */
int vt_libelf_load(void);

/* 1 once loaded. Any thread. */
int vt_libelf_ready(void);

#endif /* VT_LIBELF_H */
