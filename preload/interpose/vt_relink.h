/* vt_relink.h — binding objects that looked past the preload back to our hooks
 * (vt_relink.c). */
#ifndef VT_RELINK_H
#define VT_RELINK_H

/* For every object loaded in the base namespace (but libvramtrace): each relocation
 * slot of a function we export (the hook table's CUDA functions; dlsym, dlopen,
 * dlerror) that holds the real function, or a lazy PLT entry that the object's own
 * scope would resolve to the real function, is set to our hook (pthread_cancel too),
 * which forwards to
 * that real function (an empty real_ slot is filled with it, and its library pinned,
 * as vt_resolve_lazy_from does). A slot bound to anything else (another interposer,
 * a second copy of the runtime while ours holds the first) is left alone. RELRO
 * pages are made writable for the store and read-only again.
 *
 * Takes the loader's locks (dlopen RTLD_NOLOAD, dlinfo, dlsym): never inside a
 * dl_iterate_phdr callback. One thread at a time: a call while another runs returns
 * at once. Leaves dlerror() state to the caller (it calls dlopen/dlsym). Preserves
 * errno. x86-64 ELF only (elsewhere it does nothing). */
void vt_relink_all(void);

/* Fork child (one thread): a re-link the parent had in progress on another thread
 * does not exist here. */
void vt_relink_fork_child(void);

#endif /* VT_RELINK_H */
