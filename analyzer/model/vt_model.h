/* vt_model.h — what the analyzer keeps of a snapshot stream, per process.
 *
 * Design: the fold (vt_fold.c) applies each decoded record to these structures
 * as the reader streams, so memory is bounded by what is distinct, not by how
 * many records a run wrote:
 *   - modules and stacks once per file (stacks are interned after trimming the
 *     frames of libvramtrace/libcudart/libcuda, so sites that differ only inside
 *     CUDA's own libraries are one site; a stack's Python frames are
 *     part of its interning key, so two Python call sites are two stacks);
 *   - one vt_rsite per (raw stack id, kind, device) with its step series stored
 *     run-length encoded (vt_point: a value holds from its step until the next
 *     point), 24 bytes per change;
 *   - per step slot (vt_slots.h: at most a fixed number per process, each
 *     covering a range of steps once a run has more steps than that) only its
 *     first step number, the process's total live bytes and the time;
 *   - per device the last and extreme values; per OOM its forensics
 *     (vt_oom.c), computed from the record's live list while it is folded, which
 *     is then dropped;
 *   - per annotation key its latest value (PyTorch's gauges also per device), and
 *     the host/NVML signals' first and last values (vt_hostsig.h).
 * Units: bytes and nanoseconds throughout; "step index" is a dense 0-based index
 * into vt_process.steps, "step" is the program's own step number.
 * Phases and field ownership: the loading phase (read/ and vt_fold.c) fills
 * everything except the fields marked "analysis"; fields marked "loading
 * scratch" are meaningful only while a file is read (they are left as they are
 * after it, and nothing downstream may read them); fields marked "analysis" are
 * written by vt_analyze_ex (analyze/) on the processes it was given.
 * Single-threaded; a vt_runset owns everything reachable from it.
 */
#ifndef VT_MODEL_H
#define VT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

/* Device ids a snapshot may carry: -1 (no device / host memory) .. 65535; others
 * are rejected by the reader ("file:line: ...: device N out of range"). */
#define VT_DEVICE_MIN (-1)
#define VT_DEVICE_MAX 65535

typedef struct vt_module {
    int64_t id;                 /* the file's module id */
    char *path;                 /* module path as written by the preload (opened to symbolize) */
    char *shown;                /* the same in display form (vt_display.h): what reports show */
    char *build_id;             /* lowercase hex, "" if unknown */
    uint64_t bias;              /* load bias (dlpi_addr) */
    UT_hash_handle hh;          /* vt_process.module_by_id, keyed by id */
} vt_module;

typedef struct vt_frame {
    vt_module *mod;             /* NULL: no module (offset is the raw pc) */
    uint64_t offset;            /* pc - bias (ELF virtual address) */
    char *function;             /* dladdr name at write time, or NULL */
} vt_frame;

/* One Python frame of a stack (docs/snapshot-format.md "stack", key "py"). */
typedef struct vt_pyframe {
    char *file;                 /* co_filename as written; "?" when unknown; owned */
    char *function;             /* co_qualname (co_name on 3.10); "?" when unknown; owned */
    uint32_t line;              /* 1-based source line; 0 = unknown */
    int32_t native_index;       /* index into the owning vt_stack.frames (after trimming) of the
                                   eval-loop frame that runs it; -1: after the last native frame */
} vt_pyframe;

/* A canonical (trimmed, interned) stack: one per distinct frame list per process. */
typedef struct vt_stack {
    uint32_t index;             /* position in vt_process.stacks */
    uint32_t nframes;
    vt_frame *frames;           /* innermost first; owned */
    uint32_t npy;
    vt_pyframe *py;             /* Python frames, innermost first; owned; NULL when npy == 0 */
    char *key;                  /* (module ptr, offset) bytes, then the Python frames: the interning key */
    size_t keylen;
    /* analysis: set by vt_analyze_ex through vt_pyview.h */
    int32_t *view;              /* frames as shown, innermost first: >= 0 a logical native frame
                                   (VT_VIEW_NATIVE: frame index, VT_VIEW_DEPTH: inline depth,
                                   vt_symbolize.h vt_sym_frame_at), < 0 the Python frame -1-v; owned */
    uint32_t nview;
    uint32_t title;             /* index into view of the frame that names the site (nview: none) */
    int32_t allocator;          /* analysis: the caching allocator whose frames are inside the title
                                   (vt_allocators.h), -1: none */
    uint32_t inline_skip;       /* analysis: leading logical frames of frames[0] left out of the
                                   view (CUDA's inline wrappers, vt_analysis.c) */
    struct vt_stack *group;     /* the stack whose sites this stack's sites merge into: itself, or
                                   with --python-only its Python frames' stack */
    UT_hash_handle hh;          /* vt_process.stack_by_key (or pyonly_by_key) */
} vt_stack;

