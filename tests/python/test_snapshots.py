"""Reading snapshot streams (vramtrace.snapshots) on hand-written records that follow
docs/snapshot-format.md."""
import json
import os

import pytest

from vramtrace.snapshots import (SITE_COLUMNS, SITE_COLUMNS_V3, SnapshotError, Stream, collapse_interpreter,
                                 decode_records, decode_sites, read_stream,
                                 format_python_frame,
                                 find_own_stream, format_frame, new_allocations_by_site,
                                 stream_file_pid, window_peak_bounds, window_site_rises)

HEADER = {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 1}
MODULES = [
    {"t": "module", "id": 1, "path": "/usr/lib/libcudart.so.13", "build_id": "", "bias": 0},
    {"t": "module", "id": 2, "path": "/opt/app/libtrain.so", "build_id": "ab", "bias": 4096},
    {"t": "module", "id": 3, "path": "/usr/bin/python3.11", "build_id": "", "bias": 0},
]
STACKS = [
    # same trimmed frames (the cudart frame and the CUDA API name differ only)
    {"t": "stack", "id": 10, "frames": [[1, 100, "cudaMalloc"], [2, 0x1a2b, "remember_batch"],
                                        [3, 10, "main"]]},
    {"t": "stack", "id": 11, "frames": [[1, 200, "cudaMallocAsync"],
                                        [2, 0x1a2b, "remember_batch"], [3, 10, "main"]]},
    {"t": "stack", "id": 12, "frames": [[2, 0x3000, "forward"], [3, 10, "main"]]},
    {"t": "stack", "id": 13, "frames": [[1, 300, "cudaMalloc"]]},  # nothing left: kept whole
]


def site(stack, live, peak=None, allocs=1, frees=0, kind="device", device=0):
    return {"stack": stack, "kind": kind, "device": device, "live_bytes": live,
            "live_count": 1, "interval_peak_bytes": live if peak is None else peak,
            "alloc_total": allocs, "alloc_bytes_total": live, "free_total": frees,
            "growth_steps": 0, "growth_bytes": 0}


def snap(seq, sites, label=None, allocations=None, trigger="manual"):
    return {"t": "snapshot", "seq": seq, "trigger": trigger, "label": label,
            "time_ns": seq * 1000, "step": 0, "step_marked": False, "devices": [],
            "sites": sites, "leak_warnings": [], "oom": None, "allocations": allocations,
            "unfreed_at_exit": False, "dropped_records": 0}


def write(path, records, tail=b""):
    with open(path, "ab") as f:
        for r in records:
            f.write(json.dumps(r).encode() + b"\n")
        f.write(tail)


def test_stream_reads_incrementally_and_waits_for_whole_lines(tmp_path):
    p = tmp_path / "vt.h.1.5.jsonl"
    write(p, [HEADER] + MODULES + STACKS + [snap(1, [], "a")], tail=b'{"t":"snapsh')
    s = Stream(str(p))
    recs = s.poll()
    assert [r["label"] for r in recs] == ["a"]
    assert s.header["pid"] == 1 and set(s.stacks) == {10, 11, 12, 13}
    assert s.poll() == []                      # the torn line is not read yet
    with open(p, "ab") as f:                   # ... until its end arrives
        f.write(b'ot","label":"b","sites":[]}\n')
    assert [r["label"] for r in s.poll()] == ["b"]
    write(p, [{"t": "future-record", "x": 1}, snap(3, [], "c")])
    assert [r["label"] for r in s.poll()] == ["c"]   # unknown record types skipped


def _plain_bytes(labels):
    return b"".join(json.dumps(r).encode() + b"\n"
                    for r in [HEADER] + MODULES + STACKS + [snap(i + 1, [site(10, 4096)], l)
                                                              for i, l in enumerate(labels)])


