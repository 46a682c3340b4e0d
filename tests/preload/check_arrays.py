#!/usr/bin/env python3
"""check_arrays.py — CUDA arrays under libvramtrace.so, checks that need more than one
run or a look at the snapshot files and the report (tests/preload/prog_arrays.c,
prog_texture.cu).

usage: check_arrays.py CHECK --lib LIBVRAMTRACE --bin BINDIR --simcuda SIMCUDA_DIR

  compare  every prog_arrays scenario, with the simulated driver's sizes and in strict
           mode (SIMCUDA_ARRAY_REQUIREMENTS=strict: no size, as a real driver answers
           for ordinary arrays), prints the same return codes and errno and exits the
           same with and without the preload (with it, the program also asserts the
           exact live bytes after each event)
  counts   one record per array whichever layer fired, failures counted with their
           kind; the flag logical_size exactly when the driver gave no size
  leak     the planted array leak: `vramtrace report` names leaky_array_step, kind
           array, at its exact bytes per step (409600: the driver's size; 400000
           logical, flagged); a program that only uses arrays writes its snapshots
  nvcc     the texture program built by nvcc -cudart shared runs to its end under the
           preload and its snapshot counts its array (skipped without nvcc)
Exit 0 ok, 1 with a message on the first mismatch.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

SCENARIOS = ("runtime", "driver", "reset", "leak")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


class Ctx:
    def __init__(self, a):
        self.lib, self.bin, self.simcuda = a.lib, a.bin, a.simcuda
        self.tmp = tempfile.mkdtemp(prefix="vt_arrays_")

    def run(self, argv, preload, out=None, strict=False):
        e = {k: v for k, v in os.environ.items()
             if not (k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") and k not in ("LD_PRELOAD", "VT_EXPECT_TRACKED",
                                                              "SIMCUDA_ARRAY_REQUIREMENTS")}
        e["LD_LIBRARY_PATH"] = self.simcuda
        san = os.environ.get("VT_SANITIZER_PRELOAD")
        libs = ([san] if san else []) + ([self.lib] if preload else [])
        if libs:
            e["LD_PRELOAD"] = ":".join(libs)
        if preload:
            e["VT_EXPECT_TRACKED"] = "1"
            e["VRAMTRACE_OUTPUT"] = out
        if strict:
            e["SIMCUDA_ARRAY_REQUIREMENTS"] = "strict"
        return subprocess.run(argv, env=e, capture_output=True, text=True, timeout=60)

    def prog(self, scenario, strict=False):
        """Runs prog_arrays SCENARIO under the preload; returns (process, output dir)."""
        d = os.path.join(self.tmp, scenario + ("_strict" if strict else ""))
        p = self.run([os.path.join(self.bin, "prog_arrays"), scenario], True, d, strict)
        expect(p.returncode == 0, "%s (strict %s) under the preload exited %d: %s"
               % (scenario, strict, p.returncode, p.stderr))
        return p, d


def records(d):
    fs = glob.glob(os.path.join(d, "vt.*.jsonl"))
    expect(len(fs) == 1, "expected one snapshot file in %s, found %r" % (d, fs))
    with open(fs[0]) as fh:
        return [json.loads(l) for l in fh if l.strip()]


def exit_snapshot(recs):
    ex = [r for r in recs if r.get("t") == "snapshot" and r["trigger"] == "exit"]
    expect(len(ex) == 1, "one exit snapshot, found %d" % len(ex))
    return ex[0]


def check_compare(c):
    for strict in (False, True):
        for s in SCENARIOS:
            a = c.run([os.path.join(c.bin, "prog_arrays"), s], False, strict=strict)
            b, _ = c.prog(s, strict)
            expect(a.returncode == 0, "%s without the preload exited %d: %s" % (s, a.returncode, a.stderr))
            expect(a.stdout == b.stdout, "%s (strict %s) output differs:\n--- without\n%s--- with\n%s"
                   % (s, strict, a.stdout, b.stdout))
            expect(s == "leak" or a.stdout.count("errno 4242") >= 4, "%s: too little output: %r" % (s, a.stdout))
    print("compare ok")


def check_counts(c):
    # scenario: (alloc_total, failed_total, oom_total) of kind array at exit
    want = {"runtime": (4, 3, 1), "driver": (5, 4, 0), "reset": (4, 0, 0), "leak": (40, 0, 0)}
    # scenario: alloc_bytes_total at exit, (the driver's sizes, logical sizes); see the
    # sizes in prog_arrays.c (a deferred-mapping array counts 0)
    total = {"runtime": (2900480, 2670524), "driver": (2182144, 1120872),
             "reset": (1114112, 1087744), "leak": (50135040, 28971520)}
    for strict in (False, True):
        for s, (allocs, failed, ooms) in want.items():
            _, d = c.prog(s, strict)
            recs = records(d)
            dev = exit_snapshot(recs)["devices"][0]
            k = dev["kinds"].get("array")
            expect(k is not None, "%s: no array kind in %r" % (s, dev["kinds"]))
            got = (k["alloc_total"], k["failed_total"], k["oom_total"])
            expect(got == (allocs, failed, ooms), "%s (strict %s): array allocs/failed/oom %r, expected %r"
                   % (s, strict, got, (allocs, failed, ooms)))
            expect(k["alloc_total"] == k["free_total"] or s in ("reset", "leak"),
                   "%s: %d allocations, %d frees" % (s, k["alloc_total"], k["free_total"]))
            sites = [r for r in recs if r.get("t") == "site" and r["kind"] == "array"]
            expect(sites, "%s: no array site" % s)
            flagged = [r for r in recs if r.get("t") == "site" and "logical_size" in r.get("flags", [])]
            expect(all(r["kind"] == "array" for r in flagged), "%s: logical_size on a non-array site" % s)
            expect(k["alloc_bytes_total"] == total[s][strict], "%s (strict %s): %d bytes allocated, expected %d"
                   % (s, strict, k["alloc_bytes_total"], total[s][strict]))
            rows = [a for r in recs if r.get("t") == "snapshot"
                    for a in (r.get("allocations") or []) if a[2] == "array"]
            expect(rows or s in ("driver", "reset"), "%s: no array allocation row" % s)
            for a in rows:
                has = len(a) > 9 and "logical_size" in (a[9] or [])
                expect(has == strict, "%s (strict %s): allocation row %r" % (s, strict, a))
    print("counts ok")


def check_leak(c):
    report = os.path.join(c.bin, "vramtrace")
    for strict, per_step in ((False, 409600), (True, 400000)):
        p, d = c.prog("leak", strict)
        expect(("leak_bytes_per_step %d" % per_step) in p.stdout, "program says %r" % p.stdout)
        recs = records(d)
        steps = [r for r in recs if r.get("t") == "snapshot" and r["trigger"] == "step"]
        expect(len(steps) >= 10, "a program that only uses arrays wrote %d step snapshots" % len(steps))
        r = subprocess.run([report, "report", "--format", "json", d], capture_output=True, text=True, timeout=60)
        expect(r.returncode == 0, "report exit %d: %s" % (r.returncode, r.stderr))
        sites = json.loads(r.stdout)["processes"][0]["sites"]
        leaks = [s for s in sites if s["verdict"] == "leak"]
        expect(len(leaks) == 1, "one leak expected, got %r" % [(s["title"], s["verdict"]) for s in sites])
        s = leaks[0]
        expect(s["kind"] == "array" and s["growth_bytes_per_step"] == per_step,
               "leak %s kind %s at %r bytes/step, expected array at %d" % (s["title"], s["kind"],
                                                                         s["growth_bytes_per_step"], per_step))
        expect(s["title"].startswith("leaky_array_step"), "leak title %r" % s["title"])
        expect(("logical_size" in (s.get("flags") or [])) == strict, "leak flags %r" % s.get("flags"))
        temp = [x for x in sites if x is not s]
        expect(all(x["verdict"] != "leak" and x["kind"] == "array" for x in temp), "temporaries %r" % temp)
    print("leak ok")


def check_nvcc(c):
    prog = os.path.join(c.bin, "prog_texture")
    if not os.path.exists(prog):
        print("nvcc: prog_texture not built (no nvcc): skipped")
        return
    d = os.path.join(c.tmp, "nvcc")
    p = c.run([prog], True, d)
    expect(p.returncode == 0 and "texture program on simcuda: ok" in p.stdout,
           "prog_texture exited %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    k = exit_snapshot(records(d))["devices"][0]["kinds"]["array"]
    expect((k["alloc_total"], k["free_total"], k["peak_bytes"]) == (1, 1, 524288), "array counts %r" % k)
    print("nvcc ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=("compare", "counts", "leak", "nvcc"))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--simcuda", required=True)
    a = ap.parse_args()
    globals()["check_" + a.check](Ctx(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
