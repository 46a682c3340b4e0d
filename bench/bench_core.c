/* bench_core.c — benchmarks of the tracer core (preload/track/vt_core.h, vt_stack.h,
 * vt_writer.h) linked directly, without LD_PRELOAD or CUDA (vt_bench.py --figures 2, 4, 5
 * and 6). bench/vt_bench.py runs it, natively for wall times and under
 * `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=bench_measured_*`
 * for instruction counts.
 *
 * Design: the hook's work is reproduced with the core's own calls: an allocation is
 * vt_core_alloc(), a free is vt_core_take() + vt_core_commit() (what vt_hooks.h does
 * around the real free). Addresses are synthetic (distinct multiples of 256), stacks
 * are interned from program counters inside this binary, so the writer resolves them
 * to a real module as it would for a program.
 *
 * Usage:
 *   bench_core stack D N [--frames F]   N vt_stack_capture(D) vs N unw_backtrace(D)
 *                                       at the same call site; store growth after warm-up
 *   bench_core mem N                    N live allocations: heap bytes per allocation
 *                                       (mallinfo2) and resident-memory growth
 *   bench_core scale L K                K free+alloc pairs at random places of a table
 *                                       holding L live allocations (wall ns per pair)
 *   bench_core stall L S P              L live allocations over S sites, writer file
 *                                       open; a "hook" thread times every core call
 *                                       (ring events, vt_core_post_*, as the hooks
 *                                       make them) while the main thread writes P periodic
 *                                       snapshots and one full live list; then
 *                                       times vt_core_collect alone (the lock hold)
 *   bench_core stall L S P writer       the same hook thread, but the periodic snapshots
 *                                       are the writer thread's own (VRAMTRACE_INTERVAL_MS,
 *                                       as a traced program has them): their durations
 *                                       (vt_writer_periodic_stats) over P of them
 *   ... --rate R                        the hook thread keeps to R free+alloc pairs a
 *                                       second (in bursts every 100 us) instead of
 *                                       posting flat out; both print the hook thread's
 *                                       waits for the core lock and how often it found
 *                                       the event ring full
 * Output: "key=value ..." lines on stdout. Environment: VRAMTRACE_OUTPUT for stall.
 * Exit 0, 1 on a failed core call, 2 usage.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "vt_core.h"
#include "vt_core_fast.h"
#include "vt_stack.h"
#include "vt_writer.h"
#include "vt_format.h"

#include <libunwind.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "bench_util.h"

static volatile uint64_t sink;
int main(int argc, char **argv);

static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;   /* in-use arena bytes + mmap'd blocks */
}

#define ADDR(i) (0x7f0000000000ull + (uint64_t)(i) * 256u)

static void alloc_or_die(uint64_t addr, uint32_t stack)
{
    vt_alloc_info a = { addr, 256, 0, 0x1234, 0, VT_KIND_DEVICE, stack };
    if (vt_core_alloc(&a) != 0) {
        fprintf(stderr, "bench_core: vt_core_alloc failed\n");
        exit(1);
    }
}

static void free_or_die(uint64_t addr)
{
    vt_taken t;
    if (!vt_core_take(addr, 0, &t)) {
        fprintf(stderr, "bench_core: vt_core_take: %#llx not live\n", (unsigned long long)addr);
        exit(1);
    }
    vt_core_commit(&t);
}

/* ---- vt_bench.py --figures 2: stack capture vs bare unw_backtrace ---- */

__attribute__((noinline)) void bench_measured_capture(int depth, long n)
{
    for (long i = 0; i < n; i++)
        sink += vt_stack_capture(depth);
}

__attribute__((noinline)) void bench_measured_unw(int depth, long n)
{
    void *buf[300];
    for (long i = 0; i < n; i++)
        sink += (uint64_t)unw_backtrace(buf, depth);
}

typedef struct sjob { int depth; long n; } sjob;

static void stack_leaf(sjob *j)
{
    void *buf[300];
    for (int i = 0; i < 100; i++) {   /* warm libunwind's caches and the store */
        sink += vt_stack_capture(j->depth);
        sink += (uint64_t)unw_backtrace(buf, j->depth);
    }
    /* one call each first, from the same call site (counted by callgrind too: the
     * driver divides by n + 1); the store must not grow over the n repeats */
    uint32_t c0 = 0;
    size_t b0 = 0;
    for (volatile int k = 0; k < 2; k++) {
        if (k == 1) {
            c0 = vt_stack_count();
            b0 = vt_stack_bytes();
        }
        bench_measured_capture(j->depth, k ? j->n : 1);
        bench_measured_unw(j->depth, k ? j->n : 1);
    }
    const uintptr_t *pcs;
    int got = 0;
    vt_stack_get(vt_stack_count(), &pcs, &got);
    printf("depth=%d frames_kept=%d captures=%ld store_growth_stacks=%u store_growth_bytes=%zu\n",
           j->depth, got, j->n, vt_stack_count() - c0, vt_stack_bytes() - b0);
}

