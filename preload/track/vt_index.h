/* vt_index.h — the live-allocation index: allocation address -> record id.
 *
 * Why not uthash here: uthash's handle is 56 bytes per item and its delete walks the
 * app-order list (two more cache lines per free). This index stores 8 bytes per slot — (32-bit hash tag << 32) | (record id + 1) —
 * in one open-addressing array (linear probing, load factor at most 3/4, deletion by
 * backward shift, so there are no tombstones and a probe never gets longer with
 * churn). Every other table of the core (sites, VMM handles, mappings, stacks) stays
 * in uthash.
 *
 * Keys are non-zero-or-zero uint64 addresses (any value is allowed); the index never
 * reads the address itself: the caller's `addr_of(id)` callback answers it, so one
 * cache line (the record) is touched only when the 32-bit tag matches.
 *
 * Ownership: the slot array is the index's own (vt_mem_alloc); vt_index_free releases
 * it. Thread safety: none — the core calls every function under its lock.
 * Errors: vt_index_insert returns -1 when the slot array cannot grow (out of memory;
 * the index is unchanged and still valid).
 */
#ifndef VT_INDEX_H
#define VT_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt_index {
    uint64_t *slots;   /* cap entries; 0 = empty                                  */
    uint32_t  mask;    /* cap - 1 (cap a power of two), 0 while slots == NULL     */
    uint32_t  bits;    /* log2(cap)                                               */
    size_t    n;       /* entries in use                                          */
} vt_index;

/* Reads the address of record `id` (the caller's records). */
typedef uint64_t (*vt_index_addr_fn)(uint32_t id);

/* 64-bit hash of an address (multiply-xorshift; CUDA addresses differ in their
 * middle bits, the multiplication carries them into the top 32 that are used). */
static inline uint64_t vt_index_hash(uint64_t addr)
{
    uint64_t h = (addr ^ (addr >> 31)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The id of the record at addr, or UINT32_MAX when addr is not in the index.
 * Inline: the hot path of every free. */
static inline uint32_t vt_index_find(const vt_index *x, uint64_t addr, vt_index_addr_fn addr_of,
                                     uint32_t *slot_out)
{
    if (!x->slots)
        return UINT32_MAX;
    uint32_t tag = (uint32_t)(vt_index_hash(addr) >> 32);
    for (uint32_t i = tag & x->mask;; i = (i + 1) & x->mask) {
        uint64_t e = x->slots[i];
        if (!e)
            return UINT32_MAX;
        if ((uint32_t)(e >> 32) == tag) {
            uint32_t id = (uint32_t)e - 1;
            if (addr_of(id) == addr) {
                if (slot_out)
                    *slot_out = i;
                return id;
            }
        }
    }
}

/* Adds addr -> id (addr must not be in the index). 0, or -1 out of memory. */
int  vt_index_insert(vt_index *x, uint64_t addr, uint32_t id);
/* Makes room for one more entry (grows at 3/4 full). 0, or -1 out of memory. */
int  vt_index_reserve(vt_index *x);

/* Maps addr -> id in ONE probe: returns 0 when addr was absent (added), 1 when it
 * was present (its slot now holds id; the previous id goes to *old), -1 out of
 * memory (unchanged). Inline: the hot path of every allocation. */
static inline int vt_index_upsert(vt_index *x, uint64_t addr, uint32_t id, vt_index_addr_fn addr_of,
                                  uint32_t *old)
{
    if (__builtin_expect(!x->slots || (x->n + 1) * 4 > ((size_t)x->mask + 1) * 3, 0))
        if (vt_index_reserve(x) < 0)
            return -1;
    uint64_t tag = vt_index_hash(addr) >> 32;
    for (uint32_t i = (uint32_t)tag & x->mask;; i = (i + 1) & x->mask) {
        uint64_t e = x->slots[i];
        if (!e) {
            x->slots[i] = (tag << 32) | ((uint64_t)id + 1);
            x->n++;
            return 0;
        }
        if ((e >> 32) == tag && addr_of((uint32_t)e - 1) == addr) {
            *old = (uint32_t)e - 1;
            x->slots[i] = (tag << 32) | ((uint64_t)id + 1);
            return 1;
        }
    }
}
/* Removes the entry found at slot (from vt_index_find's slot_out). */
void vt_index_remove_slot(vt_index *x, uint32_t slot);
/* Releases the slot array; the index is then empty. */
void vt_index_free(vt_index *x);
/* Bytes of the slot array (for the memory benchmarks). */
size_t vt_index_bytes(const vt_index *x);

#endif /* VT_INDEX_H */
