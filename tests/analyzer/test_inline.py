#!/usr/bin/env python3
"""test_inline.py VRAMTRACE LIBVRAMTRACE SIMCUDA_DIR PROG — names that survive
optimization: PROG (tests/analyzer/inline/inline_leak.cu built for release, by nvcc
-O2 -g or by the C++ compiler -O2 -g) runs under the preload on the simulated
device; the JSON report's first frames of its two leaks must be

  1 MiB/step: Cache::grow, refill, main — the cudaMalloc<T> template of
              cuda_runtime.h inlined into them is trimmed as CUDA's, one logical
              frame at a time, and the callers inlined into the same physical
              frame stay (the first two marked "inlined");
  2 MiB/step: (anonymous namespace)::Scratch::take, then main; the preload's online
              warning names it so too (not _ZN..._GLOBAL__N_...).

Exit 1 with a message on the first mismatch."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

MiB = 1 << 20


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main(argv):
    exe, lib, simcuda, prog = argv[1:5]
    tmp = tempfile.mkdtemp()
    try:
        out = os.path.join(tmp, "out")
        env = dict(os.environ, LD_PRELOAD=lib, LD_LIBRARY_PATH=simcuda, VRAMTRACE_OUTPUT=out)
        p = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0 or "30 + 30 buffers kept" not in p.stdout:
            fail("%s: exit %d %r %r" % (prog, p.returncode, p.stdout, p.stderr[-2000:]))
        # the online warning names the method without its mangling
        if "vramtrace: possible leak: (anonymous namespace)::Scratch::take (" not in p.stderr:
            fail("online warning: %r" % [l for l in p.stderr.splitlines() if "possible leak" in l])
        r = subprocess.run([exe, "report", "--format", "json", out], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail("report: exit %d %r" % (r.returncode, r.stderr))
        sites = {round(s["growth_bytes_per_step"]): s for s in json.loads(r.stdout)["processes"][0]["sites"]
                 if s["verdict"] == "leak"}
        if sorted(sites) != [MiB, 2 * MiB]:
            fail("leaks at %r bytes/step, expected 1 MiB and 2 MiB" % sorted(sites))
        fr = sites[MiB]["frames"]
        got = [(f["function"], bool(f.get("inlined"))) for f in fr[:3]]
        want = [("Cache::grow", True), ("refill", True), ("main", False)]
        if got != want:
            fail("1 MiB/step site: first frames %r, expected %r (all: %r)"
                 % (got, want, [f["function"] for f in fr]))
        if not fr[0]["file"] or not fr[0]["file"].endswith("inline_leak.cu") or not fr[0]["line"]:
            fail("1 MiB/step site: first frame's source %r:%r" % (fr[0]["file"], fr[0]["line"]))
        fr = sites[2 * MiB]["frames"]
        got = [f["function"] for f in fr[:2]]
        if got != ["(anonymous namespace)::Scratch::take", "main"]:
            fail("2 MiB/step site: first frames %r" % [f["function"] for f in fr])
        print("inline ok: %s" % os.path.basename(prog))
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
