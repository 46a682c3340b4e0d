/* prog_nvtx.c — a program that speaks NVTX (header-only NVTX3) and never calls
 * vramtrace: its steps are NVTX ranges, its sub-allocations NVTX memory regions.
 * Checked from outside by check_nvtx.py.
 *
 *   prog_nvtx steps     STEPS steps, each an NVTX range "train_step" (push/pop) with
 *                       ranges "forward" and "backward" inside (and, in "backward", a
 *                       nested "train_step" that is not outermost); each step keeps
 *                       LEAK_BYTES (leak_one_step) and frees a temporary; a mark
 *                       "step done" at the end of each step.
 *   prog_nvtx startend  the same steps as start/end ranges "train_step" in the domain
 *                       "trainer" (nvtxDomainRangeStartEx/End), each holding two
 *                       start/end ranges "train_step" of the default domain
 *                       (nvtxRangeStartA/End) one after the other; no marks.
 *   prog_nvtx suballoc  one HEAP_BYTES cudaMalloc heap registered with the NVTX memory
 *                       API; STEPS steps (ranges "train_step"), each registering two
 *                       temporary regions (unregistered by pointer and by handle in
 *                       the same step) and keeping one KEEP_BYTES region (keep_region).
 *   prog_nvtx unregister  a heap with regions, then: a bogus region handle and a bogus
 *                       heap unregistered (ignored), one region resized, the heap
 *                       reset (its regions freed), a region again, the heap
 *                       unregistered (freed too); a step range after each, so every
 *                       state is a step snapshot.
 *   prog_nvtx nocuda    ranges, marks, a heap of host memory with regions: no CUDA
 *                       call at all; prints its thread and descriptor counts.
 *   prog_nvtx edges     what comes before the first step is no step: before any CUDA
 *                       call, a whole "train_step" range, marks, other ranges (push/pop
 *                       "warmup", start/end "load"), then the first "train_step" range
 *                       opened; inside it the first CUDA call, marks and other
 *                       ranges; then EDGE_STEPS steps as in "steps" (no marks), the
 *                       first being the range opened before CUDA; the first step
 *                       lasts EDGE_SLEEP_MS longer (periodic snapshots fall in it).
 *   prog_nvtx marks     STEPS steps with MARKS marks "tick" each, as fast as it can (so
 *                       the rate bound drops most of them), then exits at once.
 * Prints "prog_nvtx <mode>: ok" and exits 0; any CUDA failure exits 1.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#define STEPS 12
#define LEAK_BYTES 327680u           /* 320 KiB kept per step                    */
#define TEMP_BYTES (3u << 20)
#define HEAP_BYTES (64u << 20)
#define KEEP_BYTES 196608u           /* 192 KiB region kept per step             */
#define TEMP_REGION 1048576u

#define CHECK(x)                                                               \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s failed: %d\n", #x, (int)e_);                  \
            return 1;                                                          \
        }                                                                      \
    } while (0)

static void *kept[STEPS];

__attribute__((noinline)) static int leak_one_step(int i)
{
    return cudaMalloc(&kept[i], LEAK_BYTES) != cudaSuccess;
}

__attribute__((noinline)) static int temporary(void)
{
    void *p;
    if (cudaMalloc(&p, TEMP_BYTES) != cudaSuccess)
        return 1;
    return cudaFree(p) != cudaSuccess;
}

static int run_steps(void)
{
    for (int i = 0; i < STEPS; i++) {
        nvtxRangePushA("train_step");
        nvtxRangePushA("forward");
        if (temporary())
            return 1;
        nvtxRangePop();
        nvtxRangePushA("backward");
        nvtxRangePushA("train_step");   /* not outermost: no step of its own */
        if (leak_one_step(i))
            return 1;
        nvtxRangePop();
        nvtxRangePop();
        nvtxMarkA("step done");
        nvtxRangePop();
    }
    return 0;
}

