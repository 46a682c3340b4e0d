/* vt_decode.h — one snapshot line (a JSON tree) into typed records, inside read/.
 *
 * Contract: vt_rd_line / vt_rd_parsed take the file's lines in order. The header
 * creates the process (vt_rd.p); module and stack records are checked and folded
 * at once (vt_fold_stack); a "site" record (version 3) is kept in vt_rd.sdefs; a
 * snapshot record is decoded completely into vt_rd.rec (vt_record.h), checked
 * against the process (steps must not go backwards, annotation keys bounded), and
 * only then folded (vt_fold_snapshot), so a record that fails changes nothing but
 * new empty sites. Unknown record types are skipped.
 * Versions: ALL format-version compatibility lives in read/vt_decode*.c and
 * nowhere else. Version 1 sites are objects; version 2 sites are rows (VT_SITE_*
 * columns), and a record with "sites_delta":true lists only the sites that
 * changed since the previous snapshot of the file: it is completed before it is
 * folded with every site of the previous record with live bytes > 0 that it does
 * not list (vt_rd.prev), which gives exactly the rows a version 1 writer would
 * have written. Version 3 names sites by id ("site" records) and writes the rows
 * of a delta record as differences from the site's previous row (vt_rsite.row),
 * in another column order; the decoder turns them back into full rows in version
 * 2's order. The canonical form the fold consumes is therefore version 2's
 * (vt_record.h). Version 4 delta records also leave out what did not change since
 * the previous snapshot record: devices, device keys and kind figures, gauges, IPC
 * rows, seq, step_marked, dropped_records (and host signals, which the fold keeps as first/last
 * anyway); vt_decode_carry.c carries them forward, so the fold again sees version 3's
 * complete record.
 * Errors: "FILE:LINE: what" in rs->err, -1 (vt_reader.h lists them).
 * Single-threaded: one vt_rd per file, on the loading thread.
 */
#ifndef VT_DECODE_H
#define VT_DECODE_H

#include <jansson.h>

#include "vt_format.h"
#include "vt_jarena.h"
#include "vt_reader.h"
#include "vt_record.h"

/* Version 3: a "site" record, in vt_rd.sdefs by id. */
typedef struct vt_site_def {
    int64_t id;
    vt_site_key key;
    vt_stack *canon;
    vt_rsite *site;             /* its vt_rsite, once a row named it (vt_process_site) */
    UT_hash_handle hh;
} vt_site_def;

/* Version 4: one device as the file's records said it so far (vt_decode_carry.c). */
typedef struct vt_rd_dev {
    vt_rec_dev d;                        /* its figures; calls/failed/oom summed from kc      */
    uint64_t kc[VT_KIND_COUNT][3];       /* per kind: alloc_total, failed_total, oom_total    */
    uint8_t koom[VT_KIND_COUNT];         /* the kind carried oom_total                        */
} vt_rd_dev;
/* Site ids below this are also found by index (vt_rd.sdef_by_id). */
#define VT_SDEF_DIRECT (1 << 20)

/* The decoder's state for one file. */
typedef struct vt_rd {
    vt_runset *rs;
    const char *path;
    uint64_t line;              /* 1-based number of the current line */
    vt_process *p;              /* created by the header; owned by the vt_rd until pushed */
    vt_snaprec rec;             /* the current snapshot record */
    vt_rec_site *prev; size_t nprev, capprev;   /* v2+: previous snapshot's sites with live > 0 */
    int have_prev;              /* v2+: a snapshot record was read (prev is its state) */
    uint64_t nrecord;           /* v2+: snapshot records decoded (vt_rsite.delta_mark, row_mark) */
    int version;                /* header's format version */
    vt_site_def *sdefs;         /* v3: "site" records by id (memory grows with the definitions a
                                   file has, not with the ids it names) */
    vt_site_def *sdef_last;     /* v3: the last one looked up (rows of one site come in runs) */
    /* v4: what the previous snapshot record said, for the delta records that leave it
     * out (vt_decode_carry.c) */
    vt_rd_dev *devs; size_t ndevs, capdevs;      /* every device, in order of first mention */
    char **akeys; size_t nakeys, capakeys;       /* every gauge key (owned) ...              */
    double *avals; size_t capavals;              /* ... and its latest value                 */
    vt_ipc_row *cex; size_t ncex, capcex;        /* exports ...                              */
    vt_ipc_row *cix; size_t ncix, capcix;        /* ... and imports                          */
    uint64_t last_seq, last_dropped;
    int last_step_marked;
    vt_site_def **sdef_by_id;   /* v3: the same by id for ids below VT_SDEF_DIRECT (NULL: none) */
    size_t nsdef_by_id;
    vt_jarena arena;            /* jansson memory of the current line (vt_jarena.h) */
    char e[300];                /* message scratch for the vt_j* getters */
} vt_rd;

