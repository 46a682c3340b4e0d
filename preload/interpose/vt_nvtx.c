/* vt_nvtx.c — the NVTX front door: libvramtrace.so as an NVTX injection library.
 *
 * A program built with the header-only NVTX3 (nvtx3/nvToolsExt.h) reads
 * NVTX_INJECTION64_PATH at its first NVTX call, dlopens that library (ours: already
 * loaded as the preload, so the same copy) and calls InitializeInjectionNvtx2 with its
 * export table; the memory extension (nvtx3/nvToolsExtMem.h) calls
 * InitializeInjectionNvtxExtension with its module's slots. We fill the slots of the
 * functions we handle; NVTX makes every other one a no-op.
 *
 * Ranges and marks (core and core2 modules): filled only when VRAMTRACE_STEP_RANGE is
 * set (vt_config.h), so without it NVTX stays all no-ops and nothing changes. Then the
 * end of each outermost range of that name is a step, through vramtrace_step's path
 * (vt_api_step): push/pop ranges nest per thread and per domain (the first
 * VT_NVTX_LEVELS levels of the first VT_NVTX_DOMAINS domains a thread uses; deeper
 * levels and further domains never match), start/end ranges are counted process-wide
 * (their ids carry whether they matched). A mark with a message becomes the label of
 * a manual snapshot (vt_api_snapshot), at most one per VT_NVTX_MARK_GAP_NS: marks in
 * between are counted and the next written label says how many were not written; the
 * exit record says how many were not written in the whole run (those after the last
 * written mark included: vt_writer_mark_not_written).
 *
 * Memory extension: always filled (when the extension's compat id is the one we
 * know). Heaps get handles 1, 2, ...; a region's handle is its address. Heaps and
 * regions go to track/vt_region.h, a batch of regions sited by the registering call's
 * stack (one capture per call).
 *
 * Steps: only a range end is a step. Once the core module is filled, periodic
 * snapshots no longer count as steps (vt_core_steps_by_range), so everything written
 * before the first range ends (marks, periodic snapshots) has step 0.
 *
 * Activation: no NVTX call activates the preload (vt_preload_activate). Until the
 * process's first CUDA call, range ends, marks and memory calls are ignored (a range
 * open then still nests); the handles are given out all the same. A process that
 * never calls CUDA gets no ring, no thread and no file from NVTX.
 *
 * Every callback: any thread, keeps errno, never fails the program (bad or unknown
 * arguments are ignored).
 */
#define _GNU_SOURCE
#define NVTX_NO_IMPL   /* the types and ids only: the implementation is the program's */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include "vt_config.h"
#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_driver.h"
#include "vt_hooks.h"
#include "vt_region.h"
#include "vt_writer.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define VT_NVTX_LEVELS 64                       /* push/pop levels tracked per stack  */
#define VT_NVTX_DOMAINS 4                       /* push/pop stacks per thread         */
#define VT_NVTX_MARK_GAP_NS 1000000000ull       /* at most one mark snapshot a second */
#define VT_NVTX_MAX_NAMES 4096                  /* domains + registered strings kept  */
#define VT_NVTX_NAME 256                        /* bytes of a name kept (with its NUL)*/

/* ---- names: domains and registered strings ---- */

/* A domain handle or registered string handle we gave out points at one of these
 * (malloc'd, never freed: a handle may be used by another thread after its domain is
 * destroyed). At most VT_NVTX_MAX_NAMES; past that the handle is NULL (NVTX's
 * default domain, or no message). */
typedef struct vt__nvtx_name {
    char s[VT_NVTX_NAME];
} vt__nvtx_name;
static int vt__nvtx_names;   /* atomic: handles given out */

/* Copies a wide string into buf (cap bytes) as ASCII, '?' for anything else. */
static const char *vt__narrow(const wchar_t *w, char *buf, size_t cap)
{
    size_t i = 0;
    for (; w && w[i] && i + 1 < cap; i++)
        buf[i] = (w[i] > 0 && w[i] < 128) ? (char)w[i] : '?';
    buf[i] = 0;
    return buf;
}

static vt__nvtx_name *vt__name_new(const char *s)
{
    if (!s || __atomic_add_fetch(&vt__nvtx_names, 1, __ATOMIC_RELAXED) > VT_NVTX_MAX_NAMES)
        return NULL;
    vt__nvtx_name *n = malloc(sizeof *n);
    if (n) {
        strncpy(n->s, s, sizeof n->s - 1);
        n->s[sizeof n->s - 1] = 0;
    }
    return n;
}