static int run_startend(void)
{
    nvtxDomainHandle_t dom = nvtxDomainCreateA("trainer");
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    for (int i = 0; i < STEPS; i++) {
        a.message.ascii = "train_step";
        nvtxRangeId_t r = nvtxDomainRangeStartEx(dom, &a);
        a.message.ascii = "forward";
        nvtxRangeId_t f = nvtxDomainRangeStartEx(dom, &a);
        if (temporary())
            return 1;
        nvtxDomainRangeEnd(dom, f);
        for (int k = 0; k < 2; k++) {   /* two in the default domain */
            nvtxRangeId_t other = nvtxRangeStartA("train_step");
            if (k == 0 && leak_one_step(i))
                return 1;
            nvtxRangeEnd(other);
        }
        nvtxDomainRangeEnd(dom, r);
    }
    nvtxDomainDestroy(dom);
    return 0;
}

static void *heap_base;
static nvtxDomainHandle_t mem_dom;
static nvtxMemHeapHandle_t heap;

static nvtxMemHeapHandle_t register_heap(void *base, size_t size)
{
    nvtxMemVirtualRangeDesc_t r = { size, base };
    nvtxMemHeapDesc_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof r;
    d.typeSpecificDesc = &r;
    return nvtxMemHeapRegister(mem_dom, &d);
}

/* Registers size bytes at heap_base + off as one region, its handle into *hout. A
 * macro: the registering call is then made by the function that uses it, which the
 * region's site names. */
#define REGISTER_REGION(off, size, hout)                                       \
    do {                                                                       \
        nvtxMemVirtualRangeDesc_t r_ = { (size), (char *)heap_base + (off) };  \
        nvtxMemRegionsRegisterBatch_t b_;                                      \
        memset(&b_, 0, sizeof b_);                                             \
        b_.extCompatID = NVTX_EXT_COMPATID_MEM;                                \
        b_.structSize = sizeof b_;                                             \
        b_.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;                         \
        b_.heap = heap;                                                        \
        b_.regionCount = 1;                                                    \
        b_.regionDescElementSize = sizeof r_;                                  \
        b_.regionDescElements = &r_;                                           \
        b_.regionHandleElementsOut = (hout);                                   \
        nvtxMemRegionsRegister(mem_dom, &b_);                                  \
    } while (0)

__attribute__((noinline)) static void keep_region(size_t off)
{
    nvtxMemRegionHandle_t h;
    REGISTER_REGION(off, KEEP_BYTES, &h);
    __asm__ volatile("" ::: "memory");   /* no tail call: this frame stays */
}

__attribute__((noinline)) static nvtxMemRegionHandle_t temp_region(size_t off)
{
    nvtxMemRegionHandle_t h = NULL;
    REGISTER_REGION(off, TEMP_REGION, &h);
    __asm__ volatile("" ::: "memory");
    return h;
}

static void unregister(int by_handle, const void *ptr, nvtxMemRegionHandle_t h)
{
    nvtxMemRegionRef_t ref;
    if (by_handle)
        ref.handle = h;
    else
        ref.pointer = ptr;
    nvtxMemRegionsUnregisterBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.refType = by_handle ? NVTX_MEM_REGION_REF_TYPE_HANDLE : NVTX_MEM_REGION_REF_TYPE_POINTER;
    b.refCount = 1;
    b.refElementSize = sizeof ref;
    b.refElements = &ref;
    nvtxMemRegionsUnregister(mem_dom, &b);
}

/* noinline: the heap's site is titled run_suballoc (check_nvtx.py suballoc) in every
 * build type; inlined into main, only a build with debug information could name it. */
__attribute__((noinline)) static int run_suballoc(void)
{
    CHECK(cudaMalloc(&heap_base, HEAP_BYTES));
    mem_dom = nvtxDomainCreateA("suballoc");
    heap = register_heap(heap_base, HEAP_BYTES);
    size_t top = (size_t)HEAP_BYTES / 2;   /* kept regions grow from the middle */
    for (int i = 0; i < STEPS; i++) {
        nvtxRangePushA("train_step");
        size_t t1 = 0, t2 = TEMP_REGION;
        nvtxMemRegionHandle_t h1 = temp_region(t1);
        nvtxMemRegionHandle_t h2 = temp_region(t2);
        (void)h1;
        keep_region(top + (size_t)i * KEEP_BYTES);
        unregister(0, (char *)heap_base + t1, NULL);
        unregister(1, NULL, h2);
        nvtxRangePop();
    }
    return 0;
}

static void step(void)
{
    nvtxRangePushA("train_step");
    nvtxRangePop();
}

