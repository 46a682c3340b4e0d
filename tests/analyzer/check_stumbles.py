#!/usr/bin/env python3
"""check_stumbles.py VRAMTRACE TESTDIR [TRAINING_LOOP] - what a newcomer following
README.md stumbled on, each said plainly and alike in text, JSON, HTML and check:
  - a leak's "leaked" counts from the floor at the last warm-up step: a leak of R
    bytes a step over m judged steps leaked m*R, and every output names that step
    as the end of warm-up (TRAINING_LOOP: the example, 3 MiB a step);
  - --step-range NAME that never matched a range says so in text, JSON, HTML and
    check (prog_nvtx beside TRAINING_LOOP);
  - check's advice for too few steps never asks for a shorter warm-up of 0;
  - an event trace (VTTRACE1) given to report is named as such with the export
    command for its stream; a folder's report names the trace beside a stream;
  - no section header stands over nothing: a site whose calls all failed is counted
    apart in text, JSON (never_held, sites_never_held) and HTML, and listed under
    no verdict (the fragmentation example beside TRAINING_LOOP);
  - check's summary counts each process's steps, never their sum;
  - report --format html without -o refuses a terminal with a one-line hint (a pipe
    still gets the page);
  - one step convention: curves "at the end of step N", the peak, OOMs and labels
    "during step N" (a mark inside the first --step-range range is during step 1);
  - a run that marked no step (prog_nosteps beside TRAINING_LOOP) judges nothing:
    "no steps: not judged" in text, JSON (not_judged) and HTML, the peak names no
    step, and each site's line shows its unfreed-at-exit figure;
  - a path that cannot be opened is "PATH: cannot open" (no line 0); counts agree
    with their nouns;
Exit 0 when every check holds, 1 with one FAIL line per failed check.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_common import FAILS as fails, check, page_data, run_long as run  # noqa: E402


def leaked_baseline(vt, training, tmp):
    # training_loop 20: steps 1..20, automatic warm-up 2 (steps 1-2), 18 judged steps
    # at 3 MiB each: 54 MiB leaked since step 2
    out = os.path.join(tmp, "tl")
    r = run([vt, "run", "-o", out, "--", training, "20"])
    check(r.returncode == 0, "run training_loop: exit %d %s" % (r.returncode, r.stderr[-500:]))
    rep = json.loads(run([vt, "report", "--format", "json", out]).stdout)
    p = rep["processes"][0]
    site = next(s for s in p["sites"] if s["verdict"] == "leak")
    warm = site.get("warmup_steps", p.get("warmup_steps"))
    check(site["leaked_bytes"] == 54 << 20 and site.get("leaked_since_step") == 2,
          "JSON leaked %r since %r (want 54 MiB since step 2)" % (site["leaked_bytes"], site.get("leaked_since_step")))
    text = run([vt, "report", out]).stdout
    check(re.search(r"leaked 54 MiB, ", text) and re.search(r"\d+ MiB at the end of step 2 \(end of warm-up\) \.\. ", text),
          "text report:\n" + text[:900])
    data = page_data(vt, out, os.path.join(tmp, "tl.html"))
    hs = next(s for s in data["procs"][0]["sites"] if s.get("verdict") == "leak")
    rule = hs.get("rule", "")
    check("leaked 54 MiB since step 2 (the end of warm-up)" in rule and "each of the last 18 steps (every one after warm-up)"
          in rule, "HTML rule: %r" % rule)
    ch = next((s for s in data["procs"][0]["sites"] if s.get("verdict") == "churn"), None)
    if ch:
        check(" of the 18 steps after warm-up" in ch.get("rule", ""), "HTML churn rule: %r" % ch.get("rule"))
    page = open(os.path.join(tmp, "tl.html"), encoding="utf-8").read()   # the table drawn without scripts
    check("<td>54 MiB since step 2 (the end of warm-up)</td>" in page, "HTML leak table: no leaked cell with its step")
    r = run([vt, "check", "--max-growth", "1MiB", out])
    check("leaked 54 MiB since step 2 (the end of warm-up)" in r.stdout, "check:\n" + r.stdout)
    return out


def step_range_unmatched(vt, bindir, tmp):
    prog = os.path.join(bindir, "prog_nvtx")
    if not os.path.exists(prog):
        print("skipped: no prog_nvtx")
        return
    out = os.path.join(tmp, "n6")
    r = run([vt, "run", "--step-range", "nosuchname", "-o", out, "--", prog, "steps"])
    words = "--step-range nosuchname never matched an NVTX range (0 range ends seen)"
    check(r.returncode == 0 and re.search(r"^vramtrace: pid \d+: " + re.escape(words), r.stderr, re.M),
          "run prog_nvtx: exit %d %s" % (r.returncode, r.stderr[-500:]))
    text = run([vt, "report", out]).stdout
    check(words in text and "matched no range" in text, "text report:\n" + text[:900])
    p = json.loads(run([vt, "report", "--format", "json", out]).stdout)["processes"][0]
    check(p.get("step_range") == "nosuchname" and p.get("step_range_matched") is False, "JSON: %r" % p.get("step_range_matched"))
    page = os.path.join(tmp, "n6.html")
    run([vt, "report", "--format", "html", "--force", "-o", page, out])
    check(words in open(page, encoding="utf-8").read(), "HTML lacks the unmatched --step-range warning")
    r = run([vt, "check", out])
    check(r.returncode != 0 and words in r.stdout and "mark steps (vramtrace_step()" not in r.stdout, "check:\n" + r.stdout)
    # a range that does match: no such words, and JSON says it matched
    out2 = os.path.join(tmp, "n7")
    r = run([vt, "run", "--step-range", "train_step", "-o", out2, "--", prog, "steps"])
    check("never matched" not in r.stderr, "run with a matching range: %r" % r.stderr[-500:])
    text = run([vt, "report", out2]).stdout
    p = json.loads(run([vt, "report", "--format", "json", out2]).stdout)["processes"][0]
    check("never matched" not in text and p.get("step_range_matched") is True, "matched range:\n" + text[:600])


def short_advice(vt, training, tmp):
    # 3 steps: automatic warm-up 0, nothing to shorten
    out = os.path.join(tmp, "s3")
    run([vt, "run", "-o", out, "--", training, "3"])
    r = run([vt, "check", out])
    check("INCONCLUSIVE" in r.stdout and "warm-up 0" not in r.stdout and "--warmup" not in r.stdout
          and "run more steps (--allow-short passes it)" in r.stdout, "check, 3 steps:\n" + r.stdout)
    # 4 steps: warm-up 1, 3 judged: a shorter warm-up would help
    out = os.path.join(tmp, "s4")
    run([vt, "run", "-o", out, "--", training, "4"])
    r = run([vt, "check", out])
    check("run more steps, or a shorter --warmup" in r.stdout, "check, 4 steps:\n" + r.stdout)


def event_trace(vt, training, tmp):
    out = os.path.join(tmp, "tr1")
    r = subprocess.run([vt, "run", "-o", out, "--", training, "6"], capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1", VRAMTRACE_TRACE="1"), timeout=120)
    traces = [f for f in os.listdir(out) if f.endswith(".trace")] if os.path.isdir(out) else []
    if not check(r.returncode == 0 and len(traces) == 1, "run with VRAMTRACE_TRACE=1: %d %r" % (r.returncode, traces)):
        return
    tr = os.path.join(out, traces[0])
    stream = tr[:-len(".trace")] + ".jsonl.zst"
    r = run([vt, "report", tr])
    check(r.returncode == 2 and r.stderr.startswith(tr + ": this is an event trace (VTTRACE1)")
          and "vramtrace export --format torch|perfetto " + stream in r.stderr, "report TRACE: %d %r" % (r.returncode, r.stderr))
    text = run([vt, "report", out]).stdout
    check(re.search(r"^   event trace " + re.escape(tr) + r" \(every allocation and free\): `vramtrace export", text, re.M),
          "folder report does not name the trace:\n" + text[:600])
    p = json.loads(run([vt, "report", "--format", "json", out]).stdout)["processes"][0]
    check(p.get("event_trace") == tr, "JSON event_trace %r" % p.get("event_trace"))
    page = os.path.join(tmp, "tr1.html")
    run([vt, "report", "--format", "html", "--force", "-o", page, out])
    check("event trace " + tr in open(page, encoding="utf-8").read(), "HTML does not name the trace")
    p = json.loads(run([vt, "report", "--format", "json", os.path.join(tmp, "tl")]).stdout)["processes"][0]
    check(p.get("event_trace", 1) is None, "JSON event_trace without a trace: %r" % p.get("event_trace", 1))


def check_summary(vt, training, tmp):
    out = os.path.join(tmp, "e2")
    for _ in range(2):
        run([vt, "run", "-o", out, "--", training, "12"])
    r = run([vt, "check", "--max-growth", "1GiB", out])
    check(r.returncode == 0 and r.stdout.endswith("vramtrace check: passed (2 processes, 12 steps each)\n"),
          "check of two 12-step processes: %d\n%s" % (r.returncode, r.stdout))
    run([vt, "run", "-o", out, "--", training, "8"])
    r = run([vt, "check", "--max-growth", "1GiB", out])
    check(r.returncode == 0 and r.stdout.endswith("vramtrace check: passed (3 processes, 8 to 12 steps)\n"),
          "check of 12, 12 and 8 steps: %d\n%s" % (r.returncode, r.stdout))
    r = run([vt, "check", "--allow-short", os.path.join(tmp, "s3")])
    check(r.stdout.endswith("(1 process, 3 steps)\n"), "check of one process:\n" + r.stdout)


def no_empty_sections(vt, bindir, tmp):
    prog = os.path.join(bindir, "fragmentation")
    if not os.path.exists(prog):
        print("skipped: no fragmentation example")
        return
    out = os.path.join(tmp, "frag")
    run([vt, "run", "-o", out, "--", prog])
    text = run([vt, "report", out]).stdout
    lines = text.split("\n")
    empty = [l for i, l in enumerate(lines) if re.match(r"^[A-Z][A-Z ]+( \(|$)", l) and (i + 1 >= len(lines) or not lines[i + 1].strip())]
    check("1 whose calls all failed" in text and not empty, "empty sections %r in:\n%s" % (empty, text))
    p = json.loads(run([vt, "report", "--format", "json", out]).stdout)["processes"][0]
    big = [s for s in p["sites"] if s["frames"] and s["frames"][0]["function"] == "alloc_big"]
    check(p.get("sites_never_held") == 1 and len(big) == 1 and big[0]["verdict"] == "stable" and big[0].get("never_held") is True
          and all(s.get("never_held") is False for s in p["sites"] if s not in big), "JSON never_held: %r" % p.get("sites_never_held"))
    page = os.path.join(tmp, "frag.html")
    run([vt, "report", "--format", "html", "--force", "-o", page, out])
    html = open(page, encoding="utf-8").read()
    check("0 stable, 1 transient, 1 too few steps to judge, 1 whose calls all failed" in html
          and "stable (its calls all failed)" in html, "HTML does not count the failed site apart")


def html_to_terminal(vt, golden):
    import pty
    leak = os.path.join(golden, "leak_churn-step")
    master, slave = pty.openpty()
    try:
        r = subprocess.run([vt, "report", "--format", "html", leak], stdout=slave, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        os.close(slave)
        got = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    finally:
        os.close(master)
    check(r.returncode == 2 and b"<html" not in got.lower() and "use -o report.html" in r.stderr
          and len(r.stderr.strip().split("\n")) == 1, "html to a terminal: %d %r, %d bytes" % (r.returncode, r.stderr, len(got)))
    r = run([vt, "report", "--format", "html", leak])
    check(r.returncode == 0 and "<html" in r.stdout.lower(), "html to a pipe: %d" % r.returncode)


def small_words(vt, tmp):
    missing = os.path.join(tmp, "nonexist")
    r = run([vt, "report", missing])
    check(r.returncode == 2 and r.stderr.startswith(missing + ": cannot open") and ":0:" not in r.stderr,
          "report MISSING: %r" % r.stderr)


def step_words(vt, tl, bindir, tmp):
    """One step convention (docs/metrics.md "Step numbers"): step N runs from the
    (N-1)th mark to the Nth; a curve's figure is "at the end of step N", a moment (the
    peak, an OOM, a label) is "during step N". TL: training_loop 20's run."""
    text = run([vt, "report", tl]).stdout
    check(re.search(r" MiB at the end of step 2 \(end of warm-up\) \.\. \d+ MiB at the end of step 20\n", text),
          "curve not worded at the end of its steps:\n" + text[:900])
    check(re.search(r"at the peak \([0-9.]+ MiB, during step 20\): ", text), "peak not worded during its step:\n" + text)
    prog = os.path.join(bindir, "prog_nvtx")
    if not os.path.exists(prog):
        print("skipped: no prog_nvtx")
        return
    # a mark inside the first range (record step 0) is during step 1, the first step
    out = os.path.join(tmp, "n8")
    r = run([vt, "run", "--step-range", "train_step", "-o", out, "--", prog, "steps"])
    check(r.returncode == 0, "run prog_nvtx: exit %d" % r.returncode)
    text = run([vt, "report", out]).stdout
    check("  during step 1: step done (manual snapshot, record " in text and "step 0" not in text,
          "label of the first range's mark:\n" + text)
    p = json.loads(run([vt, "report", "--format", "json", out]).stdout)["processes"][0]
    check([(l["step"], l["during_step"]) for l in p["labels"]][:1] == [(0, 1)], "JSON labels %r" % p["labels"])
    page = os.path.join(tmp, "n8.html")
    run([vt, "report", "--format", "html", "--force", "-o", page, out])
    check("<th>during step</th>" in open(page, encoding="utf-8").read(), "HTML labels table not headed during step")


