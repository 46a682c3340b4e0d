/* test_frag.c — vt_fragmentation (preload/track/vt_collect.h, vt_frag.c) sorts its ranges with a radix
 * sort; this checks it against a qsort reference on random and edge-case inputs:
 * small (qsort path) and large sets, aligned and unaligned starts, equal starts,
 * starts spanning the whole 64-bit range, overlapping ranges. Then the same through
 * vt_core_collect (issue 7 figure 5, third pass): a periodic collection copies only
 * (start, size, device) of each live allocation and groups them by device; its
 * per-device fragmentation must equal vt_fragmentation of that device's rows of a
 * full live list (pinned host memory and address 0 left out), for several devices,
 * more records than one lock hold copies, and holes left by frees. Then the kept set
 * (vt_frag.h, figure 5 seventh pass): rounds of random allocations and frees through
 * every path that changes the live list (synchronous and ring events, an address
 * handed out again without a free, failed frees put back, context teardown, VMM
 * create / map / unmap / release / failed release, pinned host memory) on several
 * devices, where each periodic collection after the first must come from the
 * journal and equal the full live list's value; a journal that overflows and a
 * collection without fragmentation must fall back to a full copy, and the journal
 * must take over again after it. Last, threads: two post allocations and frees while
 * one keeps the set (vt_core_frag_keep, as the writer thread) and one collects; once
 * they stop, the set must still equal the live list. Without LD_PRELOAD. */
#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_frag.h"
#include "vt_test.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        if (a->device != device || a->kind == VT_KIND_HOST_PINNED || !vt_kind_in_totals(a->kind) ||
            a->kind == VT_KIND_ARRAY || !a->addr)
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
    CHECK_EQ_INT(vt_core_vmm_create(0xabc, 1 << 21, 1, 9, 0), 0);
    vt_core_vmm_map((3ull << 40) + (1ull << 31), 1 << 21, 0xabc);
    CHECK_EQ_INT(vt_core_vmm_create(0xabd, 1 << 21, 1, 9, 0), 0);

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

/* vt_frag_set_apply alone against its definition: for every start the journal
 * names, the newest entry decides (present with its size, or absent), whatever the
 * set held at that start (duplicates included); every other range stays, in order.
 * Random sets and journals over few starts (collisions), several slots, journals
 * larger and smaller than the set, apply after apply. */
