"""In-tree PEP 517 / PEP 660 build backend for the vramtrace Python package.

Design: the package is pure Python, so building it is writing a zip (the wheel,
PEP 427) and a tar (the sdist) with the standard library. Because this backend
needs nothing else (``requires = []`` in pyproject.toml), ``pip install ./python``
works with build isolation and without network access. Metadata comes from the
[project] table of pyproject.toml (PEP 621), read with ``tomllib`` (Python 3.11+) or,
on older Pythons, with the small reader below that understands the subset of TOML
that file uses (tables, strings, string arrays).

Hooks (PEP 517): build_wheel, build_sdist, get_requires_for_build_wheel,
get_requires_for_build_sdist, prepare_metadata_for_build_wheel; (PEP 660):
build_editable, get_requires_for_build_editable, prepare_metadata_for_build_editable.
Each returns the basename of what it wrote into the given directory. Archives are
reproducible: entries sorted, timestamps from SOURCE_DATE_EPOCH or 1980-01-01.

Platform wheel: with the config setting ``prefix=DIR`` (or $VRAMTRACE_WHEEL_PREFIX) the
wheel also carries DIR's bin/ and lib/ (the command, libvramtrace.so and the libraries
they need, prepared by scripts/build_wheel.py) as ``vramtrace/_prefix/``, keeps their
executable bits, gets the ``vramtrace`` console script (vramtrace.__main__) and the tag
``py3-none-PLAT`` with PLAT from the setting ``plat`` (or $VRAMTRACE_WHEEL_PLAT), e.g.
``manylinux_2_36_x86_64``. Without it the wheel is pure Python (py3-none-any).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "vramtrace"
_EPOCH_ZIP = (1980, 1, 1, 0, 0, 0)


# ---- pyproject.toml ----

def _parse_toml_subset(text):
    """Parses tables ([a.b]), and `key = value` with value a basic string, a
    (possibly multi-line) array of basic strings, true/false or an integer."""
    data, table = {}, None
    table = data
    lines = iter(text.splitlines())
    for line in lines:
        s = line.split("#", 1)[0].strip() if '"' not in line else line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("[") and not s.startswith("[["):
            table = data
            for part in s.strip("[]").split("."):
                table = table.setdefault(part.strip().strip('"'), {})
            continue
        key, _, value = s.partition("=")
        key, value = key.strip().strip('"'), value.strip()
        if value.startswith("[") and not value.rstrip().endswith("]"):
            for more in lines:
                value += " " + more.strip()
                if more.strip().endswith("]"):
                    break
        table[key] = _toml_value(value)
    return data


def _toml_value(value):
    value = value.strip()
    if value.startswith('"'):
        m = re.match(r'"((?:[^"\\]|\\.)*)"', value)
        return bytes(m.group(1), "utf-8").decode("unicode_escape")
    if value.startswith("["):
        return [bytes(x, "utf-8").decode("unicode_escape")
                for x in re.findall(r'"((?:[^"\\]|\\.)*)"', value)]
    if value in ("true", "false"):
        return value == "true"
    return int(value)


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib
        data = tomllib.loads(raw.decode("utf-8"))
    except ImportError:
        data = _parse_toml_subset(raw.decode("utf-8"))
    return data["project"]


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    """METADATA / PKG-INFO text (core metadata 2.1)."""
    lines = ["Metadata-Version: 2.1",
             "Name: %s" % project["name"],
             "Version: %s" % project["version"]]
    if "description" in project:
        lines.append("Summary: %s" % project["description"])
    if "requires-python" in project:
        lines.append("Requires-Python: %s" % project["requires-python"])
    if project.get("keywords"):
        lines.append("Keywords: %s" % ",".join(project["keywords"]))
    for c in project.get("classifiers", []):
        lines.append("Classifier: %s" % c)
    body = ""
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _entry_points(project):
    out = []
    for group, eps in sorted(project.get("entry-points", {}).items()):
        out.append("[%s]" % group)
        out += ["%s = %s" % (k, v) for k, v in sorted(eps.items())]
        out.append("")
    for group, key in (("console_scripts", "scripts"), ("gui_scripts", "gui-scripts")):
        if project.get(key):
            out.append("[%s]" % group)
            out += ["%s = %s" % (k, v) for k, v in sorted(project[key].items())]
            out.append("")
    return "\n".join(out)


def _native(config_settings):
    """(prefix folder, platform tag) of a platform wheel, or (None, None) for the
    pure one. ValueError when a prefix is given without its tag or lacks bin/vramtrace."""
    cs = config_settings or {}
    prefix = cs.get("prefix") or os.environ.get("VRAMTRACE_WHEEL_PREFIX") or None
    plat = cs.get("plat") or os.environ.get("VRAMTRACE_WHEEL_PLAT") or None
    if not prefix:
        return None, None
    if not plat or not re.match(r"^[a-z0-9_]+$", plat):
        raise ValueError("vramtrace_build: a platform wheel needs its tag (plat=manylinux_2_NN_x86_64)")
    if not os.access(os.path.join(prefix, "bin", PACKAGE), os.X_OK):
        raise ValueError("vramtrace_build: %s has no bin/%s" % (prefix, PACKAGE))
    return os.path.abspath(prefix), plat


def _with_console_script(project, plat):
    """The project table, with the `vramtrace` console script for a platform wheel."""
    if not plat:
        return project
    project = dict(project)
    project["scripts"] = dict(project.get("scripts", {}), **{PACKAGE: PACKAGE + ".__main__:main"})
    return project


def _prefix_files(prefix):
    """[(archive path, disk path, mode)] of the prefix's bin/ and lib/, sorted.
    Symbolic links are refused (a wheel cannot hold them)."""
    out = []
    for sub in ("bin", "lib"):
        base = os.path.join(prefix, sub)
        for folder, dirs, files in os.walk(base):
            dirs.sort()
            for name in sorted(files):
                disk = os.path.join(folder, name)
                if os.path.islink(disk):
                    raise ValueError("vramtrace_build: %s is a symbolic link" % disk)
                arc = "%s/_prefix/%s" % (PACKAGE, os.path.relpath(disk, prefix).replace(os.sep, "/"))
                out.append((arc, disk, 0o755 if os.access(disk, os.X_OK) else 0o644))
    return sorted(out)


def _dist_info_files(project, tag="py3-none-any"):
    """{path inside .dist-info: bytes} without RECORD."""
    return {
        "METADATA": _metadata(project).encode("utf-8"),
        "WHEEL": ("Wheel-Version: 1.0\nGenerator: vramtrace_build\n"
                  "Root-Is-Purelib: %s\nTag: %s\n"
                  % ("true" if tag == "py3-none-any" else "false", tag)).encode("utf-8"),
        "entry_points.txt": _entry_points(project).encode("utf-8"),
        "top_level.txt": (PACKAGE + "\n").encode("utf-8"),
    }


def _package_files():
    """[(path in the archive, path on disk)] of the package's sources, sorted."""
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".typed")):
                disk = os.path.join(folder, name)
                out.append((os.path.relpath(disk, ROOT).replace(os.sep, "/"), disk))
    return sorted(out)


