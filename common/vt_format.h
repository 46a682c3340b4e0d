/* vt_format.h — the one home of the snapshot format's names and numbers.
 *
 * Shared by the preload (writer) and the analyzer (reader); the format itself is
 * specified in docs/snapshot-format.md. Header-only, no state, thread-safe.
 */
#ifndef VT_FORMAT_H
#define VT_FORMAT_H

#define VT_FORMAT_NAME    "vramtrace-snapshot"
#define VT_FORMAT_VERSION 4       /* written by the preload */
#define VT_FORMAT_VERSION_MIN 1   /* oldest version the analyzer reads */
#define VT_REPORT_NAME    "vramtrace-report"
#define VT_REPORT_VERSION 1

/* Allocation kinds (docs/snapshot-format.md, "Kinds"): X(ENUM, "name"), in the order
 * of their numbers. python/vramtrace/snapshots.py KINDS follows this list (test
 * python_vocabulary). */
#define VT_KINDS(X)                   \
    X(DEVICE, "device")               \
    X(MANAGED, "managed")             \
    X(HOST_PINNED, "host_pinned")     \
    X(ASYNC, "async")                 \
    X(VMM, "vmm")                     \
    X(ARRAY, "array")                 \
    X(GRAPH, "graph")                 \
    X(IPC_IMPORT, "ipc_import")       \
    X(REGION, "region")
/* device: cudaMalloc*, cuMemAlloc*, pitch, 3D; managed: cudaMallocManaged,
 * cuMemAllocManaged; host_pinned: cudaMallocHost, cudaHostAlloc, cuMemAllocHost_v2,
 * cuMemHostAlloc, host registration (flag "registered"); async: stream-ordered
 * (cudaMallocAsync, cuMemAllocAsync, ...FromPool); vmm: cuMemCreate physical
 * allocations (flag "multicast": a multicast object's); array: CUDA arrays and
 * mipmapped arrays (cudaMallocArray, cuArrayCreate_v2, ...); graph: graph memory
 * nodes, live from the launch that maps them to their free; ipc_import: memory
 * another process owns, mapped here (legacy IPC, pool pointer import, VMM shareable
 * handles, external memory): counted in its kind and sites, never in the device's
 * or the process's live bytes; region: a sub-allocation a program announced inside
 * one of its own allocations (an NVTX memory-extension region of a registered heap):
 * counted in its kind and sites, never in the device's or the process's live bytes
 * (the heap's allocation already is). Kinds below VT_KIND_LIMIT (16) fit the 4 bits a
 * packed kind gives them (VT_KIND_PACK). */
#define VT__KIND_ENUM(e, name) VT_KIND_##e,
typedef enum vt_kind { VT_KINDS(VT__KIND_ENUM) VT_KIND_COUNT } vt_kind;

#define VT_KIND_LIMIT 16

/* 1 when live bytes of kind k count in the device's and the process's totals: every
 * kind but ipc_import (another process's memory) and region (inside an allocation
 * already counted). */
static inline int vt_kind_in_totals(int k)
{
    return k != VT_KIND_IPC_IMPORT && k != VT_KIND_REGION;
}

/* Flags of a site (docs/snapshot-format.md "site"): X(ENUM, bit, "name"). A site is
 * one (stack, kind, flags, device); a record's flags are its site's.
 *   registered    host_pinned memory the program allocated itself and registered
 *                 (cudaHostRegister, cuMemHostRegister_v2)
 *   multicast     vmm memory of a multicast object (cuMulticastCreate)
 *   logical_size  an array whose driver gave no memory requirements: the size is
 *                 the logical one (width x height x depth x element bytes, levels
 *                 summed), not the driver's */
#define VT_SITE_FLAGS(X)                    \
    X(REGISTERED, 1, "registered")          \
    X(MULTICAST, 2, "multicast")            \
    X(LOGICAL_SIZE, 4, "logical_size")
#define VT__FLAG_ENUM(e, bit, name) VT_FLAG_##e = bit,
enum { VT_SITE_FLAGS(VT__FLAG_ENUM) VT_FLAG_ALL = 15 };
#undef VT__FLAG_ENUM
/* A kind with its flags in one small integer (ring events, site keys): kind in the
 * low 4 bits, flags above. */
