#!/usr/bin/env python3
"""check_ranks.py - a many-rank job: the report's summary across ranks, --rank, restarts.

Writes a folder of 64 snapshot streams (format version 1, docs/snapshot-format.md),
one per rank of a simulated job, 30 marked steps each:
  - every rank holds 512 MiB of weights (load_weights) on its device;
  - ranks 0-7 leak at append_kv on two devices, 1 MiB per step on each, so
    +2 MiB/step per process once one process's devices are summed;
  - ranks 9 and 17 each have one failed allocation at grow_cache (out of memory);
  - rank 63 peaks highest (a 2 GiB scratch buffer, freed);
  - rank 3 was restarted once: a second stream with rank 3, "restart": 1, which
    leaks nowhere.
Then checks: the first 40 lines of `vramtrace report DIR` hold the summary lines
(the leak on 8 of 64 ranks with +2 MiB/step each and ranks 0-7, the OOM on 2 ranks,
the largest peak on rank 63), the two rank-3 processes are told apart ("rank 3,
restart 1"), `--format json` has the same summary, and `--rank` keeps exactly the
ranks it names for report, check, export and diff (a bad list and an empty selection
exit 2), and the HTML report starts with the same summary.

Usage: check_ranks.py VRAMTRACE WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

MiB = 1 << 20
GiB = 1 << 30
TOTAL = 80 * GiB
STEPS = 30
FUNCS = {"load_weights": 0x11a0, "append_kv": 0x12e0, "grow_cache": 0x1420, "scratch": 0x1560, "main": 0x16a0}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def dumps(o):
    return json.dumps(o, separators=(",", ":"))


def write_proc(folder, pid, rank, restart=None, leak=False, oom=False, big_peak=False, world=64):
    """One process's stream; sites: (stack, device) -> live bytes, rewritten every step."""
    start_ns = 1700000000000000000 + pid * 1000
    lines = []
    node = "node%d" % ((rank or 0) // 8)
    h = {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": pid, "ppid": 4000, "host": node,
         "exe": "/opt/job/bin/train", "cmdline": ["/opt/job/bin/train"], "rank": rank,
         "local_rank": None if rank is None else rank % 8, "world_size": None if rank is None else world, "start_ns": start_ns, "clock": "CLOCK_MONOTONIC", "mono_start_ns": 1, "depth": 32,
         "interval_ms": 10, "step_every": 1}
    if restart is not None:
        h["restart"] = restart
    lines.append(h)
    lines.append({"t": "module", "id": 0, "path": "/opt/job/bin/train", "build_id": "ab" * 20, "bias": 0x555555554000})
    stacks = {}

    def stack(fn):
        if fn not in stacks:
            stacks[fn] = 100 + 7 * len(stacks)
            lines.append({"t": "stack", "id": stacks[fn], "frames": [[0, FUNCS[fn] + 0x2b, fn], [0, FUNCS["main"] + 0x57, "main"]]})
        return stacks[fn]

    dev = (rank or 0) % 8
    devs = [dev, (dev + 1) % 8] if leak else [dev]
    live = {}            # (fn, device) -> [live, peak, alloc_total, alloc_bytes, free_total]
    seq = [0]

    def touch(fn, d, delta, frees=0):
        s = live.setdefault((fn, d), [0, 0, 0, 0, 0])
        s[0] += delta
        s[1] = max(s[1], s[0])
        if delta > 0:
            s[2] += 1
            s[3] += delta
        s[4] += frees

    def snap(trigger, step, oom_rec=None, exit_=False):
        seq[0] += 1
        devices = []
        for d in sorted({k[1] for k in live} | set(devs)):
            lb = sum(v[0] for k, v in live.items() if k[1] == d)
            pk = sum(v[1] for k, v in live.items() if k[1] == d)
            devices.append({"device": d, "free_bytes": TOTAL - lb, "total_bytes": TOTAL, "live_bytes": lb, "peak_bytes": pk,
                            "fragmentation": 0.0, "pool_reserved_bytes": 0, "pool_used_bytes": 0,
                            "kinds": {"device": {"live_bytes": lb, "live_count": 1, "peak_bytes": pk, "alloc_total": 0,
                                                 "free_total": 0, "failed_total": 0, "alloc_bytes_total": 0}}})
        sites = [{"stack": stack(fn), "kind": "device", "device": d, "live_bytes": v[0], "live_count": 1 if v[0] else 0,
                  "interval_peak_bytes": v[1], "alloc_total": v[2], "alloc_bytes_total": v[3], "free_total": v[4],
                  "growth_steps": 0, "growth_bytes": 0} for (fn, d), v in sorted(live.items())]
        for v in live.values():
            v[1] = v[0]
        lines.append({"t": "snapshot", "seq": seq[0], "trigger": trigger, "label": None, "time_ns": seq[0] * 10000000,
                      "step": step, "step_marked": True, "devices": devices, "sites": sites, "leak_warnings": [],
                      "oom": oom_rec, "allocations": None, "unfreed_at_exit": exit_, "dropped_records": 0})

    touch("load_weights", dev, 512 * MiB)
    stack("load_weights")
    for step in range(STEPS):
        if leak:
            for d in devs:
                touch("append_kv", d, 1 * MiB)
        if big_peak and step == 10:
            touch("scratch", dev, 2 * GiB)
            touch("scratch", dev, -2 * GiB, frees=1)
        if oom and step == 12:
            snap("oom", step, {"api": "cudaMalloc", "kind": "device", "device": dev, "requested_bytes": 100 * GiB,
                               "result": 2, "free_bytes": TOTAL - 600 * MiB, "total_bytes": TOTAL,
                               "tracked_bytes": 512 * MiB, "stack": stack("grow_cache")})
        snap("step", step)
    snap("exit", STEPS, exit_=True)
    path = os.path.join(folder, "vt.%s.%d.%d.jsonl" % (node, pid, start_ns))
    with open(path, "w") as f:
        for rec in lines:
            f.write(dumps(rec) + "\n")


def run(args):
    return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    folder = os.path.join(work, "job")
    os.makedirs(folder)
    for rank in range(64):
        write_proc(folder, 10000 + rank, rank, restart=0, leak=rank < 8, oom=rank in (9, 17), big_peak=rank == 63)
    write_proc(folder, 20003, 3, restart=1)   # rank 3 after an elastic restart

    r = run([exe, "report", folder])
    if not check(r.returncode == 0, "report exited %d: %s" % (r.returncode, r.stderr)):
        return finish()
    first = r.stdout.split("\n")[:40]
    screen = "\n".join(first)
    check(first[0].startswith("vramtrace report: 65 processes"), "first line: %r" % first[0])
    if not check("ACROSS 64 RANKS (65 processes" in screen, "no summary heading in the first 40 lines"):
        print(screen)
    check("  leak at append_kv (train+0x130b) on 8 of 64 ranks, +2 MiB/step each, ranks 0-7" in first,
          "no leak summary line (8 of 64 ranks, +2 MiB/step each, ranks 0-7) in the first 40 lines")
    check(any(l.startswith("  out of memory at grow_cache (train+0x144b) on 2 of 64 ranks (2 events, the first during step 13), ranks 9, 17")
              for l in first), "no OOM summary line in the first 40 lines")
    check(any(l.startswith("  largest peak 2.5 GiB on rank 63, pid 10063 on node7") for l in first),
          "no largest-peak line naming rank 63")
    check(sum(l.startswith("  leak at") for l in first) == 1, "the leak is listed more than once in the summary")
    check("== rank 3, restart 1, pid 20003 on node0" in r.stdout, "the restarted rank 3 is not shown as 'rank 3, restart 1'")
    check("== rank 3, pid 10003 on node0" in r.stdout, "the first rank 3 is missing")
    check(r.stdout.count("\n== ") == 65, "not 65 per-process sections: %d" % r.stdout.count("\n== "))
    print("first screen:\n" + "\n".join(first[:12]))

    r = run([exe, "report", "--format", "json", folder])
    if check(r.returncode == 0, "report --format json exited %d" % r.returncode):
        rep = json.loads(r.stdout)
        s = rep.get("summary", {})
        check(s.get("processes") == 65 and s.get("all_ranked") is True, "summary processes/all_ranked: %r" % s.get("processes"))
        leaks = s.get("leaks", [])
        if check(len(leaks) == 1, "summary leaks: %d entries" % len(leaks)):
            lk = leaks[0]
            check(lk["title"] == "append_kv (train+0x130b)" and lk["count"] == 8, "leak entry: %r" % lk["title"])
            check(lk["ranks_text"] == "ranks 0-7", "leak ranks_text %r" % lk["ranks_text"])
            check(sorted(e["rank"] for e in lk["on"]) == list(range(8)), "leak ranks %r" % [e["rank"] for e in lk["on"]])
            check(all(e["bytes_per_step"] == 2 * MiB for e in lk["on"]), "leak rates %r" % [e["bytes_per_step"] for e in lk["on"]])
        ooms = s.get("ooms", [])
        check(len(ooms) == 1 and ooms[0]["events"] == 2 and [e["rank"] for e in ooms[0]["on"]] == [9, 17],
              "summary ooms: %r" % ooms)
        check(s.get("largest_peak", {}).get("rank") == 63, "largest peak: %r" % s.get("largest_peak"))
        restarts = sorted((p["rank"], p["restart"]) for p in rep["processes"] if p["rank"] == 3)
        check(restarts == [(3, 0), (3, 1)], "rank 3 processes: %r" % restarts)

    # --rank: report, check, export
    r = run([exe, "report", "--format", "json", "--rank", "0,3-5", folder])
    if check(r.returncode == 0, "report --rank exited %d: %s" % (r.returncode, r.stderr)):
        ranks = sorted(p["rank"] for p in json.loads(r.stdout)["processes"])
        check(ranks == [0, 3, 3, 4, 5], "report --rank 0,3-5 kept ranks %r" % ranks)
    r = run([exe, "report", "--rank", "9", folder])
    check(r.returncode == 0 and r.stdout.startswith("vramtrace report: 1 process,") and "ACROSS" not in r.stdout,
          "report --rank 9: %d %r" % (r.returncode, r.stdout[:200]))
    r = run([exe, "check", "--rank", "30-40", folder])
    check(r.returncode == 0, "check --rank 30-40 (no leak, no OOM there) exited %d: %s" % (r.returncode, r.stdout[-400:]))
    r = run([exe, "check", "--rank", "30-40,7", folder])
    check(r.returncode == 1, "check --rank 30-40,7 (rank 7 leaks) exited %d" % r.returncode)
    r = run([exe, "export", "--format", "collapsed", "--rank", "1", folder])
    check(r.returncode == 0 and "append_kv" in r.stdout, "export --rank 1: %d %r" % (r.returncode, r.stderr))
    r = run([exe, "export", "--format", "collapsed", "--rank", "8", folder])
    check(r.returncode == 0 and "append_kv" not in r.stdout and "load_weights" in r.stdout,
          "export --rank 8 (no leak there) shows append_kv or lacks load_weights")
    # the HTML report starts with the same summary; diff --rank compares the same ranks
    r = run([exe, "report", "--format", "html", folder])
    if check(r.returncode == 0, "report --format html exited %d" % r.returncode):
        h = r.stdout
        at = h.find("<h2>Across 64 ranks</h2>")
        check(at >= 0 and at < h.find("<h2>rank 0"), "html: no 'Across 64 ranks' section before the first process")
        check("<code>append_kv (train+0x130b)</code></td><td>device</td><td>8 of 64</td><td>+2 MiB each</td><td>ranks 0-7</td>" in h,
              "html: no leak row (8 of 64, +2 MiB each, ranks 0-7)")
        check("<td>2 of 64</td><td>2</td><td>13</td><td>ranks 9, 17</td>" in h and "<th>the first during step</th>" in h,
              "html: no OOM row (2 of 64, the first during step 13, ranks 9, 17)")
        # the page's data: rank 0's timeline has all devices and its two; its leak is the
        # same site as on ranks 0-7's other devices (16 places); the restarted rank 3 has
        # its restart marker; rank 9 its out-of-memory marker
        m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', h, re.S)
        d = json.loads(m.group(1)) if m else {"procs": []}
        byname = {(p["rank"], "restart 1" in p["title"]): p for p in d["procs"]}
        p0 = byname.get((0, False))
        if check(p0 is not None, "html data: no rank 0"):
            check([v["label"] for v in p0["timeline"]["views"]] == ["all devices", "device 0", "device 1"],
                  "html data: rank 0's timeline views %r" % [v["label"] for v in p0["timeline"]["views"]])
            lk = [s for s in p0["sites"] if s["verdict"] == "leak"]
            groups = d.get("same_sites", [])
            check(len(lk) == 2 and all("same" in s and len(groups[s["same"]]) == 16 for s in lk),
                  "html data: rank 0's leaks are not one site in 16 places: %r" %
                  [len(groups[s["same"]]) if "same" in s else None for s in lk])
        p3 = byname.get((3, True))
        check(p3 is not None and any(mk["k"] == "restart" for mk in p3["timeline"]["markers"]),
              "html data: no restart marker on rank 3, restart 1")
        # a page keeps every view of 16 of the 65 processes (OOMs, then leaks, then
        # peak): the others keep their sites and a line saying how to report them alone
        red = [p for p in d["procs"] if p.get("reduced")]
        check(d.get("procs_full") == 16 and len(red) == 49 and not any("timeline" in p for p in red)
              and all("timeline" in p for p in d["procs"] if not p.get("reduced")),
              "html data: %r full, %d reduced" % (d.get("procs_full"), len(red)))
        check(not any(p.get("reduced") for p in d["procs"] if p["rank"] in (0, 1, 2, 3, 4, 5, 6, 7, 9, 17)),
              "html data: a rank with a leak or an OOM lost its views")
        check(h.count('<section class="vt-reduced">') == 49 and "reports this one alone" in h,
              "html: %d reduced sections" % h.count('<section class="vt-reduced">'))
        p9 = byname.get((9, False))
        check(p9 is not None and any(mk["k"] == "oom" and mk["step"] == 12 for mk in p9["timeline"]["markers"]),
              "html data: no out-of-memory marker at step 12 on rank 9")
    r = run([exe, "diff", "--rank", "8-20", folder, folder])
    check(r.returncode == 0 and "processes        13 -> 13" in r.stdout and "leaking sites    0 -> 0" in r.stdout,
          "diff --rank 8-20 (13 ranks, no leak there): %d %r" % (r.returncode, r.stdout[:300]))
    r = run([exe, "diff", "--rank", "0-3", folder, folder])
    check(r.returncode == 0 and "processes        5 -> 5" in r.stdout and "leaking sites    8 -> 8" in r.stdout,
          "diff --rank 0-3 (5 processes, rank 3 restarted; 2 leaking sites each on ranks 0-3): %d %r" % (r.returncode, r.stdout[:300]))
    for bad in ("x", "3-1", "1,", "-2", ""):
        r = run([exe, "report", "--rank", bad, folder])
        check(r.returncode == 2 and "--rank" in r.stderr, "--rank %r: exit %d, %r" % (bad, r.returncode, r.stderr))
    r = run([exe, "report", "--rank", "100", folder])
    check(r.returncode == 2 and "no process of these ranks" in r.stderr, "--rank 100: exit %d" % r.returncode)

    # a long rank list is cut on the line (the JSON has it whole); processes without a
    # rank are counted as processes and listed by pid
    odd = os.path.join(work, "odd")
    os.makedirs(odd)
    for rank in range(64):
        write_proc(odd, 30000 + rank, rank, leak=rank % 2 == 1)
    write_proc(odd, 40000, None, leak=True)
    write_proc(odd, 40001, None, leak=True)
    r = run([exe, "report", odd])
    lines = [l for l in r.stdout.split("\n")[:40] if l.startswith("  leak at append_kv")]
    if check(len(lines) == 1, "odd: no single leak summary line: %r" % r.stdout[:600]):
        l = lines[0]
        check(" on 34 of 66 processes, +2 MiB/step each, ranks 1, 3, 5, 7," in l and l.endswith(" more)") and len(l) < 220,
              "odd: leak line %r" % l)
    check("ACROSS 66 PROCESSES" in r.stdout, "odd: heading not ACROSS 66 PROCESSES")
    r = run([exe, "report", "--format", "json", odd])
    if check(r.returncode == 0, "odd: json exit %d" % r.returncode):
        lk = json.loads(r.stdout)["summary"]["leaks"]
        want = "ranks " + ", ".join(str(i) for i in range(1, 64, 2)) + "; pids 40000, 40001"
        check(len(lk) == 1 and lk[0]["ranks_text"] == want, "odd: ranks_text %r" % (lk[0]["ranks_text"] if lk else None))
    return finish()


def finish():
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ranks: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
