#!/usr/bin/env python3
"""test_cli.py - command-level analyzer tests, one CTest per mode.

  test_cli.py fixtures  VRAMTRACE TESTDIR          regenerated sets == checked-in golden sets
  test_cli.py malformed VRAMTRACE TESTDIR          each bad input: exit 2, one "file:line: what" line
  test_cli.py versions  VRAMTRACE TESTDIR          format versions 1 and 2 of the same programs: same reports
  test_cli.py cli       VRAMTRACE TESTDIR          diff, check limits, SIZE errors, -o safety, html content
  test_cli.py folders   VRAMTRACE TESTDIR          folders as left: run sub-folders, headerless, rotated, torn files
  test_cli.py symbolize VRAMTRACE TESTDIR SYMPROG  function/file/line through libdw, build-id mismatch fallback
  test_cli.py symbolize_cxx VRAMTRACE TESTDIR SYMPROG_CXX  the same, compiled as C++: demangled names
  test_cli.py run       VRAMTRACE TESTDIR FAKELIB  `vramtrace run`: env, LD_PRELOAD, exit status, --check
  test_cli.py export    VRAMTRACE TESTDIR          torch pickle (pickle module + memory_viz rules), perfetto JSON, folded stacks
  test_cli.py python    VRAMTRACE TESTDIR          Python frames (issue 8): interleaving, titles, --python-only, check,
                                                   diff, exports, HTML; PyTorch annotations in text/HTML; host
                                                   signals (lenient reading, ECC/cgroup warnings)
  test_cli.py chromium  VRAMTRACE TESTDIR          HTML report screenshot in headless Chromium shows the curves
"""
import filecmp
import glob
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg)


def run(args, **kw):
    env = dict(os.environ, NO_COLOR="1")
    env.update(kw.pop("env", {}))
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=kw.pop("timeout", 60), **kw)


def golden(testdir, name):
    return os.path.join(testdir, "golden", name)


# ---------------------------------------------------------------- fixtures
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


# ---------------------------------------------------------------- malformed
def base_lines(testdir):
    d = golden(testdir, "leak_churn-step")
    f = [x for x in os.listdir(d) if x.endswith(".jsonl")][0]
    return open(os.path.join(d, f)).read().split("\n")[:-1]


def malformed_v2(testdir, add):
    """Format version 2 (site rows, delta records): bad rows and bad deltas."""
    d = golden(testdir, "leak_churn-step-v2")
    f = [x for x in os.listdir(d) if x.endswith(".jsonl")][0]
    lines = open(os.path.join(d, f)).read().split("\n")[:-1]
    first = next(i for i, l in enumerate(lines) if '"t":"snapshot"' in l)
    snap_i = next(i for i, l in enumerate(lines) if '"sites_delta":true' in l and '"sites":[[' in l)

    def with_line(i, rec):
        l = list(lines)
        l[i] = rec if isinstance(rec, str) else json.dumps(rec, separators=(",", ":"))
        return ("\n".join(l) + "\n").encode()

    def row_with(col, value):
        s = json.loads(lines[snap_i])
        s["sites"][0][col] = value
        return s
    s = json.loads(lines[snap_i]); s["sites"][0] = s["sites"][0][:10]
    add("v2_row_short", with_line(snap_i, s), snap_i + 1, r"sites\[0\]: expected 11 columns \[stack, kind, device, live_bytes.*got 10")
    s = json.loads(lines[snap_i]); s["sites"][0] = s["sites"][0] + [0]
    add("v2_row_long", with_line(snap_i, s), snap_i + 1, r"sites\[0\]: expected 11 columns .*got 12")
    s = json.loads(lines[snap_i]); s["sites"][0] = {"stack": s["sites"][0][0], "kind": "device", "device": 0, "live_bytes": 1}
    add("v2_row_object", with_line(snap_i, s), snap_i + 1, r"sites\[0\]: expected a site row \(array\), got object")
    add("v2_row_number", with_line(snap_i, row_with(0, "7")), snap_i + 1, r"sites\[0\]\[0\] \(stack\): expected an integer, got string")
    add("v2_kind_number", with_line(snap_i, row_with(1, 1)), snap_i + 1, r"sites\[0\]\[1\] \(kind\): expected a string, got integer")
    add("v2_kind_unknown", with_line(snap_i, row_with(1, "gpu")), snap_i + 1, r"sites\[0\]\[1\] \(kind\): unknown kind \"gpu\"")
    add("v2_device_huge", with_line(snap_i, row_with(2, 2147483647)), snap_i + 1, r"sites\[0\]\[2\] \(device\): device 2147483647 out of range")
    add("v2_live_string", with_line(snap_i, row_with(3, "12")), snap_i + 1, r"sites\[0\]\[3\] \(live_bytes\): expected a non-negative integer, got string")
    add("v2_live_negative", with_line(snap_i, row_with(3, -5)), snap_i + 1, r"sites\[0\]\[3\] \(live_bytes\): negative value -5")
    add("v2_peak_real", with_line(snap_i, row_with(5, 1.5)), snap_i + 1, r"sites\[0\]\[5\] \(interval_peak_bytes\): 1.5 is not an integer")
    add("v2_growth_null", with_line(snap_i, row_with(10, None)), snap_i + 1, r"sites\[0\]\[10\] \(growth_bytes\): expected a non-negative integer, got null")
    add("v2_live_above_int64", with_line(snap_i, row_with(3, 2 ** 63)), snap_i + 1, r"integer exceeds 2\^63-1")
    add("v2_undefined_stack", with_line(snap_i, row_with(0, 999999)), snap_i + 1, r"sites\[0\]: stack 999999 is not defined")
    s = json.loads(lines[snap_i]); s["sites"].append(list(s["sites"][0]))
    add("v2_site_twice", with_line(snap_i, s), snap_i + 1, r"sites\[%d\]: site \(stack \d+, kind device, device 0\) is listed twice" % (len(s["sites"]) - 1))
    s = json.loads(lines[snap_i]); s["sites_delta"] = "yes"
    add("v2_delta_not_bool", with_line(snap_i, s), snap_i + 1, r"snapshot.sites_delta: expected a boolean, got string")
    s = json.loads(lines[first]); s["sites_delta"] = True
    add("v2_delta_first", with_line(first, s), first + 1, r"\"sites_delta\":true but no snapshot comes before it")
    add("v2_duplicate_key", with_line(snap_i, lines[snap_i][:-1] + ',"sites_delta":false}'), snap_i + 1, r"duplicate object key")


def malformed_v3(testdir, add):
    """Format version 3: "site" records, rows [site, counters first], delta rows of
    differences; bad shapes, bad sites and bad sums."""
    d = golden(testdir, "leak_churn-step-v3")
    f = [x for x in os.listdir(d) if x.endswith(".jsonl")][0]
    lines = open(os.path.join(d, f)).read().split("\n")[:-1]
    snap_i = next(i for i, l in enumerate(lines) if '"sites_delta":true' in l and '"sites":[[' in l)
    comp_i = next(i for i, l in enumerate(lines) if '"sites_delta":false' in l and '"sites":[[' in l)
    site_i = next(i for i, l in enumerate(lines) if l.startswith('{"t":"site"'))

    def with_line(i, rec):
        l = list(lines)
        l[i] = json.dumps(rec, separators=(",", ":"))
        return ("\n".join(l) + "\n").encode()
    s = json.loads(lines[snap_i]); s["sites"][0] = []
    add("v3_row_empty", with_line(snap_i, s), snap_i + 1, r"sites\[0\]: expected 1 to 9 columns in a delta record \[site, alloc_total.*got 0")
    s = json.loads(lines[snap_i]); s["sites"][0] = (s["sites"][0] + [0] * 11)[:10]
    add("v3_row_long", with_line(snap_i, s), snap_i + 1, r"sites\[0\]: expected 1 to 9 columns in a delta record .*got 10")
    s = json.loads(lines[snap_i]); s["sites"][0] = s["sites"][0][:1] + [-(1 << 62)]
    add("v3_below_zero", with_line(snap_i, s), snap_i + 1,
        r"sites\[0\]\[1\] \(alloc_total\): the difference -4611686018427387904 takes the value below 0 \(the previous snapshot's row has \d+\)")
    # the same program in version 2 (same snapshot order) has the absolute rows: previous = v2 - v3
    lines2 = [l for l in open(os.path.join(golden(testdir, "leak_churn-step-v2"), f)).read().split("\n")
              if l.startswith('{"t":"snapshot"')]
    snaps3 = [i for i, l in enumerate(lines) if l.startswith('{"t":"snapshot"')]
    pairs = []
    for n, k in enumerate(snaps3):
        s = json.loads(lines[k])
        if s.get("sites_delta") and k >= snap_i:
            v2 = json.loads(lines2[n])   # v2 column 6 and v3 column 1: alloc_total
            pairs = [(a, b) for a, b in zip(v2["sites"], s["sites"]) if a[6] - (b + [0] * 9)[1] > 0]
            if pairs:
                break
    check(len(pairs) > 0, "no delta row of a site with alloc_total > 0 before")
    a, b = pairs[0]
    i = s["sites"].index(b)
    s["sites"][i] = b[:1] + [(1 << 63) - 1]
    add("v3_above_int64", with_line(k, s), k + 1,
        r"sites\[%d\]\[1\] \(alloc_total\): the difference 9223372036854775807 takes the value above 2\^63-1 "
        r"\(the previous snapshot's row has %d\)" % (i, a[6] - (b + [0] * 9)[1]))
    s = json.loads(lines[snap_i]); s["sites"][0] = s["sites"][0][:1] + [1.5]
    add("v3_diff_real", with_line(snap_i, s), snap_i + 1, r"sites\[0\]\[1\] \(alloc_total\): 1.5 is not an integer")
    s = json.loads(lines[snap_i]); s["sites"][0][0] = 999
    add("v3_site_undefined", with_line(snap_i, s), snap_i + 1, r"sites\[0\]\[0\] \(site\): site 999 is not defined before it is used")
    s = json.loads(lines[snap_i]); s["sites"][0][0] = "1"
    add("v3_site_string", with_line(snap_i, s), snap_i + 1, r"sites\[0\]\[0\] \(site\): expected an integer, got string")
    s = json.loads(lines[comp_i]); s["sites"][0] = s["sites"][0][:8]
    add("v3_complete_short", with_line(comp_i, s), comp_i + 1, r"sites\[0\]: expected 9 columns \[site, alloc_total.*got 8")
    s = json.loads(lines[comp_i]); s["sites"][0][4] = -1
    add("v3_complete_negative", with_line(comp_i, s), comp_i + 1, r"sites\[0\]\[4\] \(live_bytes\): negative value -1")
    sd = json.loads(lines[site_i])
    for name, kv, pat in [("v3_site_kind", {"kind": "gpu"}, r"site.kind: unknown kind \"gpu\""),
                          ("v3_site_stack", {"stack": 424242}, r"site.stack: stack 424242 is not defined"),
                          ("v3_site_id_zero", {"id": 0}, r"site.id: 0 out of range \(1 to 4294967295\)"),
                          ("v3_site_id_huge", {"id": 1 << 40}, r"site.id: 1099511627776 out of range"),
                          ("v3_site_device", {"device": 70000}, r"site.device: device 70000 out of range")]:
        add(name, with_line(site_i, dict(sd, **kv)), site_i + 1, pat)
    add("v3_site_no_kind", with_line(site_i, {k: v for k, v in sd.items() if k != "kind"}), site_i + 1,
        r"site %d has no \"kind\"" % sd["id"])
    # peak_composition (docs/snapshot-format.md): rows name defined sites
    good = {"bytes": 100, "step": 1, "time_ns": 5, "sites": [[sd["id"], 100]], "other_bytes": 0, "other_sites": 0}
    for name, pc, pat in [
            ("v3_peak_site_undefined", {"process": dict(good, sites=[[999, 1]])},
             r"peak_composition.process.sites\[0\]: site 999 is not defined before it is used"),
            ("v3_peak_row_shape", {"devices": [dict(good, device=0, sites=[[sd["id"]]])]},
             r"peak_composition.devices\[0\].sites\[0\]: expected \[site, bytes\]"),
            ("v3_peak_negative", {"process": dict(good, bytes=-1)},
             r"peak_composition.process.bytes: negative value -1"),
            ("v3_peak_not_object", {"devices": [7]},
             r"peak_composition.devices\[0\]: expected an object, got integer"),
            ("v3_peak_too_many", {"process": dict(good, sites=[[sd["id"], 1]] * 65)},
             r"peak_composition.process.sites: more than 64 sites")]:
        s = json.loads(lines[comp_i]); s["peak_composition"] = pc
        add(name, with_line(comp_i, s), comp_i + 1, pat)
    l = list(lines)   # the same id again for another stack
    l.insert(site_i + 1, json.dumps(dict(sd, device=1), separators=(",", ":")))
    add("v3_site_twice", ("\n".join(l) + "\n").encode(), site_i + 2,
        r"site %d is defined twice, as \(stack %d, kind device, device 0\) and \(stack %d, kind device, device 1\)"
        % (sd["id"], sd["stack"], sd["stack"]))


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


