#!/usr/bin/env python3
"""test_cli_export.py - `vramtrace export` (CTest analyzer_export).

  test_cli_export.py export VRAMTRACE TESTDIR   torch pickle (pickle module + memory_viz rules),
                                                perfetto JSON, folded stacks
"""
import json
import os
import re
import shutil
import sys
import tempfile

from cli_common import check, run, golden, report_json, main


# Opcodes that PyTorch's memory_viz JavaScript unpickler handles (../shared/docs/prior-art.md §1).
JS_PICKLE_OPS = {"PROTO", "FRAME", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEM", "SETITEMS", "APPEND", "APPENDS",
                 "SHORT_BINUNICODE", "BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT", "TUPLE1",
                 "TUPLE2", "TUPLE3", "NONE", "NEWTRUE", "NEWFALSE", "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET",
                 "LONG_BINGET", "STOP"}


def stream_records(setdir):
    f = [x for x in os.listdir(setdir) if x.endswith(".jsonl")][0]
    return [json.loads(l) for l in open(os.path.join(setdir, f)) if l.endswith("\n")]


def t_export_torch(exe, testdir, tmp):
    import pickle
    import pickletools
    for name in ("oom_frag-step", "oom_exhaust-periodic", "leak_churn-step", "reset-step"):
        d = golden(testdir, name)
        out = os.path.join(tmp, name + ".pickle")
        r = run([exe, "export", "--format", "torch", "-o", out, d])
        check(r.returncode == 0, "%s: torch export exit %d %s" % (name, r.returncode, r.stderr))
        data = open(out, "rb").read()
        check(data[:2] == b"\x80\x04", "%s: not pickle protocol 4: %r" % (name, data[:2]))
        ops = {op.name for op, _, _ in pickletools.genops(data)}
        check(ops <= JS_PICKLE_OPS, "%s: opcodes memory_viz cannot read: %s" % (name, sorted(ops - JS_PICKLE_OPS)))
        snap = pickle.loads(data)
        check(set(snap) >= {"segments", "device_traces"}, "%s: keys %r" % (name, sorted(snap)))
        recs = stream_records(d)
        lists = [x for x in recs if x.get("t") == "snapshot" and x.get("allocations") is not None]
        last = [a for a in (lists[-1]["allocations"] if lists else []) if a[2] != "host_pinned"]
        segs = snap["segments"]
        check(len(segs) == len(last), "%s: %d segments, the last live list has %d" % (name, len(segs), len(last)))
        check(sum(sg["total_size"] for sg in segs) == sum(a[1] for a in last), "%s: segment bytes differ" % name)
        rep = report_json(exe, d)
        site_frames = {tuple(f["signature"] for f in st["frames"]) for p in rep["processes"] for st in p["sites"]}
        for sg in segs:
            check({"device", "address", "total_size", "stream", "blocks", "frames"} <= set(sg), "%s: segment keys %r" % (name, sorted(sg)))
            for b in sg["blocks"]:
                check(sg["address"] <= b["address"] and b["address"] + b["size"] <= sg["address"] + sg["total_size"],
                      "%s: block outside its segment" % name)
                check(b["state"] == "active_allocated" and set(b) >= {"size", "requested_size", "frames"}, "%s: block %r" % (name, b))
            fr = sg["frames"]
            check(all(set(f) == {"filename", "line", "name"} and isinstance(f["name"], str) and isinstance(f["filename"], str)
                      for f in fr), "%s: frame keys/types %r" % (name, fr[:1]))
            # innermost first: the same order as the report's frames (the CUDA caller first, main near the end)
            check(tuple(f["name"] for f in fr) in site_frames, "%s: frames %r are not a report site's, innermost first"
                  % (name, [f["name"] for f in fr]))
        ooms = [x["oom"] for x in recs if x.get("t") == "snapshot" and x.get("oom")]
        tr = [e for dev in snap["device_traces"] for e in dev]
        got = [e for e in tr if e["action"] == "oom"]
        check(len(got) == len(ooms), "%s: %d oom entries, %d OOM records" % (name, len(got), len(ooms)))
        for e, o in zip(got, ooms):
            check(e["size"] == o["requested_bytes"] and e["device_free"] == (o["free_bytes"] or 0), "%s: oom entry %r" % (name, e))
        for dev in snap["device_traces"]:
            ts = [e["time_us"] for e in dev]
            check(ts == sorted(ts), "%s: trace not in time order" % name)
            # replay backwards from the segments, as memory_viz does: every event must fit the state
            live = {b["address"] for sg in segs for b in sg["blocks"]}
            segset = {sg["address"] for sg in segs}
            for e in reversed(dev):
                a = e.get("addr")
                if e["action"] == "alloc":
                    check(a in live, "%s: alloc of 0x%x not live when replayed" % (name, a)); live.discard(a)
                elif e["action"] == "free_completed":
                    check(a not in live, "%s: free of 0x%x while live" % (name, a)); live.add(a)
                elif e["action"] == "segment_alloc":
                    check(a in segset, "%s: segment_alloc of unknown 0x%x" % (name, a)); segset.discard(a)
                elif e["action"] == "segment_free":
                    check(a not in segset, "%s: segment_free of a live segment" % name); segset.add(a)
        allocs = [e for e in tr if e["action"] == "alloc"]
        check(len(allocs) >= len(last), "%s: %d alloc entries for %d live blocks" % (name, len(allocs), len(last)))
    # several processes: torch writes one
    r = run([exe, "export", "--format", "torch", "-o", os.path.join(tmp, "two.pickle"), golden(testdir, "two_ranks-step")])
    check(r.returncode == 2 and "one process" in r.stderr, "two processes to torch: %d %r" % (r.returncode, r.stderr))