/* Sets rs->err to "PATH:LINE: message"; returns -1. */
int vt_rd_fail(vt_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Typed getters: 0, or -1 after vt_rd_fail("<f>: <what>"). */
int vt_rd_u64(vt_rd *r, const json_t *v, const char *f, uint64_t *out);
int vt_rd_i64(vt_rd *r, const json_t *v, const char *f, int64_t *out);
/* Optional u64 that may be null: absent or null -> *has = 0. */
int vt_rd_u64n(vt_rd *r, const json_t *v, const char *f, uint64_t *out, int *has);
int vt_rd_bool(vt_rd *r, const json_t *v, const char *f, int *out);
/* A string of at most max bytes, borrowed from v; NULL after vt_rd_fail. */
const char *vt_rd_str(vt_rd *r, const json_t *v, const char *f, size_t max);
/* A device id, VT_DEVICE_MIN..VT_DEVICE_MAX. */
int vt_rd_device_ok(vt_rd *r, int64_t x, const char *f);
int vt_rd_device(vt_rd *r, const json_t *v, const char *f, int32_t *out);
/* A kind name (vt_format.h) as its VT_KIND_* value. */
int vt_rd_kind(vt_rd *r, const json_t *v, const char *f, int32_t *out);
/* An array of flag names (VT_SITE_FLAGS) as their bits; an unknown name fails. */
int vt_rd_flags(vt_rd *r, const json_t *v, const char *f, int32_t *out);
/* "<array>[<i>].<key>" into buf; returns buf. */
const char *vt_rd_field(char *buf, size_t cap, const char *arr, size_t i, const char *key);
/* The canonical stack of stack id, or -1 after vt_rd_fail("<where>: stack N is not defined ..."). */
int vt_rd_stack_of(vt_rd *r, int64_t id, const char *where, vt_stack **out);

/* Version 4 (vt_decode_carry.c): the record's "devices" (arr, may be NULL) applied to
 * the carried devices (replacing them when !delta), then every carried device pushed
 * to r->rec.de. 0, or -1 after vt_rd_fail. */
int vt_rd_devices4(vt_rd *r, const json_t *arr, int delta);
/* Version 4: the record's decoded annotations (r->rec.an) merged into the carried
 * gauges (replacing them when !delta); r->rec.an then lists every carried gauge, its
 * keys owned by r (valid until the next record). */
void vt_rd_annotations4(vt_rd *r, int delta);
/* Version 4: the record's exports and imports (decoded into r->rec), or, for a list
 * a delta record left out (has_* 0), the carried ones; then carried for the next. */
void vt_rd_ipc4(vt_rd *r, int delta, int has_exports, int has_imports);
/* Frees the version 4 carried state. */
void vt_rd_carry_release(vt_rd *r);

/* A "snapshot" record (vt_decode_snapshot.c). */
int vt_rd_snapshot(vt_rd *r, json_t *o);

/* A "summary" record (vt_decode_summary.c): each bucket folded as one step at its
 * first step number (sites at their floor and peak), before the exact records. */
int vt_rd_summary(vt_rd *r, json_t *o);

/* One line, parsed here (the caller advanced r->line). 0 or -1. */
int vt_rd_line(vt_rd *r, const char *line, size_t len);
/* One line parsed by a vt_lineparse worker (vt_lp_fold_fn; ctx is the vt_rd):
 * advances r->line. 0 or -1. */
int vt_rd_parsed(void *ctx, const char *line, size_t len, json_t *root, const char *jerr);

/* Releases the decoder's scratch (not r->p). */
void vt_rd_release(vt_rd *r);

#endif /* VT_DECODE_H */
