"""bench_tensor.py LIB THREADS PAIRS PY_FRAMES NATIVE_FRAMES [SIZE]

The program side of the tensor-rate churn benchmark (vt_bench.py --figures 14): what
`--tensors` makes of a transformer's step, on the simulated device. THREADS Python
threads each make PAIRS cudaMallocAsync/cudaFreeAsync pairs of SIZE bytes (default
4096) on a stream of their own, from 8 Python call sites taken in turn, each call
PY_FRAMES Python frames deep (the thread's bootstrap frames counted) and
NATIVE_FRAMES native frames below the ctypes call (bench_tensor.c, LIB). callgrind
counts only bench_measured_tensor_pair (the pair, with everything the tracer does in
it). Prints one line "pairs=.. threads=.. py_frames=.. native_frames=.. wall_ns=.." (the
depths measured at the CUDA call; the wall time of the pairs, all threads, after their
warm-up). Exit 1 on a CUDA error.
"""
import ctypes
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
THREADS, PAIRS, PY_FRAMES, NATIVE = (int(x) for x in sys.argv[2:6])
SIZE = int(sys.argv[6]) if len(sys.argv) > 6 else 4096
lib.bench_tensor_pair.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
lib.bench_tensor_stream.restype = ctypes.c_void_p
failed = []


def depth_here():
    f, n = sys._getframe(1), 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


# Eight call sites: eight functions (eight code objects and lines), as a model's
# layers, attention, activations and optimizer each allocate from their own line.
def site0(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site1(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site2(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site3(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site4(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site5(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site6(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)
def site7(s): return lib.bench_tensor_pair(NATIVE, s, SIZE)


SITES = (site0, site1, site2, site3, site4, site5, site6, site7)


def down(k, s, i):
    """k more Python frames, then one pair from site i % 8."""
    if k > 0:
        return down(k - 1, s, i)
    r = SITES[i % 8](s)
    if r:
        failed.append(r)
    return r


def worker(out):
    s = lib.bench_tensor_stream()
    if not s:
        failed.append("stream")
        return
    # frames above down() on this thread: bootstrap + worker; the site adds one
    k = max(0, PY_FRAMES - depth_here() - 1 - 1)
    out.append((depth_here() + k + 1 + 1, lib.bench_tensor_native_depth(NATIVE)))
    for i in range(50):        # warm: the tracer's first allocation, libunwind's caches
        down(k, s, i)
    start.wait()
    for i in range(PAIRS):
        down(k, s, i)


# one pair on the main thread first: the tracer activates (a thread that calls while
# another activates forwards unrecorded), so every counted pair is recorded
if lib.bench_tensor_pair(NATIVE, None, SIZE):
    print("bench_tensor: first pair failed", file=sys.stderr)
    sys.exit(1)
depths = []
start = threading.Barrier(THREADS + 1)   # the pairs begin together, after every warm-up
ts = [threading.Thread(target=worker, args=(depths,)) for _ in range(THREADS)]
for t in ts:
    t.start()
start.wait()
t0 = time.perf_counter_ns()
for t in ts:
    t.join()
wall = time.perf_counter_ns() - t0
if failed or not depths:
    print("bench_tensor: failed: %s" % failed[:3], file=sys.stderr)
    sys.exit(1)
print("pairs=%d threads=%d py_frames=%d native_frames=%d wall_ns=%d" % (THREADS * PAIRS, THREADS, depths[0][0],
                                                                     depths[0][1], wall))
