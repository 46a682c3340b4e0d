#!/usr/bin/env python3
"""Compressed snapshot streams (docs/snapshot-format.md "Compression").

check_compress.py CHECK VRAMTRACE LIBVRAMTRACE PROG OUTDIR

CHECK is one of:
  same      PROG under the preload with the default (a *.jsonl.zst file) and with
            VRAMTRACE_COMPRESS=0 (a *.jsonl file): the same report (verdicts, leak
            bytes per step, steps), apart from pid, file names and host figures; the
            plain stream gzip'ed (*.jsonl.gz) reads to the plain one's report; a
            folder of one .zst, one .gz and one plain file reads three processes.
  cut       the compressed stream cut at every byte from where its last step's
            records end to its end: every cut reads (exit 0) with all the steps; a
            cut inside a block says the tail was torn; only whole-block cuts do not;
            the whole file reads with the exit record and no note.
"""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

check, vt, lib, prog, out = sys.argv[1:6]
STEPS = 40
LEAK = 1 << 20


def run_prog(folder, compress):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_OUTPUT=folder, VRAMTRACE_INTERVAL_MS="0")
    env.pop("VRAMTRACE_COMPRESS", None)
    if compress is not None:
        env["VRAMTRACE_COMPRESS"] = compress
    p = subprocess.run([prog, str(STEPS)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    files = sorted(os.listdir(folder))
    assert len(files) == 1, files
    m = re.search(r"^size (\d+) ", p.stdout, re.M)
    assert m, p.stdout
    return os.path.join(folder, files[0]), int(m.group(1))


def report(path, fmt="json"):
    p = subprocess.run([vt, "report", "--format", fmt, path], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def essentials(path):
    rc, so, se = report(path)
    assert rc == 0, (path, rc, se)
    proc = json.loads(so)["processes"]
    assert len(proc) == 1, path
    p = proc[0]
    sites = sorted((s.get("function") or s.get("title") or "", s.get("kind"), s.get("verdict"),
                    s.get("growth_bytes_per_step"), s.get("peak_bytes"), s.get("unfreed_at_exit_bytes"))
                   for s in p["sites"])
    return dict(steps=p["steps"], exited=p["exited"], torn=p["torn_tail"], peak=p["peak_bytes"],
                unfreed=p["unfreed_at_exit_bytes"], verdicts=p["verdict_counts"], sites=sites,
                by_step=p["total_live_bytes_by_step"])


def text_sans_identity(path):
    rc, so, se = report(path, "text")
    assert rc == 0, (path, rc, se)
    keep = [l for l in so.splitlines()
            if not re.search(r"== pid|snapshots |host: |RSS|NVML: ", l)]
    return "\n".join(keep)


if check == "same":
    zpath, _ = run_prog(os.path.join(out, "z"), None)
    ppath, _ = run_prog(os.path.join(out, "p"), "0")
    assert zpath.endswith(".jsonl.zst"), zpath
    assert ppath.endswith(".jsonl") and not ppath.endswith(".zst"), ppath
    with open(zpath, "rb") as f:
        assert f.read(4) == b"\x28\xb5\x2f\xfd", "not a zstd frame"
    with open(ppath, "rb") as f:
        assert f.read(1) == b"{", "not plain JSON Lines"
    ez, ep = essentials(zpath), essentials(ppath)
    assert ez == ep, (ez, ep)
    assert ez["steps"] == STEPS and ez["exited"] and not ez["torn"], ez
    # the planted leak, at its exact bytes per step
    leaks = [s for s in ez["sites"] if s[2] == "leak"]
    assert len(leaks) == 1 and leaks[0][3] == LEAK, ez["sites"]
    tz, tp = text_sans_identity(zpath), text_sans_identity(ppath)
    assert tz == tp, "\n--- zst ---\n%s\n--- plain ---\n%s" % (tz, tp)
    zsize, psize = os.path.getsize(zpath), os.path.getsize(ppath)
    print("plain %d bytes, zstd %d bytes (%.1fx)" % (psize, zsize, psize / zsize))
    assert zsize * 3 < psize, (zsize, psize)
    # gzip: the plain stream compressed by hand (as logrotate's compress leaves it)
    gdir = os.path.join(out, "g")
    shutil.rmtree(gdir, ignore_errors=True)
    os.makedirs(gdir)
    gpath = os.path.join(gdir, os.path.basename(ppath) + ".gz")
    with open(ppath, "rb") as f, gzip.open(gpath, "wb") as g:
        g.write(f.read())
    assert essentials(gpath) == ep
    assert text_sans_identity(gpath) == tp
    # a torn gzip tail: the records before it read, the note says so
    tpath = os.path.join(gdir, "torn.jsonl.gz")
    with open(gpath, "rb") as f:
        data = f.read()
    with open(tpath, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    rc, so, se = report(tpath)
    assert rc == 0 and "gzip stream ends early" in se, (rc, se)
    assert 0 < json.loads(so)["processes"][0]["steps"] < STEPS
    os.remove(tpath)
    # one folder: a .zst, a .gz and a plain file (three processes, each read once)
    shutil.copy(zpath, gdir)
    shutil.copy(ppath, os.path.join(gdir, "other.jsonl"))
    rc, so, se = report(gdir)
    assert rc == 0, (rc, se)
    procs = json.loads(so)["processes"]
    names = sorted(os.path.basename(p["file"]) for p in procs)
    # the .gz and the plain copy are one process (same pid, start): one is kept, noted
    assert len(procs) == 2 and any(n.endswith(".zst") for n in names), (names, se)
    assert "same process" in se, se
    print("same: OK")
elif check == "cut":
    zpath, before_exit = run_prog(os.path.join(out, "cut"), None)
    with open(zpath, "rb") as f:
        data = f.read()
    size = len(data)
    assert 0 < before_exit < size, (before_exit, size)
    full = essentials(zpath)
    assert full["steps"] == STEPS and full["exited"] and not full["torn"], full
    cdir = os.path.join(out, "cuts")
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    cpath = os.path.join(cdir, "cut.jsonl.zst")
    clean, torn = [], []
    for n in range(before_exit, size):
        with open(cpath, "wb") as f:
            f.write(data[:n])
        rc, so, se = report(cpath)
        assert rc == 0, (n, rc, se)
        p = json.loads(so)["processes"][0]
        assert p["steps"] == STEPS, (n, p["steps"])
        assert p["by_step" if False else "total_live_bytes_by_step"] == full["by_step"], n
        note = "torn zstd block" in se
        assert note == p["torn_tail"], (n, se, p["torn_tail"])
        (torn if note else clean).append(n)
    # only whole-block cuts read without the note: where the last step's records
    # end, and between the exit's few writes (each flushed)
    assert clean[0] == before_exit, clean[:5]
    assert len(clean) <= 8, clean
    assert len(torn) >= size - before_exit - 8, (len(torn), size - before_exit)
    print("cut: %d cuts from byte %d to %d: %d torn (noted), %d at block ends %s" %
          (size - before_exit, before_exit, size, len(torn), len(clean), clean))
    print("cut: OK")
else:
    sys.exit("unknown check " + check)
