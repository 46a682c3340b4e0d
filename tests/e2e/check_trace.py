#!/usr/bin/env python3
"""check_trace.py VRAMTRACE OUTDIR TRAINING_LOOP STEPS

The event trace (VRAMTRACE_TRACE=1) end to end on the training-loop example:
  - the torch export holds one alloc per allocation call and one free_completed per
    free call of the program (examples/training_loop.cu: per step two temporaries
    allocated and freed, one kept; three optimizer chunks; the weights);
  - the pickle uses no opcode above protocol 4 and loads with Python's pickle;
  - its structure is what torch.cuda.memory._memory_viz reads (keys and types), every
    event has frames (its stack id is defined in the stream), and replaying the
    trace from nothing leaves exactly the segments;
  - with VRAMTRACE_MAX_BYTES at its least, the trace file stays within it, ends with a
    STOP record, and the preload said so in one `vramtrace:` line; the export says the
    trace stops early and every event still has its frames (the stream was rewritten
    under the same cap).
No torch needed."""
import collections
import glob
import json
import os
import pickle
import pickletools
import re
import shutil
import struct
import subprocess
import sys

vt, out, prog, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def run(folder, env_extra, nsteps):
    shutil.rmtree(folder, ignore_errors=True)
    env = dict(os.environ, VRAMTRACE_TRACE="1", **env_extra)
    r = subprocess.run([vt, "run", "-o", folder, "--", prog, str(nsteps)], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"check_trace: the program failed ({r.returncode}): {r.stderr}")
    streams = glob.glob(os.path.join(folder, "vt.*.jsonl*"))
    traces = glob.glob(os.path.join(folder, "vt.*.trace"))
    if len(streams) != 1 or len(traces) != 1:
        sys.exit(f"check_trace: want one stream and one trace in {folder}: {os.listdir(folder)}")
    return streams[0], traces[0], r.stderr


# ---- the training loop, traced ----
stream, trace, _ = run(out, {}, steps)
pk = out + ".pickle"
r = subprocess.run([vt, "export", "--format", "torch", "--force", "-o", pk, stream], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"check_trace: export failed: {r.stderr}")
data = open(pk, "rb").read()
check(data[:1] == b"\x80" and data[1] <= 4, f"pickle protocol byte {data[1]} (want <= 4)")
top = max(op.proto for op, _, _ in pickletools.genops(data))
check(top <= 4, f"an opcode of protocol {top} (want <= 4)")
snap = pickle.loads(data)

want_alloc = 1 + 2 * steps + min(3, steps) + steps
want_free = 2 * steps + min(3, steps) + 1
acts = collections.Counter(e["action"] for t in snap["device_traces"] for e in t)
check(acts["alloc"] == want_alloc, f"alloc events {acts['alloc']}, the program made {want_alloc} allocations")
check(acts["free_completed"] == want_free, f"free_completed events {acts['free_completed']}, the program made "
      f"{want_free} frees")
check(acts["segment_alloc"] == want_alloc and acts["segment_free"] == want_free, f"segment events {acts}")

# the keys and types _memory_viz reads
check(isinstance(snap, dict), "top level is not a dict")
for k, ty in (("segments", list), ("device_traces", list)):
    check(isinstance(snap.get(k), ty), f"top level {k!r} is not a {ty.__name__}")


def frames_ok(fr, where):
    check(isinstance(fr, list), f"{where}: frames not a list")
    for f in fr if isinstance(fr, list) else []:
        check(isinstance(f, dict) and isinstance(f.get("filename"), str) and isinstance(f.get("line"), int)
              and isinstance(f.get("name"), str), f"{where}: bad frame {f!r}")


seg_int = ("device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream")
for i, s in enumerate(snap["segments"]):
    for k in seg_int:
        check(isinstance(s.get(k), int), f"segment {i}: {k} not an int")
    check(s.get("segment_type") in ("small", "large"), f"segment {i}: segment_type")
    check(isinstance(s.get("is_expandable"), bool), f"segment {i}: is_expandable")
    frames_ok(s.get("frames"), f"segment {i}")
    check(isinstance(s.get("blocks"), list) and s["blocks"], f"segment {i}: blocks")
    for b in s.get("blocks", []):
        for k in ("address", "size", "requested_size"):
            check(isinstance(b.get(k), int), f"segment {i} block: {k} not an int")
        check(b.get("state") in ("active_allocated", "active_pending_free", "inactive"), f"segment {i}: state")
        check(s["address"] <= b["address"] and b["address"] + b["size"] <= s["address"] + s["total_size"],
              f"segment {i}: block outside its segment")
        frames_ok(b.get("frames"), f"segment {i} block")
