"""pytest plugin: GPU memory limits for tests, measured by libvramtrace.so.

Enabled by the ``pytest11`` entry point when the package is installed, or with
``-p vramtrace.pytest_plugin``. Run pytest under the tracer:

    LD_PRELOAD=/path/to/libvramtrace.so python3 -m pytest

Markers (SIZE: an int of bytes or a string such as "4096", "1MiB", "1.5GiB", "2MB"):

- ``@pytest.mark.vram_limit_leaks(SIZE)``: runs the test function once as a warm-up
  (filling caches, lazy initialisation), then again, measured; fails when any one
  site (allocation call stack, kind and device) keeps more than SIZE bytes live
  that were allocated during the measured run. Fixtures are set up once; both runs
  get the same fixture values.
- ``@pytest.mark.vram_limit_peak(SIZE)``: fails when live GPU memory rose more than
  SIZE above its level at the start of the test function (its peak).

Option ``--vram-fail-on-increase``: measures every test function; a passing test's
peak and leaked bytes are stored in ``<rootdir>/.vramtrace-pytest.json``
(``--vram-baseline PATH`` to move it), and a test fails when its peak exceeds the
one stored by its last passing run by more than ``--vram-increase-tolerance SIZE``
(default 0).

Without libvramtrace.so in the process, marked tests are skipped, with the reason,
and ``--vram-fail-on-increase`` does nothing but say so in the summary.
How peaks and per-site leaks are measured, and their limits: vramtrace.measure.
"""
import os

import pytest

from . import _native
from . import baseline as _baseline
from . import enabled as _enabled
from .measure import Window
from .sizes import describe, parse_size
from .snapshots import (collapse_interpreter, format_frame, format_python_frame,
                         module_name)

_LEAKS = "vram_limit_leaks"
_PEAK = "vram_limit_peak"
_STASH_PREFIX = "_vramtrace_"


def pytest_addoption(parser):
    group = parser.getgroup("vramtrace", "GPU memory limits (vramtrace)")
    group.addoption("--vram-fail-on-increase", action="store_true", default=False,
                    help="measure every test; fail a test whose GPU memory peak is higher "
                         "than in its last passing run (stored in .vramtrace-pytest.json)")
    group.addoption("--vram-baseline", metavar="PATH", default=None,
                    help="file of the last passing runs' measurements "
                         "(default: <rootdir>/.vramtrace-pytest.json)")
    group.addoption("--vram-increase-tolerance", metavar="SIZE", default="0",
                    help="peak increase allowed by --vram-fail-on-increase (default 0)")
    group.addoption("--vram-frames", metavar="N", type=int, default=12,
                    help="frames shown per site in failure messages (default 12)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", _LEAKS + "(size): after a warm-up run, fail when one allocation site "
        "keeps more than size bytes (4096, \"1MiB\", \"1.5GiB\", \"2MB\") live from the "
        "test; needs libvramtrace.so preloaded (skipped otherwise)")
    config.addinivalue_line(
        "markers", _PEAK + "(size): fail when GPU memory rises more than size bytes above "
        "its level at the test's start; needs libvramtrace.so preloaded (skipped otherwise)")
    config.pluginmanager.register(VramtracePlugin(config), "vramtrace-limits")


def _marker_size(item, name):
    """(size in bytes, text as written) of marker `name` on `item`, or None."""
    m = item.get_closest_marker(name)
    if m is None:
        return None
    if m.args:
        raw = m.args[0]
    elif "size" in m.kwargs:
        raw = m.kwargs["size"]
    else:
        raise ValueError("%s needs a size, e.g. @pytest.mark.%s(\"1MiB\")" % (name, name))
    try:
        return parse_size(raw), raw
    except ValueError as e:
        raise ValueError("%s: %s" % (name, e))


def _limit_text(name, raw):
    return "%s(%s)" % (name, repr(raw))