/* A native entry of vt_stack.view: frame index i (< 2^24) and inline depth d (< 128). */
#define VT_VIEW_MAKE(i, d) ((int32_t)((uint32_t)(i) | ((uint32_t)(d) << 24)))
#define VT_VIEW_NATIVE(v) ((uint32_t)(v) & 0xFFFFFFu)
#define VT_VIEW_DEPTH(v) (((uint32_t)(v) >> 24) & 0x7Fu)

/* Maps a stack id of the file to its canonical stack. */
typedef struct vt_rawstack {
    int64_t id;
    vt_stack *canon;
    UT_hash_handle hh;
} vt_rawstack;

/* One change of a site's step series (per slot, vt_slots.h; a slot of one step
 * holds that step's values). */
typedef struct vt_point {
    uint32_t step;              /* step (slot) index from which the values hold */
    uint32_t nfree;             /* frees made by the site during the slot's steps (saturating) */
    uint64_t live;              /* live bytes at the step's last snapshot (0 if absent); a slot:
                                   the least over its steps */
    uint64_t peak;              /* highest live bytes seen during the slot's steps */
} vt_point;

typedef struct vt_site_key {
    int64_t stack;              /* raw stack id of the file */
    int32_t kind;               /* vt_kind */
    int32_t device;
    int32_t flags;              /* VT_FLAG_* (version 3 "site" records; 0 before) */
} vt_site_key;

/* A site as the file names it: (stack id, kind, device). */
typedef struct vt_rsite {
    vt_site_key key;
    vt_stack *canon;            /* trimmed stack */
    vt_point *pts;              /* run-length step series; owned */
    uint32_t npts, cap;
    uint64_t peak_bytes;        /* max live/interval peak ever seen */
    uint64_t unfreed_exit;      /* live bytes in the exit record */
    uint64_t last_live;         /* live bytes at the last closed step (its last series snapshot) */
    /* a region site (kind region): the allocation that held one of its regions in
     * the first snapshot with an allocation list that had one (vt_fold.c): its
     * address and site; 0 / NULL when none is known */
    uint64_t heap_addr;
    struct vt_rsite *heap_site;
    /* loading scratch of vt_fold.c: this snapshot's sums, this step's state */
    uint64_t snap_mark;         /* snapshot ordinal of snap_* values */
    uint64_t snap_live, snap_peak, snap_free_total;
    uint64_t free_total;        /* cumulative frees as last written */
    uint64_t step_mark;         /* vt_process.nsteps_real of the step whose touched list holds it */
    uint64_t closed_mark;       /* vt_process.nsteps_real of the last step closed for it */
    uint64_t step_seen_snap;    /* last snapshot ordinal in which it appeared */
    uint64_t step_live, step_peak;
    uint32_t step_nfree;
    /* loading scratch of the decoder's delta completion (read/vt_decode_snapshot.c) */
    uint64_t delta_mark;        /* record ordinal in which a version 2+ record listed it */
    uint64_t row[8];            /* version 3: its last row's columns 3..10 in version 2's order */
    uint64_t row_mark;          /* record ordinal whose (completed) rows held row; 0 = none */
    /* loading scratch of vt_oom.c */
    uint64_t scratch;           /* index of its entry in the OOM's per-site accumulator */
    uint64_t scratch_mark;      /* vt_snaprec.mark of the record scratch belongs to */
    /* analysis */
    uint32_t result;            /* index of its merged site in vt_proc_result.sites (vt_analysis.c) */
    UT_hash_handle hh;          /* vt_process.sites */
} vt_rsite;

struct vt_device;
/* Bytes the device's graph memory pool holds that back no live graph allocation
 * (reserved - used, last written): kept after the graphs that used them are gone,
 * until cudaDeviceGraphMemTrim. */
#define vt_graph_retention(dv) \
    ((dv)->graph_reserved > (dv)->graph_used ? (dv)->graph_reserved - (dv)->graph_used : 0)

