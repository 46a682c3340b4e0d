/*
 * sim_graph.c - graph memory and stream capture on the simulated device, through
 * the simulated runtime: an allocation node's address is fixed at creation and
 * costs nothing until a launch maps it; a free node unmaps it; the graph pool's
 * reserve stays until cudaDeviceGraphMemTrim; an unfreed allocation survives exec
 * and graph destruction until cudaFree; a relaunch with unfreed allocations fails
 * unless the exec auto-frees; captured cudaMallocAsync / kernels / copies /
 * cudaFreeAsync become nodes; the capture calls' error codes. SIMCUDA_MEM=1GiB.
 */
#include <cuda_runtime_api.h>
#include <string.h>

#include "sim_check.h"

static unsigned long long attr(enum cudaGraphMemAttributeType a)
{
    unsigned long long v = ~0ull;
    CHECK_EQ(cudaDeviceGetGraphMemAttribute(0, a, &v), cudaSuccess);
    return v;
}

static size_t free_mem(void)
{
    size_t f, t;
    CHECK_EQ(cudaMemGetInfo(&f, &t), cudaSuccess);
    return f;
}

static int host_calls;
static void host_fn(void *p) { (void)p; host_calls++; }

int main(void)
{
    CHECK_EQ(cudaSetDevice(0), cudaSuccess);
    cudaStream_t s;
    CHECK_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    size_t free0 = free_mem();

    /* ---- explicit nodes: alloc + free in one graph ---- */
    cudaGraph_t g;
    CHECK_EQ(cudaGraphCreate(&g, 0), cudaSuccess);
    struct cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = 3 * MiB;
    cudaGraphNode_t an, fn, hn;
    CHECK_EQ(cudaGraphAddMemAllocNode(&an, g, NULL, 0, &ap), cudaSuccess);
    CHECK(ap.dptr != NULL);
    CHECK_EQ(free_mem(), free0);                       /* a node costs nothing */
    CHECK_EQ(cudaMemset(ap.dptr, 0, 16), cudaErrorInvalidValue); /* not mapped yet */
    struct cudaHostNodeParams hp = {host_fn, NULL};
    CHECK_EQ(cudaGraphAddHostNode(&hn, g, &an, 1, &hp), cudaSuccess);
    CHECK_EQ(cudaGraphAddMemFreeNode(&fn, g, &hn, 1, ap.dptr), cudaSuccess);
    CHECK_EQ(cudaGraphAddMemFreeNode(&fn, g, &hn, 1, ap.dptr), cudaErrorInvalidValue); /* twice */
    cudaGraphExec_t x, x2;
    CHECK_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    CHECK_EQ(cudaGraphInstantiate(&x2, g, 0), cudaErrorInvalidValue); /* one exec at a time */
    CHECK_EQ(cudaGraphUpload(x, s), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrReservedMemCurrent), 4 * MiB);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 0);
    CHECK_EQ(free_mem(), free0 - 4 * MiB);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_EQ(host_calls, 1);
    /* freed inside the graph: the bytes stay the graph's until trimmed */
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 4 * MiB);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemHigh), 4 * MiB);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);       /* freed: may launch again */
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 4 * MiB);  /* not twice */
    CHECK_EQ(cudaFree(ap.dptr), cudaErrorInvalidValue);  /* has a free node in its graph */
    CHECK_EQ(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_EQ(cudaGraphExecDestroy(x), cudaErrorInvalidValue);
    CHECK_EQ(cudaGraphDestroy(g), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 0);          /* the graph is gone */
    CHECK_EQ(attr(cudaGraphMemAttrReservedMemCurrent), 4 * MiB); /* kept until trim */
    CHECK_EQ(cudaDeviceGraphMemTrim(0), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrReservedMemCurrent), 0);
    CHECK_EQ(free_mem(), free0);
    unsigned long long zero = 0, one = 1;
    CHECK_EQ(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemHigh), 0);
    CHECK_EQ(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &one), cudaErrorInvalidValue);
    CHECK_EQ(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero), cudaErrorInvalidValue);
    CHECK_EQ(cudaDeviceGetGraphMemAttribute(7, cudaGraphMemAttrUsedMemCurrent, &zero), cudaErrorInvalidDevice);

    /* ---- capture: cudaMallocAsync without a free: live after launch, survives the
     * exec and the graph, freed by cudaFree ---- */
    enum cudaStreamCaptureStatus st;
    CHECK_EQ(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK_EQ(st, cudaStreamCaptureStatusNone);
    CHECK_EQ(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    CHECK_EQ(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    unsigned long long id = 0;
    cudaGraph_t cg = NULL;
    CHECK_EQ(cudaStreamGetCaptureInfo(s, &st, &id, &cg, NULL, NULL, NULL), cudaSuccess);
    CHECK(id != 0 && cg != NULL);
    void *p = NULL;
    CHECK_EQ(cudaMallocAsync(&p, 1000, s), cudaSuccess);
    CHECK(p != NULL);
    CHECK_EQ(cudaMemsetAsync(p, 1, 1000, s), cudaSuccess);    /* a node: not run now */
    CHECK_EQ(cudaLaunchHostFunc(s, host_fn, NULL), cudaSuccess);
    CHECK_EQ(host_calls, 2);
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK(g == cg);
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
    CHECK_EQ(free_mem(), free0);
    CHECK_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_EQ(host_calls, 3);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 4096);
    CHECK_EQ(cudaMemset(p, 7, 1000), cudaSuccess);           /* mapped: usable */
    CHECK_EQ(((unsigned char *)p)[999], 7);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaErrorInvalidValue);   /* previous allocation unfreed */
    CHECK_EQ(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_EQ(cudaGraphDestroy(g), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 4096);     /* destruction frees nothing */
    CHECK_EQ(cudaFree(p), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 0);
    CHECK_EQ(cudaFree(p), cudaErrorInvalidValue);

    /* ---- auto free on launch; a free node in another (captured) graph ---- */
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
    CHECK_EQ(cudaMallocAsync(&p, 5 * MiB, s), cudaSuccess);
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_EQ(cudaGraphInstantiateWithFlags(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 6 * MiB);
    cudaGraph_t g2;
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaFreeAsync(p, s), cudaSuccess);
    CHECK_EQ(cudaStreamEndCapture(s, &g2), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 6 * MiB);  /* captured: not freed yet */
    cudaGraphInstantiateParams ip = {0};
    ip.flags = cudaGraphInstantiateFlagUpload;
    ip.uploadStream = s;
    CHECK_EQ(cudaGraphInstantiateWithParams(&x2, g2, &ip), cudaSuccess);
    CHECK_EQ(ip.result_out, cudaGraphInstantiateSuccess);
    CHECK_EQ(cudaGraphLaunch(x2, s), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 6 * MiB);    /* freed, still the graph's */
    CHECK_EQ(cudaDeviceGraphMemTrim(0), cudaSuccess);
    CHECK_EQ(attr(cudaGraphMemAttrUsedMemCurrent), 0);          /* trim: not live, given back */
    CHECK_EQ(attr(cudaGraphMemAttrReservedMemCurrent), 0);
    CHECK_EQ(cudaGraphExecDestroy(x2), cudaSuccess);
    CHECK_EQ(cudaGraphDestroy(g2), cudaSuccess);
    CHECK_EQ(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_EQ(cudaGraphDestroy(g), cudaSuccess);
    CHECK_EQ(cudaDeviceGraphMemTrim(0), cudaSuccess);
    CHECK_EQ(free_mem(), free0);

    /* ---- invalidated capture; unmatched end; joined streams ---- */
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    CHECK_EQ(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK_EQ(st, cudaStreamCaptureStatusInvalidated);
    g = (cudaGraph_t)1;
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    CHECK(g == NULL);
    cudaStream_t s2;
    cudaEvent_t ev;
    CHECK_EQ(cudaStreamCreate(&s2), cudaSuccess);
    CHECK_EQ(cudaEventCreate(&ev), cudaSuccess);
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaEventRecord(ev, s), cudaSuccess);
    CHECK_EQ(cudaStreamWaitEvent(s2, ev, 0), cudaSuccess);     /* s2 joins */
    CHECK_EQ(cudaStreamIsCapturing(s2, &st), cudaSuccess);
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    CHECK_EQ(cudaMallocAsync(&p, 256, s2), cudaSuccess);
    CHECK_EQ(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_EQ(cudaStreamIsCapturing(s2, &st), cudaSuccess);
    CHECK_EQ(st, cudaStreamCaptureStatusNone);
    size_t n = 0;
    CHECK_EQ(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
    CHECK_EQ(n, 1);
    cudaGraph_t cl;
    CHECK_EQ(cudaGraphClone(&cl, g), cudaErrorNotSupported);  /* has memory nodes */
    CHECK_EQ(cudaGraphDestroy(g), cudaSuccess);
    CHECK_EQ(cudaFree(p), cudaErrorInvalidValue);             /* never launched */

    CHECK_EQ(cudaStreamDestroy(s2), cudaSuccess);
    CHECK_EQ(cudaStreamDestroy(s), cudaSuccess);
    printf("graph memory on simcuda: ok\n");
    return 0;
}