def t_export_perfetto(exe, testdir, tmp):
    for name in ("oom_frag-step", "leak_churn-periodic", "two_ranks-step"):
        d = golden(testdir, name)
        r = run([exe, "export", "--format", "perfetto", d])
        check(r.returncode == 0, "%s: perfetto exit %d %s" % (name, r.returncode, r.stderr))
        doc = json.loads(r.stdout)
        ev = doc["traceEvents"]
        rep = report_json(exe, d)
        procs = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
        check(len(procs) == len(rep["processes"]), "%s: %d process names" % (name, len(procs)))
        last = {}
        for e in ev:
            if e["ph"] != "C":
                continue
            check(isinstance(e["args"].get("bytes"), int) and isinstance(e["ts"], (int, float)), "%s: counter %r" % (name, e))
            k = (e["pid"], e["name"])
            check(k not in last or last[k][0] <= e["ts"], "%s: counter %s goes back in time" % (name, e["name"]))
            last[k] = (e["ts"], e["args"]["bytes"])
        for p in rep["processes"]:
            pid = [e["pid"] for e in procs if ("pid %d " % p["pid"]) in e["args"]["name"]][0]
            steps = [e for e in ev if e["ph"] == "i" and e["pid"] == pid and e["name"].startswith("step ")]
            check(len(steps) == p["steps"], "%s: %d step instants, %d steps" % (name, len(steps), p["steps"]))
            oo = [e for e in ev if e["ph"] == "i" and e["pid"] == pid and e["name"].startswith("OOM ")]
            check(len(oo) == len(p["ooms"]), "%s: %d OOM instants, %d OOMs" % (name, len(oo), len(p["ooms"])))
            for e, o in zip(oo, p["ooms"]):
                check(e["args"]["verdict"] == o["verdict"] and e["args"]["requested_bytes"] == o["requested_bytes"],
                      "%s: OOM instant %r vs %r" % (name, e["args"], o))
            want = sum(st["last_live_bytes"] for st in p["sites"] if st["device"] == 0)
            got = last.get((pid, "gpu0 live bytes"), (0, None))[1]
            check(got == want, "%s: last gpu0 live bytes %r, the report's sites end at %d" % (name, got, want))
            kinds = {st["kind"] for st in p["sites"] if st["device"] == 0}
            for k in kinds:
                check((pid, "gpu0 %s live bytes" % k) in last, "%s: no counter track for kind %s" % (name, k))


def t_export_collapsed(exe, testdir, tmp):
    line_re = re.compile(r"^(\S.*) (\d+)$")
    for name in ("leak_churn-step", "oom_frag-periodic", "two_ranks-step"):
        d = golden(testdir, name)
        rep = report_json(exe, d)
        sites = [st for p in rep["processes"] for st in p["sites"]]
        for metric, key in (("live", "last_live_bytes"), ("leaked", "leaked_bytes"), ("peak", "peak_bytes")):
            r = run([exe, "export", "--format", "collapsed", "--metric", metric, d])
            check(r.returncode == 0, "%s %s: exit %d %s" % (name, metric, r.returncode, r.stderr))
            total, leaves = 0, set()
            for l in r.stdout.splitlines():
                m = line_re.match(l)
                check(m is not None, "%s %s: not a folded line: %r" % (name, metric, l))
                if not m:
                    continue
                frames = m.group(1).split(";")
                check(all(frames), "%s: empty frame in %r" % (name, l))
                total += int(m.group(2))
                leaves.add(frames[-1])
                if len(rep["processes"]) > 1:
                    check(re.match(r"rank \d+, pid \d+ on ", frames[0]) is not None, "%s: no process root in %r" % (name, l))
                else:
                    check(frames[0] in ("__libc_start_main", "_start", "main"), "%s: root-first order broken: %r" % (name, l))
            want = sum(st[key] for st in sites if (metric != "leaked" or st["verdict"] == "leak"))
            check(total == want, "%s %s: folded total %d, report %d" % (name, metric, total, want))
            def leaf(fr):
                if fr.get("file") and fr.get("line"):
                    return "%s (%s:%d)" % (fr["function"], os.path.basename(fr["file"]), fr["line"])
                return fr["function"]
            want_leaves = {leaf(st["frames"][0]) for st in sites if st[key] and (metric != "leaked" or st["verdict"] == "leak")}
            check(leaves == want_leaves, "%s %s: leaves %r, expected the CUDA callers %r" % (name, metric, leaves, want_leaves))
    for bad in (["--format", "collapsed", "--metric", "bogus"], ["--format", "svg"], []):
        r = run([exe, "export"] + bad + [golden(testdir, "leak_churn-step")])
        check(r.returncode == 2, "export %r: exit %d, expected 2" % (bad, r.returncode))
    out = os.path.join(tmp, "exists.folded")
    open(out, "w").write("mine")
    r = run([exe, "export", "--format", "collapsed", "-o", out, golden(testdir, "leak_churn-step")])
    check(r.returncode == 2 and open(out).read() == "mine", "export -o overwrote an existing file")


def t_export(exe, testdir):
    tmp = tempfile.mkdtemp()
    try:
        t_export_torch(exe, testdir, tmp)
        t_export_perfetto(exe, testdir, tmp)
        t_export_collapsed(exe, testdir, tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main({"export": t_export}))