static int run_unregister(void)
{
    CHECK(cudaMalloc(&heap_base, HEAP_BYTES));
    mem_dom = nvtxDomainCreateA("suballoc");
    heap = register_heap(heap_base, HEAP_BYTES);
    keep_region(0);
    keep_region(KEEP_BYTES);
    step();   /* 1: two regions */
    unregister(1, NULL, (nvtxMemRegionHandle_t)(uintptr_t)0x1234);   /* unknown: ignored */
    nvtxMemHeapUnregister(mem_dom, (nvtxMemHeapHandle_t)(uintptr_t)999);
    nvtxMemHeapReset(mem_dom, (nvtxMemHeapHandle_t)(uintptr_t)998);
    {
        nvtxMemVirtualRangeDesc_t r = { KEEP_BYTES / 2, heap_base };
        nvtxMemRegionsResizeBatch_t b;
        memset(&b, 0, sizeof b);
        b.extCompatID = NVTX_EXT_COMPATID_MEM;
        b.structSize = sizeof b;
        b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        b.regionDescCount = 1;
        b.regionDescElementSize = sizeof r;
        b.regionDescElements = &r;
        nvtxMemRegionsResize(mem_dom, &b);
    }
    step();   /* 2: one and a half regions */
    nvtxMemHeapReset(mem_dom, heap);
    step();   /* 3: none */
    keep_region(0);
    step();   /* 4: one */
    nvtxMemHeapUnregister(mem_dom, heap);
    step();   /* 5: none */
    keep_region(0);   /* the heap is gone: ignored */
    step();   /* 6: none */
    CHECK(cudaFree(heap_base));
    return 0;
}

#define EDGE_STEPS 5
#define EDGE_SLEEP_MS 300
#define MARKS 50

static void other_ranges(void)
{
    nvtxRangePushA("warmup");
    nvtxRangePushA("warmup");
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeId_t r = nvtxRangeStartA("load");
    nvtxMarkA("loaded");
    nvtxRangeEnd(r);
}

static int run_edges(void)
{
    nvtxRangePushA("train_step");   /* before any CUDA call: not a step */
    nvtxRangePop();
    nvtxMarkA("before cuda");
    other_ranges();
    nvtxRangePushA("train_step");   /* step 1: opened before the first CUDA call */
    for (int i = 0; i < EDGE_STEPS; i++) {
        if (i > 0)
            nvtxRangePushA("train_step");
        nvtxMarkA("in step");
        other_ranges();
        if (temporary() || leak_one_step(i))
            return 1;
        if (i == 0)
            usleep(EDGE_SLEEP_MS * 1000);
        nvtxMarkA("in step");
        other_ranges();
        nvtxRangePop();
    }
    return 0;
}

static int run_marks(void)
{
    for (int i = 0; i < STEPS; i++) {
        nvtxRangePushA("train_step");
        if (leak_one_step(i))
            return 1;
        for (int k = 0; k < MARKS; k++)
            nvtxMarkA("tick");
        nvtxRangePop();
    }
    return 0;
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int run_nocuda(void)
{
    static char host[1 << 20];
    nvtxRangePushA("train_step");
    nvtxMarkA("no CUDA here");
    mem_dom = nvtxDomainCreateA("suballoc");
    heap_base = host;
    heap = register_heap(host, sizeof host);
    keep_region(0);
    nvtxMemHeapUnregister(mem_dom, heap);
    nvtxRangePop();
    printf("threads %d fds %d\n", count_dir("/proc/self/task"), count_dir("/proc/self/fd") - 1);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rc;
    if (!strcmp(mode, "steps"))
        rc = run_steps();
    else if (!strcmp(mode, "startend"))
        rc = run_startend();
    else if (!strcmp(mode, "suballoc"))
        rc = run_suballoc();
    else if (!strcmp(mode, "unregister"))
        rc = run_unregister();
    else if (!strcmp(mode, "nocuda"))
        rc = run_nocuda();
    else if (!strcmp(mode, "edges"))
        rc = run_edges();
    else if (!strcmp(mode, "marks"))
        rc = run_marks();
    else {
        fprintf(stderr, "usage: prog_nvtx steps|startend|suballoc|unregister|nocuda|edges|marks\n");
        return 2;
    }
    if (rc)
        return 1;
    printf("prog_nvtx %s: ok\n", mode);
    return 0;
}
