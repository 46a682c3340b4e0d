#!/usr/bin/env python3
"""Write faults while a traced program runs (docs/snapshot-format.md "gap").

check_iofault.py CHECK VRAMTRACE LIBVRAMTRACE PROG OUTDIR

Each check runs PROG (prog_iofault.c: a planted leak of exactly 1 MiB/step) inside a
user and mount namespace (`unshare -rm`) with its snapshot folder on a small tmpfs of
its own, once untraced and once under the preload, and asserts:
  - the traced run's exit status and output are the untraced run's;
  - the snapshot file reads (`zstd -t` too when compressed: the frame the fault left
    open was ended and a new one started), one process, with its exit record;
  - the stream has a "gap" record naming the lost steps and the error (sometimes
    more than one: a retry that finds room for a moment, faults again); the text,
    JSON and HTML reports say "records lost between step A and B: <error>";
  - the leak is found with its exact rate (1 MiB/step) over the steps written;
  - `check` fails the "gaps" gate with the error, and passes it with --allow-gaps.
CHECK is one of:
  full        the tmpfs is filled at step 20 and freed at step 60 (compressed stream);
  full_plain  the same with VRAMTRACE_COMPRESS=0;
  rmdir       the snapshot folder is removed at step 20: created again, with a new
              header, and the gap says the file was removed.
  full_start  the tmpfs is full before the first CUDA call (its header cannot be
              written) and freed at step 60: the header is written when it resumes;
  full_exit   the tmpfs is filled at step 20 and never freed: the program's output
              and status are unchanged, one "vramtrace:" line says the exit record
              could not be written, and the file reads up to the fault (no torn tail).
  frames      (no namespace) the reader on a stream of concatenated frames as the
              writer leaves them after a fault: a flushed frame ended by an empty
              raw last block, then a new frame, itself left open; a gap record in it.
Exit status 77 (skipped, with a line saying why) where `unshare -rm` or a tmpfs
mount is not permitted.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

STEPS, AT, UNTIL, SLEEP_MS = 130, 20, 60, 20
MIB = 1 << 20

if len(sys.argv) > 1 and sys.argv[1] == "--inside":
    # inside the namespace: mount the tmpfs, run the command given, unmount
    mnt, size = sys.argv[2], sys.argv[3]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", mnt], check=True)
    try:
        p = subprocess.run(sys.argv[4:], capture_output=True, text=True, timeout=240)
    finally:
        pass
    # the files stay readable after the namespace ends only if copied out
    keep = os.environ["IOFAULT_KEEP"]
    shutil.rmtree(keep, ignore_errors=True)
    shutil.copytree(os.path.join(mnt, "out"), keep) if os.path.isdir(os.path.join(mnt, "out")) else os.makedirs(keep)
    sys.stdout.write(json.dumps({"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}))
    sys.exit(0)

check, vt, lib, prog, out = sys.argv[1:6]


def vtrun(*args):
    p = subprocess.run([vt] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


if check == "frames":
    # RFC 8878 by hand: magic, frame header descriptor 0 (no content size, no
    # checksum, not single segment), window descriptor 0x40 (2^18), raw blocks
    def block(data, last):
        return ((len(data) << 3) | int(last)).to_bytes(3, "little") + data

    def frame(lines, end):
        out_b = b"\x28\xb5\x2f\xfd\x00\x40"
        for ln in lines:
            out_b += block(ln.encode(), False)
        return out_b + (block(b"", True) if end else b"")

    hdr = ('{"t":"header","format":"vramtrace-snapshot","version":3,"pid":7,"ppid":1,"host":"h","exe":"/x",'
           '"cmdline":["x"],"rank":null,"local_rank":null,"world_size":null,"start_ns":1,"clock":"CLOCK_MONOTONIC",'
           '"mono_start_ns":0,"depth":8,"interval_ms":0,"step_every":1,"leak_steps":10}\n')
    stack = '{"t":"stack","id":1,"frames":[]}\n'
    site = '{"t":"site","id":1,"stack":1,"kind":"device","device":0}\n'

    def snap(seq, step, live, trig="step", delta=False):
        return ('{"t":"snapshot","seq":%d,"trigger":"%s","label":null,"time_ns":%d,"step":%d,"step_marked":true,'
                '"devices":[],"sites_delta":false,"sites":[[1,%d,%d,0,%d,%d,%d,0,0]],"leak_warnings":[],"oom":null,'
                '"allocations":%s,"unfreed_at_exit":%s,"dropped_records":0}\n'
                % (seq, trig, step * 1000, step, step, step * MIB, live, step, live,
                   "[]" if trig == "exit" else "null", "true" if trig == "exit" else "false"))
    f1 = [hdr, stack + site] + [snap(i, i, i * MIB) for i in range(1, 11)]
    gap = ('{"t":"gap","records":5,"first_step":11,"last_step":15,"first_ns":11000,"last_ns":15000,'
           '"errno":28,"error":"No space left on device"}\n')
    f2 = [gap] + [snap(i - 4, i, i * MIB) for i in range(16, 31)] + [snap(27, 30, 30 * MIB, "exit")]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    path = os.path.join(out, "vt.h.7.1.jsonl.zst")
    with open(path, "wb") as fh:
        fh.write(frame(f1, True) + frame(f2, False))
    rc, so, se = vtrun("report", "--format", "json", path)
    assert rc == 0, (rc, se)
    assert "torn" not in se, se
    p = json.loads(so)["processes"][0]
    assert p["exited"] and p["first_step"] == 1 and p["last_step"] == 30, p
    assert p["lost_records"] == 5 and p["gaps"][0]["error"] == "No space left on device", p.get("gaps")
    leak = [s for s in p["sites"] if s["verdict"] == "leak"]
    assert len(leak) == 1 and leak[0]["growth_bytes_per_step"] == MIB, leak
    if shutil.which("zstd"):   # libzstd's own tool agrees the file is valid (the last frame left open)
        z = subprocess.run(["zstd", "-dc", path], capture_output=True)
        assert z.stdout.decode() == "".join(f1 + f2), z.stderr
    # the Python helper reads every frame too: through libzstd (ctypes) and, where a
    # python with the zstandard module is found, through it
    pkg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    code = ("import sys; from vramtrace.snapshots import read_stream; h, m, st, sn = read_stream(sys.argv[1]); "
            "print(len(sn), sn[-1]['step'], sn[-1]['trigger'])")
    pys = [sys.executable] + [x for x in ("/usr/bin/python3",) if os.path.exists(x) and
                              subprocess.run([x, "-c", "import zstandard"], capture_output=True).returncode == 0]
    for py in pys:
        r = subprocess.run([py, "-c", code, path], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=pkg))
        assert r.returncode == 0 and r.stdout.split() == ["26", "30", "exit"], (py, r.stdout, r.stderr)
    # a gap record that is wrong is a file:line error
    bad = os.path.join(out, "bad.jsonl")
    with open(bad, "w") as fh:
        fh.write(hdr + gap.replace('"last_step":15', '"last_step":9'))
    rc, so, se = vtrun("report", bad)
    assert rc == 2 and "bad.jsonl:2: gap: last_step 9 before first_step 11" in se, (rc, se)
    print("ok: frames")
    sys.exit(0)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


if not shutil.which("unshare"):
    skip("no unshare(1) on this machine: the test needs a mount namespace for a small tmpfs")
probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>&1 || "
                        "mount -t tmpfs -o size=64k tmpfs \"$0\"", out if os.path.isdir(out) else "/tmp"],
                       capture_output=True, text=True)
if probe.returncode != 0:
    skip("`unshare -rm` with a tmpfs mount is not permitted here: " + (probe.stderr or probe.stdout).strip())

shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
mnt = os.path.join(out, "mnt")
os.makedirs(mnt)


def run(traced, mode, compress="1"):
    """PROG in its own namespace and tmpfs; returns (rc, stdout, stderr, folder copy)."""
    keep = os.path.join(out, ("traced-" if traced else "untraced-") + mode)
    env = dict(os.environ, IOFAULT_KEEP=keep)
    env.pop("LD_PRELOAD", None)
    folder = os.path.join(mnt, "out")
    inner = ["env", "VRAMTRACE_OUTPUT=" + folder, "VRAMTRACE_INTERVAL_MS=0", "VRAMTRACE_COMPRESS=" + compress]
    if traced:
        inner.append("LD_PRELOAD=" + lib)
    pmode = "full" if mode.startswith("full") else mode
    until = STEPS + 1 if mode == "full_exit" else UNTIL   # full_exit: never freed
    at = 0 if mode == "full_start" else AT
    inner += [prog, pmode, str(STEPS), str(at), str(until), str(SLEEP_MS), os.path.join(mnt, "filler")]
    # the folder made first (the untraced program removes or fills it as the traced one)
    inner = ["sh", "-c", 'mkdir -p "$0" && exec "$@"', folder] + inner
    p = subprocess.run(["unshare", "-rm", sys.executable, os.path.abspath(__file__), "--inside", mnt, "2m"] + inner,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    r = json.loads(p.stdout)
    return r["rc"], r["stdout"], r["stderr"], keep


mode = check
compress = "0" if check == "full_plain" else "1"
urc, uout, uerr, _ = run(False, mode, compress)
trc, tout, terr, folder = run(True, mode, compress)
print("untraced:", urc, repr(uout))
print("traced:", trc, repr(tout))
print("traced stderr:", terr)
assert urc == 0, (urc, uout, uerr)
assert (trc, tout) == (urc, uout), "the preload changed the program's exit status or output"
err_text = "the file was removed" if mode == "rmdir" else "No space left on device"
err_no = 2 if mode == "rmdir" else 28

if mode == "full_exit":
    assert re.search(r"^vramtrace: cannot write .*: " + re.escape(err_text), terr, re.M), terr
    lines = re.findall(r"^vramtrace: the exit record could not be written to .*: No space left on device "
                       r"\((\d+) records lost since step (\d+)\)$", terr, re.M)
    assert len(lines) == 1, terr
    assert int(lines[0][0]) >= STEPS - UNTIL and AT <= int(lines[0][1]) <= UNTIL, lines
    # (a retry may find room for its gap record in the file's last page for a moment:
    # "writing ... again" then, and a later fault that is quiet)
    assert len(re.findall(r"^vramtrace: ", terr, re.M)) <= 4, terr
    files = [f for f in os.listdir(folder) if not f.startswith(".")]
    assert len(files) == 1, files
    rc, so, se = vtrun("report", "--format", "json", folder)
    assert rc == 0 and "torn" not in se, (rc, se)
    p = json.loads(so)["processes"][0]
    assert p["exited"] is False and p["torn_tail"] is False and AT <= p["last_step"] <= UNTIL, p
    rc, so, se = vtrun("check", "--max-growth", "2MiB", folder)
    assert rc == 1 and "without an exit record" in so, (rc, so)
    print("ok:", check, lines[0])
    sys.exit(0)

# one "vramtrace:" line when the fault began, one when writing resumed (a retry that
# finds room for a moment and faults again makes a second gap: those are quiet)
assert re.search(r"^vramtrace: cannot write .*: " + re.escape(err_text) + r"; tracing goes on in memory", terr, re.M), terr
m = re.search(r"^vramtrace: writing (.*) again: (\d+) records? lost between step (\d+) and (\d+): " + re.escape(err_text),
              terr, re.M)
assert m, terr
lost, first, last = int(m.group(2)), int(m.group(3)), int(m.group(4))
assert lost >= 1 and first <= last, m.group(0)
assert len(re.findall(r"^vramtrace: ", terr, re.M)) == 3, terr   # the leak warning, the fault, the resume
if mode == "rmdir":
    assert AT - 1 <= first <= AT + 2 and last <= AT + 20, m.group(0)
else:
    # a tmpfs fills a page at a time (the file's last page takes a few records more)
    assert (0 if mode == "full_start" else AT) <= first <= UNTIL, m.group(0)
assert "exit record could not be written" not in terr, terr

files = [f for f in sorted(os.listdir(folder)) if not f.startswith(".")]
assert len(files) == 1, files
path = os.path.join(folder, files[0])
assert path.endswith(".jsonl.zst" if compress == "1" else ".jsonl"), path

# the reports
rc, so, se = vtrun("report", "--format", "json", folder)
assert rc == 0, (rc, se)
assert "torn" not in se, se
procs = json.loads(so)["processes"]
assert len(procs) == 1, procs
p = procs[0]
assert p["exited"] is True and p["torn_tail"] is False, p
gaps = p["gaps"]
assert len(gaps) == 1 if mode == "rmdir" else len(gaps) >= 1, gaps
assert all((g["errno"], g["error"]) == (err_no, err_text) for g in gaps), gaps
assert (gaps[0]["records"], gaps[0]["first_step"], gaps[0]["last_step"]) == (lost, first, last), gaps
assert p["lost_records"] == sum(g["records"] for g in gaps), p["lost_records"]
# the retry that finds space again comes up to twice the outage after the fault:
# well before the end of the run
assert gaps[-1]["last_step"] is None or gaps[-1]["last_step"] <= STEPS - 10, gaps
leaks = [s for s in p["sites"] if s["verdict"] == "leak"]
assert len(leaks) == 1, [(s.get("title"), s["verdict"]) for s in p["sites"]]
assert leaks[0]["growth_bytes_per_step"] == MIB, leaks[0]["growth_bytes_per_step"]
assert "remember" in json.dumps(leaks[0]), leaks[0]

if compress == "1":
    if shutil.which("zstd"):
        z = subprocess.run(["zstd", "-t", "-q", path], capture_output=True, text=True)
        assert z.returncode == 0, ("zstd -t", z.stderr)
        raw = subprocess.run(["zstd", "-dc", path], capture_output=True, text=True, check=True).stdout
    else:
        raw = None
    with open(path, "rb") as fh:
        data = fh.read()
    if mode == "full":
        # the open frame was ended and a new one started after the fault
        assert data.count(b"\x28\xb5\x2f\xfd") >= 2, "expected a second zstd frame after the fault"
else:
    with open(path) as fh:
        raw = fh.read()
if raw is not None:
    recs = [json.loads(line) for line in raw.splitlines()]
    fgaps = [r for r in recs if r["t"] == "gap"]
    assert [(g["records"], g["first_step"], g["last_step"], g["errno"], g["error"]) for g in fgaps] == \
        [(g["records"], g["first_step"], g["last_step"], g["errno"], g["error"]) for g in gaps], (fgaps, gaps)
    assert recs[0]["t"] == "header" and sum(r["t"] == "header" for r in recs) == 1
    ids = [(r["t"], r["id"]) for r in recs if r["t"] in ("module", "stack", "site")]
    assert len(ids) == len(set(ids)), "a definition written twice"
    steps = [r["step"] for r in recs if r["t"] == "snapshot" and r["trigger"] == "step"]
    for g in fgaps:
        # the first snapshot after a gap is complete; no lost step is in the file
        i = recs.index(g)
        nxt = next(r for r in recs[i + 1:] if r["t"] == "snapshot")
        assert nxt.get("sites_delta", False) is False, nxt   # complete (version 4 leaves the key out when false)
        if g["first_step"] is not None:
            assert not any(g["first_step"] <= s <= g["last_step"] for s in steps), ("a lost step is in the file", g)

want = "%d record%s lost between step %d and %d: %s" % (lost, "" if lost == 1 else "s", first, last, err_text)
rc, so, se = vtrun("report", folder)
assert rc == 0 and want in so, (rc, so)
rc, so, se = vtrun("report", "--format", "html", folder)
assert rc == 0 and want in so, rc

rc, so, se = vtrun("check", "--max-growth", "2MiB", folder)
assert rc == 1, (rc, so, se)
assert "gaps" in so and want in so and "--allow-gaps" in so, so
rc, so, se = vtrun("check", "--max-growth", "2MiB", "--allow-gaps", folder)
assert rc == 0, (rc, so, se)
rc, so, se = vtrun("check", "--allow-gaps", folder)
assert rc == 1 and "leak +1 MiB/step" in so, (rc, so)
print("ok:", check, want)
