/* vt_cap.h — the stream's size cap (VRAMTRACE_MAX_BYTES): a bounded history of every
 * step record written, the keep point (where the records a rebuilt file keeps exact
 * start, with the summary of those before it), and the rebuild of the file when its
 * stream reaches the cap (vt_cap_check; docs/snapshot-format.md "summary").
 *
 * What is kept: for every site and every device, per bucket of steps, the floor (the
 * smallest live bytes of the records in the bucket; a site absent from a record has 0)
 * and the peak (the largest of live and interval peak bytes); a site's cumulative
 * free count at the bucket's end. Buckets share one grid: at most VT_CAP_BUCKETS, each
 * covering `width` steps from its first step; when the grid is full, neighbouring
 * pairs are merged (floor = min, peak = max) and the width doubles, so the memory is
 * bounded by VT_CAP_BUCKETS per series whatever the run's length. Also kept: the
 * bytes of the first VT_CAP_OOM_FIRST and the last VT_CAP_OOM_LAST OOM records (each
 * with its live list), and each site's definition (to define it again in the new file).
 *
 * Ownership: a vt_cap owns all its memory (malloc); vt_cap_reset frees it.
 * Errors: a note that cannot get memory turns the cap's history off (vt_cap.failed):
 * the file is then no longer rewritten (it grows past the cap) rather than given a
 * summary with holes. Thread safety: none; the writer calls everything under its
 * output lock.
 */
#ifndef VT_CAP_H
#define VT_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "vt_buf.h"
#include "vt_core.h"
#include "vt_encode.h"
#include "vt_file.h"
#include "vt_sitediff.h"

#define VT_CAP_BUCKETS   256   /* buckets per series, at most (a power of 2)           */
#define VT_CAP_MIN_BUCKETS 16  /* the grid is coarsened down to this to fit the cap    */
#define VT_CAP_OOM_FIRST 2     /* OOM records kept from the start of the run           */
#define VT_CAP_OOM_LAST  2     /* ... and the latest ones                              */

typedef struct vt_cap_bucket {
    uint64_t floor, peak;      /* bytes                                                  */
    uint64_t frees;            /* sites: free_total at the bucket's last record          */
    uint32_t seen;             /* records of the bucket that listed the series           */
} vt_cap_bucket;

typedef struct vt_cap_series {
    vt_site_row   def;         /* sites: id, stack, kind, device, flags (counters unused) */
    int           device;      /* devices: the ordinal                                   */
    vt_cap_bucket b[VT_CAP_BUCKETS];
} vt_cap_series;

typedef struct vt_cap_oom {
    char  *p;                  /* the record's line without its closing "}\n" (malloc) */
    size_t n;
} vt_cap_oom;

typedef struct vt_cap {
    int       failed;          /* no more rewrites: out of memory once, or the stream
                                  no longer under its name (renamed or replaced)          */
    uint32_t  nb;              /* buckets in use (0 = no record yet)                     */
    uint64_t  width;           /* steps per bucket (1, 2, 4, ...)                        */
    uint64_t  first_step[VT_CAP_BUCKETS], first_ns[VT_CAP_BUCKETS];
    uint32_t  nrec[VT_CAP_BUCKETS];   /* records in each bucket                          */
    uint64_t  records;         /* records noted in all                                   */
    uint64_t  last_step;       /* step of the last record noted                          */
    vt_cap_series **site;      /* by site id (ids are dense: 1, 2, ...); NULL = none    */
    size_t    nsite;           /* capacity of site[]                                    */
    vt_cap_series *dev[VT_DEV_SLOTS];
    int       ndev;
    vt_cap_oom oom_first[VT_CAP_OOM_FIRST], oom_last[VT_CAP_OOM_LAST];
    uint64_t  ooms;            /* OOM records seen                                      */
    uint64_t  base;            /* file bytes right after the last rewrite (0: none yet) */
    /* the keep point: where the records the next rewrite keeps exact start */
    uint64_t  keep_off;        /* its file offset; 0 = none                              */
    uint64_t  keep_step;       /* the last step the summary of keep_head holds           */
    uint32_t  keep_nb;         /* and its buckets                                        */
    vt_buf    keep_head;       /* the summary and the kept OOM records as of it          */
    uint8_t  *keep_stacks, *keep_sites;   /* the definitions the file had there (by id;
                                             copies of vt_encode_defs' sets, malloc)     */
    size_t    nkeep_stacks, nkeep_sites;
    uint64_t  rewrites;        /* rewrites done                                          */
    /* the gap records written to the file so far, as one (records summed, the widest
     * steps and times, the latest fault): a rewrite's head carries it, so the records
     * lost before the kept ones are still said (docs/snapshot-format.md "gap") */
    int       has_gap;
    vt_encode_gap gap;         /* .error points to gap_error                            */
    char      gap_error[96];
} vt_cap;

