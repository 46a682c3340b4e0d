/* vt_stack.c — libunwind capture + deduplicating stack store (see vt_stack.h).
 *
 * Design: capture with unw_backtrace (libunwind's fast frame-cache path) BEFORE any
 * tracker lock, then intern. The hooks call unw_backtrace from their own frame
 * (vt_hooks.h VT_HOOK_CAPTURE, vt_stack_unwind_here), so libunwind walks exactly one
 * frame of ours, and vt_stack_capture_hook drops it after checking that the hook's
 * return address is outside libvramtrace; vt_stack_capture is the general path (any
 * caller, own frames found by address, count learned). Cancellation around
 * unw_backtrace: vt_stack_unwind_here and vt_cancel.h.
 *
 * The hook's hit path (a known native stack of >= 8 frames) is a leaf function:
 * hash in blocks of 8 pcs (no remainder loop), a probe that compares 64-bit hashes
 * only, then one whole-key compare of the candidate written with SSE2 for up to 16
 * pcs (memcmp, in a tail-called helper, beyond). Everything else (short stacks,
 * Python frames, a hash collision, a miss) tail-calls out of line.
 *
 * The store is an open-addressing index of entry pointers (linear probing,
 * power-of-two capacity, load <= 1/2, home slot = the top bits of the hash) over
 * immutable entries that are also kept in an id-indexed two-level directory (for
 * vt_stack_get). Lookups of known stacks are lock-free: they probe the published
 * index with acquire loads and compare the entry's 64-bit hash, shape and key.
 * Inserts take vt__stk.lock, re-probe, append the entry, publish it in the directory
 * and then in the index with release stores; growing builds a new index and
 * publishes it (old indexes are retired, never freed, so a concurrent reader never
 * touches freed memory; their total is below the live index's size).
 *
 * Python: when VRAMTRACE_PYTHON is not off and vt_python found a CPython,
 * the capture also copies the calling thread's Python frames (vt_py_capture:
 * loads only, no GIL, no lock), still before any lock. They are part of the key:
 * an entry holds n native pcs followed by npy vt_py_frame records, so two Python
 * call sites through the same native frames are two stacks. Without an interpreter
 * the capture path reads one global flag (vt_py_maybe) and nothing else of Python.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "vt_stack.h"
#include "vt_config.h"
#include "vt_fd.h"
#include "vt_guard.h"
#include "vt_libunwind.h"
#include "vt_log.h"
#include "vt_mem.h"
#include "vt_modules.h"
#include "vt_python.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#define VT_STK_SLACK   8          /* extra frames captured to cover our own        */
#define VT_STK_PY_MAX  128        /* most Python frames kept (and <= depth)         */
#define VT_DIR_BITS    12
#define VT_DIR_CHUNK   (1u << VT_DIR_BITS)
#define VT_DIR_TOP     4096u      /* up to 16M distinct stacks                      */
#define VT_PY_WORDS    (sizeof(vt_py_frame) / sizeof(uintptr_t))

typedef struct vt_stk_entry {
    uint64_t  hash;
    uint32_t  id;
    uint32_t  shape;              /* n | npy << 16 (both <= VT_DEPTH_MAX)           */
    uintptr_t pcs[];              /* n pcs, then npy * VT_PY_WORDS words            */
} vt_stk_entry;

#define VT_SHAPE(n, npy) ((uint32_t)(n) | (uint32_t)(npy) << 16)
#define VT_SHAPE_N(s)    ((int)((s) & 0xffffu))
#define VT_SHAPE_NPY(s)  ((int)((s) >> 16))

typedef struct vt_stk_index {
    uint32_t      mask;           /* capacity - 1                                   */
    uint32_t      shift;          /* 64 - log2(capacity): home slot = hash >> shift */
    vt_stk_entry *slots[];        /* NULL = empty; atomic loads/stores              */
} vt_stk_index;

