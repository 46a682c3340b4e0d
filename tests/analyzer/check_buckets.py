#!/usr/bin/env python3
"""check_buckets.py - a long job read with its steps kept in buckets (analyzer/model/vt_slots.h)
gives the verdicts and leak rates it gives read step by step.

Writes one snapshot stream (format version 1, docs/snapshot-format.md) of STEPS marked
steps with these sites on one device:
  - weights: 512 MiB from the start (stable);
  - kv: +1 MiB every step (a leak);
  - slow: +4 KiB every 7th step (a slow leak, about 585 B/step);
  - saw: +2 MiB every other step, with a 5 MiB temporary held over the odd steps
    (a leak under a sawtooth, 1 MiB/step);
  - late: nothing until the last quarter, then +64 KiB a step (a late leak);
  - temp: a 64 MiB temporary allocated and freed inside every step (churn);
  - warm: grows 256 KiB a step for the first fifth, then flat (plateau);
  - once: an 8 MiB temporary in step ONCE_STEP only (transient): with 64 slots
    that step lies in the second-to-last slot when the slots merge at step 2,048,
    the last one being empty for it.
Then reads it three times with `vramtrace report --format json`: unbucketed
(VRAMTRACE_ANALYZER_SLOTS larger than the steps), with 64 slots (buckets of 64
steps) and with the default limit, and checks that every site has the same
verdict, every leak the same rate (exact for the constant ones, within 2 % for
the slow one), the same step counts, first and last step, and that only the
bucketed reads carry "step_buckets" and say so in the text report. A fourth read
keeps every step while loading and is then coarsened to fit a small points budget
(VRAMTRACE_ANALYZER_POINTS), with the same checks.

Usage: check_buckets.py VRAMTRACE WORKDIR [STEPS]
"""
import json
import os
import shutil
import subprocess
import sys

MiB = 1 << 20
GiB = 1 << 30
TOTAL = 80 * GiB
FUNCS = {"weights": 0x11a0, "kv": 0x12e0, "slow": 0x1420, "saw": 0x1560, "late": 0x16a0, "temp": 0x17e0,
         "warm": 0x1920, "once": 0x1a00, "main": 0x1a60}
ONCE_STEP = 2000
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def write(path, steps):
    out = open(path, "w")
    put = lambda o: out.write(json.dumps(o, separators=(",", ":")) + "\n")
    put({"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 777, "ppid": 1, "host": "node0",
         "exe": "/opt/job/train", "cmdline": ["/opt/job/train"], "rank": 0, "local_rank": 0, "world_size": 1,
         "start_ns": 1700000000000000000, "clock": "CLOCK_MONOTONIC", "mono_start_ns": 1, "depth": 32,
         "interval_ms": 10, "step_every": 1})
    put({"t": "module", "id": 0, "path": "/opt/job/train", "build_id": "cd" * 20, "bias": 0x555555554000})
    ids = {}
    for i, fn in enumerate(FUNCS):
        if fn == "main":
            continue
        ids[fn] = 100 + i
        put({"t": "stack", "id": ids[fn], "frames": [[0, FUNCS[fn] + 0x2b, fn], [0, FUNCS["main"] + 0x57, "main"]]})
    live = {fn: [0, 0, 0, 0, 0] for fn in ids}   # live, peak, alloc_total, alloc_bytes, free_total

    def touch(fn, delta, frees=0):
        s = live[fn]
        s[0] += delta
        s[1] = max(s[1], s[0])
        if delta > 0:
            s[2] += 1
            s[3] += delta
        s[4] += frees

    def snap(seq, trigger, step, exit_=False):
        lb = sum(v[0] for v in live.values())
        pk = sum(v[1] for v in live.values())
        dev = {"device": 0, "free_bytes": TOTAL - lb, "total_bytes": TOTAL, "live_bytes": lb, "peak_bytes": pk,
               "fragmentation": 0.0, "pool_reserved_bytes": 0, "pool_used_bytes": 0,
               "kinds": {"device": {"live_bytes": lb, "live_count": 1, "peak_bytes": pk, "alloc_total": 0,
                                    "free_total": 0, "failed_total": 0, "alloc_bytes_total": 0}}}
        sites = [{"stack": ids[fn], "kind": "device", "device": 0, "live_bytes": v[0], "live_count": 1 if v[0] else 0,
                  "interval_peak_bytes": v[1], "alloc_total": v[2], "alloc_bytes_total": v[3], "free_total": v[4],
                  "growth_steps": 0, "growth_bytes": 0} for fn, v in live.items() if v[0] or v[1] or v[4]]
        for v in live.values():
            v[1] = v[0]
        put({"t": "snapshot", "seq": seq, "trigger": trigger, "label": None, "time_ns": seq * 10000000,
             "step": step, "step_marked": True, "devices": [dev], "sites": sites, "leak_warnings": [],
             "oom": None, "allocations": None, "unfreed_at_exit": exit_, "dropped_records": 0})

    touch("weights", 512 * MiB)
    late_from = steps - steps // 4
    for step in range(steps):
        touch("kv", MiB)
        if step % 7 == 6:
            touch("slow", 4096)
        if step % 2 == 0:
            touch("saw", 2 * MiB + 5 * MiB)     # kept 2 MiB, and the 5 MiB temporary
        else:
            touch("saw", -5 * MiB, frees=1)
        if step >= late_from:
            touch("late", 64 * 1024)
        touch("temp", 64 * MiB)
        touch("temp", -64 * MiB, frees=1)
        if step < steps // 5:
            touch("warm", 256 * 1024)
        if step == ONCE_STEP:
            touch("once", 8 * MiB)
            touch("once", -8 * MiB, frees=1)
        snap(step + 1, "step", step)
    snap(steps + 1, "exit", steps, exit_=True)
    out.close()


