/* vt_frag.c — fragmentation of live address ranges, and the kept sorted range set
 * (see vt_frag.h for the contract; docs/metrics.md "fragmentation" for the metric).
 *
 * Sorting: an LSD radix sort over only the bits in which the starts differ (start -
 * min, shifted by the alignment every start shares), in as few passes of at most
 * 11-bit digits as those bits need, every pass's histogram counted in one read, and
 * a pass skipped when all starts share its digit.
 *
 * The kept set: between two periodic snapshots a program changes few of its live
 * ranges, so the set keeps each slot's ranges sorted instead of copying and sorting
 * the whole live list each time; the journal of what changed is sorted alone
 * (stable, so the last entry per start is the newest) and merged into it in one
 * sequential pass.
 */
#define _GNU_SOURCE
#include "vt_frag.h"

#include <stdlib.h>
#include <string.h>

enum { VT_RADIX_MAX_DIGIT = 11, VT_RADIX_MAX_PASSES = 6 };   /* 6 * 11 >= 64 bits */
#define VT_RADIX_HIST ((size_t)VT_RADIX_MAX_PASSES << VT_RADIX_MAX_DIGIT)
#define VT_FRAG_SMALL 64   /* below this many ranges: insertion sort */

size_t vt_frag_scratch_bytes(size_t n)
{
    return n * sizeof(uint64_t[2]) + VT_RADIX_HIST * sizeof(size_t);
}

static int vt__cmp_range(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* tmp holds n ranges, cnt VT_RADIX_HIST counts. Stable. Returns r or tmp. */
static uint64_t (*vt__radix_ranges(uint64_t (*r)[2], size_t n, uint64_t (*tmp)[2], size_t *cnt))[2]
{
    uint64_t lo = r[0][0], hi = r[0][0], diff = 0, first = r[0][0];
    for (size_t i = 1; i < n; i++) {
        uint64_t a = r[i][0];
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
        diff |= a ^ first;   /* lowest set bit = lowest bit in which starts differ */
    }
    if (!diff)
        return r;   /* every start equal */
    int shift = __builtin_ctzll(diff);
    int bits = 64 - __builtin_clzll((hi - lo) >> shift);
    int passes = (bits + VT_RADIX_MAX_DIGIT - 1) / VT_RADIX_MAX_DIGIT;
    int digit = (bits + passes - 1) / passes;
    size_t buckets = (size_t)1 << digit, mask = buckets - 1;
    memset(cnt, 0, (size_t)passes * buckets * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (r[i][0] - lo) >> shift;
        for (int p = 0; p < passes; p++, k >>= digit)
            cnt[(size_t)p * buckets + (k & mask)]++;
    }
    uint64_t (*src)[2] = r, (*dst)[2] = tmp;
    for (int p = 0; p < passes; p++) {
        size_t *c = cnt + (size_t)p * buckets;
        int sh = shift + p * digit;
        if (c[((src[0][0] - lo) >> sh) & mask] == n)
            continue;   /* one digit value: this pass would not move anything */
        size_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            size_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t a = src[i][0], z = src[i][1];
            size_t at = c[((a - lo) >> sh) & mask]++;
            dst[at][0] = a;
            dst[at][1] = z;
        }
        uint64_t (*t)[2] = src;
        src = dst;
        dst = t;
    }
    return src;
}

uint64_t (*vt_frag_sort(uint64_t (*r)[2], size_t n, void *scratch))[2]
{
    if (n < 2)
        return r;
    if (n < VT_FRAG_SMALL) {   /* insertion sort: stable */
        for (size_t i = 1; i < n; i++) {
            uint64_t a = r[i][0], z = r[i][1];
            size_t k = i;
            for (; k > 0 && r[k - 1][0] > a; k--) {
                r[k][0] = r[k - 1][0];
                r[k][1] = r[k - 1][1];
            }
            r[k][0] = a;
            r[k][1] = z;
        }
        return r;
    }
    if (scratch) {
        uint64_t (*tmp)[2] = scratch;
        return vt__radix_ranges(r, n, tmp, (size_t *)(tmp + n));
    }
    qsort(r, n, sizeof r[0], vt__cmp_range);
    return r;
}

