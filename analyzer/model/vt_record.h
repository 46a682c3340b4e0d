/* vt_record.h — one snapshot record as typed values: what the decoder
 * (read/vt_decode*.c) hands to the fold (vt_fold.h) and the OOM forensics
 * (vt_oom.h).
 *
 * Contract: a vt_snaprec holds one "snapshot" record (docs/snapshot-format.md),
 * fully decoded and validated, in the canonical form every format version is
 * upgraded to by the decoder: each site row with its columns 3..10 in version 2's
 * order (VT_SITE_LIVE_BYTES..), a delta record already completed (every site with
 * live bytes > 0, as a version 1 writer wrote it). Stack ids are the file's raw
 * ids, already resolved (canon). Units: bytes, nanoseconds; steps are the
 * program's own step numbers.
 * Ownership: the vectors are owned by the vt_snaprec and reused record after
 * record (cleared, not freed); strings marked "borrowed" point into the JSON tree
 * of the current line and are dead after it. vt_snaprec_free releases them.
 * Single-threaded.
 */
#ifndef VT_RECORD_H
#define VT_RECORD_H

#include "vt_model.h"

/* One site row of the record. */
typedef struct vt_rec_site {
    vt_site_key key;
    uint64_t live, ipeak, free_total;   /* bytes, bytes, frees (cumulative) */
    uint64_t row[8];            /* columns 3..10 in version 2's order (VT_SITE_LIVE_BYTES..); in a
                                   version 3 delta record differences until the decoder completes it */
    vt_stack *canon;            /* resolved stack */
    vt_rsite *site;             /* the process's site, once resolved (NULL: not yet) */
} vt_rec_site;

/* One entry of the record's "devices" list. */
typedef struct vt_rec_dev {
    int64_t device;
    int has_free, has_total, has_frag, has_pool_r, has_pool_u;
    uint64_t free_b, total_b, live, peak, pool_r, pool_u;   /* bytes */
    int has_graph_r, has_graph_u;           /* the graph memory pool (optional keys) */
    uint64_t graph_r, graph_u;              /* bytes */
    double frag;                /* 0..1, docs/metrics.md */
    uint64_t calls, failed, oom;     /* summed over kinds: alloc_total, failed_total, oom_total */
    int has_oom;                     /* some kind carried oom_total (files older than it do not) */
} vt_rec_dev;

/* One annotation of the record. */
typedef struct vt_rec_annot {
    const char *key;            /* borrowed; 1-63 bytes of [A-Za-z0-9_.:-] */
    double value;               /* finite */
} vt_rec_annot;

/* The record's "oom" object. */
typedef struct vt_rec_oom {
    int present;
    char api[64];               /* display form (vt_display.h); "" when absent */
    int32_t kind, device;
    uint64_t requested, free_b, total_b, tracked;   /* bytes */
    int has_free, has_total, has_tracked;
    int64_t result, stack;      /* CUDA error code; raw stack id, -1 none */
} vt_rec_oom;

/* One composition of the record's "peak_composition" (the process's or a device's). */
typedef struct vt_rec_peak {
    int process;                /* 1: the process's ("process"); 0: device's */
    int32_t device;
    uint64_t bytes, step, time_ns, other_bytes, other_sites;
    size_t n;
    struct { vt_site_key key; vt_stack *canon; uint64_t bytes; } s[VT_PEAKCOMP_MAX];
} vt_rec_peak;

typedef struct vt_snaprec {
    uint64_t step, seq, time_ns, dropped;
    uint64_t marks_not_written;   /* "nvtx_marks_not_written" (exit records); 0 absent */
    char trigger[32];           /* "" when absent */
    char *label;                /* the snapshot's "label" (vramtrace_snapshot), NULL when
                                   absent or null; owned (vt_snaprec_clear frees it) */
    int step_marked;
    int is_exit;                /* trigger "exit" or unfreed_at_exit: not a step */
    int summarised;             /* "summarised":true: an OOM record kept by a rewrite under
                                   the size cap, its step inside the summary: OOM forensics
                                   and live list only, not a step */
    int have_allocs;            /* the "allocations" list was present */
    vt_rec_oom oom;
    vt_rec_site *se; size_t nse, capse;     /* sites */
    vt_rec_dev *de; size_t nde, capde;      /* devices */
    vt_alloc *ae; size_t nae, capae;        /* live list (reordered by vt_oom_build) */
    vt_rec_annot *an; size_t nan, capan;    /* annotations */
    vt_ipc_row *ex; size_t nex, capex;      /* exports (absent: none) */
    vt_ipc_row *ix; size_t nix, capix;      /* imports still open (absent: none) */
    vt_rec_peak *pk; size_t npk, cappk;     /* peak compositions (absent: unchanged) */
    uint64_t mark;              /* last vt_rsite.scratch_mark handed out (vt_oom.c) */
} vt_snaprec;

/* Empties the record for the next one (keeps the vectors' memory). */
void vt_snaprec_clear(vt_snaprec *rec);

/* Frees the vectors; rec is then empty and reusable. */
void vt_snaprec_free(vt_snaprec *rec);

#endif /* VT_RECORD_H */