def test_gzip_stream_reads_incrementally(tmp_path):
    import zlib
    c = zlib.compressobj(wbits=31)
    data = c.compress(_plain_bytes(["a", "b", "c"])) + c.flush()
    p = tmp_path / "vt.h.1.5.jsonl.gz"
    p.write_bytes(b"")
    s = Stream(str(p))
    got = []
    for i in range(0, len(data), 7):          # a stream still being written
        with open(p, "ab") as f:
            f.write(data[i:i + 7])
        got += [r["label"] for r in s.poll()]
    assert got == ["a", "b", "c"]
    assert stream_file_pid(str(p)) == 1
    assert [r["sites"][0]["live_bytes"] for r in read_stream(str(p))[3]] == [4096] * 3


def _zstd_frame_flushed(lines):
    """lines as the preload writes them (one frame, flushed after each line), or
    None when neither the zstandard module nor the zstd command is here."""
    try:
        import zstandard
        c = zstandard.ZstdCompressor().compressobj()
        return b"".join(c.compress(l) + c.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) for l in lines) + \
            c.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    except ImportError:
        import shutil
        import subprocess
        if not shutil.which("zstd"):
            return None
        return subprocess.run(["zstd", "-c", "-q"], input=b"".join(lines), capture_output=True,
                              check=True).stdout


@pytest.mark.parametrize("decoder", ["zstandard", "libzstd"])
def test_zstd_stream_reads_with_zstandard_or_libzstd(tmp_path, monkeypatch, decoder):
    import builtins
    import vramtrace.snapshots as snapshots
    lines = [l + b"\n" for l in _plain_bytes(["a", "b", "c"]).split(b"\n")[:-1]]
    data = _zstd_frame_flushed(lines)
    if data is None:
        pytest.skip("no zstd encoder (zstandard module or zstd command)")
    if decoder == "libzstd":   # as without the optional module
        real_import = builtins.__import__

        def no_zstandard(name, *a, **k):
            if name == "zstandard":
                raise ImportError(name)
            return real_import(name, *a, **k)
        monkeypatch.setattr(builtins, "__import__", no_zstandard)
        try:
            snapshots._LibzstdDecompressor()
        except OSError:
            pytest.skip("no libzstd.so.1")
    else:
        pytest.importorskip("zstandard")
    p = tmp_path / "vt.h.1.5.jsonl.zst"
    p.write_bytes(b"")
    s = Stream(str(p))
    got = []
    for i in range(0, len(data), 5):          # a stream still being written
        with open(p, "ab") as f:
            f.write(data[i:i + 5])
        got += [r["label"] for r in s.poll()]
    assert got == ["a", "b", "c"]
    assert stream_file_pid(str(p)) == 1


def test_zstd_stream_without_any_decoder_says_so(tmp_path, monkeypatch):
    import builtins
    import vramtrace.snapshots as snapshots
    real_import = builtins.__import__

    def no_zstandard(name, *a, **k):
        if name == "zstandard":
            raise ImportError(name)
        return real_import(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_zstandard)

    def no_lib():
        raise OSError("libzstd.so.1: cannot open shared object file")
    monkeypatch.setattr(snapshots, "_LibzstdDecompressor", no_lib)
    p = tmp_path / "vt.h.1.5.jsonl.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    with pytest.raises(SnapshotError, match="neither the Python module zstandard nor libzstd"):
        read_stream(str(p))


def test_stream_rejects_malformed_lines_with_file_and_line(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER], tail=b"{nope\n")
    with pytest.raises(SnapshotError, match=r"s\.jsonl:2: not JSON"):
        Stream(str(p)).poll()
    d = tmp_path / "d.jsonl"   # a key given twice: the analyzer refuses it too
    write(d, [HEADER], tail=b'{"t":"snapshot","seq":1,"seq":2}\n')
    with pytest.raises(SnapshotError, match=r"d\.jsonl:2: not JSON: duplicate object key 'seq'"):
        Stream(str(d)).poll()
    q = tmp_path / "v.jsonl"
    write(q, [dict(HEADER, version=99)])
    with pytest.raises(SnapshotError, match="version 1"):
        Stream(str(q)).poll()


