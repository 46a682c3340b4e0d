/* test_index.c — the live-allocation index (preload/track/vt_index.h) against a reference
 * model, without LD_PRELOAD.
 *
 * 1. 200,000 random operations (insert, upsert of a present or absent key, find,
 *    remove) over 4,096 possible addresses, checked after each against a plain array
 *    (addr -> id); the index grows from empty through several doublings.
 * 2. Worst case for backward-shift deletion: keys that collide on their home slot and
 *    wrap around the end of the array; every key stays findable after removals.
 * 3. Out of memory while growing: vt_index_insert / vt_index_upsert return -1 and the
 *    index is unchanged and still answers.
 */
#include "vt_index.h"
#include "vt_mem.h"
#include "vt_test.h"

#include <stdint.h>
#include <string.h>

#define NKEYS 4096

static uint64_t keys[NKEYS];           /* id -> address of the key (the "records") */
static int      present[NKEYS];        /* model: is id's key in the index          */

static uint64_t addr_of(uint32_t id) { return keys[id]; }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t xr(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void check_all(const vt_index *x)
{
    size_t n = 0;
    for (uint32_t id = 0; id < NKEYS; id++) {
        uint32_t got = vt_index_find(x, keys[id], addr_of, NULL);
        if (present[id]) {
            n++;
            if (got != id) { CHECK_EQ_U64(got, id); return; }
        } else if (got != UINT32_MAX) {
            CHECK_EQ_U64(got, UINT32_MAX);
            return;
        }
    }
    CHECK_EQ_U64(x->n, n);
}

static void random_ops(void)
{
    vt_index x;
    memset(&x, 0, sizeof x);
    for (uint32_t i = 0; i < NKEYS; i++)
        keys[i] = 0x7f0000000000ull + (uint64_t)i * 512;   /* CUDA-like: aligned */
    memset(present, 0, sizeof present);
    CHECK_EQ_U64(vt_index_find(&x, keys[0], addr_of, NULL), UINT32_MAX);  /* empty */
    for (int op = 0; op < 200000; op++) {
        uint32_t id = (uint32_t)(xr() % NKEYS);
        switch (xr() % 4) {
        case 0:
            if (!present[id]) {
                CHECK_EQ_INT(vt_index_insert(&x, keys[id], id), 0);
                present[id] = 1;
            }
            break;
        case 1: {
            uint32_t old = 77;
            int r = vt_index_upsert(&x, keys[id], id, addr_of, &old);
            CHECK_EQ_INT(r, present[id] ? 1 : 0);
            if (present[id])
                CHECK_EQ_U64(old, id);
            present[id] = 1;
            break;
        }
        default: {
            uint32_t slot = 0;
            uint32_t got = vt_index_find(&x, keys[id], addr_of, &slot);
            CHECK_EQ_U64(got, present[id] ? id : UINT32_MAX);
            if (got == id && (xr() & 1)) {
                vt_index_remove_slot(&x, slot);
                present[id] = 0;
            }
        }
        }
        if (op % 10000 == 0)
            check_all(&x);
    }
    check_all(&x);
    CHECK(vt_index_bytes(&x) >= x.n * 8 * 4 / 3);
    vt_index_free(&x);
    CHECK_EQ_U64(vt_index_bytes(&x), 0);
}

/* Keys whose hash tags put them in the last slots of a 1,024-slot array, so probe
 * runs wrap to slot 0, then removals in every order. */
static void wrap_and_shift(void)
{
    vt_index x;
    memset(&x, 0, sizeof x);
    CHECK_EQ_INT(vt_index_reserve(&x), 0);
    uint32_t mask = x.mask, n = 0;
    for (uint64_t a = 0x1000; n < 40 && a < 0x100000000ull; a += 0x100) {
        uint32_t home = (uint32_t)(vt_index_hash(a) >> 32) & mask;
        if (home >= mask - 3)
            keys[n++] = a;
    }
    CHECK_EQ_U64(n, 40);
    memset(present, 0, sizeof present);
    for (uint32_t i = 0; i < n; i++) {
        CHECK_EQ_INT(vt_index_insert(&x, keys[i], i), 0);
        present[i] = 1;
    }
    CHECK_EQ_U64(x.mask, mask);   /* no growth: the wrap is real */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (k * 7) % n;  /* a scattered order */
        uint32_t slot = 0;
        CHECK_EQ_U64(vt_index_find(&x, keys[i], addr_of, &slot), i);
        vt_index_remove_slot(&x, slot);
        present[i] = 0;
        for (uint32_t j = 0; j < n; j++)
            CHECK_EQ_U64(vt_index_find(&x, keys[j], addr_of, NULL), present[j] ? j : UINT32_MAX);
    }
    CHECK_EQ_U64(x.n, 0);
    vt_index_free(&x);
}

static void out_of_memory(void)
{
    vt_index x;
    memset(&x, 0, sizeof x);
    for (uint32_t i = 0; i < NKEYS; i++)
        keys[i] = 0x5000000000ull + (uint64_t)i * 4096;
    uint32_t i = 0;
    for (; i < 768; i++)                     /* 3/4 of 1,024: full without growing */
        CHECK_EQ_INT(vt_index_insert(&x, keys[i], i), 0);
    vt_mem_fail_at(1);                       /* the next growth fails */
    CHECK_EQ_INT(vt_index_insert(&x, keys[i], i), -1);
    vt_mem_fail_at(1);
    uint32_t old;
    CHECK_EQ_INT(vt_index_upsert(&x, keys[i], i, addr_of, &old), -1);
    vt_mem_fail_at(0);
    CHECK_EQ_U64(x.n, 768);
    for (uint32_t j = 0; j < 768; j++)
        CHECK_EQ_U64(vt_index_find(&x, keys[j], addr_of, NULL), j);
    CHECK_EQ_U64(vt_index_find(&x, keys[768], addr_of, NULL), UINT32_MAX);
    CHECK_EQ_INT(vt_index_insert(&x, keys[768], 768), 0);   /* memory back: grows */
    CHECK_EQ_U64(vt_index_find(&x, keys[768], addr_of, NULL), 768);
    vt_index_free(&x);
}

int main(void)
{
    random_ops();
    wrap_and_shift();
    out_of_memory();
    TEST_DONE();
}