/* What was live at the peak (docs/snapshot-format.md "peak_composition"): the sites
 * holding the most bytes at the moment the total (of a device, or of the process)
 * reached its highest copied peak; the latest composition read, which is the highest. */
#define VT_PEAKCOMP_MAX 64      /* sites one composition may name */
typedef struct vt_peakcomp_site {
    vt_rsite *site;
    uint64_t bytes;             /* its live bytes at the moment */
} vt_peakcomp_site;
typedef struct vt_peakcomp {
    int present;                /* some record carried it */
    uint64_t bytes, step, time_ns;          /* the total then; the step in progress; CLOCK_MONOTONIC */
    uint64_t other_bytes, other_sites;      /* the sites not named */
    size_t n;
    vt_peakcomp_site s[VT_PEAKCOMP_MAX];    /* bytes descending */
} vt_peakcomp;

typedef struct vt_device {
    int device;
    int has_mem;                /* free/total known */
    uint64_t free_bytes, total_bytes;       /* last known (cuMemGetInfo_v2) */
    uint64_t live_bytes, peak_bytes;        /* last written */
    uint64_t peak_max;                      /* max peak_bytes written */
    double frag_last, frag_max;             /* fragmentation, docs/metrics.md */
    uint64_t pool_reserved, pool_used;      /* last written */
    uint64_t retention_max;                 /* max (reserved - used) */
    /* the device's graph memory pool (devices[].graph_reserved_bytes / _used_bytes,
     * written only by programs that made graph allocation nodes): last written, and
     * the largest reserve not backing a live graph allocation */
    int has_graph;
    uint64_t graph_reserved, graph_used, graph_retention_max;
    /* PyTorch caching-allocator gauges from the snapshot's annotations
     * ("torch.cuda:<device>.<name>", docs/snapshot-format.md "annotations"), bytes,
     * latest values; has_torch: bit 0 allocated, bit 1 reserved, bit 2 inactive split */
    int has_torch;
    double torch_allocated, torch_reserved, torch_inactive_split;
    double torch_cached_max;                /* max (reserved - allocated) over snapshots with both */
    /* allocation calls, summed over the kinds of devices[].kinds (docs/snapshot-format.md
     * "snapshot"), cumulative, latest: alloc_total (succeeded), failed_total (every
     * failed call), oom_total (failed with out-of-memory; has_oom_total 0 when the
     * files predate the counter, then the failures' cause is unknown) */
    uint64_t alloc_calls, failed_calls, oom_calls;
    int has_oom_total;
    vt_peakcomp peak_comp;                  /* what was live at its peak */
} vt_device;

#define VT_TORCH_ALLOCATED 1
#define VT_TORCH_RESERVED 2
#define VT_TORCH_INACTIVE_SPLIT 4

/* One annotation key of a process: its latest value (docs/snapshot-format.md "annotations"). */
/* A labelled snapshot (vramtrace_snapshot(label); docs/snapshot-format.md "label"). */
typedef struct vt_label {
    uint64_t seq, step, time_ns;
    char trigger[16];
    char *label;                /* display form (vt_display.h); owned */
} vt_label;

#define VT_MAX_LABELS 10000     /* kept per process; later ones are counted only */

typedef struct vt_annot {
    char key[64];               /* 1-63 bytes of [A-Za-z0-9_.:-] */
    double value;               /* in the last snapshot that carried the key */
    double max;                 /* largest value seen */
    uint64_t step;              /* step of that last snapshot */
} vt_annot;

#define VT_MAX_ANNOT 1024       /* distinct keys per process; more is an error */

/* A site's share of an OOM moment. */
typedef struct vt_oom_site {
    vt_rsite *site;
    uint64_t bytes;             /* live bytes of the site at the OOM */
    uint64_t blocks;            /* live blocks (0 if only the site totals were known) */
    uint64_t split_blocks;      /* blocks with free gaps on both sides */
    uint64_t gap_if_freed;      /* largest contiguous gap freeing one of its blocks would make */
} vt_oom_site;

#define VT_OOM_TOP 5
#define VT_MAX_OOMS 4096        /* OOM records kept per process; later ones are counted only */

/* One run of the address map of an OOM (vt_oom.map): live blocks of the failing
 * device (device, async and VMM kinds) next to each other, by address. */
