/* vramtrace.h — client API of libvramtrace.so (GPU memory tracer).
 *
 * Include it and call the functions below; the program builds, links and runs the
 * same with or without the library:
 *   - under LD_PRELOAD=libvramtrace.so (or linked with -lvramtrace) the calls reach
 *     the tracer;
 *   - without it they do nothing and return 0.
 * This works because, unless VRAMTRACE_IMPLEMENTATION is defined (the library itself
 * defines it), each function below is a static inline wrapper that looks the real
 * function up once with dlsym(RTLD_DEFAULT, "<name>") (heaptrack_api.h style). On
 * glibc < 2.34 link with -ldl. No other symbol is required at link time.
 *
 * Units: bytes. Devices: CUDA device ordinals; -1 means all devices.
 * Thread safety: every function may be called from any thread at any time. Signal
 * handlers: when a handler interrupted a CUDA allocation or free (or vramtrace
 * itself) on its thread, vramtrace_live_bytes, _peak_bytes, _scope_leaked_bytes and
 * _peak_interval_bytes return at once with the counts as last brought up to date
 * (_peak_interval_bytes then does not start a new interval), vramtrace_scope_begin
 * starts the scope from them, vramtrace_step marks the step and leaves its snapshot
 * to the writer thread, and vramtrace_snapshot returns -EAGAIN; the same when the
 * handler interrupted vramtrace_step or _snapshot itself. A handler that may
 * interrupt the program's own malloc must not call them (they may bring the counts
 * up to date, which can allocate).
 * Errors: vramtrace_snapshot returns 0 or a negative errno value; the others cannot
 * fail. Nothing here allocates through CUDA or changes CUDA state.
 */
#ifndef VRAMTRACE_H
#define VRAMTRACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What was live at the peak (vramtrace_peak_sites). */
#define VRAMTRACE_PEAK_TOP 16     /* most sites a composition names */
typedef struct vramtrace_peak_site {
    uint32_t stack;     /* stack id, as the snapshot file's "stack" records name it */
    int32_t  kind;      /* kind number: 0 device, 1 managed, 2 host_pinned, 3 async,
                           4 vmm, 5 array, 6 graph ("Kinds", docs/snapshot-format.md) */
    int32_t  device;    /* CUDA ordinal, -1 unknown                                  */
    uint32_t flags;     /* site flags: 1 registered, 2 multicast, 4 logical_size     */
    uint64_t bytes;     /* its live bytes at the moment of the peak                  */
} vramtrace_peak_site;
typedef struct vramtrace_peak_info {
    uint64_t peak_bytes;   /* the total at the moment copied (the peak, see below)   */
    uint64_t step;         /* the step in progress then (the number its step
                              snapshot carries)                                       */
    uint64_t time_ns;      /* CLOCK_MONOTONIC of the moment                           */
    uint64_t other_bytes;  /* live bytes of the sites not named                       */
    uint32_t other_sites;  /* how many sites those are                                */
    uint32_t n_sites;      /* sites the composition names (<= VRAMTRACE_PEAK_TOP)     */
} vramtrace_peak_info;

#ifdef VRAMTRACE_IMPLEMENTATION

/* Marks the end of one step (one training iteration). Steps feed the leak analysis;
 * every VRAMTRACE_STEP_EVERY marks a "step" snapshot is taken: its figures (and the
 * leak detector's step) are collected by the calling thread before it returns, and the
 * record is encoded and written by vramtrace's writer thread afterwards, so a slow disk
 * does not slow the step (when called from a signal handler that interrupted a CUDA
 * call or vramtrace itself, the writer thread collects it too). Records keep the order
 * of the marks, each step is its own record, and a later vramtrace_snapshot() record,
 * OOM record or the exit record comes after them. When 8 step snapshots are still
 * waiting to be written (the disk slower than the steps), the call waits until the
 * writer has taken one. exit() and _exit() write or wait for (at most 1 s) the queued
 * ones; a process killed by a signal loses those not yet written. The step count is one
 * for the whole process: when several threads mark steps at the same time, a step
 * snapshot carries the count at the moment it is collected, so two of them may carry
 * the same step. */
void     vramtrace_step(void);
/* Writes a "manual" snapshot with every live allocation, labelled `label` (may be
 * NULL; copied, at most 1024 bytes used), on the calling thread, after the step
 * snapshots still waiting to be written (it writes those first). Returns 0 once the
 * record is on disk, or a
 * negative errno: -ECANCELED tracking is off (VRAMTRACE_DISABLE=1 or latched off after
 * an internal failure), -EIO the output file could not be written, -ENOMEM, -EAGAIN
 * called from a signal handler that interrupted a CUDA allocation or free, or
 * vramtrace_step or _snapshot on its thread. */
int      vramtrace_snapshot(const char *label);
/* Bytes live now (allocated and not freed; all kinds: device, managed, host_pinned,
 * async, vmm) on `device`, or on all devices for -1. */