#define VT_KIND_PACK(kind, flags) ((int)(kind) | ((int)(flags) << 4))
#define VT_KIND_OF(packed)  ((int)(packed) & 15)
#define VT_FLAGS_OF(packed) (((int)(packed) >> 4) & VT_FLAG_ALL)

/* Returns the format's name of a kind ("device", ...), or "unknown". */
static inline const char *vt_kind_name(int k)
{
#define VT__KIND_NAME(e, name) name,
    static const char *const names[VT_KIND_COUNT] = {VT_KINDS(VT__KIND_NAME)};
#undef VT__KIND_NAME
    return (k >= 0 && k < VT_KIND_COUNT) ? names[k] : "unknown";
}

/* Returns the flag bit named s (VT_SITE_FLAGS), or 0. */
static inline int vt_flag_from_name(const char *s)
{
#define VT__FLAG_MATCH(e, bit, name)                       \
    {                                                      \
        const char *a = s, *b = name;                      \
        while (*a && *a == *b) { a++; b++; }               \
        if (*a == 0 && *b == 0) return bit;                \
    }
    VT_SITE_FLAGS(VT__FLAG_MATCH)
#undef VT__FLAG_MATCH
    return 0;
}

/* Writes the names of flags to buf (cap bytes, NUL-terminated), each after sep, e.g.
 * " registered"; "" when none. Returns buf. */
static inline char *vt_flags_text(int flags, const char *sep, char *buf, unsigned cap)
{
    unsigned n = 0;
    if (cap) buf[0] = 0;
#define VT__FLAG_TEXT(e, bit, name)                                          \
    if (flags & (bit))                                                       \
        for (const char *p = sep, *q = name; n + 1 < cap && (*p || *q);)     \
            buf[n++] = *p ? *p++ : *q++;
    VT_SITE_FLAGS(VT__FLAG_TEXT)
#undef VT__FLAG_TEXT
    if (cap) buf[n < cap ? n : cap - 1] = 0;
    return buf;
}

/* Returns the kind named s, or -1. */
static inline int vt_kind_from_name(const char *s)
{
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        const char *n = vt_kind_name(k);
        const char *a = s, *b = n;
        while (*a && *a == *b) { a++; b++; }
        if (*a == 0 && *b == 0) return k;
    }
    return -1;
}

/* Snapshot triggers (docs/snapshot-format.md "snapshot", key "trigger"): the names
 * as written in a record. The reader compares the strings it reads with these. */
#define VT_TRIGGER_START    "start"
#define VT_TRIGGER_PERIODIC "periodic"
#define VT_TRIGGER_STEP     "step"
#define VT_TRIGGER_SIGNAL   "signal"
#define VT_TRIGGER_OOM      "oom"
#define VT_TRIGGER_EXIT     "exit"
#define VT_TRIGGER_MANUAL   "manual"

/* The triggers as one list, X(ID, name): generates enum vt_trigger (VT_TRIG_<ID>) and
 * the name table of vt_trigger_name, so a writer decides on the enum and only spells
 * the name when it writes it. */
#define VT_TRIGGERS(X)                     \
    X(START, VT_TRIGGER_START)             \
    X(PERIODIC, VT_TRIGGER_PERIODIC)       \
    X(STEP, VT_TRIGGER_STEP)               \
    X(SIGNAL, VT_TRIGGER_SIGNAL)           \
    X(OOM, VT_TRIGGER_OOM)                 \
    X(EXIT, VT_TRIGGER_EXIT)               \
    X(MANUAL, VT_TRIGGER_MANUAL)

typedef enum vt_trigger {
#define VT__TRIGGER_ENUM(id, name) VT_TRIG_##id,
    VT_TRIGGERS(VT__TRIGGER_ENUM)
#undef VT__TRIGGER_ENUM
    VT_TRIG_COUNT
} vt_trigger;

/* Returns the format's name of a trigger ("periodic", ...), or "unknown". */
static inline const char *vt_trigger_name(int t)
{
#define VT__TRIGGER_NAME(id, name) name,
    static const char *const names[VT_TRIG_COUNT] = { VT_TRIGGERS(VT__TRIGGER_NAME) };
#undef VT__TRIGGER_NAME
    return (t >= 0 && t < VT_TRIG_COUNT) ? names[t] : "unknown";
}