def test_frames_are_trimmed_like_the_analyzer(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER] + MODULES + STACKS)
    s = Stream(str(p))
    s.poll()
    fr = s.trimmed_frames(10)
    assert [f["function"] for f in fr] == ["remember_batch", "main"]
    assert format_frame(fr[0]) == "remember_batch (libtrain.so+0x1a2b)"
    assert format_frame({"module": None, "offset": 16, "function": None}) == "?+0x10"
    assert s.site_key(10, "device", 0) == s.site_key(11, "device", 0)
    assert s.site_key(10, "device", 0) != s.site_key(10, "device", 1)
    assert [f["function"] for f in s.trimmed_frames(13)] == ["cudaMalloc"]


def test_new_allocations_are_grouped_by_site(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER] + MODULES + STACKS)
    s = Stream(str(p))
    s.poll()
    old = [0x1000, 100, "device", 0, 12, 0, 5, 1, 0]
    before = snap(1, [], "b", allocations=[old])
    after = snap(2, [], "a", allocations=[
        old,                                        # was there before: not new
        [0x2000, 3 << 20, "device", 0, 10, 0, 50, 1, 0],
        [0x3000, 1 << 20, "device", 0, 11, 0, 60, 1, 0],   # same site as stack 10
        [0x1000, 64, "device", 0, 12, 0, 70, 1, 0],        # reused address: new
    ])
    sites = new_allocations_by_site(s, before, after)
    assert [(x["bytes"], x["count"]) for x in sites] == [(4 << 20, 2), (64, 1)]
    assert sorted(sites[0]["stacks"]) == [10, 11]
    assert sites[0]["frames"][0]["function"] == "remember_batch"
    with pytest.raises(SnapshotError):
        new_allocations_by_site(s, snap(1, [], "b"), after)


def test_peak_bounds_exact_with_one_changing_site():
    before = snap(1, [site(12, 10 << 20, allocs=1), site(10, 0, allocs=2, frees=2)])
    later = [snap(2, [site(12, 10 << 20, allocs=1),               # constant
                      site(10, 1 << 20, peak=6 << 20, allocs=4, frees=3)],
                  trigger="periodic"),
             snap(3, [site(12, 10 << 20, allocs=1), site(10, 0, peak=2 << 20, allocs=4,
                                                         frees=4)])]
    base, low, high = window_peak_bounds(before, later)
    assert base == 10 << 20
    assert (low - base, high - base) == (6 << 20, 6 << 20)


def test_peak_bounds_with_two_changing_sites_are_a_range():
    before = snap(1, [])
    later = [snap(2, [site(10, 0, peak=4 << 20, allocs=1, frees=1),
                      site(12, 0, peak=3 << 20, allocs=1, frees=1)])]
    base, low, high = window_peak_bounds(before, later)
    assert (base, low, high) == (0, 4 << 20, 7 << 20)


def test_site_rises(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER] + MODULES + STACKS)
    s = Stream(str(p))
    s.poll()
    before = snap(1, [site(12, 5 << 20)])
    later = [snap(2, [site(12, 5 << 20), site(10, 0, peak=2 << 20, allocs=1, frees=1)])]
    rises = window_site_rises(s, before, later)
    assert [(r["bytes"], r["frames"][0]["function"]) for r in rises] == \
        [(2 << 20, "remember_batch")]


def test_interpreter_frames_are_collapsed_for_display():
    mk = lambda m: {"module": m, "offset": 0, "function": None}
    frames = [mk("/l/libffi.so.8"), mk("/usr/bin/python3.11"), mk("/l/libpython3.11.so.1.0"),
              mk("/usr/bin/python3.11"), mk("/l/libc.so.6"), mk("/usr/bin/python3.11")]
    groups = [(i, len(g)) for i, g in collapse_interpreter(frames)]
    assert groups == [(0, 1), (1, 3), (4, 1), (5, 1)]


