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
             if not (k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") and k not in ("LD_PRELOAD", "VT_EXPECT_TRACKED")}
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
    return sum(d["kinds"].get(kind, {}).get("live_bytes", 0) for d in snap["devices"])


def same_run(c, argv, outdir):
    a = c.run(argv, preload=False)
    b = c.run(argv, preload=True, VRAMTRACE_OUTPUT=outdir)
    expect(a.returncode == 0, "%r without the preload exited %d: %s" % (argv, a.returncode, a.stderr))
    expect(b.returncode == a.returncode, "%r exit %d with the preload: %s" % (argv, b.returncode, b.stderr))
    expect(a.stdout == b.stdout, "%r output differs:\n--- without\n%s--- with\n%s" % (argv, a.stdout, b.stdout))
    return a, b


def check_pair(c, name, argv, lines, want, exit_rows, n_exports, exp_kind, exp_bytes, leak_text, ipc_records):
    """Runs argv (exporter + importer) without and with the preload and checks both
    processes' files and the report. want: {label: (ipc_import bytes, [(size, opens)])}
    after each of the importer's events; exit_rows: its imports at exit."""
    outdir = os.path.join(c.tmp, name)
    a, b = same_run(c, argv, outdir)
    for line in lines:
        expect(line in a.stdout.splitlines(), "%s: stdout lacks %r:\n%s" % (name, line, a.stdout))
    pids = pids_of(b.stderr)
    expect(set(pids) == {"exporter_pid", "importer_pid"}, "pids in stderr: %r" % b.stderr)
    if len(pids) != 2:
        return
    exp_f, imp_f = file_of(outdir, pids["exporter_pid"]), file_of(outdir, pids["importer_pid"])
    if not exp_f or not imp_f:
        return
    # the importer: ipc_import bytes and rows after each event, never its own bytes
    snaps = [r for r in records(imp_f) if r.get("t") == "snapshot"]
    by_label = {s["label"]: s for s in snaps if s.get("label")}
    for label, (nbytes, rows) in want.items():
        s = by_label.get(label)
        expect(s is not None, "%s: importer snapshot %r missing" % (name, label))
        if not s:
            continue
        expect(kind_live(s, "ipc_import") == nbytes, "%s %s: ipc_import live %d, want %d"
               % (name, label, kind_live(s, "ipc_import"), nbytes))
        got = sorted(((r[2], r[3]) for r in s.get("imports", [])), reverse=True)
        expect(got == sorted(rows, reverse=True), "%s %s: imports %r, want %r" % (name, label, got, rows))
        expect(sum(d["live_bytes"] for d in s["devices"]) == OWN,
               "%s %s: device live bytes %r count imported memory" % (name, label, [d["live_bytes"] for d in s["devices"]]))
    n_rec = max(sum(d["kinds"].get("ipc_import", {}).get("alloc_total", 0) for d in s["devices"]) for s in snaps)
    expect(n_rec == ipc_records, "%s: ipc_import records %d, want %d" % (name, n_rec, ipc_records))
    exit_rec = [s for s in snaps if s["trigger"] == "exit"]
    expect(len(exit_rec) == 1 and [(r[2], r[3]) for r in exit_rec[0].get("imports", [])] == exit_rows,
           "%s: importer's exit record imports: %r" % (name, exit_rec and exit_rec[0].get("imports")))
    # the exporter: its exports, its allocations unchanged by the import
    esnaps = [r for r in records(exp_f) if r.get("t") == "snapshot"]
    ex = [s for s in esnaps if s.get("label") == "exported"]
    expect(ex and len(ex[0].get("exports", [])) == n_exports, "%s: exporter's exports: %r" % (name, ex and ex[0].get("exports")))
    expect(ex and kind_live(ex[0], exp_kind) == exp_bytes and kind_live(ex[0], "ipc_import") == 0,
           "%s: exporter's %s bytes after export" % (name, exp_kind))
    if ex and exit_rec:
        edig = {d for _, d in ex[0].get("exports", [])}
        expect(all(r[1] in edig for r in exit_rec[0].get("imports", [])), "%s: import digest not exported" % name)
    # the report over both processes: exporter's pid, nothing counted twice
    rep = subprocess.run([c.a.vramtrace, "report", outdir], capture_output=True, text=True)
    expect(rep.returncode in (0, 1), "report exit %d: %s" % (rep.returncode, rep.stderr))
    line = "imported, still open at exit: %s from pid %d" % (leak_text, pids["exporter_pid"])
    expect(line in rep.stdout, "%s: report lacks %r:\n%s" % (name, line, rep.stdout))
    html = subprocess.run([c.a.vramtrace, "report", "--format", "html", outdir], capture_output=True, text=True)
    expect("<h3>Imported, still open at exit</h3>" in html.stdout and
           "<td>pid %d</td>" % pids["exporter_pid"] in html.stdout, "%s: HTML report lacks the imports" % name)
    js = subprocess.run([c.a.vramtrace, "report", "--format", "json", outdir], capture_output=True, text=True)
    expect(js.returncode in (0, 1), "json report exit %d: %s" % (js.returncode, js.stderr))
    try:
        rj = json.loads(js.stdout)
    except ValueError:
        expect(False, "json report is not JSON: %s" % js.stdout[:400])
        return
    procs = {p["pid"]: p for p in rj["processes"]}
    imp, exp = procs.get(pids["importer_pid"]), procs.get(pids["exporter_pid"])
    leak = sum(sz for sz, _ in exit_rows)
    expect(imp and imp["imports"] == [{"exporter_pid": pids["exporter_pid"], "bytes": leak,
                                       "mappings": len(exit_rows), "opens": sum(o for _, o in exit_rows)}],
           "%s: importer's JSON imports %r" % (name, imp and imp["imports"]))
    expect(imp and imp["imports_at_exit"] is True and imp["imported_open_bytes"] == leak, "%s: imports_at_exit" % name)
    expect(imp and imp["unfreed_at_exit_bytes"] == 0, "%s: importer's unfreed at exit %r counts imported memory"
           % (name, imp and imp["unfreed_at_exit_bytes"]))
    expect(imp and all(t <= OWN for _, t in imp["total_live_bytes_by_step"]),
           "%s: importer's totals count imported memory: %r" % (name, imp and imp["total_live_bytes_by_step"]))
    expect(exp and exp["imports"] == [] and exp["unfreed_at_exit_bytes"] == 0, "%s: exporter's JSON" % name)
    # the importer's file alone: the exporter is unknown
    rep1 = subprocess.run([c.a.vramtrace, "report", imp_f], capture_output=True, text=True)
    expect("imported, still open at exit: %s from an unknown exporter" % leak_text in rep1.stdout,
           "%s: importer-only report:\n%s" % (name, rep1.stdout))


OWN = 4096


def check_legacy(c, mode):
    BIG, SMALL = 64 * MiB, 1000
    check_pair(c, "legacy_" + mode, [os.path.join(c.a.bin, "prog_ipc_legacy"), mode],
               ["handle stable 1", "open1 ok, data 1", "open2 same pointer 1", "open3 ok, data 1",
                "close1 data still 1", "importer's write seen 1", "exporter done",
                "open own handle: 201", "open junk handle: 400", "open bad flags: 1",
                "close unknown: 1", "close small again: 1", "cudaFree imported: 1",
                "get handle of inner pointer: 1", "close after the context went: 1"],
               {"open1": (BIG, [(BIG, 1)]), "open2": (BIG, [(BIG, 2)]),
                "open3": (BIG + SMALL, [(BIG, 2), (SMALL, 1)]), "close3": (BIG, [(BIG, 2)]),
                "close1": (BIG, [(BIG, 1)]), "ctxopen": (BIG + SMALL, [(BIG, 1), (SMALL, 1)]),
                "ctxdestroy": (BIG, [(BIG, 1)]), "errors": (BIG, [(BIG, 1)])},
               [(BIG, 1)], 2, "device", BIG + SMALL, "64 MiB", 3)


def check_pool(c):
    A, B = 32 * MiB, 8 * MiB
    check_pair(c, "pool", [os.path.join(c.a.bin, "prog_ipc_pool")],
               ["export plain pool: 1", "importA data 1", "importB data 1", "importer's write seen 1",
                "import junk data: 1", "alloc from imported pool: 1", "import from own pool: 1",
                "import bad fd: 1", "export own cudaMalloc pointer: 1", "exporter done"],
               {"pool": (0, []), "importA": (A, [(A, 1)]), "importB": (A + B, [(A, 1), (B, 1)]),
                "freeA": (B, [(B, 1)]), "errors": (B, [(B, 1)])},
               [(B, 1)], 2, "async", A + B, "8 MiB", 2)


def check_vmm(c):
    P, Q = 4 * MiB, 2 * MiB
    check_pair(c, "vmm", [os.path.join(c.a.bin, "prog_ipc_vmm")],
               ["map1 data 1", "map2 data 1", "seen at the first mapping 1", "leak data 1", "importer's write seen 1",
                "import bad fd: 1", "import no handle type: 1", "export plain handle: 1", "exporter done"],
               {"import": (P, [(P, 0)]), "map1": (P, [(P, 1)]), "map2": (P, [(P, 2)]),
                "release": (P, [(P, 2)]), "unmap1": (P, [(P, 1)]), "unmap2": (0, []),
                "leak": (Q, [(Q, 1)]), "errors": (Q, [(Q, 1)])},
               [(Q, 1)], 2, "vmm", P + Q, "2 MiB", 2)


def check_ext(c):
    """One process: external memory has no exporter among the snapshots."""
    name = "ext"
    outdir = os.path.join(c.tmp, name)
    a, b = same_run(c, [os.path.join(c.a.bin, "prog_ipc_ext")], outdir)
    for line in ("buf1 data 1", "free buffer after destroy: 0", "buffer beyond the object: 1",
                 "buffer of a destroyed object: 400", "destroy twice: 400", "import bad fd: 1",
                 "import win32: 801"):
        expect(line in a.stdout.splitlines(), "%s: stdout lacks %r:\n%s" % (name, line, a.stdout))
    files = glob.glob(os.path.join(outdir, "*.jsonl"))
    expect(len(files) == 1, "%s: one snapshot file: %r" % (name, files))
    if len(files) != 1:
        return
    K = 1024
    want = {"import": (0, []), "buf1": (1024 * K, [(1024 * K, 1)]),
            "buf2": (1280 * K, [(1024 * K, 1), (256 * K, 1)]), "free1": (256 * K, [(256 * K, 1)]),
            "destroy": (0, []), "leak": (512 * K, [(512 * K, 1)]), "errors": (512 * K, [(512 * K, 1)])}
    snaps = [r for r in records(files[0]) if r.get("t") == "snapshot"]
    by_label = {s["label"]: s for s in snaps if s.get("label")}
    for label, (nbytes, rows) in want.items():
        s = by_label.get(label)
        expect(s is not None, "%s: snapshot %r missing" % (name, label))
        if not s:
            continue
        expect(kind_live(s, "ipc_import") == nbytes, "%s %s: ipc_import live %d, want %d"
               % (name, label, kind_live(s, "ipc_import"), nbytes))
        got = sorted(((r[2], r[3]) for r in s.get("imports", [])), reverse=True)
        expect(got == sorted(rows, reverse=True), "%s %s: imports %r, want %r" % (name, label, got, rows))
        expect(sum(d["live_bytes"] for d in s["devices"]) == OWN, "%s %s: device live bytes" % (name, label))
    rep = subprocess.run([c.a.vramtrace, "report", files[0]], capture_output=True, text=True)
    expect("imported, still open at exit: 512 KiB from an unknown exporter" in rep.stdout,
           "%s: report:\n%s" % (name, rep.stdout))


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
    elif a.check == "pool":
        check_pool(c)
    elif a.check == "vmm":
        check_vmm(c)
    elif a.check == "ext":
        check_ext(c)
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
