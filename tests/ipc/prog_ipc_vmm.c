/* prog_ipc_vmm.c — two processes sharing VMM physical memory through shareable
 * handles (cuMemCreate with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
 * cuMemExportToShareableHandle, the descriptor passed over a Unix socket with
 * SCM_RIGHTS, cuMemImportFromShareableHandle, cuMemMap), NCCL's way since 2.19. Run
 * with and without LD_PRELOAD=libvramtrace.so by check_ipc.py.
 *
 *   prog_ipc_vmm
 *
 * The exporter makes P (4 MiB) and Q (2 MiB), maps and fills them, exports both and
 * starts the importer (fork + exec: an unrelated process). The importer, each event
 * followed by vramtrace_snapshot(<event>):
 *   import   P's handle imported                     imported: P, 0 mappings
 *   map1     P mapped at one address                 imported: P, 1 mapping
 *   map2     P mapped at a second address            imported: P once, 2 mappings
 *   release  P's handle released (still mapped)      imported: P, 2 mappings
 *   unmap1   first mapping gone                      imported: P, 1 mapping
 *   unmap2   second mapping gone                     imported: nothing
 *   leak     Q imported and mapped                   imported: Q, 1 mapping
 * then the error cases, and exits with Q still mapped (the planted leak). stdout:
 * codes and data checks only; stderr: "exporter_pid N", "importer_pid N".
 */
#include "ipc_common.h"

#include <cuda.h>
#include <errno.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <sys/wait.h>

#define P_SIZE ((size_t)4 << 20)
#define Q_SIZE ((size_t)2 << 20)
#define OWN    ((size_t)4096)

static CUmemAllocationProp prop_fd(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return p;
}

static CUdeviceptr map_rw(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr va = 0;
    OK(cuMemAddressReserve(&va, size, 0, 0, 0));
    OK(cuMemMap(va, size, 0, h, 0));
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    OK(cuMemSetAccess(va, size, &d, 1));
    return va;
}

/* The first n (<= 64) bytes at dev all equal want. */
static int bytes_are(CUdeviceptr dev, unsigned char want, size_t n)
{
    unsigned char buf[64];
    if (n > sizeof buf || cuMemcpyDtoH(buf, dev, n) != CUDA_SUCCESS)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != want)
            return 0;
    return 1;
}

static int importer(int s)
{
    fprintf(stderr, "importer_pid %d\n", (int)getpid());
    int fp = -1, fq = -1;
    char tag;
    CHECK(sock_recv(s, &tag, 1, &fp) == 0 && fp >= 0);
    CHECK(sock_recv(s, &tag, 1, &fq) == 0 && fq >= 0);
    void *own = NULL;
    OK(cudaMalloc(&own, OWN));   /* makes the primary context current for the driver calls */
    CUmemGenericAllocationHandle hp = 0, hq = 0;
    OK(cuMemImportFromShareableHandle(&hp, (void *)(uintptr_t)fp, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fp);
    EXPECT_LIVE(OWN);
    SNAP("import");
    CUdeviceptr va1 = map_rw(hp, P_SIZE);
    printf("map1 data %d\n", bytes_are(va1, 0x44, 64));
    SNAP("map1");
    CUdeviceptr va2 = map_rw(hp, P_SIZE);
    printf("map2 data %d\n", bytes_are(va2, 0x44, 64));
    OK(cuMemsetD8(va2, 0x66, 16));
    printf("seen at the first mapping %d\n", bytes_are(va1, 0x66, 16));
    EXPECT_LIVE(OWN);
    SNAP("map2");
    OK(cuMemRelease(hp));
    SNAP("release");
    OK(cuMemUnmap(va1, P_SIZE));
    OK(cuMemAddressFree(va1, P_SIZE));
    SNAP("unmap1");
    OK(cuMemUnmap(va2, P_SIZE));
    OK(cuMemAddressFree(va2, P_SIZE));
    SNAP("unmap2");
    errno = 4321;
    OK(cuMemImportFromShareableHandle(&hq, (void *)(uintptr_t)fq, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    printf("errno after an import: %d\n", errno);
    close(fq);
    CUdeviceptr va3 = map_rw(hq, Q_SIZE);
    printf("leak data %d\n", bytes_are(va3, 0x55, 64));
    EXPECT_LIVE(OWN);
    SNAP("leak");
    /* errors: same codes with and without the preload */
    CUmemGenericAllocationHandle x = 0;
    printf("import bad fd: %d\n", (int)cuMemImportFromShareableHandle(&x, (void *)(uintptr_t)999,
                                                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    printf("import no handle type: %d\n", (int)cuMemImportFromShareableHandle(&x, (void *)(uintptr_t)1,
                                                                                CU_MEM_HANDLE_TYPE_NONE));
    CUmemAllocationProp plain = prop_fd();
    plain.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    CUmemGenericAllocationHandle hn = 0;
    OK(cuMemCreate(&hn, Q_SIZE, &plain, 0));
    int nofd = -1;
    printf("export plain handle: %d\n", (int)cuMemExportToShareableHandle(&nofd, hn, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    OK(cuMemRelease(hn));
    EXPECT_LIVE(OWN);
    SNAP("errors");
    OK(cudaFree(own));
    char done = 1;
    CHECK(sock_send(s, &done, 1, -1) == 0);
    /* Q stays mapped: the planted leak of imported memory */
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    ipc_tracked_init();
    if (argc == 3 && !strcmp(argv[1], "import"))
        return importer(atoi(argv[2]));
    fprintf(stderr, "exporter_pid %d\n", (int)getpid());
    OK(cudaFree(0));
    CUmemAllocationProp prop = prop_fd();
    CUmemGenericAllocationHandle hp = 0, hq = 0;
    OK(cuMemCreate(&hp, P_SIZE, &prop, 0));
    OK(cuMemCreate(&hq, Q_SIZE, &prop, 0));
    CUdeviceptr vp = map_rw(hp, P_SIZE), vq = map_rw(hq, Q_SIZE);
    OK(cuMemsetD8(vp, 0x44, P_SIZE));
    OK(cuMemsetD8(vq, 0x55, Q_SIZE));
    EXPECT_LIVE(P_SIZE + Q_SIZE);
    int fp = -1, fq = -1;
    OK(cuMemExportToShareableHandle(&fp, hp, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    OK(cuMemExportToShareableHandle(&fq, hq, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    EXPECT_LIVE(P_SIZE + Q_SIZE);
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
    char tag = 'p';
    CHECK(sock_send(sv[0], &tag, 1, fp) == 0);
    tag = 'q';
    CHECK(sock_send(sv[0], &tag, 1, fq) == 0);
    close(fp);
    close(fq);
    char done = 0;
    CHECK(sock_recv(sv[0], &done, 1, NULL) == 0 && done == 1);
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("importer's write seen %d\n", bytes_are(vp, 0x66, 16));
    EXPECT_LIVE(P_SIZE + Q_SIZE);
    OK(cuMemUnmap(vp, P_SIZE));
    OK(cuMemUnmap(vq, Q_SIZE));
    OK(cuMemRelease(hp));
    OK(cuMemRelease(hq));
    EXPECT_LIVE(0);
    printf("exporter done\n");
    return failures ? 1 : 0;
}
