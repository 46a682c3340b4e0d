/* fakepreload.c — a stand-in for libvramtrace.so in the `vramtrace run` test.
 * Its constructor writes, into $VRAMTRACE_OUTPUT, one snapshot stream whose
 * header carries VRAMTRACE_INTERVAL_MS and VRAMTRACE_DEPTH, with 20 steps of a
 * site that grows 1 MiB a step when FAKE_LEAK is set (stable otherwise), then the
 * exit record (none when FAKE_KILLED is set: a process killed or ended by _exit), plus
 * env.txt holding LD_PRELOAD as the program saw it. Only in the process whose
 * command is named by FAKE_TARGET (so a shell's children do not write too). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void fake_init(void)
{
    const char *out = getenv("VRAMTRACE_OUTPUT"), *target = getenv("FAKE_TARGET");
    if (!out || !target) return;
    char comm[256] = "";
    FILE *c = fopen("/proc/self/comm", "r");
    if (c) {
        if (fgets(comm, sizeof comm, c)) comm[strcspn(comm, "\n")] = 0;
        fclose(c);
    }
    if (strcmp(comm, target) != 0) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/env.txt", out);
    FILE *e = fopen(path, "w");
    if (e) {
        fprintf(e, "%s\n", getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
        fclose(e);
    }
    snprintf(path, sizeof path, "%s/vt.fakehost.%d.1.jsonl", out, (int)getpid());
    FILE *f = fopen(path, "wx");
    if (!f) return;
    const char *iv = getenv("VRAMTRACE_INTERVAL_MS"), *dp = getenv("VRAMTRACE_DEPTH");
    int leak = getenv("FAKE_LEAK") != NULL;
    fprintf(f, "{\"t\":\"header\",\"format\":\"vramtrace-snapshot\",\"version\":1,\"pid\":%d,\"host\":\"fakehost\","
               "\"start_ns\":1,\"interval_ms\":%s,\"depth\":%s}\n", (int)getpid(), iv ? iv : "1000", dp ? dp : "32");
    fprintf(f, "{\"t\":\"module\",\"id\":1,\"path\":\"/opt/fake/app\",\"build_id\":\"\",\"bias\":0}\n");
    fprintf(f, "{\"t\":\"stack\",\"id\":1,\"frames\":[[1,4096,\"grow_buffer\"]]}\n");
    for (int s = 0; s < 20; s++)
        fprintf(f, "{\"t\":\"snapshot\",\"seq\":%d,\"trigger\":\"step\",\"step\":%d,\"step_marked\":true,\"sites\":"
                   "[{\"stack\":1,\"kind\":\"device\",\"device\":0,\"live_bytes\":%d,\"interval_peak_bytes\":%d}]}\n",
                s + 1, s, (leak ? s + 1 : 1) << 20, (leak ? s + 1 : 1) << 20);
    if (!getenv("FAKE_KILLED"))
        fprintf(f, "{\"t\":\"snapshot\",\"seq\":21,\"trigger\":\"exit\",\"step\":19,\"step_marked\":true,"
                   "\"sites\":[{\"stack\":1,\"kind\":\"device\",\"device\":0,\"live_bytes\":%d,"
                   "\"interval_peak_bytes\":%d}],\"unfreed_at_exit\":true}\n",
                (leak ? 20 : 1) << 20, (leak ? 20 : 1) << 20);
    fclose(f);
}