__attribute__((noinline)) static void stack_nest(sjob *j, int frames)
{
    if (frames > 0)
        stack_nest(j, frames - 1);
    else
        stack_leaf(j);
    sink++;
}

/* ---- vt_bench.py --figures 4: memory per live allocation ---- */

static int mem_mode(long n)
{
    alloc_or_die(ADDR(0xfffffff), 1);      /* site and first slab exist before */
    free_or_die(ADDR(0xfffffff));
    malloc_trim(0);
    size_t h0 = heap_bytes();
    long rss0 = status_kb("VmRSS");
    for (long i = 0; i < n; i++)
        alloc_or_die(ADDR(i), 1);
    size_t h1 = heap_bytes();
    long rss1 = status_kb("VmRSS");
    printf("live=%ld heap_bytes=%zu bytes_per_alloc=%.1f rss_growth_kb=%ld rss_kb=%ld\n", n, h1 - h0,
           (double)(h1 - h0) / (double)n, rss1 - rss0, rss1);
    return 0;
}

/* ---- vt_bench.py --figures 6: cost per event against live allocations ---- */

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

__attribute__((noinline)) void bench_measured_events(uint64_t *slots, long live, long k, uint64_t *next)
{
    for (long i = 0; i < k; i++) {
        long j = (long)(xorshift() % (uint64_t)live);
        free_or_die(slots[j]);
        slots[j] = ADDR((*next)++);
        alloc_or_die(slots[j], 1 + (uint32_t)(j & 63));
    }
}

static int scale_mode(long live, long k)
{
    uint64_t *slots = malloc((size_t)live * sizeof *slots);
    uint64_t next = 0;
    for (long i = 0; i < live; i++) {
        slots[i] = ADDR(next++);
        alloc_or_die(slots[i], 1 + (uint32_t)(i & 63));
    }
    bench_measured_events(slots, live, k < 1000 ? k : 1000, &next);   /* warm */
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = now_ns();
        bench_measured_events(slots, live, k, &next);
        uint64_t dt = now_ns() - t0;
        if (dt < best)
            best = dt;
    }
    printf("live=%ld pairs=%ld ns_per_pair=%.1f live_count=%llu\n", live, k, (double)best / (double)k,
           (unsigned long long)vt_core_live_count());
    free(slots);
    return 0;
}

/* ---- vt_bench.py --figures 5: snapshot stalls ---- */

static struct {
    int phase;                 /* atomic: 0 idle, 1 periodic, 2 full list, 3 stop */
    uint64_t max_ns[3];        /* longest core call per phase (hook thread only)  */
    uint64_t calls[3];         /* atomic store: read by the main thread for rates */
    uint64_t over_1ms[3];
    vt_lock_waits waits[3];    /* the hook thread's waits for the core lock       */
    uint64_t ring_full[3];     /* vt_core_ring_full_total over the phase          */
    double rate;               /* pairs per second the hook thread keeps to; 0: flat out */
    long live;
} st;

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
    nanosleep(&ts, NULL);
}

static void *hook_thread(void *arg)
{
    uint64_t *slots = arg;
    uint64_t next = (uint64_t)st.live + 1000;
    int ph, was = 0;
    vt_lock_waits w;
    vt_core_lock_waits(&w, 1);
    uint64_t full0 = vt_core_ring_full_total();
    /* paced (--rate): the pairs that rate x elapsed allows, then a 100 us sleep, so
     * they come in bursts of about rate / 10,000; a thread that did not run for a
     * while makes up at most 1 ms of pairs (no burst at full speed to catch up) */
    uint64_t last = now_ns();
    double due = 0;
    while ((ph = __atomic_load_n(&st.phase, __ATOMIC_ACQUIRE)) != 3) {
        if (ph != was) {   /* each phase's waits, read by this thread */
            vt_core_lock_waits(&st.waits[was], 1);
            uint64_t f = vt_core_ring_full_total();
            st.ring_full[was] = f - full0;
            full0 = f;
            was = ph;
        }
        if (st.rate > 0) {
            uint64_t now = now_ns();
            due += st.rate * (double)(now - last) / 1e9;
            last = now;
            if (due > st.rate / 1000)
                due = st.rate / 1000;
            if (due < 1) {
                sleep_us(100);
                continue;
            }
            due -= 1;
        }
        long j = (long)(xorshift() % (uint64_t)st.live);
        /* what the hooks do now: a ring event per free and per allocation, the
         * synchronous path only when the ring is full (vt_core.h) */
        vt_taken t;
        uint64_t t0 = now_ns();
        vt_core_post_free(slots[j], &t);
        uint64_t t1 = now_ns();
        slots[j] = ADDR(next++);
        vt_core_post_alloc_at(slots[j], 256, 0x1234, 0, VT_KIND_DEVICE, 1 + (uint32_t)(j % 10000));
        uint64_t t2 = now_ns();
        uint64_t d = (t1 - t0) > (t2 - t1) ? t1 - t0 : t2 - t1;
        if (d > st.max_ns[ph]) st.max_ns[ph] = d;
        __atomic_store_n(&st.calls[ph], st.calls[ph] + 2, __ATOMIC_RELAXED);
        st.over_1ms[ph] += (t1 - t0 > 1000000) + (t2 - t1 > 1000000);
    }
    if (was < 3) {
        vt_core_lock_waits(&st.waits[was], 1);
        st.ring_full[was] = vt_core_ring_full_total() - full0;
    }
    return NULL;
}