uint64_t vramtrace_live_bytes(int device);
/* Highest live bytes seen on `device` (-1: of the process total). */
uint64_t vramtrace_peak_bytes(int device);
/* Starts a leak scope (process-wide, one at a time; a new begin restarts it). */
void     vramtrace_scope_begin(void);
/* Bytes allocated since the last vramtrace_scope_begin and still live. */
uint64_t vramtrace_scope_leaked_bytes(void);
/* Sets the named gauge `key` (1..63 bytes of [A-Za-z0-9_.:-], copied) to `value`
 * (finite; any unit — name it, e.g. "torch.cuda:0.memory_reserved_bytes"). Every
 * snapshot written afterwards carries every gauge set so far, latest value per key
 * ("annotations" in docs/snapshot-format.md). Returns 0, -EINVAL (bad key or value),
 * -ENOSPC (more than 64 keys) or -ECANCELED (tracking off). */
int      vramtrace_annotate(const char *key, double value);
/* Highest total live bytes (as vramtrace_live_bytes(-1)) since the previous call, or
 * since start for the first; then starts a new interval at the live bytes of now.
 * Does not change vramtrace_peak_bytes. One caller should own the intervals. */
uint64_t vramtrace_peak_interval_bytes(void);
/* 1 while tracking is on; 0 when disabled (VRAMTRACE_DISABLE=1) or latched off. */
int      vramtrace_enabled(void);
/* What was live at the highest peak so far of `device`'s live bytes (-1: of the
 * process total, all devices): fills *info and the first `cap` of the sites that held
 * the most bytes at that moment, bytes descending (sites past `cap` are not added to
 * other_bytes: info->n_sites says how many there are). The moment is copied when a
 * peak rises at least 1 % above the previous copy, or at all once the previous copy is
 * older than the snapshot interval, so info->peak_bytes is at most 1 % below
 * vramtrace_peak_bytes(device). Returns the number of sites written (0..cap), 0 with
 * *info zeroed when no peak was copied yet (or tracking is off, or called from a
 * signal handler that interrupted a CUDA call or vramtrace), -EINVAL when info is
 * NULL, cap < 0, or sites is NULL with cap > 0. */
int      vramtrace_peak_sites(int device, vramtrace_peak_info *info, vramtrace_peak_site *sites,
                              int cap);

#else /* a client program: resolve at run time, do nothing without the library */

#include <dlfcn.h>

/* Looks `name` up once; caches the result (or the absence) in *slot. */
static inline void *vramtrace__lookup(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlsym((void *)0 /* RTLD_DEFAULT */, name);
        if (!p)
            p = (void *)1;  /* "not there": do not look again */
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p == (void *)1 ? (void *)0 : p;
}

static inline void vramtrace_step(void)
{
    static void *slot;
    void (*f)(void) = (void (*)(void))vramtrace__lookup(&slot, "vramtrace_step");
    if (f)
        f();
}

static inline int vramtrace_snapshot(const char *label)
{
    static void *slot;
    int (*f)(const char *) = (int (*)(const char *))vramtrace__lookup(&slot, "vramtrace_snapshot");
    return f ? f(label) : 0;
}

static inline uint64_t vramtrace_live_bytes(int device)
{
    static void *slot;
    uint64_t (*f)(int) = (uint64_t (*)(int))vramtrace__lookup(&slot, "vramtrace_live_bytes");
    return f ? f(device) : 0;
}

static inline uint64_t vramtrace_peak_bytes(int device)
{
    static void *slot;
    uint64_t (*f)(int) = (uint64_t (*)(int))vramtrace__lookup(&slot, "vramtrace_peak_bytes");
    return f ? f(device) : 0;
}

static inline void vramtrace_scope_begin(void)
{
    static void *slot;
    void (*f)(void) = (void (*)(void))vramtrace__lookup(&slot, "vramtrace_scope_begin");
    if (f)
        f();
}

static inline uint64_t vramtrace_scope_leaked_bytes(void)
{
    static void *slot;
    uint64_t (*f)(void) = (uint64_t (*)(void))vramtrace__lookup(&slot, "vramtrace_scope_leaked_bytes");
    return f ? f() : 0;
}

static inline int vramtrace_annotate(const char *key, double value)
{
    static void *slot;
    int (*f)(const char *, double) = (int (*)(const char *, double))vramtrace__lookup(&slot, "vramtrace_annotate");
    return f ? f(key, value) : 0;
}

static inline uint64_t vramtrace_peak_interval_bytes(void)
{
    static void *slot;
    uint64_t (*f)(void) = (uint64_t (*)(void))vramtrace__lookup(&slot, "vramtrace_peak_interval_bytes");
    return f ? f() : 0;
}

static inline int vramtrace_enabled(void)
{
    static void *slot;
    int (*f)(void) = (int (*)(void))vramtrace__lookup(&slot, "vramtrace_enabled");
    return f ? f() : 0;
}

static inline int vramtrace_peak_sites(int device, vramtrace_peak_info *info,
                                       vramtrace_peak_site *sites, int cap)
{
    static void *slot;
    int (*f)(int, vramtrace_peak_info *, vramtrace_peak_site *, int) =
        (int (*)(int, vramtrace_peak_info *, vramtrace_peak_site *, int))vramtrace__lookup(&slot, "vramtrace_peak_sites");
    if (f)
        return f(device, info, sites, cap);
    if (info) {
        vramtrace_peak_info z = {0, 0, 0, 0, 0, 0};
        *info = z;
    }
    return 0;
}

#endif /* VRAMTRACE_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif

#endif /* VRAMTRACE_H */
