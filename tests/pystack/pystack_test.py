"""pystack_test.py — checks preload/capture/vt_python.c through libpystack_probe.so.

usage: python3.X pystack_test.py <path/to/libpystack_probe.so> <mode>
modes:
  basic     two call sites in two functions, a method, a generator, a
            C->Python callback, deep recursion, a C-created thread (0 frames)
  threads   8 threads capture through a lock-holding "allocator" while 2
            threads spin in Python and 1 thread holds the GIL waiting on that
            allocator lock; every capture must name the right site
  deadlock  the capture runs while another thread HOLDS the GIL and waits on
            the allocator lock the capturing thread holds: must return
  stale     describe after the frame returned (code alive: exact), and after
            the code object was deleted (no crash; exact or "?")
  cache     a randomized recursive program (several functions and call lines,
            generators, C->Python callbacks, exceptions, code recompiled with
            exec, 4 threads, cuts at 8/16/32 frames): at every capture the
            per-thread cached capture must equal an uncached one, record for
            record, with the same hash (vt_py_capture_cached)
Expected lines are found from "# @site:<name>" markers in this file, so the
test fails if the reader reports any other line. Exit 0 = pass, 1 = fail.
"""
import ctypes
import faulthandler
import os
import sys
import threading

faulthandler.enable()
faulthandler.dump_traceback_later(25, exit=True)   # a hang is a failure

PROBE = ctypes.CDLL(sys.argv[1])                    # GIL released in calls
PROBE_GIL = ctypes.PyDLL(sys.argv[1])               # GIL held in calls
MODE = sys.argv[2]
HERE = os.path.abspath(__file__)
QUALNAME = sys.version_info >= (3, 11)
BUF = 16384

SITES = {}
with open(HERE) as fh:
    for no, text in enumerate(fh, 1):
        if "# @site:" in text and not text.lstrip().startswith("#"):
            SITES[text.split("# @site:")[1].strip()] = no

FAILS = []
GROUPS = []          # vt_py_frame.group of each frame of the last parse()


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, flush=True)


def parse(buf, n):
    lines = buf.value.decode("utf-8").splitlines()
    assert len(lines) == n, (lines, n)
    rows = [l.split("\t") for l in lines]
    GROUPS[:] = [int(r[3]) for r in rows]
    return [(f, fn, int(ln)) for f, fn, ln, _ in rows]


def capture(fn=None):
    """Frames of the caller of capture(): frame 0 (capture itself) is checked
    and dropped."""
    buf = ctypes.create_string_buffer(BUF)
    n = (fn or PROBE.probe_capture)(buf, BUF)  # @site:capture
    if n < 1:
        return None
    frames = parse(buf, n)
    if frames[0] != (HERE, "capture", SITES["capture"]):
        return [("capture frame wrong", frames[0][1], frames[0][2])] + frames[1:]
    return frames[1:]


def expect(frames, idx, func, site, label):
    if frames is None or len(frames) <= idx:
        check(False, f"{label}: frame {idx} missing: {frames}")
        return
    f, fn, ln = frames[idx]
    check(f == HERE, f"{label}: file {f!r} != {HERE!r}")
    check(fn == func, f"{label}: function {fn!r} != {func!r}")
    check(ln == SITES[site], f"{label}: line {ln} != {SITES[site]} ({site})")


# ---- call sites ------------------------------------------------------------

def leak_site(fn=None):
    return capture(fn)  # @site:leak


def churn_site(fn=None):
    return capture(fn)  # @site:churn


def outer_leak():
    return leak_site()  # @site:outer_leak


class Trainer:
    def step(self):
        return capture()  # @site:method


def gen_site():
    yield capture()  # @site:gen


def key_site(x):
    RESULT.append(capture())  # @site:key
    RESULT.append((list(GROUPS), PROBE.probe_eval_frames()))
    return x


RESULT = []


def recurse(n):
    if n == 0:
        return capture()  # @site:deep
    return recurse(n - 1)  # @site:recurse


