#!/usr/bin/env python3
"""gen_edge.py OUTDIR [GOLDEN_JSONL...]: snapshot folders of unusual shape for the browser
test of the HTML report (hostile.test.mjs), written as version 4 files with complete
records (docs/snapshot-format.md). Each folder OUTDIR/<name> is one report:

  hostile-<dir>  each GOLDEN_JSONL (in folder <dir>) with every host, command line, module path,
                 native and Python frame name and label replaced by markup, quotes,
                 U+2028, and long multi-byte text
  devices12      twelve devices, device / host_pinned / managed sites on each, 30 steps
  ooms300        300 out-of-memory events, each with its live blocks, on 2 devices
  one-step       a start and an exit record only (no step)
  pinned-only    host-pinned memory only, nothing on a device
  bad-beside     two good processes and a file that is not a snapshot, side by side
  sites600       600 sites, more than the page keeps curves of (the panel says so)
  gaps           steps 10-14 lost to a write fault (a gap record with markup in its
                 error text), and a gap that lost no snapshot
Deterministic; nothing random."""
import json, os, sys

out = sys.argv[1]
HOSTILE = ['</script><script>alert(1)</script>', '<!--<script>', '"\'><img src=x onerror=alert(1)>',
           'a\u2028b\u2029c', '&amp;&lt;', '</style><b>x</b>', '\u00e9' * 300 + 'x', 'Z' * 3000,
           '\U0001F4A9' * 150, '${x}`\\n\\', '<svg onload=alert(1)>']
_k = [0]
def hostile():
    _k[0] += 1
    return HOSTILE[_k[0] % len(HOSTILE)] + '#%d' % _k[0]

def header(pid, host='node1', rank=None, restart=None, cmd=None):
    h = {"t": "header", "format": "vramtrace-snapshot", "version": 4, "pid": pid, "ppid": 1, "host": host,
         "exe": "/bin/prog", "cmdline": cmd or ["prog"], "rank": rank, "local_rank": rank,
         "world_size": None if rank is None else 4, "start_ns": 1700000000000000000 + pid,
         "clock": "CLOCK_MONOTONIC", "mono_start_ns": 1000, "depth": 32, "interval_ms": 10, "step_every": 1}
    if restart is not None: h["restart"] = restart
    return h

def defs(nsites, kinds_devs):
    """module, one stack per site, a site per (stack, kind, device) in kinds_devs[k % len]"""
    recs = [{"t": "module", "id": 0, "path": "/opt/lib/libmodel.so", "build_id": "", "bias": 4096}]
    sites = []
    for k in range(1, nsites + 1):
        recs.append({"t": "stack", "id": k, "frames": [[0, 4096 + 16 * k, "alloc_%d" % k], [0, 8192, "main"]]})
        kind, dev = kinds_devs[k % len(kinds_devs)]
        recs.append({"t": "site", "id": k, "stack": k, "kind": kind, "device": dev})
        sites.append((k, kind, dev))
    return recs, sites

def snapshot(step, t, trigger, sites, live, extra=None):
    """a complete record: live[k] bytes per site k (one block each)"""
    devs = {}
    rows = []
    for k, kind, dev in sites:
        b = live.get(k, 0)
        rows.append([k, step + 1, b * (step + 1), step, b, 1 if b else 0, b, 0, 0])
        d = devs.setdefault(dev, {"device": dev, "free_bytes": 1 << 33, "total_bytes": 1 << 34, "live_bytes": 0,
                                  "peak_bytes": 0, "kinds": {}})
        d["live_bytes"] += b
        d["peak_bytes"] = max(d["peak_bytes"], d["live_bytes"])
        kk = d["kinds"].setdefault(kind, {"live_bytes": 0, "live_count": 0, "peak_bytes": 0})
        kk["live_bytes"] += b; kk["live_count"] += 1 if b else 0; kk["peak_bytes"] = kk["live_bytes"]
    r = {"t": "snapshot", "trigger": trigger, "time_ns": t, "step": step, "step_marked": True,
         "devices": list(devs.values()), "sites_delta": False, "sites": rows}
    if extra: r.update(extra)
    return r

def write(folder, name, recs):
    os.makedirs(os.path.join(out, folder), exist_ok=True)
    with open(os.path.join(out, folder, name), 'w', encoding='utf-8') as f:
        for r in recs: f.write(json.dumps(r, separators=(',', ':')) + '\n')

