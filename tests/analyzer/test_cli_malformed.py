#!/usr/bin/env python3
"""test_cli_malformed.py - bad and hostile input (CTest analyzer_malformed).

  test_cli_malformed.py malformed VRAMTRACE TESTDIR   each bad input: exit 2, one "file:line: what"
                                                      line; inputs a dying writer leaves are read,
                                                      never hang; names a program chose reach the
                                                      outputs in their display form
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cli_common import check, run, golden, mini_stream, main


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
    # Python frames and annotations
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
        for name, path, pattern in (("no_snapshots", empty, r": folder has no snapshot files"),
                                    ("missing", os.path.join(tmp, "nope"), r": cannot open")):
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
                ("all_failed_one_other", dev_kinds(0, 3, 2), r"every allocation call failed: 3 failed, none succeeded \(2 out of memory, 1 other error\);"),
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


if __name__ == "__main__":
    sys.exit(main({"malformed": t_malformed}))
