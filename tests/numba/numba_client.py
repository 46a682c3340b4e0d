"""A Numba CUDA program with a planted leak, run by tests/numba under `vramtrace run`
on the simulated device (NUMBA_CUDA_DRIVER=<build>/simcuda/libcuda.so.1).

numba_client.py SUMMARY.json [--steps N]

Every step it
  - keeps one device_array of LEAK_BYTES in `history` (the leak, LEAK_BYTES/step,
    at the line marked LEAK);
  - makes TEMPS temporaries with to_device, copies them back through a stream and
    drops them: Numba queues their cuMemFree_v2 and runs the queue when it holds
    more than CUDA_DEALLOCS_COUNT (10) entries, so they go in bursts (churn);
  - pins a host buffer for one copy with cuda.pinned (cuMemHostRegister_v2) and
    unpins it, and adds a stream callback (cuStreamAddCallback);
and marks the step with vramtrace.step(). Long-lived: one to_device array, a
pinned_array (cuMemHostAlloc) and a mapped_array (cuMemHostAlloc DEVICEMAP +
cuMemHostGetDevicePointer_v2). Once, a hand-written PTX kernel goes through Numba's
linker and module loader and is launched (a no-op on the simulated device). When the
driver supports legacy IPC, one device array is exported and a second process
(numba_import.py) opens its handle and exits without closing it. SUMMARY.json gets what the checker needs: line numbers, byte counts, pids and
whether IPC was available.
"""
import json
import os
import subprocess
import sys

import numpy as np
from numba import cuda
from numba.core import config
from numba.cuda.cudadrv import driver as nbdriver, drvapi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import vramtrace  # noqa: E402

KiB, MiB = 1024, 1024 * 1024
LEAK_BYTES = 768 * KiB          # below 1 MiB: placed at 256-byte granularity, exact
TEMP_BYTES = 2 * MiB
TEMPS = 4
PARAM_BYTES = 8 * MiB
PINNED_BYTES = 2 * MiB
MAPPED_BYTES = 1 * MiB
REGISTER_BYTES = 64 * KiB
IPC_BYTES = 4 * MiB


def bind_pre_cuda13_names():
    """Numba 0.56 binds the first of NAME_v2, NAME it finds. CUDA 13 drivers export
    cuCtxGetDevice_v2(CUdevice *, CUcontext) and cuCtxSynchronize_v2(CUcontext), new
    functions with one more argument than the prototypes Numba has for those names;
    bind the CUDA 4.0 exports those prototypes describe instead (a real CUDA 13
    driver needs the same)."""
    d = nbdriver.driver
    d.ensure_initialized()
    for name in ("cuCtxGetDevice", "cuCtxSynchronize"):
        fn = getattr(d.lib, name)
        proto = drvapi.API_PROTOTYPES[name]
        fn.restype, fn.argtypes = proto[0], list(proto[1:])
        d._ctypes_wrap_fn(name, fn)


TOUCH_PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 touch_param_0)
{
  ret;
}
"""


def launch_trivial_kernel(arr, stream):
    """Numba's NVVM cannot compile here (CUDA 13's libnvvm takes NVVM IR 2.0, Numba
    0.56 writes 1.6), so a hand-written PTX kernel goes through Numba's own linker
    and module loader (cuLinkCreate_v2, cuLinkAddData_v2, cuLinkComplete,
    cuModuleLoadDataEx, cuModuleGetFunction, cuFuncGetAttribute) and is launched
    with cuLaunchKernel. Returns the function's attributes and the error code of
    looking up a name the module lacks."""
    import ctypes
    linker = nbdriver.Linker.new()
    linker.add_ptx(TOUCH_PTX, "touch.ptx")
    cubin, size = linker.complete()
    ctx = cuda.current_context()
    module = ctx.create_module_image(cubin)
    fn = module.get_function("touch")
    attrs = fn.read_func_attr_all()
    nbdriver.launch_kernel(fn.handle, 1, 1, 1, 32, 1, 1, 0, stream.handle,
                           [ctypes.c_void_p(arr.device_ctypes_pointer.value)])
    try:
        module.get_function("absent")
        missing = 0
    except nbdriver.CudaAPIError as e:
        missing = e.code
    module.unload()
    return {"maxthreads": attrs.maxthreads, "regs": attrs.regs, "missing_name": missing}


def import_in_child(handle):
    """Runs numba_import.py, which opens the handle in a second process and exits
    without closing it; returns that process's pid and the first byte it read."""
    import pickle
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "numba_import.py"), pickle.dumps(handle).hex()],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"numba_client: the importing process failed ({out.returncode}):\n{out.stderr}")
    sys.stdout.write(out.stdout)
    words = out.stdout.split()
    return int(words[1]), int(words[5])


