/* vt_encode.h — records to bytes: the JSON Lines text of the header, module, stack,
 * site and snapshot records (docs/snapshot-format.md "Records"). The preload's only
 * place where the keys of those records are spelt; the "annotations" and "host"
 * objects of a snapshot come from vt_annot.c and vt_host.c.
 *
 * Every function appends to a vt_buf (vt_buf.h: an allocation failure sets ->oom,
 * checked by the caller before the bytes are written) and writes nothing else.
 * Integers are written as decimal; every one the program chooses is clamped to
 * 2^63-1 (docs/snapshot-format.md "Records").
 *
 * Per-file state: which stacks and sites the current file defines (vt_encode_defs),
 * and the module records (vt_module.written, capture/vt_modules.h). The owner, the
 * writer, holds its output lock across every call; nothing here is thread-safe.
 */
#ifndef VT_ENCODE_H
#define VT_ENCODE_H

#include <stdint.h>

#include "vt_buf.h"
#include "vt_core.h"
#include "vt_format.h"
#include "vt_sitediff.h"

/* An out-of-memory failure seen by a hook (docs/snapshot-format.md "oom"). */
typedef struct vt_oom_info {
    const char *api;          /* CUDA function name, static string            */
    int         kind;         /* vt_kind                                      */
    int         device;       /* ordinal or -1                                */
    uint64_t    requested;    /* bytes asked for                              */
    int         result;       /* cudaError_t / CUresult returned              */
    int         meminfo_ok;   /* free/total valid (cuMemGetInfo_v2 succeeded) */
    uint64_t    free_bytes, total_bytes;
    uint32_t    stack;        /* stack id of the failing call                 */
} vt_oom_info;

/* A set of small dense ids (stack ids, site ids): one byte each, grown on demand
 * (malloc; an id that cannot be added is defined again later, which readers accept). */
typedef struct vt_encode_idset {
    uint8_t *on;
    size_t   cap;
} vt_encode_idset;

/* The definitions the current file holds. Zero-initialised = none. */
typedef struct vt_encode_defs {
    vt_encode_idset stacks;
    vt_encode_idset sites;
} vt_encode_defs;

/* A new file: nothing is defined in it (the module records too). Keeps the memory. */
void vt_encode_defs_clear(vt_encode_defs *d);

/* {"t":"header",...}\n: format name and version, pid, ppid, host, exe, cmdline,
 * RANK/LOCAL_RANK/WORLD_SIZE, start_ns (CLOCK_REALTIME ns, as in the file name),
 * the monotonic start and the settings a reader needs (depth, interval_ms,
 * step_every, leak_steps). Reads /proc/self/exe and /proc/self/cmdline. */
void vt_encode_header(vt_buf *b, uint64_t start_ns);

/* The "module" records stack `id` needs and its "stack" record, unless d says the
 * file has it already; marks them written. */
void vt_encode_stack_def(vt_buf *b, vt_encode_defs *d, uint32_t id);

/* The "site" record of s (format version 3), unless d says the file has it. */
void vt_encode_site_def(vt_buf *b, vt_encode_defs *d, const vt_site_row *s);

/* What a snapshot record says, besides the "annotations" and "host" objects. */
typedef struct vt_encode_snap {
    uint64_t           seq;          /* 1, 2, ... within the file                      */
    vt_trigger         trigger;
    const char        *label;        /* manual only; NULL = null                       */
    const vt_collect  *c;            /* the core's copy; c->sites sorted (vt_sitediff) */
    int                delta;        /* list only changed sites (vt_sitediff_can_delta) */
    const vt_sitediff *prev;         /* the previous record's rows, when delta          */
    const vt_oom_info *oom;          /* trigger oom only; else NULL                    */
    int                allocations;  /* write the "allocations" list (c->allocs)        */
    uint64_t           time_ns;      /* CLOCK_MONOTONIC when it was collected; 0 = now */
} vt_encode_snap;

/* {"t":"snapshot",... up to and including "dropped_records" — the record is left open:
 * the caller appends the annotations and host objects, then vt_encode_end. */
void vt_encode_snapshot(vt_buf *b, const vt_encode_snap *s);

/* Index of a composition (vt_peak_comp.device) in a per-file "written" array of
 * VT_DEV_SLOTS + 1 generations: the device's slot, the process's last. */
static inline int vt_encode_peak_index(int device)
{
    return device == VT_PEAK_PROCESS ? VT_DEV_SLOTS
                                     : (device >= 0 && device < VT_MAX_DEVICES ? device + 1 : 0);
}

/* Appends ,"peak_composition":{"process":{...},"devices":[{"device":D,...}]} with the
 * compositions of c->peaks whose generation differs from written[index] (the last
 * one this file has: 0 none), and records them there; nothing when none changed
 * (docs/snapshot-format.md "peak_composition"). The sites they name must be defined
 * first (the caller: vt_encode_site_def for each). Returns how many were written. */
int vt_encode_peaks(vt_buf *b, const vt_collect *c, uint64_t written[VT_DEV_SLOTS + 1]);

/* Appends ,"exports":[[address,"digest"],...] and ,"imports":[[address,"digest",size,opens],...]
 * (track/vt_ipc.h; digests as 16 hex digits), each only when it has a row. */
void vt_encode_ipc(vt_buf *b);

/* Closes a record left open: "}\n". */
void vt_encode_end(vt_buf *b);

#endif /* VT_ENCODE_H */
