#!/usr/bin/env python3
"""gen_fixtures.py - writes golden snapshot sets for the analyzer tests.

Each scenario simulates a CUDA program allocation by allocation on a simulated
device (first-fit address space, free memory = total - used - untracked) and
writes the JSON Lines stream that docs/snapshot-format.md specifies, in two
modes: steps marked by vramtrace_step() ("-step") and steps cut by the periodic
snapshot interval ("-periodic", step_marked false, snapshots not aligned with
iterations). Next to each set it writes expect.json: the verdicts the scenario
was BUILT to produce (not what the analyzer says), which check_golden.py
compares against `vramtrace report --format json`.

Sets named "<scenario>-<mode>-v2" are the same programs written in format
version 2 (site rows; periodic and step snapshots list only changed sites,
"sites_delta": true), and "-v3" in format version 3 (the same, but a delta
record's rows are differences from the previous record's rows, trailing zeros
left out), and "-v4" in format version 4 (the same, and a delta record also
leaves out the devices, device keys, kind figures, host, annotations, seq and
step_marked that did not change, the leak warnings, and keys at their default):
their reports must equal the version 1 sets' reports. Every other set stays
version 1, so the analyzer keeps reading old files.

Usage: gen_fixtures.py OUTDIR        (deterministic: fixed seeds, fixed clocks)
"""
import json
import os
import random
import shutil
import sys

MiB = 1 << 20
GiB = 1 << 30
HOST = "node7"
EXE_BUILD_ID = "5f1c0ffee0ddba11c0de0000000000000000beef"
# format version the Proc objects write (main() sets 2 / 3 / 4 for the "-v2" / "-v3" / "-v4" sets)
VERSION = 1
SITE_COLUMNS = ("stack", "kind", "device", "live_bytes", "live_count", "interval_peak_bytes",
                "alloc_total", "alloc_bytes_total", "free_total", "growth_steps", "growth_bytes")
# version 3: a row is [site id, then these version 2 columns] (common/vt_format.h VT_SITE3_ORDER)
SITE3_ORDER = (6, 7, 8, 3, 4, 5, 9, 10)
# scenarios also written as versions 2, 3 and 4
V2_SCENARIOS = ("leak_churn", "reset", "oom_frag", "torn", "python_train")

# function -> offset inside the (fictitious) program module
FUNC_OFF = {}


def off_of(fn):
    if fn not in FUNC_OFF:
        FUNC_OFF[fn] = 0x11a0 + 0x140 * len(FUNC_OFF)
    return FUNC_OFF[fn]


def dumps(o):
    return json.dumps(o, separators=(",", ":"))


