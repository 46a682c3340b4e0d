"""Reading snapshot streams (docs/snapshot-format.md, versions 1 to 4).

Design: libvramtrace.so appends JSON Lines records to one file per process,
``vt.<host>.<pid>.<start_ns>.jsonl.zst`` (``.jsonl`` with VRAMTRACE_COMPRESS=0)
under ``$VRAMTRACE_OUTPUT`` (default
``vramtrace-out`` in the working directory), and keeps it open. :func:`find_own_stream`
finds that file through ``/proc/self/fd`` (exact even after a chdir) and falls back
to the output folder. :class:`Stream` reads it incrementally: each :meth:`Stream.poll`
parses only the whole lines appended since the previous poll (a line without its
``\\n`` is left for later; a zstd stream is decoded with the optional ``zstandard``
module, else libzstd.so.1 through ctypes, a gzip one with ``zlib``, told apart by
the first bytes), absorbs ``module`` and ``stack`` definitions, and returns
the new ``snapshot`` records, each with its ``"sites"`` decoded by
:func:`decode_sites`: whatever the file's version, a record's ``"sites"`` is the
complete list of site dicts a version 1 writer would have written (version 2
rows become dicts; a version 2 delta record gets the unchanged sites back from
the previous record), so callers never see rows or deltas; a version 4 delta
record also gets back every block it left out as unchanged (devices, host signals,
annotations, seq, step_marked, ...: :func:`restore_record`). :func:`read_stream`
reads a whole file the same way. The window functions compare two labelled manual
snapshots: allocations born between them and still live, grouped by site, and
bounds of the highest live total between them.

A site, as in docs/metrics.md: (trimmed stack, kind, device); trimming drops frames
in libvramtrace/libcudart/libcuda, then a leading run of CUDA API names.
Sizes are bytes. Not thread-safe: one Stream per user.
"""
import json
import os
import re

FORMAT_NAME = "vramtrace-snapshot"
FORMAT_VERSION = 4            # written by the preload
FORMAT_VERSIONS = (1, 2, 3, 4)   # read here
DELTA_ROWS_VERSION = 3        # first version whose delta rows are differences
CARRY_VERSION = 4             # first version whose delta records leave unchanged blocks out
# Column order of a version 2 site row (common/vt_format.h VT_SITE_COLUMNS).
SITE_COLUMNS = ("stack", "kind", "device", "live_bytes", "live_count", "interval_peak_bytes",
                "alloc_total", "alloc_bytes_total", "free_total", "growth_steps", "growth_bytes")
# Column order of a version 3 site row (VT_SITE3_ORDER): a site id (defined by a
# "site" record: stack, kind, device), then the counters.
SITE_COLUMNS_V3 = ("site", "alloc_total", "alloc_bytes_total", "free_total", "live_bytes", "live_count",
                   "interval_peak_bytes", "growth_steps", "growth_bytes")

_FILE_RE = re.compile(r"^vt\.(.+)\.([0-9]+)\.([0-9]+)(?:-[0-9]+)?\.jsonl(?:\.zst|\.gz)?$")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"


class _LibzstdDecompressor:
    """Streaming zstd decoding through libzstd.so.1 with ctypes (the library the
    preload itself links, so present wherever a traced process runs): the
    ``decompress(bytes) -> bytes`` of zstandard's decompressobj, over any number of
    frames. Raises OSError when the library cannot be loaded."""

    class _Buf(__import__("ctypes").Structure):
        import ctypes as _c
        _fields_ = [("ptr", _c.c_void_p), ("size", _c.c_size_t), ("pos", _c.c_size_t)]

    def __init__(self):
        import ctypes
        self._c = ctypes
        lib = ctypes.CDLL("libzstd.so.1")
        lib.ZSTD_createDStream.restype = ctypes.c_void_p
        lib.ZSTD_freeDStream.argtypes = [ctypes.c_void_p]
        lib.ZSTD_decompressStream.restype = ctypes.c_size_t
        lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(self._Buf),
                                              ctypes.POINTER(self._Buf)]
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getErrorName.restype = ctypes.c_char_p
        self._lib = lib
        self._ds = lib.ZSTD_createDStream()
        if not self._ds:
            raise OSError("ZSTD_createDStream failed")
        self._out = ctypes.create_string_buffer(1 << 17)

    def __del__(self):
        if getattr(self, "_ds", None):
            self._lib.ZSTD_freeDStream(self._ds)
            self._ds = None

    def decompress(self, data):
        c = self._c
        src = c.create_string_buffer(bytes(data), len(data))
        inb = self._Buf(c.cast(src, c.c_void_p), len(data), 0)
        parts = []
        while True:
            outb = self._Buf(c.cast(self._out, c.c_void_p), len(self._out), 0)
            r = self._lib.ZSTD_decompressStream(self._ds, c.byref(outb), c.byref(inb))
            if self._lib.ZSTD_isError(r):
                raise ValueError(self._lib.ZSTD_getErrorName(r).decode())
            parts.append(self._out.raw[:outb.pos])
            if inb.pos == inb.size and outb.pos < outb.size:
                return b"".join(parts)


