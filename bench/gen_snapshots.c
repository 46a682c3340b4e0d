/* gen_snapshots.c — writes a synthetic snapshot file (docs/snapshot-format.md, version
 * 3, or 2 / 1 with --v2 / --v1) for the analyzer benchmark (vt_bench.py --figures 7 and 10), so no
 * big input is committed.
 *
 * Shape: one header, one module, S stacks of 6 frames (version 3: and S sites), then
 * N "step" snapshots of one device, each listing all S sites (worst case: every site
 * live in every snapshot), and a last "exit" snapshot. Each site is simulated allocation by allocation, so its
 * counters are consistent from step to step: it holds one block of 1-64 MiB from the
 * start, and in every step allocates and frees a temporary of 1-16 MiB (so its
 * alloc/free counters move in every step); site k % 10 == 0 also keeps 4 KiB more per
 * step (a leak: live bytes, live count and growth rise), k % 10 == 1 allocates a
 * second block on odd steps and frees it on even ones (rises and falls back).
 * Values are deterministic.
 *
 * Because every site allocates and frees in every step, every row changes in every
 * snapshot: the delta records ("sites_delta":true) list all S rows — the worst case
 * for deltas. Version 2 writes them absolute; version 3 as differences from the
 * previous row, counters first, each site named by the id of its "site" record
 * (a stable site's row is [k,1,size,1]).
 *
 * Usage: gen_snapshots [--v1|--v2] FILE N S   (N snapshots, S sites). Prints
 * "bytes=<file size>". Exit 0, 1 on an I/O or memory error, 2 usage.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counters in version 2's column order (VT_SITE_LIVE_BYTES..); version 3 writes
 * them in V3_ORDER (common/vt_format.h VT_SITE3_ORDER). */
enum { LIVE, COUNT, IPEAK, ALLOCS, ABYTES, FREES, GSTEPS, GBYTES, NV };
static const int V3_ORDER[NV] = {ALLOCS, ABYTES, FREES, LIVE, COUNT, IPEAK, GSTEPS, GBYTES};
static const char *const names[NV] = {"live_bytes", "live_count", "interval_peak_bytes", "alloc_total",
                                      "alloc_bytes_total", "free_total", "growth_steps", "growth_bytes"};

/* Site k (1-based) through step i (1-based): v[] from its values before the step. */
static void step_site(long k, long i, int64_t v[NV])
{
    int64_t base = (int64_t)(k % 64 + 1) << 20, tmp = (int64_t)(k % 16 + 1) << 20;
    int64_t live0 = v[LIVE];
    v[ALLOCS]++, v[ABYTES] += tmp, v[FREES]++;          /* the step's temporary */
    if (k % 10 == 0) {                                  /* leak: 4 KiB kept per step */
        v[ALLOCS]++, v[ABYTES] += 4096, v[LIVE] += 4096, v[COUNT]++;
        v[GSTEPS]++, v[GBYTES] += 4096;
    } else if (k % 10 == 1) {
        if (i & 1)
            v[ALLOCS]++, v[ABYTES] += base, v[LIVE] += base, v[COUNT]++;
        else
            v[FREES]++, v[LIVE] -= base, v[COUNT]--;
    }
    v[IPEAK] = (live0 > v[LIVE] ? live0 : v[LIVE]) + tmp;
}

