/* vt_dlib.c — libraries loaded when first needed (contract in vt_dlib.h).
 *
 * The slots are written only before the state becomes 2 (release), and read by
 * callers after they saw 2 (acquire) or after their own vt_dlib_load returned 0. A
 * library that lacks one of the functions has every slot cleared (it stays mapped,
 * unused): nothing of it is half used.
 */
#define _GNU_SOURCE
#include "vt_dlib.h"
#include "vt_log.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

/* state values: 0 not tried, 2 loaded, -1 missing, VT__LOADING + pid: being loaded by
 * a thread of process pid (a fork child, where that thread does not exist, sees
 * another pid and loads it itself). */
#define VT__LOADING 3

int vt_dlib_load(const vt_dlib *l)
{
    int st = __atomic_load_n(l->state, __ATOMIC_ACQUIRE);
    if (st == 2)
        return 0;
    if (st == -1)
        return -1;
    int me = VT__LOADING + (int)getpid();
    if (st >= VT__LOADING && st == me)
        return 1;   /* another thread of this process is loading it */
    /* not tried yet, or being loaded in the parent of this fork child */
    if (!__atomic_compare_exchange_n(l->state, &st, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return st == 2 ? 0 : st == -1 ? -1 : 1;   /* another thread came first */
    int e = errno;
    const char *missing = NULL;
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        missing = l->soname;
    } else {
        for (size_t i = 0; i < l->n && !missing; i++) {
            void *f = dlsym(h, l->fns[i].name);
            /* release: a reader that acquire-loads a later slot sees the earlier ones */
            __atomic_store_n(l->fns[i].slot, f, __ATOMIC_RELEASE);
            if (!f)
                missing = l->fns[i].name;
        }
    }
    if (missing) {
        for (size_t i = 0; i < l->n; i++)
            __atomic_store_n(l->fns[i].slot, NULL, __ATOMIC_RELEASE);
        if (h)
            vt_log(VT_LOG_WARN, "cannot use %s (no %s in it): %s", l->soname, missing, l->what);
        else
            vt_log(VT_LOG_WARN, "cannot load %s: %s", l->soname, l->what);
    }
    __atomic_store_n(l->state, missing ? -1 : 2, __ATOMIC_RELEASE);
    errno = e;
    return missing ? -1 : 0;
}