typedef struct vt_oom_block {
    uint64_t addr, size;        /* from the first block's address to the last block's end, bytes */
    uint64_t gaps_in;           /* free bytes between its blocks (0 unless the map was coarsened) */
    vt_rsite *site;             /* the site of all its blocks; NULL when they are of several */
    uint32_t blocks;            /* live blocks in it */
} vt_oom_block;
#define VT_OOM_MAP 256          /* runs per map: above it the smallest gaps are merged into runs */
#define VT_OOM_MAPS 16          /* OOMs of a process that keep a map (the first ones) */

typedef struct vt_oom {
    uint64_t seq, step, time_ns;
    char api[64];
    int kind, device;
    uint64_t requested_bytes;
    int64_t result;             /* the CUDA error code returned to the program */
    int has_mem;                /* free/total known */
    uint64_t free_bytes, total_bytes, tracked_bytes;
    int64_t untracked_bytes;    /* (total - free) - tracked; may be negative if inconsistent */
    vt_rsite *site;             /* the failing call's site, or NULL */
    int64_t stack;              /* the failing call's stack id, -1 if none */
    int has_allocs;             /* the live list was present */
    uint64_t gap_count, gap_total, gap_largest;   /* free gaps between live blocks on the device */
    vt_oom_site top[VT_OOM_TOP];   /* by live bytes */
    int ntop;
    vt_oom_site split[VT_OOM_TOP]; /* fragmentation: sites whose blocks split the free gaps */
    int nsplit;
    vt_oom_block *map;          /* the device's live blocks by address, touching blocks of one site
                                   as one run, the gaps between runs free (at most VT_OOM_MAP; only
                                   for the first VT_OOM_MAPS OOMs with a live list); owned, NULL: none */
    uint32_t nmap;
} vt_oom;

/* One live allocation of a record's `allocations` list (docs/snapshot-format.md). */
typedef struct vt_alloc {
    uint64_t addr, size;        /* device address, bytes */
    uint64_t birth_ns;          /* CLOCK_MONOTONIC time of the allocation */
    uint64_t stream;            /* 0: none */
    int64_t stack;              /* raw stack id of the file; INT64_MIN: none */
    int32_t kind, device;
    int32_t flags;              /* VT_FLAG_* (the row's optional last column) */
} vt_alloc;

/* Memory shared with another process (docs/snapshot-format.md "exports", "imports"):
 * an export is (addr, digest); an import is (addr, digest, size, opens). digest: the
 * 64-bit digest of the handle both processes saw, what joins an import to its
 * exporter. */
typedef struct vt_ipc_row {
    uint64_t addr, digest;
    uint64_t size;              /* imports: bytes mapped; exports: 0 */
    uint64_t opens;             /* imports: opens of the mapping (the driver's count); exports: 0 */
} vt_ipc_row;

/* A record that carried the full live list (triggers exit, oom, signal, manual),
 * kept only when vt_runset.keep_allocs is set (for `vramtrace export`). */
typedef struct vt_alloc_list {
    uint64_t seq, step, time_ns;
    char trigger[16];
    int is_exit;
    vt_alloc *rows;             /* owned */
    size_t n;
} vt_alloc_list;

/* A host/hardware counter over a run (docs/snapshot-format.md "host"): the first
 * and last values that were not null, in snapshot order. */
typedef struct vt_hcount {
    int known;                  /* some snapshot had a value */
    uint64_t first, last, max;
} vt_hcount;

/* NVML counters of one GPU, in this order (names in vt_hostsig.c). */
enum {
    VT_HC_ECC_VOL_CORR, VT_HC_ECC_VOL_UNCORR, VT_HC_ECC_AGG_CORR, VT_HC_ECC_AGG_UNCORR,
    VT_HC_RETIRED_SBE, VT_HC_RETIRED_DBE, VT_HC_REMAP_CORR, VT_HC_REMAP_UNCORR, VT_HC_N
};

/* One GPU as NVML saw it ("host".nvml.devices[]), matched across snapshots by UUID
 * (else by NVML index). */
typedef struct vt_gpu_health {
    char uuid[96];              /* "" if none was written */
    int64_t device;             /* CUDA ordinal; -1 when null */
    int64_t index;              /* NVML index; -1 when null */
    vt_hcount used, total, process_used;   /* bytes */
    vt_hcount c[VT_HC_N];
    int pending_first, pending_last;       /* remapped_rows_pending: -1 never known, else 0/1 */
    int failure_first, failure_last;       /* remapped_rows_failure: the same */
} vt_gpu_health;

