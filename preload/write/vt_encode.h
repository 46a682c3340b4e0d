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
 * and the module records (vt_module.written, capture/vt_modules.h); for write faults,
 * a note of the definitions encoded since the last vt_encode_defs_mark, so that those
 * of an append that failed can be taken back (vt_encode_defs_undo). The "gap" record
 * (vt_encode_gap_record) is the write faults' too. The owner, the
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

/* One definition marked written since vt_encode_defs_mark (module, stack or site). */
typedef struct vt_encode_jent {
    void    *module;          /* vt_module *, or NULL for a stack or site          */
    uint32_t id;
    uint8_t  site;            /* 1 site id, 0 stack id                             */
} vt_encode_jent;

/* The definitions the current file holds. Zero-initialised = none. */
typedef struct vt_encode_defs {
    vt_encode_idset stacks;
    vt_encode_idset sites;
    vt_encode_jent *journal;  /* marked since vt_encode_defs_mark (malloc'ed)      */
    size_t          njournal, capjournal;
    int             journal_lost;   /* one could not be noted: undo clears all     */
} vt_encode_defs;

/* A new file: nothing is defined in it (the module records too). Keeps the memory. */
void vt_encode_defs_clear(vt_encode_defs *d);

/* What the file's previous snapshot record said, for the blocks a delta record leaves
 * out when unchanged (format version 4, docs/snapshot-format.md "Version 4: what a
 * record leaves out"): each device's figures by slot (device + 1), the seq, the
 * dropped count and step_marked. Filled by every vt_encode_snapshot; valid 0 (zeroed,
 * or vt_encode_last_reset) = nothing known: the next record must be complete. */
typedef struct vt_encode_last {
    int          valid;
    uint64_t     seq, dropped;
    int          step_marked;
    uint8_t      known[VT_DEV_SLOTS];      /* the device's figures are in devs[slot] */
    vt_dev_stats devs[VT_DEV_SLOTS];
} vt_encode_last;

/* Forgets what the previous record said (a new file, a failed write). */
void vt_encode_last_reset(vt_encode_last *l);
/* Write faults: the definitions encoded from here on are noted, so that when the
 * bytes holding them never reach the file, vt_encode_defs_undo marks them not
 * written again (the file keeps every definition it had before; none twice).
 * vt_encode_defs_mark starts a new note; undo takes back those since the mark (all
 * of the file's when one could not be noted: the file then holds some twice, which
 * readers accept after a "gap" record). */
void vt_encode_defs_mark(vt_encode_defs *d);
void vt_encode_defs_undo(vt_encode_defs *d);

/* {"t":"gap",...}\n (docs/snapshot-format.md "gap"): records collected and not
 * written, from first_step to last_step (has_steps 0: none carried a step), at
 * CLOCK_MONOTONIC first_ns..last_ns, and the write fault (errno, its text). */
typedef struct vt_encode_gap {
    uint64_t records;
    int      has_steps;
    uint64_t first_step, last_step, first_ns, last_ns;
    int      err;
    const char *error;
} vt_encode_gap;
void vt_encode_gap_record(vt_buf *b, const vt_encode_gap *g);

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
    int                delta;        /* a delta record: only the changed sites
                                        (vt_sitediff_can_delta) and, against last, only
                                        the changed device figures; else complete      */
    vt_encode_last    *last;         /* the file's previous record (valid when delta);
                                        updated to this record                          */
    const vt_sitediff *prev;         /* the previous record's rows, when delta          */
    const vt_oom_info *oom;          /* trigger oom only; else NULL                    */
    int                allocations;  /* write the "allocations" list (c->allocs)        */
    uint64_t           time_ns;      /* CLOCK_MONOTONIC when it was collected; 0 = now */
    uint64_t           marks_not_written;   /* exit only: NVTX marks the rate bound kept
                                                from being written in the whole run; the
                                                key is left out at 0                      */
} vt_encode_snap;

/* {"t":"snapshot",... up to the sites, devices, leak warnings, OOM and live list — the
 * record is left open: the caller appends the IPC rows, annotations and host objects,
 * then vt_encode_end. Keys at their default (label null, oom null, allocations null,
 * unfreed_at_exit false, dropped_records 0, leak_warnings empty, sites_delta false)
 * are left out; a delta record also leaves out seq when it is the previous one plus
 * 1, step_marked and dropped_records when unchanged, each device, device key and
 * kind figure that did not change since s->last, and the leak warnings (format
 * version 4). */
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

/* Appends the IPC rows of a record (rows: vt_encode_ipc's text). Complete record
 * (delta 0): rows as they are. Delta record (format version 4): nothing when rows are
 * the same as last (what the file's previous record carried); else rows, with an
 * emptied list written as ,"exports":[] / ,"imports":[]. Then makes last a copy of
 * rows (on allocation failure last->oom is set: the next delta writes them again). */
void vt_encode_ipc_since(vt_buf *b, const vt_buf *rows, vt_buf *last, int delta);

/* Closes a record left open: "}\n". */
void vt_encode_end(vt_buf *b);

#endif /* VT_ENCODE_H */