/* Without branches on the data (conditional moves): whether a range leaves a gap
 * before it is as good as random, and mispredictions were 0.6 ms of 200,000 ranges. */
double vt_frag_sorted(const uint64_t (*r)[2], size_t n)
{
    if (n < 2)
        return 0.0;
    uint64_t total = 0, largest = 0, end = r[0][0] + (r[0][1] & VT_FRAG_SIZE_MASK);
    for (size_t i = 1; i < n; i++) {
        uint64_t a = r[i][0], e = a + (r[i][1] & VT_FRAG_SIZE_MASK);
        uint64_t gap = a > end ? a - end : 0;
        total += gap;
        largest = gap > largest ? gap : largest;
        end = e > end ? e : end;
    }
    return total ? 1.0 - (double)largest / (double)total : 0.0;
}

double vt_fragmentation(uint64_t (*ranges)[2], size_t n)
{
    if (n < 2)
        return 0.0;
    void *scratch = n >= VT_FRAG_SMALL ? malloc(vt_frag_scratch_bytes(n)) : NULL;
    uint64_t (*sorted)[2] = vt_frag_sort(ranges, n, scratch);
    if (sorted != ranges)
        memcpy(ranges, sorted, n * sizeof ranges[0]);
    free(scratch);
    return vt_frag_sorted((const uint64_t (*)[2])ranges, n);
}

/* ---- the kept set ---- */

