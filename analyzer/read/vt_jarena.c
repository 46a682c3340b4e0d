/* vt_jarena.c — per-line bump arena for jansson (see vt_jarena.h).
 *
 * Design: json_set_alloc_funcs is process-wide, so the hooks installed here look
 * at a thread-local "active arena" pointer: NULL means plain malloc/free. Chunks
 * are a singly linked list, newest first; an allocation that does not fit starts
 * a new chunk of twice the previous size (or the request). At end, when the line
 * needed several chunks, they are replaced by one chunk of their total size (up
 * to VT_JARENA_KEEP), so a file of similar lines settles on one chunk.
 */
#include "vt_jarena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct vt_jarena_chunk {
    vt_jarena_chunk *next;
    size_t cap, used;          /* bytes of data[] */
    alignas(max_align_t) unsigned char data[];
};

#define VT_JARENA_MIN ((size_t)1 << 20)
#define VT_JARENA_ALIGN (alignof(max_align_t))

static _Thread_local vt_jarena *vt__active;
static pthread_once_t vt__once = PTHREAD_ONCE_INIT;

static vt_jarena_chunk *chunk_new(size_t cap, vt_jarena_chunk *next)
{
    if (cap > SIZE_MAX - sizeof(vt_jarena_chunk)) return NULL;
    vt_jarena_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = next;
    c->cap = cap;
    c->used = 0;
    return c;
}

static void *arena_alloc(vt_jarena *a, size_t n)
{
    if (n > SIZE_MAX - VT_JARENA_ALIGN) return NULL;
    n = (n + VT_JARENA_ALIGN - 1) & ~(VT_JARENA_ALIGN - 1);
    vt_jarena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? c->cap * 2 : VT_JARENA_MIN;
        if (cap < n) cap = n;
        if (!(c = chunk_new(cap, a->head))) return NULL;   /* jansson: out of memory */
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used_total += n;
    return p;
}

static void *hook_malloc(size_t n)
{
    vt_jarena *a = vt__active;
    return a ? arena_alloc(a, n) : malloc(n);
}

static void hook_free(void *p)
{
    if (!vt__active) free(p);   /* inside an arena: freed with the whole line */
}

static void install(void)
{
    json_set_alloc_funcs(hook_malloc, hook_free);
}

void vt_jarena_begin(vt_jarena *a)
{
    pthread_once(&vt__once, install);
    a->used_total = 0;
    vt__active = a;
}

void vt_jarena_end(vt_jarena *a)
{
    vt_jarena_suspend();
    vt_jarena_reset(a);
}

void vt_jarena_suspend(void)
{
    vt__active = NULL;
}

void vt_jarena_reset(vt_jarena *a)
{
    a->used_total = 0;
    vt_jarena_chunk *c = a->head;
    if (!c) return;
    if (!c->next) {   /* the usual case: the line fit in one chunk */
        c->used = 0;
        return;
    }
    size_t total = 0;
    for (vt_jarena_chunk *k = c; k; k = k->next) total += k->cap;
    vt_jarena_release(a);
    if (total <= VT_JARENA_KEEP) a->head = chunk_new(total, NULL);   /* NULL: next line starts small */
}

void vt_jarena_release(vt_jarena *a)
{
    vt_jarena_chunk *c = a->head;
    while (c) {
        vt_jarena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->used_total = 0;
}
