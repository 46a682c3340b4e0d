/* vt_lifecycle.c — start-up, fork and exit of libvramtrace.so.
 *
 * Start-up: the constructor (and, lazily, the first hook if it runs earlier, e.g.
 * from another library's constructor) reads the settings, finds the real dlsym and
 * the real CUDA functions and pipe2, our address range and a Python interpreter
 * (loader calls, made here and not at activation, which may come inside a
 * dl_iterate_phdr callback), and registers the fork handlers: nothing large is
 * touched, no descriptor opened, no thread started (a process under a global
 * LD_PRELOAD that never calls CUDA pays only this). The first hooked CUDA call (or
 * vramtrace_* API call) activates the preload (vt_preload_activate): numbers the
 * core's event ring (1 MiB), loads libunwind (dlopen; inside a dl_iterate_phdr
 * callback this waits for the first allocation outside one, vt_stack_warm) and warms
 * it up (its validation pipe); hooked calls of other threads made while that runs
 * only forward, like those made while the settings are being read. libzstd and
 * libelf are loaded at the first allocation (vt_hook_start). Nothing is written and no thread is started
 * until the first CUDA allocation call.
 *
 * Exit ordering (what "unfreed at exit" means, docs/metrics.md):
 *   1. The program's atexit handlers registered after its first CUDA allocation run
 *      first (LIFO), then our exit marker (registered at that first allocation, after
 *      the CUDA runtime registered its teardown during its own initialisation), then
 *      the runtime's teardown, then handlers registered earlier.
 *   2. The runtime's teardown releases the primary context. A release/reset/destroy
 *      that happens after the marker, or that libcudart makes outside any runtime call
 *      of the program, is the runtime reclaiming memory: its records stay live.
 *   3. glibc then runs the ELF destructors (_dl_fini), the program's and its
 *      libraries' first; libvramtrace was initialised before them, so its destructor
 *      runs after theirs: it writes the "exit" snapshot after every exit-time free the
 *      program made (C++ static destructors included).
 * A process ending by _exit, a signal or SIGKILL writes no exit snapshot; the
 * periodic/step/oom records already on disk are whole. _exit and _Exit first let the
 * writer thread write the step snapshots still queued (vt_hooks_exit.c); a signal or
 * SIGKILL loses those.
 *
 * Fork of a process never activated: no lock of ours is taken, nothing of ours
 * written in the parent or cleared in the child (vt__fork_prepare).
 * Fork of an activated one: the prepare handler takes the writer's and the core's
 * locks (in that order, the order the writer takes them) and the parent releases
 * them; the child gets
 * fresh locks, an empty table, no writer thread and no file until its own first CUDA
 * allocation call. Its records are only its own.
 */
#define _GNU_SOURCE
#include "vt_annot.h"
#include "vt_ipc.h"
#include "vt_hooks.h"
#include "vt_hooks_dl.h"
#include "vt_config.h"
#include "vt_state.h"
#include "vt_core.h"
#include "vt_driver.h"
#include "vt_host.h"
#include "vt_log.h"
#include "vt_prom.h"
#include "vt_resolve.h"
#include "vt_stack.h"
#include "vt_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int vt__preload_ready;  /* 0 not started, 1 in progress, 2 ready (atomic) */
/* 0 the process has made no hooked CUDA call, 1 activation in progress, 2 active
 * (atomic; vt_preload_activate) */
static int vt__activated;
/* Another thread's hooked call meets an activation in progress: it waits for it at
 * most VT_ACTIVATE_WAIT_NS (activation may need the loader lock, which the waiting
 * thread could hold: a bound, not a deadlock), then forwards unrecorded. Once one
 * wait ran out, no call waits any more, those already waiting included (atomic
 * flag). */
#define VT_ACTIVATE_WAIT_NS 200000000ull   /* 200 ms */
static int      vt__activate_wait_off;
static uint64_t vt__activate_missed;        /* atomic: allocations forwarded unrecorded */
static int vt__fork_used;  /* prepare to child/parent: the parent was activated */
static int vt__dup;     /* another copy of libvramtrace comes first (set before ready) */

