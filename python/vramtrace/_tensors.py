"""vramtrace._tensors: each framework's own switch to one CUDA allocation per tensor.

Caching allocators hide tensors from the CUDA layer; these documented settings make
them call the CUDA API per tensor or buffer, so libvramtrace.so sees (and sites) each
one. The same switches as ``vramtrace run --tensors`` (analyzer/cli/vt_tensors.c):

- PyTorch: ``PYTORCH_ALLOC_CONF`` / ``PYTORCH_CUDA_ALLOC_CONF`` gain
  ``backend:cudaMallocAsync`` (other options kept; those the asynchronous backend
  ignores are named in a warning). Read by PyTorch when its CUDA allocator starts:
  too late once ``torch.cuda`` has allocated.
- TensorFlow: ``TF_GPU_ALLOCATOR=cuda_malloc_async``; JAX:
  ``XLA_PYTHON_CLIENT_ALLOCATOR=platform``, ``XLA_PYTHON_CLIENT_PREALLOCATE=false``
  (read when the framework starts).
- CuPy: ``cupy.cuda.set_allocator(None)`` and ``set_pinned_memory_allocator(None)``
  (``cudaMalloc``/``cudaHostAlloc`` per array); RMM:
  ``rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())`` (``cudaMalloc``
  per buffer). Done at once when the module is imported, else when it is imported
  (an import hook on ``sys.meta_path``).

Each switched allocator is also recorded as an annotation ``vramtrace.tensors.<name>``
= 1 (shown in the report) when the tracer is in the process.
"""
import importlib.abc
import importlib.util
import os
import sys
import threading

TORCH_IGNORED = ("expandable_segments", "max_split_size_mb", "roundup_power2_divisions",
                 "garbage_collection_threshold")
_lock = threading.Lock()
_switched = []        # names of allocators switched in this process, in order


def torch_conf(old):
    """PyTorch allocator options ``old`` (str or None) with the backend set to
    cudaMallocAsync. Returns (new, ignored): options split at commas outside
    brackets and kept in order, a ``backend:`` option replaced in place or
    ``backend:cudaMallocAsync`` put first; ignored: the kept options the
    asynchronous backend does not apply, in order."""
    new, ignored, _ = _torch_conf(old)
    return new, ignored


def _torch_conf(old):
    """torch_conf's (new, ignored) and the user's own other backends replaced
    (["backend:native"])."""
    parts, depth, cur = [], 0, ""
    for ch in old or "":
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        if ch == "[":
            depth += 1
        elif ch == "]" and depth > 0:
            depth -= 1
        cur += ch
    if cur:
        parts.append(cur)
    out, ignored, replaced, have = [], [], [], False
    for p in parts:
        key = p.split(":", 1)[0].strip()
        if not key:
            continue
        if key == "backend":
            have = True
            out.append("backend:cudaMallocAsync")
            val = p.split(":", 1)[1].strip() if ":" in p else ""
            if val != "cudaMallocAsync":
                replaced.append("backend:" + val)
            continue
        out.append(p)
        if key in TORCH_IGNORED:
            ignored.append(key)
    if not have:
        out.insert(0, "backend:cudaMallocAsync")
    return ",".join(out), ignored, replaced


def env_switches(environ):
    """The environment variables to set: ({name: value}, [warning, ...]) for a
    mapping like os.environ (not changed)."""
    want, warn = {}, []
    names = [n for n in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF") if n in environ]
    for name in names or ["PYTORCH_CUDA_ALLOC_CONF"]:
        new, ignored, replaced = _torch_conf(environ.get(name))
        want[name] = new
        for r in replaced:
            warn.append("%s had %s; replaced by backend:cudaMallocAsync" % (name, r))
        if ignored:
            warn.append("PyTorch's cudaMallocAsync backend ignores %s (%s)" % (", ".join(ignored), name))
    for name, value in (("TF_GPU_ALLOCATOR", "cuda_malloc_async"), ("XLA_PYTHON_CLIENT_ALLOCATOR", "platform"),
                        ("XLA_PYTHON_CLIENT_PREALLOCATE", "false")):
        if environ.get(name, value) != value:
            warn.append("%s was %r; replaced" % (name, environ[name]))
        want[name] = value
    return want, warn


def _note(name):
    with _lock:
        if name in _switched:
            return
        _switched.append(name)
    try:
        from . import annotate
        annotate("vramtrace.tensors." + name, 1)
    except Exception:   # the annotation is a courtesy; the switch is done
        pass


def switch_cupy(cupy):
    """CuPy: one cudaMalloc per array, one cudaHostAlloc per pinned buffer."""
    cupy.cuda.set_allocator(None)
    cupy.cuda.set_pinned_memory_allocator(None)
    _note("cupy")


def switch_rmm(rmm):
    """RMM: the plain CUDA resource (one cudaMalloc per buffer) on the current device."""
    import rmm.mr
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    _note("rmm")


_SWITCH = {"cupy": switch_cupy, "rmm": switch_rmm}


class _Loader(importlib.abc.Loader):
    """Runs the real loader, then the module's switch."""

    def __init__(self, real, name):
        self.real, self.name = real, name

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        try:
            _SWITCH[self.name](module)
        except Exception as e:   # never break the user's import
            sys.stderr.write("vramtrace: --tensors: %s's allocator not switched: %s\n" % (self.name, e))


class _Finder(importlib.abc.MetaPathFinder):
    """Finds cupy and rmm through the other finders and wraps their loaders."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _SWITCH:
            return None
        for f in sys.meta_path:
            if f is self or not hasattr(f, "find_spec"):
                continue
            spec = f.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _Loader(spec.loader, fullname)
                return spec
            if spec is not None:
                return spec
        return None


_finder = _Finder()


def install_hooks():
    """Switches CuPy and RMM now if imported, else when they are imported."""
    for name, fn in _SWITCH.items():
        mod = sys.modules.get(name)
        if mod is not None:
            try:
                fn(mod)
            except Exception as e:
                sys.stderr.write("vramtrace: tensors: %s's allocator not switched: %s\n" % (name, e))
    with _lock:
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def tensors():
    """Switches every framework it can to one CUDA allocation per tensor (see the
    module's text). Call it at the top of the program, before the frameworks start
    their allocators. Returns {"env": {name: value}, "warnings": [...],
    "switched": [...]}: the variables set, what could not be honoured (a framework
    already started, options the new backend ignores), and the in-process allocators
    switched so far."""
    want, warn = env_switches(os.environ)
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            started = torch.cuda.is_available() and torch.cuda.is_initialized() and torch.cuda.memory_allocated() > 0
        except Exception:
            started = False
        if started:
            warn.append("torch has already allocated CUDA memory: its allocator setting is read only at start "
                        "(use `vramtrace run --tensors`)")
    for name, value in want.items():
        os.environ[name] = value
    os.environ["VRAMTRACE_TENSORS"] = "1"
    install_hooks()
    for w in warn:
        sys.stderr.write("vramtrace: tensors: warning: %s\n" % w)
    with _lock:
        switched = list(_switched)
    return {"env": want, "warnings": warn, "switched": switched}