#define VT_MAX_GPUS 64          /* NVML devices kept per process; more are ignored */

/* The "host" key of the snapshots, read leniently (vt_hostsig.h). */
typedef struct vt_host {
    int present;                /* some snapshot had a "host" object */
    vt_hcount rss, rss_peak, swap;         /* bytes */
    int has_cgroup;
    int64_t cg_version;         /* 1 or 2; -1 unknown */
    char cg_path[256];
    vt_hcount cg_oom, cg_oom_kill, cg_current, cg_max;
    vt_gpu_health *gpus; size_t ngpus, capgpus;
} vt_host;

/* A "gap" record: snapshots the writer collected and could not write (a write
 * fault: disk full, EIO, the file removed), docs/snapshot-format.md "gap". */
typedef struct vt_gap {
    uint64_t records;           /* snapshots lost */
    int has_steps;              /* first_step/last_step known */
    uint64_t first_step, last_step;
    uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC of the first and last lost (0 unknown) */
    int64_t err;                /* errno, 0 unknown */
    char error[128];            /* its text, display form (vt_display.h) */
} vt_gap;

/* A leak warning the preload printed while the process ran ("vramtrace: possible
 * leak: ..." on its stderr): a site as the first snapshot whose "leak_warnings" named
 * it gave it (docs/snapshot-format.md). */
typedef struct vt_livewarn {
    vt_site_key key;            /* raw stack id, kind, device (flags 0: the warning has none) */
    uint64_t step;              /* that snapshot's step */
    uint64_t growth_steps;      /* steps its floor had risen in a row then */
    uint64_t growth_bytes_per_step;
} vt_livewarn;
/* Warnings kept per process (the first ones, in file order; the rest are counted). */
#define VT_MAX_LIVEWARN 32

typedef struct vt_process {
    char *file;                 /* snapshot file path */
    char *host;
    uint64_t pid, ppid, start_ns;
    int has_rank;
    int64_t rank, local_rank, world_size;
    int has_restart;            /* the header had "restart" (format version 3 files may omit it) */
    int64_t restart;            /* the elastic job's restart count; 0 when has_restart is 0 */
    char *exe, *cmdline;        /* cmdline joined with spaces */
    char *alloc_env;            /* the header's "allocator_env" as "NAME=VALUE, ..." in display form
                                   (the frameworks' allocator settings); NULL when absent */
    int tensors;                /* it had VRAMTRACE_TENSORS=1 (`vramtrace run --tensors`) */
    char *step_range;           /* the header's "step_range" (steps marked by NVTX ranges of that
                                   [DOMAIN:]NAME), display form; NULL when absent */
    uint64_t depth, interval_ms;
    int step_marked;            /* some snapshot had step_marked true */
    vt_module *module_by_id;
    vt_module **modules; size_t nmodules, capmodules;
    vt_stack *stack_by_key;
    vt_stack **stacks; size_t nstacks, capstacks;
    vt_stack *pyonly_by_key;    /* analysis: --python-only group stacks (also in stacks), vt_pyview.c */
    vt_annot *annots; size_t nannots, capannots;      /* in order of first appearance */
    vt_label *labels; size_t nlabels, caplabels;      /* labelled snapshots, in file order
                                                         (at most VT_MAX_LABELS) */
    uint64_t labels_dropped;                          /* labelled snapshots past the cap */
    vt_host hostsig;            /* host and hardware signals (vt_hostsig.h) */
    vt_livewarn *livewarns; size_t nlivewarns, caplivewarns;   /* at most VT_MAX_LIVEWARN */
    uint64_t livewarns_dropped;                               /* warned sites past that cap */
    vt_rawstack *rawstacks;
    vt_rsite *sites;            /* hash of all sites */
    size_t nsites;
    /* step slots (vt_slots.h): at most vt_slot_limit() of them; a "step index" is a
     * slot index. Unbucketed (slot_width 1) a slot is one step. */
    uint64_t *steps; size_t nsteps, capsteps;       /* each slot's first step number, increasing */
    uint64_t *step_total; size_t captotal;           /* total live bytes at the last snapshot of each
                                                        slot's last step */
    uint64_t *step_time; size_t captime;             /* time_ns of that snapshot (0 unknown) */
    uint64_t slot_width;        /* steps per slot (every slot but the last holds exactly this many);
                                   0 before the first step, then 1, doubled by vt_slots_coarsen */
    uint64_t nsteps_real;       /* steps folded: the slots' steps summed */
    uint64_t last_step;         /* the last folded step's number (valid when nsteps_real > 0) */
    uint64_t total_max;         /* the largest total live bytes at a step's last snapshot */
    vt_alloc_list *alists; size_t nalists, capalists; /* live lists, oldest first (keep_allocs only) */
    vt_device *devices; size_t ndevices, capdevices;
    vt_oom *ooms; size_t nooms, capooms;                 /* the first VT_MAX_OOMS, in file order */
    uint64_t ooms_dropped;                               /* OOM records past that cap (counted only) */
    uint64_t nsnapshots;        /* series snapshots (not exit) */
    uint64_t dropped_records;   /* max dropped_records written */
    uint64_t marks_not_written; /* NVTX marks the preload's rate bound did not write
                                   (the exit record's nvtx_marks_not_written); 0 none */
    int exited;                 /* an exit record was read */
    vt_ipc_row *exports; size_t nexports;   /* the last snapshot's exports (owned) */
    vt_ipc_row *imports; size_t nimports;   /* the last snapshot's open imports (owned) */
    int imports_at_exit;        /* that snapshot was the exit record */
    uint64_t unfreed_exit_bytes;
    uint64_t peak_bytes;        /* sum over devices of peak_max */
    vt_peakcomp *peak_comp;     /* what was live at the process's peak (all devices); owned,
                                   NULL when no record carried it */
    int torn_tail;              /* a torn last line was ignored */
    int has_summary;            /* a "summary" record (VRAMTRACE_MAX_BYTES) gave the steps
                                   summary_first..summary_last, in summary_buckets buckets
                                   (floor and peak each), from summary_records records */
    uint64_t summary_first, summary_last, summary_records, summary_max_bytes;
    uint32_t summary_buckets;
    vt_gap *gaps; size_t ngaps, capgaps;   /* write faults the stream records, in file order */
    uint64_t lost_records;      /* summed over gaps */
    /* loading scratch of vt_fold.c: sites touched in the current step, sites whose
     * series is non-zero in the current slot, the last series snapshot's ordinal,
     * whether the current step opened its slot, the slot limit (vt_slot_limit);
     * touched and active are freed by vt_fold_finish */
    vt_rsite **touched; size_t ntouched, captouched;
    vt_rsite **active; size_t nactive, capactive;
    uint64_t last_series_snap;
    int step_fresh;
    size_t slot_limit;
} vt_process;

