"""vramtrace: Python helper for the libvramtrace.so GPU memory tracer.

Run the program under the tracer (``LD_PRELOAD=/path/to/libvramtrace.so python3
train.py``, or ``vramtrace run -- python3 train.py``) and call these from it. Without
the library in the process every function is a no-op that returns 0 (``scope()``
still works and reports 0), so the calls can stay in production code.

Pure Python over ctypes, no dependency: the C client API of ``include/vramtrace.h``
is looked up in the process's global symbol scope (see ``vramtrace._native``).
Units: bytes. Devices: CUDA device ordinals, -1 for all devices.
Thread safety: every function may be called from any thread; scopes are
process-wide, one at a time (the C API has one scope).
"""
import collections
import ctypes
import threading

from . import _native, _torch
from .peaks import PeakWatch
from .sizes import format_size, parse_size

__all__ = ["step", "snapshot", "live_bytes", "peak_bytes", "peak", "Peak", "scope", "Scope",
           "enabled", "annotate", "tensors", "parse_size", "format_size"]
__version__ = "0.1.0"


def enabled():
    """True when libvramtrace.so is in this process and (where the library can say
    so, through ``vramtrace_enabled``) tracking is on. False otherwise: then every
    function here is a no-op."""
    if not _native.has("vramtrace_step"):
        return False
    fn = _native.lookup("vramtrace_enabled")
    return bool(fn()) if fn is not None else True


def tensors():
    """Switches PyTorch, TensorFlow, JAX, CuPy and RMM to one CUDA allocation per
    tensor or buffer, by their own settings (``vramtrace._tensors``), so the tracer
    sites tensors instead of allocator segments. Call it first thing in the program
    (the frameworks read their settings when they start). Returns a dict: "env"
    (variables set), "warnings", "switched" (in-process allocators switched)."""
    from . import _tensors
    return _tensors.tensors()


def annotate(key, value):
    """Attaches a numeric value to the next step snapshots of the tracer
    (``vramtrace_annotate``). Returns 0, a negative errno from the library, or 0
    without doing anything when the library lacks the entry point."""
    fn = _native.lookup("vramtrace_annotate")
    if fn is None:
        return 0
    return int(fn(key.encode("utf-8"), float(value)))


def step():
    """Marks the end of one step (one training iteration): ``vramtrace_step()``.

    When torch is already imported with CUDA initialised, first attaches
    ``torch.cuda`` allocated/reserved/inactive-split bytes of each device to this
    step (``vramtrace._torch``; needs ``vramtrace_annotate`` in the library,
    silently skipped otherwise). Returns None."""
    fn = _native.lookup("vramtrace_step")
    if fn is None:
        return None
    if _native.has("vramtrace_annotate"):
        for key, value in _torch.collect():
            annotate(key, value)
    fn()
    return None


def snapshot(label=None):
    """Writes a "manual" snapshot of every live allocation, labelled `label` (str or
    None; at most 1024 UTF-8 bytes are kept). Returns 0 once it is on disk, or a
    negative errno (-ECANCELED tracking off, -EIO unwritable output, -ENOMEM); 0
    without the library."""
    fn = _native.lookup("vramtrace_snapshot")
    if fn is None:
        return 0
    raw = None if label is None else str(label).encode("utf-8")
    return int(fn(raw))


def live_bytes(device=-1):
    """Bytes allocated through CUDA and not freed, on `device` (-1: all devices)."""
    fn = _native.lookup("vramtrace_live_bytes")
    return int(fn(int(device))) if fn is not None else 0


def peak_bytes(device=-1):
    """Highest live bytes seen on `device` (-1: the process total) so far."""
    fn = _native.lookup("vramtrace_peak_bytes")
    return int(fn(int(device))) if fn is not None else 0


Peak = collections.namedtuple("Peak", "sites peak_bytes step")
Peak.__doc__ = """What was live at the peak (``vramtrace.peak()``).

sites: [(stack, bytes), ...], bytes descending: the stack id of each site (the id
    the snapshot file's ``stack`` records and ``vramtrace report --format json`` use;
    the report titles it) and its live bytes at that moment; at most 16 sites, the
    rest summed as ("other", bytes) at the end.
peak_bytes: the total then (at most 1 % below ``peak_bytes(device)``).
step: the step in progress then (the number its step snapshot carries)."""


def peak(device=-1):
    """What was live at the highest peak so far of `device`'s live bytes (-1: of
    the process total, all devices): a :class:`Peak` (sites, peak_bytes, step).
    ``Peak([], 0, 0)`` before the first allocation, without the library or when it
    lacks ``vramtrace_peak_sites``. The moment is copied by the tracer when the
    peak rises at least 1 % above the previous copy (or at all once the previous
    copy is older than the snapshot interval), so a buffer that lived only inside
    the peak step is there at its exact size."""
    fn = _native.lookup("vramtrace_peak_sites")
    if fn is None:
        return Peak([], 0, 0)
    info = _native.PeakInfo()
    arr = (_native.PeakSite * _native.PEAK_TOP)()
    n = int(fn(int(device), ctypes.byref(info), arr, _native.PEAK_TOP))
    if n <= 0:
        return Peak([], 0, 0)
    sites = [(int(arr[i].stack), int(arr[i].bytes)) for i in range(n)]
    if info.other_bytes:
        sites.append(("other", int(info.other_bytes)))
    return Peak(sites, int(info.peak_bytes), int(info.step))


_scope_lock = threading.Lock()
_scope_active = False


class Scope:
    """What one ``with vramtrace.scope() as s:`` measured.

    leaked_bytes: bytes allocated inside the block and still live when it ended
        (``vramtrace_scope_leaked_bytes``); None while the block runs, 0 without
        the library.
    peak_bytes: highest total live bytes of the process (all devices) during the
        block, when the library has ``vramtrace_peak_interval_bytes``; None otherwise.
    """

    __slots__ = ("leaked_bytes", "peak_bytes")

    def __init__(self):
        self.leaked_bytes = None
        self.peak_bytes = None

    def leaked_bytes_now(self):
        """Bytes allocated since the scope began and still live, read now."""
        fn = _native.lookup("vramtrace_scope_leaked_bytes")
        return int(fn()) if fn is not None else 0

    def __repr__(self):
        return "Scope(leaked_bytes=%r, peak_bytes=%r)" % (self.leaked_bytes, self.peak_bytes)


class scope:
    """Context manager: ``with vramtrace.scope() as s: ...`` then ``s.leaked_bytes``.

    The C API has one process-wide scope, so scopes cannot nest or overlap (in any
    thread): entering a second one raises RuntimeError instead of silently
    restarting the first. An exception inside the block still ends the scope and
    sets the numbers."""

    def __init__(self):
        self._result = Scope()
        self._peak = PeakWatch()

    def __enter__(self):
        global _scope_active
        with _scope_lock:
            if _scope_active:
                raise RuntimeError("vramtrace.scope(): another scope is active; the C API "
                                   "has one process-wide scope, so scopes cannot nest")
            _scope_active = True
        self._peak.start()
        begin = _native.lookup("vramtrace_scope_begin")
        if begin is not None:
            begin()
        return self._result

    def __exit__(self, exc_type, exc, tb):
        global _scope_active
        try:
            self._result.leaked_bytes = self._result.leaked_bytes_now()
            self._result.peak_bytes = self._peak.stop()
        finally:
            with _scope_lock:
                _scope_active = False
        return False