def t_malformed(exe, testdir):
    lines = base_lines(testdir)
    snap_i = next(i for i, l in enumerate(lines) if '"trigger":"step"' in l)   # a snapshot line (0-based)
    tmp = tempfile.mkdtemp()
    cases = []   # (name, content bytes or None, expected line, regex)

    def add(name, content, line, pattern):
        cases.append((name, content, line, pattern))

    def with_line(i, text):
        l = list(lines)
        l[i] = text
        return ("\n".join(l) + "\n").encode()

    snap = json.loads(lines[snap_i])
    site = snap["sites"][0]

    def snap_with(**kv):
        s = json.loads(lines[snap_i])
        s["sites"][0].update(kv)
        return json.dumps(s, separators=(",", ":"))

    add("empty", b"", 1, r"empty file")
    add("truncated_middle", with_line(snap_i, lines[snap_i][: len(lines[snap_i]) // 2]), snap_i + 1, r"not valid JSON: column \d+: .*(near end of file|premature end of input)")
    h = json.loads(lines[0]); h["version"] = 5
    add("wrong_version", with_line(0, json.dumps(h)), 1, r"unsupported snapshot format version 5 \(this vramtrace reads versions 1 to 4\)")
    h = json.loads(lines[0]); h["version"] = 0
    add("version_zero", with_line(0, json.dumps(h)), 1, r"unsupported snapshot format version 0")
    h = json.loads(lines[0]); h["format"] = "heaptrack"
    add("foreign_format", with_line(0, json.dumps(h)), 1, r"foreign format \"heaptrack\"")
    add("foreign_text", b"hello, world\nthis is not json\n", 1, r"not a vramtrace snapshot file")
    add("foreign_json", b'{"name":"x","value":1}\n', 1, r"not a vramtrace snapshot file")
    add("huge_number", with_line(snap_i, snap_with(live_bytes=10 ** 30).replace("%d" % 10 ** 30, "9" * 30)), snap_i + 1, r"integer exceeds 2\^63-1")
    add("above_int64", with_line(snap_i, snap_with(live_bytes=2 ** 63)), snap_i + 1, r"integer exceeds 2\^63-1")
    add("duplicate_key", with_line(snap_i, lines[snap_i][:-1] + ',"step":3}'), snap_i + 1, r"duplicate object key")
    add("sites_not_array", with_line(snap_i, snap_with().replace('"sites":[', '"sites":{"x":[').replace('],"leak_warnings"', ']},"leak_warnings"')),
        snap_i + 1, r"snapshot.sites: expected an array, got object")
    add("wrong_type", with_line(snap_i, snap_with(live_bytes="12")), snap_i + 1, r"live_bytes: expected a non-negative integer, got string")
    add("negative_size", with_line(snap_i, snap_with(live_bytes=-5)), snap_i + 1, r"negative value -5")
    add("fraction_size", with_line(snap_i, snap_with(live_bytes=1.5)), snap_i + 1, r"not an integer")
    add("wrong_kind", with_line(snap_i, snap_with(kind="gpu")), snap_i + 1, r"unknown kind")
    add("deep_nesting", with_line(snap_i, '{"t":"snapshot","x":' + "[" * 100000 + "]" * 100000 + "}"), snap_i + 1, r"nesting deeper than 2048 levels")
    add("binary", bytes(range(256)) * 40, 1, r"not a vramtrace snapshot file")
    add("nul_in_line", with_line(snap_i, lines[snap_i][:20] + "\0" + lines[snap_i][20:]), snap_i + 1, r"NUL byte|unexpected byte 0x00")
    s = json.loads(lines[snap_i]); s["sites"][0]["stack"] = 999999
    add("undefined_stack", with_line(snap_i, json.dumps(s)), snap_i + 1, r"stack 999999 is not defined")
    later = [i for i, l in enumerate(lines) if '"trigger":"step"' in l][5]
    s = json.loads(lines[later]); s["step"] = 0
    add("step_backwards", with_line(later, json.dumps(s)), later + 1, r"steps must not go backwards")
    add("blank_line", with_line(snap_i, ""), snap_i + 1, r"empty line")
    add("missing_sites", with_line(snap_i, '{"t":"snapshot","step":0}'), snap_i + 1, r"has no \"sites\"")
    add("trailing_garbage", with_line(snap_i, lines[snap_i] + " x"), snap_i + 1, r"end of file expected")
    add("second_header", with_line(snap_i, lines[0]), snap_i + 1, r"second header")
    add("bad_frame", with_line(next(i for i, l in enumerate(lines) if '"t":"stack"' in l), '{"t":"stack","id":1,"frames":[["a",1,null]]}'),
        next(i for i, l in enumerate(lines) if '"t":"stack"' in l) + 1, r"module id.*expected an integer, got string")
    # Python frames (issue 8) and annotations
    st_i = next(i for i, l in enumerate(lines) if '"t":"stack"' in l)
    stk = json.loads(lines[st_i])
    nfr = len(stk["frames"])

    def stack_with(py):
        x = dict(stk)
        x["py"] = py
        return json.dumps(x, separators=(",", ":"))
    add("py_not_array", with_line(st_i, stack_with({"f": 1})), st_i + 1, r"stack.py: expected an array, got object")
    add("py_short_entry", with_line(st_i, stack_with([["t.py", "f", 3]])), st_i + 1, r"stack.py\[0\]: expected \[file, function, line, native_index\]")
    add("py_entry_not_array", with_line(st_i, stack_with(["t.py"])), st_i + 1, r"stack.py\[0\]: expected .*got string")
    add("py_file_number", with_line(st_i, stack_with([[7, "f", 3, 0]])), st_i + 1, r"stack.py\[0\]\[0\] \(file\): expected a string, got integer")
    add("py_func_null", with_line(st_i, stack_with([["t.py", "f", 3, 0], ["t.py", None, 3, 0]])), st_i + 1, r"stack.py\[1\]\[1\] \(function\): expected a string, got null")
    add("py_line_string", with_line(st_i, stack_with([["t.py", "f", "3", 0]])), st_i + 1, r"stack.py\[0\]\[2\] \(line\): expected a non-negative integer, got string")
    add("py_line_negative", with_line(st_i, stack_with([["t.py", "f", -3, 0]])), st_i + 1, r"stack.py\[0\]\[2\] \(line\): negative value -3")
    add("py_index_past_frames", with_line(st_i, stack_with([["t.py", "f", 3, nfr]])), st_i + 1, r"native_index\): %d is neither -1 nor the index of one of the stack's %d frames" % (nfr, nfr))
    add("py_index_below", with_line(st_i, stack_with([["t.py", "f", 3, -2]])), st_i + 1, r"native_index\): -2 is neither")
    add("py_index_real", with_line(st_i, stack_with([["t.py", "f", 3, 1.0]])), st_i + 1, r"native_index\): .*(not an integer|expected an integer)")
    # device ids outside -1..65535 (the exporters index by device)
    add("site_device_huge", with_line(snap_i, snap_with(device=2147483647)), snap_i + 1, r"sites\[0\]\.device: device 2147483647 out of range")
    add("site_device_neg", with_line(snap_i, snap_with(device=-2)), snap_i + 1, r"device -2 out of range")
    s = json.loads(lines[snap_i]); s["devices"] = [{"device": 65536, "live_bytes": 0, "peak_bytes": 0}]
    add("devices_device_big", with_line(snap_i, json.dumps(s)), snap_i + 1, r"devices\[0\]\.device: device 65536 out of range")
    s = json.loads(lines[snap_i]); s["allocations"] = [[4096, 1, "device", 2147483647, None, 0, 0, 0, 0]]
    add("alloc_device_huge", with_line(snap_i, json.dumps(s)), snap_i + 1, r"allocations\[0\]\[3\]: device 2147483647 out of range")
    s = json.loads(lines[snap_i]); s["oom"] = {"api": "cudaMalloc", "kind": "device", "device": 70000, "requested_bytes": 1}
    add("oom_device_big", with_line(snap_i, json.dumps(s)), snap_i + 1, r"oom\.device: device 70000 out of range")
    s = json.loads(lines[snap_i]); s["devices"] = [{"device": 0, "kinds": {"device": {"failed_total": -1}}}]
    add("kinds_failed_negative", with_line(snap_i, json.dumps(s)), snap_i + 1, r"devices\[0\]\.kinds\.device\.failed_total: negative value -1")
    s = json.loads(lines[snap_i]); s["annotations"] = [1]
    add("annotations_not_object", with_line(snap_i, json.dumps(s)), snap_i + 1, r"snapshot.annotations: expected an object, got array")
    s = json.loads(lines[snap_i]); s["annotations"] = {"torch.cuda:0.memory_reserved_bytes": "1"}
    add("annotation_string", with_line(snap_i, json.dumps(s)), snap_i + 1, r"annotations.torch.cuda:0.memory_reserved_bytes: .*got string")
    s = json.loads(lines[snap_i]); s["annotations"] = {"bad key!": 1}
    add("annotation_key", with_line(snap_i, json.dumps(s)), snap_i + 1, r"annotations: key \"bad key!\" is not 1-63 bytes")
    s = json.loads(lines[snap_i]); s["annotations"] = {"k" * 64: 1}
    add("annotation_key_long", with_line(snap_i, json.dumps(s)), snap_i + 1, r"is not 1-63 bytes")
    malformed_v2(testdir, add)
    malformed_v3(testdir, add)
    try:
        for name, content, line, pattern in cases:
            p = os.path.join(tmp, name + ".jsonl")
            with open(p, "wb") as f:
                f.write(content)
            r = run([exe, "report", p])
            err = r.stderr.strip().split("\n")
            check(r.returncode == 2, "%s: exit %d, expected 2 (stderr %r)" % (name, r.returncode, r.stderr[:300]))
            check(len(err) == 1, "%s: %d stderr lines, expected 1: %r" % (name, len(err), r.stderr[:500]))
            want = "%s:%d: " % (p, line)
            check(err[0].startswith(want), "%s: message %r does not start with %r" % (name, err[0][:200], want))
            check(re.search(pattern, err[0]) is not None, "%s: message %r lacks /%s/" % (name, err[0][:300], pattern))
            check(r.stdout == "", "%s: partial output on stdout" % name)
            # check and diff reject it the same way
            r2 = run([exe, "check", p])
            check(r2.returncode == 2, "%s: check exit %d" % (name, r2.returncode))
        # a torn (unterminated) last line is ignored
        p = os.path.join(tmp, "torn.jsonl")
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n" + lines[snap_i][:40])
        r = run([exe, "report", "--verbose", p])
        check(r.returncode == 0, "torn last line: exit %d %s" % (r.returncode, r.stderr))
        check("torn last line" in r.stderr, "torn last line not mentioned with --verbose: %r" % r.stderr)
        # the largest integer of the format, 2^63-1, is read
        p = os.path.join(tmp, "max_int.jsonl")
        with open(p, "wb") as f:
            f.write(with_line(snap_i, snap_with(live_bytes=2 ** 63 - 1, interval_peak_bytes=2 ** 63 - 1)))
        r = run([exe, "report", "--format", "json", p])
        check(r.returncode == 0 and "9223372036854775807" in r.stdout, "2^63-1 not accepted: %d %r" % (r.returncode, r.stderr[:300]))
        # a folder without snapshots; a missing path; a fifo (no hang); a symlink inside a folder
        empty = os.path.join(tmp, "emptydir")
        os.mkdir(empty)
        for name, path, pattern in (("no_snapshots", empty, r":0: folder has no snapshot files"),
                                    ("missing", os.path.join(tmp, "nope"), r":0: cannot open")):
            r = run([exe, "report", path])
            check(r.returncode == 2 and re.search(pattern, r.stderr), "%s: %d %r" % (name, r.returncode, r.stderr))
        fifo = os.path.join(tmp, "fifo.jsonl")
        os.mkfifo(fifo)
        r = run([exe, "report", fifo], timeout=10)
        check(r.returncode == 2 and "not a regular file" in r.stderr, "fifo: %d %r" % (r.returncode, r.stderr))
        os.unlink(fifo)
        linkdir = os.path.join(tmp, "linkdir")
        os.mkdir(linkdir)
        os.symlink(os.path.join(golden(testdir, "leak_churn-step"), [x for x in os.listdir(golden(testdir, "leak_churn-step")) if x.endswith(".jsonl")][0]),
                   os.path.join(linkdir, "vt.x.1.1.jsonl"))
        r = run([exe, "report", linkdir])
        check(r.returncode == 2 and "symbolic link" in r.stderr, "symlink in folder: %d %r" % (r.returncode, r.stderr))
        if os.geteuid() != 0:
            p = os.path.join(tmp, "unreadable.jsonl")
            open(p, "w").write(lines[0] + "\n")
            os.chmod(p, 0)
            r = run([exe, "report", p])
            check(r.returncode == 2 and "cannot open" in r.stderr, "unreadable: %d %r" % (r.returncode, r.stderr))
    finally:
        shutil.rmtree(tmp)
    print("%d malformed inputs checked" % len(cases))
    t_hostile_inputs(exe, testdir)
    t_display_safety(exe)


def t_display_safety(exe):
    """Names a traced program chose (argv, host, frame names, Python file and
    function names, an OOM's API, the snapshot file's own name) reach the text
    outputs as their display form (analyzer/base/vt_display.h): no byte a terminal acts
    on, no forged line. JSON, HTML and the exports carry the same form."""
    tmp = tempfile.mkdtemp()
    try:
        esc = "\x1b]0;owned\x07\x1b[2J\r\nFAKE: vramtrace check: passed"
        snaps = [{"t": "snapshot", "seq": i + 1, "trigger": "step", "step": i, "step_marked": True,
                  "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": (i + 1) << 20}]}
                 for i in range(14)]
        snaps[-1]["oom"] = {"api": "cuMemAlloc" + esc, "kind": "device", "device": 0, "requested_bytes": 1 << 30,
                            "result": 2, "stack": 1}
        snaps[0]["host"] = {"rss_bytes": 1 << 20, "cgroup": {"version": 2, "path": "/cg/" + esc, "oom": 0, "oom_kill": 1},
                            "nvml": {"time_ns": 1, "devices": [{"device": 0, "index": 0, "uuid": "GPU-" + esc,
                                                               "used_bytes": 1 << 30, "total_bytes": 2 << 30}]}}
        text = mini_stream(header={"host": "h" + esc, "cmdline": ["prog", esc], "exe": "/bin/x" + esc},
                           snaps=snaps, module_path="/opt/" + esc + "\u202e/app")
        text = text.replace('"frames":[[1,4096,"train_step"]]',
                            '"frames":[[1,4096,' + json.dumps("fn" + esc + "\u202e") + ']],"py":[[' +
                            json.dumps("/x/" + esc + ".py") + "," + json.dumps("f" + esc + "\u202e") + ",3,0]]")
        d = os.path.join(tmp, "run" + esc.replace("/", "_").replace("\n", "_"))   # a file name may hold ESC too
        os.mkdir(d)
        p = os.path.join(d, "vt.h.7.1.jsonl")
        with open(p, "w") as f:
            f.write(text)
        bad = set(range(0x20)) - {0x0a}
        outs = []
        for args in (["report", d], ["check", d], ["diff", d, d], ["report", "--format", "json", d],
                     ["export", "--format", "collapsed", d]):
            r = subprocess.run([exe] + args, capture_output=True, timeout=60)
            check(r.returncode in (0, 1), "%s: exit %d %r" % (args[0], r.returncode, r.stderr[:300]))
            for name, out in (("stdout", r.stdout), ("stderr", r.stderr)):
                found = sorted({b for b in out if b in bad or b == 0x7f})
                check(not found, "%s %s: control bytes %s in %r" % (" ".join(args[:2]), name, found, out[:400]))
                check(b"\nFAKE" not in out, "%s %s: a forged line" % (args[0], name))
            outs.append(r)
        rep = outs[0].stdout.decode("utf-8", "replace")
        check("\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0aFAKE" in rep, "report text lacks the display form: %r" % rep[:600])
        check("\\u202e" in rep, "report text lacks \\u202e for the bidi override")
        check(re.search(r"(?m)^FAIL ", outs[1].stdout.decode()), "check did not fail on the leak")
        j = json.loads(outs[3].stdout)
        check("\\x1b" in (j["processes"][0]["cmdline"] or ""), "JSON cmdline not in display form")
        def strings(x):
            if isinstance(x, str):
                yield x
            elif isinstance(x, dict):
                for k, v in x.items():
                    yield k
                    yield from strings(v)
            elif isinstance(x, list):
                for v in x:
                    yield from strings(v)
        raw = [t for t in strings(j) if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029\u202a\u202b"
                                               "\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in t)]
        check(not raw, "JSON report strings not in display form: %r" % raw[:5])
        check(any("\\u202e" in t for t in strings(j)), "JSON report lacks the module path's display form")
        html = os.path.join(tmp, "r.html")
        r = subprocess.run([exe, "report", "--format", "html", "-o", html, d], capture_output=True, timeout=60)
        check(r.returncode == 0, "html: %d %r" % (r.returncode, r.stderr[:200]))
        if r.returncode == 0:
            hb = open(html, "rb").read()
            found = sorted({b for b in hb if b in bad or b == 0x7f})
            check(not found, "html report: control bytes %s" % found)
            ht = hb.decode("utf-8", "replace")
            check("\ufffd" not in ht and "\u202e" not in ht, "html report: invalid UTF-8 or a raw bidi override")
        # an unreadable file whose name holds ESC: the error message shows it escaped
        badf = os.path.join(tmp, "bad" + esc.replace("/", "_") + ".jsonl")
        with open(badf, "w") as f:
            f.write("not json\n")
        r = subprocess.run([exe, "report", badf], capture_output=True, timeout=60)
        check(r.returncode == 2, "bad file: exit %d" % r.returncode)
        check(not (set(r.stderr) & (bad | {0x7f})), "error message carries control bytes: %r" % r.stderr[:300])
        check(b"\\x1b" in r.stderr and b":1: " in r.stderr, "error message: %r" % r.stderr[:300])
    finally:
        shutil.rmtree(tmp)


def mini_stream(header=None, module_path="/opt/app/app", snaps=None):
    """A small valid snapshot stream: header (updated with header), one module,
    one stack, and the given snapshot records (default: one step of 1 MiB)."""
    h = {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 7, "host": "h", "start_ns": 1}
    h.update(header or {})
    recs = [h, {"t": "module", "id": 1, "path": module_path, "build_id": "", "bias": 0},
            {"t": "stack", "id": 1, "frames": [[1, 4096, "train_step"]]}]
    if snaps is None:
        snaps = [{"t": "snapshot", "seq": 1, "trigger": "step", "step": 0, "step_marked": True,
                  "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": 1 << 20}]}]
    recs += snaps
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs)


