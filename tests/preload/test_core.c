/* test_core.c — unit tests of the preload core (no LD_PRELOAD, no CUDA): the table,
 * totals, peaks, sites, implicit frees, VMM, the leak detector, fragmentation, the
 * stack store, settings, JSON formatting, the writer, and the out-of-memory latch. */
#define _GNU_SOURCE
#include <pthread.h>
#include "vt_buf.h"
#include "vt_cap.h"
#include "vt_config.h"
#include "vt_encode.h"
#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_core_internal.h"   /* vt__peak_after_fork: the compositions of earlier tests */
#include "vt_log.h"
#include "vt_mem.h"
#include "vt_ring.h"
#include "vt_stack.h"
#include "vt_stepq.h"
#include "vt_writer.h"
#include "vt_test.h"

#include <jansson.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static vt_alloc_info A(uint64_t addr, uint64_t size, int kind, int dev, uint32_t stack)
{
    vt_alloc_info a = {addr, size, 0, 0x1000 + (uint64_t)dev, dev, kind, stack};
    return a;
}

static const vt_site_row *find_site(const vt_collect *c, uint32_t stack, int kind, int dev)
{
    for (size_t i = 0; i < c->n_sites; i++)
        if (c->sites[i].stack == stack && c->sites[i].kind == kind && c->sites[i].device == dev)
            return &c->sites[i];
    return NULL;
}

static const vt_dev_stats *find_dev(const vt_collect *c, int dev)
{
    for (int i = 0; i < c->n_devs; i++)
        if (c->devs[i].device == dev)
            return &c->devs[i];
    return NULL;
}

