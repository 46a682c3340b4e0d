/* vt_cuda_graph.c — graph memory on the hook side: the allocation-node shims that fit
 * no shape of the hook table (cudaGraphAddMemAllocNode, cuGraphAddMemAllocNode: they
 * record no allocation but keep the creating stack), and the helpers the generated
 * shims call for capture and launch (vt_hooks.h). The counting itself is
 * preload/track/vt_graph.c. Follows cuda_runtime_api.h / cuda.h of CUDA 13 and the
 * programming guide's "Graph Memory Nodes".
 *
 * Every shim returns the real result unchanged and preserves errno; when the real
 * function cannot be found it returns the family's "not initialised" code. Only the
 * outermost hooked call on a thread notes anything (the runtime's node call reaches
 * the driver's through our cuGetProcAddress wrapper and is only forwarded there).
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"

int vt_hook_capture_graph(uint64_t stream, uint64_t *graph)
{
    int e = errno;
    vt_guard_enter();
    int r = vt_driver_capture_graph(stream, graph);
    vt_guard_leave();
    errno = e;
    return r == 1;
}

int vt_hook_captured_alloc(uint32_t stack, uint64_t addr, uint64_t size, uint64_t stream, int device)
{
    uint64_t graph = 0;
    if (!vt_hook_capture_graph(stream, &graph))
        return 0;
    vt_graph_node_alloc(graph, addr, size, device, stack);
    return 1;
}

void vt_hook_graph_launched(uint64_t exec, uint64_t stream)
{
    int e = errno;
    if (!__atomic_load_n(&vt__started, __ATOMIC_ACQUIRE))
        vt_hook_start();
    vt_graph_launched(exec, stream);
    errno = e;
}

/* The body of an allocation-node shim: CALL with the stack captured before it; on
 * success as the outermost call, the node (graph, *dptr, bytesize, device) is noted
 * with that stack. Result and errno are CALL's. */
#define VT__ALLOC_NODE_BODY(ret_t, ok, CALL, graph, DPTR, bytes, device)                  \
    VT_NESTED_FORWARD(1, CALL);                                                           \
    vt_call c;                                                                            \
    vt_call_begin(&c, 1);                                                                 \
    ret_t r = CALL;                                                                       \
    int e = errno;                                                                        \
    if (c.rec && r == (ok))                                                               \
        vt_graph_node_alloc((uint64_t)(uintptr_t)(graph), (uint64_t)(uintptr_t)(DPTR),   \
                            (bytes), (device), c.stack);                                  \
    vt_call_end(&c);                                                                      \
    errno = e;                                                                            \
    return r

cudaError_t vt__h_cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                           struct cudaMemAllocNodeParams *nodeParams)
{
    VT_REAL_OR_RETURN(cudaGraphAddMemAllocNode, VT_NOTREADY_RT);
    VT__ALLOC_NODE_BODY(cudaError_t, cudaSuccess,
                        real_cudaGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies,
                                                      nodeParams),
                        graph, nodeParams->dptr, nodeParams->bytesize, nodeParams->poolProps.location.id);
}
VT_EXPORT_ALIAS(cudaGraphAddMemAllocNode);

CUresult vt__h_cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    VT_REAL_OR_RETURN(cuGraphAddMemAllocNode, VT_NOTREADY_DRV);
    VT__ALLOC_NODE_BODY(CUresult, CUDA_SUCCESS,
                        real_cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies,
                                                    nodeParams),
                        hGraph, nodeParams->dptr, nodeParams->bytesize, nodeParams->poolProps.location.id);
}
VT_EXPORT_ALIAS(cuGraphAddMemAllocNode);