class _ZstandardFrames:
    """zstandard's decompressobj decodes one frame and stops: this one goes on with
    the next, as libzstd's streaming decoder does (a stream holds several frames
    after a write fault, docs/snapshot-format.md "Files")."""

    def __init__(self, zstandard):
        self._z = zstandard
        self._d = zstandard.ZstdDecompressor().decompressobj()

    def decompress(self, data):
        out = []
        while data:
            out.append(self._d.decompress(data))
            if not self._d.eof:
                break
            data = self._d.unused_data
            self._d = self._z.ZstdDecompressor().decompressobj()
        return b"".join(out)


def _zstd_decompressobj(path):
    """A streaming zstd decompressor: the optional ``zstandard`` module's, else
    libzstd.so.1's through ctypes; raises SnapshotError naming the file when
    neither is there."""
    try:
        import zstandard
        return _ZstandardFrames(zstandard)
    except ImportError:
        pass
    try:
        return _LibzstdDecompressor()
    except OSError:
        raise SnapshotError("%s:0: a zstd-compressed stream, and neither the Python module zstandard "
                            "nor libzstd.so.1 is installed (pip install zstandard; or `vramtrace "
                            "report`, or record with VRAMTRACE_COMPRESS=0)" % path)


# The rule "this frame is CUDA's or vramtrace's own" (common/vt_frames.h): module
# file-name prefixes, and CUDA API function-name prefixes with whether the next
# character must be an upper-case letter.
TRIMMED_MODULES = ("libvramtrace", "libcudart", "libcuda.", "libcuda-")
CUDA_FUNCTIONS = (("libcudart_static_", False), ("__cudart", False), ("cuda", True), ("cu", True), ("nvtx", True))


def is_cuda_function(name):
    """True when name is a CUDA API function by common/vt_frames.h's rule."""
    for prefix, upper in CUDA_FUNCTIONS:
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if not upper or (rest != "" and "A" <= rest[0] <= "Z"):
                return True
    return False


class SnapshotError(Exception):
    """A malformed stream: the message is ``file:line: what``."""


KINDS = ("device", "managed", "host_pinned", "async", "vmm", "array", "graph", "ipc_import", "region")   # common/vt_format.h VT_KINDS
SITE_FLAGS = ("registered", "multicast", "logical_size")   # common/vt_format.h VT_SITE_FLAGS
INT64_MAX = (1 << 63) - 1


def _check_frames(rec, modules, where):
    """A stack record's frames name only modules defined before it (-1 = none)."""
    frames = rec.get("frames")
    if not isinstance(frames, list):
        raise SnapshotError("%s: stack.frames: expected a list" % where)
    for i, fr in enumerate(frames):
        if not isinstance(fr, list) or not fr or not _is_int(fr[0]):
            raise SnapshotError("%s: stack.frames[%d]: expected [module, offset, function]" % (where, i))
        if fr[0] != -1 and fr[0] not in modules:
            raise SnapshotError("%s: stack: frame uses module %d, which is not defined before it" % (where, fr[0]))


def _check_step(rec, last, where):
    """Steps do not go backwards between snapshots (an exit record may: it is not a
    step); returns the step to compare the next one with."""
    if "step" not in rec:
        return last   # not this reader's to require (the analyzer does)
    step = rec["step"]
    if not _is_int(step) or step < 0:
        raise SnapshotError("%s: snapshot.step: expected an integer >= 0, got %r" % (where, step))
    if rec.get("trigger") == "exit" or rec.get("unfreed_at_exit") is True:
        return last
    if last is not None and step < last:
        raise SnapshotError("%s: snapshot step %d comes after step %d (steps must not go backwards)" %
                            (where, step, last))
    return step


