/* ipc_common.h — what the two-process test programs share: checks that count
 * failures, the tracer's own numbers (checked only under VT_EXPECT_TRACKED=1), and a
 * Unix socket that carries bytes and one file descriptor (SCM_RIGHTS), as NCCL and
 * NVIDIA's samples pass shareable handles. Header-only; each program includes it once. */
#ifndef IPC_COMMON_H
#define IPC_COMMON_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vramtrace.h"

static int tracked, failures;

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define OK(call) do { int e_ = (int)(call); if (e_ != 0) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, e_); failures++; } } while (0)
#define EXPECT_LIVE(v) do { unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v); \
    if (tracked && got_ != want_) { fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); failures++; } } while (0)
#define SNAP(label) CHECK(vramtrace_snapshot(label) == 0 || !tracked)

static inline void ipc_tracked_init(void)
{
    tracked = getenv("VT_EXPECT_TRACKED") && atoi(getenv("VT_EXPECT_TRACKED"));
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Sends n bytes and, when fd >= 0, the descriptor fd. 0, or -1. */
static inline int sock_send(int s, const void *buf, size_t n, int fd)
{
    struct iovec iov = {(void *)buf, n};
    char ctl[CMSG_SPACE(sizeof(int))];
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (fd >= 0) {
        memset(ctl, 0, sizeof ctl);
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(s, &m, 0) == (ssize_t)n ? 0 : -1;
}

/* Receives exactly n bytes and the descriptor sent with them (*fd, -1 if none). */
static inline int sock_recv(int s, void *buf, size_t n, int *fd)
{
    struct iovec iov = {buf, n};
    char ctl[CMSG_SPACE(sizeof(int))];
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    if (fd)
        *fd = -1;
    if (recvmsg(s, &m, MSG_WAITALL) != (ssize_t)n)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && fd)
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return 0;
}

#endif