/* Makes *p hold at least n ranges (contents kept). 0 or -1. */
static int vt__grow(uint64_t (**p)[2], size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    size_t c = n + n / 4 + 64;
    uint64_t (*q)[2] = realloc(*p, c * sizeof *q);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

int vt_frag_set_load(vt_frag_set *s, int slot, const uint64_t (*sorted)[2], size_t n)
{
    if (vt__grow(&s->dev[slot].r, &s->dev[slot].cap, n) < 0) {
        s->valid = 0;
        return -1;
    }
    if (n)
        memcpy(s->dev[slot].r, sorted, n * sizeof sorted[0]);
    s->dev[slot].n = n;
    return 0;
}

void vt_frag_set_reset(vt_frag_set *s)
{
    for (int i = 0; i < VT_DEV_SLOTS; i++)
        s->dev[i].n = 0;
    s->valid = 0;
}

/* Merges m journal entries of one slot, sorted by start (stably: of equal starts
 * the later is the newer), into the slot's ranges, in place: the newest entry per
 * (start, tag) is kept (compacted to the front of jr: at most one per tag for each
 * start, side by side), then the two are merged from the back into the slot's array
 * grown by the ranges that come (the write position never passes the unread ranges:
 * it leads them by the ranges still to come plus those removed so far), and what
 * removals left open is closed with one move. */
static int vt__merge(vt_frag_set *s, int slot, uint64_t (*jr)[2], size_t m)
{
    size_t u = 0, adds = 0;
    for (size_t k = 0; k < m;) {
        size_t end = k, last[2] = { SIZE_MAX, SIZE_MAX };
        for (; end < m && jr[end][0] == jr[k][0]; end++)
            last[(jr[end][1] & VT_FRAG_VMM) != 0] = end;
        uint64_t keep[2][2];   /* read both before writing: jr[u] may be one of them */
        int nk = 0;
        for (int t = 0; t < 2; t++)
            if (last[t] != SIZE_MAX) {
                keep[nk][0] = jr[last[t]][0];
                keep[nk][1] = jr[last[t]][1];
                nk++;
            }
        for (int e = 0; e < nk; e++) {
            jr[u][0] = keep[e][0];
            jr[u][1] = keep[e][1];
            adds += !(keep[e][1] & VT_FRAG_GONE);
            u++;
        }
        k = end;
    }
    size_t n = s->dev[slot].n;
    if (vt__grow(&s->dev[slot].r, &s->dev[slot].cap, n + adds) < 0)
        return -1;
    uint64_t (*r)[2] = s->dev[slot].r;
    size_t i = n, w = n + adds;   /* r[0..i) unread; r[w..n+adds) written */
    for (size_t k = u; k > 0;) {
        uint64_t a = jr[k - 1][0];
        size_t g = k;             /* jr[g..k): this start's entries (one per tag) */
        unsigned tags = 0;
        while (g > 0 && jr[g - 1][0] == a) {
            g--;
            tags |= 1u << ((jr[g][1] & VT_FRAG_VMM) != 0);
        }
        while (i > 0 && r[i - 1][0] > a) {
            w--;
            i--;
            r[w][0] = r[i][0];
            r[w][1] = r[i][1];
        }
        while (i > 0 && r[i - 1][0] == a) {
            i--;                  /* replaced (or removed) by the journal, or kept */
            if (!(tags & (1u << ((r[i][1] & VT_FRAG_VMM) != 0)))) {
                w--;
                r[w][0] = r[i][0];
                r[w][1] = r[i][1];
            }
        }
        for (size_t e = g; e < k; e++)
            if (!(jr[e][1] & VT_FRAG_GONE)) {
                w--;
                r[w][0] = a;
                r[w][1] = jr[e][1] & (VT_FRAG_SIZE_MASK | VT_FRAG_VMM);
            }
        k = g;
    }
    /* r[0..i) stay; r[w..n+adds) follow them */
    if (w > i && n + adds > w)
        memmove(r + i, r + w, (n + adds - w) * sizeof r[0]);
    s->dev[slot].n = i + (n + adds - w);
    return 0;
}

int vt_frag_set_apply(vt_frag_set *s, uint64_t (*j)[2], size_t n)
{
    if (!n)
        return 0;
    size_t cnt[VT_DEV_SLOTS] = { 0 };
    uint64_t first = (j[0][1] >> 56) & 0x7f, mixed = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t sl = (j[i][1] >> 56) & 0x7f;
        if (sl >= VT_DEV_SLOTS) {
            s->valid = 0;
            return -1;
        }
        cnt[sl]++;
        mixed |= sl ^ first;
    }
    size_t need = (mixed ? n * sizeof j[0] : 0) + vt_frag_scratch_bytes(n);
    if (need > s->scratch_bytes) {
        void *p = realloc(s->scratch, need);
        if (!p) {
            s->valid = 0;
            return -1;
        }
        s->scratch = p;
        s->scratch_bytes = need;
    }
    uint64_t (*grp)[2] = j;
    char *sort_scratch = s->scratch;
    if (mixed) {   /* stable counting distribution by slot: the order within a slot stays */
        grp = s->scratch;
        sort_scratch += n * sizeof j[0];
        size_t at[VT_DEV_SLOTS], off = 0;
        for (int sl = 0; sl < VT_DEV_SLOTS; sl++) {
            at[sl] = off;
            off += cnt[sl];
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = at[(j[i][1] >> 56) & 0x7f]++;
            grp[k][0] = j[i][0];
            grp[k][1] = j[i][1];
        }
    }
    size_t off = 0;
    for (int sl = 0; sl < VT_DEV_SLOTS; sl++) {
        if (!cnt[sl])
            continue;
        uint64_t (*sorted)[2] = vt_frag_sort(grp + off, cnt[sl], sort_scratch);
        if (vt__merge(s, sl, sorted, cnt[sl]) < 0) {
            s->valid = 0;
            return -1;
        }
        off += cnt[sl];
    }
    return 0;
}

double vt_frag_set_value(const vt_frag_set *s, int slot)
{
    return vt_frag_sorted((const uint64_t (*)[2])s->dev[slot].r, s->dev[slot].n);
}

void vt_frag_set_free(vt_frag_set *s)
{
    for (int i = 0; i < VT_DEV_SLOTS; i++)
        free(s->dev[i].r);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}
