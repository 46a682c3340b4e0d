#!/usr/bin/env python3
"""Compact records, format version 4 (docs/snapshot-format.md "Version 4: what a
record leaves out").

check_compact.py VRAMTRACE LIBVRAMTRACE PROG OUTDIR ROOT

PROG (bench/bench_multigpu.c: one rank on 8 simulated devices, 41 sites changing per
step, 5 ms steps) runs under the preload with VRAMTRACE_COMPRESS=0 and a 100 ms host
interval. Checks:
  - the stream is version 4 and compact: the first snapshot record is complete (every
    device with every key, host with NVML); later delta records leave out unchanged
    devices, device keys and host samples (at most one host block per interval);
  - the same records expanded to complete version 1 records (every device, host
    sample, seq and site written in every record, by vramtrace.snapshots' replay)
    give the same `vramtrace report --format json`: verdicts, sites, steps,
    per-device figures, host signals;
  - the report says what the records say: each device's peak is the highest peak
    the records carry, free/total the last ones, the host signals' last values those
    of the last host sample, and the devices' live bytes those of the exit record.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

vt, lib, prog, out, root = sys.argv[1:6]
sys.path.insert(0, os.path.join(root, "python"))
from vramtrace import snapshots  # noqa: E402

STEPS, DEVICES, STEP_US = 60, 8, 5000


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def report(path):
    p = subprocess.run([vt, "report", "--format", "json", path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail("report %s exited %d: %s" % (path, p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout)


shutil.rmtree(out, ignore_errors=True)
os.makedirs(os.path.join(out, "v4"))
env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_OUTPUT=os.path.join(out, "v4"), VRAMTRACE_COMPRESS="0",
           VRAMTRACE_HOST_INTERVAL_MS="100", SIMCUDA_DEVICES=str(DEVICES), VRAMTRACE_LOG="quiet")
p = subprocess.run([prog, str(STEPS), str(DEVICES), str(STEP_US)], env=env, capture_output=True, text=True,
                   timeout=300)
if p.returncode != 0:
    fail("%s exited %d: %s" % (prog, p.returncode, p.stderr[-2000:]))
files = glob.glob(os.path.join(out, "v4", "vt.*.jsonl"))
if len(files) != 1:
    fail("expected one plain stream, found %r" % files)
with open(files[0]) as fh:
    raw = [json.loads(line) for line in fh]

# ---- the stream is version 4 and compact ----
if raw[0].get("version") != 4:
    fail("header version %r, expected 4" % raw[0].get("version"))
snaps = [r for r in raw if r.get("t") == "snapshot"]
first, deltas = snaps[0], [r for r in snaps if r.get("sites_delta") is True]
if first.get("sites_delta") or len(first.get("devices") or []) != DEVICES:
    fail("the first record is not complete: %r" % {k: first.get(k) for k in ("sites_delta", "devices")})
for d in first["devices"]:
    missing = {"free_bytes", "total_bytes", "live_bytes", "peak_bytes", "fragmentation", "kinds"} - set(d)
    if missing:
        fail("first record, device %r lacks %s" % (d.get("device"), sorted(missing)))
if "host" not in first or "rss_bytes" not in first["host"]:
    fail("the first record has no host signals")
if len(deltas) < STEPS - 5:
    fail("only %d delta records of %d" % (len(deltas), len(snaps)))
partial = sum(1 for r in deltas for d in r.get("devices", []) if "peak_bytes" not in d or "free_bytes" not in d)
if partial == 0:
    fail("no delta record leaves out an unchanged device key")
with_host = sum(1 for r in deltas if "host" in r)
elapsed_ms = (snaps[-1]["time_ns"] - first["time_ns"]) / 1e6
if with_host == 0 or with_host > elapsed_ms / 100 * 1.2 + 2:
    fail("%d delta records carry host signals over %.0f ms (interval 100 ms)" % (with_host, elapsed_ms))
if any("label" in r or "oom" in r or "allocations" in r or r.get("leak_warnings") == [] or
       "unfreed_at_exit" in r for r in deltas):
    fail("a delta record writes a key at its default")
if "exports" not in first or any("exports" in r or "imports" in r for r in deltas):
    fail("the IPC rows: in the first record %r, in a delta record %r" %
         ("exports" in first, any("exports" in r or "imports" in r for r in deltas)))
if any("seq" in r for r in deltas):
    fail("a delta record writes a seq that is the previous one plus 1")
print("stream: %d records, %d delta; %d device entries without an unchanged key; host in %d delta records "
      "over %.0f ms" % (len(snaps), len(deltas), partial, with_host, elapsed_ms))

# ---- expanded to complete version 1 records ----
recs = snapshots.decode_records([dict(r) for r in raw], files[0])
expanded = []
for r in recs:
    t = r.get("t")
    if t == "header":
        r = dict(r, version=1)
    elif t == "site":
        continue
    elif t == "snapshot":
        r = dict(r)
        r.pop("sites_delta", None)
    expanded.append(r)
exp_snaps = [r for r in expanded if r.get("t") == "snapshot"]
# the leak warnings a delta record leaves out, restored from its sites: the 64 KiB log
# buffer kept every step, from the header's leak_steps (10) on
warned = [r for r in exp_snaps if r["trigger"] == "step" and r["step"] >= 15]
if not warned or any([(w["kind"], w["device"], w["growth_bytes_per_step"]) for w in r["leak_warnings"]] !=
                     [("device", 0, 65536)] for r in warned):
    fail("restored leak warnings: %r" % [r["leak_warnings"] for r in warned[:2]])
if any("leak_warnings" in r for r in deltas):
    fail("a delta record writes leak_warnings")
if any(len(r["devices"]) != DEVICES or "host" not in r or "seq" not in r for r in exp_snaps):
    fail("the replay did not restore every device, host sample and seq")
os.makedirs(os.path.join(out, "v1"))
v1 = os.path.join(out, "v1", os.path.basename(files[0]))
with open(v1, "w") as fh:
    for r in expanded:
        fh.write(json.dumps(r, separators=(",", ":")) + "\n")

a, b = report(files[0]), report(v1)
pa, pb = a["processes"][0], b["processes"][0]
# the peak compositions name sites by the ids of "site" records, which version 1 has
# not: the copy cannot carry them (checked against the records by e2e_peak_composition)
for p_ in (pa, pb):
    p_.pop("peak_composition", None)
    for d_ in p_.get("devices", []):
        d_.pop("peak_composition", None)
for key in sorted(set(pa) | set(pb)):
    if key in ("file", "path", "files"):
        continue
    if pa.get(key) != pb.get(key):
        fail("report key %r differs between version 4 and its complete version 1 copy:\n%s\n%s" %
             (key, json.dumps(pa.get(key))[:1500], json.dumps(pb.get(key))[:1500]))
verdicts = sorted(s["verdict"] for s in pa.get("sites", []))
print("report: same for version 4 and its complete copy (%d sites, verdicts %s)" %
      (len(verdicts), {v: verdicts.count(v) for v in set(verdicts)}))

# ---- the report says what the records say ----
devs = {d["device"]: d for d in pa["devices"]}
if sorted(devs) != list(range(DEVICES)):
    fail("report devices %r" % sorted(devs))
for dev in range(DEVICES):
    rows = [d for r in exp_snaps for d in r["devices"] if d["device"] == dev]
    peak = max(max(d["peak_bytes"], d["live_bytes"]) for d in rows)
    if devs[dev]["peak_bytes"] != peak:
        fail("device %d: report peak %r, records %r" % (dev, devs[dev]["peak_bytes"], peak))
    last = [d for d in rows if d.get("free_bytes") is not None]
    if last and (devs[dev]["free_bytes"], devs[dev]["total_bytes"]) != (last[-1]["free_bytes"],
                                                                         last[-1]["total_bytes"]):
        fail("device %d: report free/total %r/%r, records %r/%r" % (dev, devs[dev]["free_bytes"],
             devs[dev]["total_bytes"], last[-1]["free_bytes"], last[-1]["total_bytes"]))
    if devs[dev]["live_bytes"] != rows[-1]["live_bytes"]:
        fail("device %d: report live %r, exit record %r" % (dev, devs[dev]["live_bytes"], rows[-1]["live_bytes"]))
hosts = [r["host"] for r in snaps if "host" in r]
host = pa.get("host_signals") or {}
if host.get("rss_bytes") != hosts[-1].get("rss_bytes"):
    fail("report rss %r, last host sample %r" % (host.get("rss_bytes"), hosts[-1].get("rss_bytes")))
nv = [h["nvml"] for h in hosts if "nvml" in h]
if nv:
    gpus = host.get("nvml_devices") or []
    if len(gpus) != len(nv[-1]["devices"]):
        fail("report NVML devices %d, last sample %d" % (len(gpus), len(nv[-1]["devices"])))
    for g in gpus:
        s = [d for d in nv[-1]["devices"] if d.get("uuid") == g.get("uuid")]
        if not s or s[0].get("used_bytes") != g.get("used_bytes"):
            fail("NVML device %r: report used %r, last sample %r" % (g.get("uuid"), g.get("used_bytes"), s))
print("report: device peaks, last free/total, live at exit, host and NVML last values as the records say "
      "(%d host samples, %d NVML)" % (len(hosts), len(nv)))