def run(pid, nsteps, kinds_devs, nsites, oom_every=0, host='node1', rank=None, restart=None, label_every=0):
    recs = [header(pid, host, rank, restart)]
    d, sites = defs(nsites, kinds_devs)
    recs += d
    recs.append(snapshot(0, 1000, "start", sites, {}))
    t = 1000
    for s in range(nsteps):
        t += 10_000_000
        live = {k: (1 << 20) * (k % 7 + 1) + (s * 4096 if k % 5 == 0 else 0) for k, _, _ in sites}
        extra = {"label": "mark %d" % s} if label_every and s % label_every == 0 else None
        recs.append(snapshot(s, t, "step", sites, live, extra))
        if oom_every and s % oom_every == 0:
            k, kind, dev = sites[s % len(sites)]
            allocs = [[0x7f0000000000 + (i << 24), live[i + 1], sites[i][1], sites[i][2], i + 1, 0, 1000, 1, 0]
                      for i in range(min(len(sites), 40)) if live[i + 1]]
            recs.append(snapshot(s, t + 1, "oom", sites, live, {
                "oom": {"api": "cudaMalloc", "kind": kind, "device": dev, "requested_bytes": (1 << 30) + s,
                        "result": 2, "free_bytes": 1 << 29, "total_bytes": 1 << 34, "tracked_bytes": 1 << 28,
                        "stack": k},
                "allocations": allocs}))
    t += 10_000_000
    recs.append(snapshot(nsteps, t, "exit", sites, {}, {"unfreed_at_exit": True, "allocations": []}))
    return recs

write("devices12", "vt.node1.100.1700000000000000100.jsonl",
      run(100, 30, [(k, d) for d in range(12) for k in ("device", "host_pinned", "managed")], 72))
write("ooms300", "vt.node1.101.1700000000000000101.jsonl", run(101, 300, [("device", 0), ("device", 1)], 20, oom_every=1))
write("one-step", "vt.node1.102.1700000000000000102.jsonl", run(102, 0, [("device", 0)], 3))
write("pinned-only", "vt.node1.103.1700000000000000103.jsonl", run(103, 20, [("host_pinned", -1)], 4))
write("bad-beside", "vt.node1.104.1700000000000000104.jsonl", run(104, 20, [("device", 0)], 4, rank=0))
write("bad-beside", "vt.node1.105.1700000000000000105.jsonl", run(105, 20, [("device", 0)], 4, rank=1, restart=1))
write("sites600", "vt.node1.107.1700000000000000107.jsonl", run(107, 12, [("device", 0)], 600))
recs = [r for r in run(108, 30, [("device", 0)], 5) if not (r["t"] == "snapshot" and 10 <= r["step"] <= 14)]
at = next(i for i, r in enumerate(recs) if r["t"] == "snapshot" and r["step"] == 15)
recs[at:at] = [{"t": "gap", "records": 5, "first_step": 10, "last_step": 14, "first_ns": 110_001_000,
                "last_ns": 150_001_000, "errno": 28, "error": "</script><!-- " + "\u00e9" * 300},
               {"t": "gap", "records": 0, "first_step": None, "last_step": None, "first_ns": None, "last_ns": None,
                "errno": 2, "error": "the file was removed"}]
write("gaps", "vt.node1.108.1700000000000000108.jsonl", recs)
os.makedirs(os.path.join(out, "bad-beside"), exist_ok=True)
with open(os.path.join(out, "bad-beside", "vt.node1.106.1700000000000000106.jsonl"), 'w') as f:
    f.write('{"t":"header","format":"vramtrace-snapshot","version":4,"pid":106}\nnot json at all\n</script>\n')

for golden in sys.argv[2:]:   # a golden file's names made hostile, its numbers kept
    recs = []
    for ln in open(golden, encoding='utf-8').read().splitlines():
        r = json.loads(ln)
        t = r.get('t')
        if t == 'header':
            r['host'] = '</script><!--\u2028' + '\u00e9' * 200
            r['exe'] = hostile(); r['cmdline'] = [hostile(), hostile(), '\u00e9' * 500]
        elif t == 'module':
            r['path'] = '/x/' + hostile()
        elif t == 'stack':
            r['frames'] = [[m, off, hostile() if j % 3 != 2 else None] for j, (m, off, f) in enumerate(r['frames'])]
            if 'py' in r: r['py'] = [[hostile(), hostile(), ln_, ni] for (_, _, ln_, ni) in r['py']]
        elif t == 'snapshot' and r.get('step', 0) % 3 == 1:
            r['label'] = hostile()
        recs.append(r)
    write("hostile-" + os.path.basename(os.path.dirname(os.path.abspath(golden))), os.path.basename(golden), recs)
