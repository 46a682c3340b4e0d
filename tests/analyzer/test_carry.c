/* test_carry.c — format version 4 (docs/snapshot-format.md "Version 4: what a record
 * leaves out"): a delta record without a devices block, or with a device entry that
 * lists only some keys and kind figures, keeps the previous record's device values;
 * gauges, IPC rows, seq and step_marked are carried the same way; the same records under a
 * version 3 header read as version 3 always did (an absent key is "not written").
 *
 * analyzer_carry TMPDIR — writes its files there. Prints one line per failed
 * assertion; exit 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_reader.h"

static int failures, checks;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        checks++;                                                               \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

static const char *const HEADER =
    "{\"t\":\"header\",\"format\":\"vramtrace-snapshot\",\"version\":%d,\"pid\":42,\"host\":\"h\","
    "\"start_ns\":1,\"clock\":\"CLOCK_MONOTONIC\",\"mono_start_ns\":1}\n"
    "{\"t\":\"stack\",\"id\":1,\"frames\":[]}\n"
    "{\"t\":\"site\",\"id\":1,\"stack\":1,\"kind\":\"device\",\"device\":0}\n";

/* complete: two devices with every figure, two gauges */
static const char *const REC1 =
    "{\"t\":\"snapshot\",\"seq\":1,\"trigger\":\"step\",\"time_ns\":10,\"step\":1,\"step_marked\":true,"
    "\"devices\":[{\"device\":0,\"free_bytes\":1000,\"total_bytes\":5000,\"live_bytes\":100,\"peak_bytes\":300,"
    "\"fragmentation\":0.5,\"pool_reserved_bytes\":64,\"pool_used_bytes\":32,"
    "\"kinds\":{\"device\":{\"live_bytes\":100,\"live_count\":1,\"peak_bytes\":300,\"alloc_total\":7,"
    "\"free_total\":6,\"failed_total\":2,\"oom_total\":1,\"alloc_bytes_total\":700},"
    "\"managed\":{\"alloc_total\":3,\"free_total\":3,\"alloc_bytes_total\":30}}},"
    "{\"device\":1,\"free_bytes\":2000,\"total_bytes\":6000,\"live_bytes\":0,\"peak_bytes\":40,"
    "\"fragmentation\":0,\"pool_reserved_bytes\":null,\"pool_used_bytes\":0,"
    "\"kinds\":{\"device\":{\"peak_bytes\":40,\"alloc_total\":1,\"free_total\":1,\"alloc_bytes_total\":40}}}],"
    "\"sites\":[[1,7,700,6,100,1,300,0,0]],\"annotations\":{\"a\":1,\"b\":2},"
    "\"exports\":[[4096,\"00000000000000aa\"]],\"host\":{\"rss_bytes\":10}}\n";

/* delta: no devices, no seq, no step_marked, no gauges, no host */
static const char *const REC2 =
    "{\"t\":\"snapshot\",\"trigger\":\"step\",\"time_ns\":20,\"step\":2,\"sites_delta\":true,\"sites\":[]}\n";

/* delta: device 0 lists only live_bytes and one kind figure; one gauge changed */
static const char *const REC3 =
    "{\"t\":\"snapshot\",\"trigger\":\"step\",\"time_ns\":30,\"step\":3,\"sites_delta\":true,"
    "\"devices\":[{\"device\":0,\"live_bytes\":150,\"kinds\":{\"device\":{\"alloc_total\":8}}}],"
    "\"sites\":[[1,1,50,0,50]],\"annotations\":{\"b\":3}}\n";

static int write_file(const char *path, int version, int nrec)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, HEADER, version);
    const char *recs[] = {REC1, REC2, REC3};
    for (int i = 0; i < nrec; i++) fputs(recs[i], f);
    return fclose(f);
}

static const vt_device *device(const vt_process *p, int d)
{
    for (size_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].device == d) return &p->devices[i];
    return NULL;
}

