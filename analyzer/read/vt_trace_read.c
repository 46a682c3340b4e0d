/* vt_trace_read.c — reads the event trace file (contracts: vt_trace_read.h).
 *
 * The file: a 16-byte header ("VTTRACE1", u32 version 1, u32 record size 40), then
 * 40-byte little-endian records: u64 time_ns, addr, size, stream; u32 stack; i16
 * device; u8 kind; u8 op (1 alloc, 2 free, 3 lost: size = events lost, 4 stop).
 */
#include "vt_trace_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vt_util.h"

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int vt_trace_read(const char *stream_path, vt_trace *t, char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    const char *x = strstr(stream_path, ".jsonl");
    size_t stem = x ? (size_t)(x - stream_path) : strlen(stream_path);
    snprintf(t->path, sizeof t->path, "%.*s.trace", (int)stem, stream_path);
    FILE *f = fopen(t->path, "rb");
    if (!f) {
        if (errno == ENOENT) return 0;
        snprintf(err, cap, "%s: %s", t->path, strerror(errno));
        return -1;
    }
    unsigned char head[16], rec[40];
    if (fread(head, 1, sizeof head, f) != sizeof head || memcmp(head, "VTTRACE1", 8) ||
        le32(head + 8) != 1 || le32(head + 12) != 40) {
        fclose(f);
        snprintf(err, cap, "%s: not an event trace of version 1 (header)", t->path);
        return -1;
    }
    size_t capev = 0;
    uint64_t last = 0, off = sizeof head;
    while (fread(rec, 1, sizeof rec, f) == sizeof rec) {
        int op = rec[39];
        if (op == 3) {
            t->lost += le64(rec + 16);
        } else if (op == 4) {
            t->stopped = 1;
        } else if (op == VT_TEV_ALLOC || op == VT_TEV_FREE) {
            vt_tev e;
            e.time_ns = le64(rec);
            if (e.time_ns < last) e.time_ns = last;
            last = e.time_ns;
            e.addr = le64(rec + 8);
            e.size = le64(rec + 16);
            e.stream = le64(rec + 24);
            uint32_t st = le32(rec + 32);
            e.stack = st ? (int64_t)st : INT64_MIN;
            e.device = (int16_t)(rec[36] | rec[37] << 8);
            e.kind = rec[38];
            e.op = (uint8_t)op;
            VT_PUSH(t->ev, t->n, capev, e);
        } else {
            fclose(f);
            snprintf(err, cap, "%s:%llu: unknown record kind %d", t->path, (unsigned long long)off, op);
            vt_trace_free(t);
            return -1;
        }
        off += sizeof rec;
    }
    fclose(f);
    return 1;
}

void vt_trace_free(vt_trace *t)
{
    free(t->ev);
    t->ev = NULL;
    t->n = 0;
}

int vt_trace_beside(const char *stream_path, char *out, size_t cap)
{
    const char *x = strstr(stream_path, ".jsonl");
    size_t stem = x ? (size_t)(x - stream_path) : strlen(stream_path);
    snprintf(out, cap, "%.*s.trace", (int)stem, stream_path);
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

int vt_trace_stream(const char *trace_path, char *out, size_t cap)
{
    size_t n = strlen(trace_path);
    if (n >= 6 && !strcmp(trace_path + n - 6, ".trace")) n -= 6;
    static const char *const ext[] = {".jsonl.zst", ".jsonl", ".jsonl.gz"};
    struct stat st;
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(out, cap, "%.*s%s", (int)n, trace_path, ext[i]);
        if (stat(out, &st) == 0) return 1;
    }
    snprintf(out, cap, "%.*s.jsonl.zst", (int)n, trace_path);
    return 0;
}

int vt_trace_magic(const unsigned char *head, size_t n)
{
    return n >= 8 && !memcmp(head, "VTTRACE1", 8);
}