static struct {
    pthread_mutex_t  lock;        /* serialises inserts and growth                  */
    vt_stk_index    *index;       /* published with release, read with acquire      */
    vt_stk_entry   **dir[VT_DIR_TOP]; /* id -> entry; chunks allocated under lock   */
    uint32_t         count;       /* ids handed out (atomic read)                   */
    size_t           bytes;       /* memory used (under lock)                       */
    char            *arena;       /* current arena chunk (under lock)               */
    size_t           arena_left;
    uintptr_t        own_lo, own_hi;  /* our object's address range (0,0 = no trim) */
    uintptr_t        own_span;    /* own_hi - own_lo                                */
    int              inited;
} vt__stk = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t vt__mix(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

#define VT_HASH_K 0x9e3779b97f4a7c15ULL

/* One Horner step per pc over p[0..8). */
static inline __attribute__((always_inline)) uint64_t vt__hash8(uint64_t h, const uintptr_t *p)
{
    h = (h + p[0]) * VT_HASH_K;
    h = (h + p[1]) * VT_HASH_K;
    h = (h + p[2]) * VT_HASH_K;
    h = (h + p[3]) * VT_HASH_K;
    h = (h + p[4]) * VT_HASH_K;
    h = (h + p[5]) * VT_HASH_K;
    h = (h + p[6]) * VT_HASH_K;
    h = (h + p[7]) * VT_HASH_K;
    return h;
}

/* Hash of the native pcs: Horner's rule h = (h + pc) * K, an add and a multiply per
 * pc (a per-pc mix would cost a large part of unwinding the frame), in blocks of 8
 * for n >= 8:
 * 0, 8, 16, ... and, when n is not a multiple of 8, a last block that ENDS at n
 * (overlapping the one before: its first pcs are hashed twice, which still makes the
 * hash a function of the key, and leaves no remainder loop). No final mix: the home
 * slot is the TOP bits of h (multiplicative "Fibonacci" hashing; K is 2^64 / golden
 * ratio), and the last multiply carries every bit of the sum into them. Odd K: each
 * step is a bijection of h. Entries are compared whole, so the hash only sets probe
 * lengths. n >= 0. */
static inline __attribute__((always_inline)) uint64_t vt__hash_pcs(const uintptr_t *pcs, int n)
{
    uint64_t h = (uint64_t)n;
    if (__builtin_expect(n >= 8, 1)) {
        h = vt__hash8(h, pcs);
        if (n > 8) {
            size_t i = 8, end = (size_t)n & ~(size_t)7;
            for (; i < end; i += 8)
                h = vt__hash8(h, pcs + i);
            if (n & 7)    /* the last 8, overlapping the block before */
                h = vt__hash8(h, pcs + n - 8);
        }
        return h;
    }
    for (int i = 0; i < n; i++)
        h = (h + pcs[i]) * VT_HASH_K;
    return h;
}

/* Hash of a whole key from its parts: the native pcs' hash, the Python frames' hash
 * (vt_py_hash: one multiply-add per frame, from the outermost; a thread's Python
 * capture cache keeps it for an unchanged outer chain) and their count, mixed once. */
static inline uint64_t vt__hash_key(const uintptr_t *pcs, int n, uint64_t hpy, int npy)
{
    uint64_t h = vt__hash_pcs(pcs, n);
    if (npy == 0)
        return h;
    return vt__mix(h ^ hpy ^ ((uint64_t)npy << 32));
}

/* Hash of a whole key: the native pcs, then the Python frames. */
static uint64_t vt__hash(const uintptr_t *pcs, int n, const vt_py_frame *py, int npy)
{
    return vt__hash_key(pcs, n, npy ? vt_py_hash(py, npy) : 0, npy);
}

static vt_stk_entry *vt__entry(uint32_t id)
{
    vt_stk_entry **chunk = __atomic_load_n(&vt__stk.dir[id >> VT_DIR_BITS], __ATOMIC_ACQUIRE);
    if (!chunk)
        return NULL;
    return __atomic_load_n(&chunk[id & (VT_DIR_CHUNK - 1)], __ATOMIC_ACQUIRE);
}

/* Probes idx for the stack. Returns its entry or NULL; *slot (when not NULL) gets the
 * empty slot that ended the probe. The index holds entry pointers, so a hit costs one
 * slot load, one header compare and the compare of the key. */
static inline vt_stk_entry *vt__find(vt_stk_index *idx, uint64_t h, const uintptr_t *pcs, int n,
                                     const vt_py_frame *py, int npy, uint32_t *slot)
{
    uint32_t shape = VT_SHAPE(n, npy);
    uint32_t i = (uint32_t)(h >> idx->shift);
    for (;;) {
        vt_stk_entry *e = __atomic_load_n(&idx->slots[i], __ATOMIC_ACQUIRE);
        if (!e) {
            if (slot)
                *slot = i;
            return NULL;
        }
        if (e->hash == h && e->shape == shape &&
            (n == 0 || !memcmp(e->pcs, pcs, (size_t)n * sizeof *pcs)) &&
            (npy == 0 || !memcmp(e->pcs + n, py, (size_t)npy * sizeof *py)))
            return e;
        i = (i + 1) & idx->mask;
    }
}

static void *vt__arena_alloc(size_t size)  /* under lock */
{
    size = (size + 15) & ~(size_t)15;
    if (size > vt__stk.arena_left) {
        size_t chunk = size > 65536 ? size : 65536;
        char *a = vt_mem_alloc(chunk);
        if (!a)
            return NULL;
        vt__stk.arena = a;
        vt__stk.arena_left = chunk;
        vt__stk.bytes += chunk;
    }
    void *p = vt__stk.arena;
    vt__stk.arena += size;
    vt__stk.arena_left -= size;
    return p;
}

static int vt__grow(void)  /* under lock */
{
    vt_stk_index *old = vt__stk.index;
    uint32_t cap = old ? (old->mask + 1) * 2 : 1024;
    size_t sz = sizeof(vt_stk_index) + (size_t)cap * sizeof(vt_stk_entry *);
    vt_stk_index *idx = vt_mem_calloc(sz);
    if (!idx)
        return -1;
    idx->mask = cap - 1;
    idx->shift = 64 - (uint32_t)__builtin_ctz(cap);
    vt__stk.bytes += sz;
    for (uint32_t id = 1; id <= vt__stk.count; id++) {
        vt_stk_entry *e = vt__entry(id);
        uint32_t i = (uint32_t)(e->hash >> idx->shift);
        while (idx->slots[i])
            i = (i + 1) & idx->mask;
        idx->slots[i] = e;
    }
    __atomic_store_n(&vt__stk.index, idx, __ATOMIC_RELEASE);
    return 0;  /* old index retired (never freed: lock-free readers may hold it) */
}

/* Inserts (under the lock, re-probing first: another thread may have inserted it).
 * Returns the id, or UINT32_MAX when out of memory. */
static __attribute__((noinline)) uint32_t vt__insert(uint64_t h, const uintptr_t *pcs, int n,
                                                     const vt_py_frame *py, int npy)
{
    uint32_t id = UINT32_MAX;
    vt_stk_index *idx;
    pthread_mutex_lock(&vt__stk.lock);
    if (!vt__stk.index || (vt__stk.count + 1) * 2 > vt__stk.index->mask + 1)
        if (vt__grow() < 0)
            goto out;
    uint32_t slot;
    idx = vt__stk.index;
    vt_stk_entry *found = vt__find(idx, h, pcs, n, py, npy, &slot);
    if (found) {
        id = found->id;
        goto out;
    }
    uint32_t nid = vt__stk.count + 1;
    if ((nid >> VT_DIR_BITS) >= VT_DIR_TOP)
        goto out;
    vt_stk_entry **chunk = vt__stk.dir[nid >> VT_DIR_BITS];
    if (!chunk) {
        chunk = vt_mem_calloc(VT_DIR_CHUNK * sizeof *chunk);
        if (!chunk)
            goto out;
        vt__stk.bytes += VT_DIR_CHUNK * sizeof *chunk;
        __atomic_store_n(&vt__stk.dir[nid >> VT_DIR_BITS], chunk, __ATOMIC_RELEASE);
    }
    vt_stk_entry *e = vt__arena_alloc(sizeof *e + (size_t)n * sizeof *pcs +
                                      (size_t)npy * sizeof *py);
    if (!e)
        goto out;
    e->hash = h;
    e->id = nid;
    e->shape = VT_SHAPE(n, npy);
    if (n)          /* pcs may be NULL for an empty stack */
        memcpy(e->pcs, pcs, (size_t)n * sizeof *pcs);
    if (npy)
        memcpy(e->pcs + n, py, (size_t)npy * sizeof *py);
    __atomic_store_n(&chunk[nid & (VT_DIR_CHUNK - 1)], e, __ATOMIC_RELEASE);
    __atomic_store_n(&vt__stk.count, nid, __ATOMIC_RELEASE);
    __atomic_store_n(&idx->slots[slot], e, __ATOMIC_RELEASE);
    id = nid;
out:
    pthread_mutex_unlock(&vt__stk.lock);
    return id;
}

/* 0 when the n pcs at e (an entry's) equal those at p; 1 <= n <= 16. Written out
 * rather than memcmp: no call, so the capture's fast path stays a leaf function (no
 * callee-saved registers to push and pop): SSE2 xor/or over the first 8 pcs and the
 * last 8 (overlapping), one test at the end. Longer keys: vt__intern_native_long. */
typedef uint64_t vt_v2u __attribute__((vector_size(16), aligned(8), may_alias));
static inline __attribute__((always_inline)) vt_v2u vt__diff8(const uintptr_t *e, const uintptr_t *p)
{
    const vt_v2u *a = (const vt_v2u *)e, *b = (const vt_v2u *)p;
    return (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]);
}