class Proc:
    """One simulated process writing one snapshot stream."""

    def __init__(self, outdir, name, pid, mode, rank=None, total=16 * GiB, untracked=300 * MiB,
                 iter_time=10, period=None, seed=1, ppid=4000):
        self.mode = mode
        self.name = name
        self.pid = pid
        self.rnd = random.Random(seed)
        self.start_ns = 1700000000000000000 + pid * 1000
        self.path = os.path.join(outdir, "vt.%s.%d.%d.jsonl" % (HOST, pid, self.start_ns))
        self.f = open(self.path, "w")
        self.total = total
        self.untracked = untracked
        self.base = 0x7f0000000000
        self.iter_time = iter_time
        self.period = period if period is not None else iter_time
        self.t = 0.0               # simulated ms
        self.next_periodic = self.period * 0.37   # out of phase with iterations
        self.step = 0
        self.seq = 0
        self.blocks = {}           # addr -> [size, key, step, birth_ns]
        self.sites = {}            # key -> stats
        self.stack_ids = {}        # tuple(chain) -> id
        self.prev_written = {}     # key -> tuple written last time
        self.peak = 0
        self.annotations = {}      # key -> latest value (docs/snapshot-format.md "annotations")
        self.host = None           # function(proc) -> the snapshot's "host" object
        self.version = VERSION
        self.prev_rows = None      # version 2: key -> row of the previous snapshot
        self.site_ids = {}         # version 3: (stack, kind, device) -> site id defined in this file
        self.last_full = None      # version 4: the previous snapshot as version 3 wrote it
        h = {"t": "header", "format": "vramtrace-snapshot", "version": self.version}
        h.update({"pid": pid, "ppid": ppid,
                  "host": HOST, "exe": "/opt/vtdemo/bin/" + name, "cmdline": ["/opt/vtdemo/bin/" + name, "--steps"],
                  "rank": rank, "local_rank": rank, "world_size": None if rank is None else 2,
                  "start_ns": self.start_ns, "clock": "CLOCK_MONOTONIC", "mono_start_ns": 123456789,
                  "depth": 32, "interval_ms": self.period, "step_every": 1})
        self.write(h)
        self.write({"t": "module", "id": 0, "path": "/opt/vtdemo/bin/" + name, "build_id": EXE_BUILD_ID, "bias": 0x555555554000})
        self.write({"t": "module", "id": 1, "path": "/usr/local/cuda/lib64/libcudart.so.13", "build_id": "0123456789abcdef0123456789abcdef01234567", "bias": 0x7ffff7a00000})
        # a real path with a build-id that cannot match: the analyzer must fall back to the written name
        self.write({"t": "module", "id": 2, "path": "/usr/lib/x86_64-linux-gnu/libc.so.6", "build_id": "00" * 20, "bias": 0x7ffff7800000})
        self.snapshot("start")

    def write(self, rec):
        self.f.write(dumps(rec) + "\n")

    # -- stacks and sites --
    def stack(self, chain):
        """chain: the program's functions, innermost (the CUDA caller) first."""
        chain = tuple(chain)
        if chain not in self.stack_ids:
            sid = 100 + len(self.stack_ids) * 7
            frames = [[1, 0x4a2f0, "cudaMalloc"], [1, 0x4a010, None]]   # runtime frames: trimmed by the analyzer
            frames += [[0, off_of(fn) + 0x2b, fn] for fn in chain]
            frames += [[0, off_of("main") + 0x57, "main"], [2, 0x29d90, "__libc_start_main"]]
            self.write({"t": "stack", "id": sid, "frames": frames})
            self.stack_ids[chain] = sid
        return self.stack_ids[chain]

    def raw_stack(self, name, frames, py=None):
        """A stack written as given (frames innermost first, py: the Python frames)."""
        if name not in self.stack_ids:
            sid = 100 + len(self.stack_ids) * 7
            rec = {"t": "stack", "id": sid, "frames": frames}
            if py is not None:
                rec["py"] = py
            self.write(rec)
            self.stack_ids[name] = sid
        return self.stack_ids[name]

    def site(self, key):
        if key not in self.sites:
            self.sites[key] = {"live": 0, "count": 0, "ipeak": 0, "alloc": 0, "abytes": 0, "free": 0}
        return self.sites[key]

    # -- device memory --
    def used(self):
        return sum(b[0] for b in self.blocks.values())

    def free_bytes(self):
        return self.total - self.untracked - self.used()

    def find_gap(self, size):
        cap_end = self.base + self.total - self.untracked
        cur = self.base
        for a in sorted(self.blocks):
            if a - cur >= size:
                return cur
            cur = max(cur, a + self.blocks[a][0])
        return cur if cap_end - cur >= size else None

    def alloc(self, chain, size, kind="device", dev=0, sid=None):
        self.advance(0.01)
        key = (self.stack(chain) if sid is None else sid, kind, dev)
        addr = self.find_gap(size)
        if addr is None:
            self.oom(key, size)
            return None
        self.blocks[addr] = [size, key, self.step, int(self.t * 1e6)]
        s = self.site(key)
        s["live"] += size
        s["count"] += 1
        s["alloc"] += 1
        s["abytes"] += size
        s["ipeak"] = max(s["ipeak"], s["live"])
        self.peak = max(self.peak, self.used())
        return addr

    def free(self, addr):
        self.advance(0.01)
        size, key = self.blocks.pop(addr)[:2]
        s = self.site(key)
        s["live"] -= size
        s["count"] -= 1
        s["free"] += 1

    def device_reset(self):
        """cudaDeviceReset: every ordinary allocation is freed by the runtime."""
        for a in list(self.blocks):
            self.free(a)

    def fragmentation(self):
        gaps = []
        bl = sorted(self.blocks.items())
        for (a, b), (a2, _) in zip(bl, bl[1:]):
            g = a2 - (a + b[0])
            if g > 0:
                gaps.append(g)
        if len(gaps) < 2:
            return 0.0
        return round(1.0 - max(gaps) / sum(gaps), 6)

    # -- time and steps --
    def advance(self, dt):
        end = self.t + dt
        while self.mode == "periodic" and self.next_periodic <= end:
            self.t = self.next_periodic
            self.step += 1
            self.snapshot("periodic")
            self.next_periodic += self.period
        self.t = end

    def mark_step(self):
        """vramtrace_step(): the step snapshot closes the step that just ended."""
        if self.mode == "step":
            self.snapshot("step")
            self.step += 1

    # -- records --
    def site_rows(self, only_live=False):
        rows = []
        for key in sorted(self.sites):
            s = self.sites[key]
            cur = (s["live"], s["count"], s["alloc"], s["free"])
            if only_live and not s["live"]:
                continue
            if not s["live"] and self.prev_written.get(key) == cur and not only_live:
                continue
            rows.append({"stack": key[0], "kind": key[1], "device": key[2], "live_bytes": s["live"],
                         "live_count": s["count"], "interval_peak_bytes": max(s["ipeak"], s["live"]),
                         "alloc_total": s["alloc"], "alloc_bytes_total": s["abytes"], "free_total": s["free"],
                         "growth_steps": 0, "growth_bytes": 0})
            self.prev_written[key] = cur
            s["ipeak"] = s["live"]
        return rows

    def snapshot(self, trigger, oom=None, allocations=False, unfreed=False):
        self.seq += 1
        used = self.used()
        rec = {"t": "snapshot", "seq": self.seq, "trigger": trigger, "label": None,
               "time_ns": int(self.t * 1e6) + 1000, "step": self.step, "step_marked": self.mode == "step",
               "devices": [{"device": 0, "free_bytes": self.free_bytes(), "total_bytes": self.total,
                            "live_bytes": used, "peak_bytes": self.peak, "fragmentation": self.fragmentation(),
                            "pool_reserved_bytes": 0, "pool_used_bytes": 0,
                            "kinds": {"device": {"live_bytes": used, "live_count": len(self.blocks), "peak_bytes": self.peak,
                                                 "alloc_total": 0, "free_total": 0, "failed_total": 0, "alloc_bytes_total": 0}}}],
               "sites": self.site_rows(), "leak_warnings": [], "oom": oom,
               "allocations": None, "unfreed_at_exit": unfreed, "dropped_records": 0}
        if self.version >= 2:
            self.rows_v2(rec, trigger)
        if allocations:
            rec["allocations"] = [[a, b[0], b[1][1], b[1][2], b[1][0], b[2], b[3], 4242, 0]
                                  for a, b in sorted(self.blocks.items())]
        if self.annotations:
            rec["annotations"] = dict(self.annotations)
        if self.host is not None:
            rec["host"] = self.host(self)
        if self.version >= 4:
            self.compact_v4(rec)
        self.write(rec)

    def compact_v4(self, rec):
        """Version 4 (docs/snapshot-format.md "Version 4: what a record leaves out"),
        written here independently of the preload: keys at their default left out;
        a delta record also leaves out what equals the previous record's."""
        full = json.loads(json.dumps(rec))
        last = self.last_full
        delta = rec.get("sites_delta") is True
        for k, v in (("label", None), ("oom", None), ("allocations", None), ("unfreed_at_exit", False),
                     ("sites_delta", False), ("leak_warnings", [])):
            if k in rec and rec[k] == v:
                del rec[k]
        for k, v in (("dropped_records", 0), ("step_marked", False)):
            if not delta and rec.get(k) == v:
                del rec[k]
        if delta:
            rec.pop("leak_warnings", None)
            if rec["seq"] == last["seq"] + 1:
                del rec["seq"]
            for k in ("step_marked", "dropped_records"):
                if rec.get(k) == last.get(k):
                    rec.pop(k, None)
            old = {d["device"]: d for d in last.get("devices", [])}
            devs = []
            for d in rec.get("devices", []):
                o = old.get(d["device"])
                if o is None:
                    devs.append(d)
                    continue
                e = {"device": d["device"]}
                for pair in (("free_bytes", "total_bytes"), ("live_bytes",), ("peak_bytes",), ("fragmentation",),
                             ("pool_reserved_bytes",), ("pool_used_bytes",),
                             ("graph_reserved_bytes", "graph_used_bytes")):
                    if any(k in d and d[k] != o.get(k) for k in pair):
                        e.update({k: d[k] for k in pair if k in d})
                kinds = {}
                for kn, fig in d.get("kinds", {}).items():
                    ch = {k: v for k, v in fig.items() if o.get("kinds", {}).get(kn, {}).get(k, 0) != v}
                    if ch:
                        kinds[kn] = ch
                if kinds:
                    e["kinds"] = kinds
                if len(e) > 1:
                    devs.append(e)
            if devs:
                rec["devices"] = devs
            else:
                rec.pop("devices", None)
            if "host" in rec and rec["host"] == last.get("host"):
                del rec["host"]
            ann = {k: v for k, v in rec.get("annotations", {}).items() if last.get("annotations", {}).get(k) != v}
            if ann:
                rec["annotations"] = ann
            else:
                rec.pop("annotations", None)
        self.last_full = full

    def rows_v2(self, rec, trigger):
        """Version 2 sites: rows; a periodic/step record lists only the rows that
        differ from the previous snapshot's (and every row at 0 live bytes), as
        preload/write/vt_sitediff.c does; other triggers stay complete. Version 3: each
        site is defined once by a "site" record (written here, before the
        snapshot), rows are [site id, counters in SITE3_ORDER], and a delta
        record's rows are differences from the previous row, no trailing zeros."""
        rows = [[r[c] for c in SITE_COLUMNS] for r in rec["sites"]]
        cur = {tuple(r[:3]): r for r in rows}
        prev = self.prev_rows
        delta = trigger in ("periodic", "step") and prev is not None and \
            all(k in cur for k, r in prev.items() if r[3] > 0)
        if delta:
            rows = [r for r in rows if r[3] == 0 or prev.get(tuple(r[:3])) != r]
        if self.version >= 3:
            out = []
            for r in rows:
                key = tuple(r[:3])
                if key not in self.site_ids:
                    self.site_ids[key] = len(self.site_ids) + 1
                    self.write({"t": "site", "id": self.site_ids[key], "stack": r[0], "kind": r[1], "device": r[2]})
                p = prev.get(key, [0] * len(SITE_COLUMNS)) if delta else [0] * len(SITE_COLUMNS)
                d = [self.site_ids[key]] + [r[c] - p[c] for c in SITE3_ORDER]
                while delta and len(d) > 1 and d[-1] == 0:
                    d.pop()
                out.append(d)
            rows = out
        self.prev_rows = cur
        items = list(rec.items())
        rec.clear()
        for k, v in items:
            if k == "sites":
                rec["sites_delta"] = delta
                v = rows
            rec[k] = v

    def oom(self, key, size):
        o = {"api": "cudaMalloc", "kind": key[1], "device": key[2], "requested_bytes": size, "result": 2,
             "free_bytes": self.free_bytes(), "total_bytes": self.total, "tracked_bytes": self.used(), "stack": key[0]}
        self.snapshot("oom", oom=o, allocations=True)

    def exit(self, tail=b""):
        self.snapshot("exit", allocations=True, unfreed=True)
        self.f.close()
        if tail:
            with open(self.path, "ab") as f:
                f.write(tail)