static nvtxDomainHandle_t vt__domain_create_a(const char *name)
{
    int e = errno;
    nvtxDomainHandle_t d = (nvtxDomainHandle_t)vt__name_new(name);
    errno = e;
    return d;
}

static nvtxDomainHandle_t vt__domain_create_w(const wchar_t *name)
{
    char buf[VT_NVTX_NAME];
    return name ? vt__domain_create_a(vt__narrow(name, buf, sizeof buf)) : NULL;
}

static void vt__domain_destroy(nvtxDomainHandle_t d)
{
    (void)d;   /* kept: see vt__nvtx_name */
}

static nvtxStringHandle_t vt__register_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    int e = errno;
    nvtxStringHandle_t h = (nvtxStringHandle_t)vt__name_new(s);
    errno = e;
    return h;
}

static nvtxStringHandle_t vt__register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    char buf[VT_NVTX_NAME];
    return s ? vt__register_string_a(d, vt__narrow(s, buf, sizeof buf)) : NULL;
}

/* The message of an event, as a C string (buf: room for a converted wide one), or
 * NULL when it has none we can read. */
static const char *vt__message(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return NULL;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii;
    case NVTX_MESSAGE_TYPE_UNICODE:
        return a->message.unicode ? vt__narrow(a->message.unicode, buf, cap) : NULL;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? ((const vt__nvtx_name *)(const void *)a->message.registered)->s : NULL;
    default:
        return NULL;
    }
}

/* 1 when a range named name in domain d is a step range (VRAMTRACE_STEP_RANGE). */
static int vt__is_step(nvtxDomainHandle_t d, const char *name)
{
    if (!name || strcmp(name, vt__config.step_range_name) != 0)
        return 0;
    if (vt__config.step_range_any_domain)
        return 1;
    const char *dn = d ? ((const vt__nvtx_name *)(const void *)d)->s : "";
    return strcmp(dn, vt__config.step_range_domain) == 0;
}

/* A step range ended: a step, once the preload is active (a CUDA call was made). */
static void vt__step(void)
{
    if (vt_core_hooks_record())
        vt_api_step();
}

/* ---- push/pop ranges: per thread, per domain ---- */

typedef struct vt__nvtx_stack {
    const void *domain;     /* NULL: NVTX's default domain                          */
    uint32_t depth;         /* ranges open on this stack                            */
    uint32_t open;          /* of them, step ranges (levels below VT_NVTX_LEVELS)   */
    uint64_t steps;         /* bit L: the range at level L is a step range          */
    uint8_t  used;
} vt__nvtx_stack;
static __thread vt__nvtx_stack vt__stacks[VT_NVTX_DOMAINS] __attribute__((tls_model("initial-exec")));

/* This thread's stack for domain d, claimed on first use; NULL when every slot is
 * another domain's. */
static vt__nvtx_stack *vt__stack(nvtxDomainHandle_t d)
{
    for (int i = 0; i < VT_NVTX_DOMAINS; i++) {
        vt__nvtx_stack *s = &vt__stacks[i];
        if (!s->used) {
            s->used = 1;
            s->domain = d;
            return s;
        }
        if (s->domain == d)
            return s;
    }
    return NULL;
}

static int vt__push(nvtxDomainHandle_t d, const char *name)
{
    vt__nvtx_stack *s = vt__stack(d);
    if (!s)
        return -1;
    uint32_t level = s->depth++;
    if (level < VT_NVTX_LEVELS && vt__is_step(d, name)) {
        s->steps |= 1ull << level;
        s->open++;
    }
    return (int)level;
}

static int vt__pop(nvtxDomainHandle_t d)
{
    vt__nvtx_stack *s = vt__stack(d);
    if (!s || s->depth == 0)
        return -1;
    uint32_t level = --s->depth;
    if (level < VT_NVTX_LEVELS && (s->steps & (1ull << level))) {
        s->steps &= ~(1ull << level);
        if (--s->open == 0) {
            int e = errno;
            vt__step();
            errno = e;
        }
    }
    return (int)level;
}

static int vt__range_push_ex(const nvtxEventAttributes_t *a)
{
    char buf[VT_NVTX_NAME];
    return vt__push(NULL, vt__message(a, buf, sizeof buf));
}

static int vt__range_push_a(const char *m)
{
    return vt__push(NULL, m);
}

static int vt__range_push_w(const wchar_t *m)
{
    char buf[VT_NVTX_NAME];
    return vt__push(NULL, m ? vt__narrow(m, buf, sizeof buf) : NULL);
}

