/* prog_ipc_legacy.c — two processes sharing device memory through legacy IPC handles
 * (cudaIpcGetMemHandle / cuIpcGetMemHandle, cudaIpcOpenMemHandle /
 * cuIpcOpenMemHandle_v2, cudaIpcCloseMemHandle / cuIpcCloseMemHandle), run with and
 * without LD_PRELOAD=libvramtrace.so by check_ipc.py.
 *
 *   prog_ipc_legacy exec|fork
 *
 * The exporter allocates BIG (64 MiB) and SMALL (1000 bytes), fills them, exports BIG
 * through the runtime and SMALL through the driver, and starts the importer: a new
 * program (exec: an unrelated process, fresh CUDA state) or a fork child that does not
 * exec. The importer, in order, each event followed by vramtrace_snapshot(<event>):
 *   open1  BIG opened (runtime)            imported open: BIG, opens 1
 *   open2  BIG opened again: same pointer  imported open: BIG, opens 2 (one mapping)
 *   open3  SMALL opened (driver)           imported open: BIG + SMALL
 *   close3 SMALL closed (driver)           imported open: BIG
 *   close1 BIG closed once (runtime)       imported open: BIG, opens 1
 *   ctxopen SMALL opened in a new context  imported open: BIG + SMALL
 *   ctxdestroy that context destroyed      imported open: BIG
 * then the error cases, and exits with BIG still open (the planted leak). Its own
 * allocation OWN (4096 bytes) is the only memory of its own (vramtrace_live_bytes).
 * Exporter: its live bytes stay BIG + SMALL throughout; it frees both after the
 * importer exited. stdout: result codes and data checks only (compared with and
 * without the preload); stderr: "exporter_pid N" and "importer_pid N".
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vramtrace.h"

#define BIG   ((size_t)64 << 20)
#define SMALL ((size_t)1000)
#define OWN   ((size_t)4096)

static int tracked, failures;

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define OK(call) do { int e_ = (int)(call); if (e_ != 0) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, e_); failures++; } } while (0)
#define EXPECT_LIVE(v) do { unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v); \
    if (tracked && got_ != want_) { fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); failures++; } } while (0)
#define SNAP(label) CHECK(vramtrace_snapshot(label) == 0 || !tracked)

static void hex_of(const void *p, size_t n, char *out)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static void bytes_of(const char *hex, void *p, size_t n)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(hex + 2 * i, "%2x", &v);
        b[i] = (unsigned char)v;
    }
}

/* First bytes of an imported buffer, read back through a device-to-host copy. */
static int first_bytes_are(void *dev, unsigned char want, size_t n)
{
    unsigned char buf[64];
    if (cudaMemcpy(buf, dev, n < sizeof buf ? n : sizeof buf, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 0;
    for (size_t i = 0; i < (n < sizeof buf ? n : sizeof buf); i++)
        if (buf[i] != want)
            return 0;
    return 1;
}

static int importer(const char *big_hex, const char *small_hex)
{
    cudaIpcMemHandle_t hbig;
    CUipcMemHandle hsmall;
    bytes_of(big_hex, &hbig, sizeof hbig);
    bytes_of(small_hex, &hsmall, sizeof hsmall);
    fprintf(stderr, "importer_pid %d\n", (int)getpid());
    void *own = NULL;
    OK(cudaMalloc(&own, OWN));
    EXPECT_LIVE(OWN);

    void *big = NULL, *big2 = NULL;
    OK(cudaIpcOpenMemHandle(&big, hbig, cudaIpcMemLazyEnablePeerAccess));
    printf("open1 ok, data %d\n", first_bytes_are(big, 0xab, BIG));
    EXPECT_LIVE(OWN);      /* another process's memory: never ours */
    SNAP("open1");
    OK(cudaIpcOpenMemHandle(&big2, hbig, cudaIpcMemLazyEnablePeerAccess));
    printf("open2 same pointer %d\n", big2 == big);
    EXPECT_LIVE(OWN);
    SNAP("open2");
    CUdeviceptr small = 0;
    OK(cuIpcOpenMemHandle_v2(&small, hsmall, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    printf("open3 ok, data %d\n", first_bytes_are((void *)(uintptr_t)small, 0xcd, SMALL));
    /* written here, seen by the exporter (it checks after we exit) */
    OK(cudaMemset((void *)(uintptr_t)small, 0x5a, 16));
    EXPECT_LIVE(OWN);
    SNAP("open3");
    OK(cuIpcCloseMemHandle(small));
    SNAP("close3");
    OK(cudaIpcCloseMemHandle(big));
    printf("close1 data still %d\n", first_bytes_are(big, 0xab, BIG));
    SNAP("close1");
    /* SMALL opened in a context of its own, which is then destroyed: the teardown
     * unmaps it (and ends its record) */
    CUcontext cx;
    CUdeviceptr small2 = 0;
    OK(cuCtxCreate(&cx, NULL, 0, 0));   /* pushed: current */
    OK(cuIpcOpenMemHandle_v2(&small2, hsmall, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    SNAP("ctxopen");
    OK(cuCtxDestroy(cx));               /* popped: the primary context is current again */
    SNAP("ctxdestroy");
    printf("close after the context went: %d\n", (int)cuIpcCloseMemHandle(small2));

    /* errors: same codes with and without the preload */
    cudaIpcMemHandle_t mine, junk;
    memset(&junk, 0x11, sizeof junk);
    OK(cudaIpcGetMemHandle(&mine, own));
    void *x = NULL;
    printf("open own handle: %d\n", (int)cudaIpcOpenMemHandle(&x, mine, cudaIpcMemLazyEnablePeerAccess));
    /* errno as the program left it, or as CUDA set it: the same with the preload */
    errno = 4321;
    OK(cudaIpcOpenMemHandle(&big2, hbig, cudaIpcMemLazyEnablePeerAccess));
    OK(cudaIpcCloseMemHandle(big2));
    printf("errno after open and close: %d\n", errno);
    errno = 4321;
    (void)cuIpcOpenMemHandle_v2(&small, hsmall, 0x20);
    (void)cudaIpcCloseMemHandle(own);
    printf("errno after failed calls: %d\n", errno);
    printf("open junk handle: %d\n", (int)cudaIpcOpenMemHandle(&x, junk, cudaIpcMemLazyEnablePeerAccess));
    printf("open bad flags: %d\n", (int)cudaIpcOpenMemHandle(&x, hbig, 0x10));
    printf("close unknown: %d\n", (int)cudaIpcCloseMemHandle(own));
    printf("close small again: %d\n", (int)cuIpcCloseMemHandle(small));
    printf("cudaFree imported: %d\n", (int)cudaFree(big));
    printf("get handle of inner pointer: %d\n", (int)cudaIpcGetMemHandle(&mine, (char *)own + 16));
    cudaGetLastError();
    EXPECT_LIVE(OWN);
    SNAP("errors");
    OK(cudaFree(own));
    EXPECT_LIVE(0);
    /* BIG stays open (opens 1): the planted leak of imported memory */
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    tracked = getenv("VT_EXPECT_TRACKED") && atoi(getenv("VT_EXPECT_TRACKED"));
    if (argc == 4 && !strcmp(argv[1], "import"))
        return importer(argv[2], argv[3]);
    if (argc != 2 || (strcmp(argv[1], "exec") && strcmp(argv[1], "fork"))) {
        fprintf(stderr, "usage: prog_ipc_legacy exec|fork\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    fprintf(stderr, "exporter_pid %d\n", (int)getpid());
    void *big = NULL, *small = NULL;
    OK(cudaMalloc(&big, BIG));
    OK(cudaMalloc(&small, SMALL));
    OK(cudaMemset(big, 0xab, BIG));
    OK(cudaMemset(small, 0xcd, SMALL));
    EXPECT_LIVE(BIG + SMALL);
    cudaIpcMemHandle_t hbig, hbig2;
    CUipcMemHandle hsmall;
    OK(cudaIpcGetMemHandle(&hbig, big));
    OK(cudaIpcGetMemHandle(&hbig2, big));
    printf("handle stable %d\n", !memcmp(&hbig, &hbig2, sizeof hbig));
    OK(cuIpcGetMemHandle(&hsmall, (CUdeviceptr)(uintptr_t)small));
    EXPECT_LIVE(BIG + SMALL);   /* exporting changes nothing */
    SNAP("exported");
    char bh[2 * sizeof hbig + 1], sh[2 * sizeof hsmall + 1];
    hex_of(&hbig, sizeof hbig, bh);
    hex_of(&hsmall, sizeof hsmall, sh);

    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        if (!strcmp(argv[1], "exec")) {
            execl("/proc/self/exe", argv[0], "import", bh, sh, (char *)NULL);
            _exit(127);
        }
        int rc = importer(bh, sh);
        fflush(stdout);
        exit(rc);   /* exit, not _exit: the tracer writes its exit record */
    }
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    EXPECT_LIVE(BIG + SMALL);
    unsigned char back[16];
    OK(cudaMemcpy(back, small, sizeof back, cudaMemcpyDeviceToHost));
    printf("importer's write seen %d\n", back[0] == 0x5a && back[15] == 0x5a);
    OK(cudaFree(small));
    EXPECT_LIVE(BIG);
    SNAP("freed_small");
    OK(cudaFree(big));
    EXPECT_LIVE(0);
    printf("exporter done\n");
    return failures ? 1 : 0;
}
