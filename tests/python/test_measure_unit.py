"""vramtrace.measure.Window against a stand-in library (no snapshot stream): leak totals
from the scope, and the three ways a peak is known."""
import pytest

from test_api_unit import FakeLib
from vramtrace import _native, measure


@pytest.fixture
def lib(monkeypatch):
    def install(**kw):
        fake = FakeLib(**kw)
        fake.peak = 0

        def set_live(v):
            fake.live = v
            fake.peak = max(fake.peak, v)
        fake.set_live = set_live
        fns = dict(fake.fns, vramtrace_peak_bytes=lambda d: fake.peak)
        monkeypatch.setattr(_native, "_cache", fns)
        monkeypatch.setattr(measure, "find_own_stream", lambda *a, **k: None)
        return fake
    return install


def test_exact_peak_from_the_interval_primitive(lib):
    fake = lib(with_peak_interval=True)
    fake.set_live(10 << 20)
    fake.set_live(1 << 20)             # the process peak (10 MiB) hides the block's
    w = measure.Window("t")
    w.begin()
    fake.set_live(4 << 20)
    fake.set_live(2 << 20)
    r = w.end()
    assert (r.peak_low, r.peak_high, r.peak_exact) == (3 << 20, 3 << 20, True)
    assert r.peak_method == "vramtrace_peak_interval_bytes"
    assert r.leaked_bytes == 1 << 20 and r.sites is None
    assert any("snapshot file was not found" in n for n in r.notes)


def test_exact_peak_when_the_process_peak_rises(lib):
    fake = lib()
    fake.set_live(1 << 20)
    w = measure.Window("t")
    w.begin()
    fake.set_live(7 << 20)
    fake.set_live(1 << 20)
    r = w.end()
    assert (r.peak_low, r.peak_high) == (6 << 20, 6 << 20)
    assert r.peak_method == "the process peak rose during the test"
    assert r.leaked_bytes == 0


def test_bounded_peak_otherwise(lib):
    fake = lib()
    fake.set_live(9 << 20)
    fake.set_live(1 << 20)
    w = measure.Window("t")
    w.begin()
    fake.set_live(3 << 20)
    fake.set_live(2 << 20)
    r = w.end()
    assert (r.peak_low, r.peak_high, r.peak_exact) == (1 << 20, 8 << 20, False)
    assert any("between 1048576 and 8388608 bytes" in n for n in r.notes)


def test_no_library_measures_nothing(monkeypatch):
    monkeypatch.setattr(_native, "_cache", {k: None for k in _native._SIGNATURES})
    w = measure.Window("t")
    w.begin()
    r = w.end()
    assert (r.leaked_bytes, r.peak_low, r.peak_high) == (0, 0, 0)