class VramtracePlugin:
    """Per-session state; registered by pytest_configure."""

    def __init__(self, config):
        self.config = config
        self.active = _enabled()
        self.fail_on_increase = config.getoption("--vram-fail-on-increase")
        self.frames = max(1, config.getoption("--vram-frames"))
        try:
            self.tolerance = parse_size(config.getoption("--vram-increase-tolerance"))
        except ValueError as e:
            raise pytest.UsageError("--vram-increase-tolerance: %s" % e)
        path = config.getoption("--vram-baseline")
        self.baseline_path = path or os.path.join(str(config.rootpath), ".vramtrace-pytest.json")
        self.baseline = {}
        if self.fail_on_increase:
            try:
                self.baseline = _baseline.load(self.baseline_path)
            except _baseline.BaselineError as e:
                raise pytest.UsageError("%s (delete it to start a new baseline)" % e)
        self.stream = None        # this process's snapshot stream, shared by all windows
        self.measured = {}        # nodeid -> Result of the latest measured call
        self.passed = {}          # nodeid -> Result, for tests that passed
        self.in_warmup = False
        self.warnings = []        # lines for the terminal summary

    # ---- reporting ----

    def pytest_report_header(self, config):
        if not self.active:
            return ["vramtrace: libvramtrace.so is not in this process (markers are skipped)"]
        return ["vramtrace: libvramtrace.so active%s" %
                ("" if _native.has("vramtrace_peak_interval_bytes")
                 else "; peaks from snapshots (no vramtrace_peak_interval_bytes)")]

    def pytest_terminal_summary(self, terminalreporter):
        lines = list(self.warnings)
        if self.fail_on_increase and not self.active:
            lines.append("--vram-fail-on-increase did nothing: libvramtrace.so is not in "
                         "this process (run pytest with LD_PRELOAD=.../libvramtrace.so)")
        elif self.fail_on_increase and self._is_controller():
            lines.append("%d test(s) measured; baseline: %s" % (len(self.passed),
                                                                 self.baseline_path))
        if lines:
            terminalreporter.write_sep("-", "vramtrace")
            for line in lines:
                terminalreporter.write_line(line)

    def _is_controller(self):
        return not hasattr(self.config, "workerinput")  # pytest-xdist workers have it

    # ---- test protocol ----

    def pytest_runtest_setup(self, item):
        try:
            leaks = _marker_size(item, _LEAKS)
            peak = _marker_size(item, _PEAK)
        except ValueError as e:
            pytest.fail(str(e), pytrace=False)
        if (leaks or peak) and not self.active:
            names = " and ".join(n for n, v in ((_LEAKS, leaks), (_PEAK, peak)) if v)
            pytest.skip("%s: libvramtrace.so is not in this process; run pytest with "
                        "LD_PRELOAD=/path/to/libvramtrace.so (or vramtrace run -- pytest)" % names)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        if self.in_warmup or not self.active:
            yield
            return
        leaks = _marker_size(pyfuncitem, _LEAKS)
        peak = _marker_size(pyfuncitem, _PEAK)
        if not (leaks or peak or self.fail_on_increase):
            yield
            return
        if leaks:
            # Warm-up: the whole pytest_pyfunc_call chain once, unmeasured. An
            # exception here fails the test as usual.
            self.in_warmup = True
            try:
                pyfuncitem.ihook.pytest_pyfunc_call(pyfuncitem=pyfuncitem)
            finally:
                self.in_warmup = False
        window = Window(pyfuncitem.nodeid, stream=self.stream)
        window.begin()
        outcome = yield
        result = window.end()
        self.stream = window.stream
        if outcome.excinfo is not None:
            return  # the test failed on its own; nothing to add
        self.measured[pyfuncitem.nodeid] = result
        problems = []
        if leaks:
            problems += self._check_leaks(leaks, result)
        if peak:
            problems += self._check_peak(peak, result, pyfuncitem)
        if self.fail_on_increase:
            problems += self._check_increase(pyfuncitem.nodeid, result)
        if problems:
            exc = pytest.fail.Exception("\n\n".join(problems), pytrace=False)
            if hasattr(outcome, "force_exception"):
                outcome.force_exception(exc)
            else:
                raise exc

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        if report.when == "call" and report.passed and nodeid in self.measured:
            self.passed[nodeid] = self.measured.pop(nodeid)
        elif report.failed:
            self.passed.pop(nodeid, None)
            self.measured.pop(nodeid, None)

    def pytest_sessionfinish(self, session):
        if not (self.fail_on_increase and self.active and self.passed and self._is_controller()):
            return
        try:
            tests = _baseline.load(self.baseline_path)
        except _baseline.BaselineError:
            tests = {}
        for nodeid, r in self.passed.items():
            tests[nodeid] = _baseline.entry(r.peak_low, r.peak_high, r.leaked_bytes)
        try:
            _baseline.save(self.baseline_path, tests)
        except OSError as e:
            self.warnings.append("cannot write %s: %s" % (self.baseline_path, e))

    # ---- checks: each returns a list of failure texts ----

    def _frames_text(self, frames, indent="      "):
        lines = []
        shown = 0
        for i, group in collapse_interpreter(frames):
            if shown == self.frames:
                lines.append("%s... %d more frame(s) (--vram-frames)" % (indent, len(frames) - i))
                break
            if len(group) == 1:
                lines.append("%s#%d %s" % (indent, i, format_frame(group[0])))
            else:
                lines.append("%s#%d-%d %d frames in the Python interpreter (%s)" % (
                    indent, i, i + len(group) - 1, len(group), module_name(group[0])))
            shown += 1
        return lines or [indent + "(no frames recorded)"]

    def _site_text(self, n, site, what):
        head = "  site %d: %s %s (kind %s, GPU %s)" % (
            n, describe(site["bytes"]), what, site["kind"], site["device"])
        if site.get("stacks"):
            head += ", stack %s in the snapshots" % ",".join(str(x) for x in site["stacks"])
        lines = [head + ", allocated at:"]
        py = site.get("py") or []
        if py:
            lines += ["      %s" % format_python_frame(f) for f in py[:self.frames]]
            if len(py) > self.frames:
                lines.append("      ... %d more Python frame(s) (--vram-frames)" %
                             (len(py) - self.frames))
            lines.append("    native frames:")
        return lines + self._frames_text(site["frames"])

    def _check_leaks(self, limit, r):
        size, raw = limit
        name = _limit_text(_LEAKS, raw)
        if r.sites is None:
            if r.leaked_bytes is None:
                return ["%s: cannot tell what the test left live: %s" % (name, "; ".join(r.notes))]
            if r.leaked_bytes <= size:
                return []
            return ["%s: %s allocated by the test (second run, after a warm-up run) is still "
                    "live, over the limit of %s.\nThis is the total of all sites "
                    "(vramtrace_scope_leaked_bytes): per-site data is unavailable: %s" %
                    (name, describe(r.leaked_bytes), describe(size), "; ".join(r.notes))]
        over = [s for s in r.sites if s["bytes"] > size]
        if not over:
            return []
        lines = ["%s: %d site(s) kept more than %s live from the test (second run, after a "
                 "warm-up run); %s in total is still live:" %
                 (name, len(over), describe(size), describe(r.leaked_bytes))]
        for n, s in enumerate(over, 1):
            lines += self._site_text(n, s, "in %d allocation(s) still live" % s["count"])
        if r.stream_path:
            lines.append("  snapshots: %s" % r.stream_path)
        return ["\n".join(lines)]

    def _peak_sites_text(self, r):
        if not r.peak_sites:
            return []
        lines = ["  sites that rose the most during the test:"]
        for n, s in enumerate(r.peak_sites[:3], 1):
            lines += self._site_text(n, s, "rise")
        return lines

    def _check_peak(self, limit, r, item):
        size, raw = limit
        name = _limit_text(_PEAK, raw)
        if r.peak_low > size:
            value = describe(r.peak_low) if r.peak_exact else "at least %s" % describe(r.peak_low)
            lines = ["%s: GPU memory rose %s above the %s live at the test's start, over the "
                     "limit of %s (%s)" % (name, value, describe(r.live_before), describe(size),
                                            r.peak_method)]
            lines += self._peak_sites_text(r)
            return ["\n".join(lines)]
        if r.peak_high > size:
            # Undecided: the bounds straddle the limit. Not a failure, but not silent.
            msg = ("%s %s: the peak is between %s and %s, so the limit of %s could not be "
                   "checked; a libvramtrace.so with vramtrace_peak_interval_bytes() measures it "
                   "exactly" % (item.nodeid, name, describe(r.peak_low), describe(r.peak_high),
                                describe(size)))
            item.warn(pytest.PytestWarning("vramtrace: " + msg))
            self.warnings.append(msg)
        return []

    def _check_increase(self, nodeid, r):
        old = self.baseline.get(nodeid)
        over = _baseline.increase(old, r.peak_low, self.tolerance)
        if not over:
            return []
        value = describe(r.peak_low) if r.peak_exact else "at least %s" % describe(r.peak_low)
        lines = ["--vram-fail-on-increase: the test's GPU memory peak rose from %s (last passing "
                 "run, %s) to %s, +%s over the tolerance of %s (%s)" %
                 (describe(old["peak_bytes"]), old.get("time", "?"), value, describe(over),
                  describe(self.tolerance), r.peak_method)]
        lines += self._peak_sites_text(r)
        lines.append("  baseline: %s" % self.baseline_path)
        return ["\n".join(lines)]
