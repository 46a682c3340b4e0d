#!/usr/bin/env python3
"""test_cli_run.py - the launcher `vramtrace run` (CTest analyzer_run).

  test_cli_run.py run VRAMTRACE TESTDIR FAKELIB   env, LD_PRELOAD, exit status, --check, signals
"""
import json
import os
import shutil
import stat
import sys
import tempfile

from cli_common import check, run, main


def t_run(exe, testdir, fakelib):
    tmp = tempfile.mkdtemp()
    try:
        env = {"VRAMTRACE_LIB": fakelib, "FAKE_TARGET": "sh", "LD_PRELOAD": "libm.so.6"}
        out = os.path.join(tmp, "o1")
        r = run([exe, "run", "-o", out, "--interval", "250", "--depth", "7", "--", "sh", "-c", "exit 3"], env=env)
        check(r.returncode == 3, "exit status not forwarded: %d %s" % (r.returncode, r.stderr))
        check("snapshots are in " + out in r.stderr, "run does not say where the snapshots are: %r" % r.stderr)
        ld = open(os.path.join(out, "env.txt")).read().strip()
        check(ld == fakelib + ":libm.so.6", "LD_PRELOAD not prepended: %r" % ld)
        f = [x for x in os.listdir(out) if x.endswith(".jsonl")]
        check(len(f) == 1, "one stream expected: %r" % f)
        h = json.loads(open(os.path.join(out, f[0])).readline())
        check(h["interval_ms"] == 250 and h["depth"] == 7, "interval/depth not passed: %r" % h)
        check(stat.S_IMODE(os.stat(out).st_mode) == 0o700, "output folder mode %o" % stat.S_IMODE(os.stat(out).st_mode))
        # death by signal -> 128+N
        r = run([exe, "run", "-o", os.path.join(tmp, "o2"), "--", "sh", "-c", "kill -TERM $$"], env=env)
        check(r.returncode == 128 + 15, "signal death: %d" % r.returncode)
        r = run([exe, "run", "-o", os.path.join(tmp, "o3"), "--", "/nonexistent/prog"], env=env)
        check(r.returncode == 127 and "cannot run" in r.stderr, "missing program: %d %r" % (r.returncode, r.stderr))
        # -o naming a file: said before the program starts, exit 2, the file untouched
        afile = os.path.join(tmp, "afile")
        open(afile, "w").write("mine")
        marker = os.path.join(tmp, "started")
        r = run([exe, "run", "-o", afile, "--", "sh", "-c", "touch " + marker], env=env)
        check(r.returncode == 2 and "is not a folder" in r.stderr and not os.path.exists(marker) and
              open(afile).read() == "mine", "run -o FILE: %d %r" % (r.returncode, r.stderr))
        # default folder: a new one under ./vramtrace-out each time
        for _ in range(2):
            r = run([exe, "run", "--", "sh", "-c", "exit 0"], env=env, cwd=tmp)
            check(r.returncode == 0, "default folder run: %d %s" % (r.returncode, r.stderr))
        runs = os.listdir(os.path.join(tmp, "vramtrace-out"))
        check(len(runs) == 2 and all(x.startswith("run-") for x in runs), "default folders: %r" % runs)
        # --check: leak -> 1; clean -> 0; a failing program keeps its status
        r = run([exe, "run", "-o", os.path.join(tmp, "o4"), "--check", "--", "sh", "-c", "exit 0"], env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 1 and "grow_buffer" in r.stdout, "run --check on a leak: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o5"), "--check", "--max-growth", "2MiB", "--", "sh", "-c", "exit 0"],
                env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 0, "run --check --max-growth 2MiB: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o6"), "--check", "--", "sh", "-c", "exit 0"], env=env)
        check(r.returncode == 0, "run --check clean: %d %s" % (r.returncode, r.stdout))
        # a clean program killed (no exit record): --check fails it; --allow-incomplete passes
        r = run([exe, "run", "-o", os.path.join(tmp, "o6k"), "--check", "--", "sh", "-c", "exit 0"],
                env=dict(env, FAKE_KILLED="1"))
        check(r.returncode == 1 and "ended without an exit record (killed or `_exit`); its last snapshot held 1 MiB live"
              in r.stdout, "run --check, killed: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o6a"), "--check", "--allow-incomplete", "--", "sh", "-c",
                 "exit 0"], env=dict(env, FAKE_KILLED="1"))
        check(r.returncode == 0, "run --check --allow-incomplete, killed: %d %s" % (r.returncode, r.stdout))
        r = run([exe, "run", "-o", os.path.join(tmp, "o7"), "--check", "--", "sh", "-c", "exit 5"], env=dict(env, FAKE_LEAK="1"))
        check(r.returncode == 5, "program status must win over the check: %d" % r.returncode)
        r = run([exe, "run", "--max-peak", "1GiB", "--", "true"], env=env, cwd=tmp)
        check(r.returncode == 2, "check option without --check: %d" % r.returncode)
        r = run([exe, "run", "--", "true"], env={"VRAMTRACE_LIB": os.path.join(tmp, "nolib.so")}, cwd=tmp)
        check(r.returncode == 2 and "VRAMTRACE_LIB" in r.stderr, "missing library: %d %r" % (r.returncode, r.stderr))
        # a relative -o is made absolute: a program that chdir()s still writes there
        seen = os.path.join(tmp, "seen.txt")
        r = run([exe, "run", "-o", "rel/out", "--", "sh", "-c", 'printf %s "$VRAMTRACE_OUTPUT" > "$0"', seen], env=env, cwd=tmp)
        want = os.path.realpath(os.path.join(tmp, "rel", "out"))
        check(r.returncode == 0 and open(seen).read() == want, "VRAMTRACE_OUTPUT not absolute: %r (want %r)" % (open(seen).read(), want))
        # SIGUSR1/SIGUSR2 sent to the launcher reach the program; the launcher survives them.
        # Not under ThreadSanitizer (tests/reliability/sanitize_run.sh thread): its waitpid
        # interceptor is not a blocking call, so TSan defers the launcher's handler until
        # the program has exited, and the signal can never reach it.
        tsan = "libtsan" in os.path.basename(os.environ.get("VT_SANITIZER_PRELOAD", ""))
        for sig in () if tsan else ("USR1", "USR2"):
            got = os.path.join(tmp, "got" + sig)
            prog = ('trap \'echo got > "$0"; exit 0\' %s; kill -%s $PPID; i=0; '
                    'while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; exit 9' % (sig, sig))
            r = run([exe, "run", "-o", os.path.join(tmp, "o" + sig), "--", "sh", "-c", prog, got], env=env)
            check(r.returncode == 0 and os.path.exists(got), "SIG%s not forwarded: exit %d %r" % (sig, r.returncode, r.stderr))
        # a library path LD_PRELOAD cannot carry (space, colon): refused, not a broken LD_PRELOAD
        for bad in ("sp ace", "co:lon"):
            d = os.path.join(tmp, bad)
            os.mkdir(d)
            lib = os.path.join(d, "libvramtrace.so")
            shutil.copy(fakelib, lib)
            r = run([exe, "run", "-o", os.path.join(tmp, "o_" + bad[:2]), "--", "true"], env=dict(env, VRAMTRACE_LIB=lib))
            check(r.returncode == 2 and "space or a colon" in r.stderr and "LD_PRELOAD" in r.stderr,
                  "library path %r: %d %r" % (bad, r.returncode, r.stderr))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main({"run": t_run}))
