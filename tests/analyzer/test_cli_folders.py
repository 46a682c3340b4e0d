#!/usr/bin/env python3
"""test_cli_folders.py - folders as people leave them (CTest analyzer_folders).

  test_cli_folders.py folders VRAMTRACE TESTDIR   run sub-folders, headerless, rotated, torn files
"""
import glob
import json
import os
import re
import shutil
import sys
import tempfile

from cli_common import check, run, golden, main


def t_folders(exe, testdir):
    """Folders as people leave them: run sub-folders, a headerless file (a copy of a
    stream's tail, logrotate's copytruncate), a rotated copy (*.jsonl.1), a torn file, a
    file broken in its middle, a symbolic link loop. Each bad file is one
    "file:line: what" note on stderr, the rest is read; exit 2 only when nothing was."""
    def lines_of(name):
        return open(sorted(glob.glob(os.path.join(golden(testdir, name), "*.jsonl")))[0]).read().splitlines(True)
    stable, plateau, leak = lines_of("stable-step"), lines_of("plateau-step"), lines_of("leak_churn-step")
    rank1 = open(os.path.join(golden(testdir, "two_ranks-step"), "vt.node7.6001.1700000000006001000.jsonl")).read()

    def repid(ls, pid):   # the same stream as another process (its own pid)
        h = json.loads(ls[0])
        h["pid"] = pid
        return [json.dumps(h, separators=(",", ":")) + "\n"] + ls[1:]

    def notes(err):
        return [l for l in err.splitlines() if l]

    def pids(out):
        return sorted(p["pid"] for p in json.loads(out)["processes"])
    tmp = tempfile.mkdtemp()
    try:
        # A: every process that can be read passes the gates
        a = os.path.join(tmp, "A")
        run_dir = os.path.join(a, "run-20261201-101500-4242-0")
        deep = os.path.join(a, "x", "y", "z")
        os.makedirs(run_dir)
        os.makedirs(deep)
        good = os.path.join(a, "vt.node7.5004.1700000000005004000.jsonl")
        rotated = os.path.join(a, "vt.node7.5002.1700000000005002000.jsonl.1")
        headerless = os.path.join(a, "vt.node7.5001.1700000000005001000.jsonl")
        broken = os.path.join(a, "vt.node7.7777.1700000000005004000.jsonl")
        open(good, "w").write("".join(stable))
        open(rotated, "w").write("".join(plateau))
        open(headerless, "w").write("".join(leak[6:]))          # a leaking stream's tail: never read
        bl = repid(stable, 7777)
        bl[9] = "garbage\n"
        open(broken, "w").write("".join(bl))
        open(os.path.join(run_dir, "vt.node7.6001.1700000000006001000.jsonl"), "w").write(rank1)
        open(os.path.join(deep, "vt.node7.8888.1.jsonl"), "w").write("".join(repid(leak, 8888)))
        os.symlink(a, os.path.join(a, "loop"))                  # a folder link to itself: not followed
        want_notes = [(headerless + ":1: ", r"no header"),
                      (broken + ":10: ", r"not valid JSON.*skipped"),
                      (rotated + ":", r"rotated copy"),
                      (os.path.join(a, "loop") + ": ", r"symbolic link"),
                      (os.path.join(a, "x", "y", "z") + ": ", r"deeper than 2")]
        for args in (["report", "--format", "json"], ["check"], ["check", "--allow-unreadable"],
                     ["export", "--format", "collapsed"]):
            r = run([exe] + args + [a], timeout=30)
            # check fails the run on files it could not read (a process in them was not
            # judged) unless --allow-unreadable; report and export read the rest
            want_rc = 1 if args == ["check"] else 0
            check(r.returncode == want_rc, "folder A %s: exit %d, expected %d\n%s%s" % (args[0], r.returncode, want_rc,
                                                                                   r.stdout[-800:], r.stderr))
            got = notes(r.stderr)
            for start, pat in want_notes:
                hits = [l for l in got if l.startswith(start) and re.search(pat, l)]
                check(len(hits) == 1, "folder A %s: %d notes %r /%s/ in %r" % (args[0], len(hits), start, pat, got))
            check(len(got) == len(want_notes), "folder A %s: %d stderr lines, expected %d: %r"
                  % (args[0], len(got), len(want_notes), got))
            if args[0] == "report" and r.returncode == 0:
                check(pids(r.stdout) == [5002, 5004, 6001], "folder A: processes %r, expected 5002 5004 6001" % pids(r.stdout))
            if args[0] == "check":
                check("record_history" not in r.stdout, "folder A: the headerless leak was read:\n" + r.stdout)
            if args == ["check"]:
                check("FAIL all files: 2 snapshot files could not be read" in r.stdout and "--allow-unreadable" in r.stdout,
                      "folder A check: the unreadable files are not a failure:\n" + r.stdout)
            if args[0] == "export":
                check("grow_cache" in r.stdout and "load_weights" in r.stdout and "record_history" not in r.stdout,
                      "folder A export: %r" % r.stdout[:500])
        # the same folder, named through its run sub-folder only: one process, no notes
        r = run([exe, "report", "--format", "json", run_dir])
        check(r.returncode == 0 and pids(r.stdout) == [6001] and not r.stderr, "run folder: %d %r" % (r.returncode, r.stderr))
        # B: a torn (truncated) file beside a leaking one: read up to its last whole line
        b = os.path.join(tmp, "B")
        os.makedirs(b)
        torn = os.path.join(b, "vt.node7.5004.1700000000005004000.jsonl")
        open(torn, "w").write("".join(stable[:20]) + stable[20][:37])
        open(os.path.join(b, "vt.node7.5001.1700000000005001000.jsonl"), "w").write("".join(leak))
        r = run([exe, "report", "--format", "json", b])
        got = notes(r.stderr)
        check(r.returncode == 0 and pids(r.stdout) == [5001, 5004], "folder B: %d %r" % (r.returncode, r.stderr))
        check(len(got) == 1 and got[0].startswith(torn + ":21: ") and "torn" in got[0], "folder B notes: %r" % got)
        r = run([exe, "check", "--allow-incomplete", b])
        check(r.returncode == 1 and "record_history" in r.stdout, "folder B check: %d %r" % (r.returncode, r.stdout[-500:]))
        r = run([exe, "check", "--max-growth", "1GiB", b])       # the torn process ended without an exit record
        check(r.returncode == 1 and "exit record" in r.stdout, "folder B check, torn: %d %r" % (r.returncode, r.stdout[-500:]))
        # C: nothing readable at all: exit 2, a note per file and one error
        c = os.path.join(tmp, "C")
        os.makedirs(os.path.join(c, "run-1"))
        open(os.path.join(c, "vt.h.1.1.jsonl"), "w").write("".join(leak[6:]))
        open(os.path.join(c, "vt.h.2.1.jsonl.1"), "w").write("garbage\n")
        open(os.path.join(c, "run-1", "vt.h.3.1.jsonl"), "w").write("".join(leak[3:]))
        for args in (["report"], ["check"], ["export", "--format", "collapsed"]):
            r = run([exe] + args + [c])
            got = notes(r.stderr)
            check(r.returncode == 2 and r.stdout == "", "folder C %s: exit %d %r" % (args[0], r.returncode, r.stdout[:200]))
            check(len(got) == 4 and sum(1 for l in got if re.match(r"\S+:1: ", l)) == 3
                  and "no snapshot file" in got[-1], "folder C %s: stderr %r" % (args[0], got))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main({"folders": t_folders}))