/* Before each record of a stream capped at `max` bytes (VRAMTRACE_MAX_BYTES): sets
 * the keep point, or rewrites the file f (vt_file_replace) from `header` (hlen bytes,
 * the file's header line), the definitions d says it holds, the summary, the kept
 * OOM records and the records since the keep point (docs/snapshot-format.md
 * "summary"). Leaves d the same set, and sd reset when the next record must be
 * complete. Logs each rewrite (info) and each failed one (warn: the old file goes
 * on). Returns 1 when the next record must be complete (every block: the caller
 * forgets the rest of what the previous record said), else 0. Under the writer's
 * output lock. */
int vt_cap_check(vt_cap *k, vt_file *f, vt_encode_defs *d, vt_sitediff *sd, const char *header, size_t hlen,
                 uint64_t max);

/* Notes a gap record the file now holds (vt_cap.gap). */
void vt_cap_note_gap(vt_cap *k, const vt_encode_gap *g);

/* Forgets everything and frees the memory (a fork child; the writer's start). */
void vt_cap_reset(vt_cap *k);

/* Notes a record of the step series that was written (every trigger but exit):
 * c's step, sites (every site with live bytes > 0, plus the changed ones) and
 * devices, collected at time_ns (CLOCK_MONOTONIC). */
void vt_cap_note(vt_cap *k, const vt_collect *c, uint64_t time_ns);

/* Keeps a copy of an OOM record's line (p, n bytes, ending "}\n"), when it is among
 * the first VT_CAP_OOM_FIRST or, for now, the last VT_CAP_OOM_LAST. */
void vt_cap_keep_oom(vt_cap *k, const char *p, size_t n);

/* 1 when a file of `size` bytes must be rewritten under the cap `max` (0 = none):
 * it reached the cap, and either a keep point is set or it has grown by at least half
 * the cap since the last rewrite (a summary that alone nears the cap is not rewritten
 * over and over). */
int vt_cap_due(const vt_cap *k, uint64_t size, uint64_t max);

/* 1 when the keep point should be set at a file of `size` bytes: none is set, and
 * the file is half way from its size after the last rewrite to the cap `max`. The
 * records from there to the rewrite are kept exact by it, so after a rewrite the file
 * holds at least (max - base) / 2 bytes of exact records. */
int vt_cap_keep_due(const vt_cap *k, uint64_t size, uint64_t max);

/* Sets the keep point at file offset `off` (a record boundary; compressed: where a
 * new frame starts): the summary of every record noted so far and the kept OOM
 * records are encoded now into keep_head (vt_cap_encode_summary with `room`), and
 * copies of the definition sets are taken (stacks: ns bytes, sites: nsi bytes). 0, or
 * -1 when out of memory (no keep point). */
int vt_cap_freeze(vt_cap *k, uint64_t off, const uint8_t *stacks, size_t ns, const uint8_t *sites, size_t nsi,
                  uint64_t max_bytes, size_t room);

/* Forgets the keep point (after a rewrite, or when it failed). */
void vt_cap_thaw(vt_cap *k);

/* The site definitions the cap knows, one by one: i from 0 while it returns non-NULL
 * (an entry may be skipped: *i is advanced past it). */
const vt_site_row *vt_cap_site_next(const vt_cap *k, size_t *i);

/* {"t":"summary",...}\n of every record noted so far (docs/snapshot-format.md
 * "summary"); coarsens the grid (pairs merged) until the record's text is at most
 * `room` bytes or VT_CAP_MIN_BUCKETS remain. Nothing when no record was noted. */
void vt_cap_encode_summary(vt_cap *k, vt_buf *b, uint64_t max_bytes, size_t room);

/* The kept OOM records, oldest first, each marked "summarised":true (its step is
 * inside the summary; it is kept for its OOM and live list). */
void vt_cap_encode_ooms(const vt_cap *k, vt_buf *b);

#endif /* VT_CAP_H */