static void test_table(void)
{
    vt_alloc_info a1 = A(0x10000, 1000, VT_KIND_DEVICE, 0, 1);
    vt_alloc_info a2 = A(0x20000, 500, VT_KIND_MANAGED, 0, 1);
    vt_alloc_info a3 = A(0x30000, 7, VT_KIND_HOST_PINNED, 1, 2);
    CHECK_EQ_INT(vt_core_alloc(&a1), 0);
    CHECK_EQ_INT(vt_core_alloc(&a2), 0);
    CHECK_EQ_INT(vt_core_alloc(&a3), 0);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 1507);
    CHECK_EQ_U64(vt_core_live_bytes(0), 1500);
    CHECK_EQ_U64(vt_core_live_bytes(1), 7);
    CHECK_EQ_U64(vt_core_peak_bytes(-1), 1507);

    vt_taken t;
    CHECK_EQ_INT(vt_core_take(0x10000, 0, &t), 1);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 507);
    vt_core_restore(&t);              /* the real free failed */
    CHECK_EQ_U64(vt_core_live_bytes(-1), 1507);
    CHECK_EQ_INT(vt_core_take(0x10000, 0, &t), 1);
    vt_core_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 507);
    CHECK_EQ_INT(vt_core_take(0x10000, 0, &t), 0);  /* double free / unknown: nothing */
    CHECK_EQ_INT(vt_core_take(0xdead, 0, &t), 0);
    CHECK_EQ_U64(vt_core_peak_bytes(-1), 1507);
    CHECK_EQ_U64(vt_core_peak_bytes(0), 1500);

    /* a kind mask refuses a free of another kind */
    CHECK_EQ_INT(vt_core_take(0x20000, 1u << VT_KIND_HOST_PINNED, &t), 0);

    vt_collect c;
    CHECK_EQ_INT(vt_core_collect(&c, VT_COLLECT_ALLOCS, 10), 0);
    CHECK_EQ_U64(c.n_allocs, 2);
    const vt_dev_stats *d0 = find_dev(&c, 0);
    CHECK(d0 != NULL);
    if (d0) {
        CHECK_EQ_U64(d0->kinds[VT_KIND_DEVICE].alloc_total, 1);
        CHECK_EQ_U64(d0->kinds[VT_KIND_DEVICE].free_total, 1);
        CHECK_EQ_U64(d0->kinds[VT_KIND_DEVICE].live_bytes, 0);
        CHECK_EQ_U64(d0->kinds[VT_KIND_DEVICE].peak_bytes, 1000);
        CHECK_EQ_U64(d0->kinds[VT_KIND_MANAGED].live_bytes, 500);
    }
    const vt_site_row *s = find_site(&c, 1, VT_KIND_DEVICE, 0);
    CHECK(s != NULL);  /* fell to zero since the previous collection: listed once */
    if (s) {
        CHECK_EQ_U64(s->live_bytes, 0);
        CHECK_EQ_U64(s->interval_peak_bytes, 1000);
    }
    vt_collect_free(&c);
    CHECK_EQ_INT(vt_core_collect(&c, 0, 10), 0);
    CHECK(find_site(&c, 1, VT_KIND_DEVICE, 0) == NULL);  /* unchanged and zero: omitted */
    CHECK(find_site(&c, 1, VT_KIND_MANAGED, 0) != NULL);
    vt_collect_free(&c);

    /* clean up */
    CHECK_EQ_INT(vt_core_take(0x20000, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_INT(vt_core_take(0x30000, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 0);
}

static void test_reset(void)
{
    vt_alloc_info dev0 = A(0x100000, 100, VT_KIND_DEVICE, 0, 3);
    vt_alloc_info pin0 = A(0x200000, 10, VT_KIND_HOST_PINNED, 0, 3);
    vt_alloc_info async0 = A(0x300000, 1000, VT_KIND_ASYNC, 0, 3);
    vt_alloc_info dev1 = A(0x400000, 5, VT_KIND_DEVICE, 1, 3);
    vt_core_alloc(&dev0);
    vt_core_alloc(&pin0);
    vt_core_alloc(&async0);
    vt_core_alloc(&dev1);
    CHECK_EQ_INT(vt_core_vmm_create(77, 2 << 20, 0, 3, 0), 0);
    uint64_t before = vt_core_next_seq();
    vt_alloc_info late = A(0x500000, 1, VT_KIND_DEVICE, 0, 3);  /* born after the reset began */
    vt_core_alloc(&late);
    CHECK_EQ_U64(vt_core_drop_context(0, 0, before), 2);  /* dev0 + pin0 */
    CHECK_EQ_U64(vt_core_live_bytes(0), 1000 + (2 << 20) + 1);
    CHECK_EQ_U64(vt_core_live_bytes(1), 5);
    vt_taken t;
    CHECK_EQ_INT(vt_core_take(0x100000, 0, &t), 0);      /* stale after the reset */
    /* by context: dev1's record has ctx 0x1001 */
    CHECK_EQ_U64(vt_core_drop_context(-1, 0x1001, vt_core_next_seq()), 1);
    CHECK_EQ_U64(vt_core_live_bytes(1), 0);
    CHECK_EQ_INT(vt_core_take(0x300000, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_INT(vt_core_take(0x500000, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_INT(vt_core_vmm_release(77, &t), 1); vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 0);
}

/* A free in flight while the context is reset: the free took the record out, the reset
 * (drop_context) freed the memory, the real free then fails (the pointer is gone). The
 * record must not come back: the program has nothing live there any more. A reset of
 * another device or context, or one that began after the record's birth... does not
 * apply to it, and then the failed free's record does come back. */
static void test_reset_during_free(void)
{
    vt_alloc_info a = A(0x910000, 300, VT_KIND_DEVICE, 0, 4);
    vt_alloc_info b = A(0x920000, 70, VT_KIND_DEVICE, 0, 4);
    CHECK_EQ_INT(vt_core_alloc(&a), 0);
    CHECK_EQ_INT(vt_core_alloc(&b), 0);
    vt_taken t;
    CHECK_EQ_INT(vt_core_take(0x910000, 0, &t), 1);                 /* cudaFree(a) begins */
    CHECK_EQ_U64(vt_core_drop_context(0, 0, vt_core_next_seq()), 1); /* device 0 reset: b */
    vt_core_restore(&t);                                             /* the real free failed */
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_take(0x910000, 0, &t), 0);

    /* a reset of another device, of another context, or one that drops only records
     * born before this one: the failed free's record comes back */
    CHECK_EQ_INT(vt_core_alloc(&a), 0);
    CHECK_EQ_INT(vt_core_take(0x910000, 0, &t), 1);
    CHECK_EQ_U64(vt_core_drop_context(1, 0, vt_core_next_seq()), 0);
    CHECK_EQ_U64(vt_core_drop_context(-1, 0x7777, vt_core_next_seq()), 0);
    CHECK_EQ_U64(vt_core_drop_context(0, 0, 1), 0);
    vt_core_restore(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 300);
    CHECK_EQ_INT(vt_core_take(0x910000, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 0);
}

/* Two threads free the same pointer at once (a double free race: CUDA lets one
 * succeed). T1's take gets the record, T2's take finds nothing, T2's real free
 * succeeds, T1's real free fails: T1 must not put the record back. A successful
 * untracked free of another address does not stop the restore. */
static void test_double_free_race(void)
{
    vt_alloc_info a = A(0x930000, 4096, VT_KIND_DEVICE, 0, 5);
    CHECK_EQ_INT(vt_core_alloc(&a), 0);
    vt_taken t1, t2;
    CHECK_EQ_INT(vt_core_take(0x930000, 0, &t1), 1);   /* T1: cudaFree(p) begins    */
    CHECK_EQ_INT(vt_core_take(0x930000, 0, &t2), 0);   /* T2: cudaFree(p) begins    */
    CHECK_EQ_INT(t2.missed, 1);
    vt_core_untracked_free(t2.addr);                   /* T2's real free succeeded  */
    vt_core_restore(&t1);                              /* T1's real free failed     */
    CHECK_EQ_U64(vt_core_live_bytes(-1), 0);
    CHECK_EQ_INT(vt_core_take(0x930000, 0, &t1), 0);

    CHECK_EQ_INT(vt_core_alloc(&a), 0);
    CHECK_EQ_INT(vt_core_take(0x930000, 0, &t1), 1);
    vt_core_untracked_free(0x940000);                  /* some other pointer        */
    vt_core_restore(&t1);                              /* the wrong API, say: back  */
    CHECK_EQ_U64(vt_core_live_bytes(-1), 4096);
    CHECK_EQ_INT(vt_core_take(0x930000, 0, &t1), 1); vt_core_commit(&t1);
    CHECK_EQ_U64(vt_core_live_bytes(-1), 0);
}

/* The table past 2^20 live records (index 2^21 slots, slab registry grown 64 -> 2,048)
 * with CUDA handing addresses out again whose free was never seen (the newer record
 * replaces the stale one, counted as a free), a collection of every row, a device
 * reset walking every slab, and the table emptied: exact at every step. */
#define BIG_N 1200000u
static void test_big_table(void)
{
    uint64_t base = 0x10000000000ull, want = 0;
    for (uint32_t i = 0; i < BIG_N; i++) {
        vt_alloc_info a = A(base + (uint64_t)i * 512, 256 + i % 7, VT_KIND_DEVICE, 3, 20 + i % 5);
        if (vt_core_alloc(&a) != 0) { CHECK(0); return; }
        want += a.size;
    }
    CHECK_EQ_U64(vt_core_live_bytes(3), want);
    CHECK_EQ_U64(vt_core_live_count(), BIG_N);
    /* every third address comes back from CUDA without a free we saw: 100 bytes now */
    for (uint32_t i = 0; i < BIG_N; i += 3) {
        vt_alloc_info a = A(base + (uint64_t)i * 512, 100, VT_KIND_DEVICE, 3, 30);
        CHECK_EQ_INT(vt_core_alloc(&a), 0);
        want = want - (256 + i % 7) + 100;
    }
    CHECK_EQ_U64(vt_core_live_bytes(3), want);
    CHECK_EQ_U64(vt_core_live_count(), BIG_N);
    vt_collect c;
    CHECK_EQ_INT(vt_core_collect(&c, VT_COLLECT_ALLOCS, 0), 0);
    CHECK_EQ_U64(c.n_allocs, BIG_N);
    uint64_t sum = 0, cnt = 0, frees = 0;
    for (size_t i = 0; i < c.n_allocs; i++)
        sum += c.allocs[i].size;
    CHECK_EQ_U64(sum, want);
    const vt_dev_stats *d = find_dev(&c, 3);
    CHECK(d != NULL);
    if (d) {
        cnt = d->kinds[VT_KIND_DEVICE].live_count;
        frees = d->kinds[VT_KIND_DEVICE].free_total;
        CHECK_EQ_U64(d->kinds[VT_KIND_DEVICE].live_bytes, want);
    }
    CHECK_EQ_U64(cnt, BIG_N);
    CHECK_EQ_U64(frees, (BIG_N + 2) / 3);
    vt_collect_free(&c);
    /* free the even ones, then a reset of device 3 drops the rest */
    uint64_t freed = 0;
    for (uint32_t i = 0; i < BIG_N; i += 2) {
        vt_taken t;
        if (vt_core_take(base + (uint64_t)i * 512, 0, &t)) { vt_core_commit(&t); freed++; }
    }
    CHECK_EQ_U64(freed, BIG_N / 2);
    CHECK_EQ_U64(vt_core_drop_context(3, 0, vt_core_next_seq()), BIG_N / 2);
    CHECK_EQ_U64(vt_core_live_bytes(3), 0);
    CHECK_EQ_U64(vt_core_live_count(), 0);
    vt_taken t;
    CHECK_EQ_INT(vt_core_take(base + 512, 0, &t), 0);
}

static void test_vmm(void)
{
    vt_taken t;
    CHECK_EQ_INT(vt_core_vmm_create(1, 4 << 20, 0, 4, 0), 0);
    CHECK_EQ_U64(vt_core_live_bytes(0), 4 << 20);
    vt_core_vmm_map(0x7f0000000000, 4 << 20, 1);
    CHECK_EQ_INT(vt_core_vmm_release(1, &t), 1);         /* released while mapped: lives on */
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 4 << 20);
    vt_collect c;
    vt_core_collect(&c, VT_COLLECT_ALLOCS, 10);
    CHECK_EQ_U64(c.n_allocs, 1);
    if (c.n_allocs) {
        CHECK_EQ_U64(c.allocs[0].addr, 0x7f0000000000);
        CHECK_EQ_INT(c.allocs[0].kind, VT_KIND_VMM);
    }
    vt_collect_free(&c);
    vt_core_vmm_unmap(0x7f0000000000, 4 << 20);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    /* failed release is undone */
    vt_core_vmm_create(2, 100, 0, 4, 0);
    CHECK_EQ_INT(vt_core_vmm_release(2, &t), 1);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    vt_core_vmm_restore(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 100);
    CHECK_EQ_INT(vt_core_vmm_release(2, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(2, &t), 0);          /* gone */

    /* one cuMemUnmap over three mappings side by side (PyTorch's expandable segments
     * shrink so), then the releases: all three are gone */
    uint64_t va = 0x7e0000000000, seg = 2 << 20;
    for (uint64_t h = 10; h < 13; h++) {
        CHECK_EQ_INT(vt_core_vmm_create(h, seg, 0, 4, 0), 0);
        vt_core_vmm_map(va + (h - 10) * seg, seg, h);
    }
    CHECK_EQ_U64(vt_core_live_bytes(0), 3 * seg);
    vt_core_vmm_unmap(va, 3 * seg);
    for (uint64_t h = 10; h < 13; h++) {
        CHECK_EQ_INT(vt_core_vmm_release(h, &t), 1);
        vt_core_vmm_commit(&t);
    }
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    for (uint64_t h = 10; h < 13; h++)
        CHECK_EQ_INT(vt_core_vmm_release(h, &t), 0);      /* gone, mappings too */

    /* a release in flight while another thread unmaps the last mapping: the entry
     * stays until the release's commit (it used to be freed under it), or comes back
     * counted if the release failed */
    CHECK_EQ_INT(vt_core_vmm_create(20, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 20);
    CHECK_EQ_INT(vt_core_vmm_release(20, &t), 1);
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(20, &t), 0);
    CHECK_EQ_INT(vt_core_vmm_create(21, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 21);
    CHECK_EQ_INT(vt_core_vmm_release(21, &t), 1);
    vt_core_vmm_unmap(va, seg);
    vt_core_vmm_restore(&t);                               /* the release failed */
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);
    CHECK_EQ_INT(vt_core_vmm_release(21, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);

    /* the handle created again while its release is in flight: the new one is
     * counted, the old one freed by the commit */
    CHECK_EQ_INT(vt_core_vmm_create(30, seg, 0, 4, 0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(30, &t), 1);
    CHECK_EQ_INT(vt_core_vmm_create(30, 2 * seg, 0, 4, 0), 0);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 2 * seg);
    CHECK_EQ_INT(vt_core_vmm_release(30, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);

    /* a mapping whose unmap was not seen, displaced by a new one at its address */
    CHECK_EQ_INT(vt_core_vmm_create(40, seg, 0, 4, 0), 0);
    CHECK_EQ_INT(vt_core_vmm_create(41, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 40);
    CHECK_EQ_INT(vt_core_vmm_release(40, &t), 1);
    vt_core_vmm_commit(&t);                                /* mapped: lives on */
    vt_core_vmm_map(va, seg, 41);                          /* 40's mapping is gone */
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);
    CHECK_EQ_INT(vt_core_vmm_release(41, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    /* ... by the same handle, released meanwhile: its displaced mapping was its last
     * one, so it is gone before the new mapping could be counted (ASan: no use
     * after free) */
    CHECK_EQ_INT(vt_core_vmm_create(42, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 42);
    CHECK_EQ_INT(vt_core_vmm_release(42, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_map(va, seg, 42);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(42, &t), 0);

    /* a release racing a map of the same handle: the map in flight keeps it live,
     * so the release (tracked first) does not drop memory that ends up mapped */
    CHECK_EQ_INT(vt_core_vmm_create(50, seg, 0, 4, 0), 0);
    CHECK_EQ_INT(vt_core_vmm_map_begin(50), 1);
    CHECK_EQ_INT(vt_core_vmm_release(50, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);
    vt_core_vmm_map_end(va, seg, 50, 1, 1);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);              /* released, still mapped */
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(50, &t), 0);          /* gone */
    /* ... and a map that fails after the release: gone then */
    CHECK_EQ_INT(vt_core_vmm_create(51, seg, 0, 4, 0), 0);
    CHECK_EQ_INT(vt_core_vmm_map_begin(51), 1);
    CHECK_EQ_INT(vt_core_vmm_release(51, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_map_end(va, seg, 51, 1, 0);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(51, &t), 0);

    /* cuMemRetainAllocationHandle: each reference is released before it is gone */
    CHECK_EQ_INT(vt_core_vmm_create(60, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 60);
    vt_core_vmm_retain(60);
    CHECK_EQ_INT(vt_core_vmm_release(60, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);              /* one reference left */
    CHECK_EQ_INT(vt_core_vmm_release(60, &t), 1);
    vt_core_vmm_restore(&t);                               /* a failed release */
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);
    CHECK_EQ_INT(vt_core_vmm_release(60, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_release(60, &t), 0);

    /* one handle mapped at two addresses: listed at the one left when the lowest
     * goes */
    CHECK_EQ_INT(vt_core_vmm_create(70, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 70);
    vt_core_vmm_map(va + 8 * (uint64_t)seg, seg, 70);
    CHECK_EQ_INT(vt_core_vmm_release(70, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);
    vt_core_collect(&c, VT_COLLECT_ALLOCS, 10);
    CHECK_EQ_U64(c.n_allocs, 1);
    if (c.n_allocs)
        CHECK_EQ_U64(c.allocs[0].addr, va + 8 * (uint64_t)seg);
    vt_collect_free(&c);
    vt_core_vmm_unmap(va + 8 * (uint64_t)seg, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);

    /* one unmap over mappings with a gap between them */
    for (uint64_t h = 80; h < 83; h++) {
        CHECK_EQ_INT(vt_core_vmm_create(h, seg, 0, 4, 0), 0);
        vt_core_vmm_map(va + (h == 82 ? 3 : h - 80) * (uint64_t)seg, seg, h);
        CHECK_EQ_INT(vt_core_vmm_release(h, &t), 1);
        vt_core_vmm_commit(&t);
    }
    CHECK_EQ_U64(vt_core_live_bytes(0), 3 * seg);
    vt_core_vmm_unmap(va, 4 * (uint64_t)seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);

    /* a handle value given out again while the old one's unmap is still to be
     * tracked: the late unmap does not end the new allocation's mapping */
    CHECK_EQ_INT(vt_core_vmm_create(90, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 90);
    CHECK_EQ_INT(vt_core_vmm_release(90, &t), 1);
    vt_core_vmm_commit(&t);                                /* released, still mapped */
    CHECK_EQ_INT(vt_core_vmm_create(90, seg, 0, 4, 0), 0);    /* (real unmap returned) */
    vt_core_vmm_map(va + 8 * (uint64_t)seg, seg, 90);
    vt_core_vmm_unmap(va, seg);                            /* the late bookkeeping */
    CHECK_EQ_INT(vt_core_vmm_release(90, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);              /* mapped at va + 8 seg */
    vt_core_vmm_unmap(va + 8 * (uint64_t)seg, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);

    /* a retain (by address) racing the unmap and release of the allocation on
     * another thread: held live from before the real call */
    uint64_t held = 0;
    CHECK_EQ_INT(vt_core_vmm_create(100, seg, 0, 4, 0), 0);
    vt_core_vmm_map(va, seg, 100);
    CHECK_EQ_INT(vt_core_vmm_hold_at(va, &held), 1);
    CHECK_EQ_U64(held, 100);
    CHECK_EQ_INT(vt_core_vmm_release(100, &t), 1);
    vt_core_vmm_commit(&t);
    vt_core_vmm_unmap(va, seg);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);              /* held */
    vt_core_vmm_retain(100);                               /* the real retain won */
    vt_core_vmm_map_end(0, 0, held, 1, 0);
    CHECK_EQ_U64(vt_core_live_bytes(0), seg);              /* its reference */
    CHECK_EQ_INT(vt_core_vmm_release(100, &t), 1);
    vt_core_vmm_commit(&t);
    CHECK_EQ_U64(vt_core_live_bytes(0), 0);
    CHECK_EQ_INT(vt_core_vmm_hold_at(va, &held), 0);       /* nothing mapped there */
}

static void test_leak_detector(void)
{
    /* site 10 leaks 64 bytes per step; site 11 churns 1 MiB up and back down */
    uint64_t addr = 0x9000000;
    vt_collect c;
    vt_core_collect(&c, VT_COLLECT_STEP, 5);  /* baseline step */
    vt_collect_free(&c);
    int warned_at = -1;
    for (int step = 1; step <= 8; step++) {
        vt_alloc_info l = A(addr += 0x1000, 64, VT_KIND_DEVICE, 0, 10);
        vt_core_alloc(&l);
        vt_alloc_info ch = A(0x8000000, 1 << 20, VT_KIND_DEVICE, 0, 11);
        vt_core_alloc(&ch);
        vt_taken t;
        vt_core_take(0x8000000, 0, &t);
        vt_core_commit(&t);
        vt_core_step();
        vt_core_collect(&c, VT_COLLECT_STEP, 5);
        const vt_site_row *leak = find_site(&c, 10, VT_KIND_DEVICE, 0);
        const vt_site_row *churn = find_site(&c, 11, VT_KIND_DEVICE, 0);
        CHECK(leak != NULL);
        if (leak) {
            /* step 1's floor is 0 (it started empty); growth starts at step 2 */
            CHECK_EQ_U64(leak->growth_steps, step - 1);
            CHECK_EQ_U64(leak->growth_bytes, 64ull * (step - 1));
            if (leak->leak_new) {
                CHECK_EQ_INT(warned_at, -1);
                warned_at = step;
            }
        }
        if (churn) {
            CHECK_EQ_U64(churn->growth_steps, 0);
            CHECK_EQ_U64(churn->interval_peak_bytes, 1 << 20);
            CHECK(!churn->leak_warn);
        }
        vt_collect_free(&c);
    }
    CHECK_EQ_INT(warned_at, 6);  /* growth_steps reaches 5 at step 6, warned once */
    for (int i = 0; i < 8; i++) {
        vt_taken t;
        CHECK_EQ_INT(vt_core_take(0x9000000 + 0x1000 * (uint64_t)(i + 1), 0, &t), 1);
        vt_core_commit(&t);
    }
    vt_core_collect(&c, VT_COLLECT_STEP, 5);
    const vt_site_row *leak = find_site(&c, 10, VT_KIND_DEVICE, 0);
    CHECK(leak && leak->growth_steps == 0);  /* fell back: reset */
    vt_collect_free(&c);
}

static void test_fragmentation(void)
{
    uint64_t r[4][2] = {{300, 100}, {0, 100}, {150, 50}, {600, 10}};
    /* sorted: [0,100) [150,200) [300,400) [600,610): gaps 50, 100, 200 -> 1 - 200/350 */
    double f = vt_fragmentation(r, 4);
    CHECK(f > 0.428 && f < 0.429);
    uint64_t one[2][2] = {{0, 100}, {100, 100}};
    CHECK(vt_fragmentation(one, 2) == 0.0);
    uint64_t gap1[2][2] = {{0, 100}, {500, 100}};
    CHECK(vt_fragmentation(gap1, 2) == 0.0);
}

static __attribute__((noinline)) uint32_t capture_a(void) { return vt_stack_capture(16); }
static __attribute__((noinline)) uint32_t capture_b(void) { return vt_stack_capture(16); }
/* the hooks' entry: unwind here, hand the pcs over (no own range in this test
 * program, so vt_stack_capture_hook must take its general fallback) */
static __attribute__((noinline)) uint32_t capture_hook(void)
{
    uintptr_t b[17];
    int n = vt_stack_unwind_here(b, 17);
    return vt_stack_capture_hook(b, n, 16);
}

static void test_stacks(void)
{
    uintptr_t s1[3] = {1, 2, 3}, s2[3] = {1, 2, 4};
    uint32_t before = vt_stack_count();
    uint32_t i1 = vt_stack_intern(s1, 3);
    uint32_t i2 = vt_stack_intern(s2, 3);
    uint32_t i3 = vt_stack_intern(s1, 3);
    CHECK(i1 != 0 && i1 != UINT32_MAX);
    CHECK(i1 != i2);
    CHECK_EQ_U64(i1, i3);
    CHECK_EQ_U64(vt_stack_count(), before + 2);
    const uintptr_t *pcs;
    int n;
    CHECK_EQ_INT(vt_stack_get(i2, &pcs, &n), 0);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_U64(pcs[2], 4);
    CHECK_EQ_INT(vt_stack_get(0, &pcs, &n), -1);
    /* real captures: same site twice -> same id; another site -> another id */
    uint32_t ids[2];
    volatile int twice = 2;  /* not unrolled: really one call site */
    for (int i = 0; i < twice; i++)
        ids[i] = capture_a();     /* one call site, twice */
    uint32_t a1 = ids[0], a2 = ids[1], b1 = capture_b();
    CHECK(a1 != 0);
    CHECK_EQ_U64(a1, a2);
    CHECK(a1 != b1);
    CHECK_EQ_INT(vt_stack_capture(0), 0);
    uint32_t hk[2];
    for (int i = 0; i < twice; i++)
        hk[i] = capture_hook();
    CHECK(hk[0] != 0 && hk[0] != UINT32_MAX);
    CHECK_EQ_U64(hk[0], hk[1]);
    CHECK(hk[0] != a1 && hk[0] != b1);
    CHECK_EQ_U64(vt_stack_capture_hook(NULL, 0, 16) != 0, 1);  /* n = 0: fallback */
    /* keys that a weak hash could confuse: order, length, a zero pc, empty */
    uintptr_t r1[3] = {3, 2, 1}, z2[2] = {1, 2}, z3[3] = {1, 2, 0};
    uint32_t ir = vt_stack_intern(r1, 3), iz2 = vt_stack_intern(z2, 2), iz3 = vt_stack_intern(z3, 3);
    uint32_t ie = vt_stack_intern(NULL, 0);
    CHECK(ir != i1 && iz2 != iz3 && iz3 != i1 && ie != 0 && ie != iz2);
    CHECK_EQ_U64(vt_stack_intern(r1, 3), ir);
    CHECK_EQ_U64(vt_stack_intern(z3, 3), iz3);
    CHECK_EQ_U64(vt_stack_intern(NULL, 0), ie);
    CHECK_EQ_INT(vt_stack_get(ie, &pcs, &n), 0);
    CHECK_EQ_INT(n, 0);
    /* many distinct stacks force the index to grow */
    for (uintptr_t k = 0; k < 5000; k++) {
        uintptr_t s[2] = {k, 99};
        uint32_t id = vt_stack_intern(s, 2);
        CHECK(id != UINT32_MAX);
        if (k == 4999)
            CHECK_EQ_U64(vt_stack_intern(s, 2), id);
    }
    /* after growing, every earlier stack is still found (rehashed by its top bits) */
    for (uintptr_t k = 0; k < 5000; k += 499) {
        uintptr_t s[2] = {k, 99};
        uint32_t c0 = vt_stack_count();
        uint32_t id = vt_stack_intern(s, 2);
        CHECK_EQ_INT(vt_stack_get(id, &pcs, &n), 0);
        CHECK(n == 2 && pcs[0] == k && pcs[1] == 99);
        CHECK_EQ_U64(vt_stack_count(), c0);
    }
    CHECK_EQ_U64(vt_stack_intern(s1, 3), i1);
    CHECK_EQ_U64(vt_stack_intern(r1, 3), ir);
}

static void test_config(void)
{
    vt_config c;
    char *good[] = {"VRAMTRACE_OUTPUT=/tmp/x", "VRAMTRACE_INTERVAL_MS=250", "VRAMTRACE_DEPTH=0",
                    "VRAMTRACE_SIGNAL=SIGUSR2", "VRAMTRACE_STEP_EVERY=4", "VRAMTRACE_LOG=quiet",
                    "VRAMTRACE_DISABLE=1", "VRAMTRACE_LEAK_STEPS=3", "VRAMTRACE_NVML=0",
                    "VRAMTRACE_HOST_INTERVAL_MS=50", "PATH=/bin", NULL};
    CHECK_EQ_INT(vt_config_parse(good, &c), 0);
    CHECK_EQ_INT(c.nvml, 0);
    CHECK_EQ_INT(c.host_interval_ms, 50);
    CHECK(!strcmp(c.output, "/tmp/x"));
    CHECK_EQ_INT(c.interval_ms, 250);
    CHECK_EQ_INT(c.depth, 0);
    CHECK_EQ_INT(c.signal, SIGUSR2);
    CHECK_EQ_INT(c.step_every, 4);
    CHECK_EQ_INT(c.disable, 1);
    CHECK_EQ_INT(c.leak_steps, 3);
    char *bad[] = {"VRAMTRACE_INTERVAL_MS=fast", "VRAMTRACE_DEPTH=100000", "VRAMTRACE_SIGNAL=KILL",
                   "VRAMTRACE_STEP_EVERY=0", "VRAMTRACE_BOGUS=1", "VRAMTRACE_DISABLE=yes",
                   "VRAMTRACE_NVML=no", "VRAMTRACE_HOST_INTERVAL_MS=0", NULL};
    CHECK_EQ_INT(vt_config_parse(bad, &c), 8);  /* one warning each */
    CHECK_EQ_INT(c.nvml, 1);
    CHECK_EQ_INT(c.host_interval_ms, 1000);
    char *words[] = {"VRAMTRACE_NVML=OFF", NULL};
    CHECK_EQ_INT(vt_config_parse(words, &c), 0);
    CHECK_EQ_INT(c.nvml, 0);
    CHECK_EQ_INT(c.interval_ms, 1000);
    CHECK_EQ_INT(c.depth, 32);
    CHECK_EQ_INT(c.signal, SIGUSR1);
    CHECK_EQ_INT(c.step_every, 1);
    CHECK_EQ_INT(c.disable, 0);
    CHECK_EQ_INT(c.trace, 0);   /* the default: no event trace */
    char *tr[] = {"VRAMTRACE_TRACE=1", NULL};
    CHECK_EQ_INT(vt_config_parse(tr, &c), 0);
    CHECK_EQ_INT(c.trace, 1);
    char *tr_on[] = {"VRAMTRACE_TRACE=on", NULL};
    CHECK_EQ_INT(vt_config_parse(tr_on, &c), 0);
    CHECK_EQ_INT(c.trace, 1);
    char *tr_bad[] = {"VRAMTRACE_TRACE=2", NULL};
    CHECK_EQ_INT(vt_config_parse(tr_bad, &c), 1);
    CHECK_EQ_INT(c.trace, 0);
    char *sig[] = {"VRAMTRACE_SIGNAL=none", NULL};
    vt_config_parse(sig, &c);
    CHECK_EQ_INT(c.signal, 0);
    char *num[] = {"VRAMTRACE_SIGNAL=12", NULL};
    vt_config_parse(num, &c);
    CHECK_EQ_INT(c.signal, 12);
    /* VRAMTRACE_MAX_BYTES: plain bytes and KiB/MiB/GiB suffixes; 0 = no cap */
    CHECK(c.max_bytes == 1ull << 30);   /* the default */
    char *mb[] = {"VRAMTRACE_MAX_BYTES=4MiB", NULL};
    CHECK_EQ_INT(vt_config_parse(mb, &c), 0);
    CHECK(c.max_bytes == 4ull << 20);
    char *mb2[] = {"VRAMTRACE_MAX_BYTES=262144", NULL};
    CHECK_EQ_INT(vt_config_parse(mb2, &c), 0);
    CHECK(c.max_bytes == 262144);
    char *mb3[] = {"VRAMTRACE_MAX_BYTES=2g", NULL};
    CHECK_EQ_INT(vt_config_parse(mb3, &c), 0);
    CHECK(c.max_bytes == 2ull << 30);
    char *mb4[] = {"VRAMTRACE_MAX_BYTES=0", NULL};
    CHECK_EQ_INT(vt_config_parse(mb4, &c), 0);
    CHECK(c.max_bytes == 0);
    char *mbad[] = {"VRAMTRACE_MAX_BYTES=4TB", "VRAMTRACE_MAX_BYTES=-1", "VRAMTRACE_MAX_BYTES=", NULL};
    CHECK_EQ_INT(vt_config_parse(mbad, &c), 3);
    CHECK(c.max_bytes == 1ull << 30);
    /* below the smallest cap: a warning of its own, and the smallest cap */
    char *mlow[] = {"VRAMTRACE_MAX_BYTES=1000", NULL};
    CHECK_EQ_INT(vt_config_parse(mlow, &c), 1);
    CHECK(c.max_bytes == 64ull << 10);
    /* the vramtrace command's decimal units too */
    char *mdec[] = {"VRAMTRACE_MAX_BYTES=2MB", NULL};
    CHECK_EQ_INT(vt_config_parse(mdec, &c), 0);
    CHECK(c.max_bytes == 2000000);
}

/* The size cap's history (write/vt_cap.h): 600 step records, so the grid of 256
 * buckets is halved twice (width 4); a site present in every record (live 100 x
 * step) and one present in even steps only (so every bucket's floor is 0); the
 * summary's lists; the kept OOM records (first 2, last 2) marked "summarised". */
static void test_cap(void)
{
    vt_cap k;
    memset(&k, 0, sizeof k);
    vt_site_row rows[2];
    memset(rows, 0, sizeof rows);
    rows[0].id = 1; rows[0].stack = 3; rows[0].device = 0;
    rows[1].id = 2; rows[1].stack = 4; rows[1].device = 0;
    vt_collect c;
    memset(&c, 0, sizeof c);
    c.sites = rows;
    c.n_devs = 1;
    for (uint64_t st = 0; st < 600; st++) {
        c.step = st;
        rows[0].live_bytes = 100 * st;
        rows[0].interval_peak_bytes = 100 * st + 5;
        rows[0].free_total = st;
        rows[1].live_bytes = 7;
        c.n_sites = st % 2 ? 1 : 2;
        c.devs[0].device = 0;
        c.devs[0].live_bytes = 1000 + st;
        c.devs[0].peak_bytes = 2000 + st;
        vt_cap_note(&k, &c, 1000 + st);
    }
    CHECK(!k.failed);
    CHECK(k.width == 4);
    CHECK_EQ_INT((int)k.nb, 150);
    CHECK(k.records == 600 && k.last_step == 599);
    CHECK(!vt_cap_due(&k, 1000, 0) && !vt_cap_due(&k, 999, 1000) && vt_cap_due(&k, 1000, 1000));
    for (int i = 0; i < 5; i++) {
        char rec[64];
        int n = snprintf(rec, sizeof rec, "{\"t\":\"snapshot\",\"step\":%d}\n", i);
        vt_cap_keep_oom(&k, rec, (size_t)n);
    }
    size_t it = 0;
    const vt_site_row *d1 = vt_cap_site_next(&k, &it), *d2 = vt_cap_site_next(&k, &it);
    CHECK(d1 && d2 && d1->id == 1 && d1->stack == 3 && d2->id == 2 && !vt_cap_site_next(&k, &it));
    vt_buf b;
    vt_buf_init(&b);
    vt_cap_encode_summary(&k, &b, 1 << 20, 1 << 20);
    vt_cap_encode_ooms(&k, &b);
    vt_buf_put(&b, "", 1);
    CHECK(!b.oom);
    json_error_t je;
    json_t *sm = json_loadb(b.p, strchr(b.p, '\n') - b.p, 0, &je);
    CHECK(sm != NULL);
    if (sm) {
        json_t *steps = json_object_get(sm, "steps"), *sites = json_object_get(sm, "sites");
        CHECK_EQ_INT((int)json_array_size(steps), 150);
        CHECK(json_integer_value(json_array_get(steps, 10)) == 40);
        CHECK(json_integer_value(json_object_get(sm, "records")) == 600);
        json_t *s1 = json_array_get(sites, 0), *s2 = json_array_get(sites, 1);
        CHECK(json_integer_value(json_array_get(s1, 0)) == 1);
        /* bucket 10: steps 40..43: floor 4000, peak 4305, frees 43 */
        CHECK(json_integer_value(json_array_get(json_array_get(s1, 1), 10)) == 4000);
        CHECK(json_integer_value(json_array_get(json_array_get(s1, 2), 10)) == 4305);
        CHECK(json_integer_value(json_array_get(json_array_get(s1, 3), 10)) == 43);
        /* the last bucket (steps 596..599, not merged yet) */
        CHECK(json_integer_value(json_array_get(json_array_get(s1, 1), 149)) == 59600);
        CHECK(json_integer_value(json_array_get(json_array_get(s2, 1), 10)) == 0);
        CHECK(json_integer_value(json_array_get(json_array_get(s2, 2), 10)) == 7);
        json_t *dv = json_array_get(json_object_get(sm, "devices"), 0);
        CHECK(json_integer_value(json_array_get(json_array_get(dv, 1), 10)) == 1040);
        CHECK(json_integer_value(json_array_get(json_array_get(dv, 2), 10)) == 2043);
        json_decref(sm);
    }
    /* the OOM records: 0 and 1 (the first), 3 and 4 (the last), each marked */
    const char *o = strchr(b.p, '\n') + 1;
    CHECK(!strcmp(o, "{\"t\":\"snapshot\",\"step\":0,\"summarised\":true}\n"
                     "{\"t\":\"snapshot\",\"step\":1,\"summarised\":true}\n"
                     "{\"t\":\"snapshot\",\"step\":3,\"summarised\":true}\n"
                     "{\"t\":\"snapshot\",\"step\":4,\"summarised\":true}\n"));
    /* a summary too long for its room is coarsened (pairs merged) */
    vt_buf_reset(&b);
    vt_cap_encode_summary(&k, &b, 1 << 20, 1500);
    CHECK(k.nb < 150 && k.nb >= VT_CAP_MIN_BUCKETS && k.width >= 8);
    CHECK(b.len <= 1500 || k.nb == VT_CAP_MIN_BUCKETS);
    vt_buf_free(&b);
    vt_cap_reset(&k);
    CHECK(k.nb == 0 && k.site == NULL);
}

/* Write faults: definitions encoded in an append that failed are taken back
 * (vt_encode_defs_undo) and written again before their next use; those of an append
 * that reached the file are never written twice. */
static void test_encode_defs_undo(void)
{
    vt_encode_defs d;
    memset(&d, 0, sizeof d);
    vt_buf b;
    vt_buf_init(&b);
    vt_site_row s;
    memset(&s, 0, sizeof s);
    s.id = 7;
    s.stack = 4242;   /* not in the stack store: a stack record without frames */
    s.kind = VT_KIND_DEVICE;
    /* written: marked, not taken back */
    vt_encode_defs_mark(&d);
    vt_encode_stack_def(&b, &d, s.stack);
    vt_encode_site_def(&b, &d, &s);
    CHECK(b.len > 0 && strstr(b.p, "\"t\":\"site\",\"id\":7") != NULL);
    vt_buf_reset(&b);
    vt_encode_defs_mark(&d);   /* the next append */
    vt_encode_stack_def(&b, &d, s.stack);
    vt_encode_site_def(&b, &d, &s);
    CHECK_EQ_U64(b.len, 0);   /* in the file already: not again */
    /* a new site in an append that failed */
    vt_site_row s2 = s;
    s2.id = 8;
    s2.stack = 4243;
    vt_encode_defs_mark(&d);
    vt_encode_stack_def(&b, &d, s2.stack);
    vt_encode_site_def(&b, &d, &s2);
    CHECK(b.len > 0);
    vt_encode_defs_undo(&d);   /* those bytes never reached the file */
    vt_buf_reset(&b);
    vt_encode_defs_mark(&d);
    vt_encode_stack_def(&b, &d, s.stack);
    vt_encode_stack_def(&b, &d, s2.stack);
    vt_encode_site_def(&b, &d, &s);
    vt_encode_site_def(&b, &d, &s2);
    CHECK(b.len > 0 && !b.oom);
    vt_buf_put(&b, "", 1);
    CHECK(strstr(b.p, "\"t\":\"site\",\"id\":8") != NULL && strstr(b.p, "\"id\":4243") != NULL);
    CHECK(strstr(b.p, "\"t\":\"site\",\"id\":7") == NULL && strstr(b.p, "\"id\":4242") == NULL);
    /* the gap record */
    vt_buf_reset(&b);
    vt_encode_gap g = { .records = 3, .has_steps = 1, .first_step = 10, .last_step = 12, .first_ns = 5,
                        .last_ns = 9, .err = 28, .error = "No space left on device" };
    vt_encode_gap_record(&b, &g);
    vt_buf_put(&b, "", 1);
    CHECK(strcmp(b.p, "{\"t\":\"gap\",\"records\":3,\"first_step\":10,\"last_step\":12,\"first_ns\":5,"
                      "\"last_ns\":9,\"errno\":28,\"error\":\"No space left on device\"}\n") == 0);
    vt_buf_free(&b);
    vt_encode_defs_clear(&d);
}

static void test_buf(void)
{
    vt_buf b;
    vt_buf_init(&b);
    vt_buf_jstr(&b, "a\"b\\c\n\x01\xff\xc3\xa9", 0);
    vt_buf_put(&b, " ", 1);
    vt_buf_u64(&b, 18446744073709551615ull);
    vt_buf_put(&b, " ", 1);
    vt_buf_i64(&b, -42);
    vt_buf_put(&b, " ", 1);
    vt_buf_fixed6(&b, 0.3125);
    vt_buf_put(&b, " ", 1);
    vt_buf_fixed6(&b, -1);
    vt_buf_put(&b, "", 1);
    CHECK(!strcmp(b.p, "\"a\\\"b\\\\c\\n\\u0001\\u00ff\xc3\xa9\" 18446744073709551615 -42 0.312500 null"));
    json_error_t err;
    b.len = 0;
    vt_buf_jstr(&b, "x\x80y", 0);
    vt_buf_put(&b, "", 1);
    json_t *j = json_loads(b.p, JSON_DECODE_ANY, &err);
    CHECK(j != NULL);
    json_decref(j);
    vt_buf_free(&b);
}

/* Reads the one file in dir; returns its content (malloc'd) or NULL. */
static char *read_only_file(const char *dir, char *path_out)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    struct dirent *e;
    char *data = NULL;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t dl = strlen(dir), nl = strlen(e->d_name);
        if (dl + nl + 2 > 4096)
            break;
        memcpy(path_out, dir, dl);
        path_out[dl] = '/';
        memcpy(path_out + dl + 1, e->d_name, nl + 1);
        FILE *f = fopen(path_out, "r");
        if (!f)
            break;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        data = calloc(1, (size_t)n + 1);
        if (fread(data, 1, (size_t)n, f) != (size_t)n) {}
        fclose(f);
        break;
    }
    closedir(d);
    return data;
}

static void test_writer(void)
{
    char dir[] = "/tmp/vt_core_test.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(vt__config.output, sizeof vt__config.output, "%s/out/sub", dir);
    vt__config.interval_ms = 0;
    vt__config.signal = 0;
    /* the peak compositions of the tests before name their sites, which the file
     * would then define: this file's checks count the sites of this test only */
    vt__lock();
    vt__peak_after_fork();
    vt__unlock();
    vt_alloc_info a = A(0xabc000, 4096, VT_KIND_DEVICE, 0, capture_a());
    vt_core_alloc(&a);
    vt_core_set_meminfo(0, 1000, 2000);
    CHECK_EQ_INT(vt_writer_start(), 0);
    CHECK_EQ_INT(vt_writer_snapshot(VT_TRIG_MANUAL, "after \"a\""), 0);
    vt_oom_info o = {"cudaMalloc", VT_KIND_DEVICE, 0, 1 << 30, 2, 1, 10, 20, a.stack};
    CHECK_EQ_INT(vt_writer_oom(&o), 0);
    CHECK_EQ_INT(vt_writer_oom(&o), 1);           /* same size class: once */
    o.requested = 1 << 20;
    CHECK_EQ_INT(vt_writer_oom(&o), 0);           /* another class */
    struct stat st;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/out", dir);
    CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
    char path[4096];
    char *data = read_only_file(vt__config.output, path);
    CHECK(data != NULL);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    int lines = 0, snaps = 0, stacks = 0, modules = 0, headers = 0;
    for (char *line = data, *nl; data && (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        lines++;
        json_error_t err;
        json_t *j = json_loads(line, 0, &err);
        CHECK(j != NULL);
        if (!j) {
            fprintf(stderr, "bad line: %s\n%s\n", err.text, line);
            continue;
        }
        const char *t = json_string_value(json_object_get(j, "t"));
        if (lines == 1)
            CHECK(t && !strcmp(t, "header"));
        if (t && !strcmp(t, "header")) {
            headers++;
            CHECK_EQ_INT(json_integer_value(json_object_get(j, "version")), VT_FORMAT_VERSION);
            CHECK(json_is_array(json_object_get(j, "cmdline")));
        } else if (t && !strcmp(t, "module")) {
            modules++;
        } else if (t && !strcmp(t, "stack")) {
            stacks++;
            CHECK(json_array_size(json_object_get(j, "frames")) > 0);
        } else if (t && !strcmp(t, "snapshot")) {
            snaps++;
            json_t *allocs = json_object_get(j, "allocations");
            CHECK_EQ_U64(json_array_size(allocs), 1);
            json_t *row = json_array_get(allocs, 0);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 0)), 0xabc000);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 1)), 4096);
            CHECK(!strcmp(json_string_value(json_array_get(row, 2)), "device"));
            json_t *dev = json_array_get(json_object_get(j, "devices"), 0);
            CHECK_EQ_U64(json_integer_value(json_object_get(dev, "free_bytes")), 1000);
            const char *trig = json_string_value(json_object_get(j, "trigger"));
            if (!strcmp(trig, "manual")) {
                CHECK(!strcmp(json_string_value(json_object_get(j, "label")), "after \"a\""));
                CHECK(json_object_get(j, "oom") == NULL);   /* version 4: null left out */
            } else {
                CHECK(!strcmp(trig, "oom"));
                json_t *oom = json_object_get(j, "oom");
                CHECK_EQ_U64(json_integer_value(json_object_get(oom, "free_bytes")), 10);
                CHECK_EQ_U64(json_integer_value(json_object_get(oom, "tracked_bytes")), 4096);
            }
        }
        json_decref(j);
    }
    CHECK_EQ_INT(headers, 1);
    CHECK_EQ_INT(snaps, 3);
    CHECK_EQ_INT(stacks, 1);           /* defined once per file */
    CHECK(modules >= 1);
    free(data);
}

static void test_oom_latch(void)
{
    /* in a child: the latch is permanent */
    pid_t pid = fork();
    if (pid == 0) {
        int fails = 0;
        vt_mem_fail_at(1);  /* the very next internal allocation fails */
        for (int i = 0; i < 5000; i++) {
            vt_alloc_info a = A(0x40000000 + (uint64_t)i * 64, 64, VT_KIND_DEVICE, 2, 900 + (uint32_t)i);
            if (vt_core_alloc(&a) < 0)
                fails++;
        }
        /* latched: nothing recorded after the failure, no crash, tracking off */
        _exit(fails == 5000 && !vt_core_enabled() && vt_core_live_bytes(2) == 0 &&
              vt_core_dropped_records() >= 5000 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Live rows are copied in chunks with the lock released between them (vt_core.h,
 * vt_core_collect): while another thread allocates and frees, every allocation live
 * for the whole collection must be listed exactly once, and no address twice. */
#define CHUNK_LONG 6000                  /* > 2 chunks of 2,048 */
static volatile int churn_stop;

static void *churn_thread(void *arg)
{
    (void)arg;
    uint64_t base = 0x7000000000ull;
    for (unsigned i = 0; !__atomic_load_n(&churn_stop, __ATOMIC_RELAXED); i++) {
        vt_alloc_info a = A(base + (uint64_t)(i % 4096) * 0x1000, 64, VT_KIND_DEVICE, 0, 9);
        vt_taken t;
        if (vt_core_take(a.addr, 0, &t))
            vt_core_commit(&t);
        vt_core_alloc(&a);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the row of site id in a snapshot's "sites" rows (version 3: [site, ...]),
 * or -1. */
static int row_of(json_t *sites, int64_t id)
{
    for (size_t i = 0; i < json_array_size(sites); i++) {
        json_t *row = json_array_get(sites, i);
        if (json_array_size(row) >= 1 && json_integer_value(json_array_get(row, 0)) == id)
            return (int)i;
    }
    return -1;
}

/* Format version 3 (docs/snapshot-format.md "sites"): step records list only the
 * sites that changed ("sites_delta":true), each row as its differences from the
 * previous record's row without trailing zeros; manual records every live site, 11
 * absolute columns; a site that falls to 0 is written once (live bytes -8192).
 * Continues the file of test_writer. */
static void test_writer_delta(void)
{
    uint32_t sb = capture_b();
    vt_alloc_info b = A(0xdef000, 8192, VT_KIND_DEVICE, 0, sb);
    vt_core_alloc(&b);
    vt_writer_kick_step();                        /* seq 4: B is new */
    for (int i = 0; i < 4; i++)
        vt_writer_kick_step();                    /* seq 5..8: the last ones change nothing */
    vt_taken t;
    vt_core_take(0xdef000, 0, &t);                /* B falls to 0 */
    vt_core_commit(&t);
    vt_writer_kick_step();                        /* seq 9: B with 0 */
    vt_writer_kick_step();                        /* seq 10: B absent (unchanged at 0) */
    CHECK_EQ_INT(vt_writer_snapshot(VT_TRIG_MANUAL, "full"), 0);   /* seq 11: complete */
    char path[4096];
    char *data = read_only_file(vt__config.output, path);
    CHECK(data != NULL);
    int seen = 0;
    int64_t site_b = -1;   /* the id of B's site, from its "site" record */
    uint64_t seq = 0;      /* version 4: a delta record leaves out seq when it is the previous + 1 */
    for (char *line = data, *nl; data && (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        json_t *j = json_loads(line, 0, NULL);
        CHECK(j != NULL);
        const char *t = j ? json_string_value(json_object_get(j, "t")) : NULL;
        if (t && !strcmp(t, "site")) {   /* {"t":"site","id":N,"stack":S,"kind":"device","device":0} */
            CHECK(!strcmp(json_string_value(json_object_get(j, "kind")) ?: "", "device"));
            CHECK_EQ_INT(json_integer_value(json_object_get(j, "device")), 0);
            if ((uint64_t)json_integer_value(json_object_get(j, "stack")) == sb) {
                CHECK(site_b < 0);                /* defined once per file */
                site_b = json_integer_value(json_object_get(j, "id"));
            }
        }
        if (!t || strcmp(t, "snapshot")) {
            json_decref(j);
            continue;
        }
        json_t *sites = json_object_get(j, "sites");
        int delta = json_is_true(json_object_get(j, VT_SITES_DELTA_KEY));
        /* version 4: written only when true */
        CHECK(!json_object_get(j, VT_SITES_DELTA_KEY) || delta);
        seq = json_object_get(j, "seq") ? (uint64_t)json_integer_value(json_object_get(j, "seq")) : seq + 1;
        CHECK(!delta || !json_object_get(j, "seq"));
        for (size_t i = 0; i < json_array_size(sites); i++) {
            json_t *row = json_array_get(sites, i);
            size_t n = json_array_size(row);
            if (!delta) {
                CHECK_EQ_U64(n, VT_SITE3_NCOLS);
            } else {
                CHECK(n >= 1 && n <= VT_SITE3_NCOLS);
                CHECK(n == 1 || json_integer_value(json_array_get(row, n - 1)) != 0);
            }
        }
        int rb = row_of(sites, site_b);
        if (seq <= 3) {
            CHECK(!delta);                        /* manual / oom: complete */
        } else if (seq == 4) {
            CHECK(delta);
            CHECK(rb >= 0);                       /* new: differences from 0 = its values */
            json_t *row = json_array_get(sites, (size_t)(rb >= 0 ? rb : 0));
            /* [site, alloc_total, alloc_bytes_total, free_total, live_bytes, live_count,
             *  interval_peak_bytes] (VT_SITE3_ORDER); growth 0, left out */
            CHECK_EQ_U64(json_array_size(row), 7);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 1)), 1);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 2)), 8192);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 3)), 0);
            CHECK_EQ_U64(json_integer_value(json_array_get(row, 4)), 8192);
            seen++;
        } else if (seq == 8) {
            CHECK(delta);
            CHECK_EQ_U64(json_array_size(sites), 0);   /* nothing changed */
            seen++;
        } else if (seq == 9) {
            CHECK(delta);
            CHECK(rb >= 0);
            if (rb >= 0) {   /* no allocation, one free, live -8192 in one allocation */
                json_t *row = json_array_get(sites, (size_t)rb);
                CHECK_EQ_INT(json_integer_value(json_array_get(row, 1)), 0);
                CHECK_EQ_INT(json_integer_value(json_array_get(row, 2)), 0);
                CHECK_EQ_INT(json_integer_value(json_array_get(row, 3)), 1);
                CHECK_EQ_INT(json_integer_value(json_array_get(row, 4)), -8192);
                CHECK_EQ_INT(json_integer_value(json_array_get(row, 5)), -1);
            }
            seen++;
        } else if (seq == 10) {
            CHECK(delta);
            CHECK(rb < 0);
            seen++;
        } else if (seq == 11) {
            CHECK(!delta);                        /* manual: every live site */
            CHECK(rb < 0);
            CHECK(json_array_size(sites) >= 1);   /* 0xabc000 is still live */
            seen++;
        }
        json_decref(j);
    }
    CHECK_EQ_INT(seen, 5);
    free(data);
    vt_core_take(0xabc000, 0, &t);
    vt_core_commit(&t);
}

static void test_chunked_rows(void)
{
    for (int i = 0; i < CHUNK_LONG; i++) {
        vt_alloc_info a = A(0x5000000000ull + (uint64_t)i * 0x1000, 256, VT_KIND_DEVICE, 0, 8);
        CHECK_EQ_INT(vt_core_alloc(&a), 0);
    }
    pthread_t th;
    churn_stop = 0;
    CHECK_EQ_INT(pthread_create(&th, NULL, churn_thread, NULL), 0);
    int bad_long = 0, dups = 0;
    for (int round = 0; round < 30; round++) {
        vt_collect c;
        CHECK_EQ_INT(vt_core_collect(&c, VT_COLLECT_ALLOCS, 10), 0);
        uint64_t *addrs = malloc((c.n_allocs ? c.n_allocs : 1) * sizeof *addrs);
        size_t nlong = 0;
        for (size_t i = 0; i < c.n_allocs; i++) {
            addrs[i] = c.allocs[i].addr;
            if (addrs[i] >= 0x5000000000ull && addrs[i] < 0x5000000000ull + (uint64_t)CHUNK_LONG * 0x1000)
                nlong++;
        }
        qsort(addrs, c.n_allocs, sizeof *addrs, cmp_u64);
        for (size_t i = 1; i < c.n_allocs; i++)
            if (addrs[i] == addrs[i - 1]) dups++;
        if (nlong != CHUNK_LONG) bad_long++;
        free(addrs);
        vt_collect_free(&c);
    }
    __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    CHECK_EQ_INT(bad_long, 0);
    CHECK_EQ_INT(dups, 0);
    for (int i = 0; i < CHUNK_LONG; i++) {
        vt_taken t;
        if (vt_core_take(0x5000000000ull + (uint64_t)i * 0x1000, 0, &t)) vt_core_commit(&t);
    }
    for (unsigned i = 0; i < 4096; i++) {
        vt_taken t;
        if (vt_core_take(0x7000000000ull + (uint64_t)i * 0x1000, 0, &t)) vt_core_commit(&t);
    }
}

/* The hooks' event ring (vt_ring.h, vt_core_post_*): events are applied in ring order
 * by the next query; a ring that fills (no writer thread here to drain it) makes the
 * producer apply the oldest chunk itself; a failed real free puts back what its event
 * took (vt_core_restore with the ticket), unless the address was handed out again or
 * more ring frees than the taken log keeps came in between (counted as dropped). */
static void test_ring(void)
{
    const uint64_t base = 0x50000000000ull;
    const uint32_t n = 3 * VT_RING_SLOTS + 123;   /* fills the ring three times over */
    uint64_t want = vt_core_live_bytes(-1), count = vt_core_live_count();
    for (uint32_t i = 0; i < n; i++)
        vt_core_post_alloc_at(base + (uint64_t)i * 256, 100 + i % 3, 0x1000, 1, VT_KIND_DEVICE, 7);
    for (uint32_t i = 0; i < n; i++)
        want += 100 + i % 3;
    CHECK_EQ_U64(vt_core_live_bytes(-1), want);          /* the query applies the rest */
    CHECK_EQ_U64(vt_core_live_count(), count + n);
    /* every other one freed through the ring; a reused address in between: free
     * first, then the new allocation (ring order = program order) */
    for (uint32_t i = 0; i < n; i += 2) {
        vt_taken t;
        uint64_t tk = vt_core_post_free(base + (uint64_t)i * 256, &t);
        CHECK(tk != 0 && tk != VT_TICKET_SYNC);
        want -= 100 + i % 3;
    }
    vt_taken t;
    CHECK(vt_core_post_free(base + 256, &t) != 0);     /* i = 1 freed ...            */
    vt_core_post_alloc_at(base + 256, 5000, 0x1000, 1, VT_KIND_DEVICE, 8);   /* ... and reused */
    want = want - (100 + 1 % 3) + 5000;
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    CHECK_EQ_U64(vt_core_live_count(), count + n - (n + 1) / 2);
    /* a failed free: what its event took comes back (the driver says the allocation
     * is still there: alive 1) */
    uint64_t tk = vt_core_post_free(base + 256, &t);
    CHECK_EQ_U64(vt_core_live_bytes(1), want - 5000);
    t.rec = NULL;
    t.ticket = tk;
    t.alive = 1;
    vt_core_restore(&t);
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    /* a failed free after CUDA handed the address out again: the newer record stays */
    tk = vt_core_post_free(base + 256, &t);
    vt_core_post_alloc_at(base + 256, 777, 0x1000, 1, VT_KIND_DEVICE, 8);
    t.rec = NULL;
    t.ticket = tk;
    t.alive = 1;
    vt_core_restore(&t);
    want = want - 5000 + 777;
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    /* two frees of the same pointer that both fail (the wrong API twice, at once): the
     * first took the record, the second found none; the driver says it is still
     * there, so it comes back once */
    uint64_t tk1 = vt_core_post_free(base + 256, &t);
    uint64_t tk2 = vt_core_post_free(base + 256, &t);
    CHECK_EQ_U64(vt_core_live_bytes(1), want - 777);
    t.rec = NULL; t.ticket = tk2; t.alive = 1;
    vt_core_restore(&t);
    t.rec = NULL; t.ticket = tk1; t.alive = 1;
    vt_core_restore(&t);
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    /* the losing free of a double free: the driver says nothing is there any more */
    tk1 = vt_core_post_free(base + 256, &t);
    tk2 = vt_core_post_free(base + 256, &t);
    t.rec = NULL; t.ticket = tk1; t.alive = 0;
    vt_core_restore(&t);
    CHECK_EQ_U64(vt_core_live_bytes(1), want - 777);
    vt_core_post_alloc_at(base + 256, 777, 0x1000, 1, VT_KIND_DEVICE, 8);
    /* a failed free whose thread was preempted while a whole ring of later events was
     * applied (a query applied them all first): its taken-log slot went to a newer
     * free, but it never said it succeeded (vt_core_free_done), so its entry was kept
     * aside (taken_late) and it still comes back */
    uint64_t dropped = vt_core_dropped_records();
    tk = vt_core_post_free(base + 3 * 256, &t);
    const uint64_t other = 0x58000000000ull;
    for (uint32_t i = 0; i < VT_RING_SLOTS - 1; i++)
        vt_core_post_alloc_at(other + (uint64_t)i * 256, 1, 0x1000, 1, VT_KIND_DEVICE, 9);
    uint64_t tko = vt_core_post_free(other, &t);
    CHECK(tko == tk + VT_RING_SLOTS);                    /* the same log slot */
    vt_core_free_done(tko);
    want += VT_RING_SLOTS - 2 - (100 + 3 % 3);
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    t.rec = NULL; t.ticket = tk; t.alive = 1;
    vt_core_restore(&t);
    want += 100 + 3 % 3;
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    CHECK_EQ_U64(vt_core_dropped_records(), dropped);
    CHECK(vt_core_post_free(base + 3 * 256, &t) != 0);
    want -= 100 + 3 % 3;
    for (uint32_t i = 1; i < VT_RING_SLOTS - 1; i++)
        vt_core_post_free(other + (uint64_t)i * 256, &t);
    want -= VT_RING_SLOTS - 2;
    for (uint32_t i = 5; i < 5 + 2 * 300; i += 2) {
        CHECK(vt_core_post_free(base + (uint64_t)i * 256, &t) != 0);
        want -= 100 + i % 3;
    }
    CHECK_EQ_U64(vt_core_live_bytes(1), want);
    /* the rest, then empty */
    for (uint32_t i = 5 + 2 * 300; i < n; i += 2)
        CHECK(vt_core_post_free(base + (uint64_t)i * 256, &t) != 0);
    CHECK(vt_core_post_free(base + 256, &t) != 0);
    CHECK_EQ_U64(vt_core_live_bytes(1), 0);
}

/* Four producers at once through the ring, each allocating and freeing its own
 * addresses (20,000 pairs, more than the ring holds, nobody draining but the
 * producers themselves), while a fifth thread queries: exact at the end. */
#define RING_THREADS 4
#define RING_PAIRS 20000
static void *ring_worker(void *arg)
{
    uint64_t base = 0x60000000000ull + (uint64_t)(uintptr_t)arg * 0x100000000ull;
    vt_taken t;
    for (uint32_t i = 0; i < RING_PAIRS; i++) {
        uint64_t a = base + (uint64_t)(i % 64) * 512;
        vt_core_post_alloc_at(a, 64, 0x1000, 2, VT_KIND_DEVICE, 9);
        if (i % 64 == 63)
            for (uint32_t j = 0; j < 64; j++)
                vt_core_post_free(base + (uint64_t)j * 512, &t);
    }
    return NULL;
}
static int ring_stop;
static void *ring_reader(void *arg)
{
    (void)arg;
    uint64_t max = 0;
    while (!__atomic_load_n(&ring_stop, __ATOMIC_ACQUIRE)) {
        uint64_t v = vt_core_live_bytes(2);
        if (v > max)
            max = v;
    }
    CHECK(max <= (uint64_t)RING_THREADS * 64 * 64);
    return NULL;
}
static void test_ring_threads(void)
{
    pthread_t th[RING_THREADS], rd;
    pthread_create(&rd, NULL, ring_reader, NULL);
    for (uintptr_t i = 0; i < RING_THREADS; i++)
        pthread_create(&th[i], NULL, ring_worker, (void *)i);
    for (int i = 0; i < RING_THREADS; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&ring_stop, 1, __ATOMIC_RELEASE);
    pthread_join(rd, NULL);
    /* RING_PAIRS % 64 = 32 left live per thread */
    CHECK_EQ_U64(vt_core_live_bytes(2), (uint64_t)RING_THREADS * (RING_PAIRS % 64) * 64);
    vt_taken t;
    for (uintptr_t k = 0; k < RING_THREADS; k++)
        for (uint32_t j = 0; j < RING_PAIRS % 64; j++)
            vt_core_post_free(0x60000000000ull + k * 0x100000000ull + (uint64_t)j * 512, &t);
    CHECK_EQ_U64(vt_core_live_bytes(2), 0);
}

/* The writer thread goes on draining the event ring while another thread writes a
 * snapshot (holds the writer's output lock, as a manual, OOM or exit snapshot of a
 * long live list does for up to a second): its own snapshot due meanwhile (here a
 * step's) is tried again later instead of blocking it (issue 7 figure 5). Posted
 * through the ring in rounds of VT_RING_KICK events, 6 rounds (more than the ring
 * holds): each round must be drained by the writer thread while the lock is held,
 * and no hook may find the ring full. */
static int held_calls;
static int held_undrained;
static uint64_t held_ring_full;

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int ring_drained_within(long ms)
{
    for (long i = 0; i < ms; i++) {
        if (!vt_ring_pending(&vt__ring))
            return 1;
        nap_ms(1);
    }
    return !vt_ring_pending(&vt__ring);
}

static void held_cb(const char *trigger)
{
    if (strcmp(trigger, VT_TRIGGER_MANUAL) != 0 || held_calls++ != 0)
        return;
    vt_writer_post_step();   /* the writer thread's step snapshot finds the lock held */
    nap_ms(30);
    uint64_t full0 = vt_core_ring_full_total();
    const uint64_t base = 0x7100000000ull;
    for (uint64_t round = 0; round < 6; round++) {
        for (uint64_t i = 0; i < VT_RING_KICK; i++)
            vt_core_post_alloc_at(base + (round * VT_RING_KICK + i) * 256, 64, 0x1000, 0,
                                  VT_KIND_DEVICE, 9);
        held_undrained += !ring_drained_within(2000);
    }
    held_ring_full = vt_core_ring_full_total() - full0;
}

static int count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    char line[1 << 16];
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static void test_writer_drains_while_held(void)
{
    const char *path = vt_writer_path();
    CHECK(path[0] != 0);
    int steps0 = count_in_file(path, "\"trigger\":\"step\"");
    uint64_t live0 = vt_core_live_count();
    __atomic_store_n(&vt_writer_test_held, held_cb, __ATOMIC_RELEASE);
    CHECK_EQ_INT(vt_writer_snapshot(VT_TRIG_MANUAL, "held"), 0);
    __atomic_store_n(&vt_writer_test_held, NULL, __ATOMIC_RELEASE);
    CHECK_EQ_INT(held_calls, 1);
    CHECK_EQ_INT(held_undrained, 0);
    CHECK_EQ_U64(held_ring_full, 0);
    /* the step snapshot is written once the lock is free */
    int steps = steps0;
    for (int i = 0; i < 2000 && steps == steps0; i++) {
        nap_ms(1);
        steps = count_in_file(path, "\"trigger\":\"step\"");
    }
    CHECK_EQ_INT(steps, steps0 + 1);
    CHECK_EQ_U64(vt_core_live_count(), live0 + 6 * VT_RING_KICK);
    for (uint64_t i = 0; i < 6 * VT_RING_KICK; i++) {
        vt_taken t;
        vt_core_free_done(vt_core_post_free(0x7100000000ull + i * 256, &t));
    }
    CHECK_EQ_U64(vt_core_live_count(), live0);
}

/* A step's snapshot is collected on the thread that marks it and written by the writer
 * thread: a step returns while the writer is held inside the write of an earlier step
 * (the test hook stands for a write that takes long: a slow disk, a full pipe). With
 * VT_STEPQ_MAX steps waiting, the next one waits for a slot (on its own thread here)
 * and goes on once the writer takes one: nothing deadlocks, nothing is merged. Then
 * every step is in the file, in order, each with the step count it was collected at,
 * and a manual snapshot comes after them. No timing is asserted: the hook waits for
 * the test to release it (10 s at most: a step that waited for the write would show
 * as the hook timing out, not as a hang). */
static int sw_entered, sw_release, sw_timed_out, sw_left, sw_marked;

static void step_hold_cb(const char *trigger)
{
    if (strcmp(trigger, VT_TRIGGER_STEP) != 0 || __atomic_load_n(&sw_entered, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&sw_entered, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 10000 && !__atomic_load_n(&sw_release, __ATOMIC_ACQUIRE); i++)
        nap_ms(1);
    if (!__atomic_load_n(&sw_release, __ATOMIC_ACQUIRE))
        __atomic_store_n(&sw_timed_out, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&sw_left, 1, __ATOMIC_RELEASE);
}

static void mark_step(void)   /* what vramtrace_step does with VRAMTRACE_STEP_EVERY=1 */
{
    vt_core_step();
    vt_writer_kick_step();
}

static void *step_marker(void *arg)
{
    (void)arg;
    mark_step();
    __atomic_store_n(&sw_marked, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_writer_step_not_waiting(void)
{
    const char *path = vt_writer_path();
    CHECK(path[0] != 0);
    CHECK_EQ_INT(vt_writer_snapshot(VT_TRIG_MANUAL, "before steps"), 0);   /* queue empty */
    uint64_t first = vt_core_step() + 1;   /* (marks one step too: not one of ours) */
    __atomic_store_n(&vt_writer_test_held, step_hold_cb, __ATOMIC_RELEASE);
    mark_step();                                    /* step `first`: the writer takes it */
    for (int i = 0; i < 10000 && !__atomic_load_n(&sw_entered, __ATOMIC_ACQUIRE); i++)
        nap_ms(1);
    CHECK(__atomic_load_n(&sw_entered, __ATOMIC_ACQUIRE));
    for (int i = 0; i < VT_STEPQ_MAX; i++)          /* returned while the write is held */
        mark_step();
    CHECK(!__atomic_load_n(&sw_left, __ATOMIC_ACQUIRE));
    size_t queued;
    int waiting;
    vt_stepq_stats(&queued, &waiting);
    CHECK_EQ_U64(queued, VT_STEPQ_MAX);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, step_marker, NULL) == 0);   /* the queue is full */
    for (int i = 0; i < 10000 && (vt_stepq_stats(&queued, &waiting), waiting == 0); i++)
        nap_ms(1);
    CHECK_EQ_INT(waiting, 1);
    CHECK(!__atomic_load_n(&sw_marked, __ATOMIC_ACQUIRE));
    CHECK(!__atomic_load_n(&sw_left, __ATOMIC_ACQUIRE));
    __atomic_store_n(&sw_release, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK(__atomic_load_n(&sw_marked, __ATOMIC_ACQUIRE));
    CHECK(!__atomic_load_n(&sw_timed_out, __ATOMIC_ACQUIRE));
    CHECK_EQ_INT(vt_writer_snapshot(VT_TRIG_MANUAL, "after steps"), 0);
    __atomic_store_n(&vt_writer_test_held, NULL, __ATOMIC_RELEASE);
    CHECK_EQ_INT(vt_stepq_unwritten(), 0);

    /* the file: after "before steps", the steps first .. first + VT_STEPQ_MAX + 1 in
     * order with rising seq, then "after steps" */
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char line[1 << 20];
    int phase = 0;   /* 0 before the first manual, 1 steps, 2 after */
    uint64_t want = first, last_seq = 0, seq = 0;
    while (f && fgets(line, sizeof line, f)) {
        json_t *j = json_loads(line, 0, NULL);
        const char *t = j ? json_string_value(json_object_get(j, "t")) : NULL;
        if (t && !strcmp(t, "snapshot")) {
            const char *trig = json_string_value(json_object_get(j, "trigger"));
            const char *label = json_string_value(json_object_get(j, "label"));
            /* version 4: a delta record leaves out seq when it is the previous one + 1 */
            seq = json_object_get(j, "seq") ? (uint64_t)json_integer_value(json_object_get(j, "seq")) : seq + 1;
            if (phase == 0 && label && !strcmp(label, "before steps")) {
                phase = 1;
            } else if (phase == 1 && trig && !strcmp(trig, "step")) {
                CHECK_EQ_U64((uint64_t)json_integer_value(json_object_get(j, "step")), want);
                CHECK(seq > last_seq);
                want++;
            } else if (phase == 1) {
                CHECK(label && !strcmp(label, "after steps"));
                CHECK(seq > last_seq);
                phase = 2;
            }
            if (phase)
                last_seq = seq;
        }
        json_decref(j);
    }
    if (f)
        fclose(f);
    CHECK_EQ_INT(phase, 2);
    CHECK_EQ_U64(want, first + VT_STEPQ_MAX + 2);
}

/* vt_log: a name the program chose cannot forge a line or send a terminal escape */
static void test_log_controls(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    int saved = dup(2);
    dup2(fds[1], 2);
    int level = vt__log_level;
    vt__log_level = VT_LOG_WARN;
    vt_log(VT_LOG_WARN, "possible leak: %s growing", "f\x1b]0;t\x07\x1b[2J\r\nFAKE\x7f\xc3\xa9"
           "|\x9b|\xc2\x9b|\xe2\x80\xae|\xff|\xe2\x82|\xf0\x9f\x98\x80");
    vt__log_level = level;
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    char buf[256] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    CHECK(n > 0);
    buf[n > 0 ? n : 0] = 0;
    /* kept: é and 😀; refused: raw 0x9b, U+009B (CSI), U+202E, 0xff, a cut € */
    CHECK(!strcmp(buf, "vramtrace: possible leak: f?]0;t??[2J??FAKE?\xc3\xa9|?|??|???|?|??|\xf0\x9f\x98\x80 growing\n"));
}

/* What was live at the peak (vt_peak.c): 20 sites on a device not used before, each
 * rise over 1 % (so each is copied); the 16 largest named, the rest summed; a buffer
 * allocated and freed at once stays in the composition at its size; the process's
 * composition counts every device. */
static void test_peak_composition(void)
{
    const uint64_t G = 1ull << 30;
    const uint64_t base = 0x7000000000ull;
    vt_peak_comp pc;
    CHECK_EQ_INT(vt_core_peak_sites(5, &pc), 0);   /* nothing on device 5 yet */
    CHECK_EQ_U64(pc.gen, 0);
    for (int i = 0; i < 20; i++) {
        vt_alloc_info a = A(base + (uint64_t)i * 0x1000, (uint64_t)(i + 1) * G, VT_KIND_DEVICE, 5, 3000 + i);
        CHECK_EQ_INT(vt_core_alloc(&a), 0);
    }
    CHECK_EQ_INT(vt_core_peak_sites(5, &pc), 1);
    CHECK_EQ_INT(pc.device, 5);
    CHECK_EQ_U64(pc.bytes, 210 * G);
    CHECK_EQ_U64(pc.n, VT_PEAK_TOP);
    CHECK_EQ_U64(pc.top[0].bytes, 20 * G);
    CHECK_EQ_U64(pc.top[0].stack, 3019);
    CHECK_EQ_U64(pc.top[15].bytes, 5 * G);
    CHECK_EQ_U64(pc.other_bytes, 10 * G);       /* 1 + 2 + 3 + 4 GiB */
    CHECK_EQ_U64(pc.other_sites, 4);
    /* a temporary makes the peak, then is gone */
    vt_alloc_info tmp = A(base + 0x100000, 100 * G, VT_KIND_DEVICE, 5, 4000);
    CHECK_EQ_INT(vt_core_alloc(&tmp), 0);
    vt_taken t;
    CHECK_EQ_INT(vt_core_take(tmp.addr, 0, &t), 1); vt_core_commit(&t);
    CHECK_EQ_INT(vt_core_peak_sites(5, &pc), 1);
    CHECK_EQ_U64(pc.bytes, 310 * G);
    CHECK_EQ_U64(pc.top[0].stack, 4000);
    CHECK_EQ_U64(pc.top[0].bytes, 100 * G);
    CHECK_EQ_U64(pc.other_bytes, 15 * G);       /* 5 GiB moved to "other" */
    uint64_t sum = pc.other_bytes;
    for (uint32_t i = 0; i < pc.n; i++) sum += pc.top[i].bytes;
    CHECK_EQ_U64(sum, pc.bytes);
    /* the process's: at least this device's bytes, on every device */
    CHECK_EQ_INT(vt_core_peak_sites(VT_PEAK_PROCESS, &pc), 1);
    CHECK_EQ_INT(pc.device, VT_PEAK_PROCESS);
    CHECK(pc.bytes >= 310 * G);
    CHECK_EQ_U64(pc.top[0].stack, 4000);
    /* a collection carries them: the process's first */
    vt_collect c;
    CHECK_EQ_INT(vt_core_collect(&c, 0, 5), 0);
    CHECK(c.n_peaks >= 2 && c.peaks[0].device == VT_PEAK_PROCESS);
    int found = 0;
    for (size_t i = 0; i < c.n_peaks; i++) found |= c.peaks[i].device == 5 && c.peaks[i].bytes == 310 * G;
    CHECK(found);
    vt_collect_free(&c);
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_INT(vt_core_take(base + (uint64_t)i * 0x1000, 0, &t), 1);
        vt_core_commit(&t);
    }
    CHECK_EQ_INT(vt_core_peak_sites(5, &pc), 1);   /* kept after the frees */
    CHECK_EQ_U64(pc.bytes, 310 * G);
}

int main(void)
{
    test_log_controls();
    vt_config_load();
    vt__config.leak_steps = 5;
    CHECK_EQ_INT(vt_core_init(), 0);
    vt_stack_init(0);
    test_table();
    test_reset();
    test_reset_during_free();
    test_double_free_race();
    test_big_table();
    test_ring();
    test_ring_threads();
    test_vmm();
    test_leak_detector();
    test_fragmentation();
    test_stacks();
    test_config();
    test_cap();
    test_buf();
    test_encode_defs_undo();
    test_oom_latch();
    test_writer();
    test_writer_delta();
    test_chunked_rows();
    test_writer_drains_while_held();
    test_writer_step_not_waiting();
    test_peak_composition();
    TEST_DONE();
}
