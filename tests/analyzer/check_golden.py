#!/usr/bin/env python3
"""check_golden.py - compares `vramtrace report --format json` and `vramtrace check`
on one golden snapshot set against the set's expect.json (written by
gen_fixtures.py from what each scenario was built to do), and the text report
against report.txt when the set has one.

Usage: check_golden.py VRAMTRACE SETDIR [--update-text]
Exit 0 when everything matches; 1 with one line per mismatch otherwise.
"""
import json
import os
import subprocess
import sys

FIXED_PROCESS_KEYS = ["pid", "host", "rank", "peak_bytes", "unfreed_at_exit_bytes", "steps", "sites", "ooms"]
FIXED_SITE_KEYS = ["id", "verdict", "kind", "growth_bytes_per_step", "leaked_bytes", "unfreed_at_exit_bytes",
                   "peak_bytes", "frames"]
FIXED_FRAME_KEYS = ["function", "file", "line", "module"]
FIXED_OOM_KEYS = ["requested_bytes", "free_bytes", "total_bytes", "verdict"]


def main():
    exe, setdir = sys.argv[1], sys.argv[2]
    update = "--update-text" in sys.argv
    exp = json.load(open(os.path.join(setdir, "expect.json")))
    errors = []
    env = dict(os.environ, NO_COLOR="1")
    r = subprocess.run([exe, "report", "--format", "json", setdir], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("report exited %d: %s" % (r.returncode, r.stderr))
        return 1
    rep = json.loads(r.stdout)
    if rep.get("format") != "vramtrace-report" or rep.get("version") != 1:
        errors.append("report format/version wrong: %r %r" % (rep.get("format"), rep.get("version")))
    procs = {p["pid"]: p for p in rep["processes"]}
    for p in rep["processes"]:
        for k in FIXED_PROCESS_KEYS:
            if k not in p:
                errors.append("process %s lacks key %s" % (p.get("pid"), k))
        for s in p["sites"]:
            for k in FIXED_SITE_KEYS:
                if k not in s:
                    errors.append("site %s lacks key %s" % (s.get("id"), k))
            for fr in s["frames"]:
                for k in FIXED_FRAME_KEYS:
                    if k not in fr:
                        errors.append("frame lacks key %s" % k)
            if s["frames"] and s["frames"][0]["function"] in ("cudaMalloc", None):
                errors.append("site %s: CUDA runtime frame not trimmed" % s["id"])
        for o in p["ooms"]:
            for k in FIXED_OOM_KEYS:
                if k not in o:
                    errors.append("oom lacks key %s" % k)
    if len(procs) != len(exp["processes"]):
        errors.append("expected %d processes, report has %d" % (len(exp["processes"]), len(procs)))
    for ep in exp["processes"]:
        p = procs.get(ep["pid"])
        if not p:
            errors.append("pid %d missing" % ep["pid"])
            continue
        tag = "pid %d" % ep["pid"]
        if "rank" in ep and p["rank"] != ep["rank"]:
            errors.append("%s: rank %r, expected %r" % (tag, p["rank"], ep["rank"]))
        if "unfreed_at_exit_bytes" in ep and p["unfreed_at_exit_bytes"] != ep["unfreed_at_exit_bytes"]:
            errors.append("%s: unfreed_at_exit_bytes %d, expected %d" % (tag, p["unfreed_at_exit_bytes"], ep["unfreed_at_exit_bytes"]))
        if "exited" in ep and p.get("exited") != ep["exited"]:
            errors.append("%s: exited %r, expected %r" % (tag, p.get("exited"), ep["exited"]))
        by_fn = {}
        for s in p["sites"]:
            if s["python_frames"]:
                continue   # named by their Python frames (py_sites below)
            fn = s["frames"][0]["function"] if s["frames"] else None
            by_fn.setdefault(fn, []).append(s)
        for fn, es in ep.get("sites", {}).items():
            ss = by_fn.get(fn)
            if not ss or len(ss) != 1:
                errors.append("%s: expected one site at %s, found %d" % (tag, fn, len(ss or [])))
                continue
            s = ss[0]
            if "verdict" in es and s["verdict"] != es["verdict"]:
                errors.append("%s: %s is %s, expected %s" % (tag, fn, s["verdict"], es["verdict"]))
            if "growth" in es:
                lo, hi = es["growth"]
                if not lo <= s["growth_bytes_per_step"] <= hi:
                    errors.append("%s: %s grows %.0f B/step, expected %.0f..%.0f" % (tag, fn, s["growth_bytes_per_step"], lo, hi))
            if "unfreed" in es and s["unfreed_at_exit_bytes"] != es["unfreed"]:
                errors.append("%s: %s unfreed %d, expected %d" % (tag, fn, s["unfreed_at_exit_bytes"], es["unfreed"]))
        # Python sites: named by a Python function of their stack
        for fn, es in ep.get("py_sites", {}).items():
            ss = [s for s in p["sites"] if any(f["function"] == fn for f in s["python_frames"])]
            if len(ss) != es.get("count", 1):
                errors.append("%s: expected %d site(s) whose Python frames name %s, found %d"
                              % (tag, es.get("count", 1), fn, len(ss)))
                continue
            for s in ss:
                pf = next(f for f in s["python_frames"] if f["function"] == fn)
                if "file" in es and (pf["file"], pf["line"]) != (es["file"], es["line"]):
                    errors.append("%s: %s at %s:%d, expected %s:%d" % (tag, fn, pf["file"], pf["line"], es["file"], es["line"]))
                shown = [f for f in s["frames"] if f["module"] == "python"]
                if len(shown) != len(s["python_frames"]) or any(
                        (f["function"], f["file"], f["line"]) != (q["function"], q["file"], q["line"] or None)
                        for f, q in zip(shown, s["python_frames"])):
                    errors.append("%s: %s: the shown frames do not hold the Python frames in order" % (tag, fn))
                if "title" in es and s.get("title") != es["title"]:
                    errors.append("%s: %s titled %r, expected %r" % (tag, fn, s.get("title"), es["title"]))
                if "verdict" in es and s["verdict"] != es["verdict"]:
                    errors.append("%s: %s is %s, expected %s" % (tag, fn, s["verdict"], es["verdict"]))
                if "growth" in es:
                    lo, hi = es["growth"]
                    if not lo <= s["growth_bytes_per_step"] <= hi:
                        errors.append("%s: %s grows %.0f B/step, expected %.0f..%.0f" % (tag, fn, s["growth_bytes_per_step"], lo, hi))
                if "unfreed" in es and s["unfreed_at_exit_bytes"] != es["unfreed"]:
                    errors.append("%s: %s unfreed %d, expected %d" % (tag, fn, s["unfreed_at_exit_bytes"], es["unfreed"]))
        # annotations: the latest values; PyTorch's per device
        if "annotations" in ep and p.get("annotations") != ep["annotations"]:
            errors.append("%s: annotations %r, expected %r" % (tag, p.get("annotations"), ep["annotations"]))
        if "torch" in ep:
            t = next((d.get("torch") for d in p["devices"] if d["device"] == 0), None)
            for k, v in ep["torch"].items():
                if not t or t.get(k) != v:
                    errors.append("%s: device 0 torch.%s = %r, expected %r" % (tag, k, t and t.get(k), v))
        if "host_warnings" in ep:
            got = (p.get("host_signals") or {}).get("warnings")
            if got != ep["host_warnings"]:
                errors.append("%s: host warnings %r, expected %r" % (tag, got, ep["host_warnings"]))
        # a site the scenario does not name must not be a leak
        for s in p["sites"]:
            fn = s["frames"][0]["function"] if s["frames"] else None
            if s["python_frames"]:
                if s["verdict"] == "leak" and not any(f["function"] in ep.get("py_sites", {}) for f in s["python_frames"]):
                    errors.append("%s: unexpected leak at %s" % (tag, s.get("title")))
                continue
            if fn not in ep.get("sites", {}) and s["verdict"] == "leak":
                errors.append("%s: unexpected leak at %s" % (tag, fn))
        eo = ep.get("ooms", [])
        if len(eo) != len(p["ooms"]):
            errors.append("%s: %d OOMs, expected %d" % (tag, len(p["ooms"]), len(eo)))
        for o, e in zip(p["ooms"], eo):
            if o["verdict"] != e["verdict"]:
                errors.append("%s: OOM verdict %s, expected %s" % (tag, o["verdict"], e["verdict"]))
            if o["requested_bytes"] != e["requested_bytes"]:
                errors.append("%s: OOM requested %d, expected %d" % (tag, o["requested_bytes"], e["requested_bytes"]))
            if "splitting" in e:
                names = [s["frames"][0]["function"] for s in o.get("splitting_sites", []) if s["frames"]]
                if not names or names[0] != e["splitting"]:
                    errors.append("%s: OOM splitting sites %r, expected %s first" % (tag, names, e["splitting"]))
            if "top" in e:
                names = [s["frames"][0]["function"] for s in o.get("top_sites", []) if s["frames"]]
                if not names or names[0] != e["top"]:
                    errors.append("%s: OOM top sites %r, expected %s first" % (tag, names, e["top"]))
            if o["free_bytes"] is not None and o["total_bytes"] is not None:
                want = (o["total_bytes"] - o["free_bytes"]) - o["tracked_bytes"]
                if o["untracked_bytes"] != want:
                    errors.append("%s: untracked %d, expected %d" % (tag, o["untracked_bytes"], want))
    # check: exit 1 on leak cases, 0 on clean ones
    r = subprocess.run([exe, "check", setdir], capture_output=True, text=True, env=env)
    if r.returncode != exp["check"]:
        errors.append("check exited %d, expected %d: %s%s" % (r.returncode, exp["check"], r.stdout, r.stderr))
    elif r.returncode == 1 and "FAIL" not in r.stdout:
        errors.append("check failed without naming a site: %s" % r.stdout)
    # text report golden
    txt = os.path.join(setdir, "report.txt")
    # run from the set's parent with a relative path: report.txt holds no checkout path
    setdir = os.path.abspath(setdir)
    r = subprocess.run([os.path.abspath(exe), "report", os.path.basename(setdir)], capture_output=True, text=True, env=env,
                       cwd=os.path.dirname(setdir))
    out = r.stdout.replace(os.path.basename(setdir) + "/", "SET/")
    if update:
        open(txt, "w").write(out)
    elif os.path.exists(txt):
        want = open(txt).read()
        if out != want:
            import difflib
            errors.append("text report differs from report.txt:\n" + "".join(
                difflib.unified_diff(want.splitlines(True), out.splitlines(True), "report.txt", "actual")))
    for e in errors:
        print(os.path.basename(setdir) + ": " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
