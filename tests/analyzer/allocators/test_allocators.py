#!/usr/bin/env python3
"""test_allocators.py VRAMTRACE LIBVRAMTRACE SIMCUDA_DIR PROG — sites inside a known
caching allocator (analyzer/analyze/vt_allocators.c, docs/allocators.md) are titled by
the caller's frame and marked as the allocator's segments.

PROG is segment_leak.cc built as C++ with the allocators' real qualified names. Its
JSON report must have: a leak of 65,536 bytes/step titled keep_losses and marked "the
PyTorch caching allocator"; a churn titled scratch_pool marked "an RMM memory
resource"; a stable site titled load_weights marked "the TensorFlow/XLA BFC
allocator"; the allocator's own frames still listed inside the stack. The text
report says "a segment of the PyTorch caching allocator" and suggests --tensors.
Exit 1 with a message on the first mismatch."""
import json
import os
import shutil
import subprocess
import sys
import tempfile


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
        if p.returncode != 0 or "30 steps" not in p.stdout:
            fail("%s: exit %d %r %r" % (prog, p.returncode, p.stdout, p.stderr[-2000:]))
        for no_dwarf in (False,):
            renv = dict(os.environ, NO_COLOR="1")
            if no_dwarf:
                renv["VRAMTRACE_NO_DWARF"] = "1"
            what = " (VRAMTRACE_NO_DWARF)" if no_dwarf else ""
            r = subprocess.run([exe, "report", "--format", "json", out], capture_output=True, text=True, env=renv)
            if r.returncode != 0:
                fail("report%s: exit %d %r" % (what, r.returncode, r.stderr))
            sites = json.loads(r.stdout)["processes"][0]["sites"]
            by = {}
            for s in sites:
                by.setdefault(s["title"].split(" ")[0], s)
            want = {"keep_losses": ("leak", "the PyTorch caching allocator"),
                    "scratch_pool": ("churn", "an RMM memory resource"),
                    "load_weights": ("stable", "the TensorFlow/XLA BFC allocator")}
            for name, (verdict, alloc) in want.items():
                s = by.get(name)
                if not s:
                    fail("no site titled %s%s: titles %r" % (name, what, [x["title"] for x in sites]))
                if s["verdict"] != verdict or s["allocator"] != alloc:
                    fail("%s%s: verdict %r allocator %r, expected %r %r" % (name, what, s["verdict"], s["allocator"], verdict, alloc))
            lk = by["keep_losses"]
            if round(lk["growth_bytes_per_step"]) != 65536:
                fail("keep_losses grows %r bytes/step, expected 65536" % lk["growth_bytes_per_step"])
            fns = [f["function"] or "" for f in lk["frames"]]
            if not any("CUDACachingAllocator" in f and "alloc_block" in f for f in fns):
                fail("the allocator's frames are gone from the stack%s: %r" % (what, fns))
            t = subprocess.run([exe, "report", out], capture_output=True, text=True, env=renv)
            if "    a segment of the PyTorch caching allocator" not in t.stdout or "`vramtrace run --tensors` shows each tensor" not in t.stdout:
                fail("text report%s lacks the segment note: %r" % (what, t.stdout[:1500]))
            if "at keep_losses" not in t.stdout:
                fail("text report%s: the leak is not titled keep_losses: %r" % (what, t.stdout[:1500]))
        print("ok: allocator frames skipped in titles, sites marked, --tensors suggested")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
