/* vt_trace.c — the event trace's pending buffer (contracts: vt_trace.h and, for the
 * table's side, vt_core_internal.h vt__trace_note). Under the core lock throughout. */
#include "vt_core_internal.h"
#include "vt_config.h"
#include "vt_mem.h"
#include "vt_trace.h"

static struct {
    vt_trace_rec *pending, *spare;   /* under lock (spare: the taker's while it writes) */
    size_t n;                        /* under lock: records in pending                  */
    uint64_t lost;                   /* under lock: events not kept since the last take */
    int failed;                      /* under lock: the buffers could not be allocated  */
} vt__tr;

int vt_core_trace_on(void)
{
    vt_config_load();
    return vt__config.trace;
}

void vt__trace_note(int op, uint64_t now, uint64_t addr, uint64_t size, uint64_t stream,
                    int device, int kind, uint32_t stack)
{
    if (!vt__tr.pending) {
        if (vt__tr.failed)
            goto lost;
        vt__tr.pending = vt_mem_alloc(VT_TRACE_PENDING * sizeof(vt_trace_rec));
        vt__tr.spare = vt_mem_alloc(VT_TRACE_PENDING * sizeof(vt_trace_rec));
        if (!vt__tr.pending || !vt__tr.spare) {
            vt_mem_free(vt__tr.pending);
            vt_mem_free(vt__tr.spare);
            vt__tr.pending = vt__tr.spare = NULL;
            vt__tr.failed = 1;
            goto lost;
        }
    }
    if (vt__tr.n == VT_TRACE_PENDING)
        goto lost;
    vt_trace_rec *r = &vt__tr.pending[vt__tr.n++];
    r->time_ns = now;
    r->addr = addr;
    r->size = size;
    r->stream = stream;
    r->stack = stack;
    r->device = (int16_t)device;
    r->kind = (uint8_t)kind;
    r->op = (uint8_t)op;
    return;
lost:
    vt__tr.lost++;
}

size_t vt_core_trace_take(const vt_trace_rec **out, uint64_t *lost)
{
    *out = NULL;
    *lost = 0;
    if (!vt_core_trace_on())
        return 0;
    vt__lock();
    vt_trace_rec *full = vt__tr.pending;
    size_t n = vt__tr.n;
    *lost = vt__tr.lost;
    vt__tr.pending = vt__tr.spare;
    vt__tr.spare = full;
    vt__tr.n = 0;
    vt__tr.lost = 0;
    vt__unlock();
    *out = full;
    return full ? n : 0;
}