# ---------------- scenarios ----------------
# Each returns the expectations for its process(es): site verdicts keyed by the
# innermost program function of the site, unfreed bytes, OOM verdicts, check result.

def sc_leak_churn(out, mode, temp=64 * MiB, pid=5001, steps=60):
    p = Proc(out, "train", pid, mode, seed=11)
    p.alloc(["load_weights"], 512 * MiB)
    for i in range(steps):
        p.advance(1.0)
        t = p.alloc(["alloc_activations", "forward"], temp)
        p.advance(3.0)
        p.alloc(["record_history"], 3 * MiB)         # kept forever: the leak
        p.advance(3.0)
        p.free(t)
        p.advance(p.iter_time - 7.0)
        p.mark_step()
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 512 * MiB + 3 * MiB * steps,
             "sites": {"record_history": {"verdict": "leak", "growth": [2.9 * MiB, 3.1 * MiB], "unfreed": 3 * MiB * steps},
                       "alloc_activations": {"verdict": "churn", "unfreed": 0},
                       "load_weights": {"verdict": "stable", "unfreed": 512 * MiB}}}], 1


def sc_plateau(out, mode, pid=5002, steps=40):
    p = Proc(out, "plateau", pid, mode, seed=12)
    p.alloc(["load_weights"], 256 * MiB)
    cache = []
    for i in range(steps):
        p.advance(2.0)
        if i < 5:
            cache.append(p.alloc(["grow_cache"], 32 * MiB))
        p.advance(p.iter_time - 2.0)
        p.mark_step()
    for a in cache:
        p.free(a)
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 256 * MiB,
             "sites": {"grow_cache": {"verdict": "plateau", "unfreed": 0},
                       "load_weights": {"verdict": "stable", "unfreed": 256 * MiB}}}], 0


