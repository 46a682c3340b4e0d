/* vt_hooks_dl.h — the loader functions libvramtrace exports besides dlsym
 * (vt_hooks_dl.c): dlopen, dlerror, dl_iterate_phdr, and what the rest of the
 * interpose room asks of them.
 */
#ifndef VT_HOOKS_DL_H
#define VT_HOOKS_DL_H

/* Finds the C library's dlopen, dlerror and dl_iterate_phdr (RTLD_NEXT). Called by
 * vt_preload_init; idempotent. Preserves errno. */
void vt_hooks_dl_init(void);

/* Fork child (one thread): the other threads' kept messages are gone; the work word
 * counts this thread's only (a pending re-link stays pending). */
void vt_hooks_dl_fork_child(void);

/* The C library's dlopen (NULL until vt_hooks_dl_init found it). */
extern void *(*vt__real_dlopen)(const char *, int);

/* The program's pending dlerror() message across our own look-ups (thread-local):
 * vt_dlerr_save takes it (glibc's, or one kept earlier and not read yet) before we
 * call dlopen/dlsym/dlinfo for ourselves, vt_dlerr_restore clears what our calls
 * left and keeps the taken message for the program's next dlerror() (our export
 * returns it once; a later dlopen or dlsym of the program drops it, as glibc's own
 * state is reset by those). Preserve errno. Not inside a dl_iterate_phdr callback
 * (nothing there calls the loader). */
char *vt_dlerr_save(void);
void vt_dlerr_restore(char *saved);

/* Clears glibc's message (the C library's dlerror(); never our export, which may
 * hand out a kept message). */
void vt_dlerr_clear(void);

/* The C library's dlclose and dlinfo, for libvramtrace's own use: the exported ones
 * are the program's (they drop the kept message). Thread-safe; errno as theirs. */
int vt_libc_dlclose(void *handle);
int vt_libc_dlinfo(void *handle, int request, void *arg);

/* For the re-linker (vt_relink.c): when name is one of the loader functions we
 * export (dlsym, dlopen, dlerror), sets *hook to our export and *real to the C
 * library's function and returns 1; else 0. */
int vt_hooks_dl_target(const char *name, void **hook, void **real);

#endif /* VT_HOOKS_DL_H */
