/* vt_graph.h — graph memory: the allocation and free nodes of CUDA graphs, the
 * executable graphs made from them, and the stream captures in progress (CUDA
 * programming guide, "Graph Memory Nodes"; cuda.h / cuda_runtime_api.h "Graph
 * Management", CUDA 13).
 *
 * An allocation node's memory is counted (kind graph, in the core's table, through
 * its event ring) from the launch that makes it physical until it is freed: a free
 * node of a launched graph, or a free outside any graph (cudaFree, cudaFreeAsync,
 * cuMemFree_v2, cuMemFreeAsync: the hooks' ordinary free path takes the record).
 * Destroying a graph or an exec frees nothing (the guide: "Graph destruction does not
 * automatically free any live graph-allocated memory"). A node never launched counts
 * nothing. The site is the stack that created the node (cudaGraphAddMemAllocNode) or
 * made the captured call (cudaMallocAsync on a capturing stream).
 *
 * Handles (graph, exec) and addresses are the driver's values as uint64_t; they are
 * only compared, never dereferenced. Unknown handles are ignored.
 * Thread safety: every function may be called from any thread; the tables are under
 * the core lock, and the events are posted after it is released.
 * Failure: out of memory for the tables drops the node (it is then never counted).
 */
#ifndef VT_GRAPH_H
#define VT_GRAPH_H

#include <stdint.h>

/* Stream captures begun through a hook and not yet ended (atomic). Only a gate: while
 * it is 0 a stream-ordered allocation or free is not asked about capture (one driver
 * query, vt_driver_capture_graph, when it is not). A capture that ends without a
 * successful *EndCapture* (invalidated) leaves it raised: later stream-ordered calls
 * are then asked, which costs time, not correctness. A capture begun through a call
 * with no row (cudaStreamBeginCaptureToGraph) does not raise it. */
extern int vt__graph_captures;
static inline int vt_graph_captures(void)
{
    return __atomic_load_n(&vt__graph_captures, __ATOMIC_RELAXED);
}
/* A capture began (after a successful *BeginCapture*) / ended (after a successful
 * *EndCapture*; never below 0). */
void vt_graph_capture_begin(void);
void vt_graph_capture_end(void);

/* An allocation node of graph at addr (size bytes on device, the creating stack). A
 * node already known at addr is replaced (the driver reused the address). */
void vt_graph_node_alloc(uint64_t graph, uint64_t addr, uint64_t size, int device, uint32_t stack);
/* A free node of graph for addr. */
void vt_graph_node_free(uint64_t graph, uint64_t addr);
/* cudaGraphDestroy / cuGraphDestroy succeeded: its nodes are forgotten (execs made
 * from it keep their copies). */
void vt_graph_destroyed(uint64_t graph);
/* The exec was instantiated from graph: it takes a copy of the graph's memory nodes.
 * autofree: instantiated with the auto-free-on-launch flag (a launch first frees the
 * allocations of the previous one; counted by the replacement at the same address). */
void vt_graph_instantiated(uint64_t exec, uint64_t graph, int autofree);
/* The exec was destroyed: forgotten (its live allocations stay counted). */
void vt_graph_exec_destroyed(uint64_t exec);
/* A launch of exec succeeded: each allocation node is posted as a graph allocation
 * (ctx_stream = stream), then each free node frees the record at its address. The
 * caller has started the writer (vt_hook_start). */
void vt_graph_launched(uint64_t exec, uint64_t stream);

/* Bit d set: device d (0..63) has had graph allocation nodes. Lock-free. */
uint64_t vt_graph_devices(void);

/* Fork child (one thread, the core's child step): forgets every graph and capture. */
void vt__graph_after_fork(void);

#endif /* VT_GRAPH_H */