static inline __attribute__((always_inline)) uint64_t vt__diff_pcs(const uintptr_t *e,
                                                                   const uintptr_t *p, int n)
{
    if (__builtin_expect(n >= 8, 1)) {
        vt_v2u d = vt__diff8(e, p);
        if (n > 8)
            d |= vt__diff8(e + n - 8, p + n - 8);   /* overlaps the first block */
        return d[0] | d[1];
    }
    uintptr_t x = 0;
    for (int i = 0; i < n; i++)
        x |= e[i] ^ p[i];
    return x;
}

/* The general probe for native-only pcs[0..n): what vt__intern_native does when its
 * first candidate was not the stack (a 64-bit hash collision, or no index yet).
 * Out of line, and hashing again, so the fast path keeps few registers live. */
static __attribute__((noinline)) uint32_t vt__intern_native_slow(const uintptr_t *pcs, int n)
{
    uint64_t h = vt__hash_pcs(pcs, n);
    vt_stk_index *idx = __atomic_load_n(&vt__stk.index, __ATOMIC_ACQUIRE);
    if (idx) {
        vt_stk_entry *e = vt__find(idx, h, pcs, n, NULL, 0, NULL);
        if (e)
            return e->id;
    }
    return vt__insert(h, pcs, n, NULL, 0);
}

