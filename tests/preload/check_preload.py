#!/usr/bin/env python3
"""check_preload.py — integration checks of libvramtrace.so that need more than one
run or a look at the snapshot files (CTest runs one CHECK per test).

usage: check_preload.py CHECK --lib LIBVRAMTRACE --bin BINDIR --simcuda SIMCUDA_DIR

Every check asserts exact values and exits 1 with a message on the first mismatch.
Snapshot files are read as JSON Lines: every line but a torn (unterminated) last one
must parse (docs/snapshot-format.md).

Sanitizer builds (tests/reliability/sanitize_run.sh) set VT_SANITIZER_PRELOAD to the
sanitizer runtime: every child then gets it first in LD_PRELOAD, because an
uninstrumented program (sh, python3) cannot load it later by dlopen. Unset: no change.
"""
import argparse
import glob
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from vramtrace.snapshots import FORMAT_VERSION, SnapshotError, decode_records  # noqa: E402
from vramtrace.snapshots import ZSTD_MAGIC, _zstd_decompressobj  # noqa: E402


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

    @staticmethod
    def preload(*libs, sep=":"):
        """LD_PRELOAD value for libs, led by $VT_SANITIZER_PRELOAD when that is set."""
        san = os.environ.get("VT_SANITIZER_PRELOAD")
        return sep.join(([san] if san else []) + list(libs))

    def env(self, preload=True, **extra):
        e = dict(os.environ)
        for k in list(e):
            if (k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") or k in ("LD_PRELOAD", "VT_EXPECT_TRACKED"):
                del e[k]
        e["LD_LIBRARY_PATH"] = self.simcuda
        if preload:
            e["LD_PRELOAD"] = self.preload(self.lib)
            e["VT_EXPECT_TRACKED"] = "1"
        elif self.preload():
            e["LD_PRELOAD"] = self.preload()
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
    if data.startswith(ZSTD_MAGIC):   # VRAMTRACE_COMPRESS=1: the text inside
        data = _zstd_decompressobj(path).decompress(data)
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
    expect(recs[0]["format"] == "vramtrace-snapshot" and recs[0]["version"] == FORMAT_VERSION, "bad header")
    check_site_records(path, recs)
    try:
        decode_records(recs, path)   # version 2 rows/deltas -> complete site dicts
    except SnapshotError as e:
        fail(str(e))
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


def check_site_records(path, recs):
    """The writer's version 3 and 4 rules as written: each site defined once by a
    "site" record before its first row; site rows of 9 columns in complete records,
    of 1 to 9 (the site, then differences without the trailing zeros) in deltas;
    periodic and step records may be deltas ("sites_delta": true; version 4 leaves
    the key out of complete records), every other trigger is complete; a delta is
    never the first snapshot."""
    defined = set()
    seen_snapshot = False
    for r in recs:
        if r.get("t") == "site":
            expect(r.get("id") not in defined, "%s: site %r defined twice" % (path, r.get("id")))
            defined.add(r.get("id"))
        if r.get("t") != "snapshot":
            continue
        delta = r.get("sites_delta", False)
        expect(delta in (True, False), "%s: snapshot seq %r with a sites_delta that is not a boolean" % (path, r.get("seq")))
        if delta:
            expect(r["trigger"] in ("periodic", "step"), "%s: a %s record is a delta" % (path, r["trigger"]))
            expect(seen_snapshot, "%s: the first snapshot is a delta" % path)
        for row in r["sites"]:
            expect(isinstance(row, list) and (1 <= len(row) <= 9 if delta else len(row) == 9),
                   "%s: site row %r" % (path, row))
            expect(row[0] in defined, "%s: row %r of an undefined site" % (path, row))
            expect(not delta or len(row) == 1 or row[-1] != 0, "%s: delta row %r ends in a zero" % (path, row))
        seen_snapshot = True


def files_in(d):
    return sorted(glob.glob(os.path.join(d, "vt.*.jsonl")) + glob.glob(os.path.join(d, "vt.*.jsonl.zst")))


def one_file(d):
    fs = files_in(d)
    expect(len(fs) == 1, "expected one snapshot file in %s, found %r" % (d, fs))
    return fs[0]


def snaps(recs, trigger=None):
    return [r for r in recs if r["t"] == "snapshot" and (trigger is None or r["trigger"] == trigger)]


# ---- checks ----

def check_compare(c):
    """Same stdout and exit code with and without the preload (return codes, errno)."""
    for argv in (["prog_runtime", "errors"], ["prog_runtime", "reset"], ["prog_runtime", "hostreg"], ["prog_resolver"]):
        a = c.run([c.prog(argv[0])] + argv[1:], preload=False)
        b = c.run([c.prog(argv[0])] + argv[1:], preload=True, VRAMTRACE_OUTPUT=c.outdir("cmp"))
        expect(a.returncode == 0, "%r without preload exited %d: %s" % (argv, a.returncode, a.stderr))
        expect(a.returncode == b.returncode, "%r exit %d vs %d: %s" % (argv, a.returncode, b.returncode, b.stderr))
        expect(a.stdout == b.stdout, "%r output differs:\n--- without\n%s--- with\n%s" % (argv, a.stdout, b.stdout))
        expect(a.stdout.strip() != "", "no output from %r" % argv)
    print("compare ok")


def check_hugeoom(c):
    """cudaMalloc(&p, (size_t)-1): the OOM snapshot's requested_bytes is clamped to
    2^63-1 (docs/snapshot-format.md "Records": every integer of the format fits a
    signed 64-bit reader), and the analyzer reads the file: the OOM is reported."""
    a = c.run([c.prog("prog_runtime"), "hugeoom"], preload=False)
    d = c.outdir("hugeoom")
    b = c.run([c.prog("prog_runtime"), "hugeoom"], VRAMTRACE_OUTPUT=d)
    expect(a.returncode == 0 and b.returncode == 0, "exit %d / %d: %s" % (a.returncode, b.returncode, b.stderr))
    expect(a.stdout == b.stdout, "output differs:\n--- without\n%s--- with\n%s" % (a.stdout, b.stdout))
    files = files_in(d)
    expect(len(files) == 1, "one snapshot file: %r" % files)
    recs = read_records(files[0])
    oom = snaps(recs, "oom")
    expect(len(oom) == 1, "one oom snapshot: %d" % len(oom))
    req = oom[0]["oom"]["requested_bytes"]
    expect(req == 2 ** 63 - 1, "requested_bytes %r, expected 2^63-1" % req)
    r = subprocess.run([os.path.join(c.bin, "vramtrace"), "report", "--format", "json", d],
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0, "report exit %d: %s" % (r.returncode, r.stderr))
    rep = json.loads(r.stdout)
    ooms = [o for p in rep["processes"] for o in p["ooms"]]
    expect(len(ooms) == 1 and ooms[0]["requested_bytes"] == 2 ** 63 - 1, "report ooms %r" % ooms)
    print("hugeoom ok")


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
    expect("leaky_step (prog_runtime) growing 1048576 bytes/step" in lines[0], "warning text: " + lines[0])
    recs = read_records(one_file(d), allow_torn=False)
    warned = [s for s in snaps(recs) if s["leak_warnings"]]
    expect(warned, "no snapshot records the leak warning")
    w = warned[-1]["leak_warnings"][0]
    expect(w["growth_bytes_per_step"] == 1 << 20 and w["growth_steps"] >= 5, "leak_warnings %r" % w)
    # churn of the temporary 4 MiB shows as an interval peak, not as growth
    steps = snaps(recs, "step")
    expect(len(steps) >= 15, "step snapshots: %d" % len(steps))
    print("leakwarn ok")


def check_leakstatic(c):
    """The online leak warning names a static function (no dynamic symbol: dladdr
    alone gives a wrong name or none) from the binary's .symtab, with its module."""
    d = c.outdir("leakstatic")
    p = c.run([c.prog("prog_runtime"), "leakstatic"], VRAMTRACE_OUTPUT=d, VRAMTRACE_LEAK_STEPS=5)
    expect(p.returncode == 0, "leakstatic failed: " + p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("vramtrace: possible leak:")]
    expect(len(lines) == 1 and lines[0].startswith(
        "vramtrace: possible leak: grow_static_cache (prog_runtime) growing 1048576 bytes/step"),
        "leakstatic: warning %r" % lines)
    print("leakstatic ok")


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
    bad = [n for n in names if not (n.startswith("cu") or n.startswith("vramtrace_") or n in ("dlsym", "dlopen", "dlerror", "dlclose", "dlinfo", "dl_iterate_phdr", "pipe2", "pthread_cancel", "__register_atfork", "_exit", "_Exit",
                                                                                                         "InitializeInjectionNvtx2", "InitializeInjectionNvtxExtension"))]
    expect(not bad, "unexpected exports: %r" % bad)
    for n in ("dlsym", "cuGetProcAddress_v2", "cuMemAlloc_v2", "cudaMalloc", "vramtrace_step",
              "vramtrace_snapshot", "vramtrace_live_bytes", "vramtrace_peak_bytes",
              "vramtrace_scope_begin", "vramtrace_scope_leaked_bytes", "vramtrace_annotate",
              "vramtrace_peak_interval_bytes", "vramtrace_enabled", "cudaGetDriverEntryPointByVersion", "pipe2", "pthread_cancel",
              "__register_atfork", "_exit", "_Exit", "dlopen", "dlerror", "dlclose", "dlinfo", "dl_iterate_phdr"):
        expect(n in names, "missing export " + n)
    print("exports ok (%d)" % len(names))


# ---- the preload must not change the program (descriptors, cancellation, paths) ----

def thread_exit_depth():
    """{"VRAMTRACE_DEPTH": $REL_DEPTH} when REL_DEPTH is set, else {}: for checks whose
    threads exit after unwinding. The ThreadSanitizer run (sanitize_run.sh thread) sets
    REL_DEPTH=0, because libunwind's thread-exit destructor (its per-thread cache)
    crashes TSan's runtime; Ctx.env drops an inherited VRAMTRACE_DEPTH."""
    return {"VRAMTRACE_DEPTH": os.environ["REL_DEPTH"]} if os.environ.get("REL_DEPTH") else {}


def run_in(c, argv, preload=True, cwd=None, umask=None, timeout=30, **extra):
    """Like Ctx.run, with a working directory and a umask for the child."""
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run(argv, env=c.env(preload, **extra), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, preexec_fn=pre)


def same_run(c, argv, what, cwd=None, timeout=30, **extra):
    """Runs argv without and with the preload; asserts identical stdout and exit status."""
    a = run_in(c, argv, preload=False, cwd=cwd, timeout=timeout, **extra)
    b = run_in(c, argv, preload=True, cwd=cwd, timeout=timeout, **extra)
    expect(a.returncode == b.returncode and a.stdout == b.stdout,
           "%s changed by the preload:\n--- without (%d)\n%s--- with (%d)\n%s%s" %
           (what, a.returncode, a.stdout, b.returncode, b.stdout, b.stderr))
    return a, b


def check_firstfd(c):
    """Warm-up (libunwind's validation pipe) takes no low fd: the first open() is 3."""
    d = c.outdir("firstfd")
    for extra in ({}, {"VRAMTRACE_DISABLE": "1", "VT_EXPECT_TRACKED": "0"}, {"VRAMTRACE_PYTHON": "off"}):
        p = c.run([c.prog("prog_fdsafe"), "firstopen"], VRAMTRACE_OUTPUT=d, **extra)
        expect(p.returncode == 0 and p.stdout == "first fd 3\n",
               "first open() under the preload %r: %r %s" % (extra, p.stdout, p.stderr))
    p = c.run([c.prog("prog_fdsafe"), "firstopen"], preload=False)
    expect(p.stdout == "first fd 3\n", "without the preload: %r" % p.stdout)
    expect(not os.path.exists(d), "a process that never touched CUDA created %s" % d)
    print("firstfd ok")


def check_inertfds(c):
    """A program that never calls CUDA has the same open descriptors with the preload
    as without (libunwind's validation pipe is opened at the first CUDA call only),
    and so has its forked child; nothing is written."""
    d = c.outdir("inertfds")
    p = c.run([c.prog("prog_fdsafe"), "fds"], preload=False)
    expect(p.returncode == 0 and p.stdout.startswith("parent: 0,1,2"),
           "without the preload: %r %s" % (p.stdout, p.stderr))
    for extra in ({}, {"VRAMTRACE_DISABLE": "1", "VT_EXPECT_TRACKED": "0"}, {"VRAMTRACE_PYTHON": "on"},
                  {"VRAMTRACE_INTERVAL_MS": "1"}):
        q = c.run([c.prog("prog_fdsafe"), "fds"], VRAMTRACE_OUTPUT=d, **extra)
        expect(q.returncode == 0 and q.stdout == p.stdout,
               "descriptors under the preload %r:\n%s--- without:\n%s%s" % (extra, q.stdout, p.stdout, q.stderr))
    expect(not os.path.exists(d), "a process that never touched CUDA created %s" % d)
    print("inertfds ok")


def mapped_objects(c, preload):
    """The shared objects /bin/cat maps (its /proc/self/maps), by path."""
    p = c.run(["/bin/cat", "/proc/self/maps"], preload=preload)
    expect(p.returncode == 0, "cat /proc/self/maps: %s" % p.stderr)
    return {f[5] for f in (l.split() for l in p.stdout.splitlines()) if len(f) >= 6 and ".so" in f[5]}


def check_inertmaps(c):
    """A program that never calls CUDA maps no shared object under the preload but
    libvramtrace and what it links itself (libc; a sanitizer build's runtimes):
    libunwind, libelf and libzstd (and liblzma, libz behind them) are loaded at the
    first CUDA call or allocation, not with the preload."""
    a, b = mapped_objects(c, False), mapped_objects(c, True)
    extra = {os.path.realpath(x) for x in b - a}
    ldd = subprocess.run(["ldd", c.lib], capture_output=True, text=True).stdout
    linked = {os.path.realpath(f[2]) for f in (l.split() for l in ldd.splitlines())
              if len(f) >= 3 and f[1] == "=>" and f[2].startswith("/")}
    lazy = ("libunwind", "libelf", "libzstd", "liblzma", "libz.")
    expect(os.path.realpath(c.lib) in extra, "libvramtrace not mapped: %r" % sorted(extra))
    bad = sorted(x for x in extra - linked - {os.path.realpath(c.lib)})
    expect(not bad, "objects mapped under the preload besides libvramtrace and its own: %r" % bad)
    early = sorted(x for x in extra if os.path.basename(x).startswith(lazy))
    expect(not early, "libraries needed only once CUDA is used mapped at start-up: %r" % early)
    print("inertmaps ok (%d objects besides the program's)" % len(extra))


def system_library(soname):
    """The file the loader finds for soname (ldconfig's cache), or None."""
    for ldc in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([ldc, "-p"], capture_output=True, text=True).stdout
        except OSError:
            continue
        for l in out.splitlines():
            f = l.strip().split(" => ")
            if len(f) == 2 and f[0].split()[0] == soname and "x86-64" in f[0]:
                return f[1]
    return None


def check_nolibs(c):
    """libzstd, libelf and libunwind missing where the program runs (each replaced by
    an empty file in a mount namespace, so dlopen fails): the program's output and
    status unchanged, one "vramtrace:" line per library, the stream written all the
    same, uncompressed (*.jsonl) and without stacks."""
    names = ("libzstd.so.1", "libelf.so.1", "libunwind.so.8")
    paths = [system_library(n) for n in names]
    if not all(paths) or not shutil.which("unshare") or \
            subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        print("nolibs skipped: needs unshare -rm (a mount namespace) and the libraries in ldconfig's cache")
        sys.exit(77)
    exe = c.prog("prog_runtime")
    base = c.run([exe, "kinds"], preload=False)
    expect(base.returncode == 0, "kinds without the preload: %s" % base.stderr)
    d = c.outdir("nolibs")
    hide = " && ".join("mount --bind /dev/null '%s'" % p for p in paths)
    r = subprocess.run(["unshare", "-rm", "sh", "-c", hide + ' && exec "$0" kinds', exe],
                       env=c.env(True, VRAMTRACE_OUTPUT=d, VRAMTRACE_COMPRESS=1), capture_output=True,
                       text=True, timeout=60)
    expect(r.returncode == base.returncode and r.stdout == base.stdout,
           "missing libraries changed the program: %d %r" % (r.returncode, r.stderr))
    vl = [l for l in r.stderr.splitlines() if l.startswith("vramtrace:")]
    expect(len(vl) == 3 and all(any(n in l for l in vl) for n in names),
           "one warning per missing library expected: %r" % r.stderr)
    f = one_file(d)
    expect(f.endswith(".jsonl"), "without libzstd the stream is plain text: %s" % f)
    recs = read_records(f)
    expect(any(r["t"] == "snapshot" for r in recs), "no snapshot written")
    framed = [r for r in recs if r["t"] == "stack" and r["frames"]]
    expect(not framed, "stacks captured without libunwind: %r" % framed[:1])
    print("nolibs ok: " + "; ".join(vl))


def check_daemonfds(c):
    """close-all daemon: its files get 3 and 4, libunwind's pipe and our snapshot file
    never touch them (reads, writes, closes), and tracing goes on (reopened file)."""
    w = c.outdir("daemon")
    os.makedirs(w)
    with open(os.path.join(w, "in.txt"), "w") as f:
        f.write("hello input\n")
    contents = []
    for preload in (False, True):
        d = c.outdir("daemon_out%d" % preload)
        p = run_in(c, [c.prog("prog_fdsafe"), "daemon", "in.txt", "out.txt"], preload=preload,
                   cwd=w, VRAMTRACE_OUTPUT=d, VRAMTRACE_INTERVAL_MS=50, **thread_exit_depth())
        expect(p.returncode == 0, "daemon (preload=%s) exited %d: %s" % (preload, p.returncode, p.stderr))
        with open(os.path.join(w, "out.txt")) as f, open(os.path.join(w, "out.txt.side")) as g:
            contents.append((p.stdout, f.read(), g.read()))
        with open(os.path.join(w, "in.txt")) as f:
            expect(f.read() == "hello input\n", "the program's input file was written to")
    expect(contents[0] == contents[1], "daemon changed by the preload:\n%r\n%r" % tuple(contents))
    expect(contents[0][0].startswith("in=3 out=4 side=5\n"), "fds %r" % contents[0][0])
    expect(contents[0][2] == "child\n", "out.txt.side %r" % contents[0][2])
    expect(contents[0][1] == "child\ncopied: hello input\n", "out.txt %r" % contents[0][1])
    fs = files_in(c.outdir("daemon_out1"))
    expect(len(fs) == 2, "parent and child files: %r" % fs)
    recs = [read_records(f) for f in fs]
    parent = [r for r in recs if snaps(r, "manual")]
    expect(len(parent) == 1, "one file with the manual snapshot")
    m = snaps(parent[0], "manual")[0]
    sizes = sorted(a[1] for a in m["allocations"])
    expect(sizes == [4096, 4097, 4098, 8192, 1 << 20], "tracked after close-all: %r" % sizes)
    expect(snaps(parent[0], "exit"), "no exit snapshot after the program closed our descriptor")
    print("daemonfds ok")


def check_lowfd(c):
    """Snapshots (periodic, every 1 ms here) never take a low descriptor, even for an
    instant: a program that closes 0 and opens a file always gets 0."""
    p = c.run([c.prog("prog_fdsafe"), "lowfd", "60000"], VRAMTRACE_OUTPUT=c.outdir("lowfd"),
              VRAMTRACE_INTERVAL_MS=1)
    expect(p.returncode == 0 and p.stdout == "open() did not return 0: 0 times\n",
           "lowfd: %r %s" % (p.stdout, p.stderr))
    recs = read_records(one_file(c.outdir("lowfd")))
    expect(len(snaps(recs, "periodic")) >= 5, "too few periodic snapshots to mean anything")
    print("lowfd ok")


def check_replacefd(c):
    """The program dup2()s its own file onto every other descriptor (ours included):
    not one byte of ours lands in its file, and tracing goes on in our own file."""
    w = c.outdir("replace")
    os.makedirs(w)
    d = c.outdir("replace_out")
    p = run_in(c, [c.prog("prog_fdsafe"), "replace", "user.txt"], cwd=w, VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0 and p.stdout == "replaced some\n", "replace: %r %s" % (p.stdout, p.stderr))
    with open(os.path.join(w, "user.txt")) as f:
        got = f.read()
    expect(got == "USER\n", "the program's file got our records: %r" % got[:200])
    recs = read_records(one_file(d))
    m = snaps(recs, "manual")
    expect(len(m) == 1 and len(m[0]["allocations"]) == 9, "manual snapshot after dup2: %r" % m)
    expect(snaps(recs, "exit"), "exit snapshot")
    print("replacefd ok")


def check_cancel(c):
    """A thread cancelled right before a hooked call or vramtrace_step: no deadlock,
    the same output as without the preload (deferred cancellation acts at the
    program's own cancellation point, never inside our bookkeeping)."""
    for mode in ("0", "1", "2", "3", "4", "5"):
        for extra in ({}, {"VRAMTRACE_DEPTH": "0"}, {"SIMCUDA_FAIL_AT": "3"},
                      {"SIMCUDA_FAIL_AT": "2", "VRAMTRACE_DEPTH": "0"}):
            try:
                same_run(c, [c.prog("prog_cancel"), mode], "prog_cancel %s %r" % (mode, extra),
                         timeout=15, VRAMTRACE_OUTPUT=c.outdir("cancel"),
                         **dict(thread_exit_depth(), **extra))
            except subprocess.TimeoutExpired:
                fail("prog_cancel %s %r hung (deadlock)" % (mode, extra))
    print("cancel ok")


def headers_and_children(d):
    """The header of every snapshot file in d by pid, and those of processes whose
    parent also wrote one (forked children)."""
    heads = {}
    for f in files_in(d):
        h = read_records(f)[0]
        heads[h["pid"]] = h
    return heads, [h for h in heads.values() if h["ppid"] in heads]


def check_cancelwait(c):
    """pthread_cancel is interposed (preload/capture/vt_cancel.h): the stack capture unwinds
    with cancellation enabled, and a cancel waits until no such unwind is in progress.
    prog_cancelwait stops a thread inside libunwind (its own dl_iterate_phdr, reached
    from libunwind) and reaches a cancellation point there once the cancel has
    returned: the thread must still die at its own cancellation point, after its
    cudaMalloc returned. A thread with a cancel pending must unwind guarded. Results
    of pthread_cancel, errno, joins: as without the preload."""
    prog = c.prog("prog_cancelwait")
    depth = thread_exit_depth()
    unwinds = depth.get("VRAMTRACE_DEPTH", "1") != "0"
    for mode in ("inside", "pending", "result", "loop"):
        inside = mode in ("inside", "pending")
        try:
            a, b = same_run(c, [prog, mode], "prog_cancelwait " + mode, timeout=30 if inside else 60,
                            VRAMTRACE_OUTPUT=c.outdir("cancelwait_" + mode), **depth)
        except subprocess.TimeoutExpired:
            fail("prog_cancelwait %s hung (deadlock)" % mode)
        expect(a.returncode == 0, "prog_cancelwait %s: exit %d\n%s%s" % (mode, a.returncode, a.stdout, a.stderr))
        if inside:
            expect("A cancelled\nA alloc returned: yes (rc=0)\n" in b.stdout,
                   "prog_cancelwait %s: the cancel acted inside the capture:\n%s%s" % (mode, b.stdout, b.stderr))
            expect("stopped inside libunwind: no" in a.stderr, "without the preload: %r" % a.stderr)
            want = "stopped inside libunwind: %s" % ("yes" if unwinds else "no")
            expect(want in b.stderr, "with the preload, want %r:\n%s" % (want, b.stderr))
        elif mode == "result":
            expect("cancel rc=0 errno=1234 join rc=0 PTHREAD_CANCELED" in b.stdout, "result: %r" % b.stdout)
    # fork while another thread is inside an unguarded unwind: the child's cancels do
    # not wait for that unwind (it is not the child's)
    # (A holds libunwind's frame-cache lock there: a child that unwinds again hangs, so
    # the child records without stacks and says so once)
    d = c.outdir("cancelwait_fork")
    try:
        a, b = same_run(c, [prog, "fork"], "prog_cancelwait fork", timeout=15, VRAMTRACE_OUTPUT=d, **depth)
    except subprocess.TimeoutExpired:
        fail("prog_cancelwait fork hung (the child's allocation, deadlock)")
    expect(a.returncode == 0 and "child cancel rc=0: fast, PTHREAD_CANCELED" in a.stdout,
           "prog_cancelwait fork without the preload: %d %r %r" % (a.returncode, a.stdout, a.stderr))
    want = "stopped inside libunwind: %s" % ("yes" if unwinds else "no")
    expect(want in b.stderr, "fork, with the preload, want %r:\n%s" % (want, b.stderr))
    vl = [l for l in b.stderr.splitlines() if l.startswith("vramtrace:")]
    expect(len(vl) == (1 if unwinds else 0) and all("without stacks" in l for l in vl),
           "fork: warnings %r" % vl)
    heads, kids = headers_and_children(d)
    expect(len(heads) == 2 and len(kids) == 1, "fork: files %r" % sorted(heads))
    expect(kids[0]["depth"] == 0 if unwinds else True, "fork: the child's header %r" % kids[0])
    # fork while the writer's lock is held and, meanwhile, a capture stops inside
    # libunwind: the fork's prepare takes our locks first and only then lets the
    # capture leave libunwind (and makes new ones wait): every child keeps its stacks
    d = c.outdir("cancelwait_forksettle")
    try:
        b = run_in(c, [prog, "forksettle"], timeout=60, VRAMTRACE_OUTPUT=d, **depth)
    except subprocess.TimeoutExpired:
        fail("prog_cancelwait forksettle hung")
    expect(b.returncode == 0 and "forksettle: 3 forks, 0 children failed" in b.stdout,
           "forksettle: %d %r %r" % (b.returncode, b.stdout, b.stderr))
    if unwinds:
        expect("A stopped inside libunwind 3 times" in b.stdout, "forksettle: %r" % b.stdout)
    heads, kids = headers_and_children(d)
    expect(len(kids) == 3, "forksettle: files %r" % sorted(heads))
    if unwinds:
        nost = [h["pid"] for h in kids if h["depth"] == 0]
        expect(not nost, "forksettle: children forked with a capture inside libunwind "
               "(recorded without stacks): %r" % nost)
    print("cancelwait ok")


def check_chdir(c):
    """Relative VRAMTRACE_OUTPUT / VRAMTRACE_PROMETHEUS are resolved at start-up: a
    chdir() before the first allocation does not move the output."""
    w = c.outdir("chdir")
    os.makedirs(os.path.join(w, "elsewhere"))
    p = run_in(c, [c.prog("prog_fdsafe"), "chdir", "elsewhere"], cwd=w,
               VRAMTRACE_OUTPUT="rel_out", VRAMTRACE_PROMETHEUS="rel_prom")
    expect(p.returncode == 0 and p.stdout == "ok\n", "chdir: %r %s" % (p.stdout, p.stderr))
    expect(not os.path.exists(os.path.join(w, "elsewhere", "rel_out")), "output followed chdir()")
    expect(not os.path.exists(os.path.join(w, "elsewhere", "rel_prom")), "textfile followed chdir()")
    recs = read_records(one_file(os.path.join(w, "rel_out")))
    expect(len(snaps(recs, "manual")) == 1, "manual snapshot")
    proms = glob.glob(os.path.join(w, "rel_prom", "vramtrace_*_*.prom"))
    expect(len(proms) == 1, "textfile vramtrace_<host>_<pid>.prom: %r" % proms)
    print("chdir ok")


def check_signal(c):
    """VRAMTRACE_SIGNAL takes only SIGUSR1, SIGUSR2 and real-time signals."""
    prog = [c.prog("prog_fdsafe"), "sigdisp"]
    d = c.outdir("signal")
    # SEGV's disposition without the preload (a sanitizer runtime installs its own
    # handler): the preload must leave it exactly as it was.
    base = c.run(prog, preload=False)
    segv = dict(l.split() for l in base.stdout.splitlines()).get("SEGV", "default")
    for bad in ("SEGV", "SIGSEGV", "11", "BUS", "FPE", "ILL", "PIPE", "CHLD", "ABRT", "KILL",
                "STOP", "INT", "TERM", "HUP", "RTMIN+99", "RTMAX-99", "RTMIN-1", "USR3"):
        p = c.run(prog, VRAMTRACE_OUTPUT=d, VRAMTRACE_SIGNAL=bad)
        expect(p.returncode == 0, "sigdisp failed: " + p.stderr)
        expect(p.stdout == "SEGV %s\nUSR1 handled\nUSR2 default\nRTMIN+2 default\n" % segv,
               "VRAMTRACE_SIGNAL=%s: %r" % (bad, p.stdout))
        warn = [l for l in p.stderr.splitlines() if "VRAMTRACE_SIGNAL" in l]
        expect(len(warn) == 1, "VRAMTRACE_SIGNAL=%s: one warning expected, got %r" % (bad, p.stderr))
    for good, want in (("USR2", "USR2"), ("SIGRTMIN+2", "RTMIN+2"), ("rtmin+2", "RTMIN+2"),
                       (str(signal.SIGRTMIN + 2), "RTMIN+2"), ("12", "USR2")):
        p = c.run(prog, VRAMTRACE_OUTPUT=d, VRAMTRACE_SIGNAL=good)
        lines = dict(l.split() for l in p.stdout.splitlines())
        expect(lines.get(want) == "handled" and lines.get("SEGV") == segv and p.stderr == "",
               "VRAMTRACE_SIGNAL=%s: %r %s" % (good, p.stdout, p.stderr))
    print("signal ok")


def check_umask(c):
    """umask 0777: our folder is 0700 and our file 0600 all the same."""
    d = c.outdir("umask")
    p = run_in(c, [c.prog("prog_runtime"), "kinds"], umask=0o777, VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "kinds under umask 0777: " + p.stderr)
    expect(os.stat(d).st_mode & 0o777 == 0o700, "folder mode %o" % (os.stat(d).st_mode & 0o777))
    f = one_file(d)
    expect(os.stat(f).st_mode & 0o777 == 0o600, "file mode %o" % (os.stat(f).st_mode & 0o777))
    expect(len(snaps(read_records(f), "manual")) == 1, "records")
    print("umask ok")


def check_twocopies(c):
    """Two different copies in LD_PRELOAD: the first one traces, the second forwards."""
    copy = os.path.join(c.tmp, "copy", "libvramtrace.so")
    os.makedirs(os.path.dirname(copy))
    with open(c.lib, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    for order in ((c.lib, copy), (copy, c.lib)):
        d = c.outdir("two_%s" % ("a" if order[0] == c.lib else "b"))
        e = c.env(True, VRAMTRACE_OUTPUT=d)
        e["LD_PRELOAD"] = c.preload(*order, sep=" ")
        p = subprocess.run([c.prog("prog_runtime"), "kinds"], env=e, capture_output=True, text=True,
                           timeout=60)
        expect(p.returncode == 0 and p.stderr == "", "two copies: %d %s" % (p.returncode, p.stderr))
        recs = read_records(one_file(d))
        m = snaps(recs, "manual")
        expect(len(m) == 1 and len(m[0]["allocations"]) == 10, "two copies: allocations counted %r" %
               (len(m[0]["allocations"]) if m else None))
    print("twocopies ok")


def check_privpool(c):
    """A pool the program creates is sampled like the default pool: its reserve counts
    in pool_reserved_bytes while it lives, and not after cudaMemPoolDestroy."""
    d = c.outdir("privpool")
    p = c.run([c.prog("prog_runtime"), "privpool"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "privpool failed: %d %s" % (p.returncode, p.stderr))
    st = snaps(read_records(one_file(d)), "step")
    expect(len(st) == 2, "privpool: %d step snapshots" % len(st))
    res = [{dv["device"]: dv.get("pool_reserved_bytes") for dv in s["devices"]}.get(0) for s in st]
    expect(res[0] is not None and res[0] >= 8 << 20,
           "privpool: the created pool's reserve is not counted: %r" % res)
    expect(res[1] is not None and res[1] < 8 << 20,
           "privpool: the destroyed pool is still counted: %r" % res)
    print("privpool ok (%d, then %d bytes reserved)" % (res[0], res[1]))


def check_hostregflag(c):
    """Registered host memory is host_pinned with the flag "registered" (its site record
    and its exit row say so); allocated pinned memory has no flag; the report shows
    the flag beside the kind."""
    d = c.outdir("hostregflag")
    p = c.run([c.prog("prog_runtime"), "hostregflag"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "hostregflag failed: %d %s" % (p.returncode, p.stderr))
    recs = read_records(one_file(d))
    sites = [r for r in recs if r.get("t") == "site" and r.get("kind") == "host_pinned"]
    flags = sorted(tuple(s.get("flags", [])) for s in sites)
    expect(flags == [(), ("registered",)], "hostregflag: host_pinned site flags %r" % flags)
    ex = snaps(recs, "exit")
    expect(len(ex) == 1, "hostregflag: %d exit snapshots" % len(ex))
    rows = sorted((a[1], tuple(a[9]) if len(a) > 9 else ()) for a in ex[0]["allocations"]
                  if a[2] == "host_pinned")
    expect(rows == [(3000, ()), (10000, ("registered",))], "hostregflag: exit rows %r" % rows)
    r = subprocess.run([os.path.join(c.bin, "vramtrace"), "report", "--format", "json", d],
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode in (0, 1), "hostregflag: report failed %d %s" % (r.returncode, r.stderr))
    rep = json.loads(r.stdout)
    got = sorted((s["unfreed_at_exit_bytes"], tuple(s.get("flags", [])))
                 for proc in rep["processes"] for s in proc["sites"] if s["kind"] == "host_pinned")
    expect(got == [(3000, ()), (10000, ("registered",))], "hostregflag: report sites %r" % got)
    print("hostregflag ok")


def check_stepleaks(c):
    """Planted per-step leaks of host registration and multicast objects: `vramtrace
    report` finds each as a leak at its exact bytes per step, with its kind and flag
    (host_pinned registered 65536 B/step at register_step_buffer; vmm multicast 2 MiB/step
    at multicast_step_object), and nothing else leaks."""
    d = c.outdir("stepleaks")
    p = c.run([c.prog("prog_runtime"), "stepleaks"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "stepleaks failed: %d %s" % (p.returncode, p.stderr))
    r = subprocess.run([os.path.join(c.bin, "vramtrace"), "report", "--format", "json", d],
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0, "stepleaks: report %d %s" % (r.returncode, r.stderr))
    leaks = sorted((s["kind"], tuple(s.get("flags", [])), s["growth_bytes_per_step"], s["frames"][0]["function"])
                   for proc in json.loads(r.stdout)["processes"] for s in proc["sites"] if s["verdict"] == "leak")
    want = [("host_pinned", ("registered",), 65536, "register_step_buffer"),
            ("vmm", ("multicast",), 2 << 20, "multicast_step_object")]
    expect(leaks == want, "stepleaks: leaks %r, expected %r" % (leaks, want))
    print("stepleaks ok")


def check_exitworkers(c):
    """Workers that end with _exit holding 3 MiB each write no exit record: `vramtrace
    check` fails the run naming each worker's pid and its last live bytes (not
    "passed"), the parent passes that gate, and --allow-incomplete passes the run."""
    d = c.outdir("exitworkers")
    p = c.run([c.prog("prog_runtime"), "exitworkers"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "exitworkers failed: %d %s" % (p.returncode, p.stderr))
    files = sorted(files_in(d))
    expect(len(files) == 3, "exitworkers: %d snapshot files" % len(files))
    # each worker's 5 steps are on disk although _exit followed the last at once (the
    # step records are written by the writer thread; _exit waits for the queued ones)
    steps = sorted(len(snaps(read_records(f), "step")) for f in files)
    expect(steps == [0, 5, 5], "exitworkers: step records per file %r, want [0, 5, 5]" % steps)
    exe = os.path.join(c.bin, "vramtrace")
    r = subprocess.run([exe, "check", d], capture_output=True, text=True, timeout=60)
    msg = "ended without an exit record (killed or `_exit`); its last snapshot held 3 MiB live"
    expect(r.returncode == 1 and r.stdout.count(msg) == 2 and "passed" not in r.stdout,
           "exitworkers: check %d %r" % (r.returncode, r.stdout))
    r = subprocess.run([exe, "check", "--allow-incomplete", d], capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "passed (3 processes" in r.stdout,
           "exitworkers: check --allow-incomplete %d %r" % (r.returncode, r.stdout))
    # with the event trace, _exit also waits for the events noted so far: each worker's
    # trace holds its 3 MiB, and the 1 MiB allocated and freed after its last step
    d = c.outdir("exitworkers_trace")
    p = c.run([c.prog("prog_runtime"), "exitworkers"], VRAMTRACE_OUTPUT=d, VRAMTRACE_TRACE="1")
    expect(p.returncode == 0, "exitworkers traced failed: %d %s" % (p.returncode, p.stderr))
    evs = []
    for t in sorted(glob.glob(os.path.join(d, "*.trace"))):
        raw = open(t, "rb").read()[16:]
        evs.append(sorted((raw[i + 39], int.from_bytes(raw[i + 16:i + 24], "little"))
                          for i in range(0, len(raw) - len(raw) % 40, 40)))
    want = sorted([[(1, 1 << 20), (1, 3 << 20), (2, 1 << 20)]] * 2 + [[(1, 1 << 20), (2, 1 << 20)]])
    expect(sorted(evs) == want, "exitworkers traced: (op, size) per trace %r, want %r" % (sorted(evs), want))
    print("exitworkers ok")
def check_drvpool(c):
    """A private pool through the driver API (prog_runtime drvpool): each step
    snapshot's pool_reserved_bytes and pool_used_bytes of device 0 are the driver's own
    RESERVED_MEM_CURRENT and USED_MEM_CURRENT the program printed before the step
    (sampled, not our live bytes: the use is rounded), the reserve stays after the
    frees (retention 12 MiB at the third step), nothing after cuMemPoolDestroy; the
    program's output and exit status are the same without the preload; vramtrace
    report shows the retention."""
    a = c.run([c.prog("prog_runtime"), "drvpool"], preload=False)
    d = c.outdir("drvpool")
    p = c.run([c.prog("prog_runtime"), "drvpool"], VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0 and a.returncode == 0, "drvpool failed: %d %d %s" % (a.returncode, p.returncode, p.stderr))
    expect(a.stdout == p.stdout, "drvpool: output changed by the preload:\n%s---\n%s" % (a.stdout, p.stdout))
    want = []
    for line in p.stdout.splitlines():
        f = line.split()
        if f[:2] == ["drvpool", "step"]:
            want.append((int(f[4]), int(f[6])))
    st = snaps(read_records(one_file(d)), "step")
    expect(len(st) == 4 and len(want) == 4, "drvpool: %d step snapshots, %d printed" % (len(st), len(want)))
    got = []
    for s in st:
        dv = {x["device"]: x for x in s["devices"]}[0]
        got.append((dv.get("pool_reserved_bytes"), dv.get("pool_used_bytes"), dv["kinds"].get("async", {}).get("live_bytes", 0)))
    for i, ((r, u), (gr, gu, live)) in enumerate(zip(want, got)):
        expect(gr == r and gu == u, "drvpool step %d: snapshot reserved %r used %r, driver %d %d" % (i + 1, gr, gu, r, u))
    expect(got[0][1] != got[0][2], "drvpool: pool_used_bytes %d is the live bytes, not the driver's sample" % got[0][1])
    expect(want[2][0] >= 12 << 20 and want[2][1] == 0, "drvpool: no retention after the frees: %r" % (want,))
    expect(want[3] == (0, 0) and got[3][0] == 0 and got[3][1] == 0, "drvpool: destroyed pool counted: %r" % (got,))
    vt = os.path.join(os.path.dirname(c.bin), "bin", "vramtrace")
    if not os.path.exists(vt):
        vt = os.path.join(c.bin, "vramtrace")
    rep = subprocess.run([vt, "report", "--format", "json", d], capture_output=True, text=True, timeout=60)
    expect(rep.returncode == 0, "drvpool: report failed: %s" % rep.stderr)
    js = json.loads(rep.stdout)
    devs = [dv for pr in js.get("processes", []) for dv in pr.get("devices", []) if dv.get("device") == 0]
    expect(devs and devs[0].get("pool_retention_max_bytes") == want[2][0],
           "drvpool: report's retention max %r, expected %d" % ([dv.get("pool_retention_max_bytes") for dv in devs], want[2][0]))
    print("drvpool ok (reserved/used per step %r; retention max %d in the report)" % (want, want[2][0]))


def check_multicast(c):
    """Multicast objects (prog_runtime multicast): the program's output and exit status
    are the same without the preload (every driver code forwarded, errors included);
    vramtrace report finds the planted leak, a 2 MiB multicast object never released,
    as unfreed at exit at exactly 2 MiB in a site of kind vmm with the multicast flag;
    the released object's site (4 MiB) frees to 0; the cuMemCreate memory bound into
    it is its own vmm site without the flag."""
    a = c.run([c.prog("prog_runtime"), "multicast"], preload=False)
    d = c.outdir("multicast")
    p = c.run([c.prog("prog_runtime"), "multicast"], VRAMTRACE_OUTPUT=d)
    expect(a.returncode == 0 and p.returncode == 0, "multicast failed: %d %d %s" % (a.returncode, p.returncode, p.stderr))
    expect(a.stdout == p.stdout, "multicast: output changed by the preload")
    vt = os.path.join(c.bin, "vramtrace")
    rep = subprocess.run([vt, "report", "--format", "json", d], capture_output=True, text=True, timeout=60)
    expect(rep.returncode == 0, "multicast: report failed: %s" % rep.stderr)
    pr = json.loads(rep.stdout)["processes"][0]
    expect(pr["unfreed_at_exit_bytes"] == 2 << 20, "multicast: unfreed at exit %r" % pr["unfreed_at_exit_bytes"])
    mc = [s for s in pr["sites"] if s["kind"] == "vmm" and s.get("flags") == ["multicast"]]
    plain = [s for s in pr["sites"] if s["kind"] == "vmm" and not s.get("flags")]
    expect(len(mc) == 2 and len(plain) == 1, "multicast: sites %r" % [(s["kind"], s.get("flags")) for s in pr["sites"]])
    leak = [s for s in mc if s["unfreed_at_exit_bytes"]]
    expect(len(leak) == 1 and leak[0]["unfreed_at_exit_bytes"] == 2 << 20 and "scenario_multicast" in leak[0]["title"],
           "multicast: planted leak %r" % [(s["title"], s["unfreed_at_exit_bytes"]) for s in mc])
    freed = [s for s in mc if not s["unfreed_at_exit_bytes"]]
    expect(freed[0]["peak_bytes"] == 4 << 20 and freed[0]["last_live_bytes"] == 0,
           "multicast: released object %r" % freed)
    expect(plain[0]["peak_bytes"] == 4 << 20 and plain[0]["last_live_bytes"] == 0, "multicast: bound memory %r" % plain)
    print("multicast ok (leak %d bytes at %s, kind vmm, flags multicast)" % (leak[0]["unfreed_at_exit_bytes"], leak[0]["title"]))


def check_twocopies_rtonly(c):
    """Two copies in LD_PRELOAD and a program linked with the runtime only (the runtime
    dlopens the driver after start-up, and every hook of the first copy found the
    second copy's as its real function): the first copy still finds the driver for its
    own queries, so the allocation has its device, the step snapshot the device's free
    memory, and the driver's functions are never the other copy's hooks (a loop)."""
    copy = os.path.join(c.tmp, "copy_rt", "libvramtrace.so")
    os.makedirs(os.path.dirname(copy))
    with open(c.lib, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    d = c.outdir("two_rtonly")
    e = c.env(True, VRAMTRACE_OUTPUT=d, VRAMTRACE_LOG="debug")
    e["LD_PRELOAD"] = c.preload(c.lib, copy, sep=" ")
    p = subprocess.run([c.prog("prog_rtonly")], env=e, capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0 and "malloc rc=0" in p.stdout, "two copies, runtime only: %d %r %r"
           % (p.returncode, p.stdout, p.stderr[-2000:]))
    recs = read_records(one_file(d))
    st = snaps(recs, "step")
    expect(len(st) == 1, "two copies, runtime only: step snapshots %d" % len(st))
    devs = {dv["device"]: dv for dv in st[0].get("devices", [])}
    expect(0 in devs and devs[0].get("free_bytes") is not None,
           "two copies, runtime only: step devices %r" % st[0].get("devices"))
    expect("device UUIDs of 1 CUDA device(s) known" in p.stderr,
           "two copies, runtime only: device UUIDs never known: %r" % p.stderr[-2000:])
    print("twocopies_rtonly ok")


def check_longpath(c):
    """A snapshot file name longer than PATH_MAX: one warning, nothing created under a
    truncated name. Needs a long host name (unshare --uts); without one, checks that a
    folder name that is too long is refused with one warning."""
    base = c.outdir("longpath")
    parts, n = [], len(base)
    while n < 4000:
        parts.append("d" * 200)
        n += 201
    d = os.path.join(base, *parts)
    d = d[: 4031 - 1]
    host = "h" * 64
    probe = subprocess.run(["unshare", "--uts", "sh", "-c", "hostname %s && hostname" % host],
                           capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != host:
        p = c.run([c.prog("prog_runtime"), "kinds"], VRAMTRACE_OUTPUT=d + "x" * 200, VT_EXPECT_TRACKED=0)
        expect(p.stderr.count("VRAMTRACE_OUTPUT") == 1, "too long folder: %r" % p.stderr)
        print("longpath ok (no unshare: folder limit only)")
        return
    e = c.env(True, VRAMTRACE_OUTPUT=d, VT_EXPECT_TRACKED="0")
    p = subprocess.run(["unshare", "--uts", "sh", "-c", 'hostname %s && exec "$0" kinds' % host,
                        c.prog("prog_runtime")], env=e, capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, "prog_runtime with a long name: %d %s" % (p.returncode, p.stderr))
    warn = [l for l in p.stderr.splitlines() if "too long" in l]
    expect(len(warn) == 1, "one 'too long' warning expected: %r" % p.stderr)
    made = [os.path.join(r, f) for r, _, fs in os.walk(base) for f in fs]
    expect(not made, "files created under a truncated name: %r" % made)
    print("longpath ok")


def check_actwait(c):
    """A fork while another thread's first CUDA call is activating the preload (held
    inside libunwind's warm-up by prog_actwait's own dl_iterate_phdr): the child, where
    that thread does not exist, activates by itself: its allocation is recorded and
    does not wait for an activation nobody runs."""
    prog = c.prog("prog_actwait")
    try:
        b = run_in(c, [prog, "fork"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_fork"))
    except subprocess.TimeoutExpired:
        fail("prog_actwait fork hung")
    expect(b.returncode == 0, "prog_actwait fork: exit %d\n%s%s" % (b.returncode, b.stdout, b.stderr))
    if "held inside activation: yes" not in b.stderr:
        print("SKIP: the activation did not reach libunwind (no stacks): %r" % b.stderr)
        sys.exit(77)
    m = re.search(r"child: recorded (\w+), waited (\d+) ms", b.stdout)
    expect(m is not None, "prog_actwait fork: no child line: %r" % b.stdout)
    expect(m.group(1) == "yes", "the fork child's allocation was not recorded: %r %r" % (b.stdout, b.stderr))
    expect(int(m.group(2)) < 100, "the fork child's allocation waited %s ms" % m.group(2))
    expect("were not recorded" not in b.stderr, "prog_actwait fork: %r" % b.stderr)
    # another thread's 3 allocations meet the activation held past the wait's bound:
    # bounded, and counted in the one exit line
    b = run_in(c, [prog, "count"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_count"))
    expect(b.returncode == 0, "prog_actwait count: exit %d\n%s%s" % (b.returncode, b.stdout, b.stderr))
    m = re.search(r"count: B waited (\d+) ms", b.stdout)
    expect(m is not None and int(m.group(1)) < 1000, "prog_actwait count: %r" % b.stdout)
    expect(len(re.findall(r"\b3 allocation call\(s\) on other threads were not recorded", b.stderr)) == 1,
           "prog_actwait count: want one exit line counting 3: %r" % b.stderr)
    # a thread that began waiting later stops when the first wait ran out (at most
    # one bound for the whole process)
    b = run_in(c, [prog, "stagger"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_stagger"))
    m = re.search(r"stagger: C waited (\d+) ms", b.stdout)
    expect(b.returncode == 0 and m is not None and int(m.group(1)) < 150,
           "prog_actwait stagger: C waited past the first wait's end: %r %r" % (b.stdout, b.stderr))
    # ... and a child forked afterwards, which lost nothing, does not count them again
    b = run_in(c, [prog, "countfork"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_countfork"))
    expect(b.returncode == 0 and len(re.findall(r"were not recorded", b.stderr)) == 1,
           "prog_actwait countfork: want one exit line (the parent's): %r" % b.stderr)
    # the activating thread's own signal handler allocates: forwards at once (it
    # must not wait for the activation it interrupted)
    b = run_in(c, [prog, "signal"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_signal"))
    m = re.search(r"signal: handler's call took (\d+) ms", b.stdout)
    expect(b.returncode == 0 and m is not None and int(m.group(1)) < 100, "prog_actwait signal: %r %r" % (b.stdout, b.stderr))
    # a library's constructor allocates, the loader's lock held, during the activation:
    # bounded (the activation may need that lock), never a deadlock
    ctor = os.path.join(os.path.dirname(c.lib), "libactwait_ctor.so")
    try:
        b = run_in(c, [prog, "dlopen", ctor], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_dlopen"))
    except subprocess.TimeoutExpired:
        fail("prog_actwait dlopen hung (a constructor's allocation during the activation)")
    m = re.search(r"ctor: cudaMalloc rc=0 in (\d+) ms", b.stdout)
    expect(b.returncode == 0 and "dlopen: loaded" in b.stdout and m is not None and int(m.group(1)) < 1000,
           "prog_actwait dlopen: %r %r" % (b.stdout, b.stderr))
    # the client API during the activation: bounded
    b = run_in(c, [prog, "api"], timeout=30, VRAMTRACE_OUTPUT=c.outdir("actwait_api"))
    m = re.search(r"api: slowest (\d+) ms", b.stdout)
    expect(b.returncode == 0 and m is not None and int(m.group(1)) < 1000, "prog_actwait api: %r %r" % (b.stdout, b.stderr))
    print("actwait ok")


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
