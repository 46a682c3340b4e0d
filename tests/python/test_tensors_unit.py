"""vramtrace._tensors: the PyTorch option rewrite and the environment switches
(the same rules as `vramtrace run --tensors`, analyzer/cli/vt_tensors.c)."""
import sys

from vramtrace import _tensors


def test_torch_conf_adds_backend_first_and_keeps_options():
    new, ignored = _tensors.torch_conf("expandable_segments:True,roundup_power2_divisions:[256:1,512:2]")
    assert new == "backend:cudaMallocAsync,expandable_segments:True,roundup_power2_divisions:[256:1,512:2]"
    assert ignored == ["expandable_segments", "roundup_power2_divisions"]


def test_torch_conf_replaces_backend_in_place():
    new, ignored = _tensors.torch_conf("max_split_size_mb:128,backend:native,pinned_use_cuda_host_register:True")
    assert new == "max_split_size_mb:128,backend:cudaMallocAsync,pinned_use_cuda_host_register:True"
    assert ignored == ["max_split_size_mb"]


def test_torch_conf_empty():
    assert _tensors.torch_conf(None) == ("backend:cudaMallocAsync", [])
    assert _tensors.torch_conf(",,") == ("backend:cudaMallocAsync", [])


def test_env_switches_both_names_and_replacements():
    want, warn = _tensors.env_switches({"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.6",
                                        "TF_GPU_ALLOCATOR": "cuda_malloc"})
    assert want == {"PYTORCH_ALLOC_CONF": "backend:cudaMallocAsync,garbage_collection_threshold:0.6",
                    "TF_GPU_ALLOCATOR": "cuda_malloc_async", "XLA_PYTHON_CLIENT_ALLOCATOR": "platform",
                    "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert any("garbage_collection_threshold" in w for w in warn)
    assert any("TF_GPU_ALLOCATOR was 'cuda_malloc'" in w for w in warn)
    want, warn = _tensors.env_switches({"PYTORCH_CUDA_ALLOC_CONF": "backend:native"})
    assert want["PYTORCH_CUDA_ALLOC_CONF"] == "backend:cudaMallocAsync"
    assert warn == ["PYTORCH_CUDA_ALLOC_CONF had backend:native; replaced by backend:cudaMallocAsync"]
    want, warn = _tensors.env_switches({})
    assert want["PYTORCH_CUDA_ALLOC_CONF"] == "backend:cudaMallocAsync" and warn == []


def test_tensors_switches_an_imported_cupy(monkeypatch):
    calls = []

    class Cuda:
        @staticmethod
        def set_allocator(a):
            calls.append(("set_allocator", a))

        @staticmethod
        def set_pinned_memory_allocator(a):
            calls.append(("pinned", a))

    class Cupy:
        cuda = Cuda

    monkeypatch.setitem(sys.modules, "cupy", Cupy)
    for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "TF_GPU_ALLOCATOR", "XLA_PYTHON_CLIENT_ALLOCATOR",
              "XLA_PYTHON_CLIENT_PREALLOCATE", "VRAMTRACE_TENSORS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    r = _tensors.tensors()
    assert calls == [("set_allocator", None), ("pinned", None)]
    assert "cupy" in r["switched"]
    assert r["env"]["PYTORCH_CUDA_ALLOC_CONF"] == "backend:cudaMallocAsync"
    import os
    assert os.environ["VRAMTRACE_TENSORS"] == "1" and os.environ["TF_GPU_ALLOCATOR"] == "cuda_malloc_async"