int main(int argc, char **argv)
{
    int version = 3;
    if (argc > 1 && (!strcmp(argv[1], "--v1") || !strcmp(argv[1], "--v2"))) {
        version = argv[1][3] - '0';
        argv++;
        argc--;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: gen_snapshots [--v1|--v2] FILE N S\n");
        return 2;
    }
    long n = atol(argv[2]), s = atol(argv[3]);
    if (n < 1 || s < 1)
        return 2;
    int64_t (*cur)[NV] = calloc((size_t)s + 1, sizeof *cur), (*prev)[NV] = calloc((size_t)s + 1, sizeof *prev);
    if (!cur || !prev) {
        fprintf(stderr, "gen_snapshots: out of memory\n");
        return 1;
    }
    for (long k = 1; k <= s; k++) {   /* the block each site holds from the start */
        int64_t base = (int64_t)(k % 64 + 1) << 20;
        cur[k][LIVE] = base, cur[k][COUNT] = 1, cur[k][IPEAK] = base, cur[k][ALLOCS] = 1, cur[k][ABYTES] = base;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char obuf[1 << 20];
    setvbuf(f, obuf, _IOFBF, sizeof obuf);
    const uint64_t mono0 = 1000000000ull, step_ns = 50000000ull;
    fprintf(f, "{\"t\":\"header\",\"format\":\"vramtrace-snapshot\",\"version\":%d,\"pid\":4242,"
               "\"ppid\":1,\"host\":\"benchhost\",\"exe\":\"/opt/bench/train\",\"cmdline\":[\"train\"],"
               "\"rank\":null,\"local_rank\":null,\"world_size\":null,\"start_ns\":1700000000000000000,"
               "\"clock\":\"CLOCK_MONOTONIC\",\"mono_start_ns\":%llu,\"depth\":32,\"interval_ms\":1000,"
               "\"step_every\":1,\"leak_steps\":10}\n", version, (unsigned long long)mono0);
    fprintf(f, "{\"t\":\"module\",\"id\":1,\"path\":\"/opt/bench/train\",\"build_id\":\"\",\"bias\":4194304}\n");
    for (long k = 1; k <= s; k++)
        fprintf(f, "{\"t\":\"stack\",\"id\":%ld,\"frames\":[[1,%ld,\"site_%ld\"],[1,%ld,\"layer_%ld\"],"
                   "[1,4096,\"forward\"],[1,8192,\"train_step\"],[1,12288,\"train\"],[1,16384,\"main\"]]}\n",
                k, 65536 + k * 16, k, 131072 + (k % 37) * 16, k % 37);
    if (version >= 3)   /* site k on stack k */
        for (long k = 1; k <= s; k++)
            fprintf(f, "{\"t\":\"site\",\"id\":%ld,\"stack\":%ld,\"kind\":\"device\",\"device\":0}\n", k, k);
    for (long i = 1; i <= n; i++) {
        int64_t dev_live = 0;
        memcpy(prev, cur, ((size_t)s + 1) * sizeof *cur);
        for (long k = 1; k <= s; k++) {
            step_site(k, i, cur[k]);
            dev_live += cur[k][LIVE];
        }
        int delta = version >= 2 && i > 1;
        fprintf(f, "{\"t\":\"snapshot\",\"seq\":%ld,\"trigger\":\"step\",\"label\":null,\"time_ns\":%llu,"
                   "\"step\":%ld,\"step_marked\":true,\"devices\":[{\"device\":0,\"free_bytes\":null,"
                   "\"total_bytes\":null,\"live_bytes\":%lld,\"peak_bytes\":%lld,\"fragmentation\":0.1,"
                   "\"pool_reserved_bytes\":null,\"pool_used_bytes\":0,\"kinds\":{\"device\":{\"live_bytes\":0,"
                   "\"live_count\":0,\"peak_bytes\":0,\"alloc_total\":0,\"free_total\":0,\"failed_total\":0,"
                   "\"alloc_bytes_total\":0}}}],%s\"sites\":[",
                i, (unsigned long long)(mono0 + (uint64_t)i * step_ns), i, (long long)dev_live,
                (long long)dev_live, version == 1 ? "" : delta ? "\"sites_delta\":true," : "\"sites_delta\":false,");
        for (long k = 1; k <= s; k++) {
            const int64_t *v = cur[k];
            if (version == 1) {
                fprintf(f, "%s{\"stack\":%ld,\"kind\":\"device\",\"device\":0", k > 1 ? "," : "", k);
                for (int c = 0; c < NV; c++)
                    fprintf(f, ",\"%s\":%lld", names[c], (long long)v[c]);
                fputc('}', f);
                continue;
            }
            /* a row: version 2 [stack, "kind", device, live, count, ipeak, allocs, abytes, frees,
             * gsteps, gbytes]; version 3 [site, allocs, abytes, frees, live, count, ipeak, gsteps,
             * gbytes], differences without trailing zeros in a delta */
            int64_t w[NV];
            int m = NV;
            for (int c = 0; c < NV; c++) {
                int o = version >= 3 ? V3_ORDER[c] : c;
                w[c] = version >= 3 && delta ? v[o] - prev[k][o] : v[o];
            }
            if (version >= 3 && delta)
                while (m > 0 && w[m - 1] == 0)
                    m--;
            fprintf(f, version >= 3 ? "%s[%ld" : "%s[%ld,\"device\",0", k > 1 ? "," : "", k);
            for (int c = 0; c < m; c++)
                fprintf(f, ",%lld", (long long)w[c]);
            fputc(']', f);
        }
        fprintf(f, "],\"leak_warnings\":[],\"oom\":null,\"allocations\":null,\"unfreed_at_exit\":false,"
                   "\"dropped_records\":0}\n");
    }
    fprintf(f, "{\"t\":\"snapshot\",\"seq\":%ld,\"trigger\":\"exit\",\"label\":null,\"time_ns\":%llu,"
               "\"step\":%ld,\"step_marked\":true,\"devices\":[],%s\"sites\":[],\"leak_warnings\":[],"
               "\"oom\":null,\"allocations\":[],\"unfreed_at_exit\":true,\"dropped_records\":0}\n",
            n + 1, (unsigned long long)(mono0 + (uint64_t)(n + 1) * step_ns), n,
            version == 1 ? "" : "\"sites_delta\":false,");
    free(cur);
    free(prev);
    if (fflush(f) != 0 || ferror(f)) {
        perror(argv[1]);
        return 1;
    }
    long size = ftell(f);
    fclose(f);
    printf("bytes=%ld\n", size);
    return 0;
}
