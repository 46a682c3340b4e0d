/* gen_snapshots.c — writes a synthetic snapshot file (docs/snapshot-format.md, version
 * 2, or 1 with --v1) for the analyzer benchmark (issue 7, figure 7), so no big input
 * is committed.
 *
 * Shape: one header, one module, S stacks of 6 frames, then N "step" snapshots of one
 * device, each listing all S sites (worst case: every site live in every snapshot).
 * Site k's live bytes: k % 10 == 0 leaks 4 KiB per step (linear growth), k % 10 == 1
 * churns (rises and falls back every other step), the rest are stable. The last
 * record is an "exit" snapshot with its live list. Values are deterministic.
 *
 * Every site allocates and frees once per step (its alloc/free counters move), so
 * every site row changes in every snapshot: version 2's delta records ("sites_delta":
 * true) list all S rows here — the worst case for deltas; only the row form helps.
 *
 * Usage: gen_snapshots [--v1] FILE N S   (N snapshots, S sites). Prints "bytes=<file size>".
 * Exit 0, 1 on an I/O error, 2 usage.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int v1 = argc > 1 && !strcmp(argv[1], "--v1");
    if (v1) {
        argv++;
        argc--;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: gen_snapshots [--v1] FILE N S\n");
        return 2;
    }
    long n = atol(argv[2]), s = atol(argv[3]);
    if (n < 1 || s < 1)
        return 2;
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
               "\"step_every\":1,\"leak_steps\":10}\n", v1 ? 1 : 2, (unsigned long long)mono0);
    fprintf(f, "{\"t\":\"module\",\"id\":1,\"path\":\"/opt/bench/train\",\"build_id\":\"\",\"bias\":4194304}\n");
    for (long k = 1; k <= s; k++)
        fprintf(f, "{\"t\":\"stack\",\"id\":%ld,\"frames\":[[1,%ld,\"site_%ld\"],[1,%ld,\"layer_%ld\"],"
                   "[1,4096,\"forward\"],[1,8192,\"train_step\"],[1,12288,\"train\"],[1,16384,\"main\"]]}\n",
                k, 65536 + k * 16, k, 131072 + (k % 37) * 16, k % 37);
    for (long i = 1; i <= n; i++) {
        uint64_t dev_live = 0;
        fprintf(f, "{\"t\":\"snapshot\",\"seq\":%ld,\"trigger\":\"step\",\"label\":null,\"time_ns\":%llu,"
                   "\"step\":%ld,\"step_marked\":true,\"devices\":[{\"device\":0,\"free_bytes\":null,"
                   "\"total_bytes\":null,\"live_bytes\":%llu,\"peak_bytes\":%llu,\"fragmentation\":0.1,"
                   "\"pool_reserved_bytes\":null,\"pool_used_bytes\":0,\"kinds\":{\"device\":{\"live_bytes\":0,"
                   "\"live_count\":0,\"peak_bytes\":0,\"alloc_total\":0,\"free_total\":0,\"failed_total\":0,"
                   "\"alloc_bytes_total\":0}}}],%s\"sites\":[",
                i, (unsigned long long)(mono0 + (uint64_t)i * step_ns), i,
                (unsigned long long)((uint64_t)s << 20), (unsigned long long)((uint64_t)s << 20),
                v1 ? "" : i == 1 ? "\"sites_delta\":false," : "\"sites_delta\":true,");
        for (long k = 1; k <= s; k++) {
            uint64_t base = (uint64_t)(k % 64 + 1) << 20, live = base;
            if (k % 10 == 0)
                live = base + (uint64_t)i * 4096;
            else if (k % 10 == 1)
                live = (i & 1) ? base * 2 : base;
            dev_live += live;
            if (!v1) {   /* a row: [stack, kind, device, live, count, ipeak, allocs, abytes, frees, gsteps, gbytes] */
                fprintf(f, "%s[%ld,\"device\",0,%llu,%ld,%llu,%ld,%llu,%ld,%ld,%llu]",
                        k > 1 ? "," : "", k, (unsigned long long)live, k % 10 == 0 ? i + 1 : 1,
                        (unsigned long long)(live * (k % 10 == 1 ? 2 : 1)), i + 1,
                        (unsigned long long)(live * 2), i, k % 10 == 0 ? i : 0,
                        (unsigned long long)(k % 10 == 0 ? (uint64_t)i * 4096 : 0));
                continue;
            }
            fprintf(f, "%s{\"stack\":%ld,\"kind\":\"device\",\"device\":0,\"live_bytes\":%llu,"
                       "\"live_count\":%ld,\"interval_peak_bytes\":%llu,\"alloc_total\":%ld,"
                       "\"alloc_bytes_total\":%llu,\"free_total\":%ld,\"growth_steps\":%ld,"
                       "\"growth_bytes\":%llu}",
                    k > 1 ? "," : "", k, (unsigned long long)live, k % 10 == 0 ? i + 1 : 1,
                    (unsigned long long)(live * (k % 10 == 1 ? 2 : 1)), i + 1,
                    (unsigned long long)(live * 2), i, k % 10 == 0 ? i : 0,
                    (unsigned long long)(k % 10 == 0 ? (uint64_t)i * 4096 : 0));
        }
        fprintf(f, "],\"leak_warnings\":[],\"oom\":null,\"allocations\":null,\"unfreed_at_exit\":false,"
                   "\"dropped_records\":0}\n");
        (void)dev_live;
    }
    fprintf(f, "{\"t\":\"snapshot\",\"seq\":%ld,\"trigger\":\"exit\",\"label\":null,\"time_ns\":%llu,"
               "\"step\":%ld,\"step_marked\":true,\"devices\":[],%s\"sites\":[],\"leak_warnings\":[],"
               "\"oom\":null,\"allocations\":[],\"unfreed_at_exit\":true,\"dropped_records\":0}\n",
            n + 1, (unsigned long long)(mono0 + (uint64_t)(n + 1) * step_ns), n,
            v1 ? "" : "\"sites_delta\":false,");
    if (fflush(f) != 0 || ferror(f)) {
        perror(argv[1]);
        return 1;
    }
    long size = ftell(f);
    fclose(f);
    printf("bytes=%ld\n", size);
    return 0;
}