def sc_batched(out, mode, pid=5003, steps=65):
    p = Proc(out, "batched", pid, mode, seed=13)
    w = p.alloc(["load_weights"], 128 * MiB)
    pending = []
    for i in range(steps):
        p.advance(2.0)
        pending.append(p.alloc(["stash_batch"], 8 * MiB))
        p.advance(p.iter_time - 3.0)
        if (i + 1) % 10 == 0:
            for a in pending:
                p.free(a)
            pending = []
        p.advance(1.0)
        p.mark_step()
    for a in pending:
        p.free(a)
    p.free(w)
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 0,
             "sites": {"stash_batch": {"verdict": "churn", "unfreed": 0},
                       "load_weights": {"verdict": "stable", "unfreed": 0}}}], 0


def sc_stable(out, mode, pid=5004, steps=30):
    p = Proc(out, "stable", pid, mode, seed=14)
    ws = [p.alloc(["load_weights"], 100 * MiB) for _ in range(4)]
    for i in range(steps):
        p.advance(p.iter_time)
        p.mark_step()
    for a in ws:
        p.free(a)
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 0,
             "sites": {"load_weights": {"verdict": "stable", "unfreed": 0}}}], 0


def sc_oom_frag(out, mode, pid=5005):
    p = Proc(out, "fragment", pid, mode, total=1 * GiB, untracked=256 * MiB, seed=15)
    blocks = []
    for i in range(16):           # 16 x 48 MiB fill the 768 MiB exactly
        p.advance(p.iter_time / 2)
        blocks.append((p.alloc(["alloc_scratch"], 32 * MiB), p.alloc(["pin_small"], 16 * MiB)))
        p.advance(p.iter_time / 2)
        p.mark_step()
    for a, _ in blocks:       # free the scratch blocks: 512 MiB free, in 32 MiB gaps split by pin_small
        p.free(a)
    p.advance(1.0)
    p.mark_step()
    assert p.alloc(["alloc_big_batch"], 128 * MiB) is None
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 16 * 16 * MiB,
             "sites": {"pin_small": {"verdict": "leak", "growth": [15.9 * MiB, 16.1 * MiB], "unfreed": 16 * 16 * MiB},
                       "alloc_scratch": {"unfreed": 0}, "alloc_big_batch": {"unfreed": 0}},
             "ooms": [{"verdict": "fragmentation", "requested_bytes": 128 * MiB, "splitting": "pin_small"}]}], 1


