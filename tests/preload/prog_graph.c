/* prog_graph.c — graph memory under the preload: CUDA graphs with allocation and free
 * nodes, made explicitly and by stream capture, on the SHARED runtime and on the
 * driver (simulated libcudart.so.13 / libcuda.so.1).
 *
 *   prog_graph SCENARIO        rt | drv | leak
 *
 * Every CUDA call's result and the errno after it are printed ("name rc errno"), so
 * that a run with the preload can be compared line by line with a run without it.
 * With VT_EXPECT_TRACKED=1 the live bytes after each event are asserted exactly
 * (vramtrace_live_bytes, include/vramtrace.h): a node costs nothing, a launch counts
 * its allocation nodes, a second launch does not double them, a free node / a free
 * outside the graph ends them, destroying the exec or the graph does not (the CUDA
 * programming guide, "Graph Memory Nodes"), a captured cudaMallocAsync whose graph
 * never launches counts 0. Exit 0 = every check held.
 *   leak: each step captures a graph with one 1,234,944-byte cudaMallocAsync and no
 *   free, launches it once and destroys exec and graph (the allocation stays: a leak
 *   of that many bytes per step, kind graph), plus a graph that allocates and frees
 *   4 MiB (no leak); the graph pool keeps its reserve at the end (no trim).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace.h"

static int tracked;
static int failures;

/* Runs CALL with errno set to a marker; prints its result and errno; returns it. */
#define RUN(CALL)                                                                          \
    ({                                                                                     \
        errno = 4242;                                                                      \
        int rc_ = (int)(CALL);                                                             \
        int e_ = errno;                                                                    \
        printf("%-40.40s %d %d\n", #CALL, rc_, e_);                                        \
        rc_;                                                                               \
    })
#define WANT(CALL, rc)                                                                     \
    do {                                                                                   \
        int got_ = RUN(CALL);                                                              \
        if (got_ != (int)(rc)) {                                                           \
            fprintf(stderr, "%s:%d: %s = %d, expected %d\n", __FILE__, __LINE__, #CALL, got_, (int)(rc)); \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)
#define OK(CALL) WANT(CALL, 0)
#define EXPECT_LIVE(v)                                                                     \
    do {                                                                                   \
        unsigned long long got_ = vramtrace_live_bytes(-1), want_ = (v);                    \
        if (tracked && got_ != want_) {                                                    \
            fprintf(stderr, "%s:%d: live bytes %llu, expected %llu\n", __FILE__, __LINE__, got_, want_); \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define MiB (1ull << 20)

static void graph_attrs(void)
{
    unsigned long long res = 0, used = 0;
    OK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &res));
    OK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    printf("graph pool reserved %llu used %llu\n", res, used);
}

static struct cudaMemAllocNodeParams alloc_params(size_t bytes)
{
    struct cudaMemAllocNodeParams p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    return p;
}

static void scenario_rt(void)
{
    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    EXPECT_LIVE(0);

    /* explicit allocation node, no free node */
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaGraphNode_t n;
    struct cudaMemAllocNodeParams ap = alloc_params(3 * MiB);
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &ap));
    EXPECT_LIVE(0);                                   /* node create: nothing */
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphUpload(x, s));
    EXPECT_LIVE(0);                                   /* upload: reserve only */
    OK(cudaGraphLaunch(x, s));
    EXPECT_LIVE(3 * MiB);                             /* launch: counted */
    WANT(cudaGraphLaunch(x, s), cudaErrorInvalidValue); /* unfreed: refused */
    EXPECT_LIVE(3 * MiB);
    OK(cudaGraphExecDestroy(x));
    EXPECT_LIVE(3 * MiB);                             /* exec destroy frees nothing */
    OK(cudaGraphDestroy(g));
    EXPECT_LIVE(3 * MiB);
    OK(cudaFree(ap.dptr));                            /* free outside the graph */
    EXPECT_LIVE(0);
    WANT(cudaFree(ap.dptr), cudaErrorInvalidValue);
    EXPECT_LIVE(0);

    /* auto free on launch: a second launch does not double */
    ap = alloc_params(5000);
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &ap));
    OK(cudaGraphInstantiateWithFlags(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    OK(cudaGraphLaunch(x, s));
    EXPECT_LIVE(5000);
    OK(cudaGraphLaunch(x, s));
    EXPECT_LIVE(5000);                                /* second launch: not doubled */
    /* a free node in another graph frees it at that graph's launch */
    cudaGraph_t g2;
    cudaGraphExec_t x2;
    cudaGraphNode_t fn;
    OK(cudaGraphCreate(&g2, 0));
    OK(cudaGraphAddMemFreeNode(&fn, g2, NULL, 0, ap.dptr));
    EXPECT_LIVE(5000);                                /* free node create: nothing yet */
    cudaGraphInstantiateParams ip;
    memset(&ip, 0, sizeof ip);
    OK(cudaGraphInstantiateWithParams(&x2, g2, &ip));
    OK(cudaGraphLaunch(x2, s));
    EXPECT_LIVE(0);                                   /* free node launch */
    OK(cudaGraphExecDestroy(x2));
    OK(cudaGraphDestroy(g2));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
    EXPECT_LIVE(0);

    /* alloc and free node in one graph: live only inside the launch */
    ap = alloc_params(2 * MiB);
    cudaGraphNode_t an;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
    OK(cudaGraphAddMemFreeNode(&fn, g, &an, 1, ap.dptr));
    WANT(cudaGraphAddMemFreeNode(&fn, g, &an, 1, ap.dptr), cudaErrorInvalidValue);
    OK(cudaGraphInstantiate(&x, g, 0));
    unsigned long long peak0 = vramtrace_peak_bytes(-1);
    OK(cudaGraphLaunch(x, s));
    OK(cudaGraphLaunch(x, s));
    EXPECT_LIVE(0);
    if (tracked && vramtrace_peak_bytes(-1) < 2 * MiB && peak0 < 2 * MiB) {
        fprintf(stderr, "peak does not show the launch's 2 MiB\n");
        failures++;
    }
    WANT(cudaFree(ap.dptr), cudaErrorInvalidValue);   /* freed in its own graph */
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
    EXPECT_LIVE(0);

    /* stream capture: cudaMallocAsync / kernel-free work / cudaFreeAsync */
    enum cudaStreamCaptureStatus st;
    void *p = NULL, *q = NULL;
    WANT(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaStreamIsCapturing(s, &st));
    printf("capturing %d\n", (int)st);
    unsigned long long id = 0;
    cudaGraph_t cg = NULL;
    OK(cudaStreamGetCaptureInfo(s, &st, &id, &cg, NULL, NULL, NULL));
    OK(cudaMallocAsync(&p, 1000, s));
    EXPECT_LIVE(0);                                   /* captured: not async memory */
    OK(cudaMallocAsync(&q, 7 * MiB, s));
    OK(cudaMemsetAsync(p, 0, 1000, s));
    OK(cudaFreeAsync(p, s));                          /* a free node */
    EXPECT_LIVE(0);
    OK(cudaStreamEndCapture(s, &g));
    WANT(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
    EXPECT_LIVE(0);
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, s));
    EXPECT_LIVE(7 * MiB);                             /* p freed in the graph, q kept */
    OK(cudaFreeAsync(q, s));                          /* free outside, not capturing */
    EXPECT_LIVE(0);
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));

    /* a captured allocation whose graph never launches counts 0 */
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    OK(cudaMallocAsync(&p, 9 * MiB, s));
    OK(cudaStreamEndCapture(s, &g));
    OK(cudaGraphInstantiate(&x, g, 0));
    EXPECT_LIVE(0);
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
    EXPECT_LIVE(0);
    WANT(cudaFree(p), cudaErrorInvalidValue);

    /* an ordinary cudaMallocAsync after the captures is async memory again */
    OK(cudaMallocAsync(&p, 4096, s));
    EXPECT_LIVE(4096);
    OK(cudaFreeAsync(p, s));
    EXPECT_LIVE(0);

    /* an invalidated capture: nothing counted, errors unchanged */
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaMallocAsync(&p, 1 * MiB, s));
    WANT(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    WANT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    EXPECT_LIVE(0);

    graph_attrs();
    OK(cudaDeviceGraphMemTrim(0));
    EXPECT_LIVE(0);
    graph_attrs();
    unsigned long long zero = 0;
    OK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
    WANT(cudaDeviceGetGraphMemAttribute(9, cudaGraphMemAttrUsedMemCurrent, &zero), cudaErrorInvalidDevice);
    WANT(cudaGraphLaunch((cudaGraphExec_t)(uintptr_t)0x1234, s), cudaErrorInvalidValue); /* unknown */
    WANT(cudaGraphExecDestroy((cudaGraphExec_t)(uintptr_t)0x1234), cudaErrorInvalidValue);
    WANT(cudaGraphDestroy((cudaGraph_t)(uintptr_t)0x1234), cudaErrorInvalidValue);
    OK(cudaStreamDestroy(s));
}

