/* vt_tracefile.c — the event trace file (contracts: vt_tracefile.h).
 *
 * Layout: a 16-byte header ("VTTRACE1", u32 format version 1, u32 record size 40)
 * then fixed 40-byte records (vt_trace_rec), little-endian, in the core's apply
 * order. Plain bytes, not compressed: a reader maps it as an array.
 */
#define _GNU_SOURCE
#include "vt_tracefile.h"
#include "vt_config.h"
#include "vt_core.h"
#include "vt_log.h"
#include "vt_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    pthread_mutex_t mu;
    int fd;              /* -1: not open                                    */
    int stopped;         /* the cap was reached, or a write failed          */
    unsigned long long bytes;   /* written so far                           */
} vt__tf = { PTHREAD_MUTEX_INITIALIZER, -1, 0, 0 };

static int vt__tf_write(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(vt__tf.fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
        vt__tf.bytes += (unsigned long long)w;
    }
    return 0;
}

static int vt__tf_open(const char *stream_path)
{
    char path[PATH_MAX];
    const char *x = strstr(stream_path, ".jsonl");
    size_t stem = x ? (size_t)(x - stream_path) : strlen(stream_path);
    if (snprintf(path, sizeof path, "%.*s.trace", (int)stem, stream_path) >= (int)sizeof path)
        return -1;
    vt__tf.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (vt__tf.fd < 0) {
        vt_log(VT_LOG_WARN, "event trace %s: %s; no trace is written", path, strerror(errno));
        return -1;
    }
    unsigned char head[16] = "VTTRACE1";
    uint32_t ver = 1, rec = sizeof(vt_trace_rec);
    memcpy(head + 8, &ver, 4);
    memcpy(head + 12, &rec, 4);
    return vt__tf_write(head, sizeof head);
}

/* The STOP record and the line, once. */
static void vt__tf_stop(const char *why)
{
    vt__tf.stopped = 1;
    if (vt__tf.fd < 0)
        return;
    vt_trace_rec s = { .op = VT_TRACE_STOP, .device = -1 };
    s.time_ns = vt_now_ns();
    (void)vt__tf_write(&s, sizeof s);
    vt_log(VT_LOG_WARN, "event trace stopped: %s", why);
}

void vt_tracefile_flush(const char *stream_path)
{
    if (!vt_core_trace_on())
        return;
    pthread_mutex_lock(&vt__tf.mu);
    const vt_trace_rec *r;
    uint64_t lost;
    size_t n = vt_core_trace_take(&r, &lost);
    if ((!n && !lost) || vt__tf.stopped)
        goto out;
    if (vt__tf.fd < 0) {
        if (!stream_path || !*stream_path)
            goto out;   /* no stream yet: these records are dropped */
        if (vt__tf_open(stream_path) < 0) {
            vt__tf.stopped = 1;
            goto out;
        }
    }
    unsigned long long cap = vt__config.max_bytes;
    size_t fit = n;
    if (cap) {   /* room kept for the LOST and STOP records */
        unsigned long long room = vt__tf.bytes + 2 * sizeof *r < cap ? cap - vt__tf.bytes - 2 * sizeof *r : 0;
        if (fit > room / sizeof *r)
            fit = (size_t)(room / sizeof *r);
    }
    if (lost) {
        vt_trace_rec l = { .op = VT_TRACE_LOST, .device = -1, .size = lost, .time_ns = vt_now_ns() };
        if (vt__tf_write(&l, sizeof l) < 0)
            goto fault;
    }
    if (fit && vt__tf_write(r, fit * sizeof *r) < 0)
        goto fault;
    if (fit < n)
        vt__tf_stop("the trace file reached VRAMTRACE_MAX_BYTES");
out:
    pthread_mutex_unlock(&vt__tf.mu);
    return;
fault:
    vt__tf.stopped = 1;
    vt_log(VT_LOG_WARN, "event trace stopped: write failed: %s", strerror(errno));
    pthread_mutex_unlock(&vt__tf.mu);
}

void vt_tracefile_close(void)
{
    pthread_mutex_lock(&vt__tf.mu);
    if (vt__tf.fd >= 0)
        close(vt__tf.fd);
    vt__tf.fd = -1;
    vt__tf.stopped = 1;
    pthread_mutex_unlock(&vt__tf.mu);
}

void vt_tracefile_fork_child(void)
{
    pthread_mutex_init(&vt__tf.mu, NULL);   /* one thread now: the parent's holder is gone */
    if (vt__tf.fd >= 0)
        close(vt__tf.fd);
    vt__tf.fd = -1;
    vt__tf.stopped = 0;
    vt__tf.bytes = 0;
    if (vt_core_trace_on()) {
        const vt_trace_rec *r;
        uint64_t lost;
        (void)vt_core_trace_take(&r, &lost);
    }
}