def add_site(sites, rec, stacks, where):
    """Checks a version 3 "site" record `rec` and adds it to `sites` ({id: record}):
    id an integer 1..2^32-1, stack an integer id of `stacks` (the stack records
    seen so far; None: not checked), kind one of KINDS, device -1..65535, optional
    flags a list of SITE_FLAGS names. The same id again must name the same stack,
    kind, device and flags. Raises SnapshotError("<where>: what")."""
    sid, stack, kind, dev = rec.get("id"), rec.get("stack"), rec.get("kind"), rec.get("device")
    if not _is_int(sid) or not 1 <= sid <= 0xFFFFFFFF:
        raise SnapshotError("%s: site.id: expected an integer from 1 to 4294967295, got %r" % (where, sid))
    if not _is_int(stack) or (stacks is not None and stack not in stacks):
        raise SnapshotError("%s: site.stack: stack %r is not defined before it is used" % (where, stack))
    if kind not in KINDS:
        raise SnapshotError("%s: site.kind: unknown kind %r" % (where, kind))
    if not _is_int(dev) or not -1 <= dev <= 65535:
        raise SnapshotError("%s: site.device: %r is not a device from -1 to 65535" % (where, dev))
    flags = rec.get("flags", [])
    if not isinstance(flags, list) or any(f not in SITE_FLAGS for f in flags):
        raise SnapshotError("%s: site.flags: expected a list of %s, got %r" % (where, "/".join(SITE_FLAGS), flags))
    old = sites.get(sid)
    if old is not None and (old["stack"], old["kind"], old["device"], sorted(old.get("flags", []))) != \
            (stack, kind, dev, sorted(flags)):
        raise SnapshotError("%s: site %d is defined twice, as %r and %r" %
                            (where, sid, (old["stack"], old["kind"], old["device"], old.get("flags", [])),
                             (stack, kind, dev, flags)))
    sites[sid] = rec


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _version_ok(v):
    return _is_int(v) and v in FORMAT_VERSIONS


def _site_key(row):
    return (row.get("stack"), row.get("kind"), row.get("device"))


def decode_sites(rec, version, prev=None, where="snapshot", sites=None):
    """The complete site list of snapshot record `rec` from a stream of format
    `version` (the header's "version"): a list of dicts keyed by SITE_COLUMNS,
    one per site with live bytes > 0 plus every site that changed (a site that
    fell to 0 is listed with 0; an absent site has 0 live bytes) — what version 1
    wrote, and what the next call needs as `prev`.

    Version 1: the record's dicts, unchanged. Version 2: each row
    [stack, kind, device, 8 non-negative integers] becomes a dict; when the record
    has ``"sites_delta": true`` it lists only changed sites, and every site of
    `prev` (this function's result for the previous snapshot record of the same
    file) with live bytes > 0 that it does not list is added unchanged.
    Version 3: rows are [site id, then the counters in SITE_COLUMNS_V3's order],
    the id a key of `sites` ({id: "site" record} of the file so far); a delta
    record's row carries 0 to 8 signed counters, each the difference from the
    site's dict in `prev` (0 when prev has none), the missing trailing ones 0.
    Raises SnapshotError("<where>: what") for a row of the wrong shape or type, a
    difference that takes a column below 0, a site listed twice, or a delta record
    with no previous record (prev None)."""
    rows = rec.get("sites")
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise SnapshotError("%s: sites: expected a list" % where)
    if version == 1:
        return rows
    if not _version_ok(version):
        raise SnapshotError("%s: unsupported format version %r" % (where, version))
    delta = rec.get("sites_delta", False)
    if not isinstance(delta, bool):
        raise SnapshotError("%s: sites_delta: expected a boolean" % where)
    if delta and prev is None:
        raise SnapshotError("%s: \"sites_delta\": true but no snapshot comes before it" % where)
    v3 = version >= DELTA_ROWS_VERSION
    if v3 and not isinstance(sites, dict):
        raise SnapshotError("%s: version %d needs the file's \"site\" records" % (where, version))
    diff = delta and v3
    base = {_site_key(d): d for d in prev} if diff else None
    out, seen = [], set()
    for i, row in enumerate(rows):
        if not v3:
            if not isinstance(row, list) or len(row) != len(SITE_COLUMNS):
                raise SnapshotError("%s: sites[%d]: expected a row of %d columns" % (where, i, len(SITE_COLUMNS)))
            if not _is_int(row[0]) or not isinstance(row[1], str) or not _is_int(row[2]) or \
                    not all(_is_int(v) and 0 <= v <= INT64_MAX for v in row[3:]):
                raise SnapshotError("%s: sites[%d]: wrong column type in %r" % (where, i, row))
            d = dict(zip(SITE_COLUMNS, row))
        else:
            n = len(SITE_COLUMNS_V3)
            if not isinstance(row, list) or not (1 <= len(row) <= n if diff else len(row) == n):
                raise SnapshotError("%s: sites[%d]: expected a %srow of %s%d columns" %
                                    (where, i, "delta " if diff else "", "1 to " if diff else "", n))
            if not all(_is_int(v) and -INT64_MAX - 1 <= v <= INT64_MAX and (diff or v >= 0) for v in row):
                raise SnapshotError("%s: sites[%d]: wrong column type in %r" % (where, i, row))
            sd = sites.get(row[0])
            if sd is None:
                raise SnapshotError("%s: sites[%d]: site %r is not defined before it is used" % (where, i, row[0]))
            vals = dict(zip(SITE_COLUMNS_V3[1:], list(row[1:]) + [0] * (n - len(row))))
            d = {"stack": sd["stack"], "kind": sd["kind"], "device": sd["device"]}
            old = base.get(_site_key(d)) if diff else None
            for c in SITE_COLUMNS[3:]:
                d[c] = vals[c] + (old[c] if old else 0)
                if not 0 <= d[c] <= INT64_MAX:
                    raise SnapshotError("%s: sites[%d][%d] (%s): the difference takes the value %s" %
                                        (where, i, SITE_COLUMNS_V3.index(c), c,
                                         "below 0" if d[c] < 0 else "above 2^63-1"))
        key = _site_key(d)
        if key in seen:
            raise SnapshotError("%s: sites[%d]: site %r listed twice" % (where, i, key))
        seen.add(key)
        out.append(d)
    if delta:
        out.extend(d for d in prev if d["live_bytes"] > 0 and _site_key(d) not in seen)
    return out


