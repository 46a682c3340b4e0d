"""The Python API (vramtrace/__init__.py) against stand-ins for the C entry points, and
the torch statistics it attaches to steps, with a fake torch in sys.modules."""
import subprocess
import sys
import types

import pytest

import vramtrace
from vramtrace import _native, _torch


class FakeLib:
    """Records calls of the C API the way the library would see them."""

    def __init__(self, with_annotate=True, with_peak_interval=False):
        self.calls = []
        self._live = 0
        self.interval_top = 0
        self.scope_start = 0
        fns = {
            "vramtrace_step": lambda: self.calls.append(("step",)),
            "vramtrace_snapshot": self._snapshot,
            "vramtrace_live_bytes": lambda d: self.live,
            "vramtrace_peak_bytes": lambda d: 123,
            "vramtrace_scope_begin": self._begin,
            "vramtrace_scope_leaked_bytes": lambda: self.live - self.scope_start,
            "vramtrace_annotate": (lambda k, v: self.calls.append(("annotate", k, v)) or 0)
            if with_annotate else None,
            "vramtrace_peak_interval_bytes": self._interval if with_peak_interval else None,
            "vramtrace_enabled": None,
        }
        self.fns = fns

    @property
    def live(self):
        return self._live

    @live.setter
    def live(self, v):          # what the library's allocation hooks would do
        self._live = v
        self.interval_top = max(self.interval_top, v)

    def _interval(self):
        top, self.interval_top = self.interval_top, self._live
        return top

    def _snapshot(self, label):
        self.calls.append(("snapshot", label))
        return 0

    def _begin(self):
        self.calls.append(("scope_begin",))
        self.scope_start = self.live


@pytest.fixture
def fake_lib(monkeypatch):
    def install(**kw):
        lib = FakeLib(**kw)
        monkeypatch.setattr(_native, "_cache", dict(lib.fns))
        return lib
    yield install
    _torch.reset()


def fake_torch(devices=2, available=True, initialized=True, fail=False):
    calls = []

    def memory_stats(device):
        calls.append(device)
        if fail:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return {"allocated_bytes.all.current": 1000 * (device + 1),
                "reserved_bytes.all.current": 4096 * (device + 1),
                "inactive_split_bytes.all.current": 512 * (device + 1),
                "active_bytes.all.current": 7}

    cuda = types.SimpleNamespace(is_available=lambda: available,
                                 is_initialized=lambda: initialized,
                                 device_count=lambda: devices, memory_stats=memory_stats)
    mod = types.ModuleType("torch")
    mod.cuda = cuda
    return mod, calls


def test_without_the_library_everything_is_a_noop():
    # This pytest process is not preloaded: the real lookups find nothing.
    _native.forget()
    assert not _native.has("vramtrace_step")
    assert vramtrace.enabled() is False
    assert vramtrace.step() is None
    assert vramtrace.snapshot("x") == 0
    assert vramtrace.live_bytes() == 0 and vramtrace.peak_bytes(0) == 0
    assert vramtrace.annotate("k", 1.0) == 0
    with vramtrace.scope() as s:
        assert s.leaked_bytes is None
    assert s.leaked_bytes == 0 and s.peak_bytes is None


def test_step_attaches_torch_statistics_before_the_step(fake_lib, monkeypatch):
    lib = fake_lib()
    torch, seen = fake_torch(devices=2)
    monkeypatch.setitem(sys.modules, "torch", torch)
    vramtrace.step()
    assert lib.calls[-1] == ("step",)
    ann = {c[1].decode(): c[2] for c in lib.calls if c[0] == "annotate"}
    assert ann == {
        "torch.cuda:0.memory_allocated_bytes": 1000.0,
        "torch.cuda:0.memory_reserved_bytes": 4096.0,
        "torch.cuda:0.inactive_split_bytes": 512.0,
        "torch.cuda:1.memory_allocated_bytes": 2000.0,
        "torch.cuda:1.memory_reserved_bytes": 8192.0,
        "torch.cuda:1.inactive_split_bytes": 1024.0,
    }
    assert seen == [0, 1]