static int set_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void set_apply_direct(void)
{
    enum { SLOTS = 3, STARTS = 300, DUPS = 2 };
    vt_frag_set set;
    memset(&set, 0, sizeof set);
    /* the model: per slot, start and tag (ordinary / VMM), a small multiset of sizes
     * (0 = none) */
    static uint64_t model[SLOTS][STARTS][2][DUPS];
    memset(model, 0, sizeof model);
    for (int round = 0; round < 400; round++) {
        if (round % 50 == 0) {   /* load from scratch, with duplicate starts */
            vt_frag_set_reset(&set);
            for (int sl = 0; sl < SLOTS; sl++) {
                uint64_t r[STARTS * 2 * DUPS][2];
                size_t n = 0;
                for (int a = 0; a < STARTS; a++)
                    for (int t = 0; t < 2; t++)
                        for (int d = 0; d < DUPS; d++) {
                            model[sl][a][t][d] = (xr() % 4 == 0 && (d == 0 || xr() % 4 == 0)) ? 1 + xr() % 5000 : 0;
                            if (model[sl][a][t][d]) {
                                r[n][0] = 0x10000 + (uint64_t)a * 4096;
                                r[n][1] = vt_frag_size_tag(model[sl][a][t][d], t);
                                n++;
                            }
                        }
                CHECK_EQ_INT(vt_frag_set_load(&set, sl, (const uint64_t (*)[2])vt_frag_sort(r, n, NULL), n), 0);
            }
            set.valid = 1;
        }
        size_t m = xr() % (round % 7 == 0 ? 2000 : 60);
        uint64_t (*j)[2] = malloc((m + 1) * sizeof *j);
        for (size_t k = 0; k < m; k++) {
            int sl = (int)(xr() % SLOTS), a = (int)(xr() % STARTS), t = (int)(xr() % 2), gone = (int)(xr() % 2);
            uint64_t size = 1 + xr() % 5000;
            j[k][0] = 0x10000 + (uint64_t)a * 4096;
            j[k][1] = vt_frag_meta(size, t, sl, gone);
            model[sl][a][t][0] = gone ? 0 : size;
            model[sl][a][t][1] = 0;
        }
        CHECK_EQ_INT(vt_frag_set_apply(&set, j, m), 0);
        free(j);
        for (int sl = 0; sl < SLOTS; sl++) {
            uint64_t want[STARTS * 2 * DUPS][2];
            size_t n = 0;
            for (int a = 0; a < STARTS; a++)
                for (int t = 0; t < 2; t++)
                    for (int d = 0; d < DUPS; d++)
                        if (model[sl][a][t][d]) {
                            want[n][0] = 0x10000 + (uint64_t)a * 4096;
                            want[n][1] = vt_frag_size_tag(model[sl][a][t][d], t);
                            n++;
                        }
            CHECK_EQ_U64(set.dev[sl].n, n);
            if (set.dev[sl].n != n)
                continue;
            for (size_t i = 1; i < n; i++)
                if (set.dev[sl].r[i - 1][0] > set.dev[sl].r[i][0]) {
                    CHECK(!"set not sorted by start");
                    break;
                }
            /* same multiset (the order of equal starts is not part of the contract) */
            uint64_t (*got)[2] = malloc((n + 1) * sizeof *got);
            memcpy(got, set.dev[sl].r, n * sizeof *got);
            qsort(got, n, sizeof *got, set_cmp);
            qsort(want, n, sizeof *want, set_cmp);
            if (n && memcmp(got, want, n * sizeof *got)) {
                fprintf(stderr, "round %d slot %d: ranges differ\n", round, sl);
                vt_test_failures++;
            }
            free(got);
        }
    }
    uint64_t bad[1][2] = { { 0x1000, vt_frag_meta(10, 0, 100, 0) } };   /* slot out of range */
    CHECK_EQ_INT(vt_frag_set_apply(&set, bad, 1), -1);
    CHECK_EQ_INT(set.valid, 0);
    vt_frag_set_free(&set);
}

/* one random change to the live list; addresses collide on purpose (4,096 slots a
 * device) so that addresses are handed out again, with and without a free */
static uint64_t jr_addr(int d) { return ((uint64_t)(d + 2) << 36) + (xr() % 4096) * 4096; }

