/* vt_stkcache.c — per-thread cache of recent hook stacks (contract and the argument
 * for exactness in vt_stkcache.h).
 *
 * Layout: a thread's cache (vt_stkc, heap) holds VT_STKC_WAYS entries, replaced round
 * robin, each with one block: depth pcs, then (address, value) pairs to compare. A
 * lookup compares the key of each way, then every pair of the matching one with loads
 * and xors (no early exit: one test at the end). The pairs are learned in vt_stkc_fill
 * by a cursor walk, which costs about ten fast unwinds (unw_step interprets the DWARF
 * rules of every frame): a key fills only on its second miss (VT_STKC_SEEN: a stack
 * seen once is not paid for), and a thread whose captures keep missing fills only on
 * its first VT_STKC_MISS_RUN misses in a row, then on one in 64.
 */
#define _GNU_SOURCE
#include "vt_stkcache.h"
#include "vt_cancel.h"
#include "vt_config.h"
#include "vt_fd.h"
#include "vt_guard.h"
#include "vt_libunwind.h"
#include "vt_log.h"
#include "vt_mem.h"
#include "vt_python.h"
#include "vt_stack.h"

#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The lookup and the fill read words of other frames on purpose (return-address and
 * saved-register slots, which AddressSanitizer's stack redzones may border): not
 * instrumented. */
#define VT_STKC_FRAMES_READ __attribute__((no_sanitize_address))

#define VT_STKC_WAYS      8      /* entries per thread                                 */
#define VT_STKC_MISS_RUN  8      /* misses in a row that still fill; then 1 in 64      */
#define VT_STKC_SEARCH    16     /* frames of ours (walk, fill, hook) a fill walks past */

typedef struct vt_stkc_entry {
    uintptr_t  ra, cfa;         /* key (ra 0: empty)                                   */
    uint32_t   gen;             /* vt__stkc_gen when filled                             */
    int        depth;           /* pcs kept (== the depth in effect when filled)        */
    uint32_t   id;              /* native-only stack id; 0: intern again (Python)       */
    int        npairs;          /* (address, value) pairs after the pcs                 */
    int        cap;             /* words the block holds                                */
    uintptr_t *w;               /* pcs[depth], then pairs                               */
} vt_stkc_entry;

#define VT_STKC_SEEN      16     /* keys of recent misses: a key fills when seen twice */

typedef struct vt_stkc {
    uintptr_t     lo, hi;       /* this thread's stack: every pair address within       */
    unsigned      next;         /* way to replace next                                  */
    unsigned      miss_run;     /* misses since the last hit                            */
    uint64_t      seen[VT_STKC_SEEN]; /* mixed keys of recent misses (direct-mapped)    */
    vt_stkc_entry e[VT_STKC_WAYS];
} vt_stkc;

static uint32_t vt__stkc_gen;                 /* atomic: bumped by vt_stkc_invalidate  */
static uint64_t vt__stkc_hits, vt__stkc_fills, vt__stkc_checked, vt__stkc_mism; /* atomic */
static pthread_key_t vt__stkc_key;
static pthread_once_t vt__stkc_once = PTHREAD_ONCE_INIT;
static int vt__stkc_key_ok;

extern void *__libc_stack_end;                /* ld.so: the main thread's initial sp   */

void vt_stkc_invalidate(void)
{
    __atomic_fetch_add(&vt__stkc_gen, 1, __ATOMIC_ACQ_REL);
}

void vt_stkc_get_stats(vt_stkc_stats *out)
{
    out->hits = __atomic_load_n(&vt__stkc_hits, __ATOMIC_RELAXED);
    out->fills = __atomic_load_n(&vt__stkc_fills, __ATOMIC_RELAXED);
    out->checked = __atomic_load_n(&vt__stkc_checked, __ATOMIC_RELAXED);
    out->mismatches = __atomic_load_n(&vt__stkc_mism, __ATOMIC_RELAXED);
}

/* Thread exit: frees the cache; the thread caches nothing from then on. */
static void vt__stkc_free(void *p)
{
    vt_stkc *c = p;
    if (!c || c == VT_STKC_OFF)
        return;
    vt__tls.stkc = VT_STKC_OFF;
    for (int i = 0; i < VT_STKC_WAYS; i++)
        vt_mem_free(c->e[i].w);
    vt_mem_free(c);
}

