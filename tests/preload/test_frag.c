/* test_frag.c — vt_fragmentation (preload/vt_core.c) sorts its ranges with a radix
 * sort; this checks it against a qsort reference on random and edge-case inputs:
 * small (qsort path) and large sets, aligned and unaligned starts, equal starts,
 * starts spanning the whole 64-bit range, overlapping ranges. Then the same through
 * vt_core_collect (issue 7 figure 5, third pass): a periodic collection copies only
 * (start, size, device) of each live allocation and groups them by device; its
 * per-device fragmentation must equal vt_fragmentation of that device's rows of a
 * full live list (pinned host memory and address 0 left out), for several devices,
 * more records than one lock hold copies, and holes left by frees. Without
 * LD_PRELOAD. */
#include "vt_core.h"
#include "vt_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t xr(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static int cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The definition (docs/metrics.md): 1 - largest gap / sum of gaps, sorted by start. */
static double reference(uint64_t (*r)[2], size_t n)
{
    if (n < 2)
        return 0.0;
    qsort(r, n, sizeof r[0], cmp);
    uint64_t total = 0, largest = 0, end = r[0][0] + r[0][1];
    for (size_t i = 1; i < n; i++) {
        if (r[i][0] > end) {
            uint64_t g = r[i][0] - end;
            total += g;
            if (g > largest) largest = g;
        }
        if (r[i][0] + r[i][1] > end) end = r[i][0] + r[i][1];
    }
    return total ? 1.0 - (double)largest / (double)total : 0.0;
}

static void one(size_t n, uint64_t base, uint64_t span, uint64_t align, uint64_t maxsize)
{
    uint64_t (*a)[2] = malloc((n + 1) * sizeof *a), (*b)[2] = malloc((n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        a[i][0] = base + (span ? (xr() % span) / align * align : 0);
        a[i][1] = 1 + xr() % maxsize;
    }
    memcpy(b, a, n * sizeof *a);
    double got = vt_fragmentation(a, n), want = reference(b, n);
    if (fabs(got - want) > 1e-12) {
        fprintf(stderr, "n=%zu span=%llu align=%llu: %.15f != %.15f\n", n, (unsigned long long)span,
                (unsigned long long)align, got, want);
        vt_test_failures++;
    }
    for (size_t i = 1; i < n; i++)   /* sorted in place, as documented */
        if (a[i - 1][0] > a[i][0]) { CHECK(a[i - 1][0] <= a[i][0]); break; }
    free(a);
    free(b);
}

/* per device: vt_fragmentation of the full live list's rows, as vt_core_collect
 * defined it before the third pass (a copy of every row, then a filter per device) */
static double from_rows(const vt_collect *c, int device)
{
    uint64_t (*r)[2] = malloc((c->n_allocs + 1) * sizeof *r);
    size_t n = 0;
    for (size_t j = 0; j < c->n_allocs; j++) {
        const vt_alloc_row *a = &c->allocs[j];
        if (a->device != device || a->kind == VT_KIND_HOST_PINNED || !a->addr)
            continue;
        r[n][0] = a->addr;
        r[n][1] = a->size;
        n++;
    }
    double f = reference(r, n);
    free(r);
    return f;
}

static void through_collect(void)
{
    CHECK_EQ_INT(vt_core_init(), 0);
    /* devices 0, 1, 3 and unknown (-1), every kind; 150,000 live after the frees */
    const int devs[4] = { 0, 1, 3, -1 };
    size_t n = 200000, live = 0;
    uint64_t *addr = malloc(n * sizeof *addr);
    for (size_t i = 0; i < n; i++) {
        int d = devs[xr() % 4], kind = (int)(xr() % VT_KIND_COUNT);
        if (kind == VT_KIND_VMM)
            kind = VT_KIND_DEVICE;   /* VMM goes through vt_core_vmm_* below */
        /* distinct, scattered (an odd multiplier permutes i mod 2^32), some unaligned */
        addr[i] = ((uint64_t)(d + 2) << 40) + (uint64_t)(uint32_t)(i * 2654435761u) * 256 + (i % 3 == 0 ? i % 256 : 0);
        vt_alloc_info a = { addr[i], 1 + xr() % 100000, kind == VT_KIND_ASYNC ? 7 : 0, 0x1234, d, kind,
                            1 + (uint32_t)(xr() % 50) };
        if (vt_core_alloc(&a) == 0)
            live++;
        else
            addr[i] = 0;
    }
    for (size_t i = 0; i < n; i += 4) {   /* holes in every slab */
        vt_taken t;
        if (addr[i] && vt_core_take(addr[i], 0, &t)) {
            vt_core_commit(&t);
            live--;
        }
    }
    /* a mapped and an unmapped VMM allocation on device 1 */
    CHECK_EQ_INT(vt_core_vmm_create(0xabc, 1 << 21, 1, 9), 0);
    vt_core_vmm_map((3ull << 40) + (1ull << 31), 1 << 21, 0xabc);
    CHECK_EQ_INT(vt_core_vmm_create(0xabd, 1 << 21, 1, 9), 0);

    vt_collect full, per;
    CHECK_EQ_INT(vt_core_collect(&full, VT_COLLECT_ALLOCS | VT_COLLECT_FRAG, 10), 0);
    CHECK_EQ_INT(vt_core_collect(&per, VT_COLLECT_FRAG, 10), 0);
    CHECK_EQ_U64(full.n_allocs, live + 2);
    CHECK(full.lock_holds >= 4);  /* sites, 2+ holds of rows (0.25 ms each), VMM */
    CHECK(!per.allocs && !per.rows_failed && !full.rows_failed);
    CHECK_EQ_INT(per.n_devs, 4);
    CHECK_EQ_INT(full.n_devs, per.n_devs);
    for (int i = 0; i < per.n_devs && i < full.n_devs; i++) {
        double want = from_rows(&full, full.devs[i].device);
        CHECK_EQ_INT(per.devs[i].device, full.devs[i].device);
        CHECK(want > 0.0 && want < 1.0);
        if (fabs(per.devs[i].fragmentation - want) > 1e-12 || fabs(full.devs[i].fragmentation - want) > 1e-12) {
            fprintf(stderr, "device %d: periodic %.15f, full list %.15f, rows %.15f\n", full.devs[i].device,
                    per.devs[i].fragmentation, full.devs[i].fragmentation, want);
            vt_test_failures++;
        }
    }
    vt_collect_free(&full);
    vt_collect_free(&per);
    free(addr);
}

int main(void)
{
    size_t sizes[] = { 0, 1, 2, 3, 63, 64, 65, 1000, 200000 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        one(n, 0x7f0000000000ull, 80ull << 30, 512, 1 << 22);   /* GPU-like */
        one(n, 0x1000, 1 << 20, 1, 4096);                        /* unaligned, dense */
        one(n, 0x5000, 0, 1, 100);                               /* every start equal */
        one(n, 0, UINT64_MAX / 2, 1, 1ull << 40);                /* wide span */
        one(n, 0x200000, 64, 1, 1 << 16);                        /* heavy overlap */
    }
    through_collect();
    TEST_DONE();
}
