/* vt_lock.h — the core's mutex: a futex lock (U. Drepper, "Futexes Are Tricky",
 * 2011, mutex #3). An uncontended hold costs one compare-and-swap and one exchange
 * (fewer instructions than glibc's pthread_mutex_trylock + unlock). Whoever applies
 * the hooks' event ring takes it (the writer thread, queries, snapshots), and a hook
 * takes it only when the ring is full or for a synchronous or VMM call.
 *
 * States: 0 unlocked, 1 locked, 2 locked and a thread may sleep on it. Waiting is
 * FUTEX_WAIT_PRIVATE through syscall(2), which is not a cancellation point (a thread
 * cancelled while waiting would otherwise unwind out of our bookkeeping). Not
 * recursive, no owner check, not robust (a holder never runs program code).
 * Fork: the child re-initialises it (vt_lock_init) — the parent held it across fork.
 * Under ThreadSanitizer the lock is a pthread mutex, so TSan sees the ordering.
 *
 * Thread safety: that is its purpose. Async-signal-safety: none (like a mutex).
 */
#ifndef VT_LOCK_H
#define VT_LOCK_H

#if defined(__SANITIZE_THREAD__)
#include <pthread.h>
typedef struct vt_lock { pthread_mutex_t m; } vt_lock_t;
#define VT_LOCK_INIT { PTHREAD_MUTEX_INITIALIZER }
static inline void vt_lock_init(vt_lock_t *l) { pthread_mutex_init(&l->m, 0); }
static inline int  vt_lock_try(vt_lock_t *l)  { return pthread_mutex_trylock(&l->m) == 0; }
static inline void vt_lock_slow(vt_lock_t *l) { pthread_mutex_lock(&l->m); }
static inline void vt_unlock(vt_lock_t *l)    { pthread_mutex_unlock(&l->m); }
#else
typedef struct vt_lock { int v; } vt_lock_t;
#define VT_LOCK_INIT { 0 }

/* Unlocked state (fork child, start). */
static inline void vt_lock_init(vt_lock_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELAXED); }

/* Takes the lock if it is free: 1 taken, 0 held by someone. */
static inline int vt_lock_try(vt_lock_t *l)
{
    int z = 0;
    return __atomic_compare_exchange_n(&l->v, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Takes the lock, sleeping until it is free (vt_lock.c). */
void vt_lock_slow(vt_lock_t *l);
/* Wakes one sleeper (vt_lock.c). */
void vt_lock_wake(vt_lock_t *l);

static inline void vt_unlock(vt_lock_t *l)
{
    if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
        vt_lock_wake(l);
}
#endif

#endif /* VT_LOCK_H */
