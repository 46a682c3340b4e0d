#!/usr/bin/env python3
"""test_gates.py VRAMTRACE GOLDEN_DIR — the gates of `vramtrace check` that must not
pass silently, and its JUnit file read back by an existing consumer (Debian's
python3-junitparser; without it the test says so and exits 77, counted as skipped).

  - a leak: exit 1; the JUnit file has exactly one failing case, "leak", whose text
    names the leaking site;
  - an out-of-memory run: exit 1 with the first OOM named; --allow-oom passes it;
  - a run too short to judge (3 periodic steps, 45 MiB unfreed at exit): exit 3,
    "too few steps to judge", an <error> case in the JUnit file; --allow-short passes;
  - --junit never overwrites an existing file without --force (exit 2, file kept).
Every check asserts exact values; exit 1 on the first mismatch."""
import json
import os
import subprocess
import sys
import tempfile

try:
    from junitparser import JUnitXml, Failure, Error
except ImportError:
    print("SKIP: python3-junitparser is not installed (scripts/setup.sh installs it); the JUnit file "
          "cannot be read back by a real consumer here")
    sys.exit(77)

MiB = 1 << 20


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def cases(path):
    """(classname, name, [result kinds]) of every test case of a JUnit file."""
    out = []
    for suite in JUnitXml.fromfile(path):
        for case in suite:
            out.append((case.classname, case.name, case.result))
    return out


def short_stream(path):
    """3 periodic steps, then an exit record with 45 MiB unfreed."""
    recs = [{"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 42, "host": "h", "start_ns": 1},
            {"t": "module", "id": 1, "path": "/opt/app/app", "build_id": "", "bias": 0},
            {"t": "stack", "id": 1, "frames": [[1, 4096, "load_cache"]]}]
    for s in range(3):
        recs.append({"t": "snapshot", "seq": s + 1, "trigger": "periodic", "step": s + 1,
                     "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": 45 * MiB}]})
    recs.append({"t": "snapshot", "seq": 4, "trigger": "exit", "step": 3, "unfreed_at_exit": True,
                 "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": 45 * MiB}]})
    with open(path, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))


def series_stream(path, live, peak=None, fn="grow_cache"):
    """Marked steps of one site with the given live (and peak) bytes, then an exit
    record with the last live bytes unfreed."""
    recs = [{"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 43, "host": "h", "start_ns": 1},
            {"t": "module", "id": 1, "path": "/opt/app/app", "build_id": "", "bias": 0},
            {"t": "stack", "id": 1, "frames": [[1, 4096, fn]]}]
    for s, v in enumerate(live):
        pk = max(v, peak[s] if peak else 0)
        recs.append({"t": "snapshot", "seq": s + 1, "trigger": "step", "step": s, "step_marked": True,
                     "time_ns": (s + 1) * 1000000000,
                     "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": v,
                                "interval_peak_bytes": pk, "free_total": 1 if pk > v else 0}]})
    recs.append({"t": "snapshot", "seq": len(live) + 1, "trigger": "exit", "step": len(live) - 1,
                 "step_marked": True, "unfreed_at_exit": True,
                 "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": live[-1]}]})
    with open(path, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))