/* Columns of a row of "sites" in version 2, in order (version 1 wrote objects with
 * these names as keys; version 3 keys rows by site id and reorders the counters,
 * VT_SITE3_ORDER below): X(ENUM, "name"). python/vramtrace/snapshots.py SITE_COLUMNS
 * follows this list. */
#define VT_SITE_COLUMNS(X)                                   \
    X(STACK, "stack")                                        \
    X(KIND, "kind")                                          \
    X(DEVICE, "device")                                      \
    X(LIVE_BYTES, "live_bytes")                              \
    X(LIVE_COUNT, "live_count")                              \
    X(INTERVAL_PEAK_BYTES, "interval_peak_bytes")            \
    X(ALLOC_TOTAL, "alloc_total")                            \
    X(ALLOC_BYTES_TOTAL, "alloc_bytes_total")                \
    X(FREE_TOTAL, "free_total")                              \
    X(GROWTH_STEPS, "growth_steps")                          \
    X(GROWTH_BYTES, "growth_bytes")
#define VT__SITE_ENUM(e, name) VT_SITE_##e,
enum { VT_SITE_COLUMNS(VT__SITE_ENUM) VT_SITE_NCOLS };
#undef VT__SITE_ENUM
#define VT__SITE_NAME(e, name) name,
/* VT_SITE_COLUMN_NAMES: an initializer of the VT_SITE_NCOLS names, in column order. */
#define VT_SITE_COLUMN_NAMES {VT_SITE_COLUMNS(VT__SITE_NAME)}

/* Key of a snapshot whose "sites" lists only the rows that changed since the
 * previous snapshot of the stream (version 2; docs/snapshot-format.md). */
#define VT_SITES_DELTA_KEY "sites_delta"

/* Version 3 (docs/snapshot-format.md "site", "sites in versions 2 and 3"): a site is defined
 * once per file by a "site" record {"t":"site","id":N,"stack":S,"kind":"device",
 * "device":D} before the first row that uses it, and a row of "sites" is
 * [site id, then the 8 counters in VT_SITE3_ORDER] — the counters that change in
 * every step of a churning site come first. A delta record writes each listed
 * row's counters as differences from the site's row in the previous snapshot
 * record (0 when that record has none), signed, without the trailing zeros (1 to
 * 9 columns); complete records write all 9, absolute. */
#define VT_FORMAT_DELTA_ROWS 3
/* First format version whose delta records leave out what did not change since the
 * previous record of the file: devices and their figures, host signals, gauges, seq,
 * step_marked, dropped_records (docs/snapshot-format.md "Version 4"). */
#define VT_FORMAT_CARRY 4
#define VT_SITE3_NCOLS 9
/* VT_SITE3_ORDER[i]: the version 2 column (VT_SITE_*) written as version 3 column 1 + i
 * (column 0 is the site id). python/vramtrace/snapshots.py SITE_COLUMNS_V3 follows it. */
#define VT_SITE3_ORDER { VT_SITE_ALLOC_TOTAL, VT_SITE_ALLOC_BYTES_TOTAL, VT_SITE_FREE_TOTAL, \
                         VT_SITE_LIVE_BYTES, VT_SITE_LIVE_COUNT, VT_SITE_INTERVAL_PEAK_BYTES, \
                         VT_SITE_GROWTH_STEPS, VT_SITE_GROWTH_BYTES }

/* Columns of a row of "allocations", in order: X(ENUM, "name") (docs/snapshot-format.md). */
#define VT_ALLOC_COLUMNS(X)      \
    X(ADDR, "address")           \
    X(SIZE, "size")              \
    X(KIND, "kind")              \
    X(DEVICE, "device")          \
    X(STACK, "stack")            \
    X(STEP, "step")              \
    X(BIRTH_NS, "birth_ns")      \
    X(TID, "tid")                \
    X(STREAM, "stream")
#define VT__ALLOC_ENUM(e, name) VT_ALLOC_##e,
enum { VT_ALLOC_COLUMNS(VT__ALLOC_ENUM) VT_ALLOC_NCOLS };
#undef VT__ALLOC_ENUM

#endif /* VT_FORMAT_H */