/* vt__intern_native's end for n > 16: e is the first entry with the key's hash and
 * shape; compares the key whole with memcmp (glibc's AVX2 version does 32 bytes per
 * step, more than the SSE2 loop would). A tail call from the fast path, so that it
 * stays a leaf. */
static __attribute__((noinline)) uint32_t vt__intern_native_long(const vt_stk_entry *e,
                                                                 const uintptr_t *pcs, int n)
{
    if (__builtin_expect(!memcmp(e->pcs, pcs, (size_t)n * sizeof *pcs), 1))
        return e->id;
    return vt__intern_native_slow(pcs, n);
}

/* Interns native-only pcs[0..n) (1 <= n <= VT_DEPTH_MAX): the capture paths' common
 * case, written out: hash, probe for the first entry with the same 64-bit hash,
 * compare it whole (vt__diff_pcs, no call, up to 16 pcs). A hit is a leaf; a probe
 * that ends at an empty slot tail-calls vt__insert (which probes again under the
 * lock); a candidate that is not the stack (another stack with the same hash) tail-
 * calls the general probe. */
static inline __attribute__((always_inline)) uint32_t vt__intern_native(const uintptr_t *pcs, int n)
{
    uint64_t h = vt__hash_pcs(pcs, n);
    vt_stk_index *idx = __atomic_load_n(&vt__stk.index, __ATOMIC_ACQUIRE);
    if (__builtin_expect(idx != NULL, 1)) {
        uint64_t i = h >> idx->shift;
        vt_stk_entry *e = __atomic_load_n(&idx->slots[i], __ATOMIC_ACQUIRE);
        while (__builtin_expect(e && e->hash != h, 0)) {
            i = (i + 1) & idx->mask;
            e = __atomic_load_n(&idx->slots[i], __ATOMIC_ACQUIRE);
        }
        if (!e)
            return vt__insert(h, pcs, n, NULL, 0);
        if (__builtin_expect(e->shape == (uint32_t)n, 1)) {
            if (n > 16)
                return vt__intern_native_long(e, pcs, n);
            if (__builtin_expect(!vt__diff_pcs(e->pcs, pcs, n), 1))
                return e->id;
        }
    }
    return vt__intern_native_slow(pcs, n);
}

