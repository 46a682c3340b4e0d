#!/usr/bin/env python3
"""A Python training loop that drives the CUDA runtime through ctypes.

The same script runs on a real GPU and on vramtrace's simulated device. It has
the shape of a real job: parameters allocated at start, per-step activations
allocated and freed (churn), and a bug in remember_batch(): every step keeps a
2 MiB device buffer alive in a list (the leak, 2 MiB/step).

Run it under the tracer:
    LD_PRELOAD=build/lib/libvramtrace.so python3 examples/python/train.py
    build/bin/vramtrace run -- python3 examples/python/train.py
Without a GPU, put the simulated runtime on the library path first:
    export LD_LIBRARY_PATH=$PWD/build/simcuda

Steps are marked with vramtrace_step() when the preload is present (looked up
in the process's global symbol scope); otherwise the periodic snapshots cut steps.
"""
import argparse
import ctypes
import ctypes.util
import os
import sys

MiB = 1024 * 1024


def load_cudart():
    names = [os.environ.get("VRAMTRACE_CUDART"), "libcudart.so.13", "libcudart.so.12",
             ctypes.util.find_library("cudart")]
    for name in names:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("train.py: cannot load the CUDA runtime (libcudart.so.13); "
             "set LD_LIBRARY_PATH or VRAMTRACE_CUDART")


cudart = load_cudart()
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
cudart.cudaMemset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
cudart.cudaGetErrorString.restype = ctypes.c_char_p


def check(err, what):
    if err != 0:
        msg = cudart.cudaGetErrorString(err).decode()
        raise RuntimeError(f"{what}: {msg} ({err})")


def device_alloc(nbytes):
    p = ctypes.c_void_p()
    check(cudart.cudaMalloc(ctypes.byref(p), nbytes), "cudaMalloc")
    return p


def device_free(p):
    check(cudart.cudaFree(p), "cudaFree")


try:  # vramtrace_step from the preload, if it is loaded; a no-op otherwise
    _step = ctypes.CDLL(None).vramtrace_step
    _step.restype = None
except AttributeError:
    _step = None


def mark_step():
    if _step is not None:
        _step()


history = []


def init_parameters():
    return device_alloc(128 * MiB)


def forward(params):
    act = device_alloc(48 * MiB)
    check(cudart.cudaMemset(act, 0, 4096), "cudaMemset")
    return act


def backward(act):
    device_free(act)


def remember_batch(step):
    # BUG: keeps a device copy of every batch "for debugging".
    buf = device_alloc(2 * MiB)
    history.append(buf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    params = init_parameters()
    for step in range(args.steps):
        act = forward(params)
        backward(act)
        remember_batch(step)
        mark_step()
    device_free(params)
    print(f"train.py: {args.steps} steps, {len(history) * 2} MiB still held by history")


if __name__ == "__main__":
    main()
