/* vt_lineparse.c — parallel JSON parsing of snapshot lines (see vt_lineparse.h).
 *
 * Design: a ring of max(4, 2 x threads) batches. The caller fills the batch at `tail`
 * (line bytes copied back to back, with their offsets); a full batch is marked
 * QUEUED and a worker is woken. Each worker takes the oldest QUEUED batch, parses
 * its lines into the batch's own arena (vt_jarena_begin .. vt_jarena_suspend, so
 * the trees outlive the worker's turn), stops at the first line that fails to
 * parse (later lines are never folded), and marks it DONE. The caller folds the
 * batch at `head` once it is DONE, then resets its arena and reuses the slot.
 * One mutex and two condition variables; the parse itself runs unlocked.
 */
#define _GNU_SOURCE
#include "vt_lineparse.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_jarena.h"
#include "vt_jline.h"
#include "vt_util.h"

enum { SLOT_FILLING = 0, SLOT_QUEUED, SLOT_PARSING, SLOT_DONE };

typedef struct lp_batch {
    int state;
    char *bytes; size_t len, cap;        /* lines back to back, no '\n' */
    size_t *off; size_t n, capn;         /* line i: bytes[off[i] .. off[i+1]) (off[n] = len) */
    json_t **roots; size_t caproots;     /* parsed trees, in arena */
    size_t nparsed;                      /* roots[0..nparsed) valid; line nparsed failed if < n */
    char err[300];                       /* the failing line's message */
    vt_jarena arena;
} lp_batch;

struct vt_lp {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t th[VT_LP_MAX_THREADS];
    int nth;
    size_t nslots;                       /* ring size: max(4, 2 x nth), <= VT_LP_MAX_SLOTS */
    int stop;
    int rc;                              /* sticky fold result */
    lp_batch slot[VT_LP_MAX_SLOTS];
    size_t head, tail;                   /* oldest not folded; being filled (ring indices, counters) */
};

static void parse_batch(lp_batch *b)
{
    vt_jarena_begin(&b->arena);
    size_t i;
    for (i = 0; i < b->n; i++) {
        json_t *root = vt_jline_load(b->bytes + b->off[i], b->off[i + 1] - b->off[i], b->err, sizeof b->err);
        if (!root) break;
        b->roots[i] = root;
    }
    vt_jarena_suspend();
    b->nparsed = i;
}

static void *worker(void *arg)
{
    vt_lp *lp = arg;
    pthread_mutex_lock(&lp->mu);
    for (;;) {
        lp_batch *b = NULL;
        for (size_t k = lp->head; k < lp->tail; k++) {   /* the oldest queued first */
            if (lp->slot[k % lp->nslots].state == SLOT_QUEUED) {
                b = &lp->slot[k % lp->nslots];
                break;
            }
        }
        if (!b) {
            if (lp->stop) break;
            pthread_cond_wait(&lp->work, &lp->mu);
            continue;
        }
        b->state = SLOT_PARSING;
        pthread_mutex_unlock(&lp->mu);
        parse_batch(b);
        pthread_mutex_lock(&lp->mu);
        b->state = SLOT_DONE;
        pthread_cond_broadcast(&lp->done);
    }
    pthread_mutex_unlock(&lp->mu);
    return NULL;
}

vt_lp *vt_lp_new(int nthreads)
{
    if (nthreads < 1) return NULL;
    if (nthreads > VT_LP_MAX_THREADS) nthreads = VT_LP_MAX_THREADS;
    vt_lp *lp = vt_xcalloc(1, sizeof *lp);
    pthread_mutex_init(&lp->mu, NULL);
    pthread_cond_init(&lp->work, NULL);
    pthread_cond_init(&lp->done, NULL);
    for (int i = 0; i < nthreads; i++) {
        if (pthread_create(&lp->th[lp->nth], NULL, worker, lp) != 0) break;
        lp->nth++;
    }
    if (!lp->nth) {
        vt_lp_free(lp);
        return NULL;
    }
    lp->nslots = 2 * (size_t)lp->nth < 4 ? 4 : 2 * (size_t)lp->nth;
    return lp;
}

