/* vt_clock.h — event time: the stamp a hook puts on an event, and its conversion to
 * CLOCK_MONOTONIC nanoseconds by the core.
 *
 * Design: when CLOCK_MONOTONIC is itself built on the CPU's time-stamp counter (x86-64,
 * an invariant TSC — CPUID 0x80000007 EDX bit 8 — and the kernel's clocksource "tsc",
 * /sys/devices/system/clocksource/clocksource0/current_clocksource), a hook stamps an
 * event with the counter (rdtsc: no call, no vDSO page, no sequence lock) and the core
 * turns the ticks into nanoseconds when it applies the event. Anywhere else (another
 * architecture, a virtual machine on kvm-clock, a TSC the kernel distrusts,
 * VRAMTRACE_CLOCK=monotonic) a stamp is CLOCK_MONOTONIC nanoseconds already and the
 * conversion is the identity. The mode is chosen once, in vt_clock_init at the core's
 * start, before any hook records, and never changes.
 *
 * Conversion (TSC mode): calibration points — (ticks, CLOCK_MONOTONIC ns) pairs read
 * together (the counter between two clock reads at most VT_CLOCK_PAIR_NS apart) — are
 * taken by the consumer before it applies events (vt_clock_calibrate; one at most
 * every VT_CLOCK_SPIN_NS), so an event it applies was stamped before the point, and
 * mostly after an earlier one: the latest 64 points are kept and a stamp between two
 * of them is converted on the line through those two (exact at both ends: the error is
 * at most their read windows' halves, typically tens of ns, at most
 * VT_CLOCK_PAIR_NS / 2, however far apart the points are and whatever the clock's
 * rate did between them, NTP slewing included, as long as that rate was steady over
 * the stretch; conversions are continuous from one stretch to the next). Other stamps
 * (before the oldest point kept; after the latest, a reading refused or not taken)
 * use the long slope through the nearest point: measured from the first point (taken at
 * vt_clock_init) to the latest once they are at least VT_CLOCK_BASELINE_NS apart (and
 * 1000 times their read windows), and from a spin at vt_clock_init before that (at
 * least VT_CLOCK_SPIN_NS, long enough that the two points' read windows make at most
 * 1/1000 of it): the error is the distance from that point times the slope's relative
 * error (at most 1/1000 at first: about 1 us for an event 1 ms from the point) plus
 * the point's read window's half.
 *
 * Thread safety: vt_clock_stamp, any thread, lock-free, keeps errno. vt_clock_init,
 * vt_clock_calibrate and vt_clock_ns: under the core lock only (they share the
 * calibration state).
 */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* VRAMTRACE_CLOCK (sys/vt_config.h clock): auto = the TSC where it qualifies (above),
 * monotonic = always CLOCK_MONOTONIC, tsc = the TSC whenever the CPU's is invariant
 * (even when the kernel's clocksource is another one). */
enum { VT_CLOCK_AUTO = 0, VT_CLOCK_MONOTONIC = 1, VT_CLOCK_TSC = 2 };

#define VT_CLOCK_SPIN_NS     20000ull     /* the start-up slope's interval        */
#define VT_CLOCK_BASELINE_NS 1000000ull   /* the first point's slope is used once */
#define VT_CLOCK_PAIR_NS     2000ull      /* a calibration point read over a longer
                                             window (preempted) is not used         */

/* 1: stamps are TSC ticks; 0: CLOCK_MONOTONIC ns (atomic; written once by
 * vt_clock_init before hooks record). */
extern int vt__clock_tsc;
/* 1: the hooks stamp free events too (the event trace writes each free's time);
 * 0: a free event carries no stamp (atomic; written once by vt_clock_init). */
extern int vt__clock_stamp_frees;

/* CLOCK_MONOTONIC in ns (a vDSO read). Any thread; keeps errno. */
static inline uint64_t vt_clock_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The event stamp of now: TSC ticks or CLOCK_MONOTONIC ns (vt__clock_tsc).
 * Any thread, lock-free, keeps errno. */
static inline __attribute__((always_inline)) uint64_t vt_clock_stamp(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(__atomic_load_n(&vt__clock_tsc, __ATOMIC_RELAXED), 1))
        return __rdtsc();
#endif
    return vt_clock_monotonic_ns();
}

/* Chooses the stamp's mode (mode: VT_CLOCK_*; stamp_frees: 1 when free events are to
 * be stamped) and, in TSC mode, takes the first calibration point and the start-up
 * slope (a VT_CLOCK_SPIN_NS busy wait). Once per process, under the core lock, before
 * hooks record: later calls change nothing. Where no steady point can be read (every
 * read preempted) or the start-up slope is not plausible (0.1 to 20 GHz), the mode
 * stays monotonic. */
void vt_clock_init(int mode, int stamp_frees);

/* Takes a calibration point now (a few tens of ns; under the core lock, before
 * applying events). Nothing in monotonic mode. */
void vt_clock_calibrate(void);

/* The conversion's line (TSC mode; under the core lock, written by vt_clock_init and
 * vt_clock_calibrate): the latest segment, from the point before (tp ticks) to the
 * latest calibration point (tr ticks, nr ns), and its slope (mult: ns per tick, 32.32
 * fixed point, below 2^36; the long slope where the segment's is not plausible); the
 * first point's ns (n0: no event is older). */
typedef struct vt_clock_line {
    uint64_t tr, nr, n0, mult, tp;
} vt_clock_line;
extern vt_clock_line vt__clock_line;
/* The conversion of a stamp outside the latest segment, or far from its end: on the
 * segment of the points kept around it (vt_clock.c; 128-bit product). */
uint64_t vt__clock_ns_far(uint64_t stamp);

/* CLOCK_MONOTONIC ns of an event stamped stamp (vt_clock_stamp); the identity in
 * monotonic mode. Under the core lock. Inline: the drain converts every event. */
static inline uint64_t vt_clock_ns(uint64_t stamp)
{
    if (!__atomic_load_n(&vt__clock_tsc, __ATOMIC_RELAXED))
        return stamp;
    int64_t d = (int64_t)(stamp - vt__clock_line.tr);
    /* one unsigned compare: tp <= stamp <= tr */
    if (__builtin_expect(stamp - vt__clock_line.tp > vt__clock_line.tr - vt__clock_line.tp ||
                         d <= -(1ll << 27), 0))
        return vt__clock_ns_far(stamp);
    int64_t off = (d * (int64_t)vt__clock_line.mult) >> 32;   /* |d| < 2^27: no overflow */
    if (off < 0 && (uint64_t)-off > vt__clock_line.nr - vt__clock_line.n0)
        return vt__clock_line.n0;
    return vt__clock_line.nr + (uint64_t)off;
}

#endif /* VT_CLOCK_H */
