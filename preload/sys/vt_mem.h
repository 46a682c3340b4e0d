/* vt_mem.h — the core's own memory (tables, records, stack store).
 *
 * All internal allocations of the core go through vt_mem_alloc so that a test can
 * make the Nth one fail (VRAMTRACE_TEST_FAIL_ALLOC_AT=N, TEST ONLY) and prove the
 * "table memory exhausted -> tracking latched off, program unchanged" path.
 * Plain malloc/free underneath (never the traced CUDA API). Thread-safe.
 */
#ifndef VT_MEM_H
#define VT_MEM_H

#include <stddef.h>

/* Returns size bytes (uninitialised) or NULL: out of memory, or the injected failure. */
void *vt_mem_alloc(size_t size);
/* Returns zeroed size bytes or NULL (as vt_mem_alloc). */
void *vt_mem_calloc(size_t size);
/* Frees p from vt_mem_alloc/vt_mem_calloc; NULL is fine. */
void vt_mem_free(void *p);
/* Arms the injection: the n-th call from now on fails (0 disarms). Test hook. */
void vt_mem_fail_at(long n);

#endif /* VT_MEM_H */