def _zip_time():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return max(_EPOCH_ZIP, time.gmtime(int(epoch))[:6])
    return _EPOCH_ZIP


def _write_wheel(wheel_directory, project, contents, tag="py3-none-any"):
    """Writes a wheel with `contents` ([(archive path, bytes[, mode])]) plus dist-info."""
    name, version = _dist_name(project), project["version"]
    dist_info = "%s-%s.dist-info" % (name, version)
    files = list(contents) + [(dist_info + "/" + k, v)
                              for k, v in sorted(_dist_info_files(project, tag).items())]
    record = []
    for path, data, *_ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (path, digest.decode("ascii"), len(data)))
    record.append("%s/RECORD,," % dist_info)
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    basename = "%s-%s-%s.whl" % (name, version, tag)
    os.makedirs(wheel_directory, exist_ok=True)
    when = _zip_time()
    with zipfile.ZipFile(os.path.join(wheel_directory, basename), "w",
                         compression=zipfile.ZIP_DEFLATED) as z:
        for path, data, *mode in files:
            info = zipfile.ZipInfo(path, date_time=when)
            # a regular file's mode: pip keeps the executable bits (bin/vramtrace)
            info.external_attr = (0o100000 | (mode[0] if mode else 0o644)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return basename


# ---- PEP 517 hooks ----

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    prefix, plat = _native(config_settings)
    project = _with_console_script(_project(), plat)
    dist_info = "%s-%s.dist-info" % (_dist_name(project), project["version"])
    path = os.path.join(metadata_directory, dist_info)
    os.makedirs(path, exist_ok=True)
    for name, data in _dist_info_files(project, "py3-none-" + plat if plat else "py3-none-any").items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    return dist_info


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, None)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    prefix, plat = _native(config_settings)
    contents = []
    for arc, disk in _package_files():
        with open(disk, "rb") as f:
            contents.append((arc, f.read()))
    if prefix:
        for arc, disk, mode in _prefix_files(prefix):
            with open(disk, "rb") as f:
                contents.append((arc, f.read(), mode))
    return _write_wheel(wheel_directory, _with_console_script(_project(), plat), contents,
                        "py3-none-" + plat if plat else "py3-none-any")


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose only content is a .pth file that puts the checkout's python/
    folder on sys.path (PEP 660), so edits take effect without reinstalling."""
    pth = ("%s\n" % ROOT).encode("utf-8")
    return _write_wheel(wheel_directory, _project(), [("_%s_editable.pth" % PACKAGE, pth)])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = "%s-%s" % (_dist_name(project), project["version"])
    members = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
               ("build_backend/vramtrace_build.py", os.path.abspath(__file__))]
    if project.get("readme"):
        members.append((project["readme"], os.path.join(ROOT, project["readme"])))
    members += _package_files()
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH") or 315532800)
    os.makedirs(sdist_directory, exist_ok=True)
    basename = base + ".tar.gz"

    def add(tar, arc, data):
        info = tarfile.TarInfo("%s/%s" % (base, arc))
        info.size, info.mtime, info.mode = len(data), mtime, 0o644
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, basename), "w:gz",
                      format=tarfile.PAX_FORMAT) as tar:
        add(tar, "PKG-INFO", _metadata(project).encode("utf-8"))
        for arc, disk in sorted(members):
            with open(disk, "rb") as f:
                add(tar, arc, f.read())
    return basename