def no_steps(vt, bindir, tmp):
    """A run that marked no step: nothing is judged, said alike everywhere; the peak
    names no step; a site's unfreed-at-exit figure is the one its line shows."""
    prog = os.path.join(bindir, "prog_nosteps")
    if not os.path.exists(prog):
        print("skipped: no prog_nosteps")
        return
    out = os.path.join(tmp, "n0")
    r = run([vt, "run", "-o", out, "--", prog])
    check(r.returncode == 0, "run prog_nosteps: exit %d %s" % (r.returncode, r.stderr[-500:]))
    rep = json.loads(run([vt, "report", "--format", "json", out]).stdout)
    p = rep["processes"][0]
    check(p["steps"] == 0, "prog_nosteps steps %r (want 0)" % p["steps"])
    held = [s for s in p["sites"] if s["peak_bytes"] or s["unfreed_at_exit_bytes"]]
    check(len(held) == 3 and all(s["verdict"] == "too_few_steps" and s.get("not_judged") == "no steps: not judged"
                                 for s in held),
          "JSON verdicts: %r" % [(s["verdict"], s.get("not_judged"), s["frames"][0]["function"]) for s in held])
    pc = p.get("peak_composition") or {}
    check("step" in pc and pc["step"] is None, "JSON peak_composition step %r (want null)" % pc.get("step"))
    text = run([vt, "report", out]).stdout
    check("STABLE" not in text and "TOO FEW STEPS" not in text and "NO STEPS: NOT JUDGED" in text
          and "3 not judged (no steps)" in text, "text verdicts:\n" + text)
    check(re.search(r"at the peak \(128 MiB\):", text) and "step 1" not in text, "text peak names a step:\n" + text)
    check(re.search(r"64 MiB  no steps: not judged  main \(prog_nosteps\.c:\d+\)", text)
          and re.search(r"peak +64 MiB  unfreed at exit +64 MiB  main \(prog_nosteps\.c:\d+\)", text)
          and "floor" not in text, "text unfreed figures disagree:\n" + text)
    data = page_data(vt, out, os.path.join(tmp, "n0.html"))
    hs = data["procs"][0]["sites"]
    check(all(s["rule"].startswith("no steps: not judged") for s in hs if s["peak"] or s["unfreed"]),
          "HTML rules: %r" % [s["rule"] for s in hs])
    check(data["procs"][0]["flame"]["peak"]["step"] is None, "HTML flame peak step %r" % data["procs"][0]["flame"]["peak"])
    page = open(os.path.join(tmp, "n0.html"), encoding="utf-8").read()
    check("3 not judged (no steps)" in page and "too few steps to judge" not in page, "HTML header verdict counts")
    r = run([vt, "check", out])
    check(r.returncode == 3 and "no steps: not judged (0 steps)" in r.stdout and "too few steps" not in r.stdout,
          "check: %d\n%s" % (r.returncode, r.stdout))


def main():
    vt, testdir = sys.argv[1], sys.argv[2]
    training = sys.argv[3] if len(sys.argv) > 3 else ""
    with tempfile.TemporaryDirectory() as tmp:
        if training:
            tl = leaked_baseline(vt, training, tmp)
            step_words(vt, tl, os.path.dirname(training), tmp)
            step_range_unmatched(vt, os.path.dirname(training), tmp)
            short_advice(vt, training, tmp)
            event_trace(vt, training, tmp)
            check_summary(vt, training, tmp)
            no_empty_sections(vt, os.path.dirname(training), tmp)
            no_steps(vt, os.path.dirname(training), tmp)
        else:
            print("skipped: the training-loop example (no preload or simulated device built)")
        small_words(vt, tmp)
        html_to_terminal(vt, os.path.join(testdir, "golden"))
    if fails:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
