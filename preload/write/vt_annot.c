/* vt_annot.c — named gauges attached to snapshots (see vt_annot.h).
 *
 * Design: a fixed array under one mutex; set replaces the value of an existing key
 * or takes the next free slot. A snapshot copies the table when it is collected
 * (vt_annot_copy) and formats the copy when it is written, against what the file's
 * previous record said. Values are formatted with %.17g on the writer side (not on
 * the hook path), so they round-trip exactly.
 */
#define _GNU_SOURCE
#include "vt_annot.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    pthread_mutex_t lock;
    int    n;                                      /* under lock */
    char   key[VT_ANNOT_MAX][VT_ANNOT_KEY_MAX + 1]; /* under lock */
    double val[VT_ANNOT_MAX];                      /* under lock */
} vt__an = { PTHREAD_MUTEX_INITIALIZER, 0, {{0}}, {0} };

static int vt__key_ok(const char *k)
{
    size_t n = 0;
    for (; k[n]; n++) {
        char c = k[n];
        if (n >= VT_ANNOT_KEY_MAX)
            return 0;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '-'))
            return 0;
    }
    return n > 0;
}

int vt_annot_set(const char *key, double value)
{
    if (!key || !vt__key_ok(key) || !isfinite(value))
        return -EINVAL;
    int rc = -ENOSPC;
    pthread_mutex_lock(&vt__an.lock);
    for (int i = 0; i < vt__an.n; i++) {
        if (!strcmp(vt__an.key[i], key)) {
            vt__an.val[i] = value;
            rc = 0;
            goto out;
        }
    }
    if (vt__an.n < VT_ANNOT_MAX) {
        strcpy(vt__an.key[vt__an.n], key);
        vt__an.val[vt__an.n++] = value;
        rc = 0;
    }
out:
    pthread_mutex_unlock(&vt__an.lock);
    return rc;
}

vt_annot_entry *vt_annot_copy(int *n)
{
    vt_annot_entry *out = NULL;
    *n = 0;
    pthread_mutex_lock(&vt__an.lock);
    if (vt__an.n && (out = malloc((size_t)vt__an.n * sizeof *out))) {
        for (int i = 0; i < vt__an.n; i++) {
            memcpy(out[i].key, vt__an.key[i], sizeof out[i].key);
            out[i].val = vt__an.val[i];
        }
        *n = vt__an.n;
    }
    pthread_mutex_unlock(&vt__an.lock);
    return out;
}

void vt_annot_format(vt_buf *b, const vt_annot_entry *cur, int n, vt_annot_vals *last, int complete)
{
    int written = 0;
    for (int i = 0; i < n; i++) {
        /* keys are only ever added, at the end: key i of last is key i of cur */
        if (!complete && i < last->n && !strcmp(last->e[i].key, cur[i].key) &&
            !memcmp(&last->e[i].val, &cur[i].val, sizeof cur[i].val))
            continue;
        char num[40];
        snprintf(num, sizeof num, "%.17g", cur[i].val);
        vt_buf_cstr(b, written++ ? "," : ",\"annotations\":{");
        vt_buf_jstr(b, cur[i].key, 0);   /* keys are [A-Za-z0-9_.:-] */
        vt_buf_put(b, ":", 1);
        vt_buf_cstr(b, num);
    }
    if (written)
        vt_buf_put(b, "}", 1);
    if (n || complete) {   /* no copy (none set, or no memory for it): last stands */
        last->n = n;
        if (n)   /* cur is NULL when none is set */
            memcpy(last->e, cur, (size_t)n * sizeof *cur);
    }
}

void vt_annot_reset(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    vt__an.lock = fresh;
    vt__an.n = 0;
}
