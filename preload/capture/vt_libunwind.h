/* vt_libunwind.h — libunwind's unw_backtrace, called through a pointer that
 * vt_libunwind_load fills: libunwind is loaded with dlopen at the process's first
 * CUDA call (vt_stack_warm), not linked (sys/vt_dlib.h), so a process that never
 * calls CUDA maps neither it nor liblzma behind it.
 */
#ifndef VT_LIBUNWIND_H
#define VT_LIBUNWIND_H

typedef int (*vt_unw_backtrace_fn)(void **buffer, int size);

/* unw_backtrace once libunwind is loaded, else NULL (atomic: written once, before
 * the load is marked done). Any thread. */
extern vt_unw_backtrace_fn vt__unw_backtrace __attribute__((visibility("hidden")));

/* Loads libunwind.so.8 once: 0; -1 missing (one "vramtrace:" warning: allocations
 * are recorded without stacks; latched); 1 another thread is loading it. Never
 * inside a dl_iterate_phdr callback nor with a lock of ours held. Thread-safe; keeps
 * errno. */
int vt_libunwind_load(void);

#endif /* VT_LIBUNWIND_H */
