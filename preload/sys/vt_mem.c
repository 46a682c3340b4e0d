/* vt_mem.c — the core's allocator with test-only failure injection (see vt_mem.h). */
#include "vt_mem.h"

#include <stdlib.h>
#include <string.h>

static long vt__mem_fail_at;  /* atomic: calls left before the injected failure, 0 = off */

void vt_mem_fail_at(long n)
{
    __atomic_store_n(&vt__mem_fail_at, n, __ATOMIC_RELAXED);
}

void *vt_mem_alloc(size_t size)
{
    if (__builtin_expect(__atomic_load_n(&vt__mem_fail_at, __ATOMIC_RELAXED) != 0, 0)) {
        long left = __atomic_sub_fetch(&vt__mem_fail_at, 1, __ATOMIC_RELAXED);
        if (left == 0)
            return NULL;
        if (left < 0)   /* a concurrent caller consumed the failure; stay off */
            __atomic_store_n(&vt__mem_fail_at, 0, __ATOMIC_RELAXED);
    }
    return malloc(size);
}

void *vt_mem_calloc(size_t size)
{
    void *p = vt_mem_alloc(size);
    if (p)
        memset(p, 0, size);
    return p;
}

void vt_mem_free(void *p)
{
    free(p);
}