static void journal_op(uint64_t *handles, int *n_handles)
{
    const int devs[3] = { 0, 2, -1 };
    int d = devs[xr() % 3];
    int kinds[4] = { VT_KIND_DEVICE, VT_KIND_MANAGED, VT_KIND_HOST_PINNED, VT_KIND_ASYNC };
    int kind = kinds[xr() % 4];
    uint64_t size = 1 + xr() % 20000;   /* up to ~5 slots: overlaps too */
    uint32_t stack = 1 + (uint32_t)(xr() % 20);
    vt_taken t;
    switch (xr() % 12) {
    case 0: case 1: case 2: {
        vt_alloc_info a = { jr_addr(d), size, kind == VT_KIND_ASYNC ? 7 : 0, 0x99, d, kind, stack };
        vt_core_alloc(&a);
        break;
    }
    case 3: case 4: case 5:
        vt_core_post_alloc_at(jr_addr(d), size, 0x99, d, kind, stack);
        break;
    case 6: {   /* synchronous free, failed one time in four (put back) */
        if (vt_core_take(jr_addr(d), 0, &t)) {
            if (xr() % 4) {
                vt_core_commit(&t);
            } else {
                t.alive = 1;
                vt_core_restore(&t);
            }
        }
        break;
    }
    case 7: case 8: {   /* ring free, failed one time in four */
        memset(&t, 0, sizeof t);
        uint64_t ticket = vt_core_post_free(jr_addr(d), &t);
        if (ticket == VT_TICKET_SYNC) {
            vt_core_commit(&t);
        } else if (xr() % 4) {
            vt_core_free_done(ticket);
        } else {
            t.ticket = ticket;
            t.alive = 1;
            vt_core_restore(&t);
        }
        break;
    }
    case 9:   /* context teardown, rarely: drops the device's ordinary records */
        if (xr() % 40 == 0)
            vt_core_drop_context(d, 0, vt_core_next_seq());
        break;
    case 10: {   /* VMM: create and map, or unmap (one mapping or several side by side),
                  * or release (failed one time in three); half of the mappings where
                  * the ordinary allocations are (a record and a mapping at one start:
                  * separate keys), and mapped again without an unmap at times */
        uint64_t h = 0x5000 + xr() % 64;
        uint64_t va = ((uint64_t)(d + 2) << 36) + (h & 1 ? 1ull << 34 : 0) + (h - 0x5000) / 2 * (1 << 22);
        switch (xr() % 5) {
        case 0:
            vt_core_vmm_create(h, 1 << 21, d, stack, 0);
            if (*n_handles < 64) handles[(*n_handles)++] = h;
            break;
        case 1: vt_core_vmm_map(va, 1 << 21, h); break;
        case 2: vt_core_vmm_unmap(va, 1 << 21); break;
        case 3: vt_core_vmm_unmap(va, (1 + xr() % 4) << 22); break;
        default:
            if (vt_core_vmm_release(h, &t)) {
                if (xr() % 3)
                    vt_core_vmm_commit(&t);
                else
                    vt_core_vmm_restore(&t);
            }
        }
        break;
    }
    default:   /* an address handed out again without its free being seen */
        break;
    }
}

/* the periodic collection's per-device values against the full live list's rows */
static void journal_compare(const char *what, int round, int want_journal)
{
    vt_collect per, full;
    CHECK_EQ_INT(vt_core_collect(&per, VT_COLLECT_FRAG, 10), 0);
    CHECK_EQ_INT(vt_core_collect(&full, VT_COLLECT_ALLOCS | VT_COLLECT_FRAG, 10), 0);
    if (want_journal >= 0 && per.frag_from_journal != want_journal) {
        fprintf(stderr, "%s round %d: frag_from_journal %d, wanted %d\n", what, round,
                per.frag_from_journal, want_journal);
        vt_test_failures++;
    }
    CHECK_EQ_INT(per.n_devs, full.n_devs);
    for (int i = 0; i < per.n_devs && i < full.n_devs; i++) {
        double want = from_rows(&full, full.devs[i].device);
        if (fabs(per.devs[i].fragmentation - want) > 1e-12) {
            fprintf(stderr, "%s round %d device %d: periodic %.15f (journal %d), rows %.15f\n", what,
                    round, full.devs[i].device, per.devs[i].fragmentation, per.frag_from_journal, want);
            vt_test_failures++;
        }
    }
    vt_collect_free(&per);
    vt_collect_free(&full);
}