def test_find_own_stream_through_open_files_and_folder(tmp_path, monkeypatch):
    pid = os.getpid()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VRAMTRACE_OUTPUT", raising=False)
    assert find_own_stream() is None
    out = tmp_path / "vramtrace-out"
    out.mkdir()
    older = out / ("vt.node.7.%d.100.jsonl" % pid)
    newer = out / ("vt.node.7.%d.200.jsonl" % pid)
    other = out / ("vt.node.7.%d.300.jsonl" % (pid + 1))
    for f in (older, newer, other):
        f.write_text("")
    assert stream_file_pid(str(newer)) == pid          # host names may contain dots
    assert find_own_stream() == os.path.join("vramtrace-out", newer.name)
    # An open stream file of this process wins over the folder, wherever it is.
    elsewhere = tmp_path / "x"
    elsewhere.mkdir()
    held = elsewhere / ("vt.h.%d.1.jsonl" % pid)
    with open(held, "w"):
        assert find_own_stream() == str(held)


def test_peak_bounds_without_counters_assume_change():
    bare = lambda stack, live, peak: {"stack": stack, "kind": "device", "device": 0,
                                      "live_bytes": live, "interval_peak_bytes": peak}
    before = snap(1, [bare(12, 4 << 20, 4 << 20)])
    later = [snap(2, [bare(12, 4 << 20, 4 << 20), bare(10, 0, 2 << 20)])]
    base, low, high = window_peak_bounds(before, later)
    # site 12 may have dipped and come back: it cannot be counted as constant
    assert (base, low, high) == (4 << 20, 4 << 20, 6 << 20)


def test_python_frames_name_the_site(tmp_path):
    """Stacks with the preload's "py" list ([file, function, line, native_index],
    innermost first): shown, and part of the site (same native stack, other line)."""
    p = tmp_path / "s.jsonl"
    py_a = {"t": "stack", "id": 20, "frames": [[2, 0x3000, "forward"]],
            "py": [["/src/model.py", "remember", 41, 0], ["/src/train.py", "main", 7, -1]]}
    py_b = dict(py_a, id=21, py=[["/src/model.py", "remember", 44, 0]])
    write(p, [HEADER] + MODULES + [py_a, py_b])
    s = Stream(str(p))
    s.poll()
    assert [format_python_frame(f) for f in s.python_frames(20)] == \
        ["remember (/src/model.py:41)", "main (/src/train.py:7)"]
    assert s.python_frames(12) == []
    assert s.site_key(20, "device", 0) != s.site_key(21, "device", 0)
    before = snap(1, [], "b", allocations=[])
    after = snap(2, [], "a", allocations=[[0x10, 100, "device", 0, 20, 0, 9, 1, 0]])
    (site_,) = new_allocations_by_site(s, before, after)
    assert site_["py"][0]["line"] == 41


# ---- format version 2: site rows and delta records ----

HEADER2 = dict(HEADER, version=2)


def row(d):
    return [d[c] for c in SITE_COLUMNS]


def snap2(seq, rows, delta, trigger="step"):
    r = snap(seq, rows, trigger=trigger)
    r["sites_delta"] = delta
    return r


def test_decode_sites_replays_deltas_like_version_1(tmp_path):
    a, b, c = site(10, 100), site(11, 200), site(12, 300)
    b2, c0 = site(11, 250, allocs=2), site(12, 0, frees=1)
    p = tmp_path / "vt.h.1.5.jsonl"
    write(p, [HEADER2] + MODULES + STACKS + [
        snap2(1, [row(a), row(b), row(c)], False, trigger="start"),
        snap2(2, [row(b2), row(c0)], True),       # a unchanged, b grew, c fell to 0
        snap2(3, [], True),                       # nothing changed: c stays absent (0)
        snap2(4, [row(a), row(b2)], False, trigger="exit")])
    header, _, _, snaps = read_stream(str(p))
    assert header["version"] == 2
    got = [sorted((d["stack"], d["live_bytes"]) for d in r["sites"]) for r in snaps]
    assert got == [[(10, 100), (11, 200), (12, 300)], [(10, 100), (11, 250), (12, 0)],
                   [(10, 100), (11, 250)], [(10, 100), (11, 250)]]
    assert all("sites_delta" not in r for r in snaps)
    assert snaps[1]["sites"][0] == b2             # rows become the version 1 dicts
    # the same through decode_records on parsed records, and Stream.poll in pieces
    recs = [json.loads(x) for x in open(p)]
    assert [r["sites"] for r in decode_records(recs) if r["t"] == "snapshot"] == [r["sites"] for r in snaps]


