/* vt_hooks_common.c — bookkeeping shared by the driver and runtime shims
 * (see vt_hooks.h).
 *
 * Device of an allocation: the real driver is asked, outside every lock, which
 * context is current (cuCtxGetCurrent) and its device (cuCtxGetDevice); the pair is
 * cached per thread and invalidated when any context is destroyed or reset. Right
 * after a successful runtime or driver allocation the allocating context is current,
 * so this is the allocation's device. VMM allocations take the device from
 * CUmemAllocationProp.location instead.
 */
#define _GNU_SOURCE
#include "vt_hooks.h"
#include "vt_hooks_dl.h"
#include "vt_frames.h"
#include "vt_config.h"
#include "vt_state.h"
#include "vt_resolve.h"
#include "vt_stack.h"
#include "vt_writer.h"
#include "vt_host.h"
#include "vt_libelf.h"
#include "vt_zstd.h"
#include "vt_log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

uint32_t vt_hook_capture_oom(void)
{
    vt_core_latch_off("out of memory for the stack store");
    return 0;
}

static int vt__atexit_registered;
int vt__started;          /* atomic: vt_hook_start has run to the end once (vt_hooks.h) */
static int vt__fork_nostacks;   /* atomic: warn at the first allocation (fork child) */

void vt_hook_fork_nostacks(void)
{
    vt_state_set_depth(0);
    __atomic_store_n(&vt__fork_nostacks, 1, __ATOMIC_RELEASE);
}

void vt_hook_after_fork_child(void)
{
    __atomic_store_n(&vt__started, 0, __ATOMIC_RELAXED);
}

void vt_hook_start(void)
{
    if (__atomic_load_n(&vt__started, __ATOMIC_ACQUIRE))
        return;
    /* Inside a dl_iterate_phdr callback the loader's write lock is held: the libraries
     * loaded below (NVML's dlopen among them) and the writer's start (pthread_create's
     * TLS set-up) take the loader's load and TLS locks, which a thread inside dlopen
     * holds while it waits for the write lock.
     * The start waits for the next allocation outside such a callback; the events
     * recorded until then wait in the core's ring. */
    if (vt_guard_in_iterate())
        return;
    /* the writer's open/write are cancellation points: never the program's */
    int oldcs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
    /* The libraries only the writer uses are loaded here, with no lock of ours held
     * (a thread inside dlopen may be waiting for one): libzstd for the file, libelf
     * for the leak warnings' names, NVML for the host figures (its constructors and
     * nvmlInit_v2 run here too). While another thread loads one, the start waits for
     * the next allocation (waiting here could deadlock on the loader's lock). */
    char *dlerr = vt_dlerr_save();   /* the dlopen calls here */
    vt_stack_warm();   /* libunwind, when activation came inside such a callback */
    int busy = vt__config.compress && vt_zstd_load() > 0;
    busy |= vt_libelf_load() > 0;
    if (vt_core_enabled() && vt_state_writer() == 0)   /* a writer still to start */
        busy |= vt_host_nvml_load() > 0;
    if (busy) {
        vt_dlerr_restore(dlerr);
        pthread_setcancelstate(oldcs, NULL);
        return;
    }
    /* The first allocation call starts the writer (a process that never touches CUDA
     * writes nothing) and registers the exit marker. It is registered after the CUDA
     * runtime registered its own teardown handler (the runtime initialises inside its
     * first call), so the marker runs before that teardown. */
    if (!__atomic_load_n(&vt__atexit_registered, __ATOMIC_ACQUIRE) &&
        !__atomic_exchange_n(&vt__atexit_registered, 1, __ATOMIC_ACQ_REL))
        atexit(vt_writer_exit_marker);
    if (__atomic_load_n(&vt__fork_nostacks, __ATOMIC_ACQUIRE) &&
        __atomic_exchange_n(&vt__fork_nostacks, 0, __ATOMIC_ACQ_REL))
        vt_log(VT_LOG_WARN, "forked while another thread was capturing a stack (libunwind's "
                            "locks may be held for good): this process records without stacks");
    vt_writer_start();
    vt_dlerr_restore(dlerr);
    __atomic_store_n(&vt__started, 1, __ATOMIC_RELEASE);
    pthread_setcancelstate(oldcs, NULL);
}

void vt_hook_alloc_failed(uint32_t stack, const char *api, int kind, int result, int oom,
                          uint64_t size, int device)
{
    vt_hook_start();
    uint64_t ctx;
    int cur = vt_driver_device_current(&ctx);
    if (device == VT_DEVICE_CURRENT)
        device = cur;
    vt_core_alloc_failed(device, kind, oom);
    /* inside a dl_iterate_phdr callback the oom snapshot (the writer's start, dladdr
     * for the stack's symbols) would take the loader's locks: counted only */
    if (oom && !vt_guard_in_iterate()) {
        int oldcs;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
        vt_oom_info o;
        memset(&o, 0, sizeof o);
        o.api = api;
        o.kind = kind;
        o.device = device;
        o.requested = size;
        o.result = result;
        o.stack = stack;
        o.meminfo_ok = vt_driver_meminfo(&o.free_bytes, &o.total_bytes) == 0;
        if (o.meminfo_ok)
            vt_core_set_meminfo(device, o.free_bytes, o.total_bytes);
        vt_writer_oom(&o);
        pthread_setcancelstate(oldcs, NULL);
    }
}

void vt_hook_free_failed(uint64_t ticket, vt_taken *t, uint64_t addr, int kind)
{
    int e = errno;
    if (ticket != VT_TICKET_SYNC) {
        t->rec = NULL;
        t->ticket = ticket;
    }
    /* the question for the record's own kind: a free through another kind's API
     * (cudaFree of an array handle) failed because the record is not that API's */
    int k = vt_core_taken_kind(t);
    if (k < 0)
        k = VT_KIND_OF(kind);
    t->alive = (int8_t)(k == VT_KIND_ARRAY ? vt_driver_array_alive(addr) : vt_driver_still_allocated(addr));
    vt_core_restore(t);
    errno = e;
}

int vt_hook_is_runtime_teardown(void *ra)
{
    if (vt_state_exiting()) {
        vt_log(VT_LOG_DEBUG, "context teardown during exit: records stay unfreed at exit");
        return 1;
    }
    Dl_info di;
    int e = errno;
    /* dladdr takes the loader's lock: not inside a dl_iterate_phdr callback, where the
     * runtime never tears a context down (its teardown runs at exit) */
    int in_cudart = ra && !vt_guard_in_iterate() && dladdr(ra, &di) && vt_frames_module_is_runtime(di.dli_fname);
    errno = e;
    if (in_cudart)
        vt_log(VT_LOG_DEBUG, "context teardown by the runtime itself: records stay unfreed at exit");
    return in_cudart;
}

void vt_hook_pool_used(uint64_t pool)
{
    uint64_t ctx;
    vt_driver_pool_note(pool, vt_driver_device_current(&ctx));
}