def report(exe, folder, slots, fmt="json", points=None):
    env = dict(os.environ, NO_COLOR="1", VRAMTRACE_NO_DWARF="1", VRAMTRACE_ANALYZER_SLOTS=str(slots))
    env.pop("VRAMTRACE_ANALYZER_POINTS", None)
    if points:
        env["VRAMTRACE_ANALYZER_POINTS"] = str(points)
    r = subprocess.run([exe, "report", "--format", fmt, folder], capture_output=True, text=True, env=env)
    if not check(r.returncode in (0, 1), "slots %s: report exited %d: %s" % (slots, r.returncode, r.stderr[-500:])):
        return None
    return json.loads(r.stdout) if fmt == "json" else r.stdout


def by_fn(proc):
    """function name of the site's title frame -> site"""
    out = {}
    for s in proc["sites"]:
        fr = s.get("frames") or s.get("stack") or []
        name = None
        for f in fr:
            fn = f.get("function") if isinstance(f, dict) else None
            if fn and fn != "main":
                name = fn
                break
        out[name or s["id"]] = s
    return out


def main():
    exe, work = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    shutil.rmtree(work, ignore_errors=True)
    folder = os.path.join(work, "job")
    os.makedirs(folder)
    write(os.path.join(folder, "vt.node0.777.1700000000000000000.jsonl"), steps)
    exact = report(exe, folder, 1 << 20)
    if exact is None:
        return finish()
    p0 = exact["processes"][0]
    check(p0["steps"] == steps and "step_buckets" not in p0, "unbucketed: steps %r, step_buckets %r"
          % (p0["steps"], p0.get("step_buckets")))
    s0 = by_fn(p0)
    want = {"weights": "stable", "kv": "leak", "slow": "leak", "saw": "leak", "late": "leak", "temp": "churn",
            "warm": "plateau", "once": "transient"}
    for fn, v in want.items():
        check(fn in s0 and s0[fn]["verdict"] == v, "unbucketed: %s is %r, not %s" % (fn, s0.get(fn, {}).get("verdict"), v))
    for slots, points in ((64, None), (2048, None), (1 << 20, 3000)):
        b = report(exe, folder, slots, points=points)
        if b is None:
            continue
        p = b["processes"][0]
        sb = by_fn(p)
        bk = p.get("step_buckets")
        if points:   # read step by step, then coarsened to fit the points budget
            check(bk and 64 <= bk["count"] < steps // 2, "points %d: step_buckets %r" % (points, bk))
            slots = "%d, points %d" % (slots, points)
        elif slots < steps:
            check(bk and bk["count"] <= slots and bk["count"] * bk["width"] >= steps > (bk["count"] - 1) * bk["width"],
                  "slots %s: step_buckets %r for %d steps" % (slots, bk, steps))
        else:
            check(bk is None, "slots %s: step_buckets %r" % (slots, bk))
        for k in ("steps", "first_step", "last_step", "peak_bytes", "unfreed_at_exit_bytes"):
            check(p[k] == p0[k], "slots %s: %s %r, unbucketed %r" % (slots, k, p[k], p0[k]))
        for fn, s in s0.items():
            t = sb.get(fn)
            if not check(t is not None, "slots %s: site %s missing" % (slots, fn)):
                continue
            check(t["verdict"] == s["verdict"], "slots %s: %s is %s, unbucketed %s" % (slots, fn, t["verdict"], s["verdict"]))
            for k in ("last_live_bytes", "peak_bytes", "unfreed_at_exit_bytes"):
                check(t[k] == s[k], "slots %s: %s %s %r, unbucketed %r" % (slots, fn, k, t[k], s[k]))
            if s["verdict"] == "leak":
                r0, r1 = s["growth_bytes_per_step"], t["growth_bytes_per_step"]
                tol = 0.02 if fn == "slow" else 1e-9
                check(abs(r1 - r0) <= tol * abs(r0), "slots %s: %s rate %r, unbucketed %r" % (slots, fn, r1, r0))
                print("slots %s: %s %s %.1f B/step (unbucketed %.1f)" % (slots, fn, t["verdict"], r1, r0))
    txt = report(exe, folder, 64, fmt="text")
    if txt is not None:
        check(("%d steps, in " % steps) in txt and " buckets of " in txt, "text report does not say the steps were bucketed")
    return finish()


def finish():
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("buckets: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