/* Waits for the oldest batch and folds it (caller holds no lock). */
static int fold_oldest(vt_lp *lp, vt_lp_fold_fn fold, void *ctx)
{
    lp_batch *b = &lp->slot[lp->head % lp->nslots];
    pthread_mutex_lock(&lp->mu);
    while (b->state != SLOT_DONE) pthread_cond_wait(&lp->done, &lp->mu);
    pthread_mutex_unlock(&lp->mu);
    for (size_t i = 0; lp->rc == 0 && i < b->n; i++) {
        const char *text = b->bytes + b->off[i];
        size_t len = b->off[i + 1] - b->off[i];
        lp->rc = fold(ctx, text, len, i < b->nparsed ? b->roots[i] : NULL, b->err);
        if (i >= b->nparsed && lp->rc == 0) lp->rc = -1;   /* fold must fail a NULL root */
    }
    vt_jarena_reset(&b->arena);
    b->n = b->len = b->nparsed = 0;
    pthread_mutex_lock(&lp->mu);   /* workers read head and the states under mu */
    b->state = SLOT_FILLING;
    lp->head++;
    pthread_mutex_unlock(&lp->mu);
    return lp->rc;
}

/* Queues the batch being filled (there is one: tail - head < nslots). */
static void submit(vt_lp *lp)
{
    lp_batch *b = &lp->slot[lp->tail % lp->nslots];
    if (!b->n) return;
    pthread_mutex_lock(&lp->mu);
    b->state = SLOT_QUEUED;
    lp->tail++;
    pthread_cond_signal(&lp->work);
    pthread_mutex_unlock(&lp->mu);
}

int vt_lp_push(vt_lp *lp, const char *line, size_t len, vt_lp_fold_fn fold, void *ctx)
{
    if (lp->rc) return lp->rc;
    while (lp->tail - lp->head >= lp->nslots)    /* ring full: make room */
        if (fold_oldest(lp, fold, ctx)) return lp->rc;
    lp_batch *b = &lp->slot[lp->tail % lp->nslots];
    vt_grow((void **)&b->bytes, &b->cap, b->len + len + 1, 1);
    memcpy(b->bytes + b->len, line, len);
    vt_grow((void **)&b->off, &b->capn, b->n + 2, sizeof *b->off);
    vt_grow((void **)&b->roots, &b->caproots, b->n + 1, sizeof *b->roots);
    b->off[b->n] = b->len;
    b->len += len;
    b->n++;
    b->off[b->n] = b->len;
    if (b->len >= VT_LP_BATCH) submit(lp);
    return 0;
}

int vt_lp_finish(vt_lp *lp, vt_lp_fold_fn fold, void *ctx)
{
    if (lp->rc) return lp->rc;
    /* a full ring has no batch being filled: the pushed lines are all queued */
    if (lp->tail - lp->head < lp->nslots) submit(lp);
    while (lp->head < lp->tail)
        if (fold_oldest(lp, fold, ctx)) return lp->rc;
    return 0;
}

void vt_lp_free(vt_lp *lp)
{
    if (!lp) return;
    pthread_mutex_lock(&lp->mu);
    /* batches queued but not started are dropped; running ones finish */
    for (size_t k = lp->head; k < lp->tail; k++)
        if (lp->slot[k % lp->nslots].state == SLOT_QUEUED) lp->slot[k % lp->nslots].state = SLOT_DONE;
    lp->stop = 1;
    pthread_cond_broadcast(&lp->work);
    pthread_mutex_unlock(&lp->mu);
    for (int i = 0; i < lp->nth; i++) pthread_join(lp->th[i], NULL);
    for (int i = 0; i < VT_LP_MAX_SLOTS; i++) {
        lp_batch *b = &lp->slot[i];
        free(b->bytes);
        free(b->off);
        free(b->roots);
        vt_jarena_release(&b->arena);
    }
    pthread_cond_destroy(&lp->work);
    pthread_cond_destroy(&lp->done);
    pthread_mutex_destroy(&lp->mu);
    free(lp);
}

int vt_lp_default_threads(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) return 0;
    return n > VT_LP_MAX_THREADS ? VT_LP_MAX_THREADS : (int)n;
}