def test_decode_sites_version_1_is_unchanged():
    r = snap(1, [site(10, 5)])
    assert decode_sites(r, 1) == [site(10, 5)]


@pytest.mark.parametrize("rows,delta,prev,msg", [
    ([[10, "device", 0, 1]], False, None, r"sites\[0\]: expected a row of 11 columns"),
    ([{"stack": 10}], False, None, r"sites\[0\]: expected a row"),
    ([[10, "device", 0, -1, 0, 0, 0, 0, 0, 0, 0]], False, None, r"wrong column type"),
    ([[10, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0]], False, None, r"wrong column type"),
    ([row(site(10, 1)), row(site(10, 2))], False, None, r"listed twice"),
    ([], True, None, r"no snapshot comes before it"),
    ([], "yes", [], r"sites_delta: expected a boolean"),
])
def test_decode_sites_rejects_bad_version_2(rows, delta, prev, msg):
    with pytest.raises(SnapshotError, match=msg):
        decode_sites(snap2(1, rows, delta), 2, prev, "f:9")


# ---- format version 3: "site" records, counters first, delta rows are differences ----

SITE_IDS = {10: 1, 11: 2, 12: 3, 13: 4}


def site_rec(stack, kind="device", device=0):
    return {"t": "site", "id": SITE_IDS[stack], "stack": stack, "kind": kind, "device": device}


def row3(d):
    return [SITE_IDS[d["stack"]]] + [d[c] for c in SITE_COLUMNS_V3[1:]]


def drow(d, prev=None):
    """A version 3 delta row: differences from prev's row, trailing zeros left out."""
    out = [SITE_IDS[d["stack"]]] + [d[c] - (prev[c] if prev else 0) for c in SITE_COLUMNS_V3[1:]]
    while len(out) > 1 and out[-1] == 0:
        out.pop()
    return out


def test_decode_sites_version_3_adds_differences(tmp_path):
    a, b, c = site(10, 100), site(11, 200), site(12, 300)
    b2, c0, d = site(11, 250, allocs=2), site(12, 0, frees=1), site(13, 7, kind="managed")
    # alloc_total, alloc_bytes_total, free_total, live_bytes, live_count, interval_peak_bytes; no trailing zeros
    assert drow(b2, b) == [2, 1, 50, 0, 50, 0, 50]
    assert drow(c0, c)[1:5] == [0, -300, 1, -300]     # a site that fell to 0
    p = tmp_path / "vt.h.1.5.jsonl"
    write(p, [dict(HEADER, version=3)] + MODULES + STACKS + [site_rec(10), site_rec(11), site_rec(12)] + [
        snap2(1, [row3(a), row3(b), row3(c)], False, trigger="start"),
        site_rec(13, kind="managed"),
        snap2(2, [drow(b2, b), drow(c0, c), drow(d)], True),   # d is new: differences from 0
        snap2(3, [], True),
        snap2(4, [row3(a), row3(b2), row3(d)], False, trigger="exit")])
    header, _, _, snaps = read_stream(str(p))
    assert header["version"] == 3
    got = [sorted((x["stack"], x["live_bytes"]) for x in r["sites"]) for r in snaps]
    assert got == [[(10, 100), (11, 200), (12, 300)], [(10, 100), (11, 250), (12, 0), (13, 7)],
                   [(10, 100), (11, 250), (13, 7)], [(10, 100), (11, 250), (13, 7)]]
    assert sorted(snaps[1]["sites"], key=lambda x: x["stack"]) == [a, b2, c0, d]   # whole version 1 dicts
    assert list(snaps[1]["sites"][0]) == list(SITE_COLUMNS)                        # in version 1's key order
    recs = [json.loads(x) for x in open(p)]
    assert [r["sites"] for r in decode_records(recs) if r["t"] == "snapshot"] == [r["sites"] for r in snaps]