static void through_journal(void)
{
    uint64_t handles[64];
    int n_handles = 0;
    journal_compare("first", 0, -1);   /* through_collect may have left a kept set */
    int from_journal = 0;
    for (int round = 1; round <= 60; round++) {
        int ops = 1 + (int)(xr() % 3000);
        for (int k = 0; k < ops; k++)
            journal_op(handles, &n_handles);
        journal_compare("random", round, 1);
        from_journal++;
    }
    CHECK_EQ_INT(from_journal, 60);
    /* more changes than the journal holds (a quarter of the live count + 16,384): full copy,
     * then the journal (twice as large) again */
    uint64_t live = vt_core_live_count();
    for (uint64_t k = 0; k < live + 20000; k++) {
        uint64_t a = (9ull << 40) + k * 64;
        vt_core_post_alloc_at(a, 64, 0x99, 1, VT_KIND_DEVICE, 3);
        vt_taken t;
        memset(&t, 0, sizeof t);
        vt_core_free_done(vt_core_post_free(a, &t));
    }
    journal_compare("overflowed", 0, 0);
    for (int k = 0; k < 500; k++)
        journal_op(handles, &n_handles);
    journal_compare("after overflow", 1, 1);
    /* a collection without fragmentation drops the kept set and the journal */
    vt_collect c;
    CHECK_EQ_INT(vt_core_collect(&c, 0, 10), 0);
    CHECK(c.devs[0].fragmentation < 0);
    vt_collect_free(&c);
    for (int k = 0; k < 500; k++)
        journal_op(handles, &n_handles);
    journal_compare("after sites only", 0, 0);
    for (int k = 0; k < 500; k++)
        journal_op(handles, &n_handles);
    journal_compare("after sites only", 1, 1);
}

static int stop_threads;
static int journal_seen;   /* atomic: a collection took its fragmentation from the journal */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 300,000 events at full speed; then, until a collection has used the journal (at
 * most 10 s), more events with a pause every 256: flat out, two posters can overflow
 * the journal between every keep and collect on an idle machine, and the journal path
 * would never be taken. */
static void *poster(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg << 32, x = (uint64_t)(uintptr_t)arg * 77 + 1;
    double deadline = now_s() + 10;
    for (uint64_t k = 0;; k++) {
        if (k >= 300000) {
            if (__atomic_load_n(&journal_seen, __ATOMIC_ACQUIRE) || now_s() > deadline)
                break;
            if (k % 256 == 0) {
                struct timespec pause = {0, 200000};
                nanosleep(&pause, NULL);
            }
        }
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t a = base + (x % 50000) * 4096;
        if (x & 1) {
            vt_core_post_alloc_at(a, 1 + x % 10000, 0x99, (int)(x >> 8) % 2, VT_KIND_DEVICE, 4);
        } else {
            vt_taken t;
            memset(&t, 0, sizeof t);
            uint64_t ticket = vt_core_post_free(a, &t);
            if (ticket == VT_TICKET_SYNC)
                vt_core_commit(&t);
            else
                vt_core_free_done(ticket);
        }
    }
    return NULL;
}

static void *keeper(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_threads, __ATOMIC_ACQUIRE)) {
        vt_core_drain();
        vt_core_frag_keep();
    }
    return NULL;
}

static void *collector(void *arg)
{
    int *journal = arg;
    while (!__atomic_load_n(&stop_threads, __ATOMIC_ACQUIRE)) {
        vt_collect c;
        if (vt_core_collect(&c, VT_COLLECT_FRAG | VT_COLLECT_APPLIED, 10) == 0) {
            *journal += c.frag_from_journal;
            if (c.frag_from_journal)
                __atomic_store_n(&journal_seen, 1, __ATOMIC_RELEASE);
            vt_collect_free(&c);
        }
    }
    return NULL;
}

static void through_threads(void)
{
    pthread_t p[2], k, c;
    int journal = 0;
    pthread_create(&k, NULL, keeper, NULL);
    pthread_create(&c, NULL, collector, &journal);
    for (int i = 0; i < 2; i++)
        pthread_create(&p[i], NULL, poster, (void *)(uintptr_t)(20 + i));
    for (int i = 0; i < 2; i++)
        pthread_join(p[i], NULL);
    __atomic_store_n(&stop_threads, 1, __ATOMIC_RELEASE);
    pthread_join(k, NULL);
    pthread_join(c, NULL);
    CHECK(journal > 0);
    vt_core_frag_keep();
    journal_compare("threads", 0, -1);   /* a journal that overflowed last: a full copy */
    uint64_t handles[64];
    int n_handles = 0;
    for (int i = 0; i < 500; i++)
        journal_op(handles, &n_handles);
    journal_compare("threads", 1, 1);
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
    set_apply_direct();
    through_collect();
    through_journal();
    through_threads();
    TEST_DONE();
}