/* The one pthread_atfork registration of the library (the host sampler's and the
 * textfile's child steps included): its steps run in the order written here,
 * whatever order the linker gives our constructors. The capture's
 * settle comes last in prepare: waiting for the writer's lock (a snapshot being
 * written) must not happen after it, or captures begun meanwhile are inside libunwind
 * at the fork and the child goes without stacks. */
static void vt__fork_prepare(void)
{
    /* Hooked calls the forking thread makes until our parent/child handler ran only
     * forward: recording would wait on the locks this thread now holds, or capture a
     * stack while the fork is settling. Ours being the first registration, no other
     * handler runs in that window, except one registered before ours without going
     * through __register_atfork (above). */
    /* A process never activated (no hooked CUDA call yet) holds none of our locks:
     * nothing of ours is written in the parent (each page written after the fork is
     * one the kernel copies), and the child clears nothing. A thread that activates
     * during the fork is seen by the child (vt__fork_child reads the flag again). */
    int used = __atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) != 0;
    if (vt__fork_used != used)   /* unchanged from the last fork: not written again */
        vt__fork_used = used;
    if (!used)
        return;   /* no capture has run: none to settle (one that a thread activating
                   * during the fork begins is seen by the child: vt_cancel_fork_child) */
    vt_guard_enter();
    vt_writer_fork_prepare();
    vt_core_fork_prepare();
    vt_stack_fork_prepare();
    vt_hooks_cancel_fork_prepare();
}

static void vt__fork_parent(void)
{
    if (!vt__fork_used)
        return;   /* prepare set nothing: nothing to write (a written page is a copy) */
    vt_hooks_cancel_fork_parent();
    vt_stack_fork_parent();
    vt_core_fork_parent();
    vt_writer_fork_parent();
    vt_guard_leave();
}

/* Fork child, an activation in progress in the parent (vt__activated 1): done when it
 * had only its last store left (the hooks record: vt_preload_activate), else to be
 * started over by the child's first hooked call. */
static void vt__activation_after_fork(void)
{
    int done = (__atomic_load_n(&vt__core_state, __ATOMIC_ACQUIRE) & VT_CORE_HOOKS_READY) != 0;
    __atomic_store_n(&vt__activated, done ? 2 : 0, __ATOMIC_RELEASE);
}

static void vt__fork_child(void)
{
    /* the parent's start-up counts are not the child's (it says its own at exit) */
    __atomic_store_n(&vt__activate_missed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__activate_wait_off, 0, __ATOMIC_RELAXED);
    vt_nvtx_fork_child();
    /* An activation in progress is another thread's (activation never forks): that
     * thread does not exist here, so the child's first hooked call activates again
     * (with our locks taken by prepare or not) instead of waiting for it. */
    if (vt__fork_used && __atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) == 1)
        vt__activation_after_fork();
    if (!vt__fork_used) {
        int a = __atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE);
        if (a == 0) {
            /* A parent that never made a hooked CUDA call: nothing of ours to clear
             * and no lock of ours taken (prepare). */
            vt_hooks_cancel_fork_child();
            vt_guard_after_fork_child();
            vt_hooks_dl_fork_child();
            return;
        }
        /* Another thread of the parent began activating during the fork, its locks
         * not taken by prepare: the full clearing below (fresh locks; the ring is
         * numbered again at the child's own activation, an interrupted activation
         * starts over). */
        if (a == 1)
            vt__activation_after_fork();
        vt_guard_enter();
    }
    vt_hooks_cancel_fork_child();
    vt_stack_fork_child();
    vt_guard_after_fork_child();
    vt_driver_after_fork_child();
    vt_core_after_fork_child();
    vt_writer_fork_child();
    vt_hook_after_fork_child();
    vt_hooks_dl_fork_child();
    vt_annot_reset();
    vt_ipc_after_fork_child();
    vt_host_fork_child();      /* the host sampler's and the textfile's locks: their */
    vt_prom_after_fork_child(); /* own, taken under no other lock of ours           */
    vt_guard_leave();
}

