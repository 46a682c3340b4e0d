/* vt_sitediff.c — previous-snapshot site rows for delta records (see vt_sitediff.h).
 *
 * Design: both the previous rows and the current rows are sorted by key, so the
 * writer decides row by row with one merge walk; no hash table, no allocation
 * per record except the copy kept for the next one (grown, never shrunk).
 */
#include "vt_sitediff.h"

#include <stdlib.h>
#include <string.h>

static int vt__key_cmp(const vt_site_row *a, const vt_site_row *b)
{
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return 0;
}

static int vt__row_cmp(const void *a, const void *b)
{
    return vt__key_cmp(a, b);
}

void vt_sitediff_sort(vt_site_row *rows, size_t n)
{
    /* The core lists sites in the order they were created, which is usually the
     * order of their stack ids (a stack is interned at its first allocation): one
     * linear check finds them sorted, and qsort runs only when they are not
     * (docs/performance.md has the cost). */
    size_t i = 1;
    while (i < n && vt__key_cmp(&rows[i - 1], &rows[i]) <= 0)
        i++;
    if (i < n)
        qsort(rows, n, sizeof *rows, vt__row_cmp);
}

int vt_sitediff_can_delta(const vt_sitediff *d, const vt_site_row *rows, size_t n)
{
    if (!d->valid)
        return 0;
    size_t j = 0;
    for (size_t i = 0; i < d->n; i++) {
        const vt_site_row *p = &d->prev[i];
        if (p->live_bytes == 0)
            continue;   /* absent would mean "still 0": fine either way */
        while (j < n && vt__key_cmp(&rows[j], p) < 0)
            j++;
        if (j == n || vt__key_cmp(&rows[j], p) != 0)
            return 0;   /* would be read as unchanged (still live): write complete */
    }
    return 1;
}

static int vt__same_values(const vt_site_row *a, const vt_site_row *b)
{
    return a->live_bytes == b->live_bytes && a->live_count == b->live_count &&
           a->interval_peak_bytes == b->interval_peak_bytes && a->alloc_total == b->alloc_total &&
           a->alloc_bytes_total == b->alloc_bytes_total && a->free_total == b->free_total &&
           a->growth_steps == b->growth_steps && a->growth_bytes == b->growth_bytes;
}

int vt_sitediff_changed(const vt_sitediff *d, const vt_site_row *row, size_t *cursor,
                        const vt_site_row **prev)
{
    size_t j = *cursor;
    while (j < d->n && vt__key_cmp(&d->prev[j], row) < 0)
        j++;
    *cursor = j;
    *prev = (j < d->n && vt__key_cmp(&d->prev[j], row) == 0) ? &d->prev[j] : NULL;
    if (row->live_bytes == 0)
        return 1;   /* listed by the core because it changed; readers replay only live > 0 */
    if (!*prev)
        return 1;   /* new site */
    return !vt__same_values(*prev, row);
}

void vt_sitediff_commit(vt_sitediff *d, const vt_site_row *rows, size_t n)
{
    if (n > d->cap) {
        size_t cap = d->cap ? d->cap : 64;
        while (cap < n)
            cap *= 2;
        vt_site_row *p = realloc(d->prev, cap * sizeof *p);
        if (!p) {
            d->valid = 0;
            d->n = 0;
            return;
        }
        d->prev = p;
        d->cap = cap;
    }
    if (n)
        memcpy(d->prev, rows, n * sizeof *rows);
    d->n = n;
    d->valid = 1;
}

void vt_sitediff_reset(vt_sitediff *d)
{
    d->n = 0;
    d->valid = 0;
}
