/* vt_elfsym.h — looking a symbol up in one loaded object by reading its dynamic
 * symbol table (vt_elfsym.c), without the loader: no lock is taken, so it may run
 * inside a dl_iterate_phdr callback, where dlsym would deadlock with a thread in
 * dlopen. */
#ifndef VT_ELFSYM_H
#define VT_ELFSYM_H

#include <link.h>

/* The address of the default-version definition of name (a function or object, not
 * an IFUNC) in the object info describes (a dl_iterate_phdr entry), found through its
 * DT_GNU_HASH table; NULL when it defines none, or has no such table. Reads only
 * the object's own mapped tables; thread-safe while the object stays loaded. */
void *vt_elfsym_lookup(const struct dl_phdr_info *info, const char *name);

#endif /* VT_ELFSYM_H */