def t_hostile_inputs(exe, testdir):
    """Inputs the preload itself can write, or a dying process leaves behind:
    they must be read (not rejected), and never hang the analyzer."""
    tmp = tempfile.mkdtemp()
    try:
        # 1. long header fields: a 8 KB cmdline argument, a 3000-byte non-UTF-8 exe
        # (escaped \u00XX by the preload: 6000 bytes once read back), a 6000-byte
        # module path, a 5000-byte host
        arg = "x" * 8192
        exe_path = "/" + "".join(chr(0xC0 + (i % 64)) for i in range(3000))
        p = os.path.join(tmp, "long.jsonl")
        with open(p, "w") as f:
            f.write(mini_stream(header={"exe": exe_path, "cmdline": ["prog", arg, "z"], "host": "H" * 5000},
                                module_path="/" + "m" * 6000))
        r = run([exe, "report", "--format", "json", p])
        check(r.returncode == 0, "long header fields rejected: %d %r" % (r.returncode, r.stderr[:300]))
        if r.returncode == 0:
            pr = json.loads(r.stdout)["processes"][0]
            check(pr["cmdline"] == "prog " + arg + " z", "cmdline not kept whole: %d bytes" % len(pr["cmdline"] or ""))
            check(pr["exe"] == exe_path, "exe not kept whole")
        # 2. a module path naming a FIFO (or a device): the symbolizer must not block
        fifo = os.path.join(tmp, "module.fifo")
        os.mkfifo(fifo)
        for name, mpath in (("fifo", fifo), ("dev", "/dev/zero"), ("dir", tmp)):
            p = os.path.join(tmp, "mod_%s.jsonl" % name)
            with open(p, "w") as f:
                f.write(mini_stream(module_path=mpath))
            try:
                r = run([exe, "report", p], timeout=10)
                check(r.returncode == 0 and "train_step" in r.stdout, "module path %s: %d %r" % (name, r.returncode, r.stderr[:300]))
            except subprocess.TimeoutExpired:
                check(False, "module path %s: the analyzer hangs" % name)
        os.unlink(fifo)
        # 3. a folder with an empty file and a file holding only a torn header line
        # (processes that died before their first record): skipped, one warning each
        d = os.path.join(tmp, "folder")
        os.mkdir(d)
        good = mini_stream()
        open(os.path.join(d, "vt.h.1.1.jsonl"), "w").close()
        open(os.path.join(d, "vt.h.2.1.jsonl"), "w").write(good.split("\n")[0][:50])
        open(os.path.join(d, "vt.h.3.1.jsonl"), "w").write(good)
        r = run([exe, "report", d])
        check(r.returncode == 0 and "train_step" in r.stdout, "folder with empty files: %d %r" % (r.returncode, r.stderr[:300]))
        for n in (1, 2):
            want = "%s: no complete record (skipped)" % os.path.join(d, "vt.h.%d.1.jsonl" % n)
            check(r.stderr.count(want) == 1, "no single warning %r in %r" % (want, r.stderr))
        check(len(r.stderr.strip().split("\n")) == 2, "extra stderr lines: %r" % r.stderr)
        os.unlink(os.path.join(d, "vt.h.3.1.jsonl"))
        r = run([exe, "report", d])
        check(r.returncode == 2 and "no snapshot file in the folder has a complete record" in r.stderr,
              "folder of empty files: %d %r" % (r.returncode, r.stderr))
        r = run([exe, "report", os.path.join(d, "vt.h.1.1.jsonl")])
        check(r.returncode == 2 and "empty file" in r.stderr, "named empty file: %d %r" % (r.returncode, r.stderr))
        # 4. a device id at the top of the range: torch export stays quick
        p = os.path.join(tmp, "dev65535.jsonl")
        snaps = [{"t": "snapshot", "seq": 1, "trigger": "manual", "step": 0,
                  "sites": [{"stack": 1, "kind": "device", "device": 65535, "live_bytes": 4096}],
                  "allocations": [[1 << 30, 4096, "device", 65535, 1, 0, 5, 1, 0]]}]
        with open(p, "w") as f:
            f.write(mini_stream(snaps=snaps))
        out = os.path.join(tmp, "dev.pickle")
        r = run([exe, "export", "--format", "torch", "-o", out, p], timeout=20)
        check(r.returncode == 0, "torch export of device 65535: %d %r" % (r.returncode, r.stderr))
        if r.returncode == 0:
            import pickle
            tr = pickle.loads(open(out, "rb").read())["device_traces"]
            check(len(tr) == 65536 and sum(map(len, tr[:65535])) == 0 and len(tr[65535]) >= 2,
                  "device_traces: %d lists, last %r" % (len(tr), tr[-1][:2] if tr else None))
        # 5. a long non-ASCII host: titles cut at a whole character, the exports valid
        p = os.path.join(tmp, "longhost.jsonl")
        with open(p, "w") as f:
            f.write(mini_stream(header={"host": "x" + "\u00e9" * 400}))
        out = os.path.join(tmp, "lh.perfetto.json")
        r = run([exe, "export", "--format", "perfetto", "-o", out, p])
        check(r.returncode == 0, "perfetto export of a long host: %d %r" % (r.returncode, r.stderr))
        check(r.returncode != 0 or json.loads(open(out, "rb").read().decode("utf-8", "replace")),
              "perfetto export of a long host is not JSON")
        out = os.path.join(tmp, "lh.html")
        r = run([exe, "report", "--format", "html", "-o", out, p])
        check(r.returncode == 0, "html report of a long host: %d %r" % (r.returncode, r.stderr))
        if r.returncode == 0:
            try:
                open(out, "rb").read().decode("utf-8")
            except UnicodeDecodeError as e:
                check(False, "html report of a long host is not UTF-8: %s" % e)
        # 6. failed allocation calls other than OOM, and "every call failed"
        def dev_kinds(alloc, failed, oom):
            k = {"alloc_total": alloc, "free_total": 0, "failed_total": failed}
            if oom is not None:
                k["oom_total"] = oom
            return [{"device": 0, "live_bytes": 0, "peak_bytes": 0, "kinds": {"device": k}}]
        for name, kinds, pattern in (
                ("all_failed", dev_kinds(0, 5, 0), r"every allocation call failed: 5 failed, none succeeded \(0 out of memory, 5 other errors\)"),
                ("all_failed_old", dev_kinds(0, 4, None), r"every allocation call failed: 4 failed, none succeeded;"),
                ("some_failed", dev_kinds(10, 3, 1), r"2 allocation calls failed with errors other than out-of-memory \(3 failed in all, 10 succeeded\)"),
                ("only_oom", dev_kinds(10, 3, 3), None),
                ("old_file", dev_kinds(10, 3, None), None)):
            p = os.path.join(tmp, name + ".jsonl")
            snaps = [{"t": "snapshot", "seq": 1, "trigger": "step", "step": 0, "sites": [], "devices": kinds}]
            with open(p, "w") as f:
                f.write(mini_stream(snaps=snaps))
            r = run([exe, "report", p])
            check(r.returncode == 0, "%s: %d %r" % (name, r.returncode, r.stderr))
            if pattern:
                check(re.search(r"DEVICES\n  device 0: .*\n    " + pattern, r.stdout), "%s: report lacks /%s/:\n%s" % (name, pattern, r.stdout))
            else:
                check("failed" not in r.stdout, "%s: a failure line without non-OOM failures:\n%s" % (name, r.stdout))
            # check: a process that traced nothing (every call failed) must not pass a CI
            # gate, even with the gates these one-step, exit-less files would fail waived
            r = run([exe, "check", "--allow-incomplete", "--allow-short", "--allow-oom", p])
            if name.startswith("all_failed"):
                check(r.returncode == 1 and "nothing was traced: every allocation call failed" in r.stdout,
                      "%s: check %d %r" % (name, r.returncode, r.stdout))
            else:
                check(r.returncode == 0 and "passed" in r.stdout, "%s: check %d %r" % (name, r.returncode, r.stdout))
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- cli
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
        check(r.returncode == 3 and "too few steps to judge" in r.stdout, "header-only check, incomplete allowed: %d %r"
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


# ---------------------------------------------------------------- folders
def t_folders(exe, testdir):
    """Folders as people leave them: run sub-folders, a headerless file (a copy of a
    stream's tail, logrotate's copytruncate), a rotated copy (*.jsonl.1), a torn file, a
    file broken in its middle, a symbolic link loop. Each bad file is one
    "file:line: what" note on stderr, the rest is read; exit 2 only when nothing was."""
    def lines_of(name):
        return open(sorted(glob.glob(os.path.join(golden(testdir, name), "*.jsonl")))[0]).read().splitlines(True)
    stable, plateau, leak = lines_of("stable-step"), lines_of("plateau-step"), lines_of("leak_churn-step")
    rank1 = open(os.path.join(golden(testdir, "two_ranks-step"), "vt.node7.6001.1700000000006001000.jsonl")).read()

    def repid(ls, pid):   # the same stream as another process (its own pid)
        h = json.loads(ls[0])
        h["pid"] = pid
        return [json.dumps(h, separators=(",", ":")) + "\n"] + ls[1:]

    def notes(err):
        return [l for l in err.splitlines() if l]

    def pids(out):
        return sorted(p["pid"] for p in json.loads(out)["processes"])
    tmp = tempfile.mkdtemp()
    try:
        # A: every process that can be read passes the gates
        a = os.path.join(tmp, "A")
        run_dir = os.path.join(a, "run-20261201-101500-4242-0")
        deep = os.path.join(a, "x", "y", "z")
        os.makedirs(run_dir)
        os.makedirs(deep)
        good = os.path.join(a, "vt.node7.5004.1700000000005004000.jsonl")
        rotated = os.path.join(a, "vt.node7.5002.1700000000005002000.jsonl.1")
        headerless = os.path.join(a, "vt.node7.5001.1700000000005001000.jsonl")
        broken = os.path.join(a, "vt.node7.7777.1700000000005004000.jsonl")
        open(good, "w").write("".join(stable))
        open(rotated, "w").write("".join(plateau))
        open(headerless, "w").write("".join(leak[6:]))          # a leaking stream's tail: never read
        bl = repid(stable, 7777)
        bl[9] = "garbage\n"
        open(broken, "w").write("".join(bl))
        open(os.path.join(run_dir, "vt.node7.6001.1700000000006001000.jsonl"), "w").write(rank1)
        open(os.path.join(deep, "vt.node7.8888.1.jsonl"), "w").write("".join(repid(leak, 8888)))
        os.symlink(a, os.path.join(a, "loop"))                  # a folder link to itself: not followed
        want_notes = [(headerless + ":1: ", r"no header"),
                      (broken + ":10: ", r"not valid JSON.*skipped"),
                      (rotated + ":", r"rotated copy"),
                      (os.path.join(a, "loop") + ":0: ", r"symbolic link"),
                      (os.path.join(a, "x", "y", "z") + ":0: ", r"deeper than 2")]
        for args in (["report", "--format", "json"], ["check"], ["check", "--allow-unreadable"],
                     ["export", "--format", "collapsed"]):
            r = run([exe] + args + [a], timeout=30)
            # check fails the run on files it could not read (a process in them was not
            # judged) unless --allow-unreadable; report and export read the rest
            want_rc = 1 if args == ["check"] else 0
            check(r.returncode == want_rc, "folder A %s: exit %d, expected %d\n%s%s" % (args[0], r.returncode, want_rc,
                                                                                   r.stdout[-800:], r.stderr))
            got = notes(r.stderr)
            for start, pat in want_notes:
                hits = [l for l in got if l.startswith(start) and re.search(pat, l)]
                check(len(hits) == 1, "folder A %s: %d notes %r /%s/ in %r" % (args[0], len(hits), start, pat, got))
            check(len(got) == len(want_notes), "folder A %s: %d stderr lines, expected %d: %r"
                  % (args[0], len(got), len(want_notes), got))
            if args[0] == "report" and r.returncode == 0:
                check(pids(r.stdout) == [5002, 5004, 6001], "folder A: processes %r, expected 5002 5004 6001" % pids(r.stdout))
            if args[0] == "check":
                check("record_history" not in r.stdout, "folder A: the headerless leak was read:\n" + r.stdout)
            if args == ["check"]:
                check("FAIL all files: 2 snapshot files could not be read" in r.stdout and "--allow-unreadable" in r.stdout,
                      "folder A check: the unreadable files are not a failure:\n" + r.stdout)
            if args[0] == "export":
                check("grow_cache" in r.stdout and "load_weights" in r.stdout and "record_history" not in r.stdout,
                      "folder A export: %r" % r.stdout[:500])
        # the same folder, named through its run sub-folder only: one process, no notes
        r = run([exe, "report", "--format", "json", run_dir])
        check(r.returncode == 0 and pids(r.stdout) == [6001] and not r.stderr, "run folder: %d %r" % (r.returncode, r.stderr))
        # B: a torn (truncated) file beside a leaking one: read up to its last whole line
        b = os.path.join(tmp, "B")
        os.makedirs(b)
        torn = os.path.join(b, "vt.node7.5004.1700000000005004000.jsonl")
        open(torn, "w").write("".join(stable[:20]) + stable[20][:37])
        open(os.path.join(b, "vt.node7.5001.1700000000005001000.jsonl"), "w").write("".join(leak))
        r = run([exe, "report", "--format", "json", b])
        got = notes(r.stderr)
        check(r.returncode == 0 and pids(r.stdout) == [5001, 5004], "folder B: %d %r" % (r.returncode, r.stderr))
        check(len(got) == 1 and got[0].startswith(torn + ":21: ") and "torn" in got[0], "folder B notes: %r" % got)
        r = run([exe, "check", "--allow-incomplete", b])
        check(r.returncode == 1 and "record_history" in r.stdout, "folder B check: %d %r" % (r.returncode, r.stdout[-500:]))
        r = run([exe, "check", "--max-growth", "1GiB", b])       # the torn process ended without an exit record
        check(r.returncode == 1 and "exit record" in r.stdout, "folder B check, torn: %d %r" % (r.returncode, r.stdout[-500:]))
        # C: nothing readable at all: exit 2, a note per file and one error
        c = os.path.join(tmp, "C")
        os.makedirs(os.path.join(c, "run-1"))
        open(os.path.join(c, "vt.h.1.1.jsonl"), "w").write("".join(leak[6:]))
        open(os.path.join(c, "vt.h.2.1.jsonl.1"), "w").write("garbage\n")
        open(os.path.join(c, "run-1", "vt.h.3.1.jsonl"), "w").write("".join(leak[3:]))
        for args in (["report"], ["check"], ["export", "--format", "collapsed"]):
            r = run([exe] + args + [c])
            got = notes(r.stderr)
            check(r.returncode == 2 and r.stdout == "", "folder C %s: exit %d %r" % (args[0], r.returncode, r.stdout[:200]))
            check(len(got) == 4 and sum(1 for l in got if re.match(r"\S+:1: ", l)) == 3
                  and "no snapshot file" in got[-1], "folder C %s: stderr %r" % (args[0], got))
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- symbolize
def t_symbolize(exe, testdir, symprog, cxx=False):
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run([symprog, tmp], check=True)
        truth = json.load(open(os.path.join(tmp, "lines.json")))
        r = run([exe, "report", "--format", "json", os.path.join(tmp, "good.jsonl")])
        check(r.returncode == 0, "report: %d %s" % (r.returncode, r.stderr))
        fr = json.loads(r.stdout)["processes"][0]["sites"][0]["frames"]
        print(json.dumps(fr, indent=1))
        check(len(fr) == 3, "3 frames expected, got %d" % len(fr))
        names = [f["function"] for f in fr]
        check(names == ["known_function", "known_caller", "main"], "functions %r" % names)
        check(all((f["file"] or "").endswith("symprog.c") for f in fr), "files %r" % [f["file"] for f in fr])
        check(fr[0]["line"] == truth["known_function"],
              "innermost frame (a return address too): line %r, expected %d (offset-1 rule)" % (fr[0]["line"], truth["known_function"]))
        check(fr[1]["line"] == truth["known_caller"], "return address in known_caller: line %r, expected %d (offset-1 rule)"
              % (fr[1]["line"], truth["known_caller"]))
        check(fr[2]["line"] == truth["main"], "return address in main: line %r, expected %d" % (fr[2]["line"], truth["main"]))
        check(fr[0]["module"] == os.path.realpath(symprog), "module %r" % fr[0]["module"])
        if cxx:
            # C++: names demangled; "function" without parameters, "signature" with them
            sigs = [f["signature"] for f in fr]
            check(sigs == ["known_function(int)", "known_caller()", "main"], "signatures %r" % sigs)
            r = run([exe, "report", os.path.join(tmp, "good.jsonl")])
            check("known_function(int) (symprog.c:%d)" % truth["known_function"] in r.stdout,
                  "text report lacks the demangled signature:\n" + r.stdout)
            check("_Z" not in r.stdout, "text report shows a mangled name:\n" + r.stdout)
        else:
            check([f["signature"] for f in fr] == names, "C signatures %r" % [f["signature"] for f in fr])
        # wrong build-id: the file is not the one that ran -> no DWARF; written name, then module+offset
        r = run([exe, "report", "--format", "json", os.path.join(tmp, "badid.jsonl")])
        fr = json.loads(r.stdout)["processes"][0]["sites"][0]["frames"]
        check(fr[0]["function"] == "fallback_name" and fr[0]["file"] is None, "mismatch frame 0: %r" % fr[0])
        check(fr[1]["function"] is None and fr[1]["line"] is None, "mismatch frame 1: %r" % fr[1])
        r = run([exe, "report", os.path.join(tmp, "badid.jsonl")])
        base = re.escape(os.path.basename(symprog))
        check(re.search(r"fallback_name \(%s\+0x[0-9a-f]+\)" % base, r.stdout), "text fallback label:\n" + r.stdout)
        r = run([exe, "check", "--max-peak", "1", os.path.join(tmp, "badid.jsonl")])
        check(re.search(r"at fallback_name \(%s\+0x[0-9a-f]+\) <- %s\+0x[0-9a-f]+ <- " % (base, base), r.stdout),
              "module+offset fallback:\n" + r.stdout)
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- run
def t_run(exe, testdir, fakelib):
    tmp = tempfile.mkdtemp()
    try:
        env = {"VRAMTRACE_LIB": fakelib, "FAKE_TARGET": "sh", "LD_PRELOAD": "libm.so.6"}
        out = os.path.join(tmp, "o1")
        r = run([exe, "run", "-o", out, "--interval", "250", "--depth", "7", "--", "sh", "-c", "exit 3"], env=env)
        check(r.returncode == 3, "exit status not forwarded: %d %s" % (r.returncode, r.stderr))
        check("snapshots are in " + out in r.stderr, "run does not say where the snapshots are: %r" % r.stderr)
        ld = open(os.path.join(out, "env.txt")).read().strip()
        check(ld == fakelib + ":libm.so.6", "LD_PRELOAD not prepended: %r" % ld)
        f = [x for x in os.listdir(out) if x.endswith(".jsonl")]
        check(len(f) == 1, "one stream expected: %r" % f)
        h = json.loads(open(os.path.join(out, f[0])).readline())
        check(h["interval_ms"] == 250 and h["depth"] == 7, "interval/depth not passed: %r" % h)
        check(stat.S_IMODE(os.stat(out).st_mode) == 0o700, "output folder mode %o" % stat.S_IMODE(os.stat(out).st_mode))
        # death by signal -> 128+N
        r = run([exe, "run", "-o", os.path.join(tmp, "o2"), "--", "sh", "-c", "kill -TERM $$"], env=env)
        check(r.returncode == 128 + 15, "signal death: %d" % r.returncode)
        r = run([exe, "run", "-o", os.path.join(tmp, "o3"), "--", "/nonexistent/prog"], env=env)
        check(r.returncode == 127 and "cannot run" in r.stderr, "missing program: %d %r" % (r.returncode, r.stderr))
        # -o naming a file: said before the program starts, exit 2, the file untouched
        afile = os.path.join(tmp, "afile")
        open(afile, "w").write("mine")
        marker = os.path.join(tmp, "started")
        r = run([exe, "run", "-o", afile, "--", "sh", "-c", "touch " + marker], env=env)
        check(r.returncode == 2 and "is not a folder" in r.stderr and not os.path.exists(marker) and
              open(afile).read() == "mine", "run -o FILE: %d %r" % (r.returncode, r.stderr))
        # default folder: a new one under ./vramtrace-out each time
        for _ in range(2):
            r = run([exe, "run", "--", "sh", "-c", "exit 0"], env=env, cwd=tmp)
            check(r.returncode == 0, "default folder run: %d %s" % (r.returncode, r.stderr))
        runs = os.listdir(os.path.join(tmp, "vramtrace-out"))
        check(len(runs) == 2 and all(x.startswith("run-") for x in runs), "default folders: %r" % runs)
        # --check: leak -> 1; clean -> 0; a failing program keeps its status
        r = run([exe, "run", "-o", os.path.join(tmp, "o4"), "--check", "--", "sh", "-c", "exit 0"], env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 1 and "grow_buffer" in r.stdout, "run --check on a leak: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o5"), "--check", "--max-growth", "2MiB", "--", "sh", "-c", "exit 0"],
                env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 0, "run --check --max-growth 2MiB: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o6"), "--check", "--", "sh", "-c", "exit 0"], env=env)
        check(r.returncode == 0, "run --check clean: %d %s" % (r.returncode, r.stdout))
        # a clean program killed (no exit record): --check fails it; --allow-incomplete passes
        r = run([exe, "run", "-o", os.path.join(tmp, "o6k"), "--check", "--", "sh", "-c", "exit 0"],
                env=dict(env, FAKE_KILLED="1"))
        check(r.returncode == 1 and "ended without an exit record (killed or `_exit`); its last snapshot held 1 MiB live"
              in r.stdout, "run --check, killed: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o6a"), "--check", "--allow-incomplete", "--", "sh", "-c",
                 "exit 0"], env=dict(env, FAKE_KILLED="1"))
        check(r.returncode == 0, "run --check --allow-incomplete, killed: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o7"), "--check", "--", "sh", "-c", "exit 5"], env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 5, "program status must win over the check: %d" % r.returncode)
        r = run([exe, "run", "--max-peak", "1GiB", "--", "true"], env=env, cwd=tmp)
        check(r.returncode == 2, "check option without --check: %d" % r.returncode)
        r = run([exe, "run", "--", "true"], env={"VRAMTRACE_LIB": os.path.join(tmp, "nolib.so")}, cwd=tmp)
        check(r.returncode == 2 and "VRAMTRACE_LIB" in r.stderr, "missing library: %d %r" % (r.returncode, r.stderr))
        # a relative -o is made absolute: a program that chdir()s still writes there
        seen = os.path.join(tmp, "seen.txt")
        r = run([exe, "run", "-o", "rel/out", "--", "sh", "-c", 'printf %s "$VRAMTRACE_OUTPUT" > "$0"', seen], env=env, cwd=tmp)
        want = os.path.realpath(os.path.join(tmp, "rel", "out"))
        check(r.returncode == 0 and open(seen).read() == want, "VRAMTRACE_OUTPUT not absolute: %r (want %r)" % (open(seen).read(), want))
        # SIGUSR1/SIGUSR2 sent to the launcher reach the program; the launcher survives them.
        # Not under ThreadSanitizer (tests/reliability/sanitize_run.sh thread): its waitpid
        # interceptor is not a blocking call, so TSan defers the launcher's handler until
        # the program has exited, and the signal can never reach it.
        tsan = "libtsan" in os.path.basename(os.environ.get("VT_SANITIZER_PRELOAD", ""))
        for sig in () if tsan else ("USR1", "USR2"):
            got = os.path.join(tmp, "got" + sig)
            prog = ('trap \'echo got > "$0"; exit 0\' %s; kill -%s $PPID; i=0; '
                    'while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; exit 9' % (sig, sig))
            r = run([exe, "run", "-o", os.path.join(tmp, "o" + sig), "--", "sh", "-c", prog, got], env=env)
            check(r.returncode == 0 and os.path.exists(got), "SIG%s not forwarded: exit %d %r" % (sig, r.returncode, r.stderr))
        # a library path LD_PRELOAD cannot carry (space, colon): refused, not a broken LD_PRELOAD
        for bad in ("sp ace", "co:lon"):
            d = os.path.join(tmp, bad)
            os.mkdir(d)
            lib = os.path.join(d, "libvramtrace.so")
            shutil.copy(fakelib, lib)
            r = run([exe, "run", "-o", os.path.join(tmp, "o_" + bad[:2]), "--", "true"], env=dict(env, VRAMTRACE_LIB=lib))
            check(r.returncode == 2 and "space or a colon" in r.stderr and "LD_PRELOAD" in r.stderr,
                  "library path %r: %d %r" % (bad, r.returncode, r.stderr))
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- export
# Opcodes that PyTorch's memory_viz JavaScript unpickler handles (../shared/docs/prior-art.md §1).
JS_PICKLE_OPS = {"PROTO", "FRAME", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEM", "SETITEMS", "APPEND", "APPENDS",
                 "SHORT_BINUNICODE", "BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT", "TUPLE1",
                 "TUPLE2", "TUPLE3", "NONE", "NEWTRUE", "NEWFALSE", "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET",
                 "LONG_BINGET", "STOP"}


