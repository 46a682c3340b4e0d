/* vt_gnuhash.h — looking a symbol up in one loaded object by reading its dynamic
 * symbol table (vt_gnuhash.c), without the loader: no lock is taken, so it may run
 * inside a dl_iterate_phdr callback, where dlsym would deadlock with a thread in
 * dlopen; and it costs no error message for a name an object does not define. */
#ifndef VT_GNUHASH_H
#define VT_GNUHASH_H

#include <link.h>
#include <stddef.h>

/* The address of the default-version definition of name (a function or object, not
 * an IFUNC) in the object info describes (a dl_iterate_phdr entry), found through its
 * DT_GNU_HASH table; NULL when it defines none, or has no such table. Reads only
 * the object's own mapped tables; thread-safe while the object stays loaded. */
void *vt_gnuhash_lookup(const struct dl_phdr_info *info, const char *name);

/* 0 when no loaded object but the one holding skip surely defines any of n names
 * (in any version, of any type): their GNU hash tables say so; 1 when one does, or
 * one has no such table to tell (or there are too many objects). The names: the
 * const char * at first, then every stride bytes (a name field of an array of
 * structs). Runs dl_iterate_phdr; no other loader call, no allocation. */
int vt_gnuhash_may_define(const void *skip, const char *const *first, size_t stride, size_t n);

#endif /* VT_GNUHASH_H */