static int vt__range_pop(void)
{
    return vt__pop(NULL);
}

static int vt__domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[VT_NVTX_NAME];
    return vt__push(d, vt__message(a, buf, sizeof buf));
}

static int vt__domain_range_pop(nvtxDomainHandle_t d)
{
    return vt__pop(d);
}

/* ---- start/end ranges: process-wide ---- */

static uint64_t vt__next_range;   /* atomic */
static uint32_t vt__open_starts;  /* atomic: step ranges started and not ended */

/* A range id: a serial number, its low bit set when it is a step range. */
static nvtxRangeId_t vt__start(nvtxDomainHandle_t d, const char *name)
{
    int step = vt__is_step(d, name);
    if (step)
        __atomic_add_fetch(&vt__open_starts, 1, __ATOMIC_RELAXED);
    return (__atomic_add_fetch(&vt__next_range, 1, __ATOMIC_RELAXED) << 1) | (uint64_t)step;
}

static void vt__end(nvtxRangeId_t id)
{
    if (!(id & 1))
        return;
    uint32_t n = __atomic_load_n(&vt__open_starts, __ATOMIC_RELAXED);
    while (n > 0 && !__atomic_compare_exchange_n(&vt__open_starts, &n, n - 1, 0, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
        ;
    if (n == 1) {
        int e = errno;
        vt__step();
        errno = e;
    }
}

static nvtxRangeId_t vt__range_start_ex(const nvtxEventAttributes_t *a)
{
    char buf[VT_NVTX_NAME];
    return vt__start(NULL, vt__message(a, buf, sizeof buf));
}

static nvtxRangeId_t vt__range_start_a(const char *m)
{
    return vt__start(NULL, m);
}

static nvtxRangeId_t vt__range_start_w(const wchar_t *m)
{
    char buf[VT_NVTX_NAME];
    return vt__start(NULL, m ? vt__narrow(m, buf, sizeof buf) : NULL);
}

static void vt__range_end(nvtxRangeId_t id)
{
    vt__end(id);
}

static nvtxRangeId_t vt__domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[VT_NVTX_NAME];
    return vt__start(d, vt__message(a, buf, sizeof buf));
}

static void vt__domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    vt__end(id);
}

/* ---- marks: labels, rate-bounded ---- */

static uint64_t vt__mark_last_ns;   /* atomic: when the last mark snapshot was taken */
static uint64_t vt__mark_skipped;   /* atomic: marks not written since               */

void vt_nvtx_fork_child(void)
{
    __atomic_store_n(&vt__mark_last_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&vt__mark_skipped, 0, __ATOMIC_RELAXED);
}

static void vt__mark(const char *msg)
{
    if (!msg || !vt_core_hooks_record())
        return;
    int e = errno;
    uint64_t now = vt_now_ns();
    uint64_t last = __atomic_load_n(&vt__mark_last_ns, __ATOMIC_RELAXED);
    if ((last && now - last < VT_NVTX_MARK_GAP_NS) ||
        !__atomic_compare_exchange_n(&vt__mark_last_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        __atomic_add_fetch(&vt__mark_skipped, 1, __ATOMIC_RELAXED);
        vt_writer_mark_not_written();   /* the exit record's count: none is lost unsaid */
        errno = e;
        return;
    }
    uint64_t skipped = __atomic_exchange_n(&vt__mark_skipped, 0, __ATOMIC_RELAXED);
    char label[VT_NVTX_NAME + 48];
    if (skipped)
        snprintf(label, sizeof label, "%.*s (+%llu marks not written)", VT_NVTX_NAME - 1, msg,
                 (unsigned long long)skipped);
    else
        snprintf(label, sizeof label, "%.*s", VT_NVTX_NAME - 1, msg);
    vt_api_snapshot(label);
    errno = e;
}

static void vt__mark_ex(const nvtxEventAttributes_t *a)
{
    char buf[VT_NVTX_NAME];
    vt__mark(vt__message(a, buf, sizeof buf));
}

static void vt__mark_a(const char *m)
{
    vt__mark(m);
}

static void vt__mark_w(const wchar_t *m)
{
    char buf[VT_NVTX_NAME];
    if (m)
        vt__mark(vt__narrow(m, buf, sizeof buf));
}

static void vt__domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    vt__mark_ex(a);
}

/* ---- the core and core2 modules ---- */

/* Stores fn in slot id of module m (the export table's GetModuleFunctionTable);
 * an id past the table the program's NVTX has is skipped. */
