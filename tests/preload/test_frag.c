/* test_frag.c — vt_fragmentation (preload/vt_core.c) sorts its ranges with a radix
 * sort; this checks it against a qsort reference on random and edge-case inputs:
 * small (qsort path) and large sets, aligned and unaligned starts, equal starts,
 * starts spanning the whole 64-bit range, overlapping ranges. Without LD_PRELOAD. */
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
    TEST_DONE();
}