static double annot(const vt_process *p, const char *key)
{
    for (size_t i = 0; i < p->nannots; i++)
        if (!strcmp(p->annots[i].key, key)) return p->annots[i].value;
    return -1;
}

static int load(const char *path, vt_runset *rs)
{
    char *paths[] = {(char *)path};
    memset(rs, 0, sizeof *rs);
    int rc = vt_load_paths(rs, paths, 1);
    CHECK(rc == 0 && rs->n == 1, "%s: %s", path, rs->err);
    return rc == 0 && rs->n == 1 ? 0 : -1;
}

/* After REC1 and REC2 (nrec 2) or REC1..REC3 (nrec 3), version 4. */
static void check_v4(const char *dir, int nrec)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/vt.h.42.%d.jsonl", dir, nrec);
    CHECK(write_file(path, 4, nrec) == 0, "cannot write %s", path);
    vt_runset rs;
    if (load(path, &rs) < 0) return;
    const vt_process *p = rs.procs[0];
    const vt_device *d0 = device(p, 0), *d1 = device(p, 1);
    CHECK(d0 && d1, "records %d: both devices", nrec);
    if (d0 && d1) {
        CHECK(d0->live_bytes == (nrec == 3 ? 150u : 100u), "records %d: live %llu", nrec,
              (unsigned long long)d0->live_bytes);
        /* left out: the previous values, not 0 or "not known" */
        CHECK(d0->peak_bytes == 300, "records %d: peak %llu", nrec, (unsigned long long)d0->peak_bytes);
        CHECK(d0->has_mem && d0->free_bytes == 1000 && d0->total_bytes == 5000, "records %d: free/total", nrec);
        CHECK(d0->frag_last == 0.5, "records %d: fragmentation %g", nrec, d0->frag_last);
        CHECK(d0->pool_reserved == 64 && d0->pool_used == 32, "records %d: pool", nrec);
        /* calls summed over the kinds: the changed figure plus the carried ones */
        CHECK(d0->alloc_calls == (nrec == 3 ? 11u : 10u), "records %d: alloc calls %llu", nrec,
              (unsigned long long)d0->alloc_calls);
        CHECK(d0->failed_calls == 2 && d0->oom_calls == 1 && d0->has_oom_total, "records %d: failed/oom", nrec);
        CHECK(d1->has_mem && d1->free_bytes == 2000 && d1->peak_max == 40 && d1->alloc_calls == 1,
              "records %d: device 1 kept", nrec);
    }
    CHECK(p->nsteps == (size_t)nrec, "records %d: steps %zu", nrec, p->nsteps);
    CHECK(p->step_marked, "records %d: step_marked", nrec);
    CHECK(annot(p, "a") == 1 && annot(p, "b") == (nrec == 3 ? 3 : 2), "records %d: gauges a=%g b=%g", nrec,
          annot(p, "a"), annot(p, "b"));
    CHECK(p->hostsig.present && p->hostsig.rss.last == 10, "records %d: host", nrec);
    CHECK(p->nexports == 1 && p->exports[0].digest == 0xaa && p->nimports == 0, "records %d: exports %zu",
          nrec, p->nexports);
    vt_runset_free(&rs);
}

/* The same three records under a version 3 header: read as version 3 always read
 * them (an entry's absent keys are "not written": device 0's peak is then 0). */
static void check_v3(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/vt.h.42.v3.jsonl", dir);
    CHECK(write_file(path, 3, 3) == 0, "cannot write %s", path);
    vt_runset rs;
    if (load(path, &rs) < 0) return;
    const vt_device *d0 = device(rs.procs[0], 0);
    CHECK(d0 && d0->live_bytes == 150 && d0->peak_bytes == 0 && d0->peak_max == 300,
          "version 3: device 0 as before version 4");
    vt_runset_free(&rs);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: analyzer_carry TMPDIR\n");
        return 2;
    }
    check_v4(argv[1], 2);
    check_v4(argv[1], 3);
    check_v3(argv[1]);
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
