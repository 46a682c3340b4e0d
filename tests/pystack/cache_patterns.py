"""cache_patterns.py PROBE FUNCTION PATTERN ITERS — captures through a Python
recursion whose depth follows PATTERN, for callgrind cost runs of the Python capture
cache (docs/performance.md "Python frames through a per-thread cache"). FUNCTION:
probe_cache_capture (vt_py_capture_cached) or probe_nocache_capture (vt_py_capture).
PATTERN: same (30 frames of recursion every time), grow (10, 11, ... 49, then again),
alt (10 and 40 in turn).
"""
import ctypes
import sys

P = ctypes.CDLL(sys.argv[1])
P.probe_init()
FN = getattr(P, sys.argv[2])
PATTERN, ITERS = sys.argv[3], int(sys.argv[4])


def down(k):
    if k > 0:
        return down(k - 1)
    return FN(128)


for i in range(ITERS):
    down({"same": 30, "grow": 10 + i % 40, "alt": 10 if i % 2 else 40}[PATTERN])