live = {}
for d, t in enumerate(snap["device_traces"]):
    check(isinstance(t, list), f"device_traces[{d}] not a list")
    last = 0
    for j, e in enumerate(t):
        w = f"device_traces[{d}][{j}]"
        check(isinstance(e.get("action"), str), f"{w}: action")
        for k in ("addr", "size", "stream", "time_us"):
            check(isinstance(e.get(k), int), f"{w}: {k} not an int")
        frames_ok(e.get("frames"), w)
        if e["action"] in ("alloc", "free_completed"):
            check(len(e["frames"]) > 0, f"{w}: no frames (its stack id is not defined in the stream)")
            check(e["time_us"] >= last, f"{w}: time goes back")
            last = e["time_us"]
        if e["action"] == "alloc":
            check((d, e["addr"]) not in live, f"{w}: alloc of a live address")
            live[(d, e["addr"])] = e["size"]
        elif e["action"] == "free_completed":
            check(live.pop((d, e["addr"]), None) == e["size"], f"{w}: free of no live block of that size")
segs = {(s["device"], s["address"]): s["total_size"] for s in snap["segments"]}
check(segs == live, f"segments ({len(segs)}) are not what the trace leaves live ({len(live)})")
check(len(segs) == steps, f"{len(segs)} segments at exit, want the {steps} leaked batches")
# cudaMalloc blocks belong to no stream: memory_viz's stream is the default one (0),
# never the CUcontext the record's column holds for them
streams = {s["stream"] for s in snap["segments"]} | {e["stream"] for t in snap["device_traces"] for e in t}
check(streams == {0}, f"cudaMalloc blocks exported with streams {sorted(streams)[:4]} (want 0: no stream)")

# the Perfetto export: one async slice per allocation (b) and per free (e), named by the
# size and the site, and a counter of the device's live bytes after every event
pf = out + ".perfetto.json"
r = subprocess.run([vt, "export", "--format", "perfetto", "--force", "-o", pf, stream], capture_output=True, text=True)
check(r.returncode == 0, f"perfetto export failed: {r.stderr}")
tev = json.load(open(pf))["traceEvents"] if r.returncode == 0 else []
bs = [e for e in tev if e["ph"] == "b" and e.get("cat") == "allocation"]
es = [e for e in tev if e["ph"] == "e" and e.get("cat") == "allocation"]
check(len(bs) == want_alloc and len(es) == want_free, f"perfetto: {len(bs)} b / {len(es)} e slices, want "
      f"{want_alloc} / {want_free}")
check(any("remember_batch" in e["name"] and e["name"].startswith("3 MiB") for e in bs),
      f"perfetto: no slice named '3 MiB remember_batch': {sorted({e['name'] for e in bs})[:6]}")
open_ids = {e["id"] for e in bs} - {e["id"] for e in es}
check(len(open_ids) == steps, f"perfetto: {len(open_ids)} slices left open, want the {steps} leaked batches")
check(all("context" in e["args"] and "stream" not in e["args"] for e in bs),
      "perfetto: a cudaMalloc block's slice names its CUcontext 'stream'")
ctr = [e for e in tev if e["ph"] == "C" and e["name"] == "gpu0 live bytes, every event"]
check(len(ctr) == want_alloc + want_free, f"perfetto: {len(ctr)} every-event counter samples")
check(all(a["ts"] <= b["ts"] for a, b in zip(ctr, ctr[1:])), "perfetto: the every-event counter goes back in time")
if ctr and bs:
    leaked = sum(e["args"]["size_bytes"] for e in bs if e["id"] in open_ids)
    check(ctr[-1]["args"]["bytes"] == leaked, f"perfetto: last live {ctr[-1]['args']['bytes']}, open slices {leaked}")
    check(max(c["args"]["bytes"] for c in ctr) > max(e["args"]["bytes"] for e in tev if e["ph"] == "C"
          and e["name"] == "gpu0 live bytes"), "perfetto: the every-event counter shows no within-step peak above the per-step one")

# the HTML report's timeline: with the trace its band is exact (the most live at any
# event): its largest value is the process's peak, and no point's band is below what
# its sites hold at the point's end; without the trace the key is absent
def html_views(src):
    h = out + ".html"
    rr = subprocess.run([vt, "report", "--format", "html", "--force", "-o", h, src], capture_output=True, text=True)
    check(rr.returncode == 0, f"html report failed: {rr.stderr}")
    txt = open(h, encoding="utf-8").read() if rr.returncode == 0 else ""
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', txt, re.S)
    check(m is not None, "html report: no vt-data")
    proc = json.loads(m.group(1))["procs"][0] if m else {"timeline": {"views": []}, "peak_bytes": 0}
    return proc, proc["timeline"]["views"]