def mode_basic():
    check(PROBE.probe_cthread_capture() == 0, "C-created thread must give 0 frames")
    fr = outer_leak()
    expect(fr, 0, "leak_site", "leak", "leak")
    expect(fr, 1, "outer_leak", "outer_leak", "leak caller")
    check(fr is not None and fr[-1][1] == "<module>", f"outermost is <module>: {fr}")
    fr2 = churn_site()
    expect(fr2, 0, "churn_site", "churn", "churn")
    check(fr is not None and fr2 is not None and fr[0] != fr2[0], "two sites differ")
    expect(Trainer().step(), 0, "Trainer.step" if QUALNAME else "step", "method", "method")
    expect(next(gen_site()), 0, "gen_site", "gen", "generator")
    # eval-loop activations: groups must number the native eval frames
    buf = ctypes.create_string_buffer(BUF)
    n = PROBE.probe_capture(buf, BUF)
    parse(buf, n)
    evals = PROBE.probe_eval_frames()
    check(GROUPS == sorted(GROUPS) and GROUPS[0] == 0 and GROUPS[-1] + 1 == evals,
          f"groups {GROUPS} vs {evals} native eval frames")
    if QUALNAME:
        check(set(GROUPS) == {0}, f"3.11+: one activation for Python calls: {GROUPS}")
    else:
        check(GROUPS == list(range(n)), f"3.10: one activation per frame: {GROUPS}")
    sorted([3, 1], key=key_site)                     # C (sorted) -> Python
    expect(RESULT[0], 0, "key_site", "key", "callback")
    check(RESULT[0] is not None and len(RESULT[0]) >= 2 and
          RESULT[0][1][1] == "mode_basic", f"callback caller: {RESULT[0]}")
    groups, evals = RESULT[1]
    # groups[0] is capture(), which has returned when key_site counts evals
    check(groups[-1] - groups[1] + 1 == evals and groups[1] < groups[2],
          f"callback: key_site and mode_basic in different activations: {groups} / {evals}")
    deep = recurse(60)
    expect(deep, 0, "recurse", "deep", "deep innermost")
    expect(deep, 1, "recurse", "recurse", "deep caller")
    check(deep is not None and sum(1 for d in deep if d[1] == "recurse") == 61,
          f"61 recurse frames: {len(deep or [])}")
    check(PROBE.probe_capture_raw(10) == 3, "raw: mode_basic, main, <module>")


def mode_threads():
    stop = threading.Event()
    errors = []
    counts = [0] * 8

    def spinner():
        x = 0
        while not stop.is_set():
            x += 1

    def gil_holder():
        while not stop.is_set():
            PROBE_GIL.probe_gil_then_lock()         # waits on the lock WITH the GIL

    def worker(i):
        for k in range(150):
            if k % 2:
                fr, func, site = leak_site(PROBE.probe_capture_locked), "leak_site", "leak"
            else:
                fr, func, site = churn_site(PROBE.probe_capture_locked), "churn_site", "churn"
            if (fr is None or len(fr) < 2 or fr[0] != (HERE, func, SITES[site]) or
                    fr[1][1] not in ("worker", "mode_threads.<locals>.worker")):
                errors.append((i, k, fr))
                return
            counts[i] += 1

    others = [threading.Thread(target=spinner) for _ in range(2)]
    others.append(threading.Thread(target=gil_holder))
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in others + workers:
        t.start()
    for t in workers:
        t.join()
    stop.set()
    for t in others:
        t.join()
    check(not errors, f"thread captures wrong: {errors[:2]}")
    check(sum(counts) == 8 * 150, f"all captures done: {counts}")


def mode_deadlock():
    def holder():
        if PROBE.probe_wait_locked(5000) == 0:       # GIL released while waiting
            PROBE_GIL.probe_gil_then_lock()          # GIL held, blocks on the lock

    t = threading.Thread(target=holder)
    t.start()
    buf = ctypes.create_string_buffer(BUF)
    n = PROBE.probe_deadlock_capture(buf, BUF, 100, 5000)  # @site:deadlock
    t.join()
    check(n != -2, "GIL holder never reached the lock")
    check(PROBE.probe_waiter_had_gil() == 1, "the waiting thread held the GIL")
    check(n > 0, f"capture under a foreign GIL holder returned {n}")
    if n > 0:
        expect(parse(buf, n), 0, "mode_deadlock", "deadlock", "deadlock")


