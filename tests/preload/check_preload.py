#!/usr/bin/env python3
"""check_preload.py — integration checks of libvramtrace.so that need more than one
run or a look at the snapshot files (CTest runs one CHECK per test).

usage: check_preload.py CHECK --lib LIBVRAMTRACE --bin BINDIR --simcuda SIMCUDA_DIR

Every check asserts exact values and exits 1 with a message on the first mismatch.
Snapshot files are read as JSON Lines: every line but a torn (unterminated) last one
must parse (docs/snapshot-format.md).
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


class Ctx:
    def __init__(self, a):
        self.lib = a.lib
        self.bin = a.bin
        self.simcuda = a.simcuda
        self.tmp = tempfile.mkdtemp(prefix="vt_preload_")

    def env(self, preload=True, **extra):
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("VRAMTRACE_") or k in ("LD_PRELOAD", "VT_EXPECT_TRACKED"):
                del e[k]
        e["LD_LIBRARY_PATH"] = self.simcuda
        if preload:
            e["LD_PRELOAD"] = self.lib
            e["VT_EXPECT_TRACKED"] = "1"
        e.update({k: str(v) for k, v in extra.items()})
        return e

    def run(self, argv, preload=True, timeout=60, **extra):
        p = subprocess.run(argv, env=self.env(preload, **extra), capture_output=True,
                           text=True, timeout=timeout)
        return p

    def prog(self, name):
        return os.path.join(self.bin, name)

    def outdir(self, name):
        return os.path.join(self.tmp, name)


def read_records(path, allow_torn=True):
    """Parses a snapshot file; returns the records. A torn last line is ignored."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last \n: b"" for a whole file
    if torn and not allow_torn:
        fail("%s: unterminated last line" % path)
    recs = []
    for i, line in enumerate(lines, 1):
        try:
            recs.append(json.loads(line))
        except ValueError as e:
            fail("%s:%d: not JSON: %s" % (path, i, e))
    expect(recs and recs[0].get("t") == "header", "%s: first record is not a header" % path)
    expect(recs[0]["format"] == "vramtrace-snapshot" and recs[0]["version"] == 1, "bad header")
    # every stack and module is defined before use
    modules, stacks = set(), set()
    for r in recs:
        if r["t"] == "module":
            modules.add(r["id"])
        elif r["t"] == "stack":
            for fr in r["frames"]:
                expect(fr[0] == -1 or fr[0] in modules, "%s: frame uses undefined module %r" % (path, fr))
            stacks.add(r["id"])
        elif r["t"] == "snapshot":
            for s in r["sites"]:
                expect(s["stack"] in stacks, "%s: site uses undefined stack %d" % (path, s["stack"]))
            for a in r["allocations"] or []:
                expect(a[4] in stacks, "%s: allocation uses undefined stack %d" % (path, a[4]))
    return recs


def files_in(d):
    return sorted(glob.glob(os.path.join(d, "vt.*.jsonl")))


def one_file(d):
    fs = files_in(d)
    expect(len(fs) == 1, "expected one snapshot file in %s, found %r" % (d, fs))
    return fs[0]


def snaps(recs, trigger=None):
    return [r for r in recs if r["t"] == "snapshot" and (trigger is None or r["trigger"] == trigger)]


# ---- checks ----

def check_compare(c):
    """Same stdout and exit code with and without the preload (return codes, errno)."""
    for argv in (["prog_runtime", "errors"], ["prog_runtime", "reset"], ["prog_resolver"]):
        a = c.run([c.prog(argv[0])] + argv[1:], preload=False)
        b = c.run([c.prog(argv[0])] + argv[1:], preload=True, VRAMTRACE_OUTPUT=c.outdir("cmp"))
        expect(a.returncode == 0, "%r without preload exited %d: %s" % (argv, a.returncode, a.stderr))
        expect(a.returncode == b.returncode, "%r exit %d vs %d: %s" % (argv, a.returncode, b.returncode, b.stderr))
        expect(a.stdout == b.stdout, "%r output differs:\n--- without\n%s--- with\n%s" % (argv, a.stdout, b.stdout))
        expect(a.stdout.strip() != "", "no output from %r" % argv)
    print("compare ok")


