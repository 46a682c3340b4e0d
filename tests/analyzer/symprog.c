/* symprog.c — writes a snapshot stream about itself for the symbolization test:
 * its own module (path, GNU build-id, load bias) and a stack of three frames at
 * known places, each a return address as the preload writes them (one in
 * known_function whose call ends its source line, so only the offset-1 rule
 * finds the call's line; one in known_caller; one in main), with no names, so names, files and lines can only come from
 * libdw. Also writes a second stream whose build-id is wrong (libdw must be
 * skipped, the written name "fallback_name" used) and lines.json with the
 * truth. Usage: analyzer_symprog OUTDIR  (built -O0 -g). Also built as C++
 * (analyzer_symprog_cxx, gcc -x c++): then its functions have mangled ELF and
 * DWARF linkage names that the report must demangle. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char build_id[128];
static uintptr_t bias;
static int kf_line, l1, l2;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    bias = info->dlpi_addr;   /* the first object is the program itself */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                for (unsigned k = 0; k < n->n_descsz && k * 2 + 2 < sizeof build_id; k++)
                    sprintf(build_id + 2 * k, "%02x", desc[k]);
                return 1;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 1;
}

__attribute__((noinline)) static void *capture(void)
{
    return __builtin_return_address(0);
}

static void *ra0;

/* Stores its return address; the call is the last instruction of its line. */
__attribute__((noinline)) static void capture_into(void **slot)
{
    *slot = __builtin_return_address(0);
}

static const int known_function_line = __LINE__ + 3;
__attribute__((noinline)) int known_function(int x)
{
    capture_into(&ra0);
    return x * 3 + 1;
}

__attribute__((noinline)) void *known_caller(void)
{
    void *ra = capture(); l1 = __LINE__;
    return ra;
}

static void write_stream(const char *path, const char *exe, const char *bid, uint64_t f0, uint64_t f1, uint64_t f2)
{
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fprintf(f, "{\"t\":\"header\",\"format\":\"vramtrace-snapshot\",\"version\":1,\"pid\":%d,\"host\":\"symhost\","
               "\"start_ns\":1,\"rank\":null}\n", (int)getpid());
    fprintf(f, "{\"t\":\"module\",\"id\":1,\"path\":\"%s\",\"build_id\":\"%s\",\"bias\":%llu}\n", exe, bid,
            (unsigned long long)bias);
    fprintf(f, "{\"t\":\"stack\",\"id\":5,\"frames\":[[1,%llu,\"fallback_name\"],[1,%llu,null],[1,%llu,null]]}\n",
            (unsigned long long)f0, (unsigned long long)f1, (unsigned long long)f2);
    fprintf(f, "{\"t\":\"snapshot\",\"seq\":1,\"trigger\":\"step\",\"step\":0,\"step_marked\":true,\"sites\":"
               "[{\"stack\":5,\"kind\":\"device\",\"device\":0,\"live_bytes\":1024,\"interval_peak_bytes\":1024}]}\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: %s OUTDIR\n", argv[0]); return 2; }
    kf_line = known_function_line;
    dl_iterate_phdr(phdr_cb, NULL);
    char exe[PATH_MAX];
    if (!realpath("/proc/self/exe", exe)) { perror("realpath"); return 1; }
    known_function(1);
    void *ra1 = known_caller();
    void *ra2 = capture(); l2 = __LINE__;
    uint64_t f0 = (uint64_t)(uintptr_t)ra0 - bias;
    uint64_t f1 = (uint64_t)(uintptr_t)ra1 - bias, f2 = (uint64_t)(uintptr_t)ra2 - bias;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/good.jsonl", argv[1]);
    write_stream(path, exe, build_id, f0, f1, f2);
    snprintf(path, sizeof path, "%s/badid.jsonl", argv[1]);
    write_stream(path, exe, "0000000000000000000000000000000000000000", f0, f1, f2);
    snprintf(path, sizeof path, "%s/lines.json", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "{\"known_function\":%d,\"known_caller\":%d,\"main\":%d,\"build_id\":\"%s\",\"known_function_offset\":%d}\n",
            kf_line, l1, l2, build_id, known_function(0));
    fclose(f);
    return build_id[0] ? 0 : 1;
}
