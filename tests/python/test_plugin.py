"""The pytest plugin, end to end: inner pytest sessions run in subprocesses under
libvramtrace.so on the simulated device, with test files that allocate through
ctypes on libcudart.so.13; their outcomes and messages are read from JUnit XML."""
import json

from conftest import run_inner

MARKERS = r'''
import pytest
from cudahelper import alloc, free, MiB

kept = []
cache = {}
counts = {"fixture": 0, "body": 0}


@pytest.fixture
def counted():
    counts["fixture"] += 1
    return counts


@pytest.mark.vram_limit_leaks("1MiB")
def test_leaky():
    kept.append(alloc(3 * MiB))


@pytest.mark.vram_limit_leaks("1MiB")
def test_clean():
    free(alloc(8 * MiB))


@pytest.mark.vram_limit_leaks("1MiB")
def test_warmup_fills_a_cache():
    if "x" not in cache:
        cache["x"] = alloc(16 * MiB)


@pytest.mark.vram_limit_leaks(size="1MiB")
def test_small_leak_under_the_limit():
    kept.append(alloc(512 * 1024))


@pytest.mark.vram_limit_leaks("1MiB")
def test_two_sites_each_under_the_limit():
    kept.append(alloc(768 * 1024))                   # one call stack
    kept.extend(map(alloc, [768 * 1024]))            # another (through map's C frames)


@pytest.mark.vram_limit_leaks("1MiB")
def test_fixture_set_up_once_body_run_twice(counted):
    counted["body"] += 1


def test_counts_after_the_marked_test():
    assert counts == {"fixture": 1, "body": 2}


@pytest.mark.vram_limit_leaks("1MiB")
def test_body_fails_on_its_own():
    assert 1 + 1 == 3, "the body's own failure"


@pytest.mark.vram_limit_leaks("12 parsecs")
def test_bad_size():
    pass


@pytest.mark.vram_limit_peak("4MiB")
def test_peak_over():
    free(alloc(6 * MiB))


@pytest.mark.vram_limit_peak("4MiB")
def test_peak_under():
    free(alloc(2 * MiB))


@pytest.mark.vram_limit_peak("1MiB")
def test_peak_below_an_earlier_higher_peak():
    free(alloc(3 * MiB))


@pytest.mark.vram_limit_peak("1.5GiB")
@pytest.mark.vram_limit_leaks("64MiB")
def test_both_markers_pass():
    free(alloc(32 * MiB))


def test_unmarked_leaks_are_not_checked():
    kept.append(alloc(5 * MiB))
'''


def test_markers_under_the_tracer(tmp_path, traced_env):
    r = run_inner(tmp_path, traced_env, {"test_markers.py": MARKERS})
    MiB = 1 << 20
    assert "vramtrace: libvramtrace.so active" in r.output

    assert r.outcome("test_leaky") == "failed"
    msg = r.text("test_leaky")
    assert "vram_limit_leaks('1MiB'): 1 site(s) kept more than 1 MiB (1048576 bytes) live" in msg
    assert "3 MiB (%d bytes) in 1 allocation(s) still live" % (3 * MiB) in msg
    assert "kind device, GPU 0" in msg
    assert "ffi_call (libffi.so" in msg              # the site's frames are named
    assert "frames in the Python interpreter" in msg
    assert "snapshots: " in msg and "vt-out" in msg
    stream = msg.split("snapshots: ")[1].split()[0]
    with open(stream) as f:
        if '"py":[' in f.read():
            # A preload that records Python frames: the site names the test's line.
            assert "test_leaky (%s:" % (tmp_path / "inner" / "test_markers.py") in msg

    assert r.outcome("test_clean") == "passed"
    assert r.outcome("test_warmup_fills_a_cache") == "passed"
    assert r.outcome("test_small_leak_under_the_limit") == "passed"
    assert r.outcome("test_two_sites_each_under_the_limit") == "passed"
    assert r.outcome("test_fixture_set_up_once_body_run_twice") == "passed"
    assert r.outcome("test_counts_after_the_marked_test") == "passed"

    assert r.outcome("test_body_fails_on_its_own") == "failed"
    assert "the body's own failure" in r.text("test_body_fails_on_its_own")
    assert "kept more than" not in r.text("test_body_fails_on_its_own")

    assert r.outcome("test_bad_size") == "error"           # at setup: a usage error
    assert "vram_limit_leaks: not a size: '12 parsecs'" in r.text("test_bad_size")

    assert r.outcome("test_peak_over") == "failed"
    msg = r.text("test_peak_over")
    assert "vram_limit_peak('4MiB'): GPU memory rose 6 MiB (%d bytes)" % (6 * MiB) in msg
    assert "over the limit of 4 MiB (4194304 bytes)" in msg
    assert "sites that rose the most" in msg and "ffi_call" in msg

    assert r.outcome("test_peak_under") == "passed"
    # The process peak (6 MiB above) hides this test's 3 MiB; the per-site interval
    # peaks of the snapshots still measure it exactly.
    assert r.outcome("test_peak_below_an_earlier_higher_peak") == "failed"
    assert "GPU memory rose 3 MiB (%d bytes)" % (3 * MiB) in \
        r.text("test_peak_below_an_earlier_higher_peak")

    assert r.outcome("test_both_markers_pass") == "passed"
    assert r.outcome("test_unmarked_leaks_are_not_checked") == "passed"
    assert r.returncode == 1