def free_and_exit(p, allocations):
    """The program frees what it kept and exits."""
    for a in allocations:
        p.free(a)
    p.exit()


def kv_cache_exhausted(pid, **other_sites):
    """Expectations of a process whose alloc_kv_cache took 64 MiB a step until the
    device ran out (an exhaustion OOM at that site), freeing everything at exit."""
    sites = {"alloc_kv_cache": {"verdict": "leak", "growth": [63.9 * MiB, 64.1 * MiB], "unfreed": 0}}
    sites.update(other_sites)
    return [{"pid": pid, "unfreed_at_exit_bytes": 0, "sites": sites,
             "ooms": [{"verdict": "exhaustion", "requested_bytes": 64 * MiB, "top": "alloc_kv_cache"}]}]


def sc_oom_exhaust(out, mode, pid=5006):
    p = Proc(out, "exhaust", pid, mode, total=1 * GiB, untracked=256 * MiB, seed=16)
    got = []
    for i in range(20):
        p.advance(p.iter_time / 2)
        a = p.alloc(["alloc_kv_cache"], 64 * MiB)
        if a is None:
            break
        got.append(a)
        p.advance(p.iter_time / 2)
        p.mark_step()
    free_and_exit(p, got)
    # growing the cache every step until it runs out is a leak, and the OOM is exhaustion
    return kv_cache_exhausted(pid), 1


def sc_oom_retry(out, mode, pid=5010, flush=False, steps=200):
    """The kv cache takes 64 MiB a step until its allocation fails with out-of-memory
    (step 11); at step 1 it first asked for 64 GiB, which failed too (a probe). The
    program catches the OOM and trains on for 200 steps in all, far longer than the
    cache grew. flush: on each OOM the cache frees everything and grows again."""
    p = Proc(out, "retry", pid, mode, total=1 * GiB, untracked=256 * MiB, seed=19)
    got, full, flushes = [], False, 0
    for i in range(steps):
        p.advance(p.iter_time / 4)
        t = p.alloc(["forward_temp"], 8 * MiB)
        p.advance(p.iter_time / 4)
        if i == 1 and not flush:
            p.alloc(["alloc_kv_cache"], 64 * GiB)       # the probe: fails, the cache goes on
        if not full:
            a = p.alloc(["alloc_kv_cache"], 64 * MiB)
            if a is not None:
                got.append(a)
            elif flush:
                flushes += 1
                for x in got:
                    p.free(x)
                got = [p.alloc(["alloc_kv_cache"], 64 * MiB)]
            else:
                full = True       # the program catches the OOM and trains on without growing
        if t is not None:
            p.free(t)
        p.advance(p.iter_time / 2)
        p.mark_step()
    free_and_exit(p, got)
    if flush:
        # a cache that empties itself on each OOM and fills again is churn; check still
        # fails the run: it had out-of-memory failures (--allow-oom passes them)
        return [{"pid": pid, "unfreed_at_exit_bytes": 0,
                 "sites": {"alloc_kv_cache": {"verdict": "churn", "unfreed": 0},
                           "forward_temp": {"verdict": "churn", "unfreed": 0}},
                 "ooms": [{"verdict": "exhaustion", "requested_bytes": 64 * MiB, "top": "alloc_kv_cache"}] * flushes}], 1
    # the cache grew every step until its own allocation ran out of memory (the probe's
    # failure before did not stop it); the run went on for far longer than it grew,
    # which alone would read as a plateau: a leak cut by its own OOM is still a leak
    # (docs/metrics.md "Verdicts")
    exp = kv_cache_exhausted(pid, forward_temp={"verdict": "churn", "unfreed": 0})
    exp[0]["ooms"].insert(0, {"verdict": "exhaustion", "requested_bytes": 64 * GiB, "top": "alloc_kv_cache"})
    return exp, 1


def sc_oom_flush(out, mode, pid=5011):
    return sc_oom_retry(out, mode, pid, flush=True, steps=70)


def sc_reset(out, mode, pid=5007):
    p = Proc(out, "reset", pid, mode, seed=17)
    for i in range(20):
        p.advance(1.0)
        if i < 3:
            p.alloc(["alloc_buffers"], 16 * MiB)
        p.advance(p.iter_time - 1.0)
        p.mark_step()
    p.device_reset()      # the program's own cudaDeviceReset frees everything
    p.advance(1.0)
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 0,
             "sites": {"alloc_buffers": {"verdict": "plateau", "unfreed": 0}}}], 0


def sc_two_ranks(out, mode):
    exp0, _ = sc_leak_churn(out, mode, pid=6000, steps=40)
    p = Proc(out, "train", 6001, mode, rank=1, seed=18)
    p.alloc(["load_weights"], 512 * MiB)
    for i in range(40):
        p.advance(2.0)
        t = p.alloc(["alloc_activations", "forward"], 64 * MiB)
        p.advance(5.0)
        p.free(t)
        p.advance(p.iter_time - 7.0)
        p.mark_step()
    p.exit()
    # rank 0 is the leak_churn program (rank set below by rewriting its header)
    exp0[0]["unfreed_at_exit_bytes"] = 512 * MiB + 3 * MiB * 40
    exp0[0]["sites"]["record_history"]["unfreed"] = 3 * MiB * 40
    return exp0 + [{"pid": 6001, "rank": 1, "unfreed_at_exit_bytes": 512 * MiB,
                    "sites": {"alloc_activations": {"verdict": "churn"},
                              "load_weights": {"verdict": "stable", "unfreed": 512 * MiB}}}], 1