static void scenario_drv(void)
{
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&ctx, 0));
    OK(cuCtxSetCurrent(ctx));
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUgraph g;
    CUgraphExec x;
    CUgraphNode n;
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.poolProps.location.id = 0;
    ap.bytesize = 6 * MiB;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphAddMemAllocNode(&n, g, NULL, 0, &ap));
    EXPECT_LIVE(0);
    OK(cuGraphInstantiateWithFlags(&x, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    OK(cuGraphUpload(x, s));
    EXPECT_LIVE(0);
    OK(cuGraphLaunch(x, s));
    EXPECT_LIVE(6 * MiB);
    OK(cuGraphLaunch(x, s));
    EXPECT_LIVE(6 * MiB);                             /* not doubled */
    OK(cuMemFree(ap.dptr));
    EXPECT_LIVE(0);
    OK(cuGraphExecDestroy(x));
    OK(cuGraphDestroy(g));

    CUstreamCaptureStatus st;
    CUdeviceptr p = 0, q = 0;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuStreamIsCapturing(s, &st));
    printf("capturing %d\n", (int)st);
    cuuint64_t id = 0;
    CUgraph cg = NULL;
    OK(cuStreamGetCaptureInfo(s, &st, &id, &cg, NULL, NULL, NULL));
    OK(cuMemAllocAsync(&p, 12345, s));
    OK(cuMemAllocAsync(&q, 54321, s));
    OK(cuMemFreeAsync(q, s));
    EXPECT_LIVE(0);
    OK(cuStreamEndCapture(s, &g));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    OK(cuGraphInstantiateWithParams(&x, g, &ip));
    OK(cuGraphLaunch(x, s));
    EXPECT_LIVE(12345);
    OK(cuGraphExecDestroy(x));
    OK(cuGraphDestroy(g));
    EXPECT_LIVE(12345);                               /* destruction frees nothing */
    OK(cuMemFreeAsync(p, s));
    EXPECT_LIVE(0);
    WANT(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
    cuuint64_t res = 0;
    OK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &res));
    printf("graph pool reserved %llu\n", (unsigned long long)res);
    OK(cuDeviceGraphMemTrim(0));
    OK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &res));
    printf("graph pool reserved %llu\n", (unsigned long long)res);
    WANT(cuDeviceGraphMemTrim(9), CUDA_ERROR_INVALID_DEVICE);
    cuuint64_t zero = 0;
    OK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    OK(cuStreamDestroy(s));
    OK(cuDevicePrimaryCtxRelease(0));
}

