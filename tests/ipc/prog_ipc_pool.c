/* prog_ipc_pool.c — two processes sharing stream-ordered pool memory
 * (cudaMemPoolExportToShareableHandle / cudaMemPoolImportFromShareableHandle with a
 * POSIX file descriptor passed over a Unix socket, cudaMemPoolExportPointer /
 * cuMemPoolImportPointer), run with and without LD_PRELOAD=libvramtrace.so by
 * check_ipc.py.
 *
 *   prog_ipc_pool
 *
 * The exporter creates a pool with cudaMemHandleTypePosixFileDescriptor, allocates A
 * (32 MiB) and B (8 MiB) from it, fills them, and starts the importer (fork + exec of
 * this program: an unrelated process), passing the pool's descriptor and the two
 * pointers' export data over a socketpair. The importer, each event followed by
 * vramtrace_snapshot(<event>):
 *   pool     pool imported                       imported open: nothing
 *   importA  A imported (runtime)                imported open: A
 *   importB  B imported (driver)                 imported open: A + B
 *   freeA    A freed with cudaFreeAsync + sync   imported open: B
 * then the error cases, and exits with B still imported (the planted leak). The
 * exporter's live bytes stay A + B until the importer is gone; it then frees both.
 * stdout: codes and data checks only; stderr: "exporter_pid N", "importer_pid N".
 */
#include "ipc_common.h"

#include <cuda.h>
#include <errno.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <sys/wait.h>

#define A_SIZE ((size_t)32 << 20)
#define B_SIZE ((size_t)8 << 20)
#define OWN    ((size_t)4096)

static int first_bytes_are(const void *dev, unsigned char want)
{
    unsigned char buf[64];
    if (cudaMemcpy(buf, dev, sizeof buf, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 0;
    for (size_t i = 0; i < sizeof buf; i++)
        if (buf[i] != want)
            return 0;
    return 1;
}

static int importer(int s)
{
    fprintf(stderr, "importer_pid %d\n", (int)getpid());
    struct cudaMemPoolPtrExportData da, db;
    int fd = -1, fd2 = -1;
    CHECK(sock_recv(s, &da, sizeof da, &fd) == 0 && fd >= 0);
    CHECK(sock_recv(s, &db, sizeof db, &fd2) == 0);
    void *own = NULL;
    OK(cudaMalloc(&own, OWN));
    cudaMemPool_t pool;
    OK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
    close(fd);   /* the driver keeps its own reference */
    EXPECT_LIVE(OWN);
    SNAP("pool");
    void *a = NULL;
    OK(cudaMemPoolImportPointer(&a, pool, &da));
    printf("importA data %d\n", first_bytes_are(a, 0x11));
    EXPECT_LIVE(OWN);
    SNAP("importA");
    CUdeviceptr b = 0;
    OK(cuMemPoolImportPointer(&b, (CUmemoryPool)pool, (CUmemPoolPtrExportData *)&db));
    printf("importB data %d\n", first_bytes_are((void *)(uintptr_t)b, 0x22));
    OK(cudaMemset((void *)(uintptr_t)b, 0x33, 16));
    EXPECT_LIVE(OWN);
    SNAP("importB");
    OK(cudaFreeAsync(a, 0));
    OK(cudaStreamSynchronize(0));
    EXPECT_LIVE(OWN);
    SNAP("freeA");
    /* errors: same codes with and without the preload */
    struct cudaMemPoolPtrExportData junk;
    memset(&junk, 0x7f, sizeof junk);
    void *x = NULL;
    errno = 4321;
    printf("import junk data: %d\n", (int)cudaMemPoolImportPointer(&x, pool, &junk));
    printf("errno after a failed import: %d\n", errno);
    printf("alloc from imported pool: %d\n", (int)cudaMallocFromPoolAsync(&x, 4096, pool, 0));
    printf("import from own pool: %d\n", (int)cudaMemPoolImportPointer(&x, NULL, &da));
    printf("import bad fd: %d\n", (int)cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)999,
                                                                             cudaMemHandleTypePosixFileDescriptor, 0));
    printf("export own cudaMalloc pointer: %d\n", (int)cudaMemPoolExportPointer(&junk, own));
    cudaGetLastError();
    EXPECT_LIVE(OWN);
    SNAP("errors");
    OK(cudaFree(own));
    char done = 1;
    CHECK(sock_send(s, &done, 1, -1) == 0);
    /* B stays imported: the planted leak of imported memory */
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    ipc_tracked_init();
    if (argc == 3 && !strcmp(argv[1], "import"))
        return importer(atoi(argv[2]));
    fprintf(stderr, "exporter_pid %d\n", (int)getpid());
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    OK(cudaMemPoolCreate(&pool, &props));
    void *a = NULL, *b = NULL;
    OK(cudaMallocFromPoolAsync(&a, A_SIZE, pool, 0));
    OK(cudaMallocFromPoolAsync(&b, B_SIZE, pool, 0));
    OK(cudaMemset(a, 0x11, A_SIZE));
    OK(cudaMemset(b, 0x22, B_SIZE));
    EXPECT_LIVE(A_SIZE + B_SIZE);
    int fd = -1;
    OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    struct cudaMemPoolPtrExportData da, db;
    OK(cudaMemPoolExportPointer(&da, a));
    OK(cuMemPoolExportPointer((CUmemPoolPtrExportData *)&db, (CUdeviceptr)(uintptr_t)b));
    /* a pool made without a handle type exports nothing */
    cudaMemPool_t plain;
    props.handleTypes = cudaMemHandleTypeNone;
    OK(cudaMemPoolCreate(&plain, &props));
    int nofd = -1;
    printf("export plain pool: %d\n", (int)cudaMemPoolExportToShareableHandle(&nofd, plain,
                                                                          cudaMemHandleTypePosixFileDescriptor, 0));
    cudaGetLastError();
    OK(cudaMemPoolDestroy(plain));
    EXPECT_LIVE(A_SIZE + B_SIZE);
    SNAP("exported");
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", sv[1]);
        execl("/proc/self/exe", argv[0], "import", arg, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    CHECK(sock_send(sv[0], &da, sizeof da, fd) == 0);
    CHECK(sock_send(sv[0], &db, sizeof db, -1) == 0);
    close(fd);
    char done = 0;
    CHECK(sock_recv(sv[0], &done, 1, NULL) == 0 && done == 1);
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    unsigned char back[16];
    OK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    printf("importer's write seen %d\n", back[0] == 0x33 && back[15] == 0x33);
    EXPECT_LIVE(A_SIZE + B_SIZE);
    OK(cudaFreeAsync(a, 0));
    OK(cudaFreeAsync(b, 0));
    OK(cudaStreamSynchronize(0));
    EXPECT_LIVE(0);
    OK(cudaMemPoolDestroy(pool));
    printf("exporter done\n");
    return failures ? 1 : 0;
}
