#!/usr/bin/env python3
"""NVTX as vramtrace's front door (preload/interpose/vt_nvtx.c), checked on prog_nvtx.c.

  check_nvtx.py steps      --step-range train_step, through `vramtrace run` and through
                           LD_PRELOAD + NVTX_INJECTION64_PATH + VRAMTRACE_STEP_RANGE:
                           one step snapshot per outermost "train_step" range (12), the
                           planted leak at exactly 327680 bytes/step, the temporary as
                           churn, the marks as labels bounded to one a second; a
                           NVTX_INJECTION64_PATH the user set is kept, with a note.
  check_nvtx.py same       without --step-range the NVTX calls change nothing: the
                           report (sites, verdicts, bytes, steps) and the record triggers
                           are those of the same run without NVTX injection.
  check_nvtx.py startend   start/end ranges: "trainer:train_step" and "train_step" give
                           12 steps, ":train_step" (the default domain: two a step) 24.
  check_nvtx.py suballoc   a 64 MiB cudaMalloc heap registered with the NVTX memory API:
                           the kept region's site (keep_region, kind region) a leak at
                           exactly 196608 bytes/step, the returned regions churn, the
                           device's live bytes the heap's at every snapshot, the
                           process's unfreed bytes the heap alone, no device exhaustion
                           forecast from the region leak, the leak shown inside the
                           heap's allocation (text and JSON "inside_heap").
  check_nvtx.py unregister resize, reset and heap unregister free the regions; unknown
                           handles are ignored; a region of a forgotten heap is ignored.
  check_nvtx.py edges      what comes before the first step is no step: a whole
                           train_step range before any CUDA call, marks, other ranges,
                           periodic snapshots (VRAMTRACE_INTERVAL_MS 0 and 50) before the
                           first train_step ends: step snapshots 1..5, the report's step
                           count 5 and its curve at steps 1..5 only.
  check_nvtx.py marks      600 marks in well under a second: one written, the rest after
                           it; the exit record's nvtx_marks_not_written counts them, and
                           `vramtrace report` shows them (text and JSON).
  check_nvtx.py nocuda     NVTX calls in a process that never calls CUDA: no file, the
                           same threads and descriptors as without the preload.
Exit 0 when every check holds; one "FAIL:" line and exit 1 otherwise.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

STEPS = 12
LEAK_BYTES = 327680
KEEP_BYTES = 196608
HEAP_BYTES = 64 << 20
MiB = 1 << 20


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def env(a, preload, **extra):
    e = {k: v for k, v in os.environ.items()
         if not (k.startswith("VRAMTRACE_") or k.startswith("NVTX_INJECTION") or k in ("LD_PRELOAD", "VT_EXPECT_TRACKED"))}
    e["LD_LIBRARY_PATH"] = a.simcuda
    e["VRAMTRACE_COMPRESS"] = "0"       # plain *.jsonl, read here
    e["VRAMTRACE_INTERVAL_MS"] = "0"    # no periodic snapshots: steps are the marks only
    san = os.environ.get("VT_SANITIZER_PRELOAD")
    libs = ([san] if san else []) + ([a.lib] if preload else [])
    if libs:
        e["LD_PRELOAD"] = ":".join(libs)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def prog(a):
    return os.path.join(a.bin, "prog_nvtx")


def run_preload(a, mode, d, **extra):
    p = subprocess.run([prog(a), mode], env=env(a, True, VRAMTRACE_OUTPUT=d, **extra),
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, "%s exited %d: %s" % (mode, p.returncode, p.stderr))
    return p


def run_cli(a, mode, d, *opts, **extra):
    e = env(a, False, **extra)
    e["VRAMTRACE_LIB"] = a.lib
    if os.environ.get("VT_SANITIZER_PRELOAD"):
        e["LD_PRELOAD"] = os.environ["VT_SANITIZER_PRELOAD"]
    p = subprocess.run([a.vramtrace, "run", "-o", d, *opts, "--", prog(a), mode], env=e,
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, "vramtrace run %s exited %d: %s" % (mode, p.returncode, p.stderr))
    return p


def records(d):
    """The stream's records, version 4's delta records given back what they leave out
    (python/vramtrace/snapshots.py decode_records)."""
    files = glob.glob(os.path.join(d, "*.jsonl"))
    expect(len(files) == 1, "one stream expected in %s, got %r" % (d, os.listdir(d) if os.path.isdir(d) else None))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    from vramtrace import snapshots as vts
    return vts.decode_records([json.loads(l) for l in open(files[0]) if l.strip()], files[0])


def snapshots(d):
    return [r for r in records(d) if r.get("t") == "snapshot"]


def report(a, d):
    p = subprocess.run([a.vramtrace, "report", "--format", "json", d], capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, "vramtrace report: %d %s" % (p.returncode, p.stderr))
    procs = json.loads(p.stdout)["processes"]
    expect(len(procs) == 1, "one process expected, got %d" % len(procs))
    return procs[0]


def step_count(d):
    return len([s for s in snapshots(d) if s["trigger"] == "step"])


def leak_of(proc, name, kind):
    sites = [s for s in proc["sites"] if name in s["title"]]
    expect(len(sites) == 1, "one site titled %s expected: %r" % (name, [(s["title"], s["kind"], s["verdict"]) for s in proc["sites"]]))
    s = sites[0]
    expect(s["kind"] == kind, "%s: kind %r, expected %s" % (name, s["kind"], kind))
    return s


def check_steps(a, tmp):
    for how in ("cli", "env"):
        d = os.path.join(tmp, "steps_" + how)
        t0 = time.monotonic()
        if how == "cli":
            run_cli(a, "steps", d, "--step-range", "train_step")
        else:
            run_preload(a, "steps", d, NVTX_INJECTION64_PATH=a.lib, VRAMTRACE_STEP_RANGE="train_step")
        took = time.monotonic() - t0
        n = step_count(d)
        expect(n == STEPS, "%s: %d step snapshots, expected %d (one per outermost train_step)" % (how, n, STEPS))
        steps = [s["step"] for s in snapshots(d) if s["trigger"] == "step"]
        expect(steps == list(range(1, STEPS + 1)), "%s: step numbers %r" % (how, steps))
        proc = report(a, d)
        expect(proc["step_marked"], "%s: steps not marked" % how)
        expect(proc["steps"] == STEPS, "%s: the report counts %d steps, expected %d" % (how, proc["steps"], STEPS))
        expect(proc.get("step_range") == "train_step", "%s: report step_range %r" % (how, proc.get("step_range")))
        lk = leak_of(proc, "leak_one_step", "device")
        expect(lk["verdict"] == "leak" and lk["growth_bytes_per_step"] == LEAK_BYTES,
               "%s: leak %r at %r bytes/step, expected leak at %d" % (how, lk["verdict"], lk["growth_bytes_per_step"], LEAK_BYTES))
        tmpsite = leak_of(proc, "temporary", "device")
        expect(tmpsite["verdict"] != "leak", "%s: the temporary is %r" % (how, tmpsite["verdict"]))
        labels = [l["label"] for l in proc["labels"]]
        expect(labels and labels[0] == "step done", "%s: labels %r" % (how, labels))
        expect(len(labels) <= 1 + int(took) + 1, "%s: %d labels in %.1f s: marks not bounded" % (how, len(labels), took))
    # another NVTX tool the user chose is kept (and said so): then no steps reach us
    d = os.path.join(tmp, "steps_other_tool")
    p = run_cli(a, "steps", d, "--step-range", "train_step", NVTX_INJECTION64_PATH="/nonexistent/libtool.so")
    expect("NVTX_INJECTION64_PATH=/nonexistent/libtool.so kept" in p.stderr, "no note of the kept tool: %r" % p.stderr)
    expect(step_count(d) == 0, "steps with another NVTX tool: %d" % step_count(d))
    print("steps ok: %d steps from NVTX ranges, leak %d B/step, marks as labels (vramtrace run and LD_PRELOAD)" % (STEPS, LEAK_BYTES))


def summary(a, d):
    proc = report(a, d)
    sites = sorted((s["title"], s["kind"], s["verdict"], s["growth_bytes_per_step"], s["unfreed_at_exit_bytes"],
                    s["peak_bytes"]) for s in proc["sites"])
    trig = [s["trigger"] for s in snapshots(d)]
    return {"sites": sites, "steps": proc["steps"], "step_marked": proc["step_marked"],
            "labels": [l["label"] for l in proc["labels"]], "triggers": trig,
            "unfreed": proc["unfreed_at_exit_bytes"], "peak": proc["peak_bytes"]}


def check_same(a, tmp):
    for mode in ("steps", "suballoc"):
        plain, inj = os.path.join(tmp, "plain_" + mode), os.path.join(tmp, "inj_" + mode)
        run_preload(a, mode, plain)
        run_preload(a, mode, inj, NVTX_INJECTION64_PATH=a.lib)
        x, y = summary(a, plain), summary(a, inj)
        if mode == "steps":
            expect(x == y, "%s: NVTX injection without --step-range changed the report:\n%r\n%r" % (mode, x, y))
            expect("step" not in x["triggers"] and not x["labels"], "%s: steps or labels without the flag: %r" % (mode, x))
        else:   # the memory extension is always on: only the regions are new
            expect(not [s for s in x["sites"] if s[1] == "region"], "regions without injection: %r" % x["sites"])
            expect([s for s in x["sites"] if s[1] != "region"] == [s for s in y["sites"] if s[1] != "region"],
                   "suballoc: sites other than regions differ:\n%r\n%r" % (x["sites"], y["sites"]))
            expect(x["unfreed"] == y["unfreed"] == HEAP_BYTES and x["peak"] == y["peak"] == HEAP_BYTES,
                   "suballoc: totals differ: %r %r" % ((x["unfreed"], x["peak"]), (y["unfreed"], y["peak"])))
            expect(x["triggers"] == y["triggers"], "suballoc: triggers differ %r %r" % (x["triggers"], y["triggers"]))
    print("same ok: without --step-range NVTX ranges and marks change nothing; regions add only region sites")


def check_startend(a, tmp):
    for rng, want in (("trainer:train_step", STEPS), ("train_step", STEPS), (":train_step", 2 * STEPS)):
        d = os.path.join(tmp, "se_" + rng.replace(":", "_"))
        run_cli(a, "startend", d, "--step-range", rng)
        n = step_count(d)
        expect(n == want, "--step-range %s: %d steps, expected %d" % (rng, n, want))
        if want == STEPS:
            lk = leak_of(report(a, d), "leak_one_step", "device")
            expect(lk["verdict"] == "leak" and lk["growth_bytes_per_step"] == LEAK_BYTES,
                   "%s: leak %r %r" % (rng, lk["verdict"], lk["growth_bytes_per_step"]))
    print("startend ok: domain:name, any domain, default domain")


def check_suballoc(a, tmp):
    d = os.path.join(tmp, "suballoc")
    run_cli(a, "suballoc", d, "--step-range", "train_step")
    expect(step_count(d) == STEPS, "suballoc: %d steps" % step_count(d))
    proc = report(a, d)
    lk = leak_of(proc, "keep_region", "region")
    expect(lk["verdict"] == "leak" and lk["growth_bytes_per_step"] == KEEP_BYTES,
           "kept region: %r at %r bytes/step, expected leak at %d" % (lk["verdict"], lk["growth_bytes_per_step"], KEEP_BYTES))
    temps = [(s["kind"], s["verdict"], s["peak_bytes"]) for s in proc["sites"] if "temp_region" in s["title"]]
    expect(temps == [("region", "churn", MiB)] * 2,   # two calls of temp_region: two stacks
           "returned regions: %r" % temps)
    heap = [s for s in proc["sites"] if s["kind"] == "device"]
    expect(len(heap) == 1 and heap[0]["unfreed_at_exit_bytes"] == HEAP_BYTES, "the heap's site: %r" % heap)
    ih = lk.get("inside_heap")
    expect(ih and ih["site"] == heap[0]["id"] and ih["address"] > 0, "kept region's heap: %r" % ih)
    expect(proc["unfreed_at_exit_bytes"] == HEAP_BYTES and proc["peak_bytes"] == HEAP_BYTES,
           "process unfreed %r peak %r, expected the heap alone" % (proc["unfreed_at_exit_bytes"], proc["peak_bytes"]))
    dev = proc["devices"][0]
    expect(dev["leak_bytes_per_step"] == 0 and dev["exhaustion_step"] is None,
           "a region leak counted against the device: %r" % dev)
    p = subprocess.run([a.vramtrace, "report", d], capture_output=True, text=True, timeout=60)
    expect("inside heap 0x%x of run_suballoc" % ih["address"] in p.stdout and
           "use up device" not in p.stdout, "text report:\n" + p.stdout)
    snaps = snapshots(d)
    for s in snaps:
        dev = s["devices"][0]
        expect(dev["live_bytes"] == HEAP_BYTES, "snapshot %d: device live %r, expected the heap's %d" % (s["seq"], dev["live_bytes"], HEAP_BYTES))
    last = snaps[-1]["devices"][0]["kinds"]
    expect(last["region"]["live_bytes"] == STEPS * KEEP_BYTES, "region live at exit %r" % last["region"])
    expect(last["device"]["live_bytes"] == HEAP_BYTES, "device kind live at exit %r" % last["device"])
    print("suballoc ok: kept region a leak at %d B/step (kind region), returned regions churn, device = heap" % KEEP_BYTES)


def check_unregister(a, tmp):
    d = os.path.join(tmp, "unregister")
    run_cli(a, "unregister", d, "--step-range", "train_step")
    steps = [s for s in snapshots(d) if s["trigger"] == "step"]
    expect(len(steps) == 6, "unregister: %d steps" % len(steps))
    region = [s["devices"][0]["kinds"].get("region", {}).get("live_bytes", 0) for s in steps]
    want = [2 * KEEP_BYTES, KEEP_BYTES + KEEP_BYTES // 2, 0, KEEP_BYTES, 0, 0]
    expect(region == want, "region live per step %r, expected %r" % (region, want))
    dev = [s["devices"][0]["live_bytes"] for s in steps]
    expect(dev == [HEAP_BYTES] * 6, "device live per step %r" % dev)
    print("unregister ok: resize, reset, heap unregister; unknown handles ignored")


EDGE_STEPS = 5


def check_edges(a, tmp):
    for interval in (0, 50):
        d = os.path.join(tmp, "edges_%d" % interval)
        run_preload(a, "edges", d, NVTX_INJECTION64_PATH=a.lib, VRAMTRACE_STEP_RANGE="train_step",
                    VRAMTRACE_INTERVAL_MS=interval)
        snaps = snapshots(d)
        steps = [s["step"] for s in snaps if s["trigger"] == "step"]
        expect(steps == list(range(1, EDGE_STEPS + 1)),
               "interval %d: step snapshots at steps %r, expected 1..%d" % (interval, steps, EDGE_STEPS))
        before = [(s["trigger"], s["step"]) for s in snaps if s["seq"] < min(x["seq"] for x in snaps if x["trigger"] == "step")]
        expect(all(st == 0 for _, st in before), "interval %d: records before the first step: %r" % (interval, before))
        proc = report(a, d)
        expect(proc["steps"] == EDGE_STEPS, "interval %d: the report counts %d steps, expected %d (records before "
               "the first step: %r)" % (interval, proc["steps"], EDGE_STEPS, before))
        curve = proc["total_live_bytes_by_step"]
        want = [[k, k * LEAK_BYTES] for k in range(1, EDGE_STEPS + 1)]
        expect(curve == want, "interval %d: total live by step %r, expected %r" % (interval, curve, want))
        expect(proc["step_marked"] and "in step" in [l["label"] for l in proc["labels"]],
               "interval %d: step_marked %r labels %r" % (interval, proc["step_marked"], proc["labels"]))
    print("edges ok: marks, other ranges, periodic snapshots and a range opened before CUDA: %d steps, no other" % EDGE_STEPS)


MARKS = 50


def check_marks(a, tmp):
    d = os.path.join(tmp, "marks")
    t0 = time.monotonic()
    run_preload(a, "marks", d, NVTX_INJECTION64_PATH=a.lib, VRAMTRACE_STEP_RANGE="train_step")
    took = time.monotonic() - t0
    total = STEPS * MARKS
    snaps = snapshots(d)
    labels = [s["label"] for s in snaps if s.get("label")]
    expect(labels and labels[0] == "tick", "labels %r" % labels)
    expect(len(labels) <= 1 + int(took) + 1, "%d labels in %.1f s: marks not bounded" % (len(labels), took))
    exit_rec = [s for s in snaps if s["trigger"] == "exit"]
    expect(len(exit_rec) == 1, "one exit record expected: %d" % len(exit_rec))
    n = exit_rec[0].get("nvtx_marks_not_written", 0)
    expect(n == total - len(labels), "exit record: nvtx_marks_not_written %r, expected %d (%d marks, %d written)"
           % (n, total - len(labels), total, len(labels)))
    proc = report(a, d)
    expect(proc.get("nvtx_marks_not_written") == n, "JSON report: nvtx_marks_not_written %r, expected %d"
           % (proc.get("nvtx_marks_not_written"), n))
    p = subprocess.run([a.vramtrace, "report", d], capture_output=True, text=True, timeout=60)
    line = "%d NVTX marks not written (rate bound)" % n
    expect(line in p.stdout, "text report lacks %r:\n%s" % (line, p.stdout))
    # a run without marks: no key, 0 in the JSON report, no line
    d2 = os.path.join(tmp, "marks_none")
    run_preload(a, "startend", d2, NVTX_INJECTION64_PATH=a.lib, VRAMTRACE_STEP_RANGE="train_step")
    ex = [s for s in snapshots(d2) if s["trigger"] == "exit"][0]
    expect("nvtx_marks_not_written" not in ex, "no marks, yet the exit record has %r" % ex.get("nvtx_marks_not_written"))
    expect(report(a, d2).get("nvtx_marks_not_written") == 0, "no marks: JSON report not 0")
    p = subprocess.run([a.vramtrace, "report", d2], capture_output=True, text=True, timeout=60)
    expect("NVTX mark" not in p.stdout, "no marks, yet the text report says:\n" + p.stdout)
    print("marks ok: %d marks, %d written, %d counted in the exit record and shown by the report" % (total, len(labels), n))


def check_nocuda(a, tmp):
    base = subprocess.run([prog(a), "nocuda"], env=env(a, False), capture_output=True, text=True, timeout=60)
    d = os.path.join(tmp, "nocuda")
    p = run_preload(a, "nocuda", d, NVTX_INJECTION64_PATH=a.lib, VRAMTRACE_STEP_RANGE="train_step")
    expect(base.returncode == 0, "nocuda without the preload: %d %s" % (base.returncode, base.stderr))
    expect(p.stdout == base.stdout, "threads/descriptors differ:\n%s%s" % (base.stdout, p.stdout))
    expect(not os.path.exists(d) or not os.listdir(d), "files written in %s" % d)
    expect("vramtrace:" not in p.stderr, "stderr: %r" % p.stderr)
    print("nocuda ok: %s" % p.stdout.strip().splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=("steps", "same", "startend", "suballoc", "unregister", "nocuda", "edges", "marks"))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--simcuda", required=True)
    ap.add_argument("--vramtrace", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vt_nvtx_")
    {"steps": check_steps, "same": check_same, "startend": check_startend, "suballoc": check_suballoc,
     "unregister": check_unregister, "nocuda": check_nocuda, "edges": check_edges, "marks": check_marks}[a.check](a, tmp)


if __name__ == "__main__":
    main()