def mode_stale():
    def keeper():
        return PROBE.probe_capture_store()  # @site:stale
    check(keeper() >= 2, "store captured")
    buf = ctypes.create_string_buffer(BUF)
    ok = PROBE.probe_describe_stored(buf, BUF)
    lines = buf.value.decode().splitlines()
    name = "mode_stale.<locals>.keeper" if QUALNAME else "keeper"
    check(ok == len(lines) and lines[0] == f"{HERE}\t{name}\t{SITES['stale']}",
          f"describe after return: {lines[:1]}")
    ns = {}
    src = "def gone():\n    return probe()\n" + "\n".join(f"x{i} = {i}" for i in range(300))
    exec(compile(src, "<gone>", "exec"), ns)
    ns["probe"] = PROBE.probe_capture_store
    check(ns["gone"]() >= 2, "store captured (gone)")
    ns.clear()
    import gc
    gc.collect()
    junk = [compile(f"def f{i}(): return {i}", "<junk>", "exec") for i in range(2000)]
    ok = PROBE.probe_describe_stored(buf, BUF)
    first = buf.value.decode().splitlines()[0]
    check(first in ("<gone>\tgone\t2", "?\t?\t0"), f"stale code: {first!r}")
    del junk


def mode_cache():
    import random
    rounds = int(os.environ.get("PYSTACK_CACHE_ROUNDS", "600"))
    bad = []
    PROBE.probe_cache_check.argtypes = [ctypes.c_int]
    PROBE.probe_cache_stats.restype = ctypes.c_long

    local = threading.local()

    def cap(rng):
        if PROBE.probe_cache_check(local.max) < 0:
            bad.append(local.max)

    def a(rng, k):
        if k <= 0:
            return cap(rng)
        r = rng.random()
        if r < 0.3:
            a(rng, k - 1)
        elif r < 0.5:
            b(rng, k - 1)
        elif r < 0.6:
            return next(g(rng, k - 1))
        elif r < 0.7:
            sorted([2, 1], key=lambda x: a(rng, k - 1) or x)
        elif r < 0.8:
            try:
                c(rng, k - 1)
            except ValueError:
                cap(rng)
        else:
            cap(rng)
            a(rng, k - 1)
        cap(rng)

    def b(rng, k):
        cap(rng) if rng.random() < 0.2 else None
        return a(rng, k - rng.randint(0, 2))

    def g(rng, k):
        a(rng, k)
        yield cap(rng)

    def c(rng, k):
        a(rng, k)
        raise ValueError(k)

    src = "def dyn(f, rng, k):\n    return f(rng, k)\n"

    def worker(seed):
        rng = random.Random(seed)
        for i in range(rounds):
            if i % 50 == 0:          # new code objects, the old ones freed
                ns = {}
                exec(compile(src, "<dyn>", "exec"), ns)
                dyn = ns["dyn"]
            local.max = rng.choice((128, 128, 128, 8, 16, 32))
            k = rng.randint(0, 40)
            if rng.random() < 0.3:
                dyn(a, rng, k)
            else:
                a(rng, k)

    ts = [threading.Thread(target=worker, args=(s,)) for s in range(1, 4)]
    for t in ts:
        t.start()
    worker(0)
    for t in ts:
        t.join()
    checked, replayed = PROBE.probe_cache_stats(0), PROBE.probe_cache_stats(1)
    print(f"cache: {checked} captures compared, {replayed} from a filled cache, "
          f"{len(bad)} differed")
    check(not bad, f"cached captures differ from uncached ones: {len(bad)} (max {bad[:5]})")
    check(checked > 1000 and replayed > checked // 2, f"too few cached captures: {replayed}/{checked}")


def main():
    minor = PROBE.probe_init()
    check(minor == sys.version_info[1], f"probe_init found 3.{minor}")
    if minor < 0:
        print("FAIL: no interpreter")
        return 1
    {"basic": mode_basic, "threads": mode_threads, "deadlock": mode_deadlock,
     "stale": mode_stale, "cache": mode_cache}[MODE]()
    print(f"{MODE} on {sys.version.split()[0]}: {'FAIL' if FAILS else 'ok'}")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