/* ---- the place of our fork handlers ----
 * pthread_atfork runs prepare handlers in the reverse order of their registration and
 * parent/child handlers in registration order. Ours must be the FIRST registration:
 * then our prepare, which takes our locks, runs after every other prepare handler (a
 * library's prepare that takes its own mutex, while another thread holds that mutex
 * and waits on one of our locks inside a CUDA call, would otherwise deadlock: a lock
 * order inversion), and our parent and child handlers run before every other one
 * (handlers that allocate find our locks released and are recorded). A library whose
 * constructor runs before ours registers before our constructor, so libvramtrace
 * exports __register_atfork — what pthread_atfork, linked into every object from
 * libc_nonshared.a, calls — and registers its own handlers first on the first call.
 * Registrations that do not come through it (libc's compat pthread_atfork of old
 * binaries) can still come first; the forking thread's hooked calls only forward
 * between our prepare and our parent/child handler (vt__fork_prepare), so those
 * cannot deadlock on our locks either, but their allocations go unrecorded. */
typedef int (*vt_register_atfork_t)(void (*)(void), void (*)(void), void (*)(void), void *);
/* A sanitizer runtime registers its own fork handlers while it initialises, before it
 * can run instrumented code: what it reaches of ours is not instrumented. */
#define VT_EARLY __attribute__((no_sanitize("address", "thread", "undefined")))
extern void *__dso_handle __attribute__((visibility("hidden")));
static void *vt__real_register_atfork;                   /* atomic */
static int vt__atfork_state;                             /* 0, 1 registering, 2 done */

static VT_EARLY vt_register_atfork_t vt__find_register_atfork(void)
{
    static const char *const vers[] = {"GLIBC_2.3.2"};
    return (vt_register_atfork_t)vt_resolve_next_libc(&vt__real_register_atfork, "__register_atfork", vers, 1);
}

/* Registers vt__fork_* once, before anything else this library lets through. The
 * real function is looked up before the once-section, so a thread that waits here
 * (another thread's first registration in progress) never holds up a loader lock the
 * registering thread needs. */
static VT_EARLY void vt__atfork_register_ours(vt_register_atfork_t f)
{
    int expect = 0;
    if (!__atomic_compare_exchange_n(&vt__atfork_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&vt__atfork_state, __ATOMIC_ACQUIRE) == 1)
            sched_yield();
        return;
    }
    if (f)
        f(vt__fork_prepare, vt__fork_parent, vt__fork_child, &__dso_handle);
    __atomic_store_n(&vt__atfork_state, 2, __ATOMIC_RELEASE);
}

/* glibc's __register_atfork (GLIBC_2.3.2): our handlers first, then the caller's,
 * with the caller's arguments and the real function's result. errno: the real
 * call's. Thread-safe. */
static VT_EARLY int vt__register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                                        void *dso)
{
    vt_register_atfork_t f = vt__find_register_atfork();
    vt__atfork_register_ours(f);
    return f ? f(prepare, parent, child, dso) : ENOMEM;
}
extern __typeof__(vt__register_atfork) __register_atfork
    __attribute__((alias("vt__register_atfork"), visibility("default")));

/* 1 when another copy of libvramtrace.so (another path, e.g. a build tree and an
 * installed one both in LD_PRELOAD) comes first in the global scope: its hooks are
 * the program's, and it reaches ours through RTLD_NEXT, so this copy must only
 * forward (two copies recording would count every allocation twice and write two
 * files). Asked with the real dlsym (vt_resolve_init first): the global scope's
 * vramtrace_live_bytes is another copy's when it is not this copy's own definition. */
static int vt__other_copy_first(void)
{
    if (!vt__real_dlsym)
        return 0;
    void *first = vt__real_dlsym(RTLD_DEFAULT, "vramtrace_live_bytes");
    return first && first != (void *)&vt__live_bytes_here;
}