def main(argv):
    exe, golden = argv[1], argv[2]
    tmp = tempfile.mkdtemp()
    # a leak: one failing case, naming the site
    leak = os.path.join(golden, "leak_churn-step")
    j = os.path.join(tmp, "leak.xml")
    r = run([exe, "check", "--junit", j, leak])
    if r.returncode != 1:
        fail("leak: check exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    got = cases(j)
    bad = [(c, n, res) for c, n, res in got if res]
    if len(bad) != 1 or bad[0][1] != "leak" or not isinstance(bad[0][2][0], Failure):
        fail("leak: failing cases %r" % [(c, n) for c, n, _ in bad])
    text = bad[0][2][0].text or ""
    if "record_history" not in text or "leak +3 MiB/step" not in bad[0][2][0].message:
        fail("leak: the failure does not name the site and rate: %r %r" % (bad[0][2][0].message, text))
    names = sorted(n for _, n, _ in got)
    if names != ["complete", "leak", "oom", "steps", "traced"]:
        fail("leak: test cases %r" % names)
    # an out-of-memory run
    oom = os.path.join(golden, "oom_flush-step")
    r = run([exe, "check", oom])
    if r.returncode != 1 or "allocations failed with out-of-memory; the first: cudaMalloc of 64 MiB" not in r.stdout:
        fail("oom: check exit %d %r" % (r.returncode, r.stdout))
    r = run([exe, "check", "--allow-oom", oom])
    if r.returncode != 0 or "passed" not in r.stdout:
        fail("oom --allow-oom: check exit %d %r" % (r.returncode, r.stdout))
    # a run too short to judge, with memory unfreed
    short = os.path.join(tmp, "short.jsonl")
    short_stream(short)
    j = os.path.join(tmp, "short.xml")
    r = run([exe, "check", "--junit", j, short])
    want = "INCONCLUSIVE pid 42 on h: too few steps to judge"
    if r.returncode != 3 or want not in r.stdout or "45 MiB stayed unfreed" not in r.stdout or "passed" in r.stdout:
        fail("short: check exit %d %r" % (r.returncode, r.stdout))
    bad = [(n, res) for _, n, res in cases(j) if res]
    if len(bad) != 1 or bad[0][0] != "steps" or not isinstance(bad[0][1][0], Error):
        fail("short: JUnit cases %r" % bad)
    r = run([exe, "check", "--allow-short", short])
    if r.returncode != 0:
        fail("short --allow-short: check exit %d %r" % (r.returncode, r.stdout))
    # --junit keeps an existing file unless --force
    with open(j, "w") as f:
        f.write("mine")
    r = run([exe, "check", "--junit", j, leak])
    if r.returncode != 2 or open(j).read() != "mine" or "already exists" not in r.stderr:
        fail("--junit over an existing file: exit %d %r" % (r.returncode, r.stderr))
    r = run([exe, "check", "--junit", j, "--force", leak])
    if r.returncode != 1 or not cases(j):
        fail("--junit --force: exit %d" % r.returncode)
    # a leak that starts in the last 20 % of the run and still rises at the end: a leak
    late = os.path.join(tmp, "late.jsonl")
    series_stream(late, [100 * MiB] * 48 + [(100 + k) * MiB for k in range(1, 13)])
    r = run([exe, "check", late])
    if r.returncode != 1 or "leak +1 MiB/step" not in r.stdout or "grow_cache" not in r.stdout:
        fail("late leak: check exit %d %r" % (r.returncode, r.stdout))
    # a buffer taken once and given back inside one step: transient
    brief = os.path.join(tmp, "brief.jsonl")
    pk = [0] * 60
    pk[30] = 256 * MiB
    series_stream(brief, [0] * 60, pk, fn="scratch_once")
    r = run([exe, "report", "--format", "json", brief])
    verdicts = [s["verdict"] for p in json.loads(r.stdout)["processes"] for s in p["sites"]] if r.returncode == 0 else r
    if verdicts != ["transient"]:
        fail("brief buffer: verdicts %r" % (verdicts,))
    # a process title with characters XML 1.0 does not allow (U+0001, U+FFFE): the file
    # stays well-formed
    odd = os.path.join(tmp, "odd.jsonl")
    short_stream(odd)
    with open(odd) as f:
        lines = f.read().splitlines(True)
    hdr = json.loads(lines[0])
    hdr["host"] = "h\u0001\ufffe\U0001F600"
    lines[0] = json.dumps(hdr) + "\n"
    with open(odd, "w") as f:
        f.write("".join(lines))
    j = os.path.join(tmp, "odd.xml")
    r = run([exe, "check", "--allow-short", "--junit", j, odd])
    try:
        n = len(cases(j))
    except Exception as e:   # the parser's error: not well-formed
        fail("odd title: the JUnit file does not parse: %s" % e)
    if r.returncode != 0 or n != 5:
        fail("odd title: check exit %d, %d cases" % (r.returncode, n))
    # snapshot labels and annotations appear in every output that has a place for
    # them: the text and HTML reports, the JSON report, the Perfetto trace
    lab = os.path.join(tmp, "lab.jsonl")
    series_stream(lab, [MiB] * 8, fn="keep_weights")
    with open(lab) as f:
        lines = f.read().splitlines(True)
    rec = json.loads(lines[5])   # the 3rd snapshot: a manual one with a label and an annotation
    rec.update({"trigger": "manual", "label": "after <warm-up> & eval", "annotations": {"train.loss": 0.25}})
    lines[5] = json.dumps(rec) + "\n"
    with open(lab, "w") as f:
        f.write("".join(lines))
    r = run([exe, "report", lab])
    if r.returncode != 0 or "  during step 3: after <warm-up> & eval (manual snapshot, record 3)" not in r.stdout or \
            "train.loss = 0.25 (max 0.25) at step 2" not in r.stdout:
        fail("labels: text report %d %r" % (r.returncode, r.stdout))
    r = run([exe, "report", "--format", "json", lab])
    p0 = json.loads(r.stdout)["processes"][0]
    if p0.get("labels") != [{"seq": 3, "step": 2, "during_step": 3, "trigger": "manual",
                                "label": "after <warm-up> & eval"}] or \
            p0.get("annotations") != {"train.loss": 0.25}:
        fail("labels: JSON %r %r" % (p0.get("labels"), p0.get("annotations")))
    html = os.path.join(tmp, "lab.html")
    r = run([exe, "report", "--format", "html", "-o", html, lab])
    h = open(html).read() if r.returncode == 0 else ""
    # a snapshot taken after 2 steps is during step 3, as the peak's step counts
    if "after &lt;warm-up&gt; &amp; eval" not in h or "train.loss" not in h or \
            "<tr><td>3</td><td>after &lt;warm-up&gt; &amp; eval</td>" not in h or "<th>during step</th>" not in h:
        fail("labels: HTML report %d" % r.returncode)
    pf = os.path.join(tmp, "lab.perfetto.json")
    r = run([exe, "export", "--format", "perfetto", "-o", pf, lab])
    ev = json.load(open(pf))["traceEvents"] if r.returncode == 0 else []
    if not any(e.get("name") == "after <warm-up> & eval" and e.get("ph") == "i" for e in ev) or \
            not any(e.get("ph") == "M" and e.get("args", {}).get("train.loss") == 0.25 for e in ev):
        fail("labels: Perfetto trace %d" % r.returncode)
    print("gates ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