def main():
    summary_path = sys.argv[1]
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 24
    bind_pre_cuda13_names()
    stream = cuda.stream()
    params = cuda.to_device(np.zeros(PARAM_BYTES // 4, dtype=np.float32))  # PARAM
    staging = cuda.pinned_array(PINNED_BYTES // 4, dtype=np.float32)  # PINNED
    flags = cuda.mapped_array(MAPPED_BYTES, dtype=np.uint8)  # MAPPED
    flags[:] = 1
    host = np.ones(REGISTER_BYTES // 4, dtype=np.float32)

    ipc = {"available": False}
    shared = cuda.device_array(IPC_BYTES, dtype=np.uint8)  # SHARED
    nbdriver.device_memset(shared, 7, IPC_BYTES)
    try:
        handle = shared.get_ipc_handle()
    except nbdriver.CudaAPIError as e:
        ipc["error"] = str(e)
        print(f"IPC not available on this driver: {e}")
    else:
        child, first = import_in_child(handle)
        ipc = {"available": True, "child": child, "bytes": IPC_BYTES, "child_first_byte": first}

    kernel = launch_trivial_kernel(params, stream)
    history = []
    done = []                   # (step, status) of each stream callback (cuStreamAddCallback)
    for step in range(steps):
        history.append(cuda.device_array(LEAK_BYTES, dtype=np.uint8))  # LEAK
        for _ in range(TEMPS):
            tmp = cuda.to_device(staging[: TEMP_BYTES // 4], stream=stream)  # TEMP
            tmp.copy_to_host(staging[: TEMP_BYTES // 4], stream=stream)
            del tmp
        with cuda.pinned(host):  # REGISTER
            params[: host.size].copy_to_host(host, stream=stream)
        stream.add_callback(lambda s, status, arg: done.append((step, status)), None)
        stream.synchronize()
        vramtrace.step()

    src = open(os.path.abspath(__file__)).read().splitlines()
    line = {tag: next(i + 1 for i, l in enumerate(src) if l.rstrip().endswith("# " + tag))
            for tag in ("LEAK", "TEMP", "PARAM", "PINNED", "MAPPED", "REGISTER", "SHARED")}
    with open(summary_path, "w") as f:
        json.dump({"pid": os.getpid(), "file": os.path.abspath(__file__), "steps": steps,
                   "lines": line,
                   "leak_bytes_per_step": LEAK_BYTES, "temp_bytes": TEMP_BYTES,
                   "temps_per_step": TEMPS, "param_bytes": PARAM_BYTES,
                   "pinned_bytes": PINNED_BYTES, "mapped_bytes": MAPPED_BYTES,
                   "register_bytes": REGISTER_BYTES, "ipc": ipc, "kernel": kernel,
                   "callbacks": [[n, str(st)] for n, st in done],
                   "deallocs_count": config.CUDA_DEALLOCS_COUNT,
                   "mem_free_at_end": cuda.current_context().get_memory_info().free,
                   "pending_deallocs": len(cuda.current_context().deallocations._cons)}, f)
    print(f"numba_client: {steps} steps, {len(history)} arrays kept")


if __name__ == "__main__":
    main()