/* vt__intern_native for 8 <= n <= VT_DEPTH_MAX: the hash and the compare without
 * their short-stack branches (the hook's fast path). */
static inline __attribute__((always_inline)) uint32_t vt__intern_native8(const uintptr_t *pcs, int n)
{
    if (n < 8)
        __builtin_unreachable();
    return vt__intern_native(pcs, n);
}

/* Interns with the hash already computed; n and npy already clamped. */
static uint32_t vt__intern(uint64_t h, const uintptr_t *pcs, int n, const vt_py_frame *py, int npy)
{
    vt_stk_index *idx = __atomic_load_n(&vt__stk.index, __ATOMIC_ACQUIRE);
    if (__builtin_expect(idx != NULL, 1)) {
        vt_stk_entry *e = vt__find(idx, h, pcs, n, py, npy, NULL);
        if (__builtin_expect(e != NULL, 1))
            return e->id;
    }
    return vt__insert(h, pcs, n, py, npy);
}

uint32_t vt_stack_intern(const uintptr_t *pcs, int n)
{
    return vt_stack_intern_py(pcs, n, NULL, 0);
}

uint32_t vt_stack_intern_py(const uintptr_t *pcs, int n, const vt_py_frame *py, int npy)
{
    if (n < 0)
        n = 0;
    if (n > VT_DEPTH_MAX)
        n = VT_DEPTH_MAX;
    if (npy < 0 || !py)
        npy = 0;
    if (npy > VT_DEPTH_MAX)
        npy = VT_DEPTH_MAX;
    return vt__intern(vt__hash(pcs, n, py, npy), pcs, n, py, npy);
}

/* The entry of a published id, or NULL (0, or not yet / never given out). */
static vt_stk_entry *vt__entry_of(uint32_t id)
{
    if (id == 0 || id > __atomic_load_n(&vt__stk.count, __ATOMIC_ACQUIRE))
        return NULL;
    return vt__entry(id);
}

int vt_stack_get(uint32_t id, const uintptr_t **pcs, int *n)
{
    vt_stk_entry *e = vt__entry_of(id);
    if (!e)
        return -1;
    *pcs = e->pcs;
    *n = VT_SHAPE_N(e->shape);
    return 0;
}

int vt_stack_get_py(uint32_t id, const vt_py_frame **py, int *npy)
{
    vt_stk_entry *e = vt__entry_of(id);
    if (!e)
        return -1;
    *py = (const vt_py_frame *)(e->pcs + VT_SHAPE_N(e->shape));
    *npy = VT_SHAPE_NPY(e->shape);
    return 0;
}

