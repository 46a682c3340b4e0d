"""Measuring one block of code (a test body): leaks per site and its peak.

Design: :class:`Window` brackets the block with two labelled manual snapshots
(``vramtrace_snapshot``, written synchronously) plus the counters of the C API:

- leaks per site: allocations in the closing snapshot that the opening one did not
  list (see snapshots.new_allocations_by_site), grouped by site with its frames.
  Fallback when the stream cannot be read: the process's leak scope is opened
  around the block and its total (``vramtrace_scope_leaked_bytes``) is used, with
  the reason in ``Result.notes``.
- peak: the highest total live bytes during the block, counted above the live bytes
  at its start ("the block's own high-water mark"). Exact with
  ``vramtrace_peak_interval_bytes`` (vramtrace.peaks) when the library has it, or
  when the process's peak (``vramtrace_peak_bytes(-1)``) rose during the block.
  Otherwise the process peak and the per-site interval peaks of the snapshots in
  the window give bounds (Result.peak_low <= true peak <= Result.peak_high), exact
  when at most one site changed during the block.

Before each snapshot, garbage is collected and, where torch is already imported
with CUDA initialised, ``torch.cuda.synchronize()`` and ``torch.cuda.empty_cache()``
run, so that blocks cached by PyTorch's allocator are not taken for leaks.
All sizes in bytes. Not thread-safe: one Window at a time (the C scope is
process-wide).
"""
import gc
import itertools
import os
import sys

from . import _native
from . import scope as _scope
from .peaks import PeakWatch
from .snapshots import (SnapshotError, Stream, find_labelled, find_own_stream,
                        new_allocations_by_site, window_peak_bounds,
                        window_site_rises)

_counter = itertools.count(1)


class Result:
    """What a Window measured.

    leaked_bytes: total allocated in the block and still live at its end; None
        when it could not be measured (see notes).
    sites: per-site leaks, list of dicts (see snapshots.new_allocations_by_site),
        or None when per-site data was not available (see notes).
    peak_low, peak_high: bounds of the block's peak above its starting live bytes;
        equal when exact (peak_exact True). peak_method says how it was found.
    live_before, live_after: process live bytes at the block's start and end.
    peak_sites: the sites whose live bytes rose during the block, largest rise
        first (dicts {"bytes", "kind", "device", "frames"}), or None without data.
    notes: list of strings: why some data is missing or approximate.
    stream_path: the snapshot stream read, or None.
    """

    def __init__(self):
        self.leaked_bytes = None
        self.sites = None
        self.peak_low = 0
        self.peak_high = 0
        self.peak_method = ""
        self.peak_sites = None
        self.live_before = 0
        self.live_after = 0
        self.notes = []
        self.stream_path = None

    @property
    def peak_exact(self):
        return self.peak_low == self.peak_high


def _settle():
    """Frees what the program no longer references: Python garbage, and blocks cached
    by PyTorch's allocator (only where torch is already imported and CUDA is up)."""
    gc.collect()
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    if cuda is None:
        return
    try:
        is_init = getattr(cuda, "is_initialized", None)
        if cuda.is_available() and (is_init is None or is_init()):
            cuda.synchronize()
            cuda.empty_cache()
    except Exception:
        pass  # a broken torch must not break the measurement