@pytest.mark.parametrize("kw", [dict(available=False), dict(initialized=False),
                                dict(devices=0)])
def test_step_leaves_an_unusable_cuda_alone(fake_lib, monkeypatch, kw):
    lib = fake_lib()
    torch, seen = fake_torch(**kw)
    monkeypatch.setitem(sys.modules, "torch", torch)
    vramtrace.step()
    assert lib.calls == [("step",)] and seen == []


def test_step_never_imports_torch(fake_lib, monkeypatch):
    lib = fake_lib()
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    vramtrace.step()
    assert "torch" not in sys.modules
    assert lib.calls == [("step",)]


def test_step_skips_torch_when_the_library_cannot_annotate(fake_lib, monkeypatch):
    lib = fake_lib(with_annotate=False)
    torch, seen = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    vramtrace.step()
    assert lib.calls == [("step",)] and seen == []   # torch not even asked


def test_a_failing_torch_warns_once_and_steps_go_on(fake_lib, monkeypatch):
    lib = fake_lib()
    torch, seen = fake_torch(fail=True)
    monkeypatch.setitem(sys.modules, "torch", torch)
    with pytest.warns(RuntimeWarning, match="illegal memory access"):
        vramtrace.step()
    vramtrace.step()
    assert lib.calls == [("step",), ("step",)]
    assert seen == [0]


def test_snapshot_label_and_scope(fake_lib):
    lib = fake_lib(with_peak_interval=True)
    assert vramtrace.snapshot("epoch 3 done") == 0
    assert vramtrace.snapshot() == 0
    assert lib.calls[:2] == [("snapshot", b"epoch 3 done"), ("snapshot", None)]
    lib.live = 9000                   # an earlier high that the scope must not see
    lib.live = 100
    with vramtrace.scope() as s:
        lib.live = 5000
        lib.live = 4196
        assert s.leaked_bytes_now() == 4096
    assert (s.leaked_bytes, s.peak_bytes) == (4096, 5000)


def test_peak_watches_nest_and_overlap(fake_lib):
    from vramtrace.peaks import PeakWatch
    lib = fake_lib(with_peak_interval=True)
    lib.live = 50
    outer = PeakWatch().start()
    lib.live = 300
    lib.live = 100
    inner = PeakWatch().start()
    lib.live = 200
    lib.live = 120
    assert inner.stop() == 200         # the outer's earlier 300 is not the inner's
    third = PeakWatch().start()
    lib.live = 250
    assert outer.stop() == 300
    lib.live = 400
    lib.live = 10
    assert third.stop() == 400
    with pytest.raises(RuntimeError):
        third.stop()


def test_peak_watch_without_the_primitive(fake_lib):
    from vramtrace.peaks import PeakWatch
    fake_lib(with_peak_interval=False)
    w = PeakWatch().start()
    assert w.stop() is None


def test_scopes_do_not_nest(fake_lib):
    fake_lib()
    with vramtrace.scope():
        with pytest.raises(RuntimeError, match="cannot nest"):
            with vramtrace.scope():
                pass
    with vramtrace.scope() as s:   # usable again afterwards
        pass
    assert s.leaked_bytes == 0


def test_scope_ends_on_exception(fake_lib):
    lib = fake_lib()
    with pytest.raises(KeyError):
        with vramtrace.scope() as s:
            lib.live += 8
            raise KeyError("x")
    assert s.leaked_bytes == 8
    with vramtrace.scope():
        pass


def test_no_op_in_a_fresh_interpreter():
    """Importing and calling everything in a process without the library."""
    code = ("import vramtrace as v, sys;"
            "r=[v.enabled(), v.step(), v.snapshot('x'), v.live_bytes(), v.peak_bytes()];"
            "s=v.scope(); sc=s.__enter__(); s.__exit__(None,None,None); r.append(sc.leaked_bytes);"
            "r.append('torch' in sys.modules); print(r)")
    from conftest import PYDIR
    out = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": PYDIR},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[False, None, 0, 0, 0, 0, False]"
