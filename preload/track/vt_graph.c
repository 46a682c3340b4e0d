/* vt_graph.c — graph memory nodes, execs and captures (vt_graph.h).
 *
 * Two arrays of memory nodes under the core lock: the nodes of each graph (owner =
 * the CUgraph) and the copies each exec took at instantiation (owner = the
 * CUgraphExec). Order inside one owner does not matter: a launch posts every
 * allocation before any free, which leaves the state the launch ends in (an
 * allocation freed in its own graph is live only inside the launch) and counts the
 * launch's allocations in the peak. Removal swaps the last entry in. Lookups are
 * linear: graphs with memory nodes hold few of them.
 */
#include <string.h>
#include "vt_core_fast.h"
#include "vt_core_internal.h"
#include "vt_graph.h"
#include "vt_mem.h"

typedef struct vt__gnode {
    uint64_t owner;     /* CUgraph (graph table) or CUgraphExec (exec table)          */
    uint64_t addr;      /* the allocation's fixed address                             */
    uint64_t size;      /* bytes asked for (allocation nodes)                         */
    int32_t  device;    /* allocation nodes: the device of its pool                   */
    uint32_t stack;     /* allocation nodes: the creating stack                       */
    uint8_t  is_free;   /* a free node                                                */
} vt__gnode;

typedef struct vt__gtab {
    vt__gnode *v;
    size_t     n, cap;
} vt__gtab;

int vt__graph_captures;
static uint64_t vt__graph_devs;            /* atomic bit set                          */
static vt__gtab vt__graphs, vt__execs;     /* under the core lock                     */

void vt_graph_capture_begin(void)
{
    __atomic_add_fetch(&vt__graph_captures, 1, __ATOMIC_RELAXED);
}

void vt_graph_capture_end(void)
{
    int n = __atomic_load_n(&vt__graph_captures, __ATOMIC_RELAXED);
    while (n > 0 && !__atomic_compare_exchange_n(&vt__graph_captures, &n, n - 1, 0, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
        ;
}

uint64_t vt_graph_devices(void)
{
    return __atomic_load_n(&vt__graph_devs, __ATOMIC_RELAXED);
}

/* Under lock: appends *g; 0, or -1 out of memory (nothing changed). */
static int vt__gtab_add(vt__gtab *t, const vt__gnode *g)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        vt__gnode *v = vt_mem_alloc(cap * sizeof *v);
        if (!v)
            return -1;
        if (t->n)
            memcpy(v, t->v, t->n * sizeof *v);
        vt_mem_free(t->v);
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = *g;
    return 0;
}

/* Under lock: removes every entry of owner. */
static void vt__gtab_drop(vt__gtab *t, uint64_t owner)
{
    for (size_t i = 0; i < t->n;) {
        if (t->v[i].owner == owner)
            t->v[i] = t->v[--t->n];
        else
            i++;
    }
}

static void vt__graph_add(uint64_t graph, const vt__gnode *g)
{
    if (!vt_core_enabled())
        return;
    vt__lock_raw();
    vt__gnode n = *g;
    n.owner = graph;
    vt__gtab_add(&vt__graphs, &n);   /* out of memory: the node is never counted */
    vt__unlock();
}

void vt_graph_node_alloc(uint64_t graph, uint64_t addr, uint64_t size, int device, uint32_t stack)
{
    if (device >= 0 && device < 64)
        __atomic_or_fetch(&vt__graph_devs, 1ull << device, __ATOMIC_RELAXED);
    vt__gnode g = {.addr = addr, .size = size, .device = device, .stack = stack};
    vt__graph_add(graph, &g);
}

void vt_graph_node_free(uint64_t graph, uint64_t addr)
{
    vt__gnode g = {.addr = addr, .is_free = 1};
    vt__graph_add(graph, &g);
}

void vt_graph_destroyed(uint64_t graph)
{
    vt__lock_raw();
    vt__gtab_drop(&vt__graphs, graph);
    vt__unlock();
}

void vt_graph_instantiated(uint64_t exec, uint64_t graph, int autofree)
{
    (void)autofree;   /* a relaunch re-posts at the same address: the core replaces */
    vt__lock_raw();
    vt__gtab_drop(&vt__execs, exec);   /* a stale exec the driver's handle reused */
    for (size_t i = 0; i < vt__graphs.n; i++)
        if (vt__graphs.v[i].owner == graph) {
            vt__gnode n = vt__graphs.v[i];
            n.owner = exec;
            if (vt__gtab_add(&vt__execs, &n) != 0)
                break;
        }
    vt__unlock();
}

void vt_graph_exec_destroyed(uint64_t exec)
{
    vt__lock_raw();
    vt__gtab_drop(&vt__execs, exec);
    vt__unlock();
}

void vt_graph_launched(uint64_t exec, uint64_t stream)
{
    if (!vt_core_enabled())
        return;
    /* copied out under the lock, posted after it (a full ring takes the lock) */
    vt__lock_raw();
    size_t n = 0;
    for (size_t i = 0; i < vt__execs.n; i++)
        n += vt__execs.v[i].owner == exec;
    vt__gnode *ops = n ? vt_mem_alloc(n * sizeof *ops) : NULL;
    size_t k = 0;
    for (size_t i = 0; ops && i < vt__execs.n; i++)
        if (vt__execs.v[i].owner == exec)
            ops[k++] = vt__execs.v[i];
    vt__unlock();
    for (size_t i = 0; i < k; i++)
        if (!ops[i].is_free)
            vt_core_post_alloc_at(ops[i].addr, ops[i].size, stream, ops[i].device, VT_KIND_GRAPH, ops[i].stack);
    for (size_t i = 0; i < k; i++)
        if (ops[i].is_free) {
            vt_taken t;
            uint64_t ticket = vt_core_post_free(ops[i].addr, &t);
            if (ticket == VT_TICKET_SYNC)
                vt_core_commit(&t);
            else
                vt_core_free_done(ticket);
        }
    vt_mem_free(ops);
}

void vt__graph_after_fork(void)
{
    vt__graphs.v = vt__execs.v = NULL;   /* the parent's: left to the child's image */
    vt__graphs.n = vt__graphs.cap = vt__execs.n = vt__execs.cap = 0;
    vt__graph_captures = 0;
    vt__graph_devs = 0;
}
