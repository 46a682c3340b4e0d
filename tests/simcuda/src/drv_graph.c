/*
 * drv_graph.c - CUDA graphs and graph memory of the simulated driver (cuda.h
 * "Graph Management", CUDA 13.0; the programming guide's "Graph Memory Nodes").
 *
 * Design:
 *   - a graph is a list of nodes in creation order (a valid topological order:
 *     a node's dependencies exist before it). Edges are not kept; a launch runs
 *     the nodes in that order. Kernel, copy, set and empty nodes do nothing; a
 *     host node calls its function at launch;
 *   - an allocation node gets its virtual address at creation, from the device's
 *     graph address range (gva, PROT_NONE, never charged). The address stays the
 *     node's for the node's lifetime, whatever the launches do (sim_galloc);
 *   - a launch (of an exec: the node list copied at instantiation) makes each
 *     allocation physical (its pages read-write) and each free node unmaps its
 *     allocation. The graph pool (CU_GRAPH_MEM_ATTR_*): an allocation's bytes become
 *     the graphs' (USED_MEM) at its first launch and stay so, freed or not, until a
 *     trim finds it not live, its node and every exec holding it are gone, or a
 *     later launch reuses its physical memory for another allocation; the
 *     reserve (RESERVED_MEM) grows in 2 MiB steps to hold the used bytes, charged to
 *     device capacity (OOM when it cannot), and shrinks only on trim. An allocation stays live
 *     until a free node runs, cuMemFree_v2 / cuMemFreeAsync of it (only if its own
 *     graph has no free node for it), or the next launch of an exec instantiated
 *     with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH. Destroying the graph or
 *     the exec does not free it (the guide: "Graph destruction does not
 *     automatically free any live graph-allocated memory");
 *   - a launch of an exec whose allocations are still live fails with
 *     CUDA_ERROR_INVALID_VALUE unless it auto-frees; a graph with memory nodes has
 *     at most one exec at a time (CUDA_ERROR_INVALID_VALUE on a second);
 *   - cuGraphUpload grows the reserve to hold the exec's allocations;
 *     cuDeviceGraphMemTrim gives back every byte no live allocation uses (the
 *     reserve becomes the used bytes rounded up to 2 MiB);
 *   - capture (drv_capture.c) adds nodes through sim_graph_add_*_locked.
 * Every entry point takes the driver lock (drv_internal.h); host-node functions
 * run with it released.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SIM_MAGIC_GRAPH = 0x47524131u, SIM_MAGIC_NODE = 0x4e4f4431u, SIM_MAGIC_EXEC = 0x45584531u };

/* The virtual address of one allocation node, and whether it is mapped. */
typedef struct sim_galloc {
    uintptr_t addr;
    size_t    size, span;
    int       device;
    unsigned  refs;        /* the node, and every exec that holds it              */
    int       live;        /* mapped (between a launch and its free)              */
    int       assoc;       /* its bytes are the graphs' (USED_MEM): from the first
                              launch until a trim finds it not live, or it goes   */
    int       freed_in_graph; /* its graph has a free node for it: no free outside */
    UT_hash_handle hh;
} sim_galloc;

typedef struct sim_op {
    CUgraphNodeType type;
    sim_galloc *ga;        /* MEM_ALLOC */
    uintptr_t   free_addr; /* MEM_FREE */
    CUhostFn    fn;        /* HOST */
    void       *user;
} sim_op;

struct CUgraph_st {
    uint32_t magic;
    sim_op  *ops;
    struct CUgraphNode_st **nodes;
    size_t   n, cap;
    int      mem_nodes;    /* has allocation or free nodes                         */
    int      execs;        /* live execs instantiated from it                       */
    struct CUgraph_st *next;
};

struct CUgraphNode_st {
    uint32_t magic;
    struct CUgraph_st *graph;
    size_t   index;        /* into graph->ops                                       */
};

struct CUgraphExec_st {
    uint32_t magic;
    sim_op  *ops;
    size_t   n;
    struct CUgraph_st *graph; /* NULL once the graph is destroyed                   */
    unsigned long long flags;
    struct CUgraphExec_st *next;
};

