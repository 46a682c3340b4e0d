/* prog_ipc_ext.c — external memory (cudaImportExternalMemory /
 * cuImportExternalMemory with an opaque file descriptor, *GetMappedBuffer,
 * *DestroyExternalMemory), as a Vulkan interop program uses it; the other API's
 * memory is a memfd the program makes itself. Run with and without
 * LD_PRELOAD=libvramtrace.so by check_ipc.py.
 *
 *   prog_ipc_ext
 *
 * Each event followed by vramtrace_snapshot(<event>):
 *   import   object X (4 MiB) imported (runtime)          imported open: nothing
 *   buf1     buffer B1 = X[0, 1 MiB) mapped                imported open: B1
 *   buf2     buffer B2 = X[1 MiB, +256 KiB) mapped         imported open: B1 + B2
 *   free1    B1 freed with cudaFree                        imported open: B2
 *   destroy  X destroyed (B2's record ends with it)        imported open: nothing
 *   leak     object Y (driver) and its buffer B3 (512 KiB) imported open: B3
 * then the error cases; exits with B3 mapped (the planted leak; its exporter, another
 * API, is unknown). The program's own memory: OWN (4096 bytes).
 */
#include "ipc_common.h"

#include <cuda.h>
#include <errno.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <sys/mman.h>

#define MiB ((size_t)1 << 20)
#define OWN ((size_t)4096)

static int memfd_of(size_t size, unsigned char fill)
{
    int fd = memfd_create("other-api", MFD_CLOEXEC);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0);
    unsigned char buf[4096];
    memset(buf, fill, sizeof buf);
    CHECK(pwrite(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    return fd;
}

int main(void)
{
    ipc_tracked_init();
    void *own = NULL;
    OK(cudaMalloc(&own, OWN));
    struct cudaExternalMemoryHandleDesc hd;
    memset(&hd, 0, sizeof hd);
    hd.type = cudaExternalMemoryHandleTypeOpaqueFd;
    hd.handle.fd = memfd_of(4 * MiB, 0x77);
    hd.size = 4 * MiB;
    cudaExternalMemory_t x;
    OK(cudaImportExternalMemory(&x, &hd));   /* the driver owns the descriptor now */
    EXPECT_LIVE(OWN);
    SNAP("import");
    struct cudaExternalMemoryBufferDesc bd;
    memset(&bd, 0, sizeof bd);
    bd.offset = 0;
    bd.size = MiB;
    void *b1 = NULL, *b2 = NULL;
    OK(cudaExternalMemoryGetMappedBuffer(&b1, x, &bd));
    unsigned char c = 0;
    OK(cudaMemcpy(&c, b1, 1, cudaMemcpyDeviceToHost));
    printf("buf1 data %d\n", c == 0x77);
    SNAP("buf1");
    bd.offset = MiB;
    bd.size = 256 << 10;
    OK(cudaExternalMemoryGetMappedBuffer(&b2, x, &bd));
    EXPECT_LIVE(OWN);
    SNAP("buf2");
    OK(cudaFree(b1));
    SNAP("free1");
    errno = 4321;
    OK(cudaDestroyExternalMemory(x));
    printf("errno after a destroy: %d\n", errno);
    EXPECT_LIVE(OWN);
    SNAP("destroy");
    printf("free buffer after destroy: %d\n", (int)cudaFree(b2));   /* cuda.h: must still be freed */

    CUDA_EXTERNAL_MEMORY_HANDLE_DESC dd;
    memset(&dd, 0, sizeof dd);
    dd.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    dd.handle.fd = memfd_of(MiB, 0x88);
    dd.size = MiB;
    CUexternalMemory y;
    OK(cuImportExternalMemory(&y, &dd));
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC db;
    memset(&db, 0, sizeof db);
    db.size = 512 << 10;
    CUdeviceptr b3 = 0;
    OK(cuExternalMemoryGetMappedBuffer(&b3, y, &db));
    EXPECT_LIVE(OWN);
    SNAP("leak");
    /* errors: same codes with and without the preload */
    db.offset = MiB;
    CUdeviceptr z = 0;
    printf("buffer beyond the object: %d\n", (int)cuExternalMemoryGetMappedBuffer(&z, y, &db));
    printf("buffer of a destroyed object: %d\n", (int)cudaExternalMemoryGetMappedBuffer(&b1, x, &bd));
    printf("destroy twice: %d\n", (int)cudaDestroyExternalMemory(x));
    hd.handle.fd = 999;
    printf("import bad fd: %d\n", (int)cudaImportExternalMemory(&x, &hd));
    hd.type = cudaExternalMemoryHandleTypeOpaqueWin32;
    printf("import win32: %d\n", (int)cudaImportExternalMemory(&x, &hd));
    cudaGetLastError();
    EXPECT_LIVE(OWN);
    SNAP("errors");
    OK(cudaFree(own));
    EXPECT_LIVE(0);
    /* B3 stays mapped: the planted leak of imported memory */
    return failures ? 1 : 0;
}