def test_two_sites_over_the_limit_are_both_named(tmp_path, traced_env):
    src = MARKERS.split("@pytest.mark")[0] + r'''
@pytest.mark.vram_limit_leaks("512KiB")
def test_two_sites():
    kept.append(alloc(768 * 1024))
    kept.extend(map(alloc, [600 * 1024]))
'''
    r = run_inner(tmp_path, traced_env, {"test_sites.py": src})
    msg = r.text("test_two_sites")
    assert r.outcome("test_two_sites") == "failed"
    assert "2 site(s) kept more than 512 KiB" in msg
    assert "site 1: 768 KiB (786432 bytes)" in msg
    assert "site 2: 600 KiB (614400 bytes)" in msg
    assert "1.3 MiB (1400832 bytes) in total" in msg


def test_fallback_to_totals_without_the_stream(tmp_path, traced_env):
    """When the snapshot stream cannot be found, leaks come from the scope's total,
    and the message says so."""
    conftest = ("import vramtrace.measure as m\n"
                "m.find_own_stream = lambda *a, **k: None\n")
    src = MARKERS.split("@pytest.mark")[0] + r'''
@pytest.mark.vram_limit_leaks("1MiB")
def test_leaky_totals():
    kept.append(alloc(2 * MiB))


@pytest.mark.vram_limit_leaks("1MiB")
def test_clean_totals():
    free(alloc(4 * MiB))
'''
    r = run_inner(tmp_path, traced_env, {"test_fb.py": src, "conftest.py": conftest})
    assert r.outcome("test_clean_totals") == "passed"
    assert r.outcome("test_leaky_totals") == "failed"
    msg = r.text("test_leaky_totals")
    assert "2 MiB (2097152 bytes) allocated by the test" in msg
    assert "total of all sites (vramtrace_scope_leaked_bytes)" in msg
    assert "snapshot file was not found" in msg


def test_markers_skip_without_the_tracer(tmp_path, plain_env):
    r = run_inner(tmp_path, plain_env, {"test_markers.py": MARKERS})
    assert "libvramtrace.so is not in this process" in r.output
    for name in ("test_leaky", "test_clean", "test_peak_over", "test_both_markers_pass"):
        assert r.outcome(name) == "skipped", name
    reason = r.text("test_both_markers_pass")
    assert "vram_limit_leaks and vram_limit_peak: libvramtrace.so is not in this process" \
        in reason and "LD_PRELOAD" in reason
    assert r.outcome("test_unmarked_leaks_are_not_checked") == "passed"
    assert r.outcome("test_bad_size") == "error"        # a bad marker is still an error


INCREASE = r'''
import os
from cudahelper import alloc, free, MiB


def test_grows():
    free(alloc(int(os.environ["PEAK_MIB"]) * MiB))


def test_steady():
    free(alloc(1 * MiB))
'''


def test_fail_on_increase_against_the_last_passing_run(tmp_path, traced_env):
    baseline = tmp_path / "inner" / ".vramtrace-pytest.json"
    MiB = 1 << 20

    def run(peak_mib, *extra):
        env = dict(traced_env, PEAK_MIB=str(peak_mib))
        return run_inner(tmp_path, env, {"test_inc.py": INCREASE},
                         args=("--vram-fail-on-increase",) + extra)

    def stored():
        return json.loads(baseline.read_text())["tests"]

    r = run(2)
    assert r.outcome("test_grows") == "passed" and r.outcome("test_steady") == "passed"
    assert "2 test(s) measured; baseline: %s" % baseline in r.output
    data = json.loads(baseline.read_text())
    assert data["format"] == "vramtrace-pytest" and data["version"] == 1
    assert stored()["test_inc.py::test_grows"]["peak_bytes"] == 2 * MiB
    assert stored()["test_inc.py::test_grows"]["leaked_bytes"] == 0

    r = run(5)
    assert r.outcome("test_grows") == "failed" and r.outcome("test_steady") == "passed"
    msg = r.text("test_grows")
    assert "--vram-fail-on-increase: the test's GPU memory peak rose from 2 MiB (%d bytes)" \
        % (2 * MiB) in msg
    assert "to 5 MiB (%d bytes), +3 MiB" % (5 * MiB) in msg
    assert stored()["test_inc.py::test_grows"]["peak_bytes"] == 2 * MiB  # failing: kept

    r = run(5, "--vram-increase-tolerance", "4MiB")
    assert r.outcome("test_grows") == "passed"
    assert stored()["test_inc.py::test_grows"]["peak_bytes"] == 5 * MiB

    r = run(3)
    assert r.outcome("test_grows") == "passed"
    assert stored()["test_inc.py::test_grows"]["peak_bytes"] == 3 * MiB


def test_fail_on_increase_refuses_a_broken_baseline(tmp_path, traced_env):
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / ".vramtrace-pytest.json").write_text("{not json")
    r = run_inner(tmp_path, traced_env, {"test_inc.py": INCREASE},
                  args=("--vram-fail-on-increase",))
    assert r.returncode == 4  # usage error
    assert ".vramtrace-pytest.json: cannot read" in r.output
    assert "delete it to start a new baseline" in r.output


def test_fail_on_increase_without_the_tracer_says_so(tmp_path, plain_env):
    r = run_inner(tmp_path, dict(plain_env, PEAK_MIB="1"), {"test_inc.py": INCREASE},
                  args=("--vram-fail-on-increase",))
    assert r.returncode == 0
    assert "--vram-fail-on-increase did nothing: libvramtrace.so is not in this process" \
        in r.output
    assert not (tmp_path / "inner" / ".vramtrace-pytest.json").exists()