def stream_records(setdir):
    f = [x for x in os.listdir(setdir) if x.endswith(".jsonl")][0]
    return [json.loads(l) for l in open(os.path.join(setdir, f)) if l.endswith("\n")]


def report_json(exe, path):
    r = run([exe, "report", "--format", "json", path])
    return json.loads(r.stdout)


def t_export_torch(exe, testdir, tmp):
    import pickle
    import pickletools
    for name in ("oom_frag-step", "oom_exhaust-periodic", "leak_churn-step", "reset-step"):
        d = golden(testdir, name)
        out = os.path.join(tmp, name + ".pickle")
        r = run([exe, "export", "--format", "torch", "-o", out, d])
        check(r.returncode == 0, "%s: torch export exit %d %s" % (name, r.returncode, r.stderr))
        data = open(out, "rb").read()
        check(data[:2] == b"\x80\x04", "%s: not pickle protocol 4: %r" % (name, data[:2]))
        ops = {op.name for op, _, _ in pickletools.genops(data)}
        check(ops <= JS_PICKLE_OPS, "%s: opcodes memory_viz cannot read: %s" % (name, sorted(ops - JS_PICKLE_OPS)))
        snap = pickle.loads(data)
        check(set(snap) >= {"segments", "device_traces"}, "%s: keys %r" % (name, sorted(snap)))
        recs = stream_records(d)
        lists = [x for x in recs if x.get("t") == "snapshot" and x.get("allocations") is not None]
        last = [a for a in (lists[-1]["allocations"] if lists else []) if a[2] != "host_pinned"]
        segs = snap["segments"]
        check(len(segs) == len(last), "%s: %d segments, the last live list has %d" % (name, len(segs), len(last)))
        check(sum(sg["total_size"] for sg in segs) == sum(a[1] for a in last), "%s: segment bytes differ" % name)
        rep = report_json(exe, d)
        site_frames = {tuple(f["signature"] for f in st["frames"]) for p in rep["processes"] for st in p["sites"]}
        for sg in segs:
            check({"device", "address", "total_size", "stream", "blocks", "frames"} <= set(sg), "%s: segment keys %r" % (name, sorted(sg)))
            for b in sg["blocks"]:
                check(sg["address"] <= b["address"] and b["address"] + b["size"] <= sg["address"] + sg["total_size"],
                      "%s: block outside its segment" % name)
                check(b["state"] == "active_allocated" and set(b) >= {"size", "requested_size", "frames"}, "%s: block %r" % (name, b))
            fr = sg["frames"]
            check(all(set(f) == {"filename", "line", "name"} and isinstance(f["name"], str) and isinstance(f["filename"], str)
                      for f in fr), "%s: frame keys/types %r" % (name, fr[:1]))
            # innermost first: the same order as the report's frames (the CUDA caller first, main near the end)
            check(tuple(f["name"] for f in fr) in site_frames, "%s: frames %r are not a report site's, innermost first"
                  % (name, [f["name"] for f in fr]))
        ooms = [x["oom"] for x in recs if x.get("t") == "snapshot" and x.get("oom")]
        tr = [e for dev in snap["device_traces"] for e in dev]
        got = [e for e in tr if e["action"] == "oom"]
        check(len(got) == len(ooms), "%s: %d oom entries, %d OOM records" % (name, len(got), len(ooms)))
        for e, o in zip(got, ooms):
            check(e["size"] == o["requested_bytes"] and e["device_free"] == (o["free_bytes"] or 0), "%s: oom entry %r" % (name, e))
        for dev in snap["device_traces"]:
            ts = [e["time_us"] for e in dev]
            check(ts == sorted(ts), "%s: trace not in time order" % name)
            # replay backwards from the segments, as memory_viz does: every event must fit the state
            live = {b["address"] for sg in segs for b in sg["blocks"]}
            segset = {sg["address"] for sg in segs}
            for e in reversed(dev):
                a = e.get("addr")
                if e["action"] == "alloc":
                    check(a in live, "%s: alloc of 0x%x not live when replayed" % (name, a)); live.discard(a)
                elif e["action"] == "free_completed":
                    check(a not in live, "%s: free of 0x%x while live" % (name, a)); live.add(a)
                elif e["action"] == "segment_alloc":
                    check(a in segset, "%s: segment_alloc of unknown 0x%x" % (name, a)); segset.discard(a)
                elif e["action"] == "segment_free":
                    check(a not in segset, "%s: segment_free of a live segment" % name); segset.add(a)
        allocs = [e for e in tr if e["action"] == "alloc"]
        check(len(allocs) >= len(last), "%s: %d alloc entries for %d live blocks" % (name, len(allocs), len(last)))
    # several processes: torch writes one
    r = run([exe, "export", "--format", "torch", "-o", os.path.join(tmp, "two.pickle"), golden(testdir, "two_ranks-step")])
    check(r.returncode == 2 and "one process" in r.stderr, "two processes to torch: %d %r" % (r.returncode, r.stderr))