def sc_torn(out, mode, pid=5008):
    """A process killed mid-write: the last line is torn (no newline)."""
    p = Proc(out, "killed", pid, mode, seed=19)
    for i in range(30):
        p.advance(1.0)
        p.alloc(["record_history"], 1 * MiB)
        p.advance(p.iter_time - 1.0)
        p.mark_step()
    p.f.close()
    with open(p.path, "a") as f:
        f.write('{"t":"snapshot","seq":999,"trigger":"periodic","sites":[{"stack":1')
    return [{"pid": pid, "exited": False,
             "sites": {"record_history": {"verdict": "leak", "growth": [0.9 * MiB, 1.1 * MiB]}}}], 1


# ---------------- Python frames and annotations ----------------
# Modules of a Python interpreter and of PyTorch. The paths do not exist, so the
# analyzer names frames with the names written here (as dladdr found them).
PY_MODULES = [
    (3, "/opt/py/lib/libpython3.11.so.1.0", "3a" * 20, 0x7ffff6000000),
    (4, "/opt/py/lib/libffi.so.8", "4b" * 20, 0x7ffff5e00000),
    (5, "/opt/py/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so", "5c" * 20, 0x7ffff5c00000),
    (6, "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so", "6d" * 20, 0x7ffff5000000),
    (7, "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_python.so", "7e" * 20, 0x7ffff4000000),
]
EVAL = [3, 0xfd9c3, "_PyEval_EvalFrameDefault"]
PY_OUTER = [[3, 0x2508e4, "PyEval_EvalCode"], [3, 0x2bb1a0, "Py_RunMain"], [3, 0x2bb717, "Py_BytesMain"],
            [2, 0x29d90, "__libc_start_main"], [0, 0x1081, "_start"]]
TRAIN = "/srv/job/train.py"


def py_modules(p):
    for mid, path, bid, bias in PY_MODULES:
        p.write({"t": "module", "id": mid, "path": path, "build_id": bid, "bias": bias})


def ctypes_frames(variant=0):
    """cudaMalloc called through ctypes: libffi, _ctypes, then the eval loop (index 7)."""
    return ([[1, 0x4a2f0, "cudaMalloc"], [4, 0x6f79, None], [4, 0x640e, None], [4, 0x6b0d, "ffi_call"],
             [5, 0x1117a + 0x110 * variant, None], [5, 0xbd9e, None], [3, 0x158a1d, "_PyObject_MakeTpCall"], EVAL]
            + PY_OUTER)


def train_py(caller, line, main_line):
    return [[TRAIN, "device_alloc", 56, 7], [TRAIN, caller, line, 7], [TRAIN, "main", main_line, 7],
            [TRAIN, "<module>", 114, 7]]


def sc_python_train(out, mode, pid=5101, steps=40):
    """examples/python/train.py's shape: every allocation goes through one helper,
    device_alloc (train.py:56), from three callers: init_parameters (stable, here
    through two native ctypes paths), forward (churn), remember_batch (the leak)."""
    p = Proc(out, "python3.11", pid, mode, seed=21)
    py_modules(p)
    init_a = p.raw_stack("init_a", ctypes_frames(0), train_py("init_parameters", 80, 103))
    init_b = p.raw_stack("init_b", ctypes_frames(1), train_py("init_parameters", 80, 103))
    fwd = p.raw_stack("forward", ctypes_frames(0), train_py("forward", 84, 105))
    rem = p.raw_stack("remember_batch", ctypes_frames(0), train_py("remember_batch", 95, 107))
    p.alloc(None, 64 * MiB, sid=init_a)
    p.alloc(None, 64 * MiB, sid=init_b)
    for i in range(steps):
        p.advance(1.0)
        act = p.alloc(None, 48 * MiB, sid=fwd)
        p.advance(3.0)
        p.free(act)
        p.advance(1.0)
        p.alloc(None, 2 * MiB, sid=rem)
        p.advance(p.iter_time - 5.0)
        p.mark_step()
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 128 * MiB + 2 * MiB * steps,
             "py_sites": {"remember_batch": {"verdict": "leak", "growth": [1.9 * MiB, 2.1 * MiB], "unfreed": 2 * MiB * steps,
                                             "file": TRAIN, "line": 95,
                                             "title": "train.py:56 in device_alloc <- train.py:95 in remember_batch"},
                          "forward": {"verdict": "churn", "unfreed": 0, "file": TRAIN, "line": 84,
                                      "title": "train.py:56 in device_alloc <- train.py:84 in forward"},
                          "init_parameters": {"count": 2, "verdict": "stable", "file": TRAIN, "line": 80}}}], 1


