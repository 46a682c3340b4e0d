#!/usr/bin/env python3
"""check_ux.py VRAMTRACE TESTDIR [TRAINING_LOOP] - what a first-time reader of the outputs needs to
find in them, on the golden sets:
  - diff names its runs: the text starts with a "base" and a "new" line (the paths
    as given, in that order, with their process counts) and says figures read
    base -> new; `--format json` has "base" and "new" objects with the same paths
    and figures, and its changes match the text's;
  - where growth began, said the same way in text, JSON, the HTML page's data (the
    site panel's rule and its "floor first rose at" row) and check: a leak whose floor
    first rose during the warm-up says so and names the first judged step (the end
    of warm-up); one that first rose after it says only "floor first rose at step N";
    none says "growing since" (the site allocated before its floor first rose);
  - with TRAINING_LOOP (the example, run under the preload on the simulated device:
    LD_LIBRARY_PATH set by the caller): the leak warning the preload printed while it
    ran is said again by `vramtrace run` (and `run --check`) with the site named as
    the report names it, function (file:line), which the preload's line cannot give;
    a process of an earlier run in the same folder is not listed again.
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


def diff_header(vt, golden):
    base, new = os.path.join(golden, "diff_base"), os.path.join(golden, "diff_new")
    r = run([vt, "diff", base, new])
    check(r.returncode == 0, "diff: exit %d %s" % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    check(len(lines) > 3 and lines[0] == "base  %s  (1 process)" % base and lines[1] == "new   %s  (1 process)" % new
          and lines[2] == "each figure: base -> new", "diff text header:\n" + "\n".join(lines[:4]))
    # swapped: the header follows the arguments, and so do the figures
    r2 = run([vt, "diff", new, base])
    check(r2.stdout.startswith("base  %s  (1 process)\nnew   %s  (1 process)\n" % (new, base))
          and re.search(r"^peak +700 MiB -> 636 MiB", r2.stdout, re.M), "diff NEW BASE header:\n" + r2.stdout[:400])
    r = run([vt, "diff", "--format", "json", base, new])
    check(r.returncode == 0, "diff --format json: exit %d %s" % (r.returncode, r.stderr))
    try:
        j = json.loads(r.stdout)
    except ValueError as e:
        check(False, "diff --format json is not JSON (%s): %r" % (e, r.stdout[:300]))
        return
    check(j.get("format") == "vramtrace-diff" and j.get("version") == 1, "diff JSON format/version: %r" % j.get("format"))
    b, n = j.get("base") or {}, j.get("new") or {}
    check(b.get("path") == base and n.get("path") == new and b.get("processes") == 1 and n.get("processes") == 1,
          "diff JSON base/new: %r %r" % (b, n))
    check(n.get("peak_bytes", 0) - b.get("peak_bytes", 0) == 64 << 20, "diff JSON peaks: %r %r" % (b, n))
    ch = j.get("changes") or []
    check(len(ch) == 1 and ch[0]["change"] == "changed" and ch[0]["title"].startswith("alloc_activations")
          and ch[0]["base"]["peak_bytes"] == 64 << 20 and ch[0]["new"]["peak_bytes"] == 128 << 20
          and ch[0]["base"]["verdict"] == ch[0]["new"]["verdict"] == "churn", "diff JSON changes: %r" % ch)
    r = run([vt, "diff", "--format", "json", base, base])
    check(r.returncode == 0 and json.loads(r.stdout).get("changes") == [], "diff JSON of a run with itself: %r" % r.stdout[:300])
    r = run([vt, "diff", "--format", "html", base, new])
    check(r.returncode == 2 and "--format must be text or json" in r.stderr, "diff --format html: %d %r" % (r.returncode, r.stderr))


def growth_words(vt, golden, tmp):
    # leak_churn-step: 60 steps (0-59), warm-up 6 (steps 0-5), judged from step 6;
    # record_history's floor first rose at step 1, during the warm-up, and at step 6
    # first among the judged steps (leaked counts from step 5, the last warm-up step)
    leak = os.path.join(golden, "leak_churn-step")
    rep = json.loads(run([vt, "report", "--format", "json", leak]).stdout)
    site = next(s for s in rep["processes"][0]["sites"] if s["frames"][0]["function"] == "record_history")
    check(site.get("first_growth_step") == 1 and site.get("first_growth_in_warmup") is True and site.get("judged_from_step") == 6
          and site.get("first_judged_growth_step") == 6,
          "JSON: %r" % {k: site.get(k) for k in ("first_growth_step", "first_growth_in_warmup", "judged_from_step",
                                                  "first_judged_growth_step")})
    words = "floor first rose at step 1 (during warm-up; judged from step 6)"
    text = run([vt, "report", leak]).stdout
    check(re.search(r"leaked \d+ MiB, " + re.escape(words) + "  \\(device", text), "text report:\n" + text[:600])
    data = page_data(vt, leak, os.path.join(tmp, "leak.html"))
    hs = next(s for s in data["procs"][0]["sites"] if s.get("verdict") == "leak")
    check(hs.get("since") == 1 and hs.get("since_text") == "step 1 (during warm-up; judged from step 6)",
          "HTML data since: %r %r" % (hs.get("since"), hs.get("since_text")))
    check(words in hs.get("rule", "") and "since step 5 (the end of warm-up)" in hs.get("rule", ""),
          "HTML rule: %r" % hs.get("rule"))
    page = open(os.path.join(tmp, "leak.html"), encoding="utf-8").read()   # the table drawn without scripts
    check("<th>floor first rose at</th>" in page and "<td>step 1 (during warm-up; judged from step 6)</td>" in page,
          "HTML leak table: no floor-first-rose cell with the warm-up note")
    check("growing since" not in text and "growing since" not in page, "\"growing since\" still said")
    r = run([vt, "check", leak])
    check(re.search(r"since step 5 \(the end of warm-up\), " + re.escape(words), r.stdout), "check:\n" + r.stdout)
    # first rise at the first judged step: no warm-up note anywhere
    ex = os.path.join(golden, "oom_exhaust-step")
    rep = json.loads(run([vt, "report", "--format", "json", ex]).stdout)
    site = next(s for s in rep["processes"][0]["sites"] if s["verdict"] == "leak")
    check(site.get("first_growth_in_warmup") is False and site.get("first_growth_step") == site.get("judged_from_step") == 1,
          "oom_exhaust-step JSON: %r" % {k: site.get(k) for k in ("first_growth_step", "first_growth_in_warmup",
                                                                    "judged_from_step")})
    text = run([vt, "report", ex]).stdout
    check("floor first rose at step 1  (device" in text and "during warm-up" not in text, "oom_exhaust-step text:\n" + text[:500])
    data = page_data(vt, ex, os.path.join(tmp, "ex.html"))
    hs = next(s for s in data["procs"][0]["sites"] if s.get("verdict") == "leak")
    check(hs.get("since_text") == "step 1" and "during warm-up" not in hs.get("rule", ""),
          "oom_exhaust-step HTML: %r %r" % (hs.get("since_text"), hs.get("rule")))
    # the panel's row shows the words (site.js), not the bare step
    js = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analyzer", "report", "html",
                           "site.js")).read()
    check("s.since_text" in js and "'floor first rose at'" in js, "site.js does not show since_text as floor first rose at")


def live_warnings(vt, training, tmp):
    out = os.path.join(tmp, "run")
    r = run([vt, "run", "-o", out, "--", training, "20"])
    check(r.returncode == 0, "run training_loop: exit %d\n%s" % (r.returncode, r.stderr[-800:]))
    check("vramtrace: possible leak: remember_batch" in r.stderr, "the preload printed no leak warning:\n" + r.stderr[-800:])
    said = re.findall(r"^vramtrace:   pid (\d+): possible leak: (.*)$", r.stderr, re.M)
    print("run: " + "; ".join(w for _, w in said))
    check(len(said) == 1 and re.match(r"remember_batch \(training_loop\.cu:\d+\) growing 3 MiB/step \(\d+ steps in a row "
                                      r"by step \d+\) \(device, device 0\)$", said[0][1]),
          "run did not name the warned site as the report does:\n" + r.stderr[-800:])
    text = run([vt, "report", out]).stdout
    m = re.search(r"^\s+at (remember_batch \(training_loop\.cu:\d+\))$", text, re.M)
    check(m and said and said[0][1].startswith(m.group(1) + " "), "the report names it otherwise: %r" % (m and m.group(1)))
    # the same folder again, with --check: only this run's process
    r = run([vt, "run", "-o", out, "--check", "--max-growth", "1GiB", "--", training, "20"])
    said2 = re.findall(r"^vramtrace:   pid (\d+): possible leak: (.*)$", r.stderr, re.M)
    check(r.returncode == 0 and len(said2) == 1 and said and said2[0][0] != said[0][0]
          and said2[0][1].startswith("remember_batch (training_loop.cu:"),
          "run --check into the same folder: exit %d, %r" % (r.returncode, said2))


def main():
    vt, testdir = sys.argv[1], sys.argv[2]
    golden = os.path.join(testdir, "golden")
    with tempfile.TemporaryDirectory() as tmp:
        diff_header(vt, golden)
        growth_words(vt, golden, tmp)
        if len(sys.argv) > 3:
            live_warnings(vt, sys.argv[3], tmp)
    if fails:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