static void vt__fill(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (t && id < size && t[id])
        *t[id] = fn;
}

VT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    vt_preload_init();   /* the settings (read once; no activation) */
    if (!get)
        return 0;
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    if (!vt__config.step_range_on)
        return 1;   /* attached, every range and mark a no-op */
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
#define VT_FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
        vt__fill(t, n, NVTX_CBID_CORE_MarkEx, VT_FN(vt__mark_ex));
        vt__fill(t, n, NVTX_CBID_CORE_MarkA, VT_FN(vt__mark_a));
        vt__fill(t, n, NVTX_CBID_CORE_MarkW, VT_FN(vt__mark_w));
        vt__fill(t, n, NVTX_CBID_CORE_RangeStartEx, VT_FN(vt__range_start_ex));
        vt__fill(t, n, NVTX_CBID_CORE_RangeStartA, VT_FN(vt__range_start_a));
        vt__fill(t, n, NVTX_CBID_CORE_RangeStartW, VT_FN(vt__range_start_w));
        vt__fill(t, n, NVTX_CBID_CORE_RangeEnd, VT_FN(vt__range_end));
        vt__fill(t, n, NVTX_CBID_CORE_RangePushEx, VT_FN(vt__range_push_ex));
        vt__fill(t, n, NVTX_CBID_CORE_RangePushA, VT_FN(vt__range_push_a));
        vt__fill(t, n, NVTX_CBID_CORE_RangePushW, VT_FN(vt__range_push_w));
        vt__fill(t, n, NVTX_CBID_CORE_RangePop, VT_FN(vt__range_pop));
        vt_core_steps_by_range();   /* steps come from ranges: periodic snapshots are none */
    }
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
        vt__fill(t, n, NVTX_CBID_CORE2_DomainMarkEx, VT_FN(vt__domain_mark_ex));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, VT_FN(vt__domain_range_start_ex));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRangeEnd, VT_FN(vt__domain_range_end));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRangePushEx, VT_FN(vt__domain_range_push_ex));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRangePop, VT_FN(vt__domain_range_pop));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, VT_FN(vt__register_string_a));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, VT_FN(vt__register_string_w));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainCreateA, VT_FN(vt__domain_create_a));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainCreateW, VT_FN(vt__domain_create_w));
        vt__fill(t, n, NVTX_CBID_CORE2_DomainDestroy, VT_FN(vt__domain_destroy));
    }
    return 1;
}

/* ---- the memory extension ---- */

static uint64_t vt__next_heap;   /* atomic: the last heap handle given out */

/* The virtual range a heap or region descriptor of type type points at (size bytes
 * at *desc), or 0 when it is not one we read. */
static int vt__vrange(uint32_t type, const void *desc, size_t size, uint64_t *ptr, uint64_t *bytes)
{
    if (type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !desc || size < sizeof(nvtxMemVirtualRangeDesc_t))
        return 0;
    const nvtxMemVirtualRangeDesc_t *r = desc;
    *ptr = (uint64_t)(uintptr_t)r->ptr;
    *bytes = (uint64_t)r->size;
    return 1;
}

static nvtxMemHeapHandle_t vt__heap_register(nvtxDomainHandle_t d, const nvtxMemHeapDesc_t *desc)
{
    (void)d;
    if (!desc || desc->structSize < offsetof(nvtxMemHeapDesc_t, category))
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    int e = errno;
    uint64_t h = __atomic_add_fetch(&vt__next_heap, 1, __ATOMIC_RELAXED);
    uint64_t base = 0, size = 0;
    vt__vrange(desc->type, desc->typeSpecificDesc, desc->typeSpecificDescSize, &base, &size);
    if (vt_core_hooks_record())
        vt_region_heap_add(h, base, size);
    errno = e;
    return (nvtxMemHeapHandle_t)(uintptr_t)h;
}

static void vt__heap_unregister(nvtxDomainHandle_t d, nvtxMemHeapHandle_t heap)
{
    (void)d;
    int e = errno;
    if (vt_core_hooks_record())
        vt_region_heap_remove((uint64_t)(uintptr_t)heap);
    errno = e;
}

static void vt__heap_reset(nvtxDomainHandle_t d, nvtxMemHeapHandle_t heap)
{
    (void)d;
    int e = errno;
    if (vt_core_hooks_record())
        vt_region_heap_reset((uint64_t)(uintptr_t)heap);
    errno = e;
}

