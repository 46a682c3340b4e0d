#!/usr/bin/env python3
"""What was live at the peak (docs/snapshot-format.md "peak_composition").

check_peak.py VRAMTRACE WORKDIR PROG_PEAK

1. `prog_peak` (steps): its peak comes from peak_only_buffer, allocated and freed
   inside step 12. The text report opens the device section with "at the peak (..., during
   step 12): 300 MiB peak_only_buffer ..."; JSON has the composition under the process
   and the device with peak_only_buffer at its exact bytes though nothing of it is
   live at exit; the torch export has a "snapshot" trace entry at that moment and the
   compositions; the program itself checked vramtrace_peak_sites.
2. `prog_peak twodev` (two simulated devices): the process's composition ("all
   devices") counts both, each device's its own.
3. `prog_peak ramp 1000`: 1000 rising peaks from 1 GiB to about 2 GiB make at most
   log(top/base)/log(1.01) + 2 copies (+ one per snapshot interval of the run) and the
   last copy is within 1 % of the peak.
Exit 0, or 1 with what failed.
"""
import glob
import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import time

PEAK_ONLY = 300 * 1024 * 1024 + 12345
WEIGHTS = 256 * 1024 * 1024
MiB = 1024 * 1024


def fail(msg):
    print("check_peak: FAIL: " + msg)
    sys.exit(1)


def run(vt, out, *cmd, env=None):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([vt, "run", "-o", out, "--", *cmd], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail("%s exited %d: %s %s" % (cmd, r.returncode, r.stdout, r.stderr))
    return r.stdout


def composition_ok(pc, where):
    if pc is None:
        fail(where + ": no peak_composition")
    titles = [(s["title"] or "", s["bytes"]) for s in pc["sites"]]
    if not titles or not titles[0][0].startswith("peak_only_buffer") or titles[0][1] != PEAK_ONLY:
        fail("%s: the first site is not peak_only_buffer at %d bytes: %s" % (where, PEAK_ONLY, titles))
    if not any(t.startswith("alloc_weights") and b == WEIGHTS for t, b in titles):
        fail("%s: alloc_weights at %d bytes missing: %s" % (where, WEIGHTS, titles))
    want = PEAK_ONLY + WEIGHTS + 64 * MiB + 12 * MiB
    if pc["bytes"] != want or pc["step"] != 12 or sum(b for _, b in titles) + pc["other_bytes"] != want:
        fail("%s: bytes %d step %d (want %d, step 12)" % (where, pc["bytes"], pc["step"], want))


def main():
    vt, work, prog = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "steps")
    stdout = run(vt, out, prog)
    if "api: peak" not in stdout:
        fail("prog_peak did not check the client API: " + stdout)

    text = subprocess.run([vt, "report", out], capture_output=True, text=True).stdout
    line = [l for l in text.splitlines() if "at the peak (" in l]
    if not line or "during step 12): 300 MiB peak_only_buffer" not in line[0] or "256 MiB alloc_weights" not in line[0]:
        fail("text report: no 'at the peak (..., during step 12): 300 MiB peak_only_buffer, ... 256 MiB alloc_weights' "
             "line:\n" + text)
    dev_i = text.index("DEVICES")
    if text.index(line[0]) < dev_i or not text[dev_i:].splitlines()[1].startswith("  device 0: at the peak ("):
        fail("text report: the device section does not open with the composition:\n" + text[dev_i:])

    rep = json.loads(subprocess.run([vt, "report", "--format", "json", out], capture_output=True,
                                    text=True).stdout)
    p = rep["processes"][0]
    composition_ok(p.get("peak_composition"), "JSON process")
    composition_ok(p["devices"][0].get("peak_composition"), "JSON device 0")
    gone = [s for s in p["sites"] if (s.get("title") or "").startswith("peak_only_buffer")]
    if not gone or gone[0].get("unfreed_at_exit_bytes", 0) != 0:
        fail("peak_only_buffer is not gone at exit: %s" % gone)

    html = subprocess.run([vt, "report", "--format", "html", out], capture_output=True, text=True).stdout
    if "at the peak (" not in html or "peak_only_buffer" not in html:
        fail("HTML report: no peak composition")

    files = glob.glob(os.path.join(out, "**", "vt.*"), recursive=True)
    pk = os.path.join(work, "peak.pickle")
    r = subprocess.run([vt, "export", "--format", "torch", "--force", "-o", pk, files[0]], capture_output=True,
                       text=True)
    if r.returncode != 0:
        fail("export: " + r.stderr)
    with open(pk, "rb") as f:
        d = pickle.load(f)
    snaps = [e for e in d["device_traces"][0] if e["action"] == "snapshot"]
    if len(snaps) != 1 or snaps[0]["size"] != PEAK_ONLY + WEIGHTS + 76 * MiB or \
            snaps[0]["frames"][0]["name"] != "peak_only_buffer":
        fail("torch export: the device trace has no snapshot entry at the peak: %s" % snaps)
    comp = [c for c in d["vramtrace_peak_composition"] if c["device"] == 0]
    if not comp or comp[0]["sites"][0]["size"] != PEAK_ONLY:
        fail("torch export: vramtrace_peak_composition lacks device 0's peak_only_buffer")

    # two devices: the process's composition first ("all devices"), then each device's
    env = dict(os.environ, SIMCUDA_DEVICES="2")
    out2 = os.path.join(work, "twodev")
    run(vt, out2, prog, "twodev", env=env)
    text = subprocess.run([vt, "report", out2], capture_output=True, text=True).stdout
    dev = text[text.index("DEVICES"):].splitlines()
    if not dev[1].startswith("  all devices: at the peak (556 MiB, during step 1): 300 MiB peak_only_buffer") or \
            "256 MiB alloc_weights" not in dev[1]:
        fail("two devices: no 'all devices' composition first:\n" + "\n".join(dev))
    d1 = [l for l in dev if l.startswith("  device 1: at the peak (300 MiB, during step 1): 300 MiB peak_only_buffer")]
    d0 = [l for l in dev if l.startswith("  device 0: at the peak (256 MiB, during step 1): 256 MiB alloc_weights")]
    if not d0 or not d1 or "peak_only" in d0[0]:
        fail("two devices: each device's composition:\n" + "\n".join(dev))

    # the hysteresis: a ramp of 1000 rising peaks
    t0 = time.monotonic()
    ramp = run(vt, os.path.join(work, "ramp"), prog, "ramp", "1000")
    secs = time.monotonic() - t0
    words = ramp.split()
    copies, base, top, last = (int(words[i]) for i in (1, 3, 5, 7))
    bound = math.log(top / base) / math.log(1.01) + 2 + math.ceil(secs / 1.0)   # interval 1000 ms
    print("ramp: %d copies for 1000 rising peaks (bound %.1f over %.2f s), last copy %d of peak %d"
          % (copies, bound, secs, last, top))
    if copies > bound:
        fail("the ramp made %d copies, more than %.1f" % (copies, bound))
    if copies < math.log(top / base) / math.log(1.02):   # each rise of 1 % (+ one 1 MiB step) is copied
        fail("the ramp made only %d copies: each 1 %% rise should be copied" % copies)
    if last * 1.01 < top:
        fail("the last copy %d is more than 1 %% below the peak %d" % (last, top))
    print("check_peak: ok")


if __name__ == "__main__":
    main()