void vt_stack_fork_prepare(void) { pthread_mutex_lock(&vt__stk.lock); }
void vt_stack_fork_parent(void)  { pthread_mutex_unlock(&vt__stk.lock); }
void vt_stack_fork_child(void)   { pthread_mutex_unlock(&vt__stk.lock); }

uint32_t vt_stack_count(void)
{
    return __atomic_load_n(&vt__stk.count, __ATOMIC_ACQUIRE);
}

size_t vt_stack_bytes(void)
{
    pthread_mutex_lock(&vt__stk.lock);
    size_t b = vt__stk.bytes;
    pthread_mutex_unlock(&vt__stk.lock);
    return b;
}

static int vt__own_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t probe = (uintptr_t)data;
    uintptr_t lo, hi;
    vt_modules_load_range(info, &lo, &hi);
    if (probe >= lo && probe < hi) {
        vt__stk.own_lo = lo;
        vt__stk.own_hi = hi;
        vt__stk.own_span = hi - lo;
        return 1;
    }
    return 0;
}

void vt_stack_setup(int trim_own)
{
    if (__atomic_exchange_n(&vt__stk.inited, 1, __ATOMIC_ACQ_REL))
        return;
    if (trim_own)
        dl_iterate_phdr(vt__own_range_cb, (void *)(uintptr_t)&vt_stack_init);
    if (vt__config.python != VT_PYTHON_OFF) {
        vt_py_init();         /* dlsym only; a process without libpython pays ~µs */
        if (vt_py_available())
            vt_log(VT_LOG_INFO, "Python frames on: CPython %lu.%lu found",
                   vt_py_version_hex() >> 24, (vt_py_version_hex() >> 16) & 0xff);
        else if (vt__config.python == VT_PYTHON_ON)
            vt_log(VT_LOG_WARN, "VRAMTRACE_PYTHON=on but no supported CPython (3.10-3.13) "
                   "in this process; native stacks only");
    }
}

void vt_stack_warm(void)
{
    static int warmed;   /* atomic: 0 not yet, 1 being done or done */
    if (__atomic_load_n(&warmed, __ATOMIC_ACQUIRE) || !__atomic_load_n(&vt__stk.inited, __ATOMIC_ACQUIRE) ||
        vt_guard_in_iterate() || __atomic_exchange_n(&warmed, 1, __ATOMIC_ACQ_REL))
        return;
    int rc = vt_libunwind_load();
    if (rc != 0) {
        if (rc > 0)   /* another thread is loading it: a later call warms */
            __atomic_store_n(&warmed, 0, __ATOMIC_RELEASE);
        return;
    }
    void *warm[8];
    /* first call initialises libunwind's caches and its validation pipe; the pipe
     * goes to high descriptor numbers (vt_hooks_fd.c), so the program's next open()
     * still returns its lowest free number */
    int oldcs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &oldcs);
    vt_fd_unwind_enter();
    vt_cancel_guarded_begin();
    vt__unw_backtrace(warm, 8);
    vt_cancel_guarded_end();
    vt_fd_unwind_leave();
    pthread_setcancelstate(oldcs, NULL);
}

void vt_stack_init(int trim_own)
{
    vt_stack_setup(trim_own);
    vt_stack_warm();
}

/* ---- the per-thread Python capture cache (vt_python.h vt_py_capture_cached) ---- */

#define VT_PYC_OFF ((struct vt_py_cache *)1)   /* vt__tls.pyc: this thread has none */

static pthread_key_t  vt__pyc_key;
static pthread_once_t vt__pyc_once = PTHREAD_ONCE_INIT;
static int            vt__pyc_key_ok;
static uint64_t       vt__pyc_checked, vt__pyc_mism;  /* atomic: VRAMTRACE_PY_CACHE=2 */

/* Thread exit: frees the cache; the thread's later captures walk uncached. */
static void vt__pyc_free(void *p)
{
    vt__tls.pyc = VT_PYC_OFF;
    if (p && p != (void *)VT_PYC_OFF)
        vt_mem_free(p);
}

