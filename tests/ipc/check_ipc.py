#!/usr/bin/env python3
"""check_ipc.py CHECK --lib libvramtrace.so --bin DIR --simcuda DIR --vramtrace CLI

Two-process checks of imported memory (tests/ipc/CMakeLists.txt). Each runs a program
without the preload and with it, asserts identical stdout and exit status, then reads
both processes' snapshot files: the importer's ipc_import bytes after each event
(its labelled manual snapshots), its "imports" rows, that no process counts imported
bytes as its own, and `vramtrace report` over both files (and over the importer's
alone) naming the exporter's pid for what stayed open at exit."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

MiB = 1 << 20
failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="vt_ipc_")

    def env(self, preload, **extra):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("VRAMTRACE_") and k not in ("LD_PRELOAD", "VT_EXPECT_TRACKED")}
        e["LD_LIBRARY_PATH"] = self.a.simcuda
        san = os.environ.get("VT_SANITIZER_PRELOAD")
        libs = ([san] if san else []) + ([self.a.lib] if preload else [])
        if libs:
            e["LD_PRELOAD"] = ":".join(libs)
        if preload:
            e["VT_EXPECT_TRACKED"] = "1"
        e.update({k: str(v) for k, v in extra.items()})
        return e

    def run(self, argv, preload, **extra):
        return subprocess.run(argv, env=self.env(preload, **extra), capture_output=True, text=True, timeout=100)


def records(path):
    out = []
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def pids_of(stderr):
    return {k: int(v) for k, v in re.findall(r"^(exporter_pid|importer_pid) (\d+)$", stderr, re.M)}


def file_of(outdir, pid):
    files = [f for f in glob.glob(os.path.join(outdir, "*.jsonl")) if f.split(".")[-3] == str(pid)]
    expect(len(files) == 1, "one snapshot file of pid %d in %s: %r" % (pid, outdir, os.listdir(outdir)))
    return files[0] if files else None


def kind_live(snap, kind):
    return sum(d["kinds"][kind]["live_bytes"] for d in snap["devices"])


def same_run(c, argv, outdir):
    a = c.run(argv, preload=False)
    b = c.run(argv, preload=True, VRAMTRACE_OUTPUT=outdir)
    expect(a.returncode == 0, "%r without the preload exited %d: %s" % (argv, a.returncode, a.stderr))
    expect(b.returncode == a.returncode, "%r exit %d with the preload: %s" % (argv, b.returncode, b.stderr))
    expect(a.stdout == b.stdout, "%r output differs:\n--- without\n%s--- with\n%s" % (argv, a.stdout, b.stdout))
    return a, b


def check_legacy(c, mode):
    outdir = os.path.join(c.tmp, "legacy_" + mode)
    a, b = same_run(c, [os.path.join(c.a.bin, "prog_ipc_legacy"), mode], outdir)
    for line in ("handle stable 1", "open1 ok, data 1", "open2 same pointer 1", "open3 ok, data 1",
                 "close1 data still 1", "importer's write seen 1", "exporter done",
                 "open own handle: 201", "open junk handle: 400", "open bad flags: 1",
                 "close unknown: 1", "close small again: 1", "cudaFree imported: 1",
                 "get handle of inner pointer: 1"):
        expect(line in a.stdout.splitlines(), "%s: stdout lacks %r:\n%s" % (mode, line, a.stdout))
    pids = pids_of(b.stderr)
    expect(set(pids) == {"exporter_pid", "importer_pid"}, "pids in stderr: %r" % b.stderr)
    if len(pids) != 2:
        return
    exp_f, imp_f = file_of(outdir, pids["exporter_pid"]), file_of(outdir, pids["importer_pid"])
    if not exp_f or not imp_f:
        return
    BIG, SMALL = 64 * MiB, 1000
    # the importer: ipc_import bytes and rows after each event, never its own bytes
    want = {"open1": (BIG, [(BIG, 1)]), "open2": (BIG, [(BIG, 2)]),
            "open3": (BIG + SMALL, [(BIG, 2), (SMALL, 1)]), "close3": (BIG, [(BIG, 2)]),
            "close1": (BIG, [(BIG, 1)]), "errors": (BIG, [(BIG, 1)])}
    snaps = [r for r in records(imp_f) if r.get("t") == "snapshot"]
    by_label = {s["label"]: s for s in snaps if s.get("label")}
    for label, (nbytes, rows) in want.items():
        s = by_label.get(label)
        expect(s is not None, "importer snapshot %r missing" % label)
        if not s:
            continue
        expect(kind_live(s, "ipc_import") == nbytes, "%s %s: ipc_import live %d, want %d"
               % (mode, label, kind_live(s, "ipc_import"), nbytes))
        got = sorted(((r[2], r[3]) for r in s.get("imports", [])), reverse=True)
        expect(got == sorted(rows, reverse=True), "%s %s: imports %r, want %r" % (mode, label, got, rows))
        own = 4096
        expect(sum(d["live_bytes"] for d in s["devices"]) == own,
               "%s %s: device live bytes %r count imported memory" % (mode, label, [d["live_bytes"] for d in s["devices"]]))
    ipc_allocs = max(s["devices"][0]["kinds"]["ipc_import"]["alloc_total"] for s in snaps)
    expect(ipc_allocs == 2, "%s: ipc_import records %d, want 2 (BIG once, SMALL once)" % (mode, ipc_allocs))
    exit_rec = [s for s in snaps if s["trigger"] == "exit"]
    expect(len(exit_rec) == 1 and [(r[2], r[3]) for r in exit_rec[0].get("imports", [])] == [(BIG, 1)],
           "%s: importer's exit record imports: %r" % (mode, exit_rec and exit_rec[0].get("imports")))
    # the exporter: its two exports, its allocations unchanged by the import
    esnaps = [r for r in records(exp_f) if r.get("t") == "snapshot"]
    ex = [s for s in esnaps if s.get("label") == "exported"]
    expect(ex and len(ex[0].get("exports", [])) == 2, "%s: exporter's exports: %r" % (mode, ex and ex[0].get("exports")))
    expect(ex and kind_live(ex[0], "device") == BIG + SMALL and kind_live(ex[0], "ipc_import") == 0,
           "%s: exporter's device bytes after export" % mode)
    # digests join: the importer's open import is one of the exporter's exports
    if ex and exit_rec:
        edig = {d for _, d in ex[0]["exports"]}
        expect(all(r[1] in edig for r in exit_rec[0]["imports"]), "%s: import digest not exported" % mode)
    # the report over both processes: exporter's pid, nothing counted twice
    rep = subprocess.run([c.a.vramtrace, "report", outdir], capture_output=True, text=True)
    expect(rep.returncode in (0, 1), "report exit %d: %s" % (rep.returncode, rep.stderr))
    line = "imported, still open at exit: 64 MiB from pid %d" % pids["exporter_pid"]
    expect(line in rep.stdout, "%s: report lacks %r:\n%s" % (mode, line, rep.stdout))
    js = subprocess.run([c.a.vramtrace, "report", "--format", "json", outdir], capture_output=True, text=True)
    expect(js.returncode in (0, 1), "json report exit %d: %s" % (js.returncode, js.stderr))
    try:
        rj = json.loads(js.stdout)
    except ValueError:
        expect(False, "json report is not JSON: %s" % js.stdout[:400])
        return
    procs = {p["pid"]: p for p in rj["processes"]}
    imp, exp = procs.get(pids["importer_pid"]), procs.get(pids["exporter_pid"])
    expect(imp and imp["imports"] == [{"exporter_pid": pids["exporter_pid"], "bytes": BIG, "mappings": 1, "opens": 1}],
           "%s: importer's JSON imports %r" % (mode, imp and imp["imports"]))
    expect(imp and imp["imports_at_exit"] is True and imp["imported_open_bytes"] == BIG, "%s: imports_at_exit" % mode)
    expect(imp and imp["unfreed_at_exit_bytes"] == 0, "%s: importer's unfreed at exit %r counts imported memory"
           % (mode, imp and imp["unfreed_at_exit_bytes"]))
    expect(imp and all(t <= 4096 for _, t in imp["total_live_bytes_by_step"]),
           "%s: importer's totals count imported memory: %r" % (mode, imp and imp["total_live_bytes_by_step"]))
    expect(exp and exp["imports"] == [] and exp["unfreed_at_exit_bytes"] == 0, "%s: exporter's JSON" % mode)
    # the importer's file alone: the exporter is unknown
    rep1 = subprocess.run([c.a.vramtrace, "report", imp_f], capture_output=True, text=True)
    expect("imported, still open at exit: 64 MiB from an unknown exporter" in rep1.stdout,
           "%s: importer-only report:\n%s" % (mode, rep1.stdout))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--simcuda", required=True)
    ap.add_argument("--vramtrace", required=True)
    a = ap.parse_args()
    c = Ctx(a)
    if a.check == "legacy_exec":
        check_legacy(c, "exec")
    elif a.check == "legacy_fork":
        check_legacy(c, "fork")
    else:
        print("unknown check", a.check, file=sys.stderr)
        return 2
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