static void vt__regions_register(nvtxDomainHandle_t d, const nvtxMemRegionsRegisterBatch_t *b)
{
    (void)d;
    if (!b || b->structSize < offsetof(nvtxMemRegionsRegisterBatch_t, regionHandleElementsOut))
        return;
    int e = errno;
    nvtxMemRegionHandle_t *out = b->structSize >= sizeof *b ? b->regionHandleElementsOut : NULL;
    const char *el = b->regionDescElements;
    vt_call c = { 0 };
    int rec = vt_core_hooks_record();
    if (rec)
        vt_call_begin(&c, 1);   /* the registering call's stack; guard entered */
    int device = -1;
    if (rec && c.rec) {
        uint64_t ctx;
        device = vt_driver_device_current(&ctx);
        if (__builtin_expect(!__atomic_load_n(&vt__started, __ATOMIC_ACQUIRE), 0))
            vt_hook_start();
    }
    for (size_t i = 0; el && i < b->regionCount; i++) {
        uint64_t ptr, size;
        int ok = vt__vrange(b->regionType, el + i * b->regionDescElementSize, b->regionDescElementSize, &ptr, &size);
        if (ok && rec && c.rec)
            vt_region_add((uint64_t)(uintptr_t)b->heap, ptr, size, device, c.stack);
        if (out)
            out[i] = ok ? (nvtxMemRegionHandle_t)(uintptr_t)ptr : NVTX_MEM_REGION_HANDLE_NO_TOOL;
    }
    if (rec)
        vt_call_end(&c);
    errno = e;
}

static void vt__regions_resize(nvtxDomainHandle_t d, const nvtxMemRegionsResizeBatch_t *b)
{
    (void)d;
    if (!b || b->structSize < sizeof *b || !vt_core_hooks_record())
        return;
    int e = errno;
    const char *el = b->regionDescElements;
    for (size_t i = 0; el && i < b->regionDescCount; i++) {
        uint64_t ptr, size;
        if (vt__vrange(b->regionType, el + i * b->regionDescElementSize, b->regionDescElementSize, &ptr, &size))
            vt_region_resize(ptr, size);
    }
    errno = e;
}

static void vt__regions_unregister(nvtxDomainHandle_t d, const nvtxMemRegionsUnregisterBatch_t *b)
{
    (void)d;
    if (!b || b->structSize < sizeof *b || !vt_core_hooks_record() ||
        b->refElementSize < sizeof(nvtxMemRegionRef_t))
        return;
    if (b->refType != NVTX_MEM_REGION_REF_TYPE_POINTER && b->refType != NVTX_MEM_REGION_REF_TYPE_HANDLE)
        return;
    int e = errno;
    const char *el = (const char *)b->refElements;
    for (size_t i = 0; el && i < b->refCount; i++) {
        /* a handle we gave out is the region's address; any other value finds nothing */
        const nvtxMemRegionRef_t *r = (const nvtxMemRegionRef_t *)(const void *)(el + i * b->refElementSize);
        vt_region_remove(b->refType == NVTX_MEM_REGION_REF_TYPE_POINTER ? (uint64_t)(uintptr_t)r->pointer
                                                                        : (uint64_t)(uintptr_t)r->handle);
    }
    errno = e;
}

VT_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *m)
{
    vt_preload_init();
    if (!m || m->structSize < sizeof *m || m->moduleId != NVTX_EXT_MODULEID_MEM ||
        m->compatId != NVTX_EXT_COMPATID_MEM)
        return 0;   /* not a module we know: NVTX leaves it a no-op */
    for (size_t s = 0; m->segments && s < m->segmentsCount; s++) {
        nvtxExtModuleSegment_t *seg = &m->segments[s];
        if (seg->segmentId != 1 || !seg->functionSlots)
            continue;
#define VT_SLOT(id, f) \
        if ((id) < seg->slotCount) seg->functionSlots[id] = (intptr_t)(void (*)(void))(f)
        VT_SLOT(NVTX3EXT_CBID_nvtxMemHeapRegister, vt__heap_register);
        VT_SLOT(NVTX3EXT_CBID_nvtxMemHeapUnregister, vt__heap_unregister);
        VT_SLOT(NVTX3EXT_CBID_nvtxMemHeapReset, vt__heap_reset);
        VT_SLOT(NVTX3EXT_CBID_nvtxMemRegionsRegister, vt__regions_register);
        VT_SLOT(NVTX3EXT_CBID_nvtxMemRegionsResize, vt__regions_resize);
        VT_SLOT(NVTX3EXT_CBID_nvtxMemRegionsUnregister, vt__regions_unregister);
#undef VT_SLOT
    }
    return 1;
}
