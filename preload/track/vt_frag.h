/* vt_frag.h — fragmentation of a device's live address ranges (docs/metrics.md
 * "fragmentation": 1 - largest gap / sum of gaps between consecutive live ranges,
 * sorted by start), and the sorted range set a collector keeps from one periodic
 * snapshot to the next so that it does not sort every live allocation again.
 *
 * Ranges are uint64_t[2] pairs: [0] the start address, [1] the size in bytes (below
 * 2^55; larger sizes are counted as 2^55 - 1), with bit 55 set for a VMM mapping.
 * The bit is a tag, not size: a VMM mapping and an ordinary allocation are separate
 * keys even at the same start (the core can hold both: a record whose free was not
 * seen, at an address the driver handed to a mapping).
 *
 * The kept set (vt_frag_set): one sorted array of ranges per device slot (vt_collect.h
 * VT_DEV_SLOTS), loaded once from a full copy of the live list, then brought up to
 * date from the core's change journal: the allocations and frees the core applied
 * since the journal was last taken, in the order it applied them (vt__fj_note in
 * vt_core_internal.h). A journal entry is a range whose [1] packs the size and
 * VMM tag (bits 0..55), the device slot (bits 56..62) and whether the range went away
 * (bit 63): vt_frag_meta. For every (slot, start, tag) the journal names, its LAST
 * entry is the range's state: present with that size, or absent; the set's ranges
 * with that start and tag (several, if the full copy that loaded it saw an address
 * freed and handed out again while it ran) are replaced by it. Every other range is
 * unchanged.
 *
 * Memory: the set owns its arrays (malloc); a failed allocation returns -1 and
 * leaves the set invalid (valid = 0; its next load starts over). Thread safety:
 * none; the core's collector serialises its use (one collector at a time holds it).
 */
#ifndef VT_FRAG_H
#define VT_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "vt_collect.h"   /* VT_DEV_SLOTS */

#define VT_FRAG_SIZE_MASK ((1ull << 55) - 1)   /* the size bits of [1]           */
#define VT_FRAG_VMM       (1ull << 55)          /* [1]: a VMM mapping (a tag)     */
#define VT_FRAG_GONE      (1ull << 63)          /* journal entry: the range went  */

/* A range's [1]: size (saturated at VT_FRAG_SIZE_MASK) and the VMM tag. */
static inline uint64_t vt_frag_size_tag(uint64_t size, int vmm)
{
    return (size > VT_FRAG_SIZE_MASK ? VT_FRAG_SIZE_MASK : size) | (vmm ? VT_FRAG_VMM : 0);
}

/* The packed [1] of a journal entry (0 <= slot < 128). */
static inline uint64_t vt_frag_meta(uint64_t size, int vmm, int slot, int gone)
{
    return vt_frag_size_tag(size, vmm) | (uint64_t)slot << 56 | (gone ? VT_FRAG_GONE : 0);
}

/* Scratch that vt_frag_sort needs for n ranges (bytes): n ranges, then counts. */
size_t vt_frag_scratch_bytes(size_t n);

/* Sorts n ranges by start, stably (equal starts keep their order): an LSD radix sort
 * over the bits in which the starts differ when scratch (vt_frag_scratch_bytes(n),
 * suitably aligned, e.g. from malloc) is given and n >= 64, else an insertion sort
 * (small n) or qsort (no scratch; not stable). Returns where the sorted ranges are:
 * r or the scratch (no copy back). */
uint64_t (*vt_frag_sort(uint64_t (*r)[2], size_t n, void *scratch))[2];

/* Fragmentation of n ranges already sorted by start: 0.0 .. 1.0, 0.0 with no gap
 * (fewer than two ranges, or touching/overlapping ranges only). Sizes are [1]'s
 * size bits (VT_FRAG_SIZE_MASK). */
double vt_frag_sorted(const uint64_t (*r)[2], size_t n);

typedef struct vt_frag_set {
    struct {
        uint64_t (*r)[2];   /* sorted by start; duplicates of a start possible */
        size_t n, cap;
    } dev[VT_DEV_SLOTS];
    void  *scratch;         /* vt_frag_sort's and the journal grouping's        */
    size_t scratch_bytes;
    int    valid;           /* the arrays are the live ranges as of the last
                               load or apply                                    */
} vt_frag_set;

/* Replaces slot's ranges with a copy of n ranges sorted by start. 0, or -1 (no
 * memory: s->valid = 0). Does not set s->valid; the caller does once every slot is
 * loaded. */
int vt_frag_set_load(vt_frag_set *s, int slot, const uint64_t (*sorted)[2], size_t n);

/* Empties every slot (keeps the memory); s->valid = 0. */
void vt_frag_set_reset(vt_frag_set *s);

/* Brings s up to date with n journal entries j (in the order they happened; sorted
 * in place by this call). 0, or -1 (no memory, or an entry with a slot out of range:
 * s->valid = 0). */
int vt_frag_set_apply(vt_frag_set *s, uint64_t (*j)[2], size_t n);

/* Fragmentation of slot's ranges (as vt_frag_sorted). */
double vt_frag_set_value(const vt_frag_set *s, int slot);

/* Frees everything s owns; s is left empty and invalid. */
void vt_frag_set_free(vt_frag_set *s);

#endif /* VT_FRAG_H */
