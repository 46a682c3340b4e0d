/* pystack_probe.c — libpystack_probe.so: drives preload/capture/vt_python.c from Python.
 *
 * Loaded by pystack_test.py with ctypes.CDLL, so every probe_* call runs with
 * the GIL RELEASED, exactly like an allocation hook reached through a ctypes
 * call or a Py_BEGIN_ALLOW_THREADS section. The two functions meant for
 * ctypes.PyDLL (GIL HELD during the call) are marked so.
 *
 * Output format of the capture functions: one line per Python frame,
 * innermost first, "file\tfunction\tline\tgroup\n" (group: vt_py_frame.group);
 * return value = frame count, or -1 when a frame could not be described or
 * buf is too small.
 *
 * A "lock-holding allocator" is simulated by vt__probe_alloc_lock: the
 * capture runs while it is held, and probe_gil_then_lock (PyDLL: GIL held)
 * waits for it — the lock order (allocator lock -> capture, GIL
 * holder -> allocator lock). A capture that waited on the GIL would deadlock.
 */
#define _GNU_SOURCE
#include "vt_python.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE __attribute__((visibility("default")))
#define PROBE_MAX 128

static pthread_mutex_t vt__probe_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static int vt__probe_locked;          /* main holds the allocator lock (atomic)  */
static int vt__probe_waiter;          /* GIL holder is about to lock (atomic)    */
static int vt__probe_waiter_had_gil;  /* PyGILState_Check() in the GIL holder    */
static vt_py_frame vt__probe_stored[PROBE_MAX];
static int vt__probe_nstored;

static void vt__probe_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int vt__probe_format(const vt_py_frame *fr, int n, char *buf, int len)
{
    int o = 0;
    if (len <= 0)
        return -1;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        char file[512], func[256];
        int line;
        if (vt_py_describe(&fr[i], file, sizeof file, func, sizeof func, &line) != 0)
            return -1;
        int w = snprintf(buf + o, (size_t)(len - o), "%s\t%s\t%d\t%u\n", file, func, line,
                         fr[i].group);
        if (w < 0 || w >= len - o)
            return -1;
        o += w;
    }
    return n;
}

/* Number of native _PyEval_EvalFrameDefault frames on this thread's stack
 * (glibc backtrace + dladdr), to check vt_py_frame.group against. */
PROBE int probe_eval_frames(void)
{
    void *pcs[512];
    int n = backtrace(pcs, 512), evals = 0;
    for (int i = 0; i < n; i++) {
        Dl_info di;
        if (dladdr((char *)pcs[i] - 1, &di) && di.dli_sname &&
            !strcmp(di.dli_sname, "_PyEval_EvalFrameDefault"))
            evals++;
    }
    return evals;
}

/* Finds the interpreter. Returns the minor version (10..13) or -1. */
PROBE int probe_init(void)
{
    vt_py_init();
    return vt_py_available() ? (int)((vt_py_version_hex() >> 16) & 0xff) : -1;
}

/* Captures and describes the calling thread's frames into buf. */
PROBE int probe_capture(char *buf, int len)
{
    vt_py_frame fr[PROBE_MAX];
    int n = vt_py_capture(fr, PROBE_MAX);
    return vt__probe_format(fr, n, buf, len);
}

/* Same, with the simulated allocator lock held across the capture. */
PROBE int probe_capture_locked(char *buf, int len)
{
    vt_py_frame fr[PROBE_MAX];
    pthread_mutex_lock(&vt__probe_alloc_lock);
    int n = vt_py_capture(fr, PROBE_MAX);
    pthread_mutex_unlock(&vt__probe_alloc_lock);
    return vt__probe_format(fr, n, buf, len);
}

