/* prog_dlsym_rt.c — uses the runtime the way Python's ctypes does: dlopen the
 * runtime privately and dlsym(handle, "cudaMalloc"). Links against no CUDA library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

int main(void)
{
    int tracked = getenv("VT_EXPECT_TRACKED") && !strcmp(getenv("VT_EXPECT_TRACKED"), "1");
    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int (*cmalloc)(void **, size_t) = (int (*)(void **, size_t))dlsym(h, "cudaMalloc");
    int (*cfree)(void *) = (int (*)(void *))dlsym(h, "cudaFree");
    int (*chost)(void **, size_t) = (int (*)(void **, size_t))dlsym(h, "cudaMallocHost");
    int (*cfreehost)(void *) = (int (*)(void *))dlsym(h, "cudaFreeHost");
    /* a name vramtrace does not hook: exactly glibc's answer */
    void *sync = dlsym(h, "cudaDeviceSynchronize");
    void *missing = dlsym(h, "cudaNoSuchFunction");
    const char *err = dlerror();
    if (!cmalloc || !cfree || !chost || !cfreehost || !sync || missing || !err) {
        fprintf(stderr, "dlsym results wrong\n");
        return 1;
    }
    int failures = 0;
    void *a, *b, *c;
    failures += cmalloc(&a, 3000) != 0;
    failures += cmalloc(&b, 5000) != 0;
    failures += chost(&c, 700) != 0;
    if (tracked && vramtrace_live_bytes(-1) != 8700) {
        fprintf(stderr, "live %llu != 8700\n", (unsigned long long)vramtrace_live_bytes(-1));
        failures++;
    }
    failures += cfree(a) != 0;
    failures += cfreehost(c) != 0;
    if (tracked && vramtrace_live_bytes(-1) != 5000) {
        fprintf(stderr, "live %llu != 5000\n", (unsigned long long)vramtrace_live_bytes(-1));
        failures++;
    }
    failures += cfree(b) != 0;
    if (tracked && (vramtrace_live_bytes(-1) != 0 || vramtrace_peak_bytes(-1) != 8700)) {
        fprintf(stderr, "final live/peak wrong\n");
        failures++;
    }
    return failures ? 1 : 0;
}
