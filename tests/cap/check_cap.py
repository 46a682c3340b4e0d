#!/usr/bin/env python3
"""The stream's size cap (VRAMTRACE_MAX_BYTES; docs/snapshot-format.md "summary").

check_cap.py MODE VRAMTRACE LIBVRAMTRACE PROG OUTDIR

MODE zst (the default zstd stream) or plain (VRAMTRACE_COMPRESS=0). PROG
(prog_capjob) runs STEPS steps with a planted leak of LEAK bytes per step twice,
deterministically (no periodic snapshots): uncapped (VRAMTRACE_MAX_BYTES=0) and
capped at CAP. Checks:
  - the capped file was rewritten several times (the writer's info lines), each
    rewrite keeping the records since its keep point exact, and its
    size, sampled while the program runs and at the end, stays at most 1.1x CAP;
    the uncapped one is several times the cap;
  - the capped report says which steps are summarised (text and JSON), finds the
    leak at grow_cache with its exact rate (LEAK B/step) and the bytes it leaked
    over the whole run (the summary's start), and keeps both OOMs (step 5, from a
    record kept by the rewrites, and step STEPS-5) with their top sites;
  - every step after the summary, the exit's unfreed bytes and the other sites'
    verdicts are those of the uncapped run;
  - copies of the capped file taken while the program runs each read, with the leak;
  - `vramtrace check` fails the capped run on the leak;
  - (plain) a summary record with a list one bucket short is an error of its line.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

mode, vt, lib, prog, out = sys.argv[1:6]
STEPS = 20000
LEAK = 256
CAP = 256 * 1024


def run(folder, max_bytes):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_OUTPUT=folder, VRAMTRACE_INTERVAL_MS="0",
               VRAMTRACE_MAX_BYTES=max_bytes, VRAMTRACE_LOG="info")
    env.pop("VRAMTRACE_COMPRESS", None)
    if mode == "plain":
        env["VRAMTRACE_COMPRESS"] = "0"
    p = subprocess.Popen([prog, str(STEPS), str(LEAK)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    biggest, copies, last_copy = 0, [], time.monotonic()
    while p.poll() is None:   # the file's size while the program runs
        for f in glob.glob(os.path.join(folder, "vt.*")):
            try:
                biggest = max(biggest, os.stat(f).st_size)
                if time.monotonic() - last_copy > 0.25 and not f.endswith(".tmp"):
                    # a reader's view while it runs: the old file or the new one, whole
                    snap = os.path.join(out, "copy-%d%s" % (len(copies), ".jsonl.zst" if mode == "zst" else ".jsonl"))
                    shutil.copyfile(f, snap)
                    copies.append(snap)
                    last_copy = time.monotonic()
            except FileNotFoundError:
                pass   # between the rename's two names
        time.sleep(0.002)
    so, se = p.communicate(timeout=300)
    assert p.returncode == 0, (p.returncode, so, se)
    files = sorted(os.listdir(folder))
    assert len(files) == 1, files   # no .tmp left
    path = os.path.join(folder, files[0])
    assert path.endswith(".jsonl.zst" if mode == "zst" else ".jsonl"), path
    return path, max(biggest, os.stat(path).st_size), se, copies


# every step its own point in the analyzer (no step buckets, vt_slots.h): the checks
# below compare the two runs step by step
EXACT_ENV = dict(os.environ, VRAMTRACE_ANALYZER_SLOTS="1000000", VRAMTRACE_ANALYZER_POINTS="100000000")


def report(path, fmt="json"):
    p = subprocess.run([vt, "report", "--format", fmt, path], capture_output=True, text=True, timeout=120,
                       env=EXACT_ENV)
    assert p.returncode == 0, (path, p.returncode, p.stderr)
    return json.loads(p.stdout)["processes"][0] if fmt == "json" else p.stdout


def site(proc, title):
    found = [s for s in proc["sites"] if s["title"].startswith(title)]
    assert len(found) == 1, (title, [s["title"] for s in proc["sites"]])
    return found[0]


upath, usize, _, _ = run(os.path.join(out, "uncapped"), "0")
cpath, csize, log, copies = run(os.path.join(out, "capped"), str(CAP))

rewrites = re.findall(r"size cap: .* rewritten to (\d+) bytes \(steps (\d+)-(\d+) summarised in (\d+) buckets, "
                      r"(\d+) bytes of records kept\)", log)
assert len(rewrites) >= 3, log
# each rewrite keeps the records since its keep point (about a third of the cap,
# once settled) and leaves room for as much again
assert all(CAP // 4 <= int(n) <= CAP * 3 // 4 and int(kept) >= CAP // 5 for n, _, _, _, kept in rewrites[1:]), rewrites
assert csize <= CAP * 1.1, (csize, CAP)
assert usize > 3 * CAP, (usize, CAP)

u, c = report(upath), report(cpath)
assert "summarised_steps" not in u, u.keys()
sm = c["summarised_steps"]
assert sm["max_bytes"] == CAP and sm["buckets"] >= 16, sm
assert sm["last_step"] == int(rewrites[-1][2]) and sm["buckets"] == int(rewrites[-1][3]), (sm, rewrites[-1])
assert sm["first_step"] == u["first_step"], (sm, u["first_step"])
text = report(cpath, "text")
assert re.search(r"steps %d-%d summarised in %d buckets \(VRAMTRACE_MAX_BYTES=256 KiB\)"
                 % (sm["first_step"], sm["last_step"], sm["buckets"]), text), text

# the leak, with its exact rate, and what it leaked over the whole run
for proc in (u, c):
    g = site(proc, "grow_cache")
    assert g["verdict"] == "leak", g
    assert g["growth_bytes_per_step"] == LEAK, g
    assert g["unfreed_at_exit_bytes"] == LEAK * STEPS, g
    assert g["leaked_bytes"] > LEAK * STEPS * 0.95, g
    assert g["first_growth_step"] <= 200, g   # found in the summarised steps
assert site(c, "hold_weights")["verdict"] == site(u, "hold_weights")["verdict"] == "stable"
assert site(c, "scratch")["verdict"] == site(u, "scratch")["verdict"] == "churn"
assert [t["verdict"] for t in c["sites"]] == [t["verdict"] for t in u["sites"]]

# the OOMs: the first one's record kept by every rewrite, the last one exact
for proc in (u, c):
    assert [o["step"] for o in proc["ooms"]] == [5, STEPS - 5], proc["ooms"]
for uo, co in zip(u["ooms"], c["ooms"]):
    assert co["requested_bytes"] == uo["requested_bytes"] and co["tracked_bytes"] == uo["tracked_bytes"], (uo, co)
    assert [t["bytes"] if "bytes" in t else t for t in co["top_sites"]] == \
           [t["bytes"] if "bytes" in t else t for t in uo["top_sites"]], (uo["top_sites"], co["top_sites"])

# recent steps exact: every step after the summary as in the uncapped run
ut = dict(map(tuple, u["total_live_bytes_by_step"]))
ct = [tuple(x) for x in c["total_live_bytes_by_step"]]
recent = [(s, b) for s, b in ct if s > sm["last_step"]]
assert len(recent) > 100, len(recent)   # at least a quarter of the cap of step records
assert recent[-1][0] == STEPS == u["last_step"] == c["last_step"], (recent[-1], u["last_step"])
assert [s for s, _ in recent] == [s for s in sorted(ut) if s > sm["last_step"]]
for s, b in recent:
    assert ut[s] == b, (s, ut[s], b)
# the summary's points: each bucket's floor is the uncapped run's smallest total in it
pts = [s for s, _ in ct if s <= sm["last_step"]]
assert len(pts) == sm["buckets"], (len(pts), sm)
for i, (s, b) in enumerate(ct[:len(pts)]):
    end = pts[i + 1] if i + 1 < len(pts) else sm["last_step"] + 1
    assert b == min(v for k, v in ut.items() if s <= k < end), (s, b)
assert c["exited"] and c["unfreed_at_exit_bytes"] == u["unfreed_at_exit_bytes"], (c["unfreed_at_exit_bytes"],)

# check fails on the leak
p = subprocess.run([vt, "check", "--allow-oom", cpath], capture_output=True, text=True, timeout=120)
assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
assert "leak +256 B/step" in p.stdout and "grow_cache" in p.stdout, p.stdout
print("%d copies read; " % len(copies) + "cap %s: %d rewrites, file at most %d bytes (cap %d; uncapped %d), steps %d-%d in %d buckets, "
      "%d exact steps after them" % (mode, len(rewrites), csize, CAP, usize, sm["first_step"], sm["last_step"],
                                      sm["buckets"], len(recent)))

# copies taken while the program ran each read, with their leak; no exit record before
# the last step (a copy taken between the exit record's write and the process's end,
# which the poll above cannot tell apart from running, holds the whole job)
for snap in copies:
    q = subprocess.run([vt, "report", "--format", "json", snap], capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, (snap, q.returncode, q.stderr)
    proc = json.loads(q.stdout)["processes"][0]
    assert proc["last_step"] and (not proc["exited"] or proc["last_step"] == STEPS), (snap, proc["last_step"])
    if proc["last_step"] > 1000:
        assert site(proc, "grow_cache")["growth_bytes_per_step"] == LEAK, snap

# a summary record of the wrong shape is an error of its line (file:line: what)
if mode == "plain":
    lines = open(cpath).read().split("\n")
    k = next(i for i, l in enumerate(lines) if l.startswith('{"t":"summary"'))
    orig_line = lines[k]
    rec = json.loads(lines[k])
    rec["sites"][0][1] = rec["sites"][0][1][:-1]   # one floor short
    lines[k] = json.dumps(rec, separators=(",", ":"))
    bad = os.path.join(out, "bad.jsonl")
    with open(bad, "w") as fh:
        fh.write("\n".join(lines))
    p = subprocess.run([vt, "report", bad], capture_output=True, text=True, timeout=120)
    want = "%s:%d: summary.sites[0][1]: expected %d values (one per bucket), got %d" % (
        bad, k + 1, len(rec["steps"]), len(rec["steps"]) - 1)
    assert p.returncode == 2 and want in p.stderr, (p.returncode, p.stderr, want)
    # summaries that contradict themselves: each a file:line note, the file skipped
    cases = []
    r1 = json.loads(orig_line); r1["sites"].append(r1["sites"][0]); cases.append((r1, "is listed twice"))
    r2 = json.loads(orig_line); r2["sites"][0][1][0] = r2["sites"][0][2][0] + 1; cases.append((r2, "is above its peak"))
    r3 = json.loads(orig_line); r3["last_step"] = 0; cases.append((r3, "summary.last_step: 0 before the last bucket's step"))
    r4 = json.loads(orig_line); r4["records"] = 0; cases.append((r4, "summary.records: 0, fewer than its"))
    for mutated, what in cases:
        lines[k] = json.dumps(mutated, separators=(",", ":"))
        with open(bad, "w") as fh:
            fh.write("\n".join(lines))
        p = subprocess.run([vt, "report", bad], capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and ("%s:%d: summary" % (bad, k + 1)) in p.stderr and what in p.stderr, (what, p.stderr)
