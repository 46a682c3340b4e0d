#!/usr/bin/env python3
"""check_analyzer_hostile.py — hostile input to `vramtrace report` (issue 6 item 5).

usage: check_analyzer_hostile.py VRAMTRACE GOLDEN_DIR

Cases not already in tests/analyzer (test_cli_malformed.py): a 1 GiB line (written
to a temporary file, deleted afterwards), deep nesting of objects and inside known
keys, wrong types and negative / overflowing values in many fields, symbolic links
(followed when named, dangling, loops), unreadable inputs as root (/proc/self/mem
reads fail with EIO, a directory or device or FIFO or socket where a file is
expected, inside a folder too), folders without snapshots, binary data, truncation
at many points, and 300 seeded random mutations of the golden files.
Every hostile input must exit 2 with a clear "file:line: what" (or "file: what" when no line is meant)
message on stderr and nothing on stdout; truncations and mutations may also be
valid (exit 0), but never a crash, a sanitizer report or a hang (60 s timeout each).
"""
import glob
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile

EXE = None
FAILS = []
COUNT = 0


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg)


def run(args, timeout=60):
    try:
        return subprocess.run([EXE] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def sane(name, r, allow_ok=False):
    """Exit 2 with one clear message (or 0 where allowed); never a crash or a hang."""
    global COUNT
    COUNT += 1
    if r is None:
        check(False, "%s: hang (timeout)" % name)
        return
    err = r.stderr.decode("utf-8", "replace")
    check(r.returncode >= 0, "%s: killed by signal %d: %s" % (name, -r.returncode, err[-1500:]))
    check("Sanitizer" not in err and "runtime error" not in err, "%s: sanitizer report: %s" % (name, err[-3000:]))
    if allow_ok and r.returncode == 0:
        return
    check(r.returncode == 2, "%s: exit %d, expected 2: %s" % (name, r.returncode, err[-500:]))
    lines = [l for l in err.split("\n") if l and not l.startswith("vramtrace: warning")]
    check(len(lines) >= 1 and (":" in lines[0]), "%s: no clear message: %r" % (name, err[:300]))
    check(r.stdout == b"", "%s: output on stdout despite the error" % name)


def expect_error(name, path, pattern=None):
    r = run(["report", path])
    sane(name, r)
    if r is not None and pattern:
        err = r.stderr.decode("utf-8", "replace")
        check(pattern in err, "%s: message %r lacks %r" % (name, err[:300], pattern))
    return r


def main():
    global EXE
    EXE, golden = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="vt_hostile_")
    try:
        body(tmp, golden)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d hostile inputs checked, %d failures" % (COUNT, len(FAILS)))
    return 1 if FAILS else 0