/* "lock_waits=N lock_waits_over_1ms=N lock_wait_max_us=X lock_wait_mean_us=X ring_full=N" */
static void print_waits(const char *prefix, int p)
{
    const vt_lock_waits *w = &st.waits[p];
    printf("%slock_waits=%llu %slock_waits_over_1ms=%llu %slock_wait_max_us=%.1f "
           "%slock_wait_mean_us=%.1f %sring_full=%llu", prefix, (unsigned long long)w->n, prefix,
           (unsigned long long)w->over_1ms, prefix, w->max_ns / 1e3, prefix,
           w->n ? w->sum_ns / 1e3 / (double)w->n : 0.0, prefix, (unsigned long long)st.ring_full[p]);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* The writer thread's periodic snapshots while the hook thread runs: P of them
 * (at most 20 s), timed by the writer itself. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static int stall_writer(int periodic)
{
    uint64_t n, sum, max;
    vt_writer_periodic_stats(&n, &sum, &max, 1);   /* from here on */
    uint64_t calls0 = __atomic_load_n(&st.calls[1], __ATOMIC_RELAXED), w0 = now_ns();
    double c0 = cpu_s();
    for (int i = 0; i < 2000; i++) {
        sleep_ms(10);
        uint64_t nn, ss, mm;
        vt_writer_periodic_stats(&nn, &ss, &mm, 0);
        if (nn >= (uint64_t)periodic)
            break;
    }
    vt_writer_periodic_stats(&n, &sum, &max, 1);
    /* what the program got done meanwhile, and the process's CPU (program + writer) */
    double wall = (double)(now_ns() - w0) / 1e9, cpu = cpu_s() - c0;
    uint64_t calls = __atomic_load_n(&st.calls[1], __ATOMIC_RELAXED) - calls0;
    __atomic_store_n(&st.phase, 3, __ATOMIC_RELEASE);
    printf("writer_periodic_n=%llu writer_periodic_mean_ms=%.3f writer_periodic_max_ms=%.3f "
           "hook_pairs_per_s=%.0f cpu_per_wall=%.2f\n",
           (unsigned long long)n, n ? sum / 1e6 / (double)n : 0.0, max / 1e6, (double)calls / 2 / wall, cpu / wall);
    return n ? 0 : 1;
}

static int stall_mode(long live, long sites, int periodic, int writer)
{
    /* S distinct 4-frame stacks of pcs inside this binary */
    uintptr_t base = (uintptr_t)&stall_mode;
    for (long s = 0; s < sites; s++) {
        uintptr_t pcs[4] = { base + (uintptr_t)(s % 97), base + 100 + (uintptr_t)(s / 97),
                             (uintptr_t)&main + 4, (uintptr_t)&main + 8 };
        if (vt_stack_intern(pcs, 4) != (uint32_t)(s + 1)) {
            fprintf(stderr, "bench_core: stack ids are not 1..S\n");
            return 1;
        }
    }
    uint64_t *slots = malloc((size_t)live * sizeof *slots);
    for (long i = 0; i < live; i++) {
        slots[i] = ADDR(i);
        alloc_or_die(slots[i], 1 + (uint32_t)(i % sites));
    }
    st.live = live;
    if (vt_writer_start() != 0) {
        fprintf(stderr, "bench_core: vt_writer_start failed (VRAMTRACE_OUTPUT?)\n");
        return 1;
    }
    uint64_t t0 = now_ns();
    vt_writer_snapshot(VT_TRIG_PERIODIC, NULL);   /* defines the S stacks once */
    uint64_t first = now_ns() - t0;
    pthread_t th;
    pthread_create(&th, NULL, hook_thread, slots);
    if (writer) {
        __atomic_store_n(&st.phase, 1, __ATOMIC_RELEASE);
        int rc = stall_writer(periodic);
        pthread_join(th, NULL);
        print_waits("writer_hook_", 1);
        printf(" hook_calls=%llu\n", (unsigned long long)st.calls[1]);
        return rc;
    }
    sleep_ms(300);                                    /* phase 0: no snapshot */
    __atomic_store_n(&st.phase, 1, __ATOMIC_RELEASE);
    uint64_t pmax = 0, psum = 0;
    for (int i = 0; i < periodic; i++) {
        uint64_t a = now_ns();
        vt_writer_snapshot(VT_TRIG_PERIODIC, NULL);
        uint64_t d = now_ns() - a;
        psum += d;
        if (d > pmax) pmax = d;
        sleep_ms(20);
    }
    __atomic_store_n(&st.phase, 2, __ATOMIC_RELEASE);
    uint64_t a = now_ns();
    vt_writer_snapshot(VT_TRIG_MANUAL, "bench full live list");
    uint64_t full = now_ns() - a;
    __atomic_store_n(&st.phase, 3, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    printf("live=%ld sites=%ld first_snapshot_ms=%.3f periodic_n=%d periodic_mean_ms=%.3f "
           "periodic_max_ms=%.3f full_list_ms=%.3f\n", live, sites, first / 1e6, periodic,
           periodic ? psum / 1e6 / periodic : 0.0, pmax / 1e6, full / 1e6);
    /* The hook waits at most as long as one hold of the core lock by vt_core_collect
     * (formatting and writing happen after the lock is released; the live list is
     * copied in chunks, the lock released between them). Timed alone, with nothing
     * else running, 3 times: ms = the whole collection (best of 3), lock_max_ms = its
     * longest single lock hold (what a hook can wait; the longest of the 3 runs, not
     * the best), holds = how many holds it took (last run). */
    unsigned fl[3] = { 0, VT_COLLECT_FRAG, VT_COLLECT_ALLOCS | VT_COLLECT_FRAG };
    const char *fn[3] = { "sites_only", "sites_and_fragmentation", "full_live_list" };
    for (int k = 0; k < 3; k++) {
        uint64_t best = UINT64_MAX, hold = 0, holds = 0;
        int journal = 0;
        for (int r = 0; r < 3; r++) {
            vt_collect c;
            uint64_t t = now_ns();
            if (vt_core_collect(&c, fl[k], 10) != 0)
                return 1;
            uint64_t d = now_ns() - t;
            if (c.lock_hold_max_ns > hold) hold = c.lock_hold_max_ns;
            holds = c.lock_holds;
            journal += c.frag_from_journal;
            vt_collect_free(&c);
            if (d < best) best = d;
        }
        printf("collect kind=%s ms=%.3f lock_max_ms=%.3f holds=%llu from_journal=%d\n", fn[k], best / 1e6,
               hold / 1e6, (unsigned long long)holds, journal);
    }
    const char *names[3] = { "idle", "periodic", "full_list" };
    for (int p = 0; p < 3; p++) {
        printf("hook_wait phase=%s calls=%llu max_us=%.1f over_1ms=%llu ", names[p],
               (unsigned long long)st.calls[p], st.max_ns[p] / 1e3,
               (unsigned long long)st.over_1ms[p]);
        print_waits("", p);
        printf("\n");
    }
    printf("file=%s\n", vt_writer_path());
    return 0;
}

static int frames_arg(int argc, char **argv, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--frames"))
            return atoi(argv[i + 1]);
    return def;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: see the top of bench/bench_core.c\n");
        return 2;
    }
    if (vt_core_init() != 0) {
        fprintf(stderr, "bench_core: core disabled (VRAMTRACE_DISABLE?)\n");
        return 1;
    }
    const char *mode = argv[1];
    if (!strcmp(mode, "stack") && argc >= 4) {
        vt_stack_init(0);
        sjob j = { atoi(argv[2]), atol(argv[3]) };
        if (j.depth < 1 || j.depth > 256)
            return 2;
        stack_nest(&j, frames_arg(argc, argv, 72));
        return 0;
    }
    if (!strcmp(mode, "mem"))
        return mem_mode(atol(argv[2]));
    if (!strcmp(mode, "scale") && argc >= 4)
        return scale_mode(atol(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "stall") && argc >= 5) {
        for (int i = 5; i + 1 < argc; i++)
            if (!strcmp(argv[i], "--rate"))
                st.rate = atof(argv[i + 1]);
        return stall_mode(atol(argv[2]), atol(argv[3]), atoi(argv[4]), argc >= 6 && !strcmp(argv[5], "writer"));
    }
    return 2;
}