@pytest.mark.parametrize("rows,sites,msg", [
    ([[2, 0, 0, 0, -201]], {2: site_rec(11)}, r"sites\[0\]\[4\] \(live_bytes\): the difference takes the value below 0"),
    ([[]], {2: site_rec(11)}, r"sites\[0\]: expected a delta row of 1 to 9 columns"),
    ([[2] + [0] * 9], {2: site_rec(11)}, r"expected a delta row of 1 to 9 columns"),
    ([[2, 1.5]], {2: site_rec(11)}, r"wrong column type"),
    ([[7, 1]], {2: site_rec(11)}, r"sites\[0\]: site 7 is not defined before it is used"),
    ([[2, 1]], None, r"needs the file's \"site\" records"),
])
def test_decode_sites_rejects_bad_version_3(rows, sites, msg):
    prev = [site(11, 200)]
    with pytest.raises(SnapshotError, match=msg):
        decode_sites(snap2(2, rows, True), 3, prev, "f:9", sites)


@pytest.mark.parametrize("bad,msg", [
    ({"id": 0}, r"site\.id: expected an integer from 1 to 4294967295"),
    ({"id": True}, r"site\.id: expected an integer"),
    ({"id": 1.0}, r"site\.id: expected an integer"),
    ({"id": [1]}, r"site\.id: expected an integer"),
    ({"stack": 9}, r"site\.stack: stack 9 is not defined before it is used"),
    ({"stack": [1]}, r"site\.stack: stack \[1\] is not defined"),
    ({"kind": "nope"}, r"site\.kind: unknown kind 'nope'"),
    ({"device": 70000}, r"site\.device: 70000 is not a device"),
    ({"device": None}, r"site\.device: None is not a device"),
    ({"stack": None}, r"site\.stack"),
])
def test_stream_rejects_bad_site_records_with_file_and_line(tmp_path, bad, msg):
    p = tmp_path / "s.jsonl"
    rec = dict(site_rec(10), **bad)
    write(p, [dict(HEADER, version=3)] + MODULES + STACKS + [rec, snap2(1, [row3(site(10, 5))], False)])
    with pytest.raises(SnapshotError, match=r"s\.jsonl:%d: %s" % (len(MODULES) + len(STACKS) + 2, msg)):
        Stream(str(p)).poll()


def test_stream_rejects_a_site_defined_twice_differently(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [dict(HEADER, version=3)] + MODULES + STACKS + [site_rec(10), site_rec(10), dict(site_rec(10), device=1)])
    with pytest.raises(SnapshotError, match=r"s\.jsonl:%d: site 1 is defined twice" % (len(MODULES) + len(STACKS) + 4)):
        Stream(str(p)).poll()


@pytest.mark.parametrize("rows,delta", [
    ([[1, 0, 0, 0, 9223372036854775807]], True),      # 100 + (2^63-1) live bytes
    ([[1, 0, 0, 0, 9223372036854775808]], True),
    ([[1, 1, 100, 0, 9223372036854775808, 1, 100, 0, 0]], False),
])
def test_decode_sites_rejects_values_above_int64(rows, delta):
    prev = [site(10, 100)]
    with pytest.raises(SnapshotError, match=r"above 2\^63-1|wrong column type"):
        decode_sites(snap2(2, rows, delta), 3, prev, "f:9", {1: site_rec(10)})


@pytest.mark.parametrize("recs,line,msg", [
    ([HEADER, HEADER], 2, r"a second header in the same file"),
    ([HEADER] + STACKS[:1] + MODULES, 2, r"stack: frame uses module 1, which is not defined before it"),
    ([HEADER] + MODULES + STACKS + [dict(snap(1, []), step=5), dict(snap(2, []), step=4)], 3 + len(MODULES) + len(STACKS),
     r"snapshot step 4 comes after step 5 \(steps must not go backwards\)"),
    ([HEADER] + MODULES + STACKS + [dict(snap(1, []), step="5")], 2 + len(MODULES) + len(STACKS),
     r"snapshot.step: expected an integer >= 0"),
])
def test_stream_rejects_what_the_analyzer_rejects(tmp_path, recs, line, msg):
    p = tmp_path / "s.jsonl"
    write(p, recs)
    with pytest.raises(SnapshotError, match=r"s\.jsonl:%d: %s" % (line, msg)):
        Stream(str(p)).poll()
    with pytest.raises(SnapshotError, match=r"record %d: %s" % (line, msg)):
        decode_records([json.loads(x) for x in open(p)])


