/* vt_stepq.c — the step queue (see vt_stepq.h).
 *
 * Design: a ring of VT_STEPQ_MAX pointers under one mutex; `reserved` counts slots
 * promised to threads that are collecting, so filled + reserved never exceeds the
 * ring. Pushes come in collection order (the writer's collection lock is held across
 * collect and push), so the ring's order is the order of collection. A thread waiting
 * for a slot sleeps on a condition variable signalled by each pop and broadcast when
 * the queue closes.
 */
#define _GNU_SOURCE
#include "vt_stepq.h"

#include <pthread.h>
#include <stdlib.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t  room;        /* a slot freed, or the queue closed                */
    vt_pending     *ring[VT_STEPQ_MAX];
    size_t          head, n;     /* under lock: oldest index, filled slots           */
    size_t          reserved;    /* under lock: slots promised to collecting threads */
    int             waiting;     /* under lock: threads waiting for a slot           */
    int             open;        /* under lock (read atomically): the writer thread runs */
    int             unwritten;   /* atomic: pushed and not yet written              */
} vt__q = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .room = PTHREAD_COND_INITIALIZER,
};

void vt_pending_free(vt_pending *p, int heap)
{
    if (!p)
        return;
    vt_collect_free(&p->c);
    vt_buf_free(&p->extra);
    free(p->annot);
    p->annot = NULL;
    p->nannot = 0;
    if (heap)
        free(p);
}

int vt_stepq_reserve(void)
{
    pthread_mutex_lock(&vt__q.lock);
    while (vt__q.open && vt__q.n + vt__q.reserved >= VT_STEPQ_MAX) {
        vt__q.waiting++;
        pthread_cond_wait(&vt__q.room, &vt__q.lock);
        vt__q.waiting--;
    }
    int ok = vt__q.open;
    if (ok)
        vt__q.reserved++;
    pthread_mutex_unlock(&vt__q.lock);
    return ok;
}

void vt_stepq_push(vt_pending *p)
{
    pthread_mutex_lock(&vt__q.lock);
    vt__q.reserved--;
    if (p) {
        vt__q.ring[(vt__q.head + vt__q.n++) % VT_STEPQ_MAX] = p;
        __atomic_add_fetch(&vt__q.unwritten, 1, __ATOMIC_RELEASE);
    } else
        pthread_cond_signal(&vt__q.room);   /* the slot given back */
    pthread_mutex_unlock(&vt__q.lock);
}

vt_pending *vt_stepq_pop(void)
{
    vt_pending *p = NULL;
    pthread_mutex_lock(&vt__q.lock);
    if (vt__q.n) {
        p = vt__q.ring[vt__q.head];
        vt__q.ring[vt__q.head] = NULL;
        vt__q.head = (vt__q.head + 1) % VT_STEPQ_MAX;
        vt__q.n--;
        pthread_cond_signal(&vt__q.room);
    }
    pthread_mutex_unlock(&vt__q.lock);
    return p;
}

void vt_stepq_written(void)
{
    __atomic_sub_fetch(&vt__q.unwritten, 1, __ATOMIC_RELEASE);
}

int vt_stepq_unwritten(void)
{
    return __atomic_load_n(&vt__q.unwritten, __ATOMIC_ACQUIRE);
}

int vt_stepq_is_open(void)
{
    return __atomic_load_n(&vt__q.open, __ATOMIC_ACQUIRE);
}

size_t vt_stepq_count(void)
{
    pthread_mutex_lock(&vt__q.lock);
    size_t n = vt__q.n;
    pthread_mutex_unlock(&vt__q.lock);
    return n;
}

void vt_stepq_set_open(int open)
{
    pthread_mutex_lock(&vt__q.lock);
    __atomic_store_n(&vt__q.open, open, __ATOMIC_RELEASE);
    if (!open)
        pthread_cond_broadcast(&vt__q.room);
    pthread_mutex_unlock(&vt__q.lock);
}

void vt_stepq_stats(size_t *queued, int *waiting)
{
    pthread_mutex_lock(&vt__q.lock);
    *queued = vt__q.n;
    *waiting = vt__q.waiting;
    pthread_mutex_unlock(&vt__q.lock);
}

void vt_stepq_fork_prepare(void)
{
    pthread_mutex_lock(&vt__q.lock);
}

void vt_stepq_fork_parent(void)
{
    pthread_mutex_unlock(&vt__q.lock);
}

void vt_stepq_fork_child(void)
{
    pthread_mutex_init(&vt__q.lock, NULL);
    pthread_cond_init(&vt__q.room, NULL);
    for (size_t i = 0; i < vt__q.n; i++)
        vt_pending_free(vt__q.ring[(vt__q.head + i) % VT_STEPQ_MAX], 1);
    for (size_t i = 0; i < VT_STEPQ_MAX; i++)
        vt__q.ring[i] = NULL;
    vt__q.head = vt__q.n = vt__q.reserved = 0;
    vt__q.waiting = 0;
    vt__q.open = 0;
    vt__q.unwritten = 0;
}
