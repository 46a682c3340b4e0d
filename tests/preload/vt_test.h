/* vt_test.h — tiny assertion helpers for the preload's C tests. Each failed check
 * prints file:line and the values and makes the test exit 1 at the end. */
#ifndef VT_TEST_H
#define VT_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int vt_test_failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    vt_test_failures++; } } while (0)

#define CHECK_EQ_U64(a, b) do { unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
    if (va_ != vb_) { fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", \
        __FILE__, __LINE__, #a, #b, va_, vb_); vt_test_failures++; } } while (0)

#define CHECK_EQ_INT(a, b) do { long long va_ = (long long)(a), vb_ = (long long)(b); \
    if (va_ != vb_) { fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
        __FILE__, __LINE__, #a, #b, va_, vb_); vt_test_failures++; } } while (0)

#define TEST_DONE() do { if (vt_test_failures) { fprintf(stderr, "%d check(s) failed\n", vt_test_failures); return 1; } \
    printf("ok\n"); return 0; } while (0)

#endif
