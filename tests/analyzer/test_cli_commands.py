#!/usr/bin/env python3
"""test_cli_commands.py - the command line itself (CTest analyzer_cli).

  test_cli_commands.py cli VRAMTRACE TESTDIR   --version/--help, VRAMTRACE_READ_THREADS, diff,
                                               check limits, SIZE errors, -o safety, html content
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cli_common import check, run, golden, mini_stream, main


def t_cli(exe, testdir):
    for args in (["--version"], ["--help"], ["report", "-h"]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([exe] + args, stdout=full, stderr=subprocess.PIPE, timeout=60)
        check(r.returncode == 2, "%r > /dev/full: exit %d" % (args, r.returncode))
    r = run([exe, "--version"])
    check(r.returncode == 0 and re.match(r"vramtrace \d+\.\d+\.\d+ ", r.stdout), "--version: %d %r" % (r.returncode, r.stdout))
    # VRAMTRACE_READ_THREADS: the same report with 0, 1 and 8 parser threads; bad values exit 2
    for name in ("leak_churn-step-v2", "python_train-periodic", "oom_retry-step"):
        outs = [run([exe, "report", "--format", "json", golden(testdir, name)],
                    env={"VRAMTRACE_READ_THREADS": t} if t is not None else {}) for t in (None, "0", "1", "8")]
        check(all(o.returncode == 0 and o.stdout == outs[0].stdout for o in outs),
              "%s: reports differ across VRAMTRACE_READ_THREADS" % name)
    # a leak cut by its own OOM: grew_until_oom_step and exhaustion_step are that OOM's step
    r = run([exe, "report", "--format", "json", golden(testdir, "oom_retry-step")])
    sites = {s["frames"][0]["function"]: s for s in json.loads(r.stdout)["processes"][0]["sites"]}
    kv, ft = sites.get("alloc_kv_cache", {}), sites.get("forward_temp", {})
    check(kv.get("verdict") == "leak" and kv.get("grew_until_oom_step") == 11 and kv.get("exhaustion_step") == 11
          and "grew_until_oom_step" in ft and ft["grew_until_oom_step"] is None,
          "oom_retry-step: %r %r" % ({k: kv.get(k) for k in ("verdict", "grew_until_oom_step", "exhaustion_step")},
                                     ft.get("grew_until_oom_step", "absent")))
    for bad in ("x", "9", "-1", "2x"):
        r = run([exe, "report", golden(testdir, "stable-step")], env={"VRAMTRACE_READ_THREADS": bad})
        check(r.returncode == 2 and "VRAMTRACE_READ_THREADS must be 0..8" in r.stderr,
              "VRAMTRACE_READ_THREADS=%s: %d %r" % (bad, r.returncode, r.stderr))
    base, new = golden(testdir, "diff_base"), golden(testdir, "diff_new")
    r = run([exe, "diff", base, new])
    check(r.returncode == 0, "diff exit %d %s" % (r.returncode, r.stderr))
    check(re.search(r"^peak .*\(\+64 MiB, \+10\.1%\)", r.stdout, re.M), "diff does not show the planted +64 MiB peak:\n" + r.stdout)
    check(re.search(r"peak 64 MiB -> 128 MiB", r.stdout) and "alloc_activations" in r.stdout,
          "diff does not name the changed site:\n" + r.stdout)
    r = run([exe, "diff", base, base])
    check("no site changed" in r.stdout, "diff of a run with itself shows changes:\n" + r.stdout)
    # check limits
    leak = golden(testdir, "leak_churn-step")
    cases = [
        ([], 1, r"FAIL .*leak \+3 MiB/step .*\n\s+at record_history"),
        (["--max-growth", "4MiB"], 0, r"passed"),
        (["--max-growth", "2MiB"], 1, r"record_history"),
        (["--max-growth", "4MiB", "--max-unfreed", "600MiB"], 1, r"unfreed at exit 692 MiB \(limit 600 MiB\)"),
        (["--max-growth", "4MiB", "--max-unfreed", "1GiB"], 0, r"passed"),
        (["--max-growth", "4MiB", "--max-peak", "700MiB"], 1, r"peak 756 MiB \(limit 700 MiB\); largest sites by their own peak, not necessarily held at once:\n.*512 MiB at load_weights"),
        (["--max-growth", "4MiB", "--max-peak", "1GiB"], 0, r"passed"),
        (["--warmup", "59"], 3, r"INCONCLUSIVE .*too few steps to judge: 1 step after warm-up \(60 in all\), a leak needs at least 4"),
        (["--warmup", "59", "--allow-short"], 0, r"passed"),
    ]
    for args, code, pattern in cases:
        r = run([exe, "check"] + args + [leak])
        check(r.returncode == code, "check %r: exit %d, expected %d\n%s%s" % (args, r.returncode, code, r.stdout, r.stderr))
        check(re.search(pattern, r.stdout), "check %r output lacks /%s/:\n%s" % (args, pattern, r.stdout))
    r = run([exe, "check", "--max-growth", "4MiB", "--baseline", base, "--max-peak-increase", "5", new])
    check(r.returncode == 1 and "10.1% above the baseline's 636 MiB" in r.stdout, "baseline check: %d %s" % (r.returncode, r.stdout))
    r = run([exe, "check", "--max-growth", "4MiB", "--baseline", base, "--max-peak-increase", "15", new])
    check(r.returncode == 0, "baseline check within limit: %d %s" % (r.returncode, r.stdout))
    # "15%" reads as 15; options may follow the paths (GNU order)
    r = run([exe, "check", new, "--max-growth", "4MiB", "--baseline", base, "--max-peak-increase", "15%"])
    check(r.returncode == 0, "options after the path, 15%%: %d %s%s" % (r.returncode, r.stdout, r.stderr))
    r = run([exe, "check", new, "--max-growth", "4MiB", "--baseline", base, "--max-peak-increase", "5%"])
    check(r.returncode == 1 and "10.1% above the baseline" in r.stdout, "5%%: %d %s%s" % (r.returncode, r.stdout, r.stderr))
    r = run([exe, "check", "--max-peak-increase", "5%%", "--baseline", base, new])
    check(r.returncode == 2, "bad percentage 5%%%%: %d" % r.returncode)
    for bad in (["--max-growth", "3 MiB"], ["--max-peak", "-1"], ["--max-unfreed", "lots"], ["--baseline", base],
                ["--warmup", "x"], ["--bogus"]):
        r = run([exe, "check"] + bad + [leak])
        check(r.returncode == 2, "check %r: exit %d, expected 2" % (bad, r.returncode))
    for bad in ([], ["report"], ["report", "--format", "xml", leak], ["diff", base], ["nosuch"]):
        r = run([exe] + bad)
        check(r.returncode == 2, "%r: exit %d, expected 2" % (bad, r.returncode))
    # the text report ends with a newline, whatever the set
    for name in sorted(os.listdir(os.path.join(testdir, "golden"))):
        r = run([exe, "report", golden(testdir, name)])
        check(r.returncode == 0 and r.stdout.endswith("\n"), "%s: text report does not end with a newline" % name)
    # option errors: one line that names the option, exit 2 (getopt's own message off)
    for args, want in ((["report", "--format"], "vramtrace: report: option --format needs a value"),
                       (["report", "--bogus=3", leak], "vramtrace: report: unknown option --bogus"),
                       (["check", "-o", "x", leak], "vramtrace: check: unknown option -o"),
                       (["export", "-o"], "vramtrace: export: option -o needs a value"),
                       (["run", "--depth", "999", "--", "true"],
                        "vramtrace: run: --depth must be a whole number from 0 to 256, not \"999\""),
                       (["run", "--interval", "abc", "--", "true"],
                        "vramtrace: run: --interval must be a whole number from 0 to 86400000, not \"abc\"")):
        r = run([exe] + args)
        first = r.stderr.splitlines()[0] if r.stderr else ""
        check(r.returncode == 2 and first == want and r.stderr.count("vramtrace:") == 1,
              "%r: exit %d, stderr %r" % (args, r.returncode, r.stderr))
    # stdout that cannot be written (a full disk): exit 2 for every command, never a pass
    if os.path.exists("/dev/full"):
        for args in (["report", leak], ["check", base], ["diff", base, leak],
                     ["export", "--format", "collapsed", leak]):
            with open("/dev/full", "w") as full:
                r = subprocess.run([exe] + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
            check(r.returncode == 2 and "failed" in r.stderr, "%s > /dev/full: exit %d %r" % (args[0], r.returncode, r.stderr))
    # a process that wrote its header and died: check fails it (it ended without an exit
    # record), and is inconclusive on it when incomplete processes are allowed
    tmp = tempfile.mkdtemp()
    try:
        ho = os.path.join(tmp, "header-only.jsonl")
        with open(ho, "w") as f:
            f.write(mini_stream(snaps=[]))
        r = run([exe, "check", ho])
        check(r.returncode == 1 and "ended without an exit record (killed or `_exit`); its last snapshot held 0 B live "
              "(it wrote no snapshot at all)" in r.stdout, "header-only check: %d %r" % (r.returncode, r.stdout))
        r = run([exe, "check", "--allow-incomplete", ho])
        check(r.returncode == 3 and "no steps: not judged (0 steps)" in r.stdout, "header-only check, incomplete allowed: %d %r"
              % (r.returncode, r.stdout))
        r = run([exe, "check", leak])
        check("exit record" not in r.stdout, "the exit-record failure on a process that wrote one: %r" % r.stdout)
    finally:
        shutil.rmtree(tmp)
    # two copies of one process's stream (a copy taken while it ran): the fuller one is
    # read, whichever sorts first; the note names the one skipped
    tmp = tempfile.mkdtemp()
    try:
        full = open(sorted(glob.glob(os.path.join(leak, "*.jsonl")))[0]).read()
        for first_is_partial in (True, False):
            d = os.path.join(tmp, "dup%d" % first_is_partial)
            os.mkdir(d)
            part, whole = ("a.jsonl", "b.jsonl") if first_is_partial else ("b.jsonl", "a.jsonl")
            open(os.path.join(d, part), "w").write(full.splitlines(True)[0])
            open(os.path.join(d, whole), "w").write(full)
            r = run([exe, "check", d])
            check(r.returncode == 1 and "record_history" in r.stdout,
                  "duplicate with a partial %s: check %d %r" % (part, r.returncode, r.stdout[:300]))
            check(("%s: same process" % os.path.join(d, part)) in r.stderr and "skipped" in r.stderr,
                  "duplicate note does not name the partial copy %s: %r" % (part, r.stderr))
    finally:
        shutil.rmtree(tmp)
    # --version names the formats this build reads; "compare" is diff
    for args in (["--version"], ["--help"], ["report", "-h"]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([exe] + args, stdout=full, stderr=subprocess.PIPE, timeout=60)
        check(r.returncode == 2, "%r > /dev/full: exit %d" % (args, r.returncode))
    r = run([exe, "--version"])
    check(re.fullmatch(r"vramtrace \S+ \(reads snapshot formats 1 to 4\)\n", r.stdout), "--version: %r" % r.stdout)
    r1, r2 = run([exe, "diff", base, leak]), run([exe, "compare", base, leak])
    check(r2.returncode == r1.returncode and r2.stdout == r1.stdout and r1.stdout, "compare differs from diff")
    # a warm-up that covers every step is said, not silently judged as "no leak"
    r = run([exe, "check", "--warmup", "100000", leak])
    check("--warmup 100000 leaves no steps to judge" in r.stderr, "no warm-up note: %r" % r.stderr)
    r = run([exe, "report", leak])
    check("leaves no steps to judge" not in r.stderr, "warm-up note without --warmup: %r" % r.stderr)
    # -o never overwrites
    tmp = tempfile.mkdtemp()
    try:
        out = os.path.join(tmp, "r.html")
        r = run([exe, "report", "--format", "html", "-o", out, leak])
        check(r.returncode == 0 and os.path.getsize(out) > 0, "html -o: %d %s" % (r.returncode, r.stderr))
        html = open(out).read()
        # the curves are the timeline's (drawn by the page's own script from its data):
        # one view, the leaking site among its stacked sites, its rule in words
        m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', html, re.S)
        data = json.loads(m.group(1)) if m else {}
        tl = data.get("procs", [{}])[0].get("timeline", {}) if data.get("procs") else {}
        views = tl.get("views", [])
        sites = data["procs"][0]["sites"] if views else []
        leak_i = [i for i, x in enumerate(sites) if x["verdict"] == "leak"]
        check(len(views) == 1 and len(leak_i) == 1 and any(x["site"] == leak_i[0] for x in views[0]["sites"]),
              "html: the timeline lacks the one leaking site: %r" % [(v.get("label"), [x["site"] for x in v["sites"]]) for v in views])
        check(leak_i and "floor rose" in sites[leak_i[0]].get("rule", ""), "html: no rule in words for the leak: %r" %
              (sites[leak_i[0]].get("rule") if leak_i else None))
        check(not re.search(r"<script[^>]*\bsrc\s*=", html) and
              "http://" not in html.replace("http://www.w3.org/2000/svg", ""), "html is not self-contained")
        check("record_history" in html and "Leaks" in html, "html lacks the leak and its stack")
        open(out, "w").write("mine")
        r = run([exe, "report", "-o", out, leak])
        check(r.returncode == 2 and open(out).read() == "mine", "-o overwrote an existing file")
        r = run([exe, "report", "--force", "-o", out, leak])
        check(r.returncode == 0 and "LEAKS" in open(out).read(), "--force did not write")
        # -o never writes over an input, even with --force: not a snapshot file read,
        # nor a new *.jsonl inside an input folder (it would be read as one next time)
        run_dir = os.path.join(tmp, "run")
        shutil.copytree(leak, run_dir)
        snap = os.path.join(run_dir, sorted(f for f in os.listdir(run_dir) if f.endswith(".jsonl"))[0])
        before = open(snap, "rb").read()
        hard = os.path.join(tmp, "report-hardlink.html")   # another name for the same file
        os.link(snap, hard)
        for cmd in (["report", "--format", "html", "--force", "-o", snap, run_dir],
                    ["report", "--format", "html", "--force", "-o", hard, run_dir],
                    ["export", "--format", "perfetto", "--force", "-o", hard, run_dir],
                    ["report", "--force", "-o", snap, snap],
                    ["export", "--format", "collapsed", "--force", "-o", snap, run_dir],
                    ["report", "--format", "json", "-o", os.path.join(run_dir, "report.jsonl"), run_dir],
                    ["report", "--format", "json", "-o", os.path.join(run_dir, "report.jsonl"), snap]):
            r = run([exe] + cmd)
            check(r.returncode == 2 and "not written, even with --force" in r.stderr,
                  "%r: %d %s" % (cmd, r.returncode, r.stderr))
        check(open(snap, "rb").read() == before, "an input snapshot file was overwritten")
        check(not os.path.exists(os.path.join(run_dir, "report.jsonl")), "a *.jsonl was written into an input folder")
        r = run([exe, "report", "--format", "json", "-o", os.path.join(run_dir, "report.json"), run_dir])
        check(r.returncode == 0, "a .json report inside the input folder is fine: %s" % r.stderr)
        r = run([exe, "report", "--format", "json", "--force", "-o", os.path.join(run_dir, "report.json"), run_dir])
        check(r.returncode == 0, "replacing one's own report inside the input folder with --force: %s" % r.stderr)
        # a snapshot file named through a symbolic link: no *.jsonl beside the real file either
        latest = os.path.join(tmp, "latest.jsonl")
        os.symlink(snap, latest)
        r = run([exe, "report", "--format", "json", "-o", os.path.join(run_dir, "summary.jsonl"), latest])
        check(r.returncode == 2 and not os.path.exists(os.path.join(run_dir, "summary.jsonl")),
              "a *.jsonl beside a symlinked input's file: %d %r" % (r.returncode, r.stderr))
        # a failed write to a FIFO given with --force: the FIFO is not removed (only a
        # regular file this run created or replaced is)
        fifo = os.path.join(tmp, "out.fifo")
        os.mkfifo(fifo)
        many = os.path.join(tmp, "many.jsonl")   # a JSON report over a pipe's 64 KiB (~110 KB)
        with open(many, "w") as f:
            f.write(mini_stream(snaps=[{"t": "snapshot", "seq": i + 1, "trigger": "step", "step": i,
                                        "step_marked": True, "sites": [{"stack": 1, "kind": "device",
                                                                        "device": 0, "live_bytes": (i % 7) << 20}],
                                        "devices": [{"device": 0, "live_bytes": (i % 7) << 20,
                                                     "peak_bytes": 7 << 20}]}
                                       for i in range(3000)]))
        reader = subprocess.Popen(["head", "-c", "1", fifo], stdout=subprocess.DEVNULL)
        r = subprocess.run([exe, "report", "--format", "json", "--force", "-o", fifo, many], capture_output=True,
                           text=True, timeout=60, restore_signals=False,   # SIGPIPE ignored: EPIPE, exit 2
                           env=dict(os.environ, VRAMTRACE_ANALYZER_SLOTS="100000"))   # every step in the JSON
        reader.wait(timeout=30)
        check(r.returncode == 2 and os.path.exists(fifo), "report into a closed FIFO: %d, FIFO %s %r" %
              (r.returncode, "kept" if os.path.exists(fifo) else "REMOVED", r.stderr[:200]))
        # json has the fixed keys for every process of a multi-process folder, ranks shown
        r = run([exe, "report", "--format", "json", golden(testdir, "two_ranks-periodic")])
        rep = json.loads(r.stdout)
        check(sorted(p["rank"] for p in rep["processes"]) == [0, 1], "ranks: %r" % [p["rank"] for p in rep["processes"]])
        r = run([exe, "report", golden(testdir, "oom_frag-step")])
        check("fragmentation: enough memory is free" in r.stdout and re.search(r"splitting .*pin_small", r.stdout),
              "text report lacks the fragmentation forensics:\n" + r.stdout)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main({"cli": t_cli}))