static void vt__stkc_key_make(void)
{
    vt__stkc_key_ok = pthread_key_create(&vt__stkc_key, vt__stkc_free) == 0;
}

/* The calling thread's stack [lo, hi): a thread of the pthread library from its
 * attributes; the main thread from the C library's record of its initial stack
 * pointer and the stack size limit (its attributes would be read from /proc). 0 when
 * unknown. */
static int vt__stkc_bounds(uintptr_t *lo, uintptr_t *hi)
{
    if (vt_guard_tid() == (int)getpid()) {
        struct rlimit rl;
        uintptr_t top = (uintptr_t)__libc_stack_end;
        uintptr_t size = 1ul << 30;
        if (!top)
            return 0;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
            size = rl.rlim_cur;
        *hi = top;
        *lo = top - size;
        return 1;
    }
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return 0;
    int ok = pthread_attr_getstack(&a, &addr, &size) == 0;
    pthread_attr_destroy(&a);
    if (!ok)
        return 0;
    *lo = (uintptr_t)addr;
    *hi = (uintptr_t)addr + size;
    return 1;
}

static vt_stkc *vt__stkc_make(void)
{
    pthread_once(&vt__stkc_once, vt__stkc_key_make);
    vt_stkc *c = NULL;
    uintptr_t lo, hi;
    if (vt__stkc_key_ok && vt__stkc_bounds(&lo, &hi) && (c = vt_mem_calloc(sizeof *c))) {
        c->lo = lo;
        c->hi = hi;
        if (pthread_setspecific(vt__stkc_key, c) != 0) {
            vt_mem_free(c);
            c = NULL;
        }
    }
    vt__tls.stkc = c ? c : VT_STKC_OFF;
    return c;
}

/* Compares every pair of e with the memory now: 0 when all hold. */
static inline VT_STKC_FRAMES_READ uintptr_t vt__stkc_diff(const vt_stkc_entry *e)
{
    const uintptr_t *p = e->w + e->depth, *end = p + 2 * e->npairs;
    uintptr_t x = 0;
    for (; p < end; p += 2)
        x |= *(const volatile uintptr_t *)p[0] ^ p[1];
    return x;
}

/* VRAMTRACE_STACK_CHECK=1: the hit e against a full unwind from here (this function's
 * frame, vt_stkc_lookup's, the hook's, then the program's). 1 when they agree. */
static __attribute__((noinline)) int vt__stkc_check(const vt_stkc_entry *e)
{
    uintptr_t buf[VT_DEPTH_MAX + 3];
    int n = vt_stack_unwind_here(buf, e->depth + 3);
    __atomic_fetch_add(&vt__stkc_checked, 1, __ATOMIC_RELAXED);
    if (n == e->depth + 3 && !memcmp(buf + 3, e->w, (size_t)e->depth * sizeof *buf))
        return 1;
    if (__atomic_fetch_add(&vt__stkc_mism, 1, __ATOMIC_RELAXED) == 0)
        vt_log(VT_LOG_WARN, "stack check: a cached stack differs from a full unwind "
               "(depth %d, %d frames unwound)", e->depth, n - 3);
    return 0;
}

__attribute__((noinline)) VT_STKC_FRAMES_READ uint32_t vt_stkc_lookup(uintptr_t ra, uintptr_t cfa, int depth)
{
    vt_stkc *c = vt__tls.stkc;
    if (__builtin_expect(c == NULL || c == VT_STKC_OFF, 0))
        return 0;
    uint32_t gen = __atomic_load_n(&vt__stkc_gen, __ATOMIC_ACQUIRE);
    for (int i = 0; i < VT_STKC_WAYS; i++) {
        vt_stkc_entry *e = &c->e[i];
        if (e->ra != ra || e->cfa != cfa)
            continue;
        if (e->depth != depth || e->gen != gen || vt__stkc_diff(e))
            continue;   /* the same call site reached through other frames: next way */
        c->miss_run = 0;
        if (__builtin_expect(vt__config.stack_check, 0)) {
            __atomic_fetch_add(&vt__stkc_hits, 1, __ATOMIC_RELAXED);
            if (!vt__stkc_check(e))
                return 0;
        }
        if (__builtin_expect(e->id != 0, 1) && !vt_py_maybe())
            return e->id;
        return vt_stack_finish(e->w, depth, depth);
    }
    return 0;
}

