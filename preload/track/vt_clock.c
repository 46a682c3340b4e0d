/* vt_clock.c — the event stamp's mode and its conversion to CLOCK_MONOTONIC ns
 * (contract and error bounds: vt_clock.h).
 *
 * Calibration state is the core's: written and read under its lock only. Slopes are
 * kept as ns per tick in 32.32 fixed point. A stamp within the latest segment (the
 * drain's usual case) is converted inline (vt_clock.h); any other one here, on the
 * segment of the points kept around it, found from the previous such conversion's
 * (events come roughly in stamp order).
 */
#define _GNU_SOURCE
#include "vt_clock.h"
#include "vt_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

int vt__clock_tsc;            /* atomic; vt_clock.h */
int vt__clock_stamp_frees;    /* atomic; vt_clock.h */

static int      vt__clock_inited;   /* under the core lock */
static uint64_t vt__t0;             /* the first calibration point's ticks      */
static uint64_t vt__w0;             /* its read window (ns)                     */
vt_clock_line   vt__clock_line;     /* under the core lock; vt_clock.h          */
#define vt__n0   vt__clock_line.n0
#define vt__tr   vt__clock_line.tr
#define vt__nr   vt__clock_line.nr
static uint64_t vt__mult;           /* the long slope, ns per tick, 32.32: the
                                       first point to the latest (or the start-up
                                       spin)                                     */

/* The latest calibration points, oldest overwritten: a stamp is converted on the
 * segment between the two points around it. seg: ns per tick from the point before
 * (32.32; 0: none, or not plausible). Absolute numbers: point i is at
 * vt__pt[i % VT_CLOCK_POINTS]; vt__npt taken so far; vt__hint the right end of the
 * segment the last far conversion used. */
#define VT_CLOCK_POINTS 64
static struct { uint64_t t, n, seg; } vt__pt[VT_CLOCK_POINTS];
static uint64_t vt__npt, vt__hint;
#define VT__PT(i) vt__pt[(i) % VT_CLOCK_POINTS]

/* Adds a point (seg: the slope from the latest, or 0) and makes the inline line the
 * new latest segment's: through the point, at its slope (the long one without). */
static __attribute__((unused)) void vt__point_add(uint64_t t, uint64_t n, uint64_t seg)
{
    VT__PT(vt__npt).t = t;
    VT__PT(vt__npt).n = n;
    VT__PT(vt__npt).seg = seg;
    vt__clock_line.tp = vt__npt ? VT__PT(vt__npt - 1).t : t;
    vt__npt++;
    vt__tr = t;
    vt__nr = n;
    vt__clock_line.mult = seg ? seg : vt__mult;
}

#if defined(__x86_64__)
/* A (ticks, ns) pair read together: the counter read between two CLOCK_MONOTONIC
 * reads, the ns their midpoint; the narrowest of `tries` (a read preempted or slowed
 * by an interrupt is discarded). Returns the window (the two reads' distance, ns): the
 * point's own uncertainty. */
static uint64_t vt__pair(uint64_t *ticks, uint64_t *ns, int tries)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < tries; i++) {
        uint64_t a = vt_clock_monotonic_ns();
        uint64_t t = __rdtsc();
        uint64_t b = vt_clock_monotonic_ns();
        if (b - a < best) {
            best = b - a;
            *ticks = t;
            *ns = a + (b - a) / 2;
        }
        if (best <= VT_CLOCK_PAIR_NS / 8)
            break;
    }
    return best;
}

/* 1 when the CPU's TSC is invariant (constant rate, runs in every C-state). */
static int vt__tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
}

/* 1 when the kernel's clocksource (what CLOCK_MONOTONIC counts) is the TSC. */
static int vt__clocksource_tsc(void)
{
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return strcmp(buf, "tsc\n") == 0 || strcmp(buf, "tsc") == 0;
}

/* Slope from point (t0, n0) to (t1, n1) in 32.32 fixed point; 0 when not plausible
 * (a rate outside 0.1 to 20 GHz, or no ticks). */
static uint64_t vt__slope(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1)
{
    if (t1 <= t0 || n1 <= n0)
        return 0;
    unsigned __int128 m = ((unsigned __int128)(n1 - n0) << 32) / (t1 - t0);
    /* 20 GHz: 0.05 ns per tick; 0.1 GHz: 10 ns per tick */
    if (m < ((unsigned __int128)1 << 32) / 20 || m > ((unsigned __int128)10 << 32))
        return 0;
    return (uint64_t)m;
}
#endif