def t_export_perfetto(exe, testdir, tmp):
    for name in ("oom_frag-step", "leak_churn-periodic", "two_ranks-step"):
        d = golden(testdir, name)
        r = run([exe, "export", "--format", "perfetto", d])
        check(r.returncode == 0, "%s: perfetto exit %d %s" % (name, r.returncode, r.stderr))
        doc = json.loads(r.stdout)
        ev = doc["traceEvents"]
        rep = report_json(exe, d)
        procs = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
        check(len(procs) == len(rep["processes"]), "%s: %d process names" % (name, len(procs)))
        last = {}
        for e in ev:
            if e["ph"] != "C":
                continue
            check(isinstance(e["args"].get("bytes"), int) and isinstance(e["ts"], (int, float)), "%s: counter %r" % (name, e))
            k = (e["pid"], e["name"])
            check(k not in last or last[k][0] <= e["ts"], "%s: counter %s goes back in time" % (name, e["name"]))
            last[k] = (e["ts"], e["args"]["bytes"])
        for p in rep["processes"]:
            pid = [e["pid"] for e in procs if ("pid %d " % p["pid"]) in e["args"]["name"]][0]
            steps = [e for e in ev if e["ph"] == "i" and e["pid"] == pid and e["name"].startswith("step ")]
            check(len(steps) == p["steps"], "%s: %d step instants, %d steps" % (name, len(steps), p["steps"]))
            oo = [e for e in ev if e["ph"] == "i" and e["pid"] == pid and e["name"].startswith("OOM ")]
            check(len(oo) == len(p["ooms"]), "%s: %d OOM instants, %d OOMs" % (name, len(oo), len(p["ooms"])))
            for e, o in zip(oo, p["ooms"]):
                check(e["args"]["verdict"] == o["verdict"] and e["args"]["requested_bytes"] == o["requested_bytes"],
                      "%s: OOM instant %r vs %r" % (name, e["args"], o))
            want = sum(st["last_live_bytes"] for st in p["sites"] if st["device"] == 0)
            got = last.get((pid, "gpu0 live bytes"), (0, None))[1]
            check(got == want, "%s: last gpu0 live bytes %r, the report's sites end at %d" % (name, got, want))
            kinds = {st["kind"] for st in p["sites"] if st["device"] == 0}
            for k in kinds:
                check((pid, "gpu0 %s live bytes" % k) in last, "%s: no counter track for kind %s" % (name, k))