MODEL, SERVE = "/srv/llm/model.py", "/srv/llm/serve.py"
OWN = "/opt/venv/lib/python3.11/site-packages/vramtrace/peaks.py"
C10_MALLOC = [6, 0x3a110, "_ZN3c104cuda6mallocEm"]            # c10::cuda::malloc(unsigned long)
THP_EMPTY = [7, 0x5a0c0, "_ZN5torch8autograd11THPVariable5emptyEv"]


def sc_torch_cache(out, mode, pid=5102, steps=30):
    """A PyTorch-like server: the caching allocator (libc10_cuda) calls cudaMalloc.
    kv_cache: KVCache.grow leaks 4 MiB/step; its innermost Python frame is in
    vramtrace's own package (the site must still be named model.py:12 in
    KVCache.grow), and a C++ frame of libtorch_python lies between its two
    eval-loop activations. attention: churn, native stack cut before the eval loop
    (native_index -1). worker: an autograd thread with no Python frames.
    Each step annotates PyTorch's allocated/reserved/inactive-split bytes and a
    user gauge."""
    p = Proc(out, "python3.11", pid, mode, seed=22)
    py_modules(p)
    kv = p.raw_stack("kv", [[1, 0x4a2f0, "cudaMalloc"], C10_MALLOC, THP_EMPTY, EVAL,
                            [7, 0x61a30, "_ZN5torch2nn6Module4callEv"], EVAL] + PY_OUTER,
                     [[OWN, "PeakTracker.sample", 41, 3], [MODEL, "KVCache.grow", 12, 3],
                      [MODEL, "Model.forward", 30, 5], [SERVE, "<module>", 8, 5]])
    att = p.raw_stack("attention", [[1, 0x4a2f0, "cudaMalloc"], C10_MALLOC, THP_EMPTY],
                      [[MODEL, "Model.attention", 20, -1], [MODEL, "Model.forward", 31, -1], [SERVE, "<module>", 8, -1]])
    wk = p.raw_stack("worker", [[1, 0x4a2f0, "cudaMalloc"], C10_MALLOC, [6, 0x41000, "_ZN3c104cuda10autogradWkEv"],
                                [2, 0x94ac3, "start_thread"]])
    p.alloc(None, 32 * MiB, sid=wk)
    allocated = reserved = 0
    cached_max = 0
    for i in range(steps):
        p.advance(1.0)
        a = p.alloc(None, 96 * MiB, sid=att)
        p.advance(2.0)
        p.free(a)
        p.alloc(None, 4 * MiB, sid=kv)
        reserved = p.used()
        allocated = reserved - (i % 4) * 3 * MiB - 2 * MiB
        cached_max = max(cached_max, reserved - allocated)
        p.annotations["torch.cuda:0.memory_allocated_bytes"] = allocated
        p.annotations["torch.cuda:0.memory_reserved_bytes"] = reserved
        p.annotations["torch.cuda:0.inactive_split_bytes"] = (i % 3) * MiB
        p.annotations["train.loss"] = round(2.0 / (i + 1), 6)
        p.advance(p.iter_time - 3.0)
        p.mark_step()
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 32 * MiB + 4 * MiB * steps,
             "py_sites": {"KVCache.grow": {"verdict": "leak", "growth": [3.9 * MiB, 4.1 * MiB], "file": MODEL, "line": 12,
                                           "title": "model.py:12 in KVCache.grow"},
                          "Model.attention": {"verdict": "churn", "file": MODEL, "line": 20,
                                              "title": "model.py:20 in Model.attention"}},
             "sites": {"c10::cuda::malloc": {"verdict": "stable", "unfreed": 32 * MiB}},
             "torch": {"allocated_bytes": allocated, "reserved_bytes": reserved,
                       "reserved_unallocated_max_bytes": cached_max,
                       "inactive_split_bytes": ((steps - 1) % 3) * MiB},
             "annotations": dict(p.annotations)}], 1


GPU0, GPU1 = "GPU-5c9a1f62-8d3e-4b7a-9f01-2e6d4c8b7a10", "GPU-0b7e3d21-4c5f-4e6a-8b9c-1d2e3f4a5b6c"


