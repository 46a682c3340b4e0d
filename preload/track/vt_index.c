/* vt_index.c — open-addressing address -> record id index (see vt_index.h).
 *
 * Slot: (tag << 32) | (id + 1), tag = top 32 bits of vt_index_hash(addr); an entry's
 * home slot is tag & mask, so growing and deleting never need the address. Linear
 * probing; the array doubles when it would pass 3/4 full (at least 1,024 slots) and
 * never shrinks (a job that once had N live allocations keeps 8-16 bytes x N of
 * slots: the same as uthash's bucket array, which never shrinks either).
 */
#include "vt_index.h"
#include "vt_mem.h"

#include <string.h>

#define VT_INDEX_MIN_BITS 10

static void vt__index_put(uint64_t *slots, uint32_t mask, uint64_t e)
{
    uint32_t i = (uint32_t)(e >> 32) & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = e;
}

static int vt__index_grow(vt_index *x)
{
    uint32_t bits = x->slots ? x->bits + 1 : VT_INDEX_MIN_BITS;
    if (bits > 32)
        return -1;
    size_t cap = (size_t)1 << bits;
    uint64_t *s = vt_mem_calloc(cap * sizeof *s);
    if (!s)
        return -1;
    uint32_t mask = (uint32_t)(cap - 1);
    if (x->slots) {
        for (size_t i = 0; i <= x->mask; i++)
            if (x->slots[i])
                vt__index_put(s, mask, x->slots[i]);
        vt_mem_free(x->slots);
    }
    x->slots = s;
    x->mask = mask;
    x->bits = bits;
    return 0;
}

int vt_index_reserve(vt_index *x)
{
    if (!x->slots || (x->n + 1) * 4 > ((size_t)x->mask + 1) * 3)
        return vt__index_grow(x);
    return 0;
}

int vt_index_insert(vt_index *x, uint64_t addr, uint32_t id)
{
    if (vt_index_reserve(x) < 0)
        return -1;
    uint64_t tag = vt_index_hash(addr) >> 32;
    vt__index_put(x->slots, x->mask, (tag << 32) | ((uint64_t)id + 1));
    x->n++;
    return 0;
}

void vt_index_remove_slot(vt_index *x, uint32_t slot)
{
    uint32_t mask = x->mask, i = slot, j = slot;
    for (;;) {
        j = (j + 1) & mask;
        uint64_t e = x->slots[j];
        if (!e)
            break;
        uint32_t k = (uint32_t)(e >> 32) & mask;  /* home of the entry at j */
        /* it stays when its home lies cyclically in (i, j] */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        x->slots[i] = e;
        i = j;
    }
    x->slots[i] = 0;
    x->n--;
}

void vt_index_free(vt_index *x)
{
    vt_mem_free(x->slots);
    memset(x, 0, sizeof *x);
}

size_t vt_index_bytes(const vt_index *x)
{
    return x->slots ? ((size_t)x->mask + 1) * sizeof *x->slots : 0;
}
