"""pystack_cost.py <probe.so> <depth> <iterations>: recurse to <depth> Python
frames, then call probe_capture_raw(<iterations>) once (vt_py_capture
<iterations> times). Run under callgrind by cost.sh. Prints the frame count."""
import ctypes
import sys

probe = ctypes.CDLL(sys.argv[1])
assert probe.probe_init() == sys.version_info[1]


def down(n):
    if n == 0:
        return probe.probe_capture_raw(int(sys.argv[3]))
    return down(n - 1)


print(down(int(sys.argv[2])))
