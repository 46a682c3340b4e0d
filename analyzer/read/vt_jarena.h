/* vt_jarena.h — a bump arena for the jansson trees of one snapshot line.
 *
 * jansson allocates every value, object hash table and string with malloc and
 * frees each one in json_decref; for the reader's one-tree-per-line pattern that
 * is about 15 % of the reading time (docs/performance.md "Analyzer reading
 * speed"). While an arena is active on a thread (vt_jarena_begin .. vt_jarena_end),
 * that thread's jansson allocations are carved from the arena's chunks and its
 * frees do nothing; vt_jarena_end drops the whole tree at once (no json_decref).
 * With no arena active, jansson allocates with malloc/free exactly as before, so
 * the report builders (vt_report_json.c, exports) are unaffected.
 *
 * Rules: a tree parsed inside begin..end must not be used, json_decref'd or kept
 * after end (or after reset, when suspended); a tree made outside must not be
 * freed inside; a tree made inside is never json_decref'd. Memory: chunks of at
 * least 1 MiB; end keeps one chunk (sized to the largest line's tree, at most
 * VT_JARENA_KEEP bytes) for the next line; vt_jarena_release frees everything.
 * Thread safety: the allocator hooks are installed once for the process
 * (vt_jarena_begin does it, pthread_once); the active arena is per thread, and an
 * arena is used by one thread at a time.
 */
#ifndef VT_JARENA_H
#define VT_JARENA_H

#include <stddef.h>

#define VT_JARENA_KEEP ((size_t)64 << 20)   /* bytes kept between lines at most */

typedef struct vt_jarena_chunk vt_jarena_chunk;

typedef struct vt_jarena {
    vt_jarena_chunk *head;    /* current chunk first; owned */
    size_t used_total;        /* bytes handed out since begin (statistics) */
} vt_jarena;

/* Makes a (zero-initialised or released) the calling thread's jansson allocator
 * until vt_jarena_end. Nested use is not supported. */
void vt_jarena_begin(vt_jarena *a);

/* Stops using a on this thread and forgets everything allocated since begin
 * (every tree parsed meanwhile is gone). Keeps one chunk for the next line.
 * Same as vt_jarena_suspend then vt_jarena_reset. */
void vt_jarena_end(vt_jarena *a);

/* Stops using any arena on this thread, keeping what was allocated: trees parsed
 * in it stay valid (for reading, on any thread) until vt_jarena_reset. */
void vt_jarena_suspend(void);

/* Forgets everything allocated in a (not active on any thread); keeps one chunk. */
void vt_jarena_reset(vt_jarena *a);

/* Frees all of a's memory; a is then empty (and may be begun again). */
void vt_jarena_release(vt_jarena *a);

#endif /* VT_JARENA_H */
