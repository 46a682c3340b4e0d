/*
 * sim_check.h - tiny assertion helpers for the simulated-device tests.
 * CHECK(cond) and CHECK_EQ(a, b) print file:line and the values, then exit(1).
 * Header-only; not thread-safe beyond what fprintf/exit give.
 */
#ifndef SIMCUDA_SIM_CHECK_H
#define SIMCUDA_SIM_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#define CHECK_EQ(a, b)                                                            \
    do {                                                                          \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_) {                                                           \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %llu, %s == %llu\n",   \
                    __FILE__, __LINE__, #a, a_, #b, b_);                          \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#define MiB ((size_t)1 << 20)

#endif
