#!/usr/bin/env python3
"""check_exports_list.py LIB LIST — the dynamic symbols LIB defines (nm -D
--defined-only) must be exactly the names in LIST (one per line, sorted), the list of
libvramtrace.so's exports kept in the repository. A change of the exported surface is
then a change of LIST, made on purpose. Exit 0 when they match, 1 with each missing
or extra name on its own line, 2 when nm fails."""
import subprocess
import sys


def main():
    lib, listfile = sys.argv[1], sys.argv[2]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if out.returncode != 0:
        print("nm %s: %s" % (lib, out.stderr.strip()), file=sys.stderr)
        return 2
    have = sorted({l.split()[-1] for l in out.stdout.splitlines() if l.strip()})
    with open(listfile) as fh:
        want = sorted({l.strip() for l in fh if l.strip() and not l.startswith("#")})
    bad = ["missing export: " + n for n in want if n not in have]
    bad += ["unexpected export: " + n for n in have if n not in want]
    for b in bad:
        print(b)
    if not bad:
        print("exports match %s (%d names)" % (listfile, len(want)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