def test_stream_an_exit_record_may_carry_an_earlier_step(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER] + MODULES + STACKS + [dict(snap(1, []), step=5),
                                            dict(snap(2, [], trigger="exit"), step=3, unfreed_at_exit=True)])
    assert [r["step"] for r in Stream(str(p)).poll()] == [5, 3]


def test_stream_rejects_a_first_delta_with_file_and_line(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, [HEADER2, snap2(1, [], True)])
    with pytest.raises(SnapshotError, match=r"s\.jsonl:2: .*no snapshot comes before it"):
        Stream(str(p)).poll()


def test_version_4_delta_records_get_back_what_they_leave_out(tmp_path):
    """Format version 4: a delta record's left-out devices, device keys, kind
    figures, host signals, gauges, seq and step_marked are the previous record's;
    its leak warnings are its sites at or above leak_steps; keys at their default
    are set (docs/snapshot-format.md "Version 4: what a record leaves out")."""
    a, a2 = site(10, 100), dict(site(10, 200, allocs=2), growth_steps=3, growth_bytes=300)
    dev0 = {"device": 0, "free_bytes": 10, "total_bytes": 50, "live_bytes": 100, "peak_bytes": 100,
            "kinds": {"device": {"live_bytes": 100, "alloc_total": 1, "failed_total": 4}}}
    dev1 = {"device": 1, "free_bytes": 20, "total_bytes": 60, "live_bytes": 0, "peak_bytes": 7, "kinds": {}}
    first = {"t": "snapshot", "seq": 1, "trigger": "step", "time_ns": 1, "step": 1, "step_marked": True,
             "devices": [dev0, dev1], "sites": [row3(a)], "annotations": {"x": 1, "y": 2},
             "host": {"rss_bytes": 5, "nvml": {"time_ns": 1, "devices": []}}}
    second = {"t": "snapshot", "trigger": "step", "time_ns": 2, "step": 2, "sites_delta": True, "sites": []}
    third = {"t": "snapshot", "trigger": "step", "time_ns": 3, "step": 3, "sites_delta": True,
             "sites": [drow(a2, a)], "devices": [{"device": 0, "live_bytes": 200,
                                                  "kinds": {"device": {"live_bytes": 200, "alloc_total": 2}}}],
             "annotations": {"y": 3}, "host": {"rss_bytes": 6}}
    p = tmp_path / "vt.h.1.9.jsonl"
    write(p, [dict(HEADER, version=4, leak_steps=3)] + MODULES + STACKS + [site_rec(10), first, second, third])
    _, _, _, snaps = read_stream(str(p))
    s1, s2, s3 = snaps
    assert [s["seq"] for s in snaps] == [1, 2, 3] and all(s["step_marked"] for s in snaps)
    assert s2["devices"] == [dev0, dev1] and s2["annotations"] == {"x": 1, "y": 2}
    assert s2["host"] == first["host"] and s2["label"] is None and s2["allocations"] is None
    d0 = {d["device"]: d for d in s3["devices"]}[0]
    assert d0["live_bytes"] == 200 and d0["peak_bytes"] == 100 and d0["free_bytes"] == 10
    assert d0["kinds"]["device"] == {"live_bytes": 200, "alloc_total": 2, "failed_total": 4}
    assert {d["device"]: d for d in s3["devices"]}[1] == dev1
    assert s3["annotations"] == {"x": 1, "y": 3}
    assert s3["host"] == {"rss_bytes": 6, "nvml": first["host"]["nvml"]}
    assert s2["leak_warnings"] == []
    assert s3["leak_warnings"] == [{"stack": 10, "kind": "device", "device": 0, "growth_steps": 3,
                                    "growth_bytes_per_step": 100}]
    assert [x["live_bytes"] for x in s3["sites"]] == [200]
    # the same file read whole gives the same records
    recs = [json.loads(x) for x in open(p)]
    assert [r for r in decode_records(recs) if r["t"] == "snapshot"] == snaps
