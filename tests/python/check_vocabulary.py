#!/usr/bin/env python3
"""check_vocabulary.py ROOT — the Python helper (python/vramtrace/snapshots.py) follows
the one home of the snapshot vocabulary (common/vt_format.h) and of the frame rule
(common/vt_frames.h): format name and version, kinds, the site columns of versions 2
and 3, the trimmed modules and the CUDA function prefixes. Exit 0 when every list
matches, 1 with one line per difference, 2 when a list cannot be read."""
import importlib.util
import os
import re
import sys


def xlist(text, macro, path):
    """The X(...) rows of `#define macro(X)` as lists of their (stripped) arguments."""
    m = re.search(r"^#define\s+" + macro + r"\(X\)(.*?)(?<!\\)\n", text, re.S | re.M)
    if not m:
        raise ValueError("%s: no #define %s(X)" % (path, macro))
    body = re.sub(r"/\*.*?\*/", " ", m.group(1).replace("\\\n", " "), flags=re.S)
    return [[a.strip() for a in row.split(",")] for row in re.findall(r"X\(([^()]*)\)", body)]


def unquote(s):
    return s[1:-1] if s.startswith('"') else s


def main(argv):
    root = os.path.abspath(argv[1])
    fmt_path = os.path.join(root, "common", "vt_format.h")
    frames_path = os.path.join(root, "common", "vt_frames.h")
    try:
        with open(fmt_path) as fh:
            fmt = fh.read()
        with open(frames_path) as fh:
            frames = fh.read()
        kinds = tuple(unquote(r[1]) for r in xlist(fmt, "VT_KINDS", fmt_path))
        flags = tuple(unquote(r[2]) for r in xlist(fmt, "VT_SITE_FLAGS", fmt_path))
        site_rows = xlist(fmt, "VT_SITE_COLUMNS", fmt_path)
        site_cols = tuple(unquote(r[1]) for r in site_rows)
        enum_of = {"VT_SITE_" + r[0]: unquote(r[1]) for r in site_rows}
        order = re.search(r"#define VT_SITE3_ORDER\s*\{(.*?)\}", fmt.replace("\\\n", " "), re.S)
        v3 = ("site",) + tuple(enum_of[e.strip()] for e in order.group(1).split(","))
        name = re.search(r'#define VT_FORMAT_NAME\s+"([^"]+)"', fmt).group(1)
        version = int(re.search(r"#define VT_FORMAT_VERSION\s+([0-9]+)", fmt).group(1))
        trimmed = tuple(unquote(r[0]) for r in xlist(frames, "VT_FRAMES_TRIMMED_MODULES", frames_path))
        cuda_fns = tuple((unquote(r[0]), r[1] == "1") for r in xlist(frames, "VT_FRAMES_CUDA_FUNCTIONS", frames_path))
    except (OSError, ValueError, AttributeError, KeyError) as ex:
        print("check_vocabulary.py: %s" % ex, file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(
        "snapshots", os.path.join(root, "python", "vramtrace", "snapshots.py"))
    py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(py)
    bad = []
    for what, c, p in (("format name", name, py.FORMAT_NAME),
                       ("format version", version, py.FORMAT_VERSION),
                       ("kinds", kinds, tuple(py.KINDS)),
                       ("site flags", flags, tuple(py.SITE_FLAGS)),
                       ("site columns (version 2)", site_cols, tuple(py.SITE_COLUMNS)),
                       ("site columns (version 3)", v3, tuple(py.SITE_COLUMNS_V3)),
                       ("trimmed modules", trimmed, tuple(py.TRIMMED_MODULES)),
                       ("CUDA function prefixes", cuda_fns, tuple(py.CUDA_FUNCTIONS))):
        if c != p:
            bad.append("%s: common/ says %r, python/vramtrace/snapshots.py says %r" % (what, c, p))
    # the Python rule behaves as the C rule's lists say
    for prefix, upper in cuda_fns:
        if not py.is_cuda_function(prefix + "Malloc"):
            bad.append("is_cuda_function(%r) is false" % (prefix + "Malloc"))
        if upper and py.is_cuda_function(prefix + "x") and not any(
                (prefix + "x").startswith(p2) and not u2 for p2, u2 in cuda_fns):
            bad.append("is_cuda_function(%r) is true" % (prefix + "x"))
    for b in bad:
        print(b)
    if not bad:
        print("python/vramtrace/snapshots.py follows common/vt_format.h and common/vt_frames.h")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
