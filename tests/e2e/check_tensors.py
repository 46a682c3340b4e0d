#!/usr/bin/env python3
"""check_tensors.py - `vramtrace run --tensors`: the frameworks' switches.

1. `vramtrace run --tensors -- env`: the switched variables are printed (stderr) and
   reach the program (env's output): PYTORCH_CUDA_ALLOC_CONF gains
   backend:cudaMallocAsync while the user's other options stay (a bracketed option
   with commas included), a warning names the options the asynchronous backend
   ignores, a user's PYTORCH_ALLOC_CONF is switched too, TF/JAX variables are set,
   a user's different TF_GPU_ALLOCATOR is replaced with a warning.
2. A Python program under `run --tensors` that imports stand-ins for cupy and rmm
   (modules of those names with the functions the switch calls): their allocators
   are switched at import, and a user's own sitecustomize still runs.
3. The report of a traced program under --tensors lists the allocator settings in
   its header (text and JSON).

Usage: check_tensors.py VRAMTRACE WORKDIR TRAINING_LOOP
"""
import json
import os
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def main():
    vt, work, loop = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "TF_GPU_ALLOCATOR", "XLA_PYTHON_CLIENT_ALLOCATOR",
              "XLA_PYTHON_CLIENT_PREALLOCATE", "VRAMTRACE_TENSORS", "PYTHONPATH"):
        env.pop(k, None)

    # 1. env
    e1 = dict(env, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,roundup_power2_divisions:[256:1,512:2],"
              "pinned_use_cuda_host_register:True", PYTORCH_ALLOC_CONF="backend:native,max_split_size_mb:128",
              TF_GPU_ALLOCATOR="cuda_malloc")
    r = subprocess.run([vt, "run", "-o", os.path.join(work, "env"), "--tensors", "--", "env"], env=e1,
                       capture_output=True, text=True)
    got = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    check(got.get("PYTORCH_CUDA_ALLOC_CONF") == "backend:cudaMallocAsync,expandable_segments:True,"
          "roundup_power2_divisions:[256:1,512:2],pinned_use_cuda_host_register:True",
          "PYTORCH_CUDA_ALLOC_CONF in the program: %r" % got.get("PYTORCH_CUDA_ALLOC_CONF"))
    check(got.get("PYTORCH_ALLOC_CONF") == "backend:cudaMallocAsync,max_split_size_mb:128",
          "PYTORCH_ALLOC_CONF in the program: %r" % got.get("PYTORCH_ALLOC_CONF"))
    check(got.get("TF_GPU_ALLOCATOR") == "cuda_malloc_async", "TF_GPU_ALLOCATOR: %r" % got.get("TF_GPU_ALLOCATOR"))
    check(got.get("XLA_PYTHON_CLIENT_ALLOCATOR") == "platform" and got.get("XLA_PYTHON_CLIENT_PREALLOCATE") == "false",
          "JAX variables: %r %r" % (got.get("XLA_PYTHON_CLIENT_ALLOCATOR"), got.get("XLA_PYTHON_CLIENT_PREALLOCATE")))
    check(got.get("VRAMTRACE_TENSORS") == "1", "VRAMTRACE_TENSORS not 1")
    err = r.stderr
    check("vramtrace: --tensors: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True" in err,
          "the switched PYTORCH_CUDA_ALLOC_CONF is not printed: %r" % err)
    check("ignores expandable_segments, roundup_power2_divisions (PYTORCH_CUDA_ALLOC_CONF)" in err,
          "no warning naming expandable_segments and roundup_power2_divisions")
    check("ignores max_split_size_mb (PYTORCH_ALLOC_CONF)" in err, "no warning naming max_split_size_mb")
    check("PYTORCH_ALLOC_CONF had backend:native; replaced by backend:cudaMallocAsync" in err,
          "no warning about the user's backend:native being replaced")
    check("TF_GPU_ALLOCATOR was \"cuda_malloc\"; replaced" in err, "no warning about the replaced TF_GPU_ALLOCATOR")
    check("unknown setting" not in err, "the preload warned about a setting: %r" % err)
    e0 = dict(env)
    r = subprocess.run([vt, "run", "-o", os.path.join(work, "env0"), "--", "env"], env=e0, capture_output=True, text=True)
    check("PYTORCH_CUDA_ALLOC_CONF" not in r.stdout and "--tensors" not in r.stderr, "without --tensors something was switched")

    # 2. cupy and rmm stand-ins, and a user's sitecustomize
    fake = os.path.join(work, "fake")
    os.makedirs(os.path.join(fake, "cupy"))
    os.makedirs(os.path.join(fake, "rmm"))
    with open(os.path.join(fake, "cupy", "__init__.py"), "w") as f:
        f.write("from . import cuda\n")
    with open(os.path.join(fake, "cupy", "cuda.py"), "w") as f:
        f.write("calls = []\ndef set_allocator(a):\n    calls.append(('set_allocator', a))\n"
                "def set_pinned_memory_allocator(a):\n    calls.append(('set_pinned_memory_allocator', a))\n")
    with open(os.path.join(fake, "rmm", "__init__.py"), "w") as f:
        f.write("from . import mr\n")
    with open(os.path.join(fake, "rmm", "mr.py"), "w") as f:
        f.write("calls = []\nclass CudaMemoryResource:\n    pass\n"
                "def set_current_device_resource(r):\n    calls.append(type(r).__name__)\n")
    with open(os.path.join(fake, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n")
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write("import os, cupy, rmm\n"
                "print('cupy', cupy.cuda.calls)\nprint('rmm', rmm.mr.calls)\n"
                "print('user', os.environ.get('USER_SITECUSTOMIZE_RAN'))\n")
    e2 = dict(env, PYTHONPATH=fake)
    r = subprocess.run([vt, "run", "-o", os.path.join(work, "py"), "--tensors", "--", sys.executable, prog], env=e2,
                       capture_output=True, text=True)
    out = r.stdout
    check(r.returncode == 0, "python under --tensors exited %d: %s" % (r.returncode, r.stderr[-600:]))
    check("cupy [('set_allocator', None), ('set_pinned_memory_allocator', None)]" in out,
          "cupy's allocators not switched at import: %r" % out)
    check("rmm ['CudaMemoryResource']" in out, "rmm's resource not switched at import: %r" % out)
    check("user 1" in out, "the user's own sitecustomize did not run: %r" % out)
    r = subprocess.run([vt, "run", "-o", os.path.join(work, "py0"), "--", sys.executable, prog], env=e2,
                       capture_output=True, text=True)
    check("cupy []" in r.stdout and "rmm []" in r.stdout and "user 1" in r.stdout,
          "without --tensors cupy/rmm were touched or the user's sitecustomize did not run: %r" % r.stdout)

    # 3. the report's header
    out_dir = os.path.join(work, "loop")
    r = subprocess.run([vt, "run", "-o", out_dir, "--tensors", "--", loop, "6"], env=dict(env, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:64"),
                       capture_output=True, text=True)
    if check(r.returncode == 0, "training_loop under --tensors exited %d: %s" % (r.returncode, r.stderr[-600:])):
        t = subprocess.run([vt, "report", out_dir], capture_output=True, text=True, env=dict(env, NO_COLOR="1"))
        check("   allocators: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,max_split_size_mb:64, TF_GPU_ALLOCATOR=cuda_malloc_async, "
              "XLA_PYTHON_CLIENT_ALLOCATOR=platform, XLA_PYTHON_CLIENT_PREALLOCATE=false, VRAMTRACE_TENSORS=1 "
              "(switched to one CUDA allocation per tensor: --tensors)" in t.stdout,
              "text report lacks the allocators line: %r" % t.stdout[:700])
        j = subprocess.run([vt, "report", "--format", "json", out_dir], capture_output=True, text=True)
        p = json.loads(j.stdout)["processes"][0]
        check(p.get("tensors") is True and "TF_GPU_ALLOCATOR=cuda_malloc_async" in (p.get("allocator_env") or ""),
              "json: tensors %r allocator_env %r" % (p.get("tensors"), p.get("allocator_env")))
    for f_ in failures:
        print("FAIL:", f_)
    if not failures:
        print("ok: --tensors switches, warnings, cupy/rmm at import, report header")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