class Window:
    """Use: w = Window(name); w.begin(); <block>; result = w.end().

    `stream` may be a Stream shared across windows (saves re-reading the file);
    the Window finds and opens the process's stream itself otherwise (exposed as
    the attribute ``stream`` afterwards)."""

    def __init__(self, name, stream=None):
        self.name = name[:400]
        self.stream = stream
        self._id = 0
        self._tail = []      # records read but not consumed yet
        self._before = None
        self._scope = None
        self._scope_result = None
        self._peak = PeakWatch()
        self._live0 = 0
        self._peak0 = 0
        self.result = Result()

    def _label_for(self, what):
        return "vramtrace-pytest %d.%d %s %s" % (os.getpid(), self._id, what, self.name)

    def _snapshot_record(self, label):
        """Writes a manual snapshot labelled `label`; returns the records read up to
        and including it (the snapshot is the last one), or None with a note."""
        fn = _native.lookup("vramtrace_snapshot")
        rc = fn(label.encode("utf-8")) if fn is not None else -1
        if rc != 0:
            self.result.notes.append("vramtrace_snapshot() returned %d" % rc)
            return None
        try:
            if self.stream is None:
                path = find_own_stream()
                if path is None:
                    self.result.notes.append("this process's snapshot file was not found "
                                             "(VRAMTRACE_OUTPUT=%r)" %
                                             os.environ.get("VRAMTRACE_OUTPUT", "vramtrace-out"))
                    return None
                self.stream = Stream(path)
            self.result.stream_path = self.stream.path
            self._tail.extend(self.stream.poll())
        except (OSError, SnapshotError, KeyError, TypeError, ValueError) as e:
            self.result.notes.append("cannot read the snapshot stream: %s" % e)
            self.stream = None
            return None
        i = find_labelled(self._tail, label)
        if i is None:
            self.result.notes.append("snapshot %r not found in %s" % (label, self.stream.path))
            return None
        batch, self._tail = self._tail[:i + 1], self._tail[i + 1:]
        return batch

    def begin(self):
        self._id = next(_counter)
        self._tail = []
        _settle()
        self._live0 = _call("vramtrace_live_bytes", -1)
        self._peak0 = _call("vramtrace_peak_bytes", -1)
        batch = self._snapshot_record(self._label_for("begin"))
        self._before = batch[-1] if batch else None
        # The C leak scope is process-wide (a test body's own vramtrace.scope() would
        # collide with it), so it is opened only when the stream cannot be read.
        if self._before is None:
            self._scope = _scope()
            self._scope_result = self._scope.__enter__()
        self._peak.start()

    def end(self):
        r = self.result
        try:
            _settle()
        finally:
            top = self._peak.stop()
            if self._scope is not None:
                self._scope.__exit__(None, None, None)
        sc = self._scope_result
        live1 = _call("vramtrace_live_bytes", -1)
        peak1 = _call("vramtrace_peak_bytes", -1)
        window = None  # the records after the opening snapshot, up to the closing one
        if self._before is not None:
            window = self._snapshot_record(self._label_for("end"))
        after = window[-1] if window else None
        r.live_before, r.live_after = self._live0, live1
        r.leaked_bytes = sc.leaked_bytes if sc is not None else None

        # leaks per site
        if self._before is not None and after is None:
            r.notes.append("the closing snapshot could not be read, so leaks are not known")
        if self._before is not None and after is not None:
            try:
                r.sites = new_allocations_by_site(self.stream, self._before, after)
                r.leaked_bytes = sum(s["bytes"] for s in r.sites)
            except (SnapshotError, KeyError, TypeError, IndexError) as e:
                r.notes.append("per-site data unavailable: %s" % e)
                r.sites = None

        # peak
        if self._before is not None and after is not None:
            try:
                r.peak_sites = window_site_rises(self.stream, self._before, window)
            except (KeyError, TypeError, ValueError) as e:
                r.notes.append("per-site peaks unavailable: %s" % e)
        if top is not None:
            r.peak_low = r.peak_high = max(0, top - self._live0)
            r.peak_method = "vramtrace_peak_interval_bytes"
        elif peak1 > self._peak0:
            r.peak_low = r.peak_high = peak1 - self._live0
            r.peak_method = "the process peak rose during the test"
        else:
            low = max(0, live1 - self._live0)
            high = max(low, self._peak0 - self._live0)
            r.peak_method = "bounded by the process peak"
            if self._before is not None and after is not None:
                try:
                    base, wlow, whigh = window_peak_bounds(self._before, window)
                    low = max(low, wlow - base)
                    high = max(low, min(high, whigh - base))
                except (KeyError, TypeError, ValueError) as e:
                    r.notes.append("per-site peaks unavailable: %s" % e)
                r.peak_method = ("from the per-site interval peaks" if low == high
                                 else "bounded by the per-site interval peaks")
            r.peak_low, r.peak_high = low, high
            if low != high:
                r.notes.append("the test's peak is between %d and %d bytes: the library has "
                               "no vramtrace_peak_interval_bytes() and the process peak did "
                               "not rise during the test" % (low, high))
        return r


def _call(name, *args):
    fn = _native.lookup(name)
    return int(fn(*args)) if fn is not None else 0