static sim_galloc *gallocs;               /* hash by addr                           */
static struct CUgraph_st *graphs;
static struct CUgraphExec_st *execs;

static int graph_known_locked(struct CUgraph_st *g)
{
    for (struct CUgraph_st *p = graphs; p; p = p->next)
        if (p == g)
            return 1;
    return 0;
}

static int exec_known_locked(struct CUgraphExec_st *x)
{
    for (struct CUgraphExec_st *p = execs; p; p = p->next)
        if (p == x)
            return 1;
    return 0;
}

/* ---- graph allocations: virtual range, mapping, the graph pool ---- */

static CUresult gva_ready_locked(sim_device *d)
{
    if (d->gva_map)
        return CUDA_SUCCESS;
    size_t len = d->arena_size + SIM_GRANULARITY;
    void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (sim_arena_init(&d->gva, d->arena_size) != 0) {
        munmap(m, len);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    d->gva_map = m;
    d->gva_len = len;
    d->gva_base = ((uintptr_t)m + SIM_GRANULARITY - 1) & ~(uintptr_t)(SIM_GRANULARITY - 1);
    return CUDA_SUCCESS;
}

static CUresult galloc_new_locked(int dev, size_t size, sim_galloc **out)
{
    if (dev < 0 || dev >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    sim_device *d = &sim_drv.dev[dev];
    CUresult r = gva_ready_locked(d);
    if (r != CUDA_SUCCESS)
        return r;
    size_t align, span = sim_span_for(size, &align);
    /* whole pages: a mapping is mprotect'ed page by page */
    span = (span + 4095) & ~(size_t)4095;
    if (align < 4096)
        align = 4096;
    size_t off;
    sim_galloc *g = calloc(1, sizeof *g);
    if (!g || sim_arena_alloc(&d->gva, span, align, &off) != 0) {
        free(g);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->addr = d->gva_base + off;
    g->size = size;
    g->span = span;
    g->device = dev;
    g->refs = 1;
    HASH_ADD(hh, gallocs, addr, sizeof g->addr, g);
    *out = g;
    return CUDA_SUCCESS;
}

/* The allocation's lifetime ends; its bytes stay the graphs' until a trim. */
static void galloc_unmap_locked(sim_galloc *g)
{
    madvise((void *)g->addr, g->span, MADV_DONTNEED);
    mprotect((void *)g->addr, g->span, PROT_NONE);
    g->live = 0;
}

/* Its address goes back once nothing refers to it and it is not mapped; its bytes
 * then stay in the reserve only. */
static void galloc_put_locked(sim_galloc *g)
{
    if (--g->refs > 0 || g->live)
        return;
    if (g->assoc)
        sim_drv.dev[g->device].graph_used -= g->span;
    HASH_DEL(gallocs, g);
    sim_arena_free(&sim_drv.dev[g->device].gva, g->addr - sim_drv.dev[g->device].gva_base, g->span);
    free(g);
}

/* Grows device d's graph reserve to hold `need` bytes of allocations. */
static CUresult reserve_locked(sim_device *d, size_t need)
{
    if (need <= d->graph_reserved)
        return CUDA_SUCCESS;
    size_t want = (need + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
    if (want - d->graph_reserved > sim_device_free_locked(d))
        return CUDA_ERROR_OUT_OF_MEMORY;
    d->graph_reserved = want;
    if (want > d->graph_reserved_high)
        d->graph_reserved_high = want;
    return CUDA_SUCCESS;
}

static CUresult galloc_map_locked(sim_galloc *g)
{
    sim_device *d = &sim_drv.dev[g->device];
    if (!g->assoc) {
        /* physical memory of freed allocations is reused first (their lifetimes
         * are over: the device's work runs in call order here) */
        size_t got = 0;
        sim_galloc *o, *tmp;
        HASH_ITER(hh, gallocs, o, tmp)
            if (got < g->span && o->device == g->device && o->assoc && !o->live) {
                o->assoc = 0;
                d->graph_used -= o->span;
                got += o->span;
            }
        CUresult r = reserve_locked(d, d->graph_used + g->span);
        if (r != CUDA_SUCCESS)
            return r;
    }
    if (mprotect((void *)g->addr, g->span, PROT_READ | PROT_WRITE) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->live = 1;
    if (!g->assoc) {
        g->assoc = 1;
        d->graph_used += g->span;
        if (d->graph_used > d->graph_used_high)
            d->graph_used_high = d->graph_used;
    }
    return CUDA_SUCCESS;
}

int sim_graph_range_live_locked(uintptr_t p, size_t len)
{
    sim_galloc *g, *tmp;
    HASH_ITER(hh, gallocs, g, tmp)
        if (g->live && p >= g->addr && p - g->addr < g->size)
            return len <= g->size - (p - g->addr);
    return 0;
}

CUresult sim_graph_free_outside_locked(uintptr_t p)
{
    sim_galloc *g;
    HASH_FIND(hh, gallocs, &p, sizeof p, g);
    if (!g || !g->live || g->freed_in_graph)
        return CUDA_ERROR_INVALID_VALUE;
    galloc_unmap_locked(g);
    g->refs++;
    galloc_put_locked(g);
    return CUDA_SUCCESS;
}

/* ---- graphs and nodes ---- */

CUresult sim_graph_new_locked(struct CUgraph_st **out)
{
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = SIM_MAGIC_GRAPH;
    g->next = graphs;
    graphs = g;
    *out = g;
    return CUDA_SUCCESS;
}

static CUresult node_add_locked(struct CUgraph_st *g, const sim_op *op, CUgraphNode *out)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        sim_op *ops = realloc(g->ops, cap * sizeof *ops);
        if (!ops)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->ops = ops;
        struct CUgraphNode_st **nodes = realloc(g->nodes, cap * sizeof *nodes);
        if (!nodes)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nodes;
        g->cap = cap;
    }
    struct CUgraphNode_st *n = calloc(1, sizeof *n);
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->magic = SIM_MAGIC_NODE;
    n->graph = g;
    n->index = g->n;
    g->ops[g->n] = *op;
    g->nodes[g->n++] = n;
    if (out)
        *out = n;
    return CUDA_SUCCESS;
}

/* Common checks of cuGraphAdd*Node: the graph, the dependency list. */
static CUresult node_args_locked(CUgraphNode *ph, struct CUgraph_st *g, const CUgraphNode *deps, size_t ndeps)
{
    if (!ph || !graph_known_locked(g) || (ndeps && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < ndeps; i++)
        if (!deps[i] || deps[i]->magic != SIM_MAGIC_NODE || deps[i]->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult alloc_node_locked(struct CUgraph_st *g, size_t size, int dev, CUgraphNode *ph, CUdeviceptr *dptr)
{
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    sim_galloc *ga;
    CUresult r = galloc_new_locked(dev, size, &ga);
    if (r != CUDA_SUCCESS)
        return r;
    sim_op op = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC, .ga = ga};
    r = node_add_locked(g, &op, ph);
    if (r != CUDA_SUCCESS) {
        galloc_put_locked(ga);
        return r;
    }
    g->mem_nodes = 1;
    *dptr = (CUdeviceptr)ga->addr;
    return CUDA_SUCCESS;
}

static CUresult free_node_locked(struct CUgraph_st *g, CUdeviceptr dptr, CUgraphNode *ph)
{
    uintptr_t p = (uintptr_t)dptr;
    sim_galloc *ga;
    HASH_FIND(hh, gallocs, &p, sizeof p, ga);
    if (!ga)
        return CUDA_ERROR_INVALID_VALUE; /* not an address an allocation node returned */
    int own = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (g->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_FREE && g->ops[i].free_addr == p)
            return CUDA_ERROR_INVALID_VALUE; /* freed twice in one graph */
        if (g->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && g->ops[i].ga == ga)
            own = 1;
    }
    sim_op op = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE, .free_addr = p};
    CUresult r = node_add_locked(g, &op, ph);
    if (r == CUDA_SUCCESS) {
        g->mem_nodes = 1;
        if (own)
            ga->freed_in_graph = 1;
    }
    return r;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!phGraph || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = sim_graph_new_locked(phGraph);
    SIM_UNLOCK();
    return r;
}

void sim_graph_free_locked(struct CUgraph_st *g)
{
    for (struct CUgraph_st **pp = &graphs; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    for (struct CUgraphExec_st *x = execs; x; x = x->next)
        if (x->graph == g)
            x->graph = NULL;
    for (size_t i = 0; i < g->n; i++) {
        if (g->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
            galloc_put_locked(g->ops[i].ga);
        g->nodes[i]->magic = 0;
        free(g->nodes[i]);
    }
    g->magic = 0;
    free(g->ops);
    free(g->nodes);
    free(g);
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (graph_known_locked(hGraph)) {
        sim_graph_free_locked(hGraph);
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    SIM_REQUIRE_INIT();
    if (!nodeParams || nodeParams->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = node_args_locked(phGraphNode, hGraph, dependencies, numDependencies);
    if (r == CUDA_SUCCESS) {
        int dev = nodeParams->poolProps.location.id;
        r = (dev < 0 || dev >= sim_drv.ndev) ? CUDA_ERROR_INVALID_DEVICE
            : sim_fail_next_locked()        ? CUDA_ERROR_OUT_OF_MEMORY
                                             : alloc_node_locked(hGraph, nodeParams->bytesize, dev, phGraphNode,
                                                                 &nodeParams->dptr);
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               size_t numDependencies, CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = node_args_locked(phGraphNode, hGraph, dependencies, numDependencies);
    if (r == CUDA_SUCCESS)
        r = free_node_locked(hGraph, dptr, phGraphNode);
    SIM_UNLOCK();
    return r;
}

static CUresult plain_node(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeType type,
                           CUhostFn fn, void *user)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = node_args_locked(ph, g, deps, ndeps);
    if (r == CUDA_SUCCESS) {
        sim_op op = {.type = type, .fn = fn, .user = user};
        r = node_add_locked(g, &op, ph);
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                             size_t numDependencies)
{
    return plain_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY, NULL, NULL);
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (!nodeParams || (!nodeParams->func && !nodeParams->kern))
        return CUDA_ERROR_INVALID_VALUE;
    return plain_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_KERNEL, NULL, NULL);
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    (void)ctx;
    if (!copyParams)
        return CUDA_ERROR_INVALID_VALUE;
    return plain_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMCPY, NULL, NULL);
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    (void)ctx;
    if (!memsetParams)
        return CUDA_ERROR_INVALID_VALUE;
    return plain_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMSET, NULL, NULL);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    if (!nodeParams || !nodeParams->fn)
        return CUDA_ERROR_INVALID_VALUE;
    return plain_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_HOST, nodeParams->fn,
                      nodeParams->userData);
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    SIM_REQUIRE_INIT();
    if (!numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (graph_known_locked(hGraph)) {
        if (nodes)
            for (size_t i = 0; i < hGraph->n && i < *numNodes; i++)
                nodes[i] = hGraph->nodes[i];
        *numNodes = hGraph->n;
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    SIM_REQUIRE_INIT();
    if (!hNode || !type || hNode->magic != SIM_MAGIC_NODE)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    *type = hNode->graph->ops[hNode->index].type;
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    SIM_REQUIRE_INIT();
    if (!hNode || !params_out || hNode->magic != SIM_MAGIC_NODE)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    const sim_op *op = &hNode->graph->ops[hNode->index];
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (op->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        memset(params_out, 0, sizeof *params_out);
        params_out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        params_out->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        params_out->poolProps.location.id = op->ga->device;
        params_out->bytesize = op->ga->size;
        params_out->dptr = (CUdeviceptr)op->ga->addr;
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    SIM_REQUIRE_INIT();
    if (!hNode || !dptr_out || hNode->magic != SIM_MAGIC_NODE)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    const sim_op *op = &hNode->graph->ops[hNode->index];
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (op->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
        *dptr_out = (CUdeviceptr)op->free_addr;
        r = CUDA_SUCCESS;
    }
    SIM_UNLOCK();
    return r;
}

/* A graph with memory nodes cannot be cloned (cuGraphClone: CUDA_ERROR_NOT_SUPPORTED). */
CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    SIM_REQUIRE_INIT();
    if (!phGraphClone)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *c = NULL;
    if (graph_known_locked(originalGraph)) {
        r = originalGraph->mem_nodes ? CUDA_ERROR_NOT_SUPPORTED : sim_graph_new_locked(&c);
        for (size_t i = 0; r == CUDA_SUCCESS && i < originalGraph->n; i++)
            r = node_add_locked(c, &originalGraph->ops[i], NULL);
        if (r == CUDA_SUCCESS)
            *phGraphClone = c;
        else if (c)
            sim_graph_free_locked(c);
    }
    SIM_UNLOCK();
    return r;
}

/* ---- executable graphs ---- */

static CUresult instantiate(CUgraphExec *ph, CUgraph g, unsigned long long flags)
{
    SIM_REQUIRE_INIT();
    const unsigned long long known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                     CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                     CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if (!ph || (flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = CUDA_SUCCESS;
    struct CUgraphExec_st *x = NULL;
    if (!graph_known_locked(g) || (g->mem_nodes && g->execs > 0)) {
        r = CUDA_ERROR_INVALID_VALUE; /* one instantiation at a time with memory nodes */
    } else if (!(x = calloc(1, sizeof *x)) || (g->n && !(x->ops = malloc(g->n * sizeof *x->ops)))) {
        free(x);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        x->magic = SIM_MAGIC_EXEC;
        x->n = g->n;
        if (g->n)
            memcpy(x->ops, g->ops, g->n * sizeof *x->ops);
        for (size_t i = 0; i < x->n; i++)
            if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
                x->ops[i].ga->refs++;
        x->graph = g;
        x->flags = flags;
        g->execs++;
        x->next = execs;
        execs = x;
        *ph = x;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
        return CUDA_ERROR_INVALID_VALUE; /* only through the params form, which names a stream */
    return instantiate(phGraphExec, hGraph, flags);
}

static CUresult upload(CUgraphExec x, CUstream s);

static CUresult instantiate_params(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    CUresult r = instantiate(ph, g, p->flags);
    if (r == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        r = upload(*ph, p->hUploadStream);
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}
CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (struct CUgraphExec_st **pp = &execs; *pp; pp = &(*pp)->next)
        if (*pp == hGraphExec) {
            struct CUgraphExec_st *x = *pp;
            *pp = x->next;
            if (x->graph)
                x->graph->execs--;
            /* live allocations stay live: only the exec's references go */
            for (size_t i = 0; i < x->n; i++)
                if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
                    galloc_put_locked(x->ops[i].ga);
            x->magic = 0;
            free(x->ops);
            free(x);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

static CUresult upload(CUgraphExec x, CUstream s)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS && !exec_known_locked(x))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && sim_stream_capturing_locked(s))
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    /* the reserve grows to hold every allocation of the exec that is not mapped */
    size_t need[SIM_MAX_DEVICES] = {0};
    for (size_t i = 0; r == CUDA_SUCCESS && i < x->n; i++)
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && !x->ops[i].ga->assoc)
            need[x->ops[i].ga->device] += x->ops[i].ga->span;
    for (int d = 0; r == CUDA_SUCCESS && d < sim_drv.ndev; d++)
        if (need[d])
            r = reserve_locked(&sim_drv.dev[d], sim_drv.dev[d].graph_used + need[d]);
    SIM_UNLOCK();
    return r;
}
CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) { return upload(hGraphExec, hStream); }
CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return upload(hGraphExec, hStream); }

static CUresult launch(CUgraphExec x, CUstream s)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    if (r == CUDA_SUCCESS && !exec_known_locked(x))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && sim_stream_capturing_locked(s))
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    int autofree = r == CUDA_SUCCESS && (x->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    for (size_t i = 0; r == CUDA_SUCCESS && i < x->n; i++)
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && x->ops[i].ga->live && !autofree)
            r = CUDA_ERROR_INVALID_VALUE; /* allocations of the previous launch are not freed */
    if (r != CUDA_SUCCESS) {
        SIM_UNLOCK();
        return r;
    }
    for (size_t i = 0; i < x->n; i++)
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && x->ops[i].ga->live)
            galloc_unmap_locked(x->ops[i].ga);   /* auto free on launch */
    /* all-or-nothing: map every allocation, or none when the device is full */
    size_t i;
    for (i = 0; r == CUDA_SUCCESS && i < x->n; i++)
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
            r = galloc_map_locked(x->ops[i].ga);
    if (r != CUDA_SUCCESS) {
        while (i-- > 0)
            if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && x->ops[i].ga->live)
                galloc_unmap_locked(x->ops[i].ga);
        SIM_UNLOCK();
        return r;
    }
    size_t nhost = 0;
    for (i = 0; i < x->n; i++)
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_HOST)
            nhost++;
    sim_op *host = nhost ? calloc(nhost, sizeof *host) : NULL;
    nhost = 0;
    for (i = 0; i < x->n; i++) {
        if (x->ops[i].type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
            uintptr_t p = x->ops[i].free_addr;
            sim_galloc *ga;
            HASH_FIND(hh, gallocs, &p, sizeof p, ga);
            if (ga && ga->live) {
                galloc_unmap_locked(ga);
                ga->refs++;
                galloc_put_locked(ga);
            }
        } else if (x->ops[i].type == CU_GRAPH_NODE_TYPE_HOST && host) {
            host[nhost++] = x->ops[i];
        }
    }
    SIM_UNLOCK();
    for (i = 0; i < nhost; i++)
        host[i].fn(host[i].user);
    free(host);
    return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return launch(hGraphExec, hStream); }
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return launch(hGraphExec, hStream); }

