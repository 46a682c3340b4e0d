#!/usr/bin/env python3
"""test_cli_formats.py - the golden sets and the format versions (one CTest per mode).

  test_cli_formats.py fixtures VRAMTRACE TESTDIR   regenerated sets == checked-in golden sets
                                                   (CTest analyzer_fixtures_reproducible)
  test_cli_formats.py versions VRAMTRACE TESTDIR   format versions 1 to 4 of the same programs:
                                                   same reports, each version smaller (analyzer_versions)
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

from cli_common import check, run, golden, main


def t_fixtures(exe, testdir):
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run([sys.executable, os.path.join(testdir, "gen_fixtures.py"), tmp], check=True)
        for name in sorted(os.listdir(tmp)):
            a, b = os.path.join(tmp, name), golden(testdir, name)
            check(os.path.isdir(b), "golden set %s missing" % name)
            if not os.path.isdir(b):
                continue
            files = [f for f in os.listdir(a)]
            match, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
            check(not mismatch and not errors, "%s: regenerated files differ: %r %r" % (name, mismatch, errors))
    finally:
        shutil.rmtree(tmp)


def t_versions(exe, testdir):
    """Format versions 1, 2, 3 and 4 of the same programs give the same reports (text
    and JSON, every set written four ways by gen_fixtures.py)."""
    gdir = os.path.join(testdir, "golden")
    pairs = [(n[:-3], n) for n in sorted(os.listdir(gdir)) if n[-3:] in ("-v2", "-v3", "-v4")]
    check(len(pairs) >= 30, "only %d version 2, 3 and 4 golden sets" % len(pairs))
    exe = os.path.abspath(exe)
    for v1, v2 in pairs:
        outs = []
        for name in (v1, v2):
            r = run([exe, "report", "--format", "json", name], cwd=gdir)
            check(r.returncode == 0, "%s: report exit %d %s" % (name, r.returncode, r.stderr[:300]))
            outs.append(r.stdout.replace(name + "/", "SET/"))
        check(outs[0] == outs[1], "%s and %s: JSON reports differ" % (v1, v2))
        # the version 2 file is smaller (rows; deltas on periodic/step records)
        sz = [sum(os.path.getsize(os.path.join(gdir, n, f)) for f in os.listdir(os.path.join(gdir, n))
                  if f.endswith(".jsonl")) for n in (v1, v2)]
        check(sz[1] < sz[0], "%s: version 2 is not smaller (%d vs %d bytes)" % (v2, sz[1], sz[0]))
        r = run([exe, "check", v2], cwd=gdir)
        r1 = run([exe, "check", v1], cwd=gdir)
        check(r.returncode == r1.returncode, "%s: check exit %d, version 1 %d" % (v2, r.returncode, r1.returncode))
    # a version 2 stream read without the delta replay would lose the unchanged
    # sites: make sure the sets exercise it (some delta record omits a live site)
    f = [x for x in os.listdir(os.path.join(gdir, "leak_churn-step-v2")) if x.endswith(".jsonl")][0]
    recs = [json.loads(l) for l in open(os.path.join(gdir, "leak_churn-step-v2", f))]
    deltas = [r for r in recs if r.get("sites_delta")]
    check(len(deltas) > 10, "leak_churn-step-v2 has %d delta records" % len(deltas))
    check(any(len(r["sites"]) < 3 for r in deltas), "no delta record omits an unchanged site")
    check(any(r.get("trigger") == "exit" and not r.get("sites_delta") and r["sites"] for r in recs),
          "no complete exit record after the deltas")
    check(any(r.get("sites_delta") and any(row[3] == 0 for row in r["sites"]) for r in recs),
          "no delta record with a site that fell to 0")
    # version 3: the same program's records (all but the header, which lists the kinds)
    # are never larger: kind codes, and delta rows are differences
    def body_bytes(m):
        return sum(len(l) for f in os.listdir(os.path.join(gdir, m)) if f.endswith(".jsonl")
                   for l in open(os.path.join(gdir, m, f), "rb") if not l.startswith(b'{"t":"header"'))
    for n in sorted(os.listdir(gdir)):
        if not n.endswith("-v3"):
            continue
        sz = [body_bytes(m) for m in (n[:-1] + "2", n)]
        check(sz[1] < sz[0], "%s: version 3 records are not smaller than version 2's (%d vs %d bytes)" % (n, sz[1], sz[0]))
    f = [x for x in os.listdir(os.path.join(gdir, "leak_churn-step-v3")) if x.endswith(".jsonl")][0]
    recs = [json.loads(l) for l in open(os.path.join(gdir, "leak_churn-step-v3", f))]
    rows = [row for r in recs if r.get("sites_delta") for row in r["sites"]]
    check(any(len(row) < 9 for row in rows), "no version 3 delta row leaves out its trailing zeros")
    check(all(len(row) == 1 or row[-1] != 0 for row in rows), "a version 3 delta row ends in a zero")
    # version 4: smaller again, and its delta records leave out unchanged devices and keys
    for n in sorted(os.listdir(gdir)):
        if n.endswith("-v4"):
            sz = [body_bytes(m) for m in (n[:-1] + "3", n)]
            check(sz[1] < sz[0], "%s: version 4 records are not smaller than version 3's (%d vs %d bytes)" % (n, sz[1], sz[0]))
    f4 = [x for x in os.listdir(os.path.join(gdir, "python_train-step-v4")) if x.endswith(".jsonl")][0]
    recs4 = [json.loads(l) for l in open(os.path.join(gdir, "python_train-step-v4", f4))]
    d4 = [r for r in recs4 if r.get("sites_delta")]
    check(d4 and not any("seq" in r or "label" in r or "leak_warnings" in r for r in d4), "version 4 keys left out")
    check(any("fragmentation" not in d for r in d4 for d in r.get("devices", [])), "no version 4 partial device entry")
    check(any(r.get("annotations") and len(r["annotations"]) < len(recs4[-1].get("annotations", {})) for r in d4)
          or not recs4[-1].get("annotations"), "no version 4 delta record with only the changed gauges")
    # site ids are looked up in a hash: the largest id costs no table of its size
    # (a 2^24-entry table was 400 MB for a 779-byte file); measured in a child of a child
    tmp = tempfile.mkdtemp()
    try:
        d3 = os.path.join(gdir, "leak_churn-step-v3")
        out = []
        for l in open(os.path.join(d3, f)):   # renumber every site to a huge id
            rec = json.loads(l)
            if rec["t"] == "site":
                rec["id"] = 4294967296 - rec["id"]
            elif rec["t"] == "snapshot":
                for row in rec["sites"]:
                    row[0] = 4294967296 - row[0]
            out.append(json.dumps(rec, separators=(",", ":")) + "\n")
        open(os.path.join(tmp, f), "w").write("".join(out))
        probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                 "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.stdout.write(r.stdout)")
        r = run([sys.executable, "-c", probe, exe, "report", "--format", "json", tmp])
        rc, kb = map(int, r.stdout.split("\n", 1)[0].split())
        a = r.stdout.split("\n", 1)[1].replace(tmp + "/", "SET/")
        b = run([exe, "report", "--format", "json", d3]).stdout.replace(d3 + "/", "SET/")
        check(rc == 0 and a == b, "site ids near 2^32 change the report (exit %d)" % rc)
        check(kb < 100 * 1024, "site ids near 2^32: the analyzer used %d KB" % kb)
    finally:
        shutil.rmtree(tmp)
    # a writer that lost track of its definitions repeats a site: the same report
    tmp = tempfile.mkdtemp()
    try:
        d3 = os.path.join(gdir, "leak_churn-step-v3")
        out, defs = [], []
        for l in open(os.path.join(d3, f)):
            if l.startswith('{"t":"snapshot"'):
                out.extend(defs)   # every site defined so far, again, before each snapshot
            out.append(l)
            if l.startswith('{"t":"site"'):
                defs.append(l)
        check(len(defs) > 2, "leak_churn-step-v3 defines %d sites" % len(defs))
        open(os.path.join(tmp, f), "w").write("".join(out))
        a = run([exe, "report", "--format", "json", tmp]).stdout.replace(tmp + "/", "SET/")
        b = run([exe, "report", "--format", "json", d3]).stdout.replace(d3 + "/", "SET/")
        check(a == b and a, "a repeated identical site definition changes the report")
    finally:
        shutil.rmtree(tmp)
    neg = 0
    for n in sorted(os.listdir(gdir)):
        for f in (os.listdir(os.path.join(gdir, n)) if n.endswith("-v3") else []):
            if f.endswith(".jsonl"):
                for l in open(os.path.join(gdir, n, f)):
                    r = json.loads(l) if l.endswith("\n") else {}
                    neg += sum(1 for row in r.get("sites") or [] if r.get("sites_delta") and min(row[1:] + [0]) < 0)
    check(neg > 0, "no version 3 delta row with a negative difference")


if __name__ == "__main__":
    sys.exit(main({"fixtures": t_fixtures, "versions": t_versions}))