/* ctypes.PyDLL (GIL held): takes the allocator lock, blocking WITH the GIL. */
PROBE int probe_gil_then_lock(void)
{
    int (*gil_check)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
    __atomic_store_n(&vt__probe_waiter_had_gil, gil_check ? gil_check() : -1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&vt__probe_waiter, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&vt__probe_alloc_lock);
    pthread_mutex_unlock(&vt__probe_alloc_lock);
    return 0;
}

/* CDLL: waits (GIL released) until probe_deadlock_capture holds the lock.
 * Returns 0, or -1 after timeout_ms. */
PROBE int probe_wait_locked(int timeout_ms)
{
    for (int t = 0; t < timeout_ms; t++) {
        if (__atomic_load_n(&vt__probe_locked, __ATOMIC_SEQ_CST))
            return 0;
        vt__probe_sleep_ms(1);
    }
    return -1;
}

/* CDLL: holds the allocator lock, waits until another thread sits in
 * probe_gil_then_lock (holding the GIL, blocked on the lock), waits hold_ms
 * more, then captures + describes. Returns the frame count, -1 on describe
 * failure, -2 when the GIL holder never showed up within timeout_ms. */
PROBE int probe_deadlock_capture(char *buf, int len, int hold_ms, int timeout_ms)
{
    vt_py_frame fr[PROBE_MAX];
    int n = -2;
    __atomic_store_n(&vt__probe_waiter, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&vt__probe_alloc_lock);
    __atomic_store_n(&vt__probe_locked, 1, __ATOMIC_SEQ_CST);
    for (int t = 0; t < timeout_ms; t++) {
        if (__atomic_load_n(&vt__probe_waiter, __ATOMIC_SEQ_CST)) {
            vt__probe_sleep_ms(hold_ms);
            n = vt_py_capture(fr, PROBE_MAX);
            break;
        }
        vt__probe_sleep_ms(1);
    }
    __atomic_store_n(&vt__probe_locked, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&vt__probe_alloc_lock);
    return n < 0 ? n : vt__probe_format(fr, n, buf, len);
}

/* 1 when the thread in probe_gil_then_lock held the GIL (PyGILState_Check). */
PROBE int probe_waiter_had_gil(void)
{
    return __atomic_load_n(&vt__probe_waiter_had_gil, __ATOMIC_SEQ_CST);
}

static void *vt__probe_cthread(void *arg)
{
    vt_py_frame fr[PROBE_MAX];
    *(int *)arg = vt_py_capture(fr, PROBE_MAX);
    return NULL;
}

/* Captures from a thread created here in C (never seen by Python).
 * Returns that capture's frame count (expected 0), -1 if pthread fails. */
PROBE int probe_cthread_capture(void)
{
    pthread_t t;
    int n = -1;
    if (pthread_create(&t, NULL, vt__probe_cthread, &n) != 0)
        return -1;
    pthread_join(t, NULL);
    return n;
}

/* Captures without describing (kept for probe_describe_stored). Returns n. */
PROBE int probe_capture_store(void)
{
    vt__probe_nstored = vt_py_capture(vt__probe_stored, PROBE_MAX);
    return vt__probe_nstored;
}

/* Describes the stored frames, "?\t?\t0" for those that no longer resolve.
 * Returns the number that resolved. */
PROBE int probe_describe_stored(char *buf, int len)
{
    int o = 0, ok = 0;
    buf[0] = 0;
    for (int i = 0; i < vt__probe_nstored; i++) {
        char file[512], func[256];
        int line;
        if (vt_py_describe(&vt__probe_stored[i], file, sizeof file, func, sizeof func, &line) == 0)
            ok++;
        int w = snprintf(buf + o, (size_t)(len - o), "%s\t%s\t%d\n", file, func, line);
        if (w < 0 || w >= len - o)
            return -1;
        o += w;
    }
    return ok;
}

/* Captures iterations times (no describe): the unit measured by callgrind.
 * Returns the frame count of the last capture. */
