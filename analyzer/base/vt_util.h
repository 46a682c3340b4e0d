/* vt_util.h — small helpers shared by the analyzer: checked allocation, growable
 * arrays, FNV-1a hashing.
 *
 * The analyzer is a short-lived command: running out of memory is reported once
 * ("vramtrace: out of memory") and exits with status 2, the "unreadable input"
 * code of the vramtrace command. Not thread-safe by design: the analyzer is single-threaded.
 */
#ifndef VT_UTIL_H
#define VT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* malloc/calloc/realloc/strdup that never return NULL: on failure print
 * "vramtrace: out of memory" and exit(2). Ownership as for the libc calls. */
void *vt_xmalloc(size_t n);
void *vt_xcalloc(size_t n, size_t size);
void *vt_xrealloc(void *p, size_t n);
char *vt_xstrdup(const char *s);
char *vt_xstrndup(const char *s, size_t n);

/* Grows *pv (an array of elements of esize bytes with capacity *pcap) so that it
 * holds at least need elements; capacity at least doubles. */
void vt_grow(void **pv, size_t *pcap, size_t need, size_t esize);

/* Appends one element to a (ptr, len, cap) triple named by prefix: VT_PUSH(x.a, x.n, x.cap, v). */
#define VT_PUSH(ptr, len, cap, val)                                              \
    do {                                                                         \
        if ((len) >= (cap)) vt_grow((void **)&(ptr), &(cap), (len) + 1, sizeof(*(ptr))); \
        (ptr)[(len)++] = (val);                                                  \
    } while (0)

/* 64-bit FNV-1a over n bytes, continuing from h (start with VT_FNV_INIT). */
#define VT_FNV_INIT 0xcbf29ce484222325ULL
uint64_t vt_fnv1a(uint64_t h, const void *data, size_t n);

/* a + b, saturating at UINT64_MAX (counters summed over sites, devices, kinds). */
static inline uint64_t vt_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static inline uint64_t vt_u64max(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Bounded copy: at most cap-1 bytes of src and a NUL into dst (cap >= 1). */
void vt_strlcpy(char *dst, size_t cap, const char *src);

/* Returns the last path component of path (pointer into path; never NULL). */
const char *vt_basename(const char *path);

#endif /* VT_UTIL_H */