typedef struct vt_runset {
    vt_process **procs;
    size_t n, cap;
    int verbose;                /* mention ignored torn lines */
    int keep_allocs;            /* keep every record's live list (vt_process.alists) */
    int read_threads;           /* JSON parser threads per file (vt_lineparse.h); 0: parse
                                   on the loading thread. Same results either way. */
    char err[1200];             /* "file:line: what" after a failure */
    size_t skipped_files;       /* files of a named folder that could not be read (each
                                   noted on stderr; `check` fails on them) */
    char first_skipped[1200];   /* the first one's "file:line: what" */
} vt_runset;

/* "N records lost between step A and B: ERROR" (or "N records lost: ERROR" when the
 * steps are not known) into buf; returns buf. */
const char *vt_gap_text(const vt_gap *g, char *buf, size_t cap);
/* Gaps the text and HTML reports and `check` list one by one; the rest are summed. */
#define VT_GAPS_SHOWN 3

/* Site s's series expanded to nsteps dense slots (run-length points in order);
 * any of live, peak, nfree may be NULL. */
void vt_rsite_expand(const vt_rsite *s, size_t nsteps, uint64_t *live, uint64_t *peak, uint32_t *nfree);

/* Device entry for number dev, created on first use. */
vt_device *vt_process_device(vt_process *p, int dev);

/* The site (key) of p, created empty with stack canon on first use. key must be
 * zeroed before its fields are set (it is hashed whole, padding included). */
vt_rsite *vt_process_site(vt_process *p, const vt_site_key *key, vt_stack *canon);

/* The canonical stack of the file's stack id, or NULL when id is not defined. */
vt_stack *vt_process_rawstack(const vt_process *p, int64_t id);

void vt_process_free(vt_process *p);
void vt_runset_free(vt_runset *rs);

#endif /* VT_MODEL_H */
