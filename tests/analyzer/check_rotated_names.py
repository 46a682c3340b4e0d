#!/usr/bin/env python3
"""check_rotated_names.py VRAMTRACE WORKDIR - logrotate's names for a renamed compressed
stream (<stream>.zst.1, <stream>.gz.2) are read from a folder like the other rotated
copies (*.jsonl.N, *.jsonl.N.zst), and a name that only looks alike is not.

Writes one small version 1 stream as vt.h.1.1.jsonl.zst.1 (zstd, through the zstd
command; skipped with a line when it is missing) and vt.h.2.1.jsonl.gz.2 (gzip), plus
vt.h.3.1.jsonl.zst.x (not a snapshot name): the report has exactly the two processes.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys


def stream(pid):
    recs = [
        {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": pid, "ppid": 1, "host": "h",
         "exe": "/opt/a", "cmdline": ["/opt/a"], "rank": None, "local_rank": None, "world_size": None,
         "start_ns": 1, "clock": "CLOCK_MONOTONIC", "mono_start_ns": 1, "depth": 32, "interval_ms": 1000,
         "step_every": 1},
        {"t": "snapshot", "seq": 1, "trigger": "exit", "label": None, "time_ns": 9, "step": 0, "step_marked": False,
         "devices": [], "sites": [], "leak_warnings": [], "oom": None, "allocations": None,
         "unfreed_at_exit": True, "dropped_records": 0},
    ]
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs).encode()


def main():
    exe, work = sys.argv[1], sys.argv[2]
    if not shutil.which("zstd"):
        print("SKIP: the zstd command is not installed (scripts/setup.sh installs it)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    z = subprocess.run(["zstd", "-q", "-c"], input=stream(1), capture_output=True, check=True).stdout
    open(os.path.join(work, "vt.h.1.1.jsonl.zst.1"), "wb").write(z)
    open(os.path.join(work, "vt.h.2.1.jsonl.gz.2"), "wb").write(gzip.compress(stream(2)))
    open(os.path.join(work, "vt.h.3.1.jsonl.zst.x"), "wb").write(z)
    r = subprocess.run([exe, "report", "--format", "json", work], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: report exited %d: %s" % (r.returncode, r.stderr))
        return 1
    pids = sorted(p["pid"] for p in json.loads(r.stdout)["processes"])
    if pids != [1, 2]:
        print("FAIL: processes %r, expected [1, 2] (the .zst.1 and .gz.2 copies, not .zst.x)" % pids)
        return 1
    print("ok: <stream>.zst.N and <stream>.gz.N are read as rotated copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
