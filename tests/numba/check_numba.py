"""check_numba.py REPORT.json TRACED.json PLAIN.json [TENSORS_REPORT.json]

Checks `vramtrace report --format json` of tests/numba/numba_client.py run under
`vramtrace run` (TRACED.json: the program's own summary of that run) against what
the program did, and that the program saw the same results without the tracer
(PLAIN.json):
  - the same driver answers with and without the preload (IPC result, kernel
    attributes, error code of a missing function, free device memory at the end);
  - exactly one leak, in the main process, a device site whose Python frames name
    numba_client.py at the LEAK line, growing exactly LEAK_BYTES per step;
  - the temporaries (TEMP line) are churn, not a leak, and their peak is one burst
    of Numba's deferred deallocation: (CUDA_DEALLOCS_COUNT + 1) * TEMP_BYTES, given
    back steps * TEMPS // (CUDA_DEALLOCS_COUNT + 1) times;
  - to_device (PARAM), device_array (SHARED), pinned_array (PINNED) and mapped_array
    (MAPPED) are stable sites of their exact bytes and kinds; cuda.pinned (REGISTER)
    is host_pinned memory flagged registered, never a leak, 0 bytes at the end;
  - with IPC available (the driver answers cuIpcGetMemHandle): the importing
    process (numba_import.py) read the exporter's bytes, is in the report with one
    ipc_import site of the exported bytes naming its OPEN line, lists the import as
    still open at exit from the exporter's pid, and counts none of it as its own;
    the exporter has no imported bytes (its SHARED site is checked above).
  - TENSORS_REPORT.json (the same program under `vramtrace run --tensors`): the same
    sites (title, kind, verdict, growth per step, peak) in each process, since Numba
    already allocates per array; the report says the process ran with --tensors.
Exit 0 = pass, 1 = a check failed (one FAIL line each).
"""
import json
import os
import sys

report_path, traced_path, plain_path = sys.argv[1:4]
doc = json.load(open(report_path))
run = json.load(open(traced_path))
plain = json.load(open(plain_path))
fails = []


def fail(msg):
    fails.append(msg)


def answers(summary):
    """What the driver answered, without pids."""
    out = {k: summary.get(k) for k in ("ipc", "kernel", "callbacks", "mem_free_at_end",
                                       "deallocs_count", "pending_deallocs")}
    out["ipc"] = {k: v for k, v in (out["ipc"] or {}).items() if k != "child"}
    return out


for key, value in answers(run).items():
    if value != answers(plain)[key]:
        fail(f"{key} differs under the preload: {value!r} != {answers(plain)[key]!r} without it")

procs = {p["pid"]: p for p in doc.get("processes", [])}
main = procs.get(run["pid"])
if main is None:
    print(f"FAIL: pid {run['pid']} not in the report (pids {sorted(procs)})")
    sys.exit(1)
src = os.path.realpath(run["file"])
lines = run["lines"]


def site_at(proc, tag):
    """The sites of proc whose Python frames name numba_client.py at the line of tag."""
    return [s for s in proc["sites"]
            if any(os.path.realpath(f.get("file") or "") == src and f.get("line") == lines[tag]
                   for f in s.get("python_frames", []))]


def one(proc, tag):
    hits = site_at(proc, tag)
    if len(hits) != 1:
        fail(f"{tag} (line {lines[tag]}): {len(hits)} sites, expected 1")
        return None
    return hits[0]


def show(s):
    return (f"{s.get('verdict')} {s.get('kind')} flags={s.get('flags')} "
            f"{s.get('growth_bytes_per_step')} B/step peak {s.get('peak_bytes')} "
            f"last {s.get('last_live_bytes')} churn {s.get('churn_events')}")


steps = run["steps"]
if [c[0] for c in run.get("callbacks", [])] != list(range(steps)):
    fail(f"stream callbacks {run.get('callbacks')}, expected one per step in order")
if main.get("steps") != steps or not main.get("step_marked"):
    fail(f"steps {main.get('steps')} (marked {main.get('step_marked')}), expected {steps} marked")

leaks = [s for p in procs.values() for s in p["sites"] if s.get("verdict") == "leak"]
if len(leaks) != 1:
    fail(f"{len(leaks)} leak sites, expected 1: " + "; ".join(show(s) for s in leaks))
s = one(main, "LEAK")
if s is not None:
    if s.get("verdict") != "leak" or s.get("kind") != "device":
        fail(f"LEAK site: {show(s)}, expected a device leak")
    if s.get("growth_bytes_per_step") != run["leak_bytes_per_step"]:
        fail(f"LEAK site grows {s.get('growth_bytes_per_step')} B/step, expected exactly "
             f"{run['leak_bytes_per_step']}")
    title = s.get("title", "")
    print(f"leak: {s.get('growth_bytes_per_step'):.0f} B/step at {os.path.basename(src)}:{lines['LEAK']} "
          f"(site title: {title})")