# Keys a version 4 record leaves out when at their default (docs/snapshot-format.md
# "Version 4: what a record leaves out").
_DEFAULTS = (("label", None), ("oom", None), ("allocations", None), ("unfreed_at_exit", False),
             ("leak_warnings", []), ("dropped_records", 0), ("step_marked", False))


def _merge_device(old, new):
    """A version 4 delta record's device entry `new` over the previous one `old`:
    each key it lists replaces the old value; within "kinds", each figure."""
    out = dict(old)
    for k, v in new.items():
        if k == "kinds" and isinstance(v, dict):
            kinds = {kn: dict(fig) for kn, fig in (old.get("kinds") or {}).items()}
            for kn, fig in v.items():
                kinds.setdefault(kn, {}).update(fig if isinstance(fig, dict) else {})
            out["kinds"] = kinds
        else:
            out[k] = v
    return out


def restore_record(rec, version, state):
    """Version 4: gives snapshot record `rec` (parsed JSON, changed in place) every
    key it left out, so it reads like a version 3 record: in a delta record
    ("sites_delta": true) the devices, device keys and kind figures, the host
    signals, the annotations, exports, imports, seq, step_marked and
    dropped_records the record does
    not list are the previous record's (`state`, a dict kept per file, start {} and
    pass the same one for every record of the file in order; updated here); keys at
    their default (label, oom, allocations null; unfreed_at_exit false; ...) are
    set. Older versions: rec is returned unchanged. Returns rec."""
    if version < CARRY_VERSION:
        return rec
    if rec.get("sites_delta") is True and state:
        if "seq" not in rec and _is_int(state.get("seq")):
            rec["seq"] = state["seq"] + 1
        for k in ("step_marked", "dropped_records"):
            if k not in rec and k in state:
                rec[k] = state[k]
        devs = {d.get("device"): d for d in state.get("devices") or []}
        for d in rec.get("devices") or []:
            if isinstance(d, dict):
                old = devs.get(d.get("device"))
                devs[d.get("device")] = _merge_device(old, d) if old else d
        rec["devices"] = list(devs.values())
        old_host = state.get("host")
        if "host" not in rec and old_host is not None:
            rec["host"] = old_host
        elif isinstance(rec.get("host"), dict) and isinstance(old_host, dict) and \
                "nvml" not in rec["host"] and "nvml" in old_host:
            rec["host"]["nvml"] = old_host["nvml"]
        for k in ("exports", "imports"):
            if k not in rec and state.get(k):
                rec[k] = state[k]
        ann = dict(state.get("annotations") or {})
        ann.update(rec.get("annotations") or {})
        if ann:
            rec["annotations"] = ann
    for k, v in _DEFAULTS:
        if k not in rec:
            rec[k] = list(v) if isinstance(v, list) else v
    rec.setdefault("devices", [])
    state.clear()
    state.update({k: rec.get(k) for k in ("seq", "step_marked", "dropped_records", "devices", "host",
                                          "annotations", "exports", "imports")})
    return rec


