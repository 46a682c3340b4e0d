"""cli_common.py - what the command-level analyzer tests (test_cli_*.py, check_ux.py,
check_stumbles.py) share: the
failure list, running the command, the golden sets' paths, a small valid stream, and
the one entry point each test file calls.

Each test_cli_*.py file is run as `test_cli_X.py MODE VRAMTRACE TESTDIR [EXTRA...]`
(one CTest per mode, tests/analyzer/CMakeLists.txt); main() runs that mode's function
with (VRAMTRACE, TESTDIR, *EXTRA), prints "MODE: ok" or "MODE: FAILED (N)" and returns
the exit status (0 passed, 1 a check failed, 2 a usage error).
"""
import json
import os
import re
import subprocess
import sys

FAILS = []


def check(cond, msg):
    """Records a failed check (printed at once); the mode goes on with the next one.
    Returns cond's truth."""
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg)
    return bool(cond)


def run(args, **kw):
    env = dict(os.environ, NO_COLOR="1")
    env.update(kw.pop("env", {}))
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=kw.pop("timeout", 60), **kw)


def run_long(args, **kw):
    """run() for commands that trace a program or build a page: 120 s unless told."""
    kw.setdefault("timeout", 120)
    return run(args, **kw)


def page_data(exe, folder, out):
    """The data object of the HTML report of folder, written to out (report --format html)."""
    subprocess.run([exe, "report", "--format", "html", "--force", "-o", out, folder], check=True)
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def golden(testdir, name):
    return os.path.join(testdir, "golden", name)


def report_json(exe, path):
    r = run([exe, "report", "--format", "json", path])
    return json.loads(r.stdout)


def mini_stream(header=None, module_path="/opt/app/app", snaps=None):
    """A small valid snapshot stream: header (updated with header), one module,
    one stack, and the given snapshot records (default: one step of 1 MiB)."""
    h = {"t": "header", "format": "vramtrace-snapshot", "version": 1, "pid": 7, "host": "h", "start_ns": 1}
    h.update(header or {})
    recs = [h, {"t": "module", "id": 1, "path": module_path, "build_id": "", "bias": 0},
            {"t": "stack", "id": 1, "frames": [[1, 4096, "train_step"]]}]
    if snaps is None:
        snaps = [{"t": "snapshot", "seq": 1, "trigger": "step", "step": 0, "step_marked": True,
                  "sites": [{"stack": 1, "kind": "device", "device": 0, "live_bytes": 1 << 20}]}]
    recs += snaps
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs)


def main(modes):
    """modes: MODE -> function(VRAMTRACE, TESTDIR, *EXTRA) of the file that calls this."""
    if len(sys.argv) < 4 or sys.argv[1] not in modes:
        print("usage: %s %s VRAMTRACE TESTDIR [EXTRA...]" % (os.path.basename(sys.argv[0]), "|".join(modes)),
              file=sys.stderr)
        return 2
    mode = sys.argv[1]
    modes[mode](*sys.argv[2:])
    print("%s: %s" % (mode, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0
