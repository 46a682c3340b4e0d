"""check_train.py <snapshot-dir> <train.py> <on|off>: checks the Python frames
libvramtrace.so wrote for examples/python/train.py.

on:  the leak (remember_batch) and the churn (forward) are two different
     stacks, each naming device_alloc at its cudaMalloc line, then the caller
     at its call line, in train.py; every Python frame's native_index points
     at a native _PyEval_EvalFrameDefault frame (or is -1 past a cut stack).
off: (VRAMTRACE_PYTHON=off) no stack has "py".
Exit 0 = pass."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from vramtrace.snapshots import read_stream  # noqa: E402

out_dir, train, mode = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
src = open(train).read().splitlines()


def line_of(text):
    return next(i + 1 for i, l in enumerate(src) if text in l)


want_alloc = line_of("cudart.cudaMalloc(ctypes.byref(p), nbytes)")
want_leak = line_of("buf = device_alloc(2 * MiB)")
want_churn = line_of("act = device_alloc(48 * MiB)")
files = glob.glob(os.path.join(out_dir, "*.jsonl"))
assert len(files) == 1, files
stacks, sites = {}, []
_, _, stacks, snapshots = read_stream(files[0])   # sites decoded, any format version
if snapshots:
    sites = snapshots[-1]["sites"]
fails = []


def same_file(path):
    """The file as Python recorded it (e.g. with '..') normalised like `train`."""
    return train if os.path.realpath(path) == os.path.realpath(train) else path


def site_by_caller(func):
    for sid, st in stacks.items():
        py = st.get("py", [])
        if len(py) >= 2 and py[1][1] == func:
            return sid, py, st["frames"]
    return None, None, None


if mode == "on":
    leak_id, leak, lfr = site_by_caller("remember_batch")
    churn_id, churn, _ = site_by_caller("forward")
    if leak is None or churn is None:
        fails.append(f"no Python frames for the two sites: {list(stacks.values())[:2]}")
    else:
        if leak_id == churn_id:
            fails.append("leak and churn share a stack")
        for py, caller_line, name in ((leak, want_leak, "leak"), (churn, want_churn, "churn")):
            if [same_file(py[0][0]), py[0][1], py[0][2]] != [train, "device_alloc", want_alloc]:
                fails.append(f"{name}: innermost {py[0]} != device_alloc:{want_alloc}")
            if same_file(py[1][0]) != train or py[1][2] != caller_line:
                fails.append(f"{name}: caller {py[1]} != line {caller_line}")
            if py[-1][1] != "<module>":
                fails.append(f"{name}: outermost {py[-1]}")
        for py_frame in leak:
            k = py_frame[3]
            if k != -1 and lfr[k][2] != "_PyEval_EvalFrameDefault":
                fails.append(f"native_index {k} is {lfr[k]}")
        if all(p[3] == -1 for p in leak):
            fails.append("no Python frame placed on a native eval frame")
        live = {s["stack"] for s in sites}
        if leak_id not in live:
            fails.append(f"leak stack {leak_id} not a live site in the last snapshot")
else:
    if any("py" in st for st in stacks.values()):
        fails.append("VRAMTRACE_PYTHON=off still wrote Python frames")
for f in fails:
    print("FAIL:", f)
print(f"check_train {mode}: {'FAIL' if fails else 'ok'} ({len(stacks)} stacks)")
sys.exit(1 if fails else 0)
