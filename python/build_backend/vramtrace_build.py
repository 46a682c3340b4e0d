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


def _dist_info_files(project, tag="py3-none-any"):
    """{path inside .dist-info: bytes} without RECORD."""
    return {
        "METADATA": _metadata(project).encode("utf-8"),
        "WHEEL": ("Wheel-Version: 1.0\nGenerator: vramtrace_build\n"
                  "Root-Is-Purelib: true\nTag: %s\n" % tag).encode("utf-8"),
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


def _write_wheel(wheel_directory, project, contents):
    """Writes a wheel with `contents` ([(archive path, bytes)]) plus dist-info."""
    name, version = _dist_name(project), project["version"]
    dist_info = "%s-%s.dist-info" % (name, version)
    files = list(contents) + [(dist_info + "/" + k, v)
                              for k, v in sorted(_dist_info_files(project).items())]
    record = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (path, digest.decode("ascii"), len(data)))
    record.append("%s/RECORD,," % dist_info)
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    basename = "%s-%s-py3-none-any.whl" % (name, version)
    os.makedirs(wheel_directory, exist_ok=True)
    when = _zip_time()
    with zipfile.ZipFile(os.path.join(wheel_directory, basename), "w",
                         compression=zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=when)
            info.external_attr = 0o644 << 16
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
    project = _project()
    dist_info = "%s-%s.dist-info" % (_dist_name(project), project["version"])
    path = os.path.join(metadata_directory, dist_info)
    os.makedirs(path, exist_ok=True)
    for name, data in _dist_info_files(project).items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    contents = []
    for arc, disk in _package_files():
        with open(disk, "rb") as f:
            contents.append((arc, f.read()))
    return _write_wheel(wheel_directory, _project(), contents)


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