/* ---- the device's graph memory ---- */

CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    SIM_REQUIRE_INIT();
    if (device < 0 || device >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    SIM_LOCK();
    sim_device *d = &sim_drv.dev[device];
    sim_galloc *g, *tmp;
    HASH_ITER(hh, gallocs, g, tmp)
        if (g->device == device && g->assoc && !g->live) {
            g->assoc = 0;
            d->graph_used -= g->span;
        }
    d->graph_reserved = (d->graph_used + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
    SIM_UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    SIM_REQUIRE_INIT();
    if (device < 0 || device >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_device *d = &sim_drv.dev[device];
    CUresult r = CUDA_SUCCESS;
    switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = d->graph_used; break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = d->graph_used_high; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = d->graph_reserved; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = d->graph_reserved_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE;
    }
    SIM_UNLOCK();
    return r;
}

/* Only the high watermarks can be set, and only to 0 (reset to the current value). */
CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    SIM_REQUIRE_INIT();
    if (device < 0 || device >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value || *(cuuint64_t *)value != 0)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_device *d = &sim_drv.dev[device];
    CUresult r = CUDA_SUCCESS;
    if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
        d->graph_used_high = d->graph_used;
    else if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        d->graph_reserved_high = d->graph_reserved;
    else
        r = CUDA_ERROR_INVALID_VALUE;
    SIM_UNLOCK();
    return r;
}

/* ---- nodes added by a capture (drv_capture.c) ---- */

CUresult sim_graph_add_alloc_locked(struct CUgraph_st *g, size_t size, int device, CUdeviceptr *dptr)
{
    if (sim_fail_next_locked())
        return CUDA_ERROR_OUT_OF_MEMORY;
    return alloc_node_locked(g, size, device, NULL, dptr);
}

CUresult sim_graph_add_free_locked(struct CUgraph_st *g, CUdeviceptr dptr)
{
    return free_node_locked(g, dptr, NULL);
}

CUresult sim_graph_add_plain_locked(struct CUgraph_st *g, CUhostFn fn, void *user)
{
    sim_op op = {.type = fn ? CU_GRAPH_NODE_TYPE_HOST : CU_GRAPH_NODE_TYPE_EMPTY, .fn = fn, .user = user};
    return node_add_locked(g, &op, NULL);
}