def t_export_collapsed(exe, testdir, tmp):
    line_re = re.compile(r"^(\S.*) (\d+)$")
    for name in ("leak_churn-step", "oom_frag-periodic", "two_ranks-step"):
        d = golden(testdir, name)
        rep = report_json(exe, d)
        sites = [st for p in rep["processes"] for st in p["sites"]]
        for metric, key in (("live", "last_live_bytes"), ("leaked", "leaked_bytes"), ("peak", "peak_bytes")):
            r = run([exe, "export", "--format", "collapsed", "--metric", metric, d])
            check(r.returncode == 0, "%s %s: exit %d %s" % (name, metric, r.returncode, r.stderr))
            total, leaves = 0, set()
            for l in r.stdout.splitlines():
                m = line_re.match(l)
                check(m is not None, "%s %s: not a folded line: %r" % (name, metric, l))
                if not m:
                    continue
                frames = m.group(1).split(";")
                check(all(frames), "%s: empty frame in %r" % (name, l))
                total += int(m.group(2))
                leaves.add(frames[-1])
                if len(rep["processes"]) > 1:
                    check(re.match(r"rank \d+, pid \d+ on ", frames[0]) is not None, "%s: no process root in %r" % (name, l))
                else:
                    check(frames[0] in ("__libc_start_main", "_start", "main"), "%s: root-first order broken: %r" % (name, l))
            want = sum(st[key] for st in sites if (metric != "leaked" or st["verdict"] == "leak"))
            check(total == want, "%s %s: folded total %d, report %d" % (name, metric, total, want))
            def leaf(fr):
                if fr.get("file") and fr.get("line"):
                    return "%s (%s:%d)" % (fr["function"], os.path.basename(fr["file"]), fr["line"])
                return fr["function"]
            want_leaves = {leaf(st["frames"][0]) for st in sites if st[key] and (metric != "leaked" or st["verdict"] == "leak")}
            check(leaves == want_leaves, "%s %s: leaves %r, expected the CUDA callers %r" % (name, metric, leaves, want_leaves))
    for bad in (["--format", "collapsed", "--metric", "bogus"], ["--format", "svg"], []):
        r = run([exe, "export"] + bad + [golden(testdir, "leak_churn-step")])
        check(r.returncode == 2, "export %r: exit %d, expected 2" % (bad, r.returncode))
    out = os.path.join(tmp, "exists.folded")
    open(out, "w").write("mine")
    r = run([exe, "export", "--format", "collapsed", "-o", out, golden(testdir, "leak_churn-step")])
    check(r.returncode == 2 and open(out).read() == "mine", "export -o overwrote an existing file")