void vt_clock_init(int mode, int stamp_frees)
{
    if (vt__clock_inited)
        return;
    vt__clock_inited = 1;
    int e = errno;
    __atomic_store_n(&vt__clock_stamp_frees, stamp_frees ? 1 : 0, __ATOMIC_RELEASE);
#if defined(__x86_64__)
    if (mode != VT_CLOCK_MONOTONIC && vt__tsc_invariant() &&
        (mode == VT_CLOCK_TSC || vt__clocksource_tsc())) {
        uint64_t t = 0, n = 0;
        uint64_t w0 = vt__w0 = vt__pair(&vt__t0, &vt__n0, 64);
        uint64_t w1 = UINT64_MAX;
        /* long enough that the two points' windows make at most 1/1000 of the slope
         * (at least VT_CLOCK_SPIN_NS; at most about 5 ms) */
        for (int i = 0; i < 100000; i++) {
            w1 = vt__pair(&t, &n, 4);
            uint64_t span = n - vt__n0, want = 500 * (w0 + w1);
            if (w1 <= VT_CLOCK_PAIR_NS && span >= VT_CLOCK_SPIN_NS && span >= want)
                break;
            if (span > 5000000ull) {
                w1 = UINT64_MAX;
                break;
            }
        }
        vt__mult = w0 <= VT_CLOCK_PAIR_NS && w1 <= VT_CLOCK_PAIR_NS ? vt__slope(vt__t0, vt__n0, t, n) : 0;
        if (vt__mult) {
            vt__point_add(vt__t0, vt__n0, 0);
            vt__point_add(t, n, vt__mult);
            __atomic_store_n(&vt__clock_tsc, 1, __ATOMIC_RELEASE);
            vt_log(VT_LOG_INFO, "event times from the TSC (%.4f ns per tick)",
                   (double)vt__mult / 4294967296.0);
        } else {
            vt_log(VT_LOG_INFO, "no steady (TSC, CLOCK_MONOTONIC) reading, or an implausible rate: "
                   "event times from CLOCK_MONOTONIC");
        }
    } else if (mode == VT_CLOCK_TSC) {
        vt_log(VT_LOG_WARN, "VRAMTRACE_CLOCK=tsc: this CPU's TSC is not invariant; using CLOCK_MONOTONIC");
    }
#else
    if (mode == VT_CLOCK_TSC)
        vt_log(VT_LOG_WARN, "VRAMTRACE_CLOCK=tsc: no TSC on this architecture; using CLOCK_MONOTONIC");
#endif
    errno = e;
}

void vt_clock_calibrate(void)
{
#if defined(__x86_64__)
    if (!__atomic_load_n(&vt__clock_tsc, __ATOMIC_RELAXED))
        return;
    int e = errno;
    uint64_t t, n;
    uint64_t w = vt__pair(&t, &n, 4);
    /* a point within VT_CLOCK_SPIN_NS of the latest (the next chunk of one drain)
     * adds nothing: the stamps applied now lie before the latest already */
    if (w <= VT_CLOCK_PAIR_NS && t > vt__tr && n >= vt__nr + VT_CLOCK_SPIN_NS) {
        if (n - vt__n0 >= VT_CLOCK_BASELINE_NS && n - vt__n0 >= 1000 * (vt__w0 + w)) {
            uint64_t m = vt__slope(vt__t0, vt__n0, t, n);
            if (m)
                vt__mult = m;
        }
        /* the clock's own rate since the latest point (NTP slewing included) */
        vt__point_add(t, n, vt__slope(vt__tr, vt__nr, t, n));
    }
    errno = e;
#endif
}

uint64_t vt__clock_ns_far(uint64_t stamp)
{
    /* within the points kept: the segment around the stamp (exact at both ends);
     * after the latest or before the oldest: through that point, at the long slope */
    uint64_t last = vt__npt - 1, first = vt__npt > VT_CLOCK_POINTS ? vt__npt - VT_CLOCK_POINTS : 0;
    uint64_t t, n, m = vt__mult;
    if (stamp >= VT__PT(last).t) {
        t = VT__PT(last).t;
        n = VT__PT(last).n;
    } else if (stamp < VT__PT(first).t) {
        t = VT__PT(first).t;
        n = VT__PT(first).n;
    } else {   /* VT__PT(k - 1).t <= stamp < VT__PT(k).t, first < k <= last */
        uint64_t k = vt__hint > first && vt__hint <= last ? vt__hint : last;
        while (stamp >= VT__PT(k).t)
            k++;
        while (stamp < VT__PT(k - 1).t)
            k--;
        vt__hint = k;
        t = VT__PT(k).t;
        n = VT__PT(k).n;
        if (VT__PT(k).seg)
            m = VT__PT(k).seg;
    }
    __int128 ns = (__int128)n + ((((__int128)stamp - (__int128)t) * (__int128)m) >> 32);
    return ns < (__int128)vt__n0 ? vt__n0 : (uint64_t)ns;
}
