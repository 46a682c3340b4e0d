/*
 * sim_arena.c - first-fit extent placement with coalescing (see sim_arena.h).
 */
#include "sim_arena.h"

#include <stdlib.h>
#include <string.h>

static int reserve(sim_arena *a, size_t n)
{
    if (n <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap * 2 : 16;
    while (cap < n)
        cap *= 2;
    sim_range *r = realloc(a->free, cap * sizeof *r);
    if (!r)
        return -1;
    a->free = r;
    a->cap = cap;
    return 0;
}

int sim_arena_init(sim_arena *a, size_t size)
{
    memset(a, 0, sizeof *a);
    a->size = size;
    if (reserve(a, 16))
        return -1;
    a->free[0].off = 0;
    a->free[0].len = size;
    a->nfree = size ? 1 : 0;
    return 0;
}

void sim_arena_destroy(sim_arena *a)
{
    free(a->free);
    memset(a, 0, sizeof *a);
}

int sim_arena_alloc(sim_arena *a, size_t size, size_t align, size_t *off)
{
    if (size == 0 || align == 0)
        return -1;
    for (size_t i = 0; i < a->nfree; i++) {
        sim_range *r = &a->free[i];
        size_t start = (r->off + align - 1) & ~(align - 1);
        if (start < r->off || start - r->off > r->len || r->len - (start - r->off) < size)
            continue;
        size_t head = start - r->off;
        size_t tail = r->len - head - size;
        if (head && tail) {
            if (reserve(a, a->nfree + 1))
                return -2;
            r = &a->free[i];
            memmove(&a->free[i + 2], &a->free[i + 1], (a->nfree - i - 1) * sizeof *r);
            a->nfree++;
            a->free[i].len = head;
            a->free[i + 1].off = start + size;
            a->free[i + 1].len = tail;
        } else if (head) {
            r->len = head;
        } else if (tail) {
            r->off = start + size;
            r->len = tail;
        } else {
            memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *r);
            a->nfree--;
        }
        a->used += size;
        *off = start;
        return 0;
    }
    return -1;
}

void sim_arena_free(sim_arena *a, size_t off, size_t size)
{
    /* find insertion point: first range with off > given off */
    size_t lo = 0, hi = a->nfree;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo;
    int merge_prev = i > 0 && a->free[i - 1].off + a->free[i - 1].len == off;
    int merge_next = i < a->nfree && off + size == a->free[i].off;
    a->used -= size;
    if (merge_prev && merge_next) {
        a->free[i - 1].len += size + a->free[i].len;
        memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof a->free[0]);
        a->nfree--;
    } else if (merge_prev) {
        a->free[i - 1].len += size;
    } else if (merge_next) {
        a->free[i].off = off;
        a->free[i].len += size;
    } else {
        if (reserve(a, a->nfree + 1))
            return; /* bookkeeping OOM: the extent is leaked, never reused */
        memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof a->free[0]);
        a->free[i].off = off;
        a->free[i].len = size;
        a->nfree++;
    }
}

size_t sim_arena_largest(const sim_arena *a)
{
    size_t best = 0;
    for (size_t i = 0; i < a->nfree; i++)
        if (a->free[i].len > best)
            best = a->free[i].len;
    return best;
}