def check_kinds(c):
    d = c.outdir("kinds")
    p = c.run([c.prog("prog_runtime"), "kinds"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "kinds failed: " + p.stderr)
    want = int(p.stdout.split()[1])
    recs = read_records(one_file(d), allow_torn=False)
    m = snaps(recs, "manual")
    expect(len(m) == 1 and m[0]["label"] == "kinds", "manual snapshot missing")
    rows = m[0]["allocations"]
    expect(len(rows) == 10, "expected 10 live allocations (one per call), got %d" % len(rows))
    expect(sum(r[1] for r in rows) == want, "sizes %d != %d" % (sum(r[1] for r in rows), want))
    kinds = sorted(r[2] for r in rows)
    expect(kinds == sorted(["device"] * 3 + ["managed"] + ["host_pinned"] * 2 + ["async"] * 4),
           "kinds %r" % kinds)
    dev = m[0]["devices"][0]
    expect(dev["kinds"]["async"]["live_count"] == 4 and dev["pool_used_bytes"] == 4096 + 8192 + 512 + 256,
           "pool used %r" % dev["pool_used_bytes"])
    ex = snaps(recs, "exit")
    expect(len(ex) == 1 and ex[0]["allocations"] == [] and ex[0]["unfreed_at_exit"] is True, "exit snapshot")
    # a stack's first frame is the caller: the program itself, not libvramtrace
    stacks = {r["id"]: r for r in recs if r["t"] == "stack"}
    mods = {r["id"]: r for r in recs if r["t"] == "module"}
    for sid in set(r[4] for r in rows):
        f0 = stacks[sid]["frames"][0]
        expect(mods[f0[0]]["path"].endswith("prog_runtime"), "first frame in %s" % mods[f0[0]]["path"])
    expect(not any("libvramtrace" in m["path"] for m in mods.values()), "libvramtrace frames kept")
    print("kinds ok")


def check_triggers(c):
    d = c.outdir("triggers")
    p = c.run([c.prog("prog_runtime"), "snap"], VRAMTRACE_OUTPUT=d, VRAMTRACE_INTERVAL_MS=50)
    expect(p.returncode == 0, "snap failed: " + p.stderr)
    recs = read_records(one_file(d), allow_torn=False)
    got = set(r["trigger"] for r in snaps(recs))
    for t in ("step", "periodic", "signal", "oom", "manual", "exit"):
        expect(t in got, "no %s snapshot (got %r)" % (t, sorted(got)))
    seqs = [r["seq"] for r in snaps(recs)]
    expect(seqs == list(range(1, len(seqs) + 1)), "sequence numbers %r" % seqs)
    steps = snaps(recs, "step")
    expect([s["step"] for s in steps[:3]] == [1, 2, 3] and all(s["step_marked"] for s in steps), "steps")
    oom = snaps(recs, "oom")
    expect(len(oom) == 1, "one oom snapshot")
    o = oom[0]["oom"]
    expect(o["requested_bytes"] == 1 << 62 and o["result"] == 2 and o["api"] == "cudaMalloc", "oom %r" % o)
    expect(o["free_bytes"] is not None and o["total_bytes"] is not None, "oom free/total")
    expect(o["tracked_bytes"] == 6000, "oom tracked %r" % o["tracked_bytes"])
    expect(len(oom[0]["allocations"]) == 3, "oom live list")
    sig = snaps(recs, "signal")[0]
    expect(len(sig["allocations"]) == 3, "signal live list")
    ex = snaps(recs, "exit")[0]
    expect(sorted(a[1] for a in ex["allocations"]) == [5, 6, 2000, 3000], "exit list %r" % ex["allocations"])
    expect(ex["unfreed_at_exit"] is True, "unfreed flag")
    kd = ex["devices"][0]["kinds"]["device"]
    expect(kd["failed_total"] == 1 and kd["alloc_total"] == 5 and kd["free_total"] == 2, "counters %r" % kd)
    print("triggers ok")


def check_exit(c):
    d = c.outdir("exit")
    p = c.run([c.prog("prog_runtime"), "exit"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0 and p.stderr == "", "exit failed: " + p.stderr)
    recs = read_records(one_file(d), allow_torn=False)
    ex = snaps(recs, "exit")
    expect(len(ex) == 1, "one exit snapshot")
    # 70000 freed by the program's atexit handler; the rest survives the runtime's teardown
    expect(sorted(a[1] for a in ex[0]["allocations"]) == [20, 300, 4000], "unfreed %r" % ex[0]["allocations"])
    print("exit ok")


def check_fork(c):
    d = c.outdir("fork")
    p = c.run([c.prog("prog_runtime"), "fork"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "fork failed: " + p.stderr)
    fs = files_in(d)
    expect(len(fs) == 2, "two files (parent, child): %r" % fs)
    by_pid = {}
    for f in fs:
        recs = read_records(f, allow_torn=False)
        by_pid[recs[0]["pid"]] = recs
    (pa, ra), (pb, rb) = sorted(by_pid.items())
    parent, child = (ra, rb) if rb[0]["ppid"] == pa else (rb, ra)
    expect(child[0]["ppid"] == parent[0]["pid"], "child's ppid")
    pe = [a[1] for a in snaps(parent, "exit")[0]["allocations"]]
    ce = [a[1] for a in snaps(child, "exit")[0]["allocations"]]
    expect(pe == [1 << 20], "parent unfreed %r" % pe)
    expect(ce == [12345], "child unfreed %r (inherited must not show)" % ce)
    print("fork ok")


def check_sigkill(c):
    d = c.outdir("sigkill")
    env = c.env(True, VRAMTRACE_OUTPUT=d, VRAMTRACE_INTERVAL_MS=1)
    p = subprocess.Popen([c.prog("prog_runtime"), "loop"], env=env, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    expect(line.strip() == "ready", "loop did not start")
    time.sleep(0.7)
    p.send_signal(signal.SIGKILL)
    p.wait()
    f = one_file(d)
    recs = read_records(f, allow_torn=True)
    n = len(snaps(recs))
    expect(n >= 3, "only %d snapshots before the kill" % n)
    expect(not snaps(recs, "exit"), "no exit snapshot after SIGKILL")
    print("sigkill ok: %d whole snapshots" % n)


def check_leakwarn(c):
    d = c.outdir("leak")
    p = c.run([c.prog("prog_runtime"), "leak"], VRAMTRACE_OUTPUT=d, VRAMTRACE_LEAK_STEPS=5)
    expect(p.returncode == 0, "leak failed: " + p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("vramtrace: possible leak:")]
    expect(len(lines) == 1, "one leak warning expected, got %r" % p.stderr)
    expect("leaky_step growing 1048576 bytes/step" in lines[0], "warning text: " + lines[0])
    recs = read_records(one_file(d), allow_torn=False)
    warned = [s for s in snaps(recs) if s["leak_warnings"]]
    expect(warned, "no snapshot records the leak warning")
    w = warned[-1]["leak_warnings"][0]
    expect(w["growth_bytes_per_step"] == 1 << 20 and w["growth_steps"] >= 5, "leak_warnings %r" % w)
    # churn of the temporary 4 MiB shows as an interval peak, not as growth
    steps = snaps(recs, "step")
    expect(len(steps) >= 15, "step snapshots: %d" % len(steps))
    print("leakwarn ok")


def check_nocuda(c):
    d = c.outdir("nocuda")
    p = c.run(["/bin/sh", "-c", "exit 3"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 3 and p.stderr == "", "sh under preload: %d %r" % (p.returncode, p.stderr))
    p = c.run([c.prog("prog_runtime"), "nothing"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 2, "usage exit")
    expect(not os.path.exists(d), "a process that never touched CUDA created %s" % d)
    print("nocuda ok")


def check_disabled(c):
    d = c.outdir("disabled")
    p = c.run([c.prog("prog_runtime"), "kinds"], VRAMTRACE_OUTPUT=d, VRAMTRACE_DISABLE=1, VT_EXPECT_TRACKED=0)
    expect(p.returncode == 0, "disabled run failed: " + p.stderr)
    expect(not os.path.exists(d), "VRAMTRACE_DISABLE=1 wrote files")
    print("disabled ok")


def check_faults(c):
    base = c.run([c.prog("prog_runtime"), "churn"], preload=False)
    expect(base.returncode == 0, "churn baseline")
    # the table's own memory runs out after a while: latched off, program unchanged
    d = c.outdir("tableoom")
    p = c.run([c.prog("prog_runtime"), "churn"], VRAMTRACE_OUTPUT=d, VRAMTRACE_TEST_FAIL_ALLOC_AT=6,
              VT_EXPECT_TRACKED=0)
    expect(p.returncode == base.returncode and p.stdout == base.stdout, "tableoom changed the program")
    vl = [l for l in p.stderr.splitlines() if l.startswith("vramtrace:")]
    expect(len(vl) == 1 and "out of memory" in vl[0], "tableoom warnings %r" % p.stderr)
    for f in files_in(d):
        read_records(f)
    # the output folder cannot be created
    p = c.run([c.prog("prog_runtime"), "churn"], VRAMTRACE_OUTPUT="/proc/vramtrace-no/x", VT_EXPECT_TRACKED=0)
    expect(p.returncode == base.returncode and p.stdout == base.stdout, "unwritable changed the program")
    vl = [l for l in p.stderr.splitlines() if l.startswith("vramtrace:")]
    expect(len(vl) == 1 and "cannot create" in vl[0], "unwritable warnings %r" % p.stderr)
    # a bad setting: one warning, default used, program unchanged
    d = c.outdir("badenv")
    p = c.run([c.prog("prog_runtime"), "churn"], VRAMTRACE_OUTPUT=d, VRAMTRACE_DEPTH="lots",
              VRAMTRACE_FROBNICATE=1)
    expect(p.returncode == 0, "badenv run: " + p.stderr)
    vl = [l for l in p.stderr.splitlines() if l.startswith("vramtrace:")]
    expect(len(vl) == 2, "badenv warnings %r" % p.stderr)
    hdr = read_records(one_file(d))[0]
    expect(hdr["depth"] == 32, "default depth")
    print("faults ok")


def check_exports(c):
    out = subprocess.run(["nm", "-D", "--defined-only", c.lib], capture_output=True, text=True).stdout
    names = sorted(l.split()[-1] for l in out.splitlines() if l.strip())
    bad = [n for n in names if not (n.startswith("cu") or n.startswith("vramtrace_") or n == "dlsym")]
    expect(not bad, "unexpected exports: %r" % bad)
    for n in ("dlsym", "cuGetProcAddress_v2", "cuMemAlloc_v2", "cudaMalloc", "vramtrace_step",
              "vramtrace_snapshot", "vramtrace_live_bytes", "vramtrace_peak_bytes",
              "vramtrace_scope_begin", "vramtrace_scope_leaked_bytes", "vramtrace_annotate",
              "vramtrace_peak_interval_bytes", "vramtrace_enabled", "cudaGetDriverEntryPointByVersion"):
        expect(n in names, "missing export " + n)
    print("exports ok (%d)" % len(names))


CHECKS = {n[6:]: f for n, f in globals().items() if n.startswith("check_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=sorted(CHECKS))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--simcuda", required=True)
    a = ap.parse_args()
    CHECKS[a.check](Ctx(a))


if __name__ == "__main__":
    main()
