#!/usr/bin/env python3
"""The event trace's times are the calls' times (VRAMTRACE_TRACE=1).

Runs prog_eventtime under the preload with VRAMTRACE_CLOCK=<mode> and holds every
allocation and free record of the trace to the interval the program read around its
call (CLOCK_MONOTONIC before and after): a record must lie within it, widened by the
mode's tolerance (monotonic: 0, the hook reads the same clock; tsc: TOL_TSC_NS, the
conversion's error bound in preload/track/vt_clock.h). Also checks that the mode asked
for is the mode the preload used (its debug line).

With --no-warm-up the program's two threads start with no CUDA call before them, so
their first calls meet the preload's activation: every call must still be recorded.

Usage: check_eventtime.py LIBVRAMTRACE PROG OUTDIR MODE(monotonic|tsc) PAIRS [--no-warm-up]
Exit 0 pass, 1 fail, 77 skip (tsc: this CPU's TSC is not invariant).
"""
import glob
import os
import shutil
import struct
import subprocess
import sys

TOL_TSC_NS = 2000

lib, prog, out, mode, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
extra = sys.argv[6:]   # --no-warm-up: the threads' first calls meet the preload's activation

if mode == "tsc":
    flags = open("/proc/cpuinfo").read().split()
    if "constant_tsc" not in flags or "nonstop_tsc" not in flags:
        print("SKIP: this CPU's TSC is not invariant (no constant_tsc/nonstop_tsc): "
              "the TSC mode cannot be checked here")
        sys.exit(77)

shutil.rmtree(out, ignore_errors=True)
env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_OUTPUT=out, VRAMTRACE_TRACE="1", VRAMTRACE_DEPTH="0",
           VRAMTRACE_CLOCK=mode, VRAMTRACE_LOG="info", VRAMTRACE_COMPRESS="0")
r = subprocess.run([prog, str(pairs)] + extra, env=env, capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"check_eventtime: the program failed ({r.returncode}): {r.stderr[-2000:]}")
fails = []
said_tsc = "event times from the TSC" in r.stderr
if (mode == "tsc") != said_tsc:
    fails.append(f"VRAMTRACE_CLOCK={mode} but the preload {'did' if said_tsc else 'did not'} "
                 "say it stamps events from the TSC")

if "were not recorded" in r.stderr:
    fails.append("the preload says calls were not recorded: " +
                 [l for l in r.stderr.splitlines() if "were not recorded" in l][0])

calls = {}   # (op, addr) -> list of (before, after)
for line in r.stdout.splitlines():
    op, addr, t0, t1 = line.split()
    calls.setdefault((1 if op == "A" else 2, int(addr, 16)), []).append((int(t0), int(t1)))
ncalls = sum(len(v) for v in calls.values())
if ncalls != 4 * pairs:
    fails.append(f"the program printed {ncalls} calls, want {4 * pairs}")

traces = glob.glob(os.path.join(out, "vt.*.trace"))
if len(traces) != 1:
    sys.exit(f"check_eventtime: want one trace in {out}: {os.listdir(out) if os.path.isdir(out) else out}")
raw = open(traces[0], "rb").read()
if raw[:8] != b"VTTRACE1" or struct.unpack_from("<II", raw, 8) != (1, 40):
    sys.exit("check_eventtime: not a version 1 trace")
tol = 0 if mode == "monotonic" else TOL_TSC_NS
recs = {}    # (op, addr) -> trace times
for off in range(16, len(raw) - 39, 40):
    t, addr, size, stream, stack, dev, kind, op = struct.unpack_from("<QQQQIhBB", raw, off)
    if op not in (1, 2):
        fails.append(f"record at {off}: op {op} (lost or stop: the run must lose nothing)")
        continue
    if size == 1:
        continue          # the unprinted pair that activates the preload
    recs.setdefault((op, addr), []).append(t)

# Each record must be matched to its own call of the same op and address whose
# interval (widened by tol) holds its time. Calls of one address can overlap in time
# (a thread preempted inside cudaMalloc after another thread's alloc and free of the
# same address), so the records are matched greedily in time order, each to the
# containing call that ends first: that finds a matching whenever one exists.
n = 0
for k in sorted(set(calls) | set(recs)):
    cs = sorted(calls.get(k, []))
    used = [False] * len(cs)
    what = f"{'alloc' if k[0] == 1 else 'free'} of {k[1]:#x}"
    for t in sorted(recs.get(k, [])):
        best = None
        for i, (t0, t1) in enumerate(cs):
            if t0 - tol > t:
                break
            if not used[i] and t <= t1 + tol and (best is None or t1 < cs[best][1]):
                best = i
        if best is None:
            near = min(cs, key=lambda c: max(c[0] - t, t - c[1], 0)) if cs else None
            fails.append(f"{what}: trace time {t} lies in no call's interval of that address"
                         f" (nearest {near}, tolerance {tol} ns)")
            continue
        used[best] = True
        n += 1
    if used.count(False):
        fails.append(f"{what}: {used.count(False)} calls without a trace record")
if n != 4 * pairs:
    fails.append(f"{n} trace records matched, want {4 * pairs}")
for f in fails[:20]:
    print("FAIL:", f)
if fails:
    print(f"check_eventtime: {len(fails)} failures")
    sys.exit(1)
print(f"check_eventtime ({mode}): {n} records, each within its own call's interval "
      f"(tolerance {tol} ns)")
