"""Shared fixtures of the Python package's tests.

The package under test is imported from the checkout (python/). Integration tests
run programs and inner pytest sessions in subprocesses under
``LD_PRELOAD=<build>/lib/libvramtrace.so`` with ``LD_LIBRARY_PATH=<build>/simcuda``
(the simulated CUDA 13 runtime). The build folder comes from VRAMTRACE_BUILD_DIR
(set by CTest, then a missing artifact fails the test; default: <checkout>/build,
where a missing artifact skips it).

Sanitizer builds (tests/reliability/sanitize_run.sh): VT_SANITIZER_PRELOAD names the
sanitizer runtime that libvramtrace.so and the simulated CUDA libraries need; a
subprocess (an uninstrumented python) gets it first in LD_PRELOAD, because dlopen
cannot load it later ("cannot allocate memory in static TLS block"). Unset: no change.
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(REPO, "python")
if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)


def build_dir():
    return os.path.abspath(os.environ.get("VRAMTRACE_BUILD_DIR") or os.path.join(REPO, "build"))


@pytest.fixture(scope="session")
def build():
    """Paths of the built artifacts; skips when they are missing."""
    b = build_dir()
    lib = os.path.join(b, "lib", "libvramtrace.so")
    sim = os.path.join(b, "simcuda")
    for p in (lib, os.path.join(sim, "libcudart.so.13")):
        if not os.path.exists(p):
            if os.environ.get("VRAMTRACE_BUILD_DIR"):   # CTest: the build must be there
                pytest.fail("not built: %s" % p)
            pytest.skip("not built: %s (set VRAMTRACE_BUILD_DIR)" % p)
    return {"dir": b, "lib": lib, "simcuda": sim}


def preload(*libs):
    """LD_PRELOAD value for libs, led by $VT_SANITIZER_PRELOAD when that is set."""
    san = os.environ.get("VT_SANITIZER_PRELOAD")
    return ":".join(([san] if san else []) + list(libs))


def base_env(tmp_path):
    """An environment without any inherited tracer or Python settings (LD_PRELOAD:
    only the sanitizer runtime of a sanitizer build, see the top of this file) but
    VRAMTRACE_COMPRESS (CTest's plain streams, vt_plain_streams)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VRAMTRACE_", "LD_PRELOAD", "PYTEST_", "PYTHON")) or k == "VRAMTRACE_COMPRESS"}
    if preload():
        env["LD_PRELOAD"] = preload()
    env["PYTHONPATH"] = PYDIR
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["VRAMTRACE_OUTPUT"] = str(tmp_path / "vt-out")
    return env


@pytest.fixture
def traced_env(build, tmp_path):
    """Environment of a process run under the tracer on the simulated device."""
    env = base_env(tmp_path)
    env["LD_PRELOAD"] = preload(build["lib"])
    env["LD_LIBRARY_PATH"] = build["simcuda"]
    return env


@pytest.fixture
def plain_env(build, tmp_path):
    """Environment of a process on the simulated device without the tracer."""
    env = base_env(tmp_path)
    env["LD_LIBRARY_PATH"] = build["simcuda"]
    return env


# A helper module for inner test files: device allocations through ctypes on the
# CUDA runtime (the simulated one under LD_LIBRARY_PATH).
CUDA_HELPER = '''
import ctypes
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20

def alloc(nbytes):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), nbytes)
    assert err == 0, "cudaMalloc failed: %d" % err
    return p

def free(p):
    assert cudart.cudaFree(p) == 0
'''


class InnerRun:
    """Outcome of an inner pytest session: returncode, output, and per test name
    (outcome, text) with outcome one of passed/failed/skipped/error."""

    def __init__(self, proc, xml_path):
        self.returncode = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.tests = {}
        if os.path.exists(xml_path):
            for case in ET.parse(xml_path).getroot().iter("testcase"):
                outcome, text = "passed", ""
                for child in case:
                    if child.tag in ("failure", "error", "skipped"):
                        outcome = {"failure": "failed"}.get(child.tag, child.tag)
                        text = (child.get("message") or "") + "\n" + (child.text or "")
                        break
                self.tests[case.get("name")] = (outcome, text)

    def outcome(self, name):
        assert name in self.tests, "no test %s in the inner run:\n%s" % (name, self.output)
        return self.tests[name][0]

    def text(self, name):
        return self.tests[name][1]


def run_inner(tmp_path, env, files, args=(), plugin=True, timeout=60):
    """Writes `files` ({name: source}) and cudahelper.py into tmp_path/inner, runs
    pytest there with `env`, returns an InnerRun."""
    inner = tmp_path / "inner"
    inner.mkdir(exist_ok=True)
    (inner / "cudahelper.py").write_text(CUDA_HELPER)
    for name, src in files.items():
        (inner / name).write_text(src)
    xml = tmp_path / ("junit-%d.xml" % len(list(tmp_path.glob("junit-*.xml"))))
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
           "--junitxml", str(xml), "-o", "junit_family=xunit1"]
    if plugin:
        cmd += ["-p", "vramtrace.pytest_plugin"]
    cmd += list(args)
    proc = subprocess.run(cmd, cwd=str(inner), env=env, capture_output=True, text=True,
                          timeout=timeout)
    return InnerRun(proc, str(xml))
