/* vt_libunwind.h — libunwind's unw_backtrace (and, on x86-64, the cursor functions the
 * stack cache fills its entries with, vt_stkcache.h), called through pointers that
 * vt_libunwind_load fills: libunwind is loaded with dlopen at the process's first
 * CUDA call (vt_stack_warm), not linked (sys/vt_dlib.h), so a process that never
 * calls CUDA maps neither it nor liblzma behind it.
 */
#ifndef VT_LIBUNWIND_H
#define VT_LIBUNWIND_H

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY
#endif
#include <libunwind.h>

typedef int (*vt_unw_backtrace_fn)(void **buffer, int size);

/* unw_backtrace once libunwind is loaded, else NULL (atomic: written once, before
 * the load is marked done). Any thread. */
extern vt_unw_backtrace_fn vt__unw_backtrace __attribute__((visibility("hidden")));

/* The local-unwinding cursor API (unw_getcontext, unw_init_local, unw_step,
 * unw_get_reg, unw_get_save_loc, unw_is_signal_frame), x86-64 only: NULL elsewhere
 * and until the load is done (then all set together with vt__unw_backtrace). */
typedef struct vt_unw_cursor_api {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*get_save_loc)(unw_cursor_t *, int, unw_save_loc_t *);
    int (*is_signal_frame)(unw_cursor_t *);
} vt_unw_cursor_api;
extern vt_unw_cursor_api vt__unw_cursor __attribute__((visibility("hidden")));

/* Loads libunwind.so.8 once: 0; -1 missing (one "vramtrace:" warning: allocations
 * are recorded without stacks; latched); 1 another thread is loading it. Never
 * inside a dl_iterate_phdr callback nor with a lock of ours held. Thread-safe; keeps
 * errno. */
int vt_libunwind_load(void);

#endif /* VT_LIBUNWIND_H */
