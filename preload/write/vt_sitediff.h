/* vt_sitediff.h — the previous snapshot's site rows, kept by the writer so that
 * periodic and step snapshots list only the sites that changed (format version 2)
 * and write each listed row as its differences from the previous one (version 3).
 *
 * Contract (docs/snapshot-format.md "sites", version 2): a delta record lists a
 * row for every site whose row differs from its row in the previous snapshot of
 * the stream, every site new since then, and every site whose live bytes are 0
 * (those are only ever listed by the core when they changed); a site absent from
 * a delta record is unchanged. A record can only be a delta when the previous
 * record's rows are known (d->valid) and every previous row with live bytes > 0 is
 * still among the current rows (the core lists every site with live bytes > 0, so
 * this always holds; if it did not, the record is written complete instead, where
 * absent means 0).
 *
 * Shapes: rows are vt_site_row (vt_core.h), keyed by (stack, kind, device), one row
 * per key (the core's site table is keyed so). Ownership: d owns a copy of the
 * previous rows (malloc); nothing is borrowed after a call returns. Memory failure
 * is never an error to the caller: d becomes invalid and the next record is
 * complete. Thread safety: none; the writer calls these under its out_lock.
 */
#ifndef VT_SITEDIFF_H
#define VT_SITEDIFF_H

#include <stddef.h>

#include "vt_core.h"

typedef struct vt_sitediff {
    vt_site_row *prev;    /* previous record's rows, sorted by key (owned) */
    size_t       n, cap;
    int          valid;   /* prev describes the previous record of this stream */
} vt_sitediff;

/* Sorts n rows in place by (stack, kind, device). */
void vt_sitediff_sort(vt_site_row *rows, size_t n);

/* 1 when the record holding rows (sorted, n) may be written as a delta against
 * d, else 0 (d invalid, or a previous row with live bytes > 0 is missing). */
int vt_sitediff_can_delta(const vt_sitediff *d, const vt_site_row *rows, size_t n);

/* Whether row (the next of the sorted rows, in order) must be listed in a delta
 * record: 1 when it is new, has 0 live bytes, or differs from its previous row
 * in any of the 11 written columns; else 0. *prev is set to the site's row in
 * the previous record (borrowed from d, valid until the next commit/reset/free)
 * or NULL when that record had none: a version 3 delta row is written as the
 * differences from it (from 0 when NULL). *cursor starts at 0 for each record
 * and is advanced through d's rows (a merge walk: O(n + previous n) per record). */
int vt_sitediff_changed(const vt_sitediff *d, const vt_site_row *row, size_t *cursor,
                        const vt_site_row **prev);

/* Makes rows (sorted, n) the previous record's rows after a record was written.
 * On allocation failure d becomes invalid. */
void vt_sitediff_commit(vt_sitediff *d, const vt_site_row *rows, size_t n);

/* Forgets the previous rows (new file, fork child, failed write): the next record
 * is complete. Keeps the memory. */
void vt_sitediff_reset(vt_sitediff *d);

#endif /* VT_SITEDIFF_H */