/* Lowest address a pair may have: the hook's saved registers lie just below its CFA.
 * Everything from there up to the thread's stack top is mapped while a hook runs (the
 * fill's and the lookup's frames lie below it), so no word is read off the stack. */
#define VT_STKC_BELOW 256

/* Appends the pair (addr, val) to e's block unless it is the last one already there;
 * 0, or -1 when addr is outside [cfa - VT_STKC_BELOW, the thread's stack top) or does
 * not hold val now (the entry is not made). */
static VT_STKC_FRAMES_READ int vt__stkc_pair(const vt_stkc *c, vt_stkc_entry *e, uintptr_t cfa, uintptr_t addr,
                         uintptr_t val)
{
    if (addr < cfa - VT_STKC_BELOW || addr < c->lo || addr + sizeof(uintptr_t) > c->hi ||
        (addr & (sizeof(uintptr_t) - 1)) ||
        *(const uintptr_t *)addr != val)
        return -1;
    uintptr_t *p = e->w + e->depth + 2 * e->npairs;
    if (e->npairs && p[-2] == addr)
        return p[-1] == val ? 0 : -1;
    p[0] = addr;
    p[1] = val;
    e->npairs++;
    return 0;
}

/* The cursor walk of vt_stkc_fill (called from it, so the walk passes this frame,
 * the fill's and the hook's before it reaches the program's frame 1): e's pcs and
 * pairs. 0 when the walk can be replayed, -1 otherwise. Inside the unwind bracket of
 * vt_stkc_fill. */
static __attribute__((noinline)) VT_STKC_FRAMES_READ int
vt__stkc_walk(const vt_stkc *c, vt_stkc_entry *e, uintptr_t ra, uintptr_t cfa,
              const uintptr_t *buf, int depth)
{
    const vt_unw_cursor_api *u = &vt__unw_cursor;
    unw_context_t uc;
    unw_cursor_t cur;
    unw_word_t ip, sp, rbp;
    if (u->getcontext(&uc) != 0 || u->init_local(&cur, &uc) != 0)
        return -1;
    /* frames of ours first (this one, the fill, the hook): up to the program's frame 1 */
    int found = 0;
    for (int i = 0; i < VT_STKC_SEARCH; i++) {
        if (u->get_reg(&cur, UNW_REG_SP, &sp) != 0 || u->get_reg(&cur, UNW_REG_IP, &ip) != 0)
            return -1;
        if (sp == cfa) {
            found = ip == ra;
            break;
        }
        if (sp > cfa || u->step(&cur) <= 0)
            return -1;
    }
    if (!found)
        return -1;
    uintptr_t prev_rbp = 0;
    for (int k = 1; k <= depth; k++) {
        unw_save_loc_t loc;
        if (k > 1) {
            if (u->step(&cur) <= 0 || u->get_reg(&cur, UNW_REG_SP, &sp) != 0 ||
                u->get_reg(&cur, UNW_REG_IP, &ip) != 0)
                return -1;
            /* the pc libunwind's walk reads: the return address at the caller's sp - 8 */
            if (vt__stkc_pair(c, e, cfa, sp - 8, ip))
                return -1;
            /* GCC's realigned frame: its CFA is read back from rbp - 8 */
            if (prev_rbp >= cfa + 8 && prev_rbp <= c->hi && !(prev_rbp & 7) &&
                *(const uintptr_t *)(prev_rbp - 8) == sp && vt__stkc_pair(c, e, cfa, prev_rbp - 8, sp))
                return -1;
        }
        if (buf[k] != ip && buf[k] != ip - 1)
            return -1;   /* the two walks disagree: nothing to learn */
        e->w[k - 1] = buf[k];
        if (k == depth)
            break;    /* the last frame's own state is not read */
        if (u->is_signal_frame(&cur) > 0 ||
            u->get_reg(&cur, UNW_X86_64_RBP, &rbp) != 0 ||
            u->get_save_loc(&cur, UNW_X86_64_RBP, &loc) != 0 || loc.type != UNW_SLT_MEMORY ||
            vt__stkc_pair(c, e, cfa, loc.u.addr, rbp))
            return -1;
        prev_rbp = rbp;
    }
    return 0;
}

