#!/usr/bin/env python3
"""check_exit_only.py VRAMTRACE WORKDIR - memory the steps never saw is not "stable".

A process whose only snapshot is its exit record (it ran for less than one snapshot
interval and marked no step), holding 30 MiB at exit at one site and nothing at
another site that was freed: the held site is "too_few_steps" in the JSON report and
the text report, not "stable", and `vramtrace check` says inconclusive (exit 3), as
it does for the process as a whole.
"""
import json
import os
import shutil
import subprocess
import sys

MiB = 1 << 20


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    recs = [
        {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 77, "ppid": 1, "host": "h",
         "exe": "/opt/a", "cmdline": ["/opt/a"], "rank": None, "local_rank": None, "world_size": None,
         "start_ns": 1700000000000000000, "clock": "CLOCK_MONOTONIC", "mono_start_ns": 1, "depth": 32,
         "interval_ms": 1000, "step_every": 1},
        {"t": "module", "id": 0, "path": "/opt/a", "build_id": "ab" * 20, "bias": 0x400000},
        {"t": "stack", "id": 1, "frames": [[0, 0x1100, "keep_batches"], [0, 0x1200, "main"]]},
        {"t": "stack", "id": 2, "frames": [[0, 0x1300, "scratch"], [0, 0x1200, "main"]]},
        {"t": "snapshot", "seq": 1, "trigger": "exit", "label": None, "time_ns": 900000000, "step": 0,
         "step_marked": False,
         "devices": [{"device": 0, "free_bytes": 1 << 34, "total_bytes": 1 << 35, "live_bytes": 30 * MiB,
                      "peak_bytes": 34 * MiB, "fragmentation": 0.0, "pool_reserved_bytes": 0, "pool_used_bytes": 0,
                      "kinds": {"device": {"live_bytes": 30 * MiB, "live_count": 30, "peak_bytes": 34 * MiB,
                                           "alloc_total": 60, "free_total": 30, "failed_total": 0,
                                           "alloc_bytes_total": 150 * MiB}}}],
         "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": 30 * MiB, "live_count": 30,
                    "interval_peak_bytes": 30 * MiB, "alloc_total": 30, "alloc_bytes_total": 30 * MiB,
                    "free_total": 0, "growth_steps": 0, "growth_bytes": 0},
                   {"stack": 2, "kind": "device", "device": 0, "live_bytes": 0, "live_count": 0,
                    "interval_peak_bytes": 4 * MiB, "alloc_total": 30, "alloc_bytes_total": 120 * MiB,
                    "free_total": 30, "growth_steps": 0, "growth_bytes": 0}],
         "leak_warnings": [], "oom": None, "allocations": None, "unfreed_at_exit": True, "dropped_records": 0},
    ]
    path = os.path.join(work, "vt.h.77.1700000000000000000.jsonl")
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    fails = []
    r = subprocess.run([exe, "report", "--format", "json", path], capture_output=True, text=True)
    sites = {s["title"].split(" ")[0]: s for s in json.loads(r.stdout)["processes"][0]["sites"]}
    if sites.get("keep_batches", {}).get("verdict") != "too_few_steps":
        fails.append("keep_batches (30 MiB at exit, no step): verdict %r, expected too_few_steps"
                     % sites.get("keep_batches", {}).get("verdict"))
    t = subprocess.run([exe, "report", path], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    if "STABLE" in t.stdout.split("TOO FEW STEPS")[0] and "keep_batches" in t.stdout.split("TOO FEW STEPS")[0].split("STABLE")[-1]:
        fails.append("the text report lists keep_batches as stable:\n" + t.stdout)
    c = subprocess.run([exe, "check", path], capture_output=True, text=True)
    if c.returncode != 3:
        fails.append("check exited %d, expected 3 (inconclusive): %s" % (c.returncode, c.stdout[-500:]))
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: memory seen only at exit is too_few_steps; check inconclusive")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