burst = run["deallocs_count"] + 1
s = one(main, "TEMP")
if s is not None:
    want_peak = burst * run["temp_bytes"]
    want_churn = steps * run["temps_per_step"] // burst
    if s.get("verdict") != "churn" or s.get("kind") != "device":
        fail(f"TEMP site: {show(s)}, expected device churn")
    if s.get("peak_bytes") != want_peak:
        fail(f"TEMP site peak {s.get('peak_bytes')}, expected one burst {want_peak}")
    if s.get("churn_events") != want_churn:
        fail(f"TEMP site gave back {s.get('churn_events')} times, expected {want_churn} bursts")
    print(f"temporaries: {s.get('verdict')}, peak {s.get('peak_bytes')} B = {burst} x "
          f"{run['temp_bytes']}, {s.get('churn_events')} bursts")

for tag, kind, nbytes in (("PARAM", "device", run["param_bytes"]),
                          ("SHARED", "device", run["ipc"].get("bytes", 4 << 20)),
                          ("PINNED", "host_pinned", run["pinned_bytes"]),
                          ("MAPPED", "host_pinned", run["mapped_bytes"])):
    s = one(main, tag)
    if s is None:
        continue
    if (s.get("verdict"), s.get("kind"), s.get("peak_bytes"), s.get("last_live_bytes")) != \
            ("stable", kind, nbytes, nbytes) or s.get("flags"):
        fail(f"{tag} site: {show(s)}, expected stable {kind} of {nbytes} B, no flags")

s = one(main, "REGISTER")
if s is not None:
    if s.get("kind") != "host_pinned" or "registered" not in (s.get("flags") or []) or \
            s.get("verdict") == "leak" or s.get("peak_bytes") != run["register_bytes"] or \
            s.get("last_live_bytes") != 0:
        fail(f"REGISTER site: {show(s)}, expected registered host_pinned, "
             f"peak {run['register_bytes']}, 0 at the end, not a leak")

if run["ipc"].get("available"):
    if run["ipc"].get("child_first_byte") != 7:
        fail(f"the importer read {run['ipc'].get('child_first_byte')} from the exported array, not 7")
    child = procs.get(run["ipc"]["child"])
    imp_src = os.path.join(os.path.dirname(src), "numba_import.py")
    open_line = next(i + 1 for i, l in enumerate(open(imp_src).read().splitlines())
                     if l.rstrip().endswith("# OPEN"))
    if child is None:
        fail(f"importing process {run['ipc']['child']} not in the report")
    else:
        imp = [s for s in child["sites"] if s.get("kind") == "ipc_import"]
        if len(imp) != 1 or imp[0].get("peak_bytes") != run["ipc"]["bytes"]:
            fail(f"importer: {[show(s) for s in imp]}, expected one ipc_import site of "
                 f"{run['ipc']['bytes']} B")
        elif not any(os.path.realpath(f.get("file") or "") == os.path.realpath(imp_src) and
                     f.get("line") == open_line for f in imp[0].get("python_frames", [])):
            fail(f"the import's site does not name numba_import.py:{open_line}: "
                 f"{imp[0].get('python_frames')}")
        want = [{"exporter_pid": run["pid"], "bytes": run["ipc"]["bytes"]}]
        got = [{k: i.get(k) for k in ("exporter_pid", "bytes")} for i in child.get("imports", [])]
        if got != want or child.get("imported_open_bytes") != run["ipc"]["bytes"]:
            fail(f"importer's open imports {child.get('imports')} "
                 f"({child.get('imported_open_bytes')} B), expected {want}")
        if child.get("peak_bytes") != 0 or child.get("unfreed_at_exit_bytes") != 0:
            fail(f"imported bytes counted as the importer's own: peak {child.get('peak_bytes')}, "
                 f"unfreed {child.get('unfreed_at_exit_bytes')}")
        print(f"IPC: pid {child['pid']} still has {child.get('imported_open_bytes')} B of pid "
              f"{run['pid']} open at exit")
    if any(s.get("kind") == "ipc_import" for s in main["sites"]) or main.get("imported_open_bytes"):
        fail("the exporter has imported bytes")
else:
    # the simulated driver has legacy IPC: a run that could not export or open is a failure
    fail(f"IPC was not exercised: the driver answered {run['ipc'].get('error')}")

def site_set(proc):
    return sorted((s.get("title"), s.get("kind"), s.get("verdict"), round(s.get("growth_bytes_per_step") or 0),
                   s.get("peak_bytes")) for s in proc["sites"])


if len(sys.argv) > 4:
    tdoc = json.load(open(sys.argv[4]))
    tprocs = sorted(tdoc["processes"], key=lambda p: len(p["sites"]), reverse=True)
    procs = sorted(doc["processes"], key=lambda p: len(p["sites"]), reverse=True)
    if len(tprocs) != len(procs):
        fail(f"--tensors: {len(tprocs)} processes, without: {len(procs)}")
    for a, b in zip(procs, tprocs):
        if site_set(a) != site_set(b):
            fail(f"--tensors changed the sites of a process: without {site_set(a)}, with {site_set(b)}")
        if b.get("tensors") is not True:
            fail(f"--tensors: pid {b.get('pid')} is not marked as run with --tensors")
    if not any("--tensors" in f for f in fails):
        print(f"--tensors: the same {sum(len(p['sites']) for p in procs)} sites in {len(procs)} processes")

for f in fails:
    print("FAIL:", f)
print(f"check_numba: {'FAIL' if fails else 'ok'} ({len(main['sites'])} sites in pid {main['pid']})")
sys.exit(1 if fails else 0)
