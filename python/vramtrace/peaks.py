"""Exact peaks of nested or overlapping blocks from one C primitive.

Design: ``uint64_t vramtrace_peak_interval_bytes(void)`` (optional in the library;
contract in python/README.md) returns the highest total live bytes (all devices,
all kinds) since its previous call, and starts a new interval at the live bytes of
now; it leaves ``vramtrace_peak_bytes`` alone. The calls cut time into intervals,
and every call's answer is the maximum of the interval it closes. A watch that
receives the answer of every call made while it is open therefore knows the
maximum over its whole lifetime, however watches nest or overlap. So this module
is the only caller in the process: it hands each answer to every open watch.

Without the primitive, :meth:`PeakWatch.stop` returns None.
Thread-safe (one lock around the call and the distribution).
"""
import threading

from . import _native

_lock = threading.Lock()
_open = []   # open PeakWatch objects


def available():
    """True when the library has vramtrace_peak_interval_bytes."""
    return _native.has("vramtrace_peak_interval_bytes")


def _cut():
    """Closes the current interval and gives its maximum to every open watch.
    Caller holds _lock; returns False without the primitive."""
    fn = _native.lookup("vramtrace_peak_interval_bytes")
    if fn is None:
        return False
    top = int(fn())
    for w in _open:
        if top > w.top:
            w.top = top
    return True


class PeakWatch:
    """Highest total live bytes between start() and stop()."""

    def __init__(self):
        self.top = 0
        self._running = False

    def start(self):
        with _lock:
            _cut()                 # the interval now starts at this moment
            self.top = 0
            _open.append(self)
            self._running = True
        return self

    def stop(self):
        """The highest total live bytes while the watch ran, or None without the
        library's vramtrace_peak_interval_bytes."""
        with _lock:
            if not self._running:
                raise RuntimeError("PeakWatch.stop() without start()")
            ok = _cut()
            _open.remove(self)
            self._running = False
        return self.top if ok else None
