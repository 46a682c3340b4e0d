"""Installing the package from the checkout, offline: `pip install ./python` into a
fresh virtual environment (build isolation on, no index), then the pytest11 entry
point loads the plugin without -p. Also the in-tree build backend's archives."""
import base64
import csv
import hashlib
import importlib.util
import io
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import PYDIR, base_env

sys.path.insert(0, os.path.join(PYDIR, "build_backend"))
import vramtrace_build  # noqa: E402


def _has_venv_pip():
    return importlib.util.find_spec("ensurepip") is not None


def test_wheel_is_complete_and_its_record_matches(tmp_path):
    name = vramtrace_build.build_wheel(str(tmp_path))
    assert name == "vramtrace-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        for mod in ("__init__", "_native", "_torch", "sizes", "snapshots", "measure",
                    "baseline", "pytest_plugin"):
            assert "vramtrace/%s.py" % mod in names
        assert not any("__pycache__" in n for n in names)
        di = "vramtrace-0.1.0.dist-info/"
        meta = z.read(di + "METADATA").decode()
        assert "Name: vramtrace\n" in meta and "Version: 0.1.0\n" in meta
        assert "Requires-Python: >=3.8" in meta and "Requires-Dist" not in meta
        eps = z.read(di + "entry_points.txt").decode()
        assert "[pytest11]\nvramtrace.pytest_plugin = vramtrace.pytest_plugin" in eps
        rows = list(csv.reader(io.StringIO(z.read(di + "RECORD").decode())))
        assert {r[0] for r in rows} == names
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                assert digest == "" and size == ""
                continue
            data = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + want.decode() and int(size) == len(data), path


def test_sdist_builds_itself_again(tmp_path):
    name = vramtrace_build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as t:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        t.extractall(tmp_path / "src", **safe)
        members = t.getnames()
    assert "vramtrace-0.1.0/PKG-INFO" in members
    assert "vramtrace-0.1.0/build_backend/vramtrace_build.py" in members
    # the unpacked sdist builds the same wheel contents
    root = tmp_path / "src" / "vramtrace-0.1.0"
    code = ("import sys; sys.path.insert(0, 'build_backend'); import vramtrace_build as b;"
            "print(b.build_wheel(sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w")], cwd=str(root),
                         capture_output=True, text=True, check=True).stdout.strip()
    again = tmp_path / "w" / out
    here = tmp_path / "w2" / vramtrace_build.build_wheel(str(tmp_path / "w2"))
    with zipfile.ZipFile(again) as a, zipfile.ZipFile(here) as b:
        assert a.namelist() == b.namelist()
        assert all(a.read(n) == b.read(n) for n in a.namelist())


def test_fallback_toml_reader_agrees_with_tomllib():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(PYDIR, "pyproject.toml"), "rb") as f:
        raw = f.read()
    assert vramtrace_build._parse_toml_subset(raw.decode()) == tomllib.loads(raw.decode())


@pytest.mark.skipif(not _has_venv_pip(), reason="venv/ensurepip not available")
def test_pip_install_offline_then_pytest_finds_the_plugin(tmp_path, traced_env):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, capture_output=True)
    py = str(venv / "bin" / "python")
    env = base_env(tmp_path)
    env.pop("PYTHONPATH")
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    proc = subprocess.run([py, "-m", "pip", "install", PYDIR], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    loc = subprocess.run([py, "-c", "import vramtrace; print(vramtrace.__file__)"], env=env,
                         cwd=str(tmp_path), capture_output=True, text=True, check=True)
    assert loc.stdout.startswith(str(venv))
    # The installed entry point loads the plugin: no -p, no PYTHONPATH.
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_x.py").write_text(
        "import pytest\n\n@pytest.mark.vram_limit_peak('1MiB')\ndef test_x():\n    pass\n")
    run_env = dict(traced_env)
    run_env.pop("PYTHONPATH")
    proc = subprocess.run([py, "-m", "pytest", "-p", "no:cacheprovider", "-rs"],
                          cwd=str(tmp_path / "t"), env=run_env, capture_output=True,
                          text=True, timeout=60)
    assert "vramtrace: libvramtrace.so active" in proc.stdout, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    # -p with the module name works on top of the entry point (no double registration).
    proc = subprocess.run([py, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                           "vramtrace.pytest_plugin"], cwd=str(tmp_path / "t"), env=run_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