def _leak_warnings(rec, version, leak_steps):
    """After decode_sites: removes "sites_delta"; version 4 delta records leave out
    "leak_warnings", which are their sites (as decode_sites completed them) whose
    growth_steps is at least the header's `leak_steps`: set here. Older versions and
    complete records keep what they wrote."""
    delta = rec.pop("sites_delta", None) is True
    if version < CARRY_VERSION or not delta:
        return rec
    if _is_int(leak_steps) and leak_steps > 0:
        rec["leak_warnings"] = [
            {"stack": d["stack"], "kind": d["kind"], "device": d["device"], "growth_steps": d["growth_steps"],
             "growth_bytes_per_step": d["growth_bytes"] // d["growth_steps"]}
            for d in rec["sites"] if d.get("growth_steps", 0) >= leak_steps]
    return rec


def decode_records(recs, where="stream"):
    """Decodes, in place, the "sites" of every snapshot record of `recs` (one
    file's records in file order, parsed JSON, the header first) with
    decode_sites, so each holds its complete list of site dicts whatever the
    version; "sites_delta" is removed. Returns recs. Raises SnapshotError
    ("<where>: record N: what") for a missing or foreign header or a bad row."""
    if not recs or not isinstance(recs[0], dict) or recs[0].get("t") != "header" or \
            recs[0].get("format") != FORMAT_NAME or not _version_ok(recs[0].get("version")):
        raise SnapshotError("%s: not a %s stream of a known version" % (where, FORMAT_NAME))
    version, sites, stacks, modules, prev, last = recs[0]["version"], {}, set(), set(), None, None
    carry = {}
    for i, rec in enumerate(recs):
        at = "%s: record %d" % (where, i + 1)
        if i and isinstance(rec, dict) and rec.get("t") == "header":
            raise SnapshotError("%s: a second header in the same file" % at)
        if isinstance(rec, dict) and rec.get("t") == "module":
            modules.add(rec.get("id") if _is_int(rec.get("id")) else None)
        if isinstance(rec, dict) and rec.get("t") == "stack":
            _check_frames(rec, modules, at)
            stacks.add(rec.get("id") if _is_int(rec.get("id")) else None)
        if isinstance(rec, dict) and rec.get("t") == "site":
            add_site(sites, rec, stacks, at)
        if isinstance(rec, dict) and rec.get("t") == "snapshot":
            last = _check_step(rec, last, at)
            restore_record(rec, version, carry)
            rec["sites"] = decode_sites(rec, version, prev, "%s: record %d" % (where, i + 1), sites)
            _leak_warnings(rec, version, recs[0].get("leak_steps"))
            prev = rec["sites"]
    return recs


def read_stream(path):
    """Reads a whole snapshot file: returns (header, modules {id: record}, stacks
    {id: record}, snapshot records in file order, each with "sites" decoded by
    decode_sites and "sites_delta" removed). A final line without its newline (a
    torn write) is ignored. Raises SnapshotError or OSError as Stream.poll."""
    s = Stream(path)
    snaps = s.poll()
    return s.header, s.modules, s.stacks, snaps


def stream_file_pid(path):
    """The pid in a stream file's name, or None when the name is not a stream's."""
    m = _FILE_RE.match(os.path.basename(path))
    return int(m.group(2)) if m else None


def find_own_stream(pid=None, output_dir=None):
    """Path of the snapshot stream that process `pid` (default: this one) writes,
    or None. Looks at the process's open files first (``/proc/<pid>/fd``), then in
    `output_dir` (default ``$VRAMTRACE_OUTPUT`` or ``vramtrace-out``, relative to the
    working directory) for ``vt.*.<pid>.*.jsonl``, newest start time first."""
    pid = os.getpid() if pid is None else pid
    fd_dir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        fds = []
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if stream_file_pid(target) == pid and os.path.isfile(target):
            return target
    if output_dir is None:
        output_dir = os.environ.get("VRAMTRACE_OUTPUT") or "vramtrace-out"
    try:
        names = os.listdir(output_dir)
    except OSError:
        return None
    found = []
    for name in names:
        m = _FILE_RE.match(name)
        if m and int(m.group(2)) == pid:
            found.append((int(m.group(3)), os.path.join(output_dir, name)))
    return max(found)[1] if found else None


def _object_no_duplicates(pairs):
    """A JSON object, refusing a key given twice (as the analyzer does: jansson's
    JSON_REJECT_DUPLICATES); json.loads would keep the last one silently."""
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("duplicate object key %r" % k)
        obj[k] = v
    return obj


class Stream:
    """Incremental reader of one snapshot stream.

    Attributes: path; header (dict or None until read); modules {id: record};
    stacks {id: record}. poll() raises SnapshotError on a malformed line or a
    header of another format/version, OSError when the file cannot be read."""

    def __init__(self, path):
        self.path = path
        self._ident = None          # (st_dev, st_ino) of the file read so far
        self._seen_seq = 0          # the highest snapshot seq returned
        self._reset()

    def _reset(self):
        """Forgets the file read so far (a new file under the same name: the size
        cap's rewrite renames one over the stream, docs/snapshot-format.md "summary")."""
        self.header = None
        self.modules = {}
        self.stacks = {}
        self.sites = {}            # version 3: site id -> "site" record
        self._offset = 0           # bytes of the file consumed
        self._kind = None          # "plain", "zstd" or "gzip" once the first bytes are read
        self._dec = None           # the compressed kinds' decompressor
        self._pending = b""        # compressed kinds: decoded bytes after the last whole line
        self._line = 0
        self._prev_sites = None   # decode_sites state (previous snapshot's sites)
        self._carry = {}          # restore_record state (version 4)
        self._last_step = None    # step of the last snapshot but exit records

    def poll(self):
        """Returns the snapshot records appended since the last poll, in file order.
        When the file was replaced (another inode under the name, or shorter than what
        was read) it is read again from its start, and the snapshots returned before
        (by seq) and those a size cap's rewrite kept ("summarised") are not returned
        again."""
        with open(self.path, "rb") as f:
            st = os.fstat(f.fileno())
            ident = (st.st_dev, st.st_ino)
            if self._ident is not None and (ident != self._ident or st.st_size < self._offset):
                self._reset()
                self._renumbered = None   # known at the new file's first snapshot
            self._ident = ident
            f.seek(self._offset)
            data = f.read()
        if self._kind is None:
            if len(data) < 4 and (ZSTD_MAGIC.startswith(data) or GZIP_MAGIC.startswith(data[:2])):
                return []   # too few bytes to tell yet
            if data.startswith(ZSTD_MAGIC):
                self._kind, self._dec = "zstd", _zstd_decompressobj(self.path)
            elif data.startswith(GZIP_MAGIC):
                import zlib
                self._kind, self._dec = "gzip", zlib.decompressobj(wbits=31)
            else:
                self._kind = "plain"
        if self._kind != "plain":
            self._offset += len(data)
            try:
                data = self._pending + self._dec.decompress(data)
            except Exception as e:   # zstandard.ZstdError, zlib.error
                raise SnapshotError("%s:%d: cannot decompress: %s" % (self.path, self._line + 1, e))
        end = data.rfind(b"\n")
        if end < 0:
            if self._kind != "plain":
                self._pending = data
            return []
        out = []
        for raw in data[:end].split(b"\n"):
            self._line += 1
            try:
                rec = json.loads(raw, object_pairs_hook=_object_no_duplicates)
            except ValueError as e:
                raise SnapshotError("%s:%d: not JSON: %s" % (self.path, self._line, e))
            if not isinstance(rec, dict) or "t" not in rec:
                raise SnapshotError("%s:%d: not a record (no \"t\")" % (self.path, self._line))
            t = rec["t"]
            where = "%s:%d" % (self.path, self._line)
            if t == "header":
                if self.header is not None:
                    raise SnapshotError("%s: a second header in the same file" % where)
                if rec.get("format") != FORMAT_NAME or not _version_ok(rec.get("version")):
                    raise SnapshotError("%s:%d: not a %s stream of version %s" %
                                        (self.path, self._line, FORMAT_NAME,
                                         " or ".join(map(str, FORMAT_VERSIONS))))
                self.header = rec
            elif t in ("module", "stack"):
                if not _is_int(rec.get("id")):
                    raise SnapshotError("%s:%d: %s.id: expected an integer, got %r" %
                                        (self.path, self._line, t, rec.get("id")))
                if t == "stack":
                    _check_frames(rec, self.modules, where)
                (self.modules if t == "module" else self.stacks)[rec["id"]] = rec
            elif t == "site":   # version 3: a row's site id -> stack, kind, device
                add_site(self.sites, rec, self.stacks, "%s:%d" % (self.path, self._line))
            elif t == "snapshot":
                if self.header is None:
                    raise SnapshotError("%s:%d: snapshot before the header" % (self.path, self._line))
                self._last_step = _check_step(rec, self._last_step, where)
                restore_record(rec, self.header["version"], self._carry)
                rec["sites"] = decode_sites(rec, self.header["version"], self._prev_sites,
                                            "%s:%d" % (self.path, self._line), self.sites)
                _leak_warnings(rec, self.header["version"], self.header.get("leak_steps"))
                self._prev_sites = rec["sites"]
                seq = rec.get("seq")
                if getattr(self, "_renumbered", 1) is None and not rec.get("summarised"):
                    # a file created again (its folder was removed) numbers from 1; a
                    # rewrite under the size cap goes on with the old numbers
                    self._renumbered = seq == 1
                    if self._renumbered:
                        self._seen_seq = 0
                if rec.get("summarised") or (_is_int(seq) and seq <= self._seen_seq):
                    continue   # returned before the file was rewritten
                if _is_int(seq):
                    self._seen_seq = seq
                out.append(rec)
            # other record types are skipped (docs/snapshot-format.md)
        if self._kind == "plain":
            self._offset += end + 1
        else:
            self._pending = data[end + 1:]
        return out

    # ---- stacks and frames ----

    def frames(self, stack_id):
        """Frames of stack `stack_id`, innermost first, as dicts
        {"module": path or None, "offset": int, "function": str or None}."""
        st = self.stacks.get(stack_id)
        if st is None:
            return []
        out = []
        for mod_id, offset, function in st.get("frames", []):
            mod = self.modules.get(mod_id)
            out.append({"module": mod.get("path") if mod else None,
                        "offset": offset, "function": function})
        return out

    def python_frames(self, stack_id):
        """The Python frames the preload recorded with stack `stack_id` (its "py"
        list: [file, function, line, native_index], innermost first), as dicts
        {"file", "function", "line"}; [] when it has none."""
        st = self.stacks.get(stack_id)
        out = []
        for row in (st.get("py") or []) if st else []:
            out.append({"file": row[0], "function": row[1], "line": row[2]})
        return out

    def trimmed_frames(self, stack_id):
        """frames() without the tracer's and the CUDA libraries' own frames, then
        without a leading run of CUDA API names (docs/metrics.md, "Sites"); the whole
        stack when nothing would be left."""
        frames = self.frames(stack_id)
        kept = [f for f in frames
                if not os.path.basename(f["module"] or "").startswith(TRIMMED_MODULES)]
        i = 0
        while i < len(kept) and kept[i]["function"] and is_cuda_function(kept[i]["function"]):
            i += 1
        kept = kept[i:]
        return kept if kept else frames

    def site_key(self, stack_id, kind, device):
        """The site of an allocation: (trimmed frames and Python frames as tuples,
        kind, device)."""
        frames = tuple((f["module"], f["offset"]) for f in self.trimmed_frames(stack_id))
        py = tuple((f["file"], f["function"], f["line"]) for f in self.python_frames(stack_id))
        return (frames, py, kind, device)


def format_python_frame(frame):
    """One Python frame as "function (file:line)"."""
    return "%s (%s:%s)" % (frame["function"] or "?", frame["file"] or "?", frame["line"])


def format_frame(frame):
    """One frame as "function (libfoo.so+0x1a2b)" or "libfoo.so+0x1a2b"."""
    mod = os.path.basename(frame["module"]) if frame["module"] else "?"
    where = "%s+0x%x" % (mod, frame["offset"])
    return "%s (%s)" % (frame["function"], where) if frame["function"] else where


def find_labelled(records, label):
    """Index of the snapshot record labelled `label` in `records`, or None."""
    for i, rec in enumerate(records):
        if rec.get("label") == label:
            return i
    return None


def _site_rows(rec):
    return rec.get("sites") or []


def new_allocations_by_site(stream, before, after):
    """Allocations live in `after` that were not live in `before` (matched by
    address, birth time and stack, so a reused address is a new allocation),
    grouped by site. Returns a list of dicts sorted by bytes, largest first:
    {"bytes", "count", "kind", "device", "stacks": [ids], "frames": [...],
    "py": [Python frames, see Stream.python_frames]}.
    Raises SnapshotError when either record lacks its allocation list."""
    if before.get("allocations") is None or after.get("allocations") is None:
        raise SnapshotError("%s: a manual snapshot without \"allocations\"" % stream.path)
    seen = set()
    for row in before["allocations"]:
        seen.add((row[0], row[6], row[4]))
    sites = {}
    for row in after["allocations"]:
        addr, size, kind, device, stack, birth = row[0], row[1], row[2], row[3], row[4], row[6]
        if (addr, birth, stack) in seen:
            continue
        key = stream.site_key(stack, kind, device)
        s = sites.get(key)
        if s is None:
            s = sites[key] = {"bytes": 0, "count": 0, "kind": kind, "device": device,
                              "stacks": [], "frames": stream.trimmed_frames(stack),
                              "py": stream.python_frames(stack)}
        s["bytes"] += size
        s["count"] += 1
        if stack not in s["stacks"]:
            s["stacks"].append(stack)
    return sorted(sites.values(), key=lambda s: -s["bytes"])


def live_total(rec):
    """Total live bytes (all devices, all kinds) in a snapshot record."""
    return sum(int(r.get("live_bytes", 0)) for r in _site_rows(rec))


def _counters(row):
    """A site row's (alloc_total, free_total), or None when the row lacks them."""
    a, f = row.get("alloc_total"), row.get("free_total")
    return None if a is None or f is None else (a, f)


def window_peak_bounds(before, later):
    """Bounds of the highest total live bytes between snapshot `before` and the last
    record of `later` (the snapshot records written after `before`, in file order,
    ending with the closing one).

    Each site row carries ``interval_peak_bytes``, the site's highest live bytes
    since the previous record, and its alloc/free counters; a site absent from a
    record had no live bytes and no change. Sites whose counters did not move were
    constant through the window. So: upper bound = constant sites + the sum of each
    changing site's highest value; lower bound = the highest total at a record, or
    the constant sites plus any one changing site's highest value. Both are exact
    when at most one site changed. Returns (base, low, high), base = total live at
    `before`."""
    first = {}
    for r in _site_rows(before):
        first[(r.get("stack"), r.get("kind"), r.get("device"))] = r
    last, top = {}, {}
    low = 0
    for rec in later:
        for r in _site_rows(rec):
            key = (r.get("stack"), r.get("kind"), r.get("device"))
            v = int(r.get("interval_peak_bytes", r.get("live_bytes", 0)))
            top[key] = max(top.get(key, 0), v)
            last[key] = r
        low = max(low, live_total(rec))
    constant = 0
    changing = []
    for key in set(first) | set(last):
        b, e = first.get(key), last.get(key, first.get(key))
        if b is not None and _counters(b) is not None and _counters(b) == _counters(e):
            constant += int(b.get("live_bytes", 0))
        else:
            changing.append(top.get(key, int(b.get("live_bytes", 0)) if b else 0))
    high = constant + sum(changing)
    low = max(low, constant + max(changing, default=0))
    return live_total(before), low, max(high, low)


def window_site_rises(stream, before, later):
    """Per site, how far its live bytes rose during the window above their value at
    `before` (its highest interval peak in `later` minus its live bytes at
    `before`). Returns a list of {"bytes", "kind", "device", "frames", "py"} for the sites
    that rose, largest first; "stacks" lists the stack ids of the site."""
    start = {}
    for r in _site_rows(before):
        start[(r.get("stack"), r.get("kind"), r.get("device"))] = int(r.get("live_bytes", 0))
    top = {}
    for rec in later:
        for r in _site_rows(rec):
            key = (r.get("stack"), r.get("kind"), r.get("device"))
            v = int(r.get("interval_peak_bytes", r.get("live_bytes", 0)))
            if v > top.get(key, 0):
                top[key] = v
    sites = {}
    for (stack, kind, device), peak in top.items():
        rise = peak - start.get((stack, kind, device), 0)
        if rise <= 0:
            continue
        skey = stream.site_key(stack, kind, device)
        s = sites.get(skey)
        if s is None:
            s = sites[skey] = {"bytes": 0, "kind": kind, "device": device, "stacks": [],
                               "frames": stream.trimmed_frames(stack),
                               "py": stream.python_frames(stack)}
        s["bytes"] += rise
        s["stacks"].append(stack)
    return sorted(sites.values(), key=lambda s: -s["bytes"])


_INTERPRETER_RE = re.compile(r"^(lib)?python[0-9.]*[dmu]*(\.so[0-9.]*)?$")


def module_name(frame):
    """Basename of a frame's module, or "?"."""
    return os.path.basename(frame["module"]) if frame["module"] else "?"


def collapse_interpreter(frames):
    """Groups frames for display: each run of two or more consecutive frames in the
    CPython interpreter (python3.X, libpython3.X.so) becomes one group, every other
    frame its own. Yields (index of the group's first frame, [frames])."""
    i = 0
    while i < len(frames):
        j = i
        while j < len(frames) and _INTERPRETER_RE.match(module_name(frames[j])):
            j += 1
        if j - i >= 2:
            yield i, frames[i:j]
            i = j
        else:
            yield i, [frames[i]]
            i += 1
