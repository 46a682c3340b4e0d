/* vt_gnuhash.h — looking a symbol up in one loaded object by reading its dynamic
 * symbol table (vt_gnuhash.c), without the loader: no lock is taken, so it may run
 * inside a dl_iterate_phdr callback, where dlsym would deadlock with a thread in
 * dlopen. */
#ifndef VT_GNUHASH_H
#define VT_GNUHASH_H

#include <link.h>

/* The address of the default-version definition of name (a function or object, not
 * an IFUNC) in the object info describes (a dl_iterate_phdr entry), found through its
 * DT_GNU_HASH table; NULL when it defines none, or has no such table. Reads only
 * the object's own mapped tables; thread-safe while the object stays loaded. */
void *vt_gnuhash_lookup(const struct dl_phdr_info *info, const char *name);

#endif /* VT_GNUHASH_H */
