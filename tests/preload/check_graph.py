#!/usr/bin/env python3
"""Graph memory under the preload, checked from outside the program (prog_graph.c).

  check_graph.py same   --lib L --bin B --simcuda S
      each scenario (rt, drv, leak) prints every CUDA call's result and errno: the
      output and exit status are identical with and without the preload.
  check_graph.py report --lib L --bin B --simcuda S --vramtrace V
      the planted leak (one captured 1,234,944-byte allocation per step, never freed)
      is found by `vramtrace report` at exactly that many bytes per step with kind
      graph; the graph that allocates and frees a temporary each step is churn; the
      graph pool's reserve kept after its graphs are gone is shown (text and JSON); a
      captured allocation whose graph never launches is in no site.
Exit 0 when every check holds; one "FAIL:" line and exit 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

LEAK_BYTES = 1234944
MiB = 1 << 20


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def env(a, preload, **extra):
    e = {k: v for k, v in os.environ.items()
         if not ((k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") or k in ("LD_PRELOAD", "VT_EXPECT_TRACKED"))}
    e["LD_LIBRARY_PATH"] = a.simcuda
    san = os.environ.get("VT_SANITIZER_PRELOAD")
    libs = ([san] if san else []) + ([a.lib] if preload else [])
    if libs:
        e["LD_PRELOAD"] = ":".join(libs)
    if preload:
        e["VT_EXPECT_TRACKED"] = "1"
    e.update({k: str(v) for k, v in extra.items()})
    return e


def run(a, scenario, preload, **extra):
    return subprocess.run([os.path.join(a.bin, "prog_graph"), scenario], env=env(a, preload, **extra),
                          capture_output=True, text=True, timeout=60)


def check_same(a, tmp):
    for scenario in ("rt", "drv", "leak"):
        x = run(a, scenario, False)
        y = run(a, scenario, True, VRAMTRACE_OUTPUT=os.path.join(tmp, "same_" + scenario))
        expect(x.returncode == 0, "%s without the preload exited %d: %s" % (scenario, x.returncode, x.stderr))
        expect(y.returncode == 0, "%s with the preload exited %d: %s" % (scenario, y.returncode, y.stderr))
        expect(x.stdout == y.stdout, "%s: output differs\n--- without\n%s--- with\n%s" % (scenario, x.stdout, y.stdout))
        expect(x.stdout.count("\n") > 20, "%s: too little output: %r" % (scenario, x.stdout))
    print("same ok: rt, drv, leak print identical results and errno with and without the preload")


def report(a, d, fmt):
    p = subprocess.run([a.vramtrace, "report", "--format", fmt, d], capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, "vramtrace report %s: %d %s" % (fmt, p.returncode, p.stderr))
    return p.stdout


def check_report(a, tmp):
    d = os.path.join(tmp, "leak")
    p = run(a, "leak", True, VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "leak exited %d: %s" % (p.returncode, p.stderr))
    doc = json.loads(report(a, d, "json"))
    procs = doc["processes"]
    expect(len(procs) == 1, "one process expected, got %d" % len(procs))
    sites = procs[0]["sites"]
    leaks = [s for s in sites if s["verdict"] == "leak"]
    expect(len(leaks) == 1, "one leak expected: %r" % [(s["title"], s["verdict"]) for s in sites])
    lk = leaks[0]
    expect(lk["kind"] == "graph", "leak kind %r, not graph" % lk["kind"])
    expect("graph_leaky_step" in lk["title"], "leak site %r" % lk["title"])
    expect(lk["growth_bytes_per_step"] == LEAK_BYTES,
           "leak grows %r bytes/step, expected %d" % (lk["growth_bytes_per_step"], LEAK_BYTES))
    expect(lk["unfreed_at_exit_bytes"] == 12 * LEAK_BYTES, "unfreed at exit %r" % lk["unfreed_at_exit_bytes"])
    temp = [s for s in sites if "graph_temp_step" in s["title"]]
    expect(len(temp) == 1 and temp[0]["kind"] == "graph" and temp[0]["verdict"] != "leak",
           "the freed temporary: %r" % [(s["title"], s["kind"], s["verdict"]) for s in temp])
    expect(temp[0]["peak_bytes"] == 4 * MiB, "temporary peak %r" % temp[0]["peak_bytes"])
    expect(not [s for s in sites if s["kind"] == "async"], "a captured allocation was counted as async")
    # one record per launch, whichever layer fired (cudaMallocAsync -> cuMemAllocAsync,
    # cudaGraphLaunch -> cuGraphLaunch): the leak site's alloc_total is 12
    files = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jsonl")]
    recs = [json.loads(l) for l in open(files[0]) if l.strip()]
    site_kind = {r["id"]: r.get("kind") for r in recs if r.get("t") == "site"}
    totals = {}   # alloc_total per site: a complete row sets it, a delta row adds to it
    for r in recs:
        if r.get("t") == "snapshot":
            for row in r.get("sites", []):
                if site_kind.get(row[0]) == "graph" and len(row) > 1:
                    totals[row[0]] = (totals.get(row[0], 0) if r.get("sites_delta") else 0) + row[1]
    expect(sorted(totals.values()) == [12, 12],
           "graph sites' alloc_total %r, expected 12 each (one per launch)" % totals)
    dev = procs[0]["devices"][0]
    # 12 leaked allocations of 2 MiB each on the device (its rounding), plus the 4 MiB
    # temporary's reserve that stays until cudaDeviceGraphMemTrim
    expect(dev.get("graph_used_bytes") == 12 * 2 * MiB and dev.get("graph_retention_bytes") == 4 * MiB,
           "graph pool in the JSON report: %r" % {k: v for k, v in dev.items() if k.startswith("graph")})
    text = report(a, d, "text")
    expect("4 MiB kept reserved after the graphs that used it are gone" in text,
           "text report lacks the graph pool line:\n" + text)

    d = os.path.join(tmp, "rt")
    p = run(a, "rt", True, VRAMTRACE_OUTPUT=d)
    expect(p.returncode == 0, "rt exited %d: %s" % (p.returncode, p.stderr))
    sites = json.loads(report(a, d, "json"))["processes"][0]["sites"]
    peaks = sorted((s["kind"], s["peak_bytes"]) for s in sites)
    expect(("async", 4096) in peaks and not [k for k in peaks if k[0] == "async" and k[1] != 4096],
           "rt: async sites %r" % peaks)
    expect(not [k for k in peaks if k[1] == 9 * MiB], "rt: the never-launched 9 MiB graph was counted: %r" % peaks)
    print("report ok: leak %d B/step kind graph, temporary churn, 4 MiB graph reserve kept" % LEAK_BYTES)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=("same", "report"))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--simcuda", required=True)
    ap.add_argument("--vramtrace")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vt_graph_")
    {"same": check_same, "report": check_report}[a.check](a, tmp)


if __name__ == "__main__":
    main()