PROBE int probe_capture_raw(int iterations)
{
    vt_py_frame fr[PROBE_MAX];
    int n = 0;
    for (int i = 0; i < iterations; i++)
        n = vt_py_capture(fr, PROBE_MAX);
    return n;
}

/* The layout in use ("key=value" lines, see tests/pystack/py_layout_dump.c). */
PROBE int probe_layout(char *buf, int len)
{
    return vt_py_layout_format(buf, (size_t)len);
}

/* The calling thread's Python capture cache (vt_py_capture_cached), made on first use
 * and kept for the thread's life (a test: never freed). */
static __thread vt_py_cache *vt__probe_cache;
static long vt__probe_cache_checked, vt__probe_cache_replayed;  /* atomic */

/* Captures the calling thread's frames twice, with its cache and without, at most
 * max frames each (max in 1..PROBE_MAX), and compares the records, the count and the
 * hash. Returns the frame count, or -1 when they differ (printed on stderr). */
PROBE int probe_cache_check(int max)
{
    if (!vt__probe_cache && !(vt__probe_cache = calloc(1, sizeof *vt__probe_cache)))
        return -1;
    if (max < 1 || max > PROBE_MAX)
        max = PROBE_MAX;
    vt_py_frame a[PROBE_MAX], b[PROBE_MAX];
    memset(a, 0xAB, sizeof a);
    memset(b, 0xCD, sizeof b);
    uint64_t h = 0;
    int was_valid = vt__probe_cache->valid && vt__probe_cache->max == max;
    int na = vt_py_capture_cached(vt__probe_cache, a, max, &h);
    int nb = vt_py_capture(b, max);
    __atomic_fetch_add(&vt__probe_cache_checked, 1, __ATOMIC_RELAXED);
    if (was_valid)
        __atomic_fetch_add(&vt__probe_cache_replayed, 1, __ATOMIC_RELAXED);
    if (na == nb && !memcmp(a, b, (size_t)nb * sizeof *b) && h == vt_py_hash(b, nb))
        return nb;
    fprintf(stderr, "probe_cache_check: cached %d frames, walked %d (max %d), hash %s\n",
            na, nb, max, h == vt_py_hash(b, nb) ? "same" : "differs");
    for (int i = 0; i < (na > nb ? na : nb) && i < max; i++)
        fprintf(stderr, "  %2d cached %p %p %d %d %u  walked %p %p %d %d %u\n", i,
                a[i].code, a[i].linetable, a[i].instr, a[i].firstlineno, a[i].group,
                b[i].code, b[i].linetable, b[i].instr, b[i].firstlineno, b[i].group);
    return -1;
}

/* Checks made by probe_cache_check, and those that started from a filled cache. */
PROBE long probe_cache_stats(int which)
{
    return which ? __atomic_load_n(&vt__probe_cache_replayed, __ATOMIC_RELAXED)
                 : __atomic_load_n(&vt__probe_cache_checked, __ATOMIC_RELAXED);
}

/* One capture with the calling thread's cache, nothing else (for cost measurements
 * with callgrind: tests/pystack/cost.sh measures vt_py_capture the same way).
 * Returns the frame count, or -1 without a cache. */
PROBE int probe_cache_capture(int max)
{
    if (!vt__probe_cache && !(vt__probe_cache = calloc(1, sizeof *vt__probe_cache)))
        return -1;
    vt_py_frame fr[PROBE_MAX];
    uint64_t h;
    return vt_py_capture_cached(vt__probe_cache, fr, max < 1 || max > PROBE_MAX ? PROBE_MAX : max, &h);
}

/* The same walk without the cache, and the hash the store would compute over it. */
PROBE int probe_nocache_capture(int max)
{
    vt_py_frame fr[PROBE_MAX];
    int n = vt_py_capture(fr, max < 1 || max > PROBE_MAX ? PROBE_MAX : max);
    volatile uint64_t h = vt_py_hash(fr, n);
    (void)h;
    return n;
}
