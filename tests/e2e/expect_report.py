#!/usr/bin/env python3
"""Checks a `vramtrace report --format json` document against expectations.

Used by the end-to-end example tests. Exit 0 when every expectation holds, 1
with one line per failed expectation otherwise, 2 on bad usage/input.

  --leak FUNC[:BYTES_PER_STEP]   a site whose first frames include FUNC ('*': any) is a leak,
                                 growing BYTES_PER_STEP (+-5 %) when given
  --not-leak FUNC                every site naming FUNC has a verdict other than leak
  --verdict FUNC:V1[,V2]         every site naming FUNC has one of these verdicts
  --leaks N                      exactly N leak sites in all processes
  --oom VERDICT                  some OOM event has this verdict
  --text-contains STR            (with --text FILE) the text report contains STR
"""
import argparse
import json
import sys


def site_names(site):
    return [f.get("function") or "" for f in site.get("frames", [])]


def names_func(site, func, depth=4):
    if func == "*":
        return True
    return any(n == func or n.endswith("::" + func) for n in site_names(site)[:depth])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--leak", action="append", default=[])
    ap.add_argument("--not-leak", action="append", default=[])
    ap.add_argument("--verdict", action="append", default=[])
    ap.add_argument("--leaks", type=int)
    ap.add_argument("--oom", action="append", default=[])
    ap.add_argument("--text")
    ap.add_argument("--text-contains", action="append", default=[])
    a = ap.parse_args()
    try:
        with open(a.report) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"expect_report: {a.report}: {e}")
        return 2
    fails = []
    if doc.get("format") != "vramtrace-report" or doc.get("version") != 1:
        fails.append("not a vramtrace-report version 1")
    for p in doc.get("processes", []):   # the fixed keys of the report contract (docs/metrics.md)
        for k, t in (("pid", int), ("host", str), ("peak_bytes", int), ("unfreed_at_exit_bytes", int),
                     ("steps", int), ("sites", list), ("ooms", list)):
            if not isinstance(p.get(k), t):
                fails.append(f"process key {k!r} is {type(p.get(k)).__name__}, not {t.__name__}")
    sites = [s for p in doc.get("processes", []) for s in p.get("sites", [])]
    ooms = [o for p in doc.get("processes", []) for o in p.get("ooms", [])]

    def show(s):
        return f"{s.get('verdict')} {s.get('growth_bytes_per_step')} B/step {site_names(s)[:3]}"

    for spec in a.leak:
        func, _, want = spec.partition(":")
        hits = [s for s in sites if names_func(s, func) and s.get("verdict") == "leak"]
        if not hits:
            fails.append(f"no leak site names {func}; sites: " + "; ".join(show(s) for s in sites))
            continue
        if want:
            want = float(want)
            got = hits[0].get("growth_bytes_per_step", 0)
            if abs(got - want) > 0.05 * want:
                fails.append(f"leak at {func}: {got} B/step, expected {want:.0f} +-5%")
    for func in a.not_leak:
        for s in sites:
            if names_func(s, func) and s.get("verdict") == "leak":
                fails.append(f"{func} should not be a leak: {show(s)}")
    for spec in a.verdict:
        func, _, vs = spec.partition(":")
        allowed = vs.split(",")
        named = [s for s in sites if names_func(s, func)]
        if not named:
            fails.append(f"no site names {func}")
        for s in named:
            if s.get("verdict") not in allowed:
                fails.append(f"{func}: verdict {s.get('verdict')}, expected one of {allowed}")
    if a.leaks is not None:
        n = sum(1 for s in sites if s.get("verdict") == "leak")
        if n != a.leaks:
            fails.append(f"{n} leak sites, expected {a.leaks}: " +
                         "; ".join(show(s) for s in sites if s.get("verdict") == "leak"))
    for v in a.oom:
        if not any(o.get("verdict") == v for o in ooms):
            fails.append(f"no {v} OOM; ooms: {[o.get('verdict') for o in ooms]}")
    if a.text_contains:
        text = open(a.text).read()
        for t in a.text_contains:
            if t not in text:
                fails.append(f"text report lacks {t!r}")
    for f in fails:
        print("expect_report: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
