/*
 * sim_arena.h - first-fit placement of extents inside one address range.
 *
 * Design: the arena knows only offsets; it keeps a sorted array of free ranges
 * and places each request at the lowest offset where an aligned start fits
 * ("first fit"), splitting the free range it used. Frees coalesce with their
 * neighbours. This is what makes fragmentation real in the simulated device:
 * after alternating frees, an allocation can fail although the sum of free
 * ranges exceeds it. It models the placement of cuMemAlloc on a real GPU only
 * roughly (see docs/simcuda.md).
 *
 * Not thread-safe: the caller (driver) holds its lock.
 */
#ifndef SIMCUDA_SIM_ARENA_H
#define SIMCUDA_SIM_ARENA_H

#include <stddef.h>

typedef struct sim_range {
    size_t off;   /* bytes from the arena start */
    size_t len;   /* bytes */
} sim_range;

typedef struct sim_arena {
    size_t     size;   /* bytes managed */
    size_t     used;   /* bytes handed out (sum of live extents) */
    sim_range *free;   /* sorted by off, non-adjacent, owned */
    size_t     nfree;
    size_t     cap;
} sim_arena;

/* Make an arena of `size` bytes, all free. Returns 0, or -1 on malloc failure. */
int sim_arena_init(sim_arena *a, size_t size);
/* Release the bookkeeping (not the memory the offsets refer to). */
void sim_arena_destroy(sim_arena *a);
/* Place `size` bytes (must be > 0) at an offset that is a multiple of `align`
 * (a power of two). Returns 0 and sets *off, or -1 when no free range fits
 * (out of memory or fragmented), or -2 when bookkeeping memory ran out. */
int sim_arena_alloc(sim_arena *a, size_t size, size_t align, size_t *off);
/* Return an extent given out by sim_arena_alloc (same off and size). */
void sim_arena_free(sim_arena *a, size_t off, size_t size);
/* Largest single free range, bytes. */
size_t sim_arena_largest(const sim_arena *a);

#endif