def sc_host_ecc(out, mode, pid=5103, steps=20):
    """Host and NVML signals (docs/snapshot-format.md "host"): GPU 0 reports ECC
    errors and a remapped row during the run, GPU 1 stays clean (ECC off: nulls),
    the cgroup's OOM killer fires at step 12; one snapshot carries values of the
    wrong type, which the reader must ignore."""
    p = Proc(out, "hostecc", pid, mode, seed=23)

    def host(proc):
        s = proc.step
        bad = s == 5
        return {"rss_bytes": "n/a" if bad else (300 + 2 * s) * MiB, "rss_peak_bytes": (310 + 2 * s) * MiB,
                "swap_bytes": 0,
                "cgroup": {"version": 2, "path": "/sys/fs/cgroup/job.slice/train.scope",
                           "oom": 0 if s < 12 else 2, "oom_kill": 0 if s < 12 else 1,
                           "memory_current_bytes": (800 + s) * MiB, "memory_max_bytes": 4 * GiB},
                "nvml": {"time_ns": proc.seq * 1000,
                         "devices": [{"device": 0, "index": 0, "uuid": GPU0, "used_bytes": proc.used() + GiB,
                                      "total_bytes": proc.total, "process_used_bytes": proc.used() + 300 * MiB,
                                      "ecc_volatile_corrected": 0 if s < 8 else 3, "ecc_volatile_uncorrected": 0 if s < 15 else 1,
                                      "ecc_aggregate_corrected": 12 if s < 8 else 15,
                                      "ecc_aggregate_uncorrected": [] if bad else (0 if s < 15 else 1),
                                      "retired_pages_single_bit": None, "retired_pages_double_bit": None,
                                      "remapped_rows_corrected": 0, "remapped_rows_uncorrected": 0 if s < 15 else 1,
                                      "remapped_rows_pending": s >= 15, "remapped_rows_failure": False},
                                     {"device": 1, "index": 1, "uuid": GPU1, "used_bytes": 512 * MiB, "total_bytes": proc.total,
                                      "process_used_bytes": None,
                                      "ecc_volatile_corrected": None, "ecc_volatile_uncorrected": None,
                                      "ecc_aggregate_corrected": None, "ecc_aggregate_uncorrected": None,
                                      "retired_pages_single_bit": None, "retired_pages_double_bit": None,
                                      "remapped_rows_corrected": None, "remapped_rows_uncorrected": None,
                                      "remapped_rows_pending": None, "remapped_rows_failure": None}]}}
    p.host = host
    p.snapshot("manual")   # the start snapshot was written before host was set
    w = p.alloc(["load_weights"], 256 * MiB)
    for i in range(steps):
        p.advance(1.0)
        t = p.alloc(["alloc_activations"], 32 * MiB)
        p.advance(p.iter_time - 2.0)
        p.free(t)
        p.advance(1.0)
        p.mark_step()
    p.free(w)
    p.exit()
    return [{"pid": pid, "unfreed_at_exit_bytes": 0,
             "sites": {"alloc_activations": {"verdict": "churn"}, "load_weights": {"verdict": "stable", "unfreed": 0}},
             "host_warnings": [
                 "GPU 0 (%s): memory errors during the run: ECC volatile single-bit (corrected) 0 -> 3, "
                 "ECC volatile double-bit (uncorrected) 0 -> 1, ECC aggregate single-bit (corrected) 12 -> 15, "
                 "ECC aggregate double-bit (uncorrected) 0 -> 1, remapped rows (uncorrected) 0 -> 1, "
                 "remapped rows pending (became true)" % GPU0,
                 "memory cgroup /sys/fs/cgroup/job.slice/train.scope: out-of-memory events during the run: "
                 "oom 0 -> 2, oom_kill 0 -> 1"]}], 0


SCENARIOS = {
    "leak_churn": sc_leak_churn,
    "plateau": sc_plateau,
    "batched": sc_batched,
    "stable": sc_stable,
    "oom_frag": sc_oom_frag,
    "oom_exhaust": sc_oom_exhaust,
    "oom_retry": sc_oom_retry,
    "oom_flush": sc_oom_flush,
    "reset": sc_reset,
    "two_ranks": sc_two_ranks,
    "torn": sc_torn,
    "python_train": sc_python_train,
    "torch_cache": sc_torch_cache,
    "host_ecc": sc_host_ecc,
}


def main():
    global VERSION
    out = sys.argv[1]
    for name, fn, version in [(n, f, 1) for n, f in SCENARIOS.items()] + \
            [(n, SCENARIOS[n], v) for v in (2, 3, 4) for n in V2_SCENARIOS]:
        VERSION = version
        for mode in ("step", "periodic"):
            FUNC_OFF.clear()
            d = os.path.join(out, "%s-%s%s" % (name, mode, "-v%d" % version if version > 1 else ""))
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            procs, check = fn(d, mode)
            if name == "two_ranks":   # give the leaking process rank 0
                for fn_ in os.listdir(d):
                    if ".6000." in fn_:
                        path = os.path.join(d, fn_)
                        lines = open(path).read().split("\n")
                        h = json.loads(lines[0])
                        h["rank"] = 0
                        h["local_rank"] = 0
                        h["world_size"] = 2
                        lines[0] = dumps(h)
                        open(path, "w").write("\n".join(lines))
                procs[0]["rank"] = 0
            with open(os.path.join(d, "expect.json"), "w") as f:
                json.dump({"check": check, "processes": procs}, f, indent=1, sort_keys=True)
                f.write("\n")
    VERSION = 1
    # diff pair: the same program, NEW with a twice larger per-step temporary
    for name, temp in (("diff_base", 64 * MiB), ("diff_new", 128 * MiB)):
        FUNC_OFF.clear()
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        sc_leak_churn(d, "step", temp=temp, pid=7000 if name == "diff_base" else 7001, steps=20)


if __name__ == "__main__":
    main()
