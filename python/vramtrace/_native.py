"""The C client API of libvramtrace.so, reached through ctypes.

Design: the functions are looked up by name in the process's global symbol scope
(``ctypes.CDLL(None)``, i.e. ``dlopen(NULL)`` + ``dlsym``), exactly like the inline
wrappers of ``include/vramtrace.h`` do with ``dlsym(RTLD_DEFAULT, name)``. The library
is there when it was preloaded (``LD_PRELOAD=libvramtrace.so``), linked into the
executable, or ``dlopen``-ed with ``RTLD_GLOBAL``. Each name is looked up once; the
result (or its absence) is cached, as the header does. Nothing here loads the
library, allocates through CUDA or changes CUDA state.

The C contracts (units: bytes; device ordinals, -1 for all devices) are those of
``include/vramtrace.h``. Optional entry points that a given libvramtrace.so may not
export yet (``vramtrace_annotate``, ``vramtrace_peak_interval_bytes``,
``vramtrace_enabled``, ``vramtrace_peak_sites``) are looked up the same way; callers test :func:`has`.

Thread safety: lookups are guarded by a lock; the C functions are thread-safe.
"""
import ctypes
import threading

class PeakInfo(ctypes.Structure):
    """vramtrace_peak_info of include/vramtrace.h."""
    _fields_ = [("peak_bytes", ctypes.c_uint64), ("step", ctypes.c_uint64), ("time_ns", ctypes.c_uint64),
                ("other_bytes", ctypes.c_uint64), ("other_sites", ctypes.c_uint32), ("n_sites", ctypes.c_uint32)]


class PeakSite(ctypes.Structure):
    """vramtrace_peak_site of include/vramtrace.h."""
    _fields_ = [("stack", ctypes.c_uint32), ("kind", ctypes.c_int32), ("device", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("bytes", ctypes.c_uint64)]


PEAK_TOP = 16   # VRAMTRACE_PEAK_TOP

# name -> (restype, argtypes), as declared in include/vramtrace.h (and, for the
# optional ones, the contracts in python/README.md "C entry points").
_SIGNATURES = {
    "vramtrace_step": (None, []),
    "vramtrace_snapshot": (ctypes.c_int, [ctypes.c_char_p]),
    "vramtrace_live_bytes": (ctypes.c_uint64, [ctypes.c_int]),
    "vramtrace_peak_bytes": (ctypes.c_uint64, [ctypes.c_int]),
    "vramtrace_scope_begin": (None, []),
    "vramtrace_scope_leaked_bytes": (ctypes.c_uint64, []),
    # Optional (not in every build of the preload):
    "vramtrace_annotate": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_double]),
    "vramtrace_peak_interval_bytes": (ctypes.c_uint64, []),
    "vramtrace_enabled": (ctypes.c_int, []),
    "vramtrace_peak_sites": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(PeakInfo), ctypes.POINTER(PeakSite),
                                            ctypes.c_int]),
}

_lock = threading.Lock()
_cache = {}          # name -> ctypes function or None (absent)
_scope_handle = None  # the process's global scope, opened once


def _global_scope():
    global _scope_handle
    if _scope_handle is None:
        _scope_handle = ctypes.CDLL(None)
    return _scope_handle


def lookup(name):
    """Returns the ctypes function `name` of libvramtrace.so, or None when the
    process has no such symbol. `name` must be one of the known entry points."""
    try:
        return _cache[name]
    except KeyError:
        pass
    restype, argtypes = _SIGNATURES[name]
    with _lock:
        if name in _cache:
            return _cache[name]
        try:
            fn = getattr(_global_scope(), name)
        except AttributeError:
            fn = None
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes
        _cache[name] = fn
        return fn


def has(name):
    """True when libvramtrace.so in this process exports `name`."""
    return lookup(name) is not None


def forget():
    """Drops the cached lookups (for tests, or after dlopen-ing the library with
    RTLD_GLOBAL at run time)."""
    with _lock:
        _cache.clear()
