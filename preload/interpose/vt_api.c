/* vt_api.c — the client API of include/vramtrace.h, exported by libvramtrace.so.
 * Thread-safe; callable before any CUDA call (queries then return 0). Every entry
 * point leaves errno as it found it (a signal handler may call it). */
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

/* A query normally applies the hooks' pending ring events first (vt_core.h), so it
 * sees every allocation and free that returned before it. Not when it is made inside
 * a hook on this thread (a signal handler that interrupted the hook, or the real CUDA
 * call under it): that thread's own event may be half written and the C library's
 * locks may be held, so it answers from the state as last applied (vt__tls.no_sync).
 * Async-signal-safe then only in that sense: no lock of ours is waited for when the
 * handler interrupted a hook or our core; one interrupting the program's own malloc
 * must not call these (they may apply events, which can allocate). */
#define VT_QUERY_BEGIN int vt__ns = vt_guard_depth() != 0; if (vt__ns) vt__tls.no_sync++
#define VT_QUERY_END   if (vt__ns) vt__tls.no_sync--

/* 1 when this call is made inside a hook, the core or the writer's snapshot on this
 * thread (a signal handler that interrupted one): nothing here may then take our
 * locks, apply the ring, call the driver or allocate. Also inside a dl_iterate_phdr callback,
 * where a snapshot written here would take the loader's locks (dladdr for stack
 * symbols, the writer's start): the step's snapshot is then the writer thread's, and
 * vramtrace_snapshot answers -EAGAIN. */
static int vt__api_in_hook(void)
{
    return vt_guard_depth() != 0 || vt__tls.core != 0 || vt_guard_in_iterate() || vt_writer_busy_here();
}

VT_EXPORT void vramtrace_step(void)
{
    vt_api_step();
}

void vt_api_step(void)
{
    int e = errno;
    if (vt__api_in_hook()) {   /* the mark now, its snapshot by the writer thread */
        if (vt_core_enabled()) {
            uint64_t step = vt_core_step();
            if (vt__config.step_every > 0 && step % (uint64_t)vt__config.step_every == 0)
                vt_writer_post_step();
        }
        errno = e;
        return;
    }
    vt_preload_activate();
    if (vt_core_enabled()) {
        VT_NOCANCEL_BEGIN;
        uint64_t step = vt_core_step();
        if (vt__config.step_every > 0 && step % (uint64_t)vt__config.step_every == 0) {
            vt_writer_kick_step();
        }
        VT_NOCANCEL_END;
    }
    errno = e;
}

VT_EXPORT int vramtrace_snapshot(const char *label)
{
    return vt_api_snapshot(label);
}

int vt_api_snapshot(const char *label)
{
    if (vt__api_in_hook())
        return -EAGAIN;   /* a signal handler inside a hook or the core: not here */
    vt_preload_activate();
    int e = errno;
    VT_NOCANCEL_BEGIN;
    int rc = vt_writer_snapshot(VT_TRIG_MANUAL, label);
    VT_NOCANCEL_END;
    errno = e;
    return rc;
}

VT_EXPORT uint64_t vramtrace_live_bytes(int device)
{
    VT_QUERY_BEGIN;
    uint64_t v = vt_core_live_bytes(device);
    VT_QUERY_END;
    return v;
}
extern __typeof__(vramtrace_live_bytes) vt__live_bytes_here
    __attribute__((alias("vramtrace_live_bytes"), visibility("hidden")));

VT_EXPORT uint64_t vramtrace_peak_bytes(int device)
{
    VT_QUERY_BEGIN;
    uint64_t v = vt_core_peak_bytes(device);
    VT_QUERY_END;
    return v;
}

VT_EXPORT int vramtrace_peak_sites(int device, vramtrace_peak_info *info, vramtrace_peak_site *sites,
                                   int cap)
{
    if (!info || cap < 0 || (!sites && cap > 0))
        return -EINVAL;
    int e = errno;
    VT_QUERY_BEGIN;
    vt_peak_comp p;
    int have = vt_core_peak_sites(device == -1 ? VT_PEAK_PROCESS : device, &p);
    VT_QUERY_END;
    vramtrace_peak_info z = {0};
    *info = z;
    int n = 0;
    if (have) {
        info->peak_bytes = p.bytes;
        info->step = p.step;
        info->time_ns = p.time_ns;
        info->other_bytes = p.other_bytes;
        info->other_sites = p.other_sites;
        info->n_sites = p.n;
        for (; n < cap && (uint32_t)n < p.n; n++) {
            sites[n].stack = p.top[n].stack;
            sites[n].kind = p.top[n].kind;
            sites[n].device = p.top[n].device;
            sites[n].flags = (uint32_t)p.top[n].flags;
            sites[n].bytes = p.top[n].bytes;
        }
    }
    errno = e;
    return n;
}

VT_EXPORT void vramtrace_scope_begin(void)
{
    int e = errno;
    vt_preload_activate();
    VT_QUERY_BEGIN;
    VT_NOCANCEL_BEGIN;
    vt_core_scope_begin();
    VT_NOCANCEL_END;
    VT_QUERY_END;
    errno = e;
}

VT_EXPORT uint64_t vramtrace_scope_leaked_bytes(void)
{
    VT_QUERY_BEGIN;
    uint64_t v = vt_core_scope_leaked_bytes();
    VT_QUERY_END;
    return v;
}

VT_EXPORT int vramtrace_annotate(const char *key, double value)
{
    vt_preload_activate();
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
    int e = errno;
    VT_QUERY_BEGIN;
    uint64_t v = vt_core_peak_interval_take();
    VT_QUERY_END;
    errno = e;
    return v;
}

VT_EXPORT int vramtrace_enabled(void)
{
    vt_preload_activate();
    return vt_core_enabled() ? 1 : 0;
}