static void vt__pyc_key_make(void)
{
    vt__pyc_key_ok = pthread_key_create(&vt__pyc_key, vt__pyc_free) == 0;
}

/* The calling thread's cache, made on first use; NULL when it has none. */
static __attribute__((noinline)) vt_py_cache *vt__pyc_make(void)
{
    pthread_once(&vt__pyc_once, vt__pyc_key_make);
    vt_py_cache *c = NULL;
    if (vt__pyc_key_ok && (c = vt_mem_calloc(sizeof *c)) &&
        pthread_setspecific(vt__pyc_key, c) != 0) {
        vt_mem_free(c);
        c = NULL;
    }
    vt__tls.pyc = c ? c : VT_PYC_OFF;
    return c;
}

/* VRAMTRACE_PY_CACHE=2: the cached capture py[0..npy) with hash h against an
 * uncached one made now; counts and logs (once) a difference. */
static __attribute__((noinline)) void vt__pyc_check(const vt_py_frame *py, int npy, uint64_t h,
                                                    int max)
{
    vt_py_frame ref[VT_STK_PY_MAX];
    int nref = vt_py_capture(ref, max);
    __atomic_fetch_add(&vt__pyc_checked, 1, __ATOMIC_RELAXED);
    if (nref == npy && !memcmp(ref, py, (size_t)npy * sizeof *py) && h == vt_py_hash(ref, nref))
        return;
    if (__atomic_fetch_add(&vt__pyc_mism, 1, __ATOMIC_RELAXED) == 0)
        vt_log(VT_LOG_WARN, "Python cache check: a cached capture differs from a full walk "
               "(%d frames cached, %d walked)", npy, nref);
}

/* VRAMTRACE_PY_CACHE=2: the counters, once, at exit (the tests read this line). */
__attribute__((destructor)) static void vt__pyc_report(void)
{
    if (vt__config.py_cache != 2)
        return;
    vt_log(VT_LOG_WARN, "Python cache check: %llu captures compared with a full walk, "
           "%llu differed", (unsigned long long)__atomic_load_n(&vt__pyc_checked, __ATOMIC_RELAXED),
           (unsigned long long)__atomic_load_n(&vt__pyc_mism, __ATOMIC_RELAXED));
}

/* The native pcs plus the calling thread's Python frames, interned. Out of line so
 * that the Python buffer (4 KiB) is on the stack only when an interpreter is there. */
static __attribute__((noinline)) uint32_t vt__intern_with_py(const uintptr_t *pcs, int n, int depth)
{
    vt_py_frame py[VT_STK_PY_MAX];
    int max = depth < VT_STK_PY_MAX ? depth : VT_STK_PY_MAX;
    int npy;
    uint64_t hpy;
    vt_py_cache *c = vt__tls.pyc;
    if (__builtin_expect(c == NULL, 0) && vt__config.py_cache)
        c = vt__pyc_make();
    if (__builtin_expect(c != NULL && c != VT_PYC_OFF && vt__config.py_cache, 1)) {
        npy = vt_py_capture_cached(c, py, max, &hpy);
        if (__builtin_expect(vt__config.py_cache == 2, 0))
            vt__pyc_check(py, npy, hpy, max);
    } else {
        npy = vt_py_capture(py, max);
        hpy = vt_py_hash(py, npy);
    }
    if (n == 0 && npy == 0)
        return 0;
    return vt__intern(vt__hash_key(pcs, n, hpy, npy), pcs, n, py, npy);
}

/* Interns pcs[0..n) (n <= depth), adding the Python frames when there may be some. */
static inline uint32_t vt__finish(const uintptr_t *pcs, int n, int depth)
{
    /* the flag first: without an interpreter this is one load (no TLS, no call) */
    if (__builtin_expect(vt_py_maybe(), 0) && vt__config.python != VT_PYTHON_OFF)
        return vt__intern_with_py(pcs, n, depth);
    if (n == 0)
        return 0;
    return vt__intern_native(pcs, n);
}

