"""PyTorch caching-allocator statistics for each step.

Design: PyTorch's caching allocator keeps freed blocks reserved, so the driver-level
view of libvramtrace.so (what cudaMalloc handed out) and the tensors the program
holds differ. At each :func:`vramtrace.step`, when the program has *already*
imported torch (``sys.modules``; this module never imports it) and CUDA is available
and initialised, the allocator's own numbers are attached to the step through the
preload's ``vramtrace_annotate(key, value)`` so that the report can show
fragmentation (reserved - allocated) next to what the driver saw.

Per device ``d`` (``range(torch.cuda.device_count())``), from
``torch.cuda.memory_stats(d)`` (the dict that ``torch.cuda.memory_allocated(d)`` and
``torch.cuda.memory_reserved(d)`` read, see PyTorch's "CUDA semantics: memory
management" and ``torch.cuda.memory_stats`` docs), bytes:

    torch.cuda:<d>.memory_allocated_bytes   <- "allocated_bytes.all.current"
    torch.cuda:<d>.memory_reserved_bytes    <- "reserved_bytes.all.current"
    torch.cuda:<d>.inactive_split_bytes     <- "inactive_split_bytes.all.current"

Errors: a step never fails because of torch. The first exception raised by torch
turns the collection off for the rest of the process, with one RuntimeWarning.
Thread safety: call from the thread that calls step() (torch's own rules apply).
"""
import sys
import warnings

# (annotation key suffix, torch.cuda.memory_stats key)
STAT_KEYS = (
    ("memory_allocated_bytes", "allocated_bytes.all.current"),
    ("memory_reserved_bytes", "reserved_bytes.all.current"),
    ("inactive_split_bytes", "inactive_split_bytes.all.current"),
)

_broken = False


def annotation_key(device, suffix):
    """The annotation key of one statistic of CUDA device `device`."""
    return "torch.cuda:%d.%s" % (device, suffix)


def _cuda_module():
    """torch.cuda when torch is imported and CUDA is usable now, else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available():
        return None
    is_init = getattr(cuda, "is_initialized", None)
    if is_init is not None and not is_init():
        return None  # never create a CUDA context on the program's behalf
    return cuda


def collect():
    """Returns [(key, value_bytes), ...] for the current step, or [] when torch is not
    imported, CUDA is not available/initialised, or collection was turned off."""
    global _broken
    if _broken:
        return []
    try:
        cuda = _cuda_module()
        if cuda is None:
            return []
        out = []
        for device in range(cuda.device_count()):
            stats = cuda.memory_stats(device)
            for suffix, stat in STAT_KEYS:
                out.append((annotation_key(device, suffix), int(stats.get(stat, 0))))
        return out
    except Exception as e:  # torch's errors must not break the training loop
        _broken = True
        warnings.warn("vramtrace: reading torch.cuda memory statistics failed (%r); "
                      "torch statistics are no longer attached to steps" % (e,),
                      RuntimeWarning, stacklevel=3)
        return []


def reset():
    """Turns collection back on after a failure (for tests)."""
    global _broken
    _broken = False