def body(tmp, golden):
    src = sorted(glob.glob(os.path.join(golden, "leak_churn-step", "*.jsonl")))[0]
    lines = open(src, "rb").read().split(b"\n")[:-1]
    header = lines[0]
    snap_i = next(i for i, l in enumerate(lines) if b'"t":"snapshot"' in l and json.loads(l)["sites"])
    stack_i = next(i for i, l in enumerate(lines) if b'"t":"stack"' in l)

    def put(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def with_line(i, text):
        l = list(lines)
        l[i] = text if isinstance(text, bytes) else text.encode()
        return b"\n".join(l) + b"\n"

    # sanity: the unmodified file is read
    r = run(["report", src])
    check(r is not None and r.returncode == 0, "golden file not read")

    # ---- a 1 GiB line: rejected without reading it all into memory
    big = os.path.join(tmp, "big.jsonl")
    with open(big, "wb") as f:
        f.write(header + b"\n" + b'{"t":"snapshot","label":"')
        chunk = b"A" * (16 << 20)
        for _ in range(64):
            f.write(chunk)
        f.write(b'"}\n')
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = expect_error("line_1GiB", big, "line")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    os.unlink(big)
    check(rss < 900 * 1024 or rss == before, "1 GiB line: the reader grew to %d MiB" % (rss // 1024))
    print("1 GiB line: exit %s, peak RSS of children %d MiB" % (r.returncode if r else None, rss // 1024))

    # ---- deep nesting in several places
    n = 200000
    expect_error("nest_objects", put("nest_obj.jsonl", with_line(snap_i, b'{"t":"snapshot","x":' + b'{"a":' * n + b"1" + b"}" * n + b"}")))
    expect_error("nest_header", put("nest_hdr.jsonl", with_line(0, header[:-1] + b',"x":' + b"[" * n + b"]" * n + b"}")))
    expect_error("nest_sites", put("nest_sites.jsonl", with_line(snap_i, b'{"t":"snapshot","step":1,"sites":' + b"[" * 70 + b"]" * 70 + b"}")))
    expect_error("nest_unclosed", put("nest_open.jsonl", with_line(snap_i, b"[" * n)))

    # ---- wrong types, negative and overflowing values
    snap = json.loads(lines[snap_i])
    hdr = json.loads(header)
    stack = json.loads(lines[stack_i])

    def mut_snap(path, value):
        s = json.loads(lines[snap_i])
        o = s
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
        return json.dumps(s, separators=(",", ":"))

    def mut_hdr(key, value):
        h = dict(hdr)
        h[key] = value
        return json.dumps(h, separators=(",", ":"))

    big64 = "__BIG__"
    cases = [
        ("t_number", 0, mut_hdr("t", 7)),
        ("hdr_version_string", 0, mut_hdr("version", "1")),
        ("hdr_pid_string", 0, mut_hdr("pid", "1234")),
        ("hdr_pid_negative", 0, mut_hdr("pid", -1)),
        ("hdr_pid_float", 0, mut_hdr("pid", 1.5)),
        ("hdr_start_overflow", 0, mut_hdr("start_ns", big64)),
        ("sites_object", snap_i, mut_snap(["sites"], {"a": 1})),
        ("sites_string", snap_i, mut_snap(["sites"], "x")),
        ("site_not_object", snap_i, mut_snap(["sites", 0], 5)),
        ("devices_number", snap_i, mut_snap(["devices"], 3)),
        ("step_bool", snap_i, mut_snap(["step"], True)),
        ("step_negative", snap_i, mut_snap(["step"], -1)),
        ("step_overflow", snap_i, mut_snap(["step"], big64)),
        ("step_huge_float", snap_i, mut_snap(["step"], 1e300)),
        ("seq_negative", snap_i, mut_snap(["seq"], -7)),
        ("stack_id_string", snap_i, mut_snap(["sites", 0, "stack"], "17")),
        ("stack_id_negative", snap_i, mut_snap(["sites", 0, "stack"], -3)),
        ("live_overflow_2_64", snap_i, mut_snap(["sites", 0, "live_bytes"], big64)),
        ("live_minus_2_63", snap_i, mut_snap(["sites", 0, "live_bytes"], -9223372036854775808)),
        ("live_null", snap_i, mut_snap(["sites", 0, "live_bytes"], None)),
        ("kind_number", snap_i, mut_snap(["sites", 0, "kind"], 1)),
        ("frames_string", stack_i, json.dumps(dict(stack, frames="abc"))),
        ("frame_short", stack_i, json.dumps(dict(stack, frames=[[1]]))),
        ("frame_offset_negative", stack_i, json.dumps(dict(stack, frames=[[0, -4096, None]]))),
        ("frame_offset_overflow", stack_i, json.dumps(dict(stack, frames=[[0, big64, None]]))),
        ("frame_function_number", stack_i, json.dumps(dict(stack, frames=[[0, 16, 12]]))),
        ("stack_id_huge", stack_i, json.dumps(dict(stack, id=big64))),
    ]
    for name, i, text in cases:
        text = text.replace('"__BIG__"', "18446744073709551616")
        expect_error(name, put(name + ".jsonl", with_line(i, text)))
    # number syntax edge cases in a size
    for name, tok in (("exp_overflow", b"1e400"), ("minus_zero_float", b"-0.0"), ("leading_zero", b"0123"),
                      ("hex", b"0x10"), ("nan", b"NaN"), ("inf", b"Infinity"), ("digits_1000", b"9" * 1000)):
        t = lines[snap_i].replace(b'"live_bytes":', b'"live_bytes":' + tok + b',"x_":', 1)
        expect_error("num_" + name, put("num_%s.jsonl" % name, with_line(snap_i, t)))

    # ---- binary and encoding
    rnd = random.Random(66)
    expect_error("binary_random", put("bin.jsonl", bytes(rnd.randrange(256) for _ in range(100000))))
    expect_error("binary_nul", put("nul.jsonl", b"\0" * 65536 + b"\n"))
    expect_error("utf16", put("utf16.jsonl", header.decode().encode("utf-16") + b"\n"))
    expect_error("bad_utf8_in_string", put("badutf8.jsonl", with_line(0, header.replace(b'"host":"', b'"host":"\xff\xfe', 1))))
    expect_error("only_newlines", put("nl.jsonl", b"\n" * 1000))
    expect_error("header_only_torn", put("torn_hdr.jsonl", header[: len(header) // 2]))

    # ---- truncation at many points: a torn last line is ignored, anything else is an error
    data = b"\n".join(lines) + b"\n"
    for k in range(40):
        cut = rnd.randrange(1, len(data))
        p = put("cut.jsonl", data[:cut])
        sane("truncated_at_%d" % cut, run(["report", p]), allow_ok=True)

    # ---- random mutations of every golden file (byte flips, deletions, duplications)
    files = sorted(glob.glob(os.path.join(golden, "*", "*.jsonl")))
    for k in range(300):
        d = bytearray(open(files[k % len(files)], "rb").read())
        for _ in range(rnd.randrange(1, 6)):
            op = rnd.randrange(4)
            pos = rnd.randrange(len(d))
            if op == 0:
                d[pos] = rnd.randrange(256)
            elif op == 1:
                del d[pos:pos + rnd.randrange(1, 64)]
            elif op == 2:
                d[pos:pos] = d[pos:pos + rnd.randrange(1, 200)]
            else:
                d[pos:pos] = rnd.choice([b"-", b"9999999999999999999999", b"[", b"{", b'"', b"null", b"\n", b"1e999"])
        p = put("mut.jsonl", bytes(d))
        sane("mutation_%d" % k, run(["report", "--format", "json", p]), allow_ok=True)

    # ---- format versions 2 and 3: hostile site rows, site records and delta records
    v2 = sorted(glob.glob(os.path.join(golden, "*-v2", "*.jsonl")) + glob.glob(os.path.join(golden, "*-v3", "*.jsonl")))
    check(len(v2) >= 4, "no version 2 and 3 golden files")
    hostile = [None, True, -1, -9223372036854775808, 1.5, 1e300, "7", [], {}, [1, 2], "device", 65536,
               "__BIG__"]
    for k in range(120):
        ls = open(v2[k % len(v2)], "rb").read().split(b"\n")[:-1]
        snaps = [i for i, l in enumerate(ls) if b'"t":"snapshot"' in l]
        i = snaps[rnd.randrange(len(snaps))]
        rec = json.loads(ls[i])
        op = rnd.randrange(7)
        sites = [j for j, l in enumerate(ls) if l.startswith(b'{"t":"site"')]
        if op == 6 and sites:                        # version 3: a hostile value in a site record
            j = rnd.choice(sites)
            sd = json.loads(ls[j])
            sd[rnd.choice(["id", "stack", "kind", "device"])] = rnd.choice(hostile + [0, 1 << 40])
            ls[j] = json.dumps(sd, separators=(",", ":")).replace('"__BIG__"', "18446744073709551616").encode()
        elif op == 0 and rec["sites"]:               # a hostile value in one cell
            row = rnd.choice(rec["sites"])
            row[rnd.randrange(len(row))] = rnd.choice(hostile)
        elif op == 1 and rec["sites"]:               # a row too short or too long
            row = rnd.choice(rec["sites"])
            if rnd.randrange(2):
                del row[rnd.randrange(len(row)):]
            else:
                row.extend([0] * rnd.randrange(1, 4))
        elif op == 2:                                # a delta with nothing before it
            rec["sites_delta"] = True
            ls = ls[:snaps[0]] + ls[i:]
            i = snaps[0]
        elif op == 3:                                # the delta flag of another type
            rec["sites_delta"] = rnd.choice(hostile)
        elif op == 4 and rec["sites"]:               # a site listed twice
            rec["sites"].append(list(rec["sites"][0]))
        else:                                        # rows as version 1 objects
            rec["sites"] = [{"stack": r[0], "kind": r[1], "device": r[2], "live_bytes": r[3]}
                            for r in rec["sites"]] or [{"stack": 1}]
        ls[i] = json.dumps(rec, separators=(",", ":")).replace('"__BIG__"', "18446744073709551616").encode()
        p = put("v2mut.jsonl", b"\n".join(ls) + b"\n")
        sane("v2_mutation_%d_op%d" % (k, op), run(["report", "--format", "json", p]), allow_ok=True)
    # dropping whole lines of a version 2 stream (a lost complete record, a lost delta)
    for k in range(40):
        ls = open(v2[k % len(v2)], "rb").read().split(b"\n")[:-1]
        del ls[rnd.randrange(1, len(ls))]
        p = put("v2drop.jsonl", b"\n".join(ls) + b"\n")
        sane("v2_drop_%d" % k, run(["report", "--format", "json", p]), allow_ok=True)

    # ---- links and unreadable things
    good = put("good.jsonl", data)
    ln = os.path.join(tmp, "named_link.jsonl")
    os.symlink(good, ln)
    r = run(["report", ln])
    sane("named_symlink", r, allow_ok=True)
    check(r is not None and r.returncode == 0, "an explicitly named symbolic link is followed (docs/snapshot-format.md)")
    dang = os.path.join(tmp, "dangling.jsonl")
    os.symlink(os.path.join(tmp, "nowhere"), dang)
    expect_error("dangling_symlink", dang)
    loop = os.path.join(tmp, "loop.jsonl")
    os.symlink(loop, loop)
    expect_error("symlink_loop", loop)
    expect_error("proc_mem_eio", "/proc/self/mem")
    expect_error("char_device", "/dev/zero")
    dirf = os.path.join(tmp, "dir_named.jsonl")
    os.mkdir(dirf)
    expect_error("directory_as_file", dirf + "/")
    folder = os.path.join(tmp, "folder_with_dir")
    os.mkdir(folder)
    os.mkdir(os.path.join(folder, "vt.a.1.1.jsonl"))
    expect_error("dir_in_folder", folder)
    folder = os.path.join(tmp, "folder_with_fifo")
    os.mkdir(folder)
    os.mkfifo(os.path.join(folder, "vt.a.1.1.jsonl"))
    expect_error("fifo_in_folder", folder)
    folder = os.path.join(tmp, "folder_with_socket")
    os.mkdir(folder)
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(folder, "vt.a.1.1.jsonl"))
    expect_error("socket_in_folder", folder)
    s.close()
    folder = os.path.join(tmp, "no_snapshots")
    os.mkdir(folder)
    for n in ("notes.txt", ".hidden.jsonl", "vt.jsonl.bak"):
        open(os.path.join(folder, n), "w").write("x")
    expect_error("folder_without_snapshots", folder, "no snapshot files")
    expect_error("folder_unlistable_proc", "/proc/self/fdinfo/999999")


if __name__ == "__main__":
    sys.exit(main())