#define LEAK_BYTES 1234944ull   /* 1206 KiB: rounded to 2 MiB by the device, not by us */

/* One step's graph: the leak's allocation (no free), captured here. */
static __attribute__((noinline)) void graph_leaky_step(cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphExec_t x;
    void *p;
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaMallocAsync(&p, LEAK_BYTES, s));
    OK(cudaStreamEndCapture(s, &g));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, s));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
}

/* One step's temporary: allocated and freed inside the graph. */
static __attribute__((noinline)) void graph_temp_step(cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaGraphNode_t an, fn;
    struct cudaMemAllocNodeParams ap = alloc_params(4 * MiB);
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
    OK(cudaGraphAddMemFreeNode(&fn, g, &an, 1, ap.dptr));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, s));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
}

static void scenario_leak(void)
{
    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < 12; i++) {
        graph_leaky_step(s);
        graph_temp_step(s);
        EXPECT_LIVE((unsigned long long)(i + 1) * LEAK_BYTES);
        vramtrace_step();
        usleep(10000);
    }
    graph_attrs();
    OK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    tracked = getenv("VT_EXPECT_TRACKED") && atoi(getenv("VT_EXPECT_TRACKED"));
    if (tracked && !vramtrace_enabled()) {
        fprintf(stderr, "VT_EXPECT_TRACKED=1 but the preload is not active\n");
        return 2;
    }
    const char *s = argc > 1 ? argv[1] : "rt";
    if (!strcmp(s, "rt")) scenario_rt();
    else if (!strcmp(s, "drv")) scenario_drv();
    else if (!strcmp(s, "leak")) scenario_leak();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