/* vt_stack_capture_hook's cases off its fast path: a stack of fewer than 8 frames of
 * the program (interned as it is), anything else (the general capture). */
static __attribute__((noinline)) uint32_t vt__capture_hook_slow(const uintptr_t *buf, int n, int depth)
{
    if (n >= 2 && n < 9 && buf[1] - vt__stk.own_lo >= vt__stk.own_span)
        return vt__finish(buf + 1, n - 1, depth);
    return vt_stack_capture(depth);
}

int vt_stack_own_pc(uintptr_t pc)
{
    return pc - vt__stk.own_lo < vt__stk.own_span;
}

uint32_t vt_stack_finish(const uintptr_t *pcs, int n, int depth)
{
    return vt__finish(pcs, n, depth);
}

/* vt__finish out of line, for the hook's fast path (a tail call there). */
static __attribute__((noinline)) uint32_t vt__finish_py(const uintptr_t *pcs, int n, int depth)
{
    return vt__finish(pcs, n, depth);
}

__attribute__((noinline)) uint32_t vt_stack_capture(int depth)
{
    if (depth <= 0)
        return 0;
    if (depth > VT_DEPTH_MAX)
        depth = VT_DEPTH_MAX;
    /* Unwind the frames kept plus our own leading ones, no more: libunwind's cost is
     * per frame (docs/performance.md has the measured cost of a fixed slack). The number of
     * leading frames to drop (frame 0 + ours) is learned: the most seen so far
     * (VT_STK_SLACK before the first capture). A capture that was cut short because
     * this path has more own frames than seen before is taken again, once. */
    static int own_seen;  /* atomic (relaxed): most leading frames dropped so far */
    uintptr_t buf[VT_DEPTH_MAX + 2 * VT_STK_SLACK];
    int slack = __atomic_load_n(&own_seen, __ATOMIC_RELAXED);
    if (slack <= 0)
        slack = VT_STK_SLACK;
    int n, skip;
    for (int again = 0;; again++) {
        int want = depth + slack;
        if (want > (int)(sizeof buf / sizeof buf[0]))
            want = (int)(sizeof buf / sizeof buf[0]);
        n = vt_stack_unwind_here(buf, want);
        skip = 1;  /* frame 0: inside unw_backtrace's caller (this function) */
        while (skip < n && buf[skip] - vt__stk.own_lo < vt__stk.own_hi - vt__stk.own_lo)
            skip++;
        if (skip > __atomic_load_n(&own_seen, __ATOMIC_RELAXED))
            __atomic_store_n(&own_seen, skip, __ATOMIC_RELAXED);
        if (again || n < want || skip <= slack)
            break;   /* the stack ended, or nothing of the program's was cut off */
        slack = skip + VT_STK_SLACK;
    }
    n -= skip;
    if (n < 0)
        n = 0;
    if (n > depth)
        n = depth;
    return vt__finish(buf + skip, n, depth);
}

uint32_t vt_stack_capture_hook(const uintptr_t *buf, int n, int depth)
{
    /* buf[0] is in the hook by construction (VT_HOOK_CAPTURE is a macro and
     * vt_stack_unwind_here always inlined, so unw_backtrace's caller is the hook):
     * exactly one frame of ours to drop, provided buf[1], its return address, is the
     * program's. When it is not (a hooked call from inside libvramtrace), or when the
     * stack is shorter than 8 frames (the fast hash and compare walk blocks of 8),
     * the general path runs (vt_stack_capture finds our frames by address). Before
     * vt_stack_init has found our range the check cannot fail (span 0); dropping
     * buf[0] is still right. */
    if (__builtin_expect(n < 9 || buf[1] - vt__stk.own_lo < vt__stk.own_span, 0))
        return vt__capture_hook_slow(buf, n, depth);
    const uintptr_t *pcs = buf + 1;
    n--;                      /* <= depth: the hook asked for depth + 1 */
    if (__builtin_expect(vt_py_maybe(), 0))
        return vt__finish_py(pcs, n, depth);
    return vt__intern_native8(pcs, n);
}