proc, views = html_views(stream)
check(len(views) == 1 and views[0].get("band_source") == "trace", f"html: band_source {[v.get('band_source') for v in views]}")
if views:
    v = views[0]
    check(max(v["band"]) == proc["peak_bytes"], f"html: the trace band's most {max(v['band'])}, the peak {proc['peak_bytes']}")
    tops = [sum(s["live"][j] for s in v["sites"]) + v["other"]["live"][j] for j in range(len(v["band"]))]
    check(all(b >= t for b, t in zip(v["band"], tops)), "html: a trace band below its point's live bytes")
    check(sum(b > t for b, t in zip(v["band"], tops)) >= steps // 2, "html: the trace band shows no within-step peaks")
hidden = trace + ".hidden"
os.rename(trace, hidden)
try:
    _, views = html_views(stream)
    check(views and "band_source" not in views[0], "html: band_source without a trace")
finally:
    os.rename(hidden, trace)

# the trace file itself: header, record size
raw = open(trace, "rb").read()
check(raw[:8] == b"VTTRACE1" and struct.unpack_from("<II", raw, 8) == (1, 40), "trace header")
check((len(raw) - 16) % 40 == 0, "trace length not whole records")

# ---- bounded by VRAMTRACE_MAX_BYTES ----
cap = 65536
stream2, trace2, err = run(out + "_cap", {"VRAMTRACE_MAX_BYTES": str(cap)}, 1000)
r = subprocess.run([vt, "export", "--format", "torch", "--force", "-o", pk, stream2], capture_output=True, text=True)
check(r.returncode == 0 and "stops early" in r.stderr, f"capped export: rc {r.returncode}, {r.stderr!r}")
ev = [e for t in pickle.load(open(pk, "rb"))["device_traces"] for e in t if e["action"] == "alloc"]
check(len(ev) > 0 and all(e["frames"] for e in ev), "capped (the stream rewritten): an event without frames")
raw = open(trace2, "rb").read()
check(len(raw) <= cap, f"capped trace is {len(raw)} bytes, over {cap}")
check(len(raw) >= cap - 3 * 40, f"capped trace stopped early: {len(raw)} bytes")
check(raw[-1] == 4, "capped trace does not end with a STOP record")
check(err.count("vramtrace: event trace stopped") == 1, f"want one 'event trace stopped' line: {err}")

r = subprocess.run([vt, "export", "--format", "perfetto", "--force", "-o", pf, stream2], capture_output=True, text=True)
check(r.returncode == 0, f"capped perfetto export failed: {r.stderr}")
if r.returncode == 0:
    json.load(open(pf))   # valid JSON, or the test stops with the parse error

# ---- odd names: the module files gone (so the names are the stream's own) and every
# function named with markup, quotes, U+2028 and long multi-byte text, cut anywhere by
# the exports' buffers: the Perfetto export stays valid JSON with whole characters and
# the HTML report is written ----
stream3, trace3, _ = run(out + "_names", {"VRAMTRACE_COMPRESS": "0"}, 5)
odd = ['</script>"\\\u2028', "\u00e9" * 400, "\U0001F4A9" * 200, "Z" * 3000]
recs, k = [], 0
for ln in open(stream3, encoding="utf-8").read().splitlines():
    rec = json.loads(ln)
    if rec["t"] == "module":
        rec["path"] = "/nonexistent/" + "\u00e9" * 300 + str(rec["id"])
    elif rec["t"] == "stack":
        rec["frames"] = [[m, o, odd[(k := k + 1) % len(odd)] + str(k)] for m, o, _ in rec["frames"]]
    recs.append(json.dumps(rec, separators=(",", ":")))
open(stream3, "w", encoding="utf-8").write("\n".join(recs) + "\n")
r = subprocess.run([vt, "export", "--format", "perfetto", "--force", "-o", pf, stream3], capture_output=True, text=True)
check(r.returncode == 0, f"perfetto export with odd names failed: {r.stderr}")
if r.returncode == 0:
    bs = [e for e in json.load(open(pf, encoding="utf-8"))["traceEvents"] if e["ph"] == "b"]
    check(bs and any("\u00e9" in e["name"] or "\U0001F4A9" in e["name"] for e in bs),
          f"perfetto with odd names: no slice named by its site: {[e['name'][:40] for e in bs[:3]]}")
# a folder with a damaged trace (its header lost) beside a good one: the Perfetto export
# says which and goes on; the good process keeps its slices
bad = out + "_names/" + os.path.basename(trace)
shutil.copy(stream, out + "_names/")
with open(bad, "wb") as fh:
    fh.write(b"VTTRAC")
r = subprocess.run([vt, "export", "--format", "perfetto", "--force", "-o", pf, out + "_names"], capture_output=True,
                   text=True)
check(r.returncode == 0 and "left out of the export" in r.stderr and os.path.basename(bad) in r.stderr,
      f"perfetto with a damaged trace beside a good one: rc {r.returncode}, {r.stderr!r}")
if r.returncode == 0:
    check(any(e["ph"] == "b" for e in json.load(open(pf, encoding="utf-8"))["traceEvents"]),
          "perfetto with a damaged trace beside a good one: the good trace's slices are gone")
os.unlink(bad)
os.unlink(out + "_names/" + os.path.basename(stream))
r = subprocess.run([vt, "report", "--format", "html", "--force", "-o", out + "_names.html", stream3],
                   capture_output=True, text=True)
check(r.returncode == 0, f"HTML report with odd names failed: {r.stderr}")

for f in fails:
    print("check_trace: FAIL:", f)
print(f"check_trace: {acts['alloc']} alloc, {acts['free_completed']} free_completed, {len(segs)} segments;"
      f" capped trace {len(raw)} bytes")
sys.exit(1 if fails else 0)
