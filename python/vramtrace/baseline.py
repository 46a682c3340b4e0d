"""The pytest plugin's record of the last passing run: ``.vramtrace-pytest.json``.

Format (JSON, one object; sizes in bytes):

    {"format": "vramtrace-pytest", "version": 1,
     "tests": {"<node id>": {"peak_bytes": N,        # upper bound of the peak
                             "peak_bytes_min": N,    # lower bound (== when exact)
                             "leaked_bytes": N or null,
                             "time": "2024-01-01T12:00:00Z"}}}

Each entry is the measurement of that test's latest *passing* run; entries of tests
that did not run (or did not pass) are kept as they were. A peak counts as an
increase only when it is certain: the new lower bound exceeds the old upper bound
plus the tolerance (both are the same number when the peak was exact).

The file is rewritten whole under a temporary name and renamed over the old one,
so an interrupted run leaves either the old or the new file. Not thread-safe
(one writer: the pytest controller process).
"""
import json
import os
import tempfile
import time

FORMAT = "vramtrace-pytest"
VERSION = 1


class BaselineError(Exception):
    """The file exists but is not a readable baseline; the message names it."""


def load(path):
    """The tests mapping stored at `path`; {} when the file does not exist."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise BaselineError("%s: cannot read: %s" % (path, e))
    if (not isinstance(data, dict) or data.get("format") != FORMAT
            or data.get("version") != VERSION or not isinstance(data.get("tests"), dict)):
        raise BaselineError("%s: not a %s version %d file" % (path, FORMAT, VERSION))
    return data["tests"]


def entry(peak_low, peak_high, leaked_bytes):
    """One test's entry."""
    return {"peak_bytes": int(peak_high), "peak_bytes_min": int(peak_low),
            "leaked_bytes": None if leaked_bytes is None else int(leaked_bytes),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def increase(old, peak_low, tolerance=0):
    """Bytes by which a new peak (lower bound `peak_low`) certainly exceeds the old
    entry's peak plus `tolerance`, or 0 when it does not (or `old` is None)."""
    if not old:
        return 0
    over = int(peak_low) - (int(old.get("peak_bytes", 0)) + int(tolerance))
    return over if over > 0 else 0


def save(path, tests):
    """Writes the mapping `tests` to `path` atomically (temporary file + rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".vramtrace-pytest.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": FORMAT, "version": VERSION, "tests": tests}, f,
                      indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
