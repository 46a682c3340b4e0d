/* vt_api.c — the client API of include/vramtrace.h, exported by libvramtrace.so.
 * Thread-safe; callable before any CUDA call (queries then return 0). */
#define _GNU_SOURCE
#define VRAMTRACE_IMPLEMENTATION
#include "vramtrace.h"
#include "vt_annot.h"
#include "vt_config.h"
#include "vt_core.h"
#include "vt_hooks.h"
#include "vt_writer.h"

#include <errno.h>
#include <pthread.h>

/* Every entry point that may take a lock or make a syscall runs with cancellation
 * disabled (restored on return): a thread cancelled inside would die holding our
 * locks. The program's own cancellation points are unaffected. */
#define VT_NOCANCEL_BEGIN int vt__oldcs; pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &vt__oldcs)
#define VT_NOCANCEL_END   pthread_setcancelstate(vt__oldcs, NULL)

VT_EXPORT void vramtrace_step(void)
{
    vt_preload_init();
    if (!vt_core_enabled())
        return;
    VT_NOCANCEL_BEGIN;
    uint64_t step = vt_core_step();
    if (vt__config.step_every > 0 && step % (uint64_t)vt__config.step_every == 0) {
        if (vt_writer_started())
            vt_hooks_step_meminfo();
        vt_writer_kick_step();
    }
    VT_NOCANCEL_END;
}

VT_EXPORT int vramtrace_snapshot(const char *label)
{
    vt_preload_init();
    int e = errno;
    VT_NOCANCEL_BEGIN;
    int rc = vt_writer_snapshot(VT_TRIGGER_MANUAL, label);
    VT_NOCANCEL_END;
    errno = e;
    return rc;
}

VT_EXPORT uint64_t vramtrace_live_bytes(int device)
{
    return vt_core_live_bytes(device);
}

VT_EXPORT uint64_t vramtrace_peak_bytes(int device)
{
    return vt_core_peak_bytes(device);
}

VT_EXPORT void vramtrace_scope_begin(void)
{
    vt_preload_init();
    VT_NOCANCEL_BEGIN;
    vt_core_scope_begin();
    VT_NOCANCEL_END;
}

VT_EXPORT uint64_t vramtrace_scope_leaked_bytes(void)
{
    return vt_core_scope_leaked_bytes();
}

VT_EXPORT int vramtrace_annotate(const char *key, double value)
{
    vt_preload_init();
    if (!vt_core_enabled())
        return -ECANCELED;
    int e = errno;
    VT_NOCANCEL_BEGIN;
    int rc = vt_annot_set(key, value);
    VT_NOCANCEL_END;
    errno = e;
    return rc;
}

VT_EXPORT uint64_t vramtrace_peak_interval_bytes(void)
{
    return vt_core_peak_interval_take();
}

VT_EXPORT int vramtrace_enabled(void)
{
    vt_preload_init();
    return vt_core_enabled() ? 1 : 0;
}