void vt_preload_init(void)
{
    int expect = 0;
    if (!__atomic_compare_exchange_n(&vt__preload_ready, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;  /* ready, or being initialised (maybe by this very thread): go on */
    /* Runs on the program's thread when a hook comes first (another library's
     * constructor): config, dlopen/dlsym, libunwind's set-up and pthread_atfork all
     * may set errno, and the hook returns the real call's errno, which is the
     * program's own when the real call leaves it alone. */
    int e = errno;
    int oldcs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
    vt_guard_enter();
    vt_config_load();
    vt_hooks_dl_init();
    char *dlerr = vt_dlerr_save();   /* a hook that comes first: the program's message */
    vt_resolve_init();
    vt_hooks_exit_init();
    int dup = vt__other_copy_first();
    if (dup)
        vt_state_set_forward_only();   /* before vt_core_init: this copy records nothing */
    vt_core_setup();   /* the settings only: the ring is numbered at activation */
    if (!dup && !vt__config.disable)
        vt_stack_setup(1);   /* loader calls here, not at activation (which may come
                              * inside a dl_iterate_phdr callback) */
    vt_hooks_fd_init();
    vt__dup = dup;
    vt__atfork_register_ours(vt__find_register_atfork());
    if (dup)
        vt_log(VT_LOG_INFO, "another copy of libvramtrace is loaded first; this one forwards everything");
    else if (vt__config.disable)
        vt_log(VT_LOG_INFO, "VRAMTRACE_DISABLE=1: forwarding everything, recording nothing");
    vt_dlerr_restore(dlerr);
    vt_guard_leave();
    __atomic_store_n(&vt__preload_ready, 2, __ATOMIC_RELEASE);
    pthread_setcancelstate(oldcs, NULL);
    errno = e;
}

void vt_preload_activate(void)
{
    if (__atomic_load_n(&vt__preload_ready, __ATOMIC_ACQUIRE) != 2) {
        vt_preload_init();
        if (__atomic_load_n(&vt__preload_ready, __ATOMIC_ACQUIRE) != 2)
            return;   /* being initialised (another thread, or this one below us) */
    }
    int expect = 0;
    if (__atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) ||
        !__atomic_compare_exchange_n(&vt__activated, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        /* done, or being done. By this thread (its frames below us hold the depth
         * guard): this call forwards. By another thread: wait for it, bounded. */
        if (__atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) == 1 && vt_guard_depth() == 0 &&
            !__atomic_load_n(&vt__activate_wait_off, __ATOMIC_RELAXED)) {
            int e = errno;
            uint64_t until = vt_now_ns() + VT_ACTIVATE_WAIT_NS;
            for (unsigned i = 0; __atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) == 1; i++) {
                if (__atomic_load_n(&vt__activate_wait_off, __ATOMIC_RELAXED))
                    break;   /* another thread's wait ran out: so does this one */
                if (vt_now_ns() >= until) {
                    __atomic_store_n(&vt__activate_wait_off, 1, __ATOMIC_RELAXED);
                    break;
                }
                if (i < 64) {
                    sched_yield();
                } else {   /* 50 us through the raw call: nanosleep(3) is a cancellation point */
                    struct timespec ts = {0, 50000};
                    syscall(SYS_nanosleep, &ts, NULL);
                }
            }
            errno = e;
        }
        return;
    }
    int e = errno;
    int oldcs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
    vt_guard_enter();
    char *dlerr = vt_dlerr_save();
    if (vt_core_init() == 0 && !vt__dup)
        vt_stack_warm();   /* libunwind (and its pipe) are the first copy's business */
    vt_dlerr_restore(dlerr);
    vt_guard_leave();
    /* hooks record before the waiters are let go: a call that sees the activation
     * done also sees them recording */
    vt_core_hooks_ready();
    __atomic_store_n(&vt__activated, 2, __ATOMIC_RELEASE);
    pthread_setcancelstate(oldcs, NULL);
    errno = e;
}

void vt_preload_missed(void)
{
    if (__atomic_load_n(&vt__activated, __ATOMIC_ACQUIRE) == 1)
        __atomic_add_fetch(&vt__activate_missed, 1, __ATOMIC_RELAXED);
}

uint64_t vt_preload_missed_count(void)
{
    return __atomic_load_n(&vt__activate_missed, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void vt__ctor(void)
{
    vt_preload_init();
}

__attribute__((destructor)) static void vt__dtor(void)
{
    uint64_t missed = vt_preload_missed_count();
    if (missed)
        vt_log(VT_LOG_WARN, "%llu allocation call(s) on other threads were not recorded: they came while "
               "tracing was starting and the wait for it ran out", (unsigned long long)missed);
    vt_writer_exit();
}