def t_export(exe, testdir):
    tmp = tempfile.mkdtemp()
    try:
        t_export_torch(exe, testdir, tmp)
        t_export_perfetto(exe, testdir, tmp)
        t_export_collapsed(exe, testdir, tmp)
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- python
def site_by_py(rep, fn):
    return [st for p in rep["processes"] for st in p["sites"] if any(f["function"] == fn for f in st["python_frames"])]


def t_python(exe, testdir):
    tr, tc = golden(testdir, "python_train-step"), golden(testdir, "torch_cache-step")
    rep = report_json(exe, tr)
    # interleaved frames: the Python frames replace the eval frame; ctypes/libffi/interpreter frames are not shown
    rb = site_by_py(rep, "remember_batch")
    check(len(rb) == 1, "remember_batch: %d sites" % len(rb))
    if rb:
        names = [f["function"] for f in rb[0]["frames"]]
        check(names[:4] == ["device_alloc", "remember_batch", "main", "<module>"],
              "remember_batch: first frames %r (e2e expect_report looks at the first 4)" % names[:4])
        check(not {"ffi_call", "_PyEval_EvalFrameDefault", "_PyObject_MakeTpCall", "Py_RunMain"} & set(names),
              "interpreter/ctypes frames shown: %r" % names)
        check("__libc_start_main" in names, "a native frame outside the interpreter was dropped: %r" % names)
        nf = [f["function"] for f in rb[0]["native_frames"]]
        check(nf[:4] == [None, None, "ffi_call", None] and nf[6] == "_PyEval_EvalFrameDefault",
              "native_frames (trimmed, glue kept) %r" % nf)
        check(all(f["native_index"] == 6 for f in rb[0]["python_frames"]),
              "native_index not moved with the trimming of cudaMalloc: %r" % rb[0]["python_frames"])
    ids = {st["id"] for p in rep["processes"] for st in p["sites"]}
    check(len(ids) == 4, "python_train: expected 4 distinct site ids, got %r" % ids)
    # --python-only: init_parameters' two native paths merge, bytes and series summed
    po = report_json_args(exe, ["--python-only"], tr)
    ip = site_by_py(po, "init_parameters")
    check(len(ip) == 1 and ip[0]["peak_bytes"] == 128 << 20 and ip[0]["unfreed_at_exit_bytes"] == 128 << 20,
          "--python-only: init_parameters %r" % [(x["peak_bytes"], x["unfreed_at_exit_bytes"]) for x in ip])
    for st in [st for p in po["processes"] for st in p["sites"]]:
        check(all(f["module"] == "python" for f in st["frames"]), "--python-only: native frame in %r" % st["title"])
        check(all(f["native_index"] == -1 for f in st["python_frames"]), "--python-only: native_index kept")
    r = run([exe, "report", "--python-only", tr])
    check(r.returncode == 0 and "train.py:95 in remember_batch" in r.stdout and r.stdout.count("init_parameters") == 2
          and "libc" not in r.stdout, "--python-only text:\n" + r.stdout)
    # torch-like stacks: title skips vramtrace's own frame; a C++ frame between activations stays
    rep = report_json(exe, tc)
    kv = site_by_py(rep, "KVCache.grow")
    check(len(kv) == 1 and kv and kv[0]["title"] == "model.py:12 in KVCache.grow", "KVCache title %r" % [x["title"] for x in kv])
    if kv:
        names = [f["function"] for f in kv[0]["frames"]]
        want = ["c10::cuda::malloc", "torch::autograd::THPVariable::empty", "PeakTracker.sample", "KVCache.grow",
                "torch::nn::Module::call", "Model.forward", "<module>", "__libc_start_main"]
        check(names == want, "KVCache frames %r, expected %r" % (names, want))
    att = site_by_py(rep, "Model.attention")
    if att:
        names = [f["function"] for f in att[0]["frames"]]
        check(names[2:] == ["Model.attention", "Model.forward", "<module>"], "native_index -1 frames not last: %r" % names)
    wk = [st for p in rep["processes"] for st in p["sites"] if not st["python_frames"]]
    check(len(wk) == 1 and "native_frames" not in wk[0] and wk[0]["frames"][0]["function"] == "c10::cuda::malloc",
          "native-only thread: %r" % [(x["title"], list(x)) for x in wk])
    r = run([exe, "report", tc])
    check(re.search(r"\(3 frames inside, innermost c10::cuda::malloc.*\)\n\s+at model.py:12 in KVCache.grow\n", r.stdout),
          "text LEAKS block of KVCache:\n" + r.stdout)
    check(re.search(r"PyTorch allocated 147 MiB, reserved 152 MiB: 5 MiB reserved but not allocated \(max 11 MiB\), "
                    r"inactive split 2 MiB; the driver saw 152 MiB live", r.stdout), "torch line:\n" + r.stdout)
    r = run([exe, "report", "--python-only", tc])
    check("c10::cuda::malloc" in r.stdout and "KVCache.grow" in r.stdout and "Module::call" not in r.stdout,
          "--python-only keeps native-only stacks and drops native frames of Python ones:\n" + r.stdout)
    # check names the Python call site
    r = run([exe, "check", tr])
    check(r.returncode == 1 and re.search(r"FAIL .*leak \+2 MiB/step.*\n\s+at train.py:56 in device_alloc <- train.py:95 in remember_batch",
                                          r.stdout), "check message:\n" + r.stdout)
    tmp = tempfile.mkdtemp()
    try:
        # diff: the same native frames, another Python function, is another site
        new = os.path.join(tmp, "renamed")
        os.mkdir(new)
        f = [x for x in os.listdir(tr) if x.endswith(".jsonl")][0]
        text = open(os.path.join(tr, f)).read().replace('"forward",84', '"forward_v2",84')
        open(os.path.join(new, f), "w").write(text)
        r = run([exe, "diff", tr, new])
        check(re.search(r"new .*\n\s+train.py:56 in device_alloc <- train.py:84 in forward_v2", r.stdout)
              and re.search(r"gone .*\n\s+train.py:56 in device_alloc <- train.py:84 in forward\n", r.stdout)
              and "remember_batch" not in r.stdout, "diff by Python frames:\n" + r.stdout)
        # unknown frames ("?", line 0) and "py": null are read
        recs = [json.loads(l) for l in open(os.path.join(tr, f))]
        stacks = [x for x in recs if x["t"] == "stack"]
        stacks[0]["py"] = None                    # init_a: native only
        stacks[2]["py"][1] = ["?", "?", 0, 7]     # forward's frame: code object gone
        unk = os.path.join(tmp, "unknown.jsonl")
        open(unk, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", "--format", "json", unk])
        check(r.returncode == 0, "'?' frames / null py: %d %s" % (r.returncode, r.stderr))
        if r.returncode == 0:
            j = json.loads(r.stdout)
            fr = [fm for st in j["processes"][0]["sites"] for fm in st["frames"] if fm["module"] == "python" and fm["function"] is None]
            check(len(fr) == 1 and fr[0]["file"] is None and fr[0]["line"] is None, "unknown Python frame: %r" % fr)
            check(sum(1 for st in j["processes"][0]["sites"] if not st["python_frames"]) == 1, "py null not native-only")
        # exports: collapsed (--python-only too) and torch carry the Python frames
        for extra in ([], ["--python-only"]):
            r = run([exe, "export", "--format", "collapsed", "--metric", "peak"] + extra + [tr])
            lines = r.stdout.splitlines()
            check(r.returncode == 0 and any(l.endswith("train.py:95 in remember_batch;train.py:56 in device_alloc %d" % (80 << 20))
                                            for l in lines), "collapsed %r:\n%s" % (extra, r.stdout))
            check(len(lines) == (3 if extra else 4), "collapsed %r: %d lines" % (extra, len(lines)))
            if extra:
                check(all(l.startswith("train.py:114 in <module>;") for l in lines), "collapsed --python-only roots: %r" % lines)
        r = run([exe, "export", "--format", "torch", "--python-only", tr])
        check(r.returncode == 2, "--python-only with torch export accepted")
        import pickle
        out = os.path.join(tmp, "t.pickle")
        r = run([exe, "export", "--format", "torch", "-o", out, tr])
        snap = pickle.loads(open(out, "rb").read()) if r.returncode == 0 else {"segments": []}
        names = {tuple(fm["name"] for fm in sg["frames"][:2]) for sg in snap["segments"]}
        check(("device_alloc", "remember_batch") in names and ("device_alloc", "init_parameters") in names,
              "torch export frames: %r" % names)
        # html: Python frames listed, torch row
        out = os.path.join(tmp, "r.html")
        r = run([exe, "report", "--format", "html", "-o", out, tc])
        html = open(out).read()
        check('<li class="py">model.py:12 in KVCache.grow <span class="mod">/srv/llm/model.py</span>' in html,
              "html lacks the Python frame")
        check("PyTorch allocated 147 MiB, reserved 152 MiB" in html, "html lacks the torch numbers")
        # host signals: read leniently (wrong types are "not known"), warnings in text, JSON and HTML
        he = golden(testdir, "host_ecc-step")
        want = report_json(exe, he)["processes"][0]["host_signals"]["warnings"]
        check(len(want) == 2, "host_ecc warnings %r" % want)
        f = [x for x in os.listdir(he) if x.endswith(".jsonl")][0]
        recs = [json.loads(l) for l in open(os.path.join(he, f))]
        snaps = [x for x in recs if x["t"] == "snapshot"]
        snaps[3]["host"] = "junk"
        snaps[4]["host"] = {"rss_bytes": -1, "cgroup": [1], "nvml": {"devices": {"x": 1}}}
        snaps[6]["host"]["nvml"]["devices"][0]["ecc_volatile_corrected"] = {"v": 99}
        snaps[7]["host"]["nvml"]["devices"].append({"uuid": 5, "index": "x"})
        odd = os.path.join(tmp, "odd_host.jsonl")
        open(odd, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", "--format", "json", odd])
        check(r.returncode == 0 and json.loads(r.stdout)["processes"][0]["host_signals"]["warnings"] == want,
              "lenient host: %d %s" % (r.returncode, r.stderr or r.stdout[-2000:]))
        r = run([exe, "report", he])
        check(all("warning: " + w in r.stdout for w in want) and "NVML: 1 GiB of 16 GiB used on the GPU" in r.stdout,
              "text host warnings:\n" + r.stdout)
        check("(largest sample 556 MiB)" in r.stdout and "fell between samples" not in r.stdout,
              "NVML samples above the peak:\n" + r.stdout)
        # NVML samples all below the tracked peak (a peak between two samples): said so
        recs = [json.loads(l) for l in open(os.path.join(he, f))]
        for x in recs:
            nv = x.get("host", {}).get("nvml") if isinstance(x.get("host"), dict) else None
            for d in nv.get("devices", []) if isinstance(nv, dict) else []:
                if isinstance(d, dict) and d.get("process_used_bytes") is not None:
                    d["process_used_bytes"] = 100 * 1024 * 1024
        low = os.path.join(tmp, "low_nvml.jsonl")
        open(low, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", low])
        check(r.returncode == 0 and "by this process (largest sample 100 MiB; sampled once per snapshot interval, "
              "below the tracked peak, which fell between samples)" in r.stdout, "NVML below the peak:\n" + r.stdout)
        out = os.path.join(tmp, "h.html")
        run([exe, "report", "--format", "html", "-o", out, he])
        html = open(out).read()
        check('<ul class="bad"><li>GPU 0 (GPU-5c9a' in html and "oom_kill 0 -&gt; 1" in html, "html host warnings")
        out = os.path.join(tmp, "clean.html")
        run([exe, "report", "--format", "html", "-o", out, tr])
        check('<ul class="bad">' not in open(out).read(), "html warns without host signals")
    finally:
        shutil.rmtree(tmp)


def report_json_args(exe, args, path):
    r = run([exe, "report", "--format", "json"] + args + [path])
    return json.loads(r.stdout)


def main():
    mode, exe, testdir = sys.argv[1], sys.argv[2], sys.argv[3]
    {"fixtures": lambda: t_fixtures(exe, testdir),
     "malformed": lambda: t_malformed(exe, testdir),
     "versions": lambda: t_versions(exe, testdir),
     "cli": lambda: t_cli(exe, testdir),
     "folders": lambda: t_folders(exe, testdir),
     "symbolize": lambda: t_symbolize(exe, testdir, sys.argv[4]),
     "symbolize_cxx": lambda: t_symbolize(exe, testdir, sys.argv[4], cxx=True),
     "run": lambda: t_run(exe, testdir, sys.argv[4]),
     "export": lambda: t_export(exe, testdir),
     "python": lambda: t_python(exe, testdir)}[mode]()
    print("%s: %s" % (mode, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