__attribute__((noinline)) VT_STKC_FRAMES_READ void vt_stkc_fill(uintptr_t ra, uintptr_t cfa,
                                            const uintptr_t *buf, int n, int depth, uint32_t id)
{
    const vt_unw_cursor_api *u = &vt__unw_cursor;
    vt_stkc *c = vt__tls.stkc;
    if (c == VT_STKC_OFF || n != depth + 1 || !vt__config.stack_cache || !u->step ||
        vt_guard_in_iterate())
        return;
    if (!c && !(c = vt__stkc_make()))
        return;
    if (cfa < c->lo || cfa >= c->hi || vt_stack_own_pc(ra))
        return;   /* not on the thread's own stack, or a hook called from our own code
                     (its id comes from the general path, not from buf) */
    /* a stack seen once may never come back: fill on its key's second miss */
    uint64_t h = ((uint64_t)ra ^ (uint64_t)cfa * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
    uint64_t *seen = &c->seen[h >> 60];
    if (*seen != h) {
        *seen = h;
        return;
    }
    unsigned run = c->miss_run++;
    if (run >= VT_STKC_MISS_RUN && (run & 63) != 0)
        return;

    vt_stkc_entry *e = &c->e[c->next];
    size_t need = (size_t)depth + 2 * 3 * (size_t)depth;   /* pcs; RA, rbp, realign */
    e->ra = 0;                                              /* empty until complete  */
    if ((size_t)e->cap < need) {
        vt_mem_free(e->w);
        e->cap = 0;
        if (!(e->w = vt_mem_alloc(need * sizeof(uintptr_t))))
            return;
        e->cap = (int)need;
    }
    e->depth = depth;
    e->npairs = 0;

    /* libunwind runs as in vt_stack_unwind_here: flagged for the pipe2 interposer and
     * counted for pthread_cancel and fork (vt_cancel.h), cancellation disabled when
     * the process has cancelled a thread */
    int rc;
    vt_fd_unwind_enter();
    if (__builtin_expect(vt_cancel_unguarded_begin(), 1)) {
        rc = vt__stkc_walk(c, e, ra, cfa, buf, depth);
        vt_cancel_unguarded_end();
    } else {
        int oldcs;
        vt_cancel_guarded_begin();
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
        rc = vt__stkc_walk(c, e, ra, cfa, buf, depth);
        pthread_setcancelstate(oldcs, NULL);
        vt_cancel_guarded_end();
    }
    vt_fd_unwind_leave();
    if (rc)
        return;
    e->id = (id == UINT32_MAX || vt_py_maybe()) ? 0 : id;
    e->gen = __atomic_load_n(&vt__stkc_gen, __ATOMIC_ACQUIRE);
    e->cfa = cfa;
    e->ra = ra;
    /* other entries with the same key stay: a function that allocates through one
     * helper from two call sites reaches the helper's call with the same key and
     * different outer frames; each way is checked on its own */
    c->next = (c->next + 1) % VT_STKC_WAYS;
    c->miss_run = 0;
    __atomic_fetch_add(&vt__stkc_fills, 1, __ATOMIC_RELAXED);
}

/* VRAMTRACE_STACK_CHECK=1: the counters, once, at exit (the tests read this line). */
__attribute__((destructor)) static void vt__stkc_report(void)
{
    if (!vt__config.stack_check)
        return;
    vt_stkc_stats s;
    vt_stkc_get_stats(&s);
    vt_log(VT_LOG_WARN, "stack check: %llu cache hits, %llu compared with a full unwind, "
           "%llu differed, %llu entries made", (unsigned long long)s.hits,
           (unsigned long long)s.checked, (unsigned long long)s.mismatches,
           (unsigned long long)s.fills);
}
