/* vt_elfsym.h — the function an address of a loaded object falls in, from the
 * object's own ELF symbol tables (.symtab when the file has one, else .dynsym), so
 * that a static function of a binary built with -g (or just not stripped) is named,
 * where dladdr knows only exported symbols.
 *
 * Reads the file with elfutils' libelf, once per object (the table of function
 * symbols is kept, sorted, for the life of the process; at most VT_ELFSYM_FILES
 * objects). Writer thread only (the online leak warning), never the hook path: it
 * opens the file, so it is not async-signal-safe. Not thread-safe: the caller holds
 * the writer's output lock.
 */
#ifndef VT_ELFSYM_H
#define VT_ELFSYM_H

#include <stdint.h>

#define VT_ELFSYM_FILES 32

/* The name (as in the symbol table: C++ names mangled) of the function symbol of
 * the object at path whose [st_value, st_value + st_size) holds vaddr (an ELF
 * virtual address: pc - load bias), or NULL (no such symbol, the file unreadable,
 * libelf not loaded (vt_libelf.h), or
 * the cache full). The string lives as long as the process. */
const char *vt_elfsym_lookup(const char *path, uint64_t vaddr);

#endif /* VT_ELFSYM_H */
