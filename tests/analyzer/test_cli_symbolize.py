#!/usr/bin/env python3
"""test_cli_symbolize.py - names of native frames (CTest analyzer_symbolize, analyzer_symbolize_cxx).

  test_cli_symbolize.py symbolize VRAMTRACE TESTDIR SYMPROG          function/file/line through libdw,
                                                                     build-id mismatch fallback
  test_cli_symbolize.py symbolize_cxx VRAMTRACE TESTDIR SYMPROG_CXX  the same, compiled as C++:
                                                                     demangled names
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cli_common import check, run, main


def t_symbolize(exe, testdir, symprog, cxx=False):
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run([symprog, tmp], check=True)
        truth = json.load(open(os.path.join(tmp, "lines.json")))
        r = run([exe, "report", "--format", "json", os.path.join(tmp, "good.jsonl")])
        check(r.returncode == 0, "report: %d %s" % (r.returncode, r.stderr))
        fr = json.loads(r.stdout)["processes"][0]["sites"][0]["frames"]
        print(json.dumps(fr, indent=1))
        check(len(fr) == 3, "3 frames expected, got %d" % len(fr))
        names = [f["function"] for f in fr]
        check(names == ["known_function", "known_caller", "main"], "functions %r" % names)
        check(all((f["file"] or "").endswith("symprog.c") for f in fr), "files %r" % [f["file"] for f in fr])
        check(fr[0]["line"] == truth["known_function"],
              "innermost frame (a return address too): line %r, expected %d (offset-1 rule)" % (fr[0]["line"], truth["known_function"]))
        check(fr[1]["line"] == truth["known_caller"], "return address in known_caller: line %r, expected %d (offset-1 rule)"
              % (fr[1]["line"], truth["known_caller"]))
        check(fr[2]["line"] == truth["main"], "return address in main: line %r, expected %d" % (fr[2]["line"], truth["main"]))
        check(fr[0]["module"] == os.path.realpath(symprog), "module %r" % fr[0]["module"])
        if cxx:
            # C++: names demangled; "function" without parameters, "signature" with them
            sigs = [f["signature"] for f in fr]
            check(sigs == ["known_function(int)", "known_caller()", "main"], "signatures %r" % sigs)
            r = run([exe, "report", os.path.join(tmp, "good.jsonl")])
            check("known_function(int) (symprog.c:%d)" % truth["known_function"] in r.stdout,
                  "text report lacks the demangled signature:\n" + r.stdout)
            check("_Z" not in r.stdout, "text report shows a mangled name:\n" + r.stdout)
        else:
            check([f["signature"] for f in fr] == names, "C signatures %r" % [f["signature"] for f in fr])
        # wrong build-id: the file is not the one that ran -> no DWARF; written name, then module+offset
        r = run([exe, "report", "--format", "json", os.path.join(tmp, "badid.jsonl")])
        fr = json.loads(r.stdout)["processes"][0]["sites"][0]["frames"]
        check(fr[0]["function"] == "fallback_name" and fr[0]["file"] is None, "mismatch frame 0: %r" % fr[0])
        check(fr[1]["function"] is None and fr[1]["line"] is None, "mismatch frame 1: %r" % fr[1])
        r = run([exe, "report", os.path.join(tmp, "badid.jsonl")])
        base = re.escape(os.path.basename(symprog))
        check(re.search(r"fallback_name \(%s\+0x[0-9a-f]+\)" % base, r.stdout), "text fallback label:\n" + r.stdout)
        r = run([exe, "check", "--max-peak", "1", os.path.join(tmp, "badid.jsonl")])
        check(re.search(r"at fallback_name \(%s\+0x[0-9a-f]+\) <- %s\+0x[0-9a-f]+ <- " % (base, base), r.stdout),
              "module+offset fallback:\n" + r.stdout)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main({"symbolize": t_symbolize,
                   "symbolize_cxx": lambda exe, testdir, prog: t_symbolize(exe, testdir, prog, cxx=True)}))
