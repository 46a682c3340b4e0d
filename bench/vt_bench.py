#!/usr/bin/env python3
"""vt_bench.py — runs the vramtrace performance figures (--figures N selects them), each printed with
its floor beside it (docs/performance.md records the results).

Instruction counts come from `valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=bench_measured_*` (deterministic, so the machine's noise does not
enter), wall times from paired runs (traced and untraced alternate; the median of the
per-pair ratios is reported), memory from mallinfo2 and /proc/self/status.

Usage:
  vt_bench.py --build BUILD_DIR [--work DIR] [--quick] [--figures 1,2,...] [--json FILE]
              [--preload-lib OTHER/libvramtrace.so]

--quick runs every figure at tiny sizes (CTest bench_smoke): it proves the
benchmarks run; its numbers mean nothing. Exit status 0 when every benchmark ran
(a missed target is reported, not an error), 1 when one failed to run.
No figure is asserted: benchmarks are not timed tests.
"""
import argparse
import json
import os
import resource
import re
import shutil
import statistics
import subprocess
import sys
import time

ARGS = None
RESULTS = []          # one dict per printed row


def log(msg):
    print(msg, flush=True)


def row(figure, what, measured, floor=None, target=None, unit="", ok=None, note=""):
    r = {"figure": figure, "what": what, "measured": measured, "floor": floor,
         "target": target, "unit": unit, "ok": ok, "note": note}
    RESULTS.append(r)
    def fmt(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
        return str(v)
    verdict = "" if ok is None else ("  [meets target]" if ok else "  [MISSES target]")
    log(f"  fig{figure} {what}: {fmt(measured)} {unit}   floor {fmt(floor)}   target {fmt(target)}{verdict}"
        + (f"   ({note})" if note else ""))


# ---- environments ----

def base_env():
    env = dict(os.environ)
    for k in list(env):
        if (k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") or k == "LD_PRELOAD":
            del env[k]
    env["LD_LIBRARY_PATH"] = ARGS.cuda_lib or os.path.join(ARGS.build, "simcuda")
    env["VRAMTRACE_LOG"] = "quiet"
    env.setdefault("VRAMTRACE_COMPRESS", "0")   # the bench reads the files' text
    return env


def traced_env(**kw):
    env = base_env()
    env["LD_PRELOAD"] = ARGS.preload_lib or os.path.join(ARGS.build, "lib", "libvramtrace.so")
    env["VRAMTRACE_OUTPUT"] = os.path.join(ARGS.work, "out")
    for k, v in kw.items():
        env["VRAMTRACE_" + k] = str(v)
    return env


def binp(name):
    return os.path.join(ARGS.build, "bin", name)


def run(cmd, env, timeout=600):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout


def kv(text):
    out = {}
    for tok in re.findall(r"(\w+)=(\S+)", text):
        out[tok[0]] = tok[1]
    return out


# ---- callgrind ----

_cg_n = 0


def callgrind(cmd, env, toggle="bench_measured_*", top=0):
    """Instructions executed inside functions matching toggle (inclusive)."""
    global _cg_n
    _cg_n += 1
    out = os.path.join(ARGS.work, f"cg.{_cg_n}.out")
    vg = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={toggle}",
          f"--callgrind-out-file={out}"]
    p = subprocess.run(vg + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"callgrind {' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    total = None
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals):\s+(\d+)", line)
            if m:
                total = int(m.group(2))
    if total is None:
        raise RuntimeError("no callgrind total in " + out)
    funcs = self_costs(out) if top else []
    return total, p.stdout, funcs


def self_costs(path):
    """Self cost (Ir) per (function, object) from a callgrind output file, largest
    first, as (cost, "function [object]"). Parsed here rather than taken from
    callgrind_annotate, which groups by file:function and so merges our exported hooks
    with the CUDA functions of the same name in another object, and cuts its list at
    a threshold (a traced-minus-untraced difference of two cut lists invents entries)."""
    obs, fns, costs = {}, {}, {}
    ob = fn = None
    skip = False
    name_re = re.compile(r"\((\d+)\)(?: (.*))?$")

    def name(table, val):
        m = name_re.match(val)
        if not m:
            return val
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            key, eq, val = line.partition("=")
            if eq and key in ("ob", "cob", "fn", "cfn", "fl", "fi", "fe", "cfi", "cfl", "calls"):
                if key == "ob":
                    ob = name(obs, val)
                elif key == "cob":
                    name(obs, val)
                elif key == "fn":
                    fn = name(fns, val)
                elif key == "cfn":
                    name(fns, val)
                elif key == "calls":
                    skip = True   # the next cost line is the call's inclusive cost
                continue
            if line[0].isdigit() or line[0] in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and fn is not None:
                    k = f"{fn} [{os.path.basename(ob or '?')}]"
                    costs[k] = costs.get(k, 0) + int(parts[1])
    return sorted(((n, k) for k, n in costs.items()), reverse=True)


def show_top(funcs, per, label, base=None):
    """Per-function self cost per event; with base, the traced-minus-untraced delta."""
    if not funcs:
        return
    if base is not None:
        b = {}
        for n, name in base:
            b[name] = b.get(name, 0) + n
        d = {}
        for n, name in funcs:
            d[name] = d.get(name, 0) + n
        for name, n in b.items():
            d[name] = d.get(name, 0) - n
        funcs = sorted(((n, name) for name, n in d.items() if n), reverse=True)[:20]
        log(f"    callgrind self cost per {label}, traced minus untraced, by function:")
    else:
        log(f"    callgrind self cost per {label}, top functions:")
        funcs = funcs[:14]
    for n, name in funcs:
        log(f"      {n / per:9.1f}  {name[:110]}")


# ---- --figures 1: hook bookkeeping, stacks off ----

def fig1():
    log("Figure 1: hook bookkeeping per alloc+free pair, VRAMTRACE_DEPTH=0 (callgrind instructions)")
    n = 200 if ARGS.quick else 5000
    for path in ("runtime", "driver"):
        cmd = [binp("bench_alloc"), "pairs", path, str(n)]
        u, _, utop = callgrind(cmd, base_env(), top=ARGS.verbose)
        t, _, top = callgrind(cmd, traced_env(DEPTH=0, INTERVAL_MS=0), top=ARGS.verbose)
        extra = (t - u) / n
        row(1, f"{path} path: instructions per pair beyond untraced", extra, floor=u / n,
            target=300, unit="instr", ok=extra <= 300,
            note="floor = the untraced pair itself (simulated CUDA)")
        show_top(top, n, "pair", utop)
        # Reference: the untraced program with one idle thread, as the tracer's writer
        # thread makes it. glibc's malloc and mutexes take their multi-threaded paths
        # once a second thread exists, which the simulated driver pays per pair.
        ui, _, _ = callgrind(cmd + ["--idle-thread", "1"], base_env())
        row(1, f"{path} path: of which a second thread costs the untraced program (reference)",
            (ui - u) / n, floor=None, target=None, unit="instr", ok=None,
            note="untraced with one idle thread minus untraced; part of the figure above")
        extra_t = (t - ui) / n
        row(1, f"{path} path: hook bookkeeping beyond the untraced program with the same threads",
            extra_t, floor=ui / n, target=300, unit="instr", ok=extra_t <= 300,
            note="traced minus untraced-with-one-idle-thread: our code and the calls it makes")
        # The hooks hand events to the core through a ring (preload/track/vt_ring.h); the core
        # applies them on the writer thread (or wherever the lock is next taken). That
        # work is not on the program's thread, so the rows above do not count it: it is
        # measured here, inclusive, so that the total cost per pair is on record.
        d, _, _ = callgrind(cmd, traced_env(DEPTH=0, INTERVAL_MS=0), toggle="vt__drain_locked*")
        row(1, f"{path} path: applying the pair's two events (core, off the program's thread; reference)",
            d / n, floor=None, target=None, unit="instr", ok=None,
            note="callgrind inclusive cost of vt__drain_locked per pair, any thread")
    # Event time (preload/track/vt_clock.h): the hooks stamp from the TSC where it is
    # CLOCK_MONOTONIC's source (the default here when it is), else read CLOCK_MONOTONIC.
    # callgrind does not run the vDSO (its clock_gettime is the syscall's few
    # instructions), so the wall rows give the two stamps' real cost side by side.
    cmd = [binp("bench_alloc"), "pairs", "runtime", str(n)]
    u, _, _ = callgrind(cmd, base_env())
    for mode in ("monotonic", "auto"):
        t, _, _ = callgrind(cmd, traced_env(DEPTH=0, INTERVAL_MS=0, CLOCK=mode))
        row(1, f"runtime path, VRAMTRACE_CLOCK={mode}: instructions per pair beyond untraced", (t - u) / n,
            floor=u / n, target=None, unit="instr", ok=None, note="floor = the untraced pair itself")
    wn = 20000 if ARGS.quick else 2000000
    rounds = 2 if ARGS.quick else max(ARGS.rounds, 7)
    wcmd = [binp("bench_alloc"), "pairs", "runtime", str(wn)]
    envs = {"untraced": base_env(),
            "monotonic": traced_env(DEPTH=0, INTERVAL_MS=0, CLOCK="monotonic"),
            "auto": traced_env(DEPTH=0, INTERVAL_MS=0, CLOCK="auto")}
    walls = {k: [] for k in envs}
    for r in range(rounds):
        keys = list(envs) if r % 2 == 0 else list(reversed(list(envs)))
        for k in keys:
            shutil.rmtree(os.path.join(ARGS.work, "out"), ignore_errors=True)
            t0 = time.perf_counter()
            run(wcmd, envs[k])
            walls[k].append((time.perf_counter() - t0) * 1e9 / wn)
    med = {k: statistics.median(v) for k, v in walls.items()}
    for mode in ("monotonic", "auto"):
        extra = med[mode] - med["untraced"]
        row(1, f"runtime path, VRAMTRACE_CLOCK={mode}: wall ns per pair beyond untraced", extra,
            floor=med["untraced"], target=None, unit="ns", ok=None,
            note=f"median of {rounds} interleaved runs of {wn} pairs each; floor = untraced ns per pair")
    m, a = med["monotonic"] - med["untraced"], med["auto"] - med["untraced"]
    if m > 0:
        row(1, "runtime path: wall overhead with the default stamp / with CLOCK_MONOTONIC", a / m, floor=1.0,
            target=None, unit="x", ok=None, note="below 1: the TSC stamp costs less than the vDSO read")
    # The NVTX front door (preload/interpose/vt_nvtx.c): a push/pop pair of a range that
    # is not the step range, against the same pair with no NVTX tool at all.
    cmd = [binp("bench_alloc"), "nvtx", str(n)]
    u, _, _ = callgrind(cmd, base_env())
    lib = ARGS.preload_lib or os.path.join(ARGS.build, "lib", "libvramtrace.so")
    for label, extra_env in (("injection, no --step-range", {}), ("injection, --step-range not matching",
                                                                   {"STEP_RANGE": "train_step"})):
        env = traced_env(DEPTH=0, INTERVAL_MS=0, **extra_env)
        env["NVTX_INJECTION64_PATH"] = lib
        t, _, _ = callgrind(cmd, env)
        row(1, f"NVTX push/pop pair, {label}: instructions beyond no NVTX tool", (t - u) / n, floor=u / n,
            target=None, unit="instr", ok=None, note="floor = the pair with no tool (NVTX's own no-op calls)")


# ---- --figures 2: stack capture ----

def fig2():
    log("Figure 2: stack capture vs bare unw_backtrace of the same depth (callgrind instructions)")
    n = 100 if ARGS.quick else 2000
    depths = (8, 64) if ARGS.quick else (8, 16, 32, 64)
    frames = "72"
    cmd0 = [binp("bench_alloc"), "pairs", "runtime", str(n), "--frames", frames]
    t0, _, top0 = callgrind(cmd0, traced_env(DEPTH=0, INTERVAL_MS=0), top=ARGS.verbose)
    tu, _, _ = callgrind(cmd0, base_env())
    for d in depths:
        floor, _, _ = callgrind([binp("bench_alloc"), "unw", str(d), str(n), "--frames", frames], base_env())
        td, _, top = callgrind(cmd0, traced_env(DEPTH=d, INTERVAL_MS=0), top=ARGS.verbose)
        cap = (td - t0) / n
        fl = floor / n
        row(2, f"depth {d}: hook stack capture (traced DEPTH={d} minus DEPTH=0, per pair)", cap,
            floor=fl, target=1.2 * fl, unit="instr", ok=cap <= 1.2 * fl,
            note=f"ratio {cap / fl:.3f}x")
        show_top(top, n, f"pair (DEPTH={d} minus DEPTH=0)", top0)
        # the whole per-pair overhead (bookkeeping + capture) against the same floor;
        # the stack cache (capture/vt_stkcache.h) serves the repeated stack
        whole = (td - tu) / n
        row(2, f"depth {d}: whole per-pair overhead (traced DEPTH={d} minus untraced)", whole,
            floor=fl, target=fl, unit="instr", ok=whole <= fl, note=f"ratio {whole / fl:.3f}x")
        tn, _, _ = callgrind(cmd0, traced_env(DEPTH=d, INTERVAL_MS=0, STACK_CACHE=0))
        row(2, f"depth {d}: same with VRAMTRACE_STACK_CACHE=0 (every capture unwinds; for reference)",
            (tn - tu) / n, floor=fl, target=None, unit="instr", ok=None,
            note=f"ratio {(tn - tu) / n / fl:.3f}x")
        # the store alone, in the core: capture + intern vs unw_backtrace, and dedup growth
        ccmd = [binp("bench_core"), "stack", str(d), str(n)]
        cc, out, _ = callgrind(ccmd, base_env(), toggle="bench_measured_capture")
        cu, _, _ = callgrind(ccmd, base_env(), toggle="bench_measured_unw")
        o = kv(out)
        # The general path (vt_stack_capture, which finds our frames by address) runs
        # only when the hook's frame check fails; the figure is the hook row above.
        row(2, f"depth {d}: vt_stack_capture in the core (general path, per capture; for reference)",
            cc / (n + 1), floor=cu / (n + 1), target=None, unit="instr", ok=None,
            note=f"ratio {cc / cu:.3f}x")
        row(2, f"depth {d}: store growth over {o.get('captures')} repeated captures",
            f"{o.get('store_growth_stacks')} stacks, {o.get('store_growth_bytes')} bytes",
            floor="0", target="0", ok=o.get("store_growth_stacks") == "0" and o.get("store_growth_bytes") == "0")


# ---- --figures 3: realistic programs, wall time ----

def paired(cmd, rounds, env_traced):
    """Alternates untraced/traced runs; returns (median ratio, median u, median t)."""
    ratios, us, ts = [], [], []
    for r in range(rounds):
        order = [(False, base_env()), (True, env_traced)]
        if r % 2:
            order.reverse()
        res = {}
        for traced, env in order:
            shutil.rmtree(os.path.join(ARGS.work, "out"), ignore_errors=True)
            t = time.perf_counter()
            run(cmd, env)
            res[traced] = time.perf_counter() - t
        ratios.append(res[True] / res[False])
        us.append(res[False])
        ts.append(res[True])
    return statistics.median(ratios), statistics.median(us), statistics.median(ts)


def fig3():
    log("Figure 3: realistic programs, wall time traced/untraced, default settings, paired runs")
    rounds = 2 if ARGS.quick else ARGS.rounds
    cal = lambda ns: kv(run([binp("bench_alloc"), "calibrate", str(ns)], base_env()))["iters"]
    # training loop: 200 allocations per step (7 sites + weights), 20 ms of "kernels" per step
    steps = 3 if ARGS.quick else 50
    step_ms = 20
    cmd = [binp("bench_alloc"), "train", str(steps), "200", cal(step_ms * 1000000)]
    r, u, t = paired(cmd, rounds, traced_env())
    row(3, f"training loop ({steps} steps x 200 allocations, {step_ms} ms kernels/step): traced/untraced wall",
        r, floor=1.0, target=1.05, unit="x", ok=r <= 1.05,
        note=f"median of {rounds} pairs; untraced {u:.3f} s, traced {t:.3f} s")
    if ARGS.hyperfine and shutil.which("hyperfine") and not ARGS.quick:
        hyper(cmd, "train")
    # churn: 100,000 alloc/free pairs per second for 1 s (10 us per pair untraced)
    pairs = 2000 if ARGS.quick else (ARGS.churn_pairs or 100000)
    one = kv(run([binp("bench_alloc"), "churn", "20000", "0"], base_env()))
    alloc_ns = 1e9 / float(one["pairs_per_s"])
    sp = cal(max(1000, int(10000 - alloc_ns)))
    cmd = [binp("bench_alloc"), "churn", str(pairs), sp]
    chk = kv(run(cmd, base_env()))
    r, u, t = paired(cmd, rounds, traced_env())
    row(3, f"churn ({pairs} pairs at {float(chk['pairs_per_s']):.0f} pairs/s untraced): traced/untraced wall",
        r, floor=1.0, target=1.05, unit="x", ok=r <= 1.05,
        note=f"median of {rounds} pairs; untraced {u:.3f} s, traced {t:.3f} s; "
             f"{(t - u) / pairs * 1e6:+.2f} us per pair")
    if ARGS.churn_variants:
        # where a churn overhead comes from (a device diagnosis in one run): the same
        # paired churn with stacks off, periodic snapshots off, NVML off, all three off
        for label, kw in (("VRAMTRACE_DEPTH=0", {"DEPTH": 0}),
                          ("VRAMTRACE_INTERVAL_MS=0", {"INTERVAL_MS": 0}),
                          ("VRAMTRACE_NVML=0", {"NVML": 0}),
                          ("all three", {"DEPTH": 0, "INTERVAL_MS": 0, "NVML": 0})):
            r, u, t = paired(cmd, rounds, traced_env(**kw))
            row(3, f"churn, {label}: traced/untraced wall", r, floor=1.0, target=None, unit="x",
                note=f"median of {rounds} pairs; untraced {u:.3f} s, traced {t:.3f} s; "
                     f"{(t - u) / pairs * 1e6:+.2f} us per pair")
    if ARGS.churn_async:
        # the same churn with stream-ordered pairs (cudaMallocAsync/cudaFreeAsync), as
        # PyTorch's cudaMallocAsync backend and --tensors make them; with its diagnosis rows
        acmd = cmd + ["--async", "1"]
        variants = [("default settings", {})]
        if ARGS.churn_variants:
            variants += [("VRAMTRACE_DEPTH=0", {"DEPTH": 0}), ("VRAMTRACE_INTERVAL_MS=0", {"INTERVAL_MS": 0}),
                         ("VRAMTRACE_NVML=0", {"NVML": 0})]
        for label, kw in variants:
            r, u, t = paired(acmd, rounds, traced_env(**kw))
            row(3, f"stream-ordered churn, {label}: traced/untraced wall", r, floor=1.0,
                target=1.03 if not kw else None, unit="x", ok=(r <= 1.03) if not kw else None,
                note=f"median of {rounds} pairs; untraced {u:.3f} s, traced {t:.3f} s; "
                     f"{(t - u) / pairs * 1e6:+.2f} us per pair")
    if ARGS.hyperfine and shutil.which("hyperfine") and not ARGS.quick:
        hyper(cmd, "churn")


def hyper(cmd, name):
    js = os.path.join(ARGS.work, f"hyperfine.{name}.json")
    env = traced_env()
    pre = f"LD_PRELOAD={env['LD_PRELOAD']} VRAMTRACE_OUTPUT={env['VRAMTRACE_OUTPUT']} VRAMTRACE_LOG=quiet "
    c = " ".join(cmd)
    subprocess.run(["hyperfine", "-N" if False else "--shell=bash", "--warmup", "2", "--runs", str(ARGS.rounds),
                    "--export-json", js, "-n", "untraced", c, "-n", "traced", pre + c],
                   env=base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    try:
        with open(js) as f:
            res = {x["command"]: x for x in json.load(f)["results"]}
        u, t = res["untraced"]["median"], res["traced"]["median"]
        row(3, f"{name}: hyperfine median traced/untraced (not paired)", t / u, floor=1.0, target=1.05,
            unit="x", ok=t / u <= 1.05, note=f"untraced {u:.3f} s, traced {t:.3f} s")
    except (OSError, KeyError, ValueError) as e:
        log(f"    hyperfine failed: {e}")


# ---- --figures 4: memory ----

def fig4():
    log("Figure 4: memory per live allocation and in total")
    n = 20000 if ARGS.quick else 1000000
    o = kv(run([binp("bench_core"), "mem", str(n)], base_env()))
    b = float(o["bytes_per_alloc"])
    row(4, f"core: heap bytes per live allocation ({n} live, one stack)", b, floor=46, target=96,
        unit="B", ok=b <= 96, note="floor = the 46 bytes a live-list row carries (addr, size, kind, "
        "device, stack, step, birth, tid, stream)")
    row(4, f"core: resident growth for {n} live allocations", int(o["rss_growth_kb"]) / 1024.0,
        unit="MiB", target=150 * n / 1e6, ok=int(o["rss_growth_kb"]) / 1024.0 <= 150 * n / 1e6)
    cmd = [binp("bench_alloc"), "live", str(n)]
    u = kv(run(cmd, base_env()))
    t = kv(run(cmd, traced_env()))
    du = int(u["rss_kb"]) - int(u["rss0_kb"])
    dt = int(t["rss_kb"]) - int(t["rss0_kb"])
    tracer = (int(t["rss_kb"]) - int(u["rss_kb"])) / 1024.0
    row(4, f"process under the preload, {n} live cudaMalloc: tracer resident memory (traced RSS - untraced RSS)",
        tracer, floor=0.0, target=150 * n / 1e6, unit="MiB", ok=tracer <= 150 * n / 1e6,
        note=f"RSS growth over the allocations: untraced {du / 1024:.1f} MiB, traced {dt / 1024:.1f} MiB; "
             f"traced total RSS {int(t['rss_kb']) / 1024:.1f} MiB")


# ---- --figures 5: snapshot stalls ----

def lock_wait_row(what, k, prefix, calls_key, tail=""):
    """A figure-5 row of the hook thread's waits for the core lock, from the keys of a
    `bench_core stall` line (prefix "writer_hook_" on the writer-thread run's line)."""
    lw = float(k[prefix + "lock_wait_max_us"]) / 1000
    row(5, what + ": its longest wait for the core lock", lw, target=1.0, unit="ms", ok=lw <= 1.0,
        note=f"waits {k.get(prefix + 'lock_waits', '?')} ({k.get(prefix + 'lock_waits_over_1ms', '?')} over 1 ms), "
             f"the ring full {k.get(prefix + 'ring_full', '?')} times, over {k.get(calls_key, '?')} hook calls" + tail)


def fig5():
    log("Figure 5: snapshot stalls (wall clock; 2-core machine, noisy)")
    cases = [(20000, 500, 3)] if ARGS.quick else [(1000000, 10000, 20), (200000, 10000, 20)]
    for live, sites, per in cases:
        stall_case(live, sites, per)


def stall_case(live, sites, per):
    env = base_env()
    env["VRAMTRACE_OUTPUT"] = os.path.join(ARGS.work, "stall")
    shutil.rmtree(env["VRAMTRACE_OUTPUT"], ignore_errors=True)
    out = run([binp("bench_core"), "stall", str(live), str(sites), str(per)], env)
    o = kv(out.splitlines()[0])
    waits, coll = {}, {}
    for line in out.splitlines():
        k = kv(line)
        if line.startswith("hook_wait"):
            waits[k["phase"]] = k
        elif line.startswith("collect"):
            coll[k["kind"]] = (float(k["ms"]), float(k["lock_max_ms"]), int(k["holds"]),
                               int(k.get("from_journal", 0)))
    idle = float(waits["idle"]["max_us"]) / 1000
    pw = float(waits["periodic"]["max_us"]) / 1000
    fw = float(waits["full_list"]["max_us"]) / 1000
    frag = live <= 262144
    total, hold, holds, journal = coll["sites_and_fragmentation" if frag else "sites_only"]
    how = ""
    if frag and journal:
        how = (f" and takes the fragmentation journal, merged into the kept ranges without the lock "
               f"({journal} of 3 collections; <= 262,144 live)")
    elif frag:
        how = (" and (start, size, device) of every live allocation, several slabs per hold "
               "(fragmentation with no kept set, <= 262,144 live)")
    row(5, f"periodic snapshot, {live} live, {sites} sites: longest core lock hold of vt_core_collect", hold,
        target=1.0, unit="ms", ok=hold <= 1.0,
        note=f"{holds} holds, {total:.3f} ms in all; copies sites" + how)
    row(5, f"periodic snapshots, {live} live: longest observed hook call", pw, floor=idle, target=1.0,
        unit="ms", ok=pw <= 1.0, note=f"floor = longest hook call with no snapshot running; "
        f"calls over 1 ms: {waits['periodic']['over_1ms']} of {waits['periodic']['calls']}")
    total, hold, holds, _ = coll["full_live_list"]
    row(5, f"full live-list snapshot, {live} live: longest core lock hold of vt_core_collect", hold,
        target=1.0, unit="ms", ok=hold <= 1.0, note=f"{holds} holds (chunks), {total:.3f} ms in all")
    row(5, f"full live-list snapshot, {live} live: longest observed hook call", fw, floor=idle, target=1.0,
        unit="ms", ok=fw <= 1.0)
    # the part of a hook call spent waiting for the core lock (held by a snapshot's
    # collection, the writer applying events, or another producer): what the figure
    # bounds; the call times above also hold every preemption of the hook thread
    for phase, what in (("periodic", "periodic snapshots"), ("full_list", "full live-list snapshot")):
        lw = float(waits[phase].get("lock_wait_max_us", "nan")) / 1000
        row(5, f"{what}, {live} live: the hook thread's longest wait for the core lock", lw,
            floor=float(waits["idle"].get("lock_wait_max_us", "nan")) / 1000, target=1.0, unit="ms",
            ok=lw <= 1.0, note="floor = the same with no snapshot running (the writer applying events); "
            "a hook takes the lock only when the event ring is full")
    pm = float(o["periodic_max_ms"])
    row(5, f"periodic snapshot of {sites} sites, {live} live: written in (max of {per})", pm, target=20,
        unit="ms", ok=pm <= 20,
        note=f"mean {o['periodic_mean_ms']} ms; the first one (defines {sites} stacks) {o['first_snapshot_ms']} ms")
    fl = float(o["full_list_ms"])
    row(5, f"full live list of {live} allocations: written in", fl / 1000, target=2.0, unit="s", ok=fl <= 2000)
    # the same, as a traced program has them: the writer thread takes the periodic
    # snapshots (every 50 ms here) between applying the hooks' ring events, so the
    # snapshot does not compete with a third thread for the two cores
    env["VRAMTRACE_INTERVAL_MS"] = "50"
    shutil.rmtree(env["VRAMTRACE_OUTPUT"], ignore_errors=True)
    wout = run([binp("bench_core"), "stall", str(live), str(sites), str(per), "writer"], env).splitlines()
    w = kv(wout[0])
    w.update(kv(wout[1]) if len(wout) > 1 else {})
    wm = float(w["writer_periodic_max_ms"])
    row(5, f"periodic snapshot of {sites} sites, {live} live, by the writer thread: written in (max of "
        f"{w['writer_periodic_n']})", wm, target=20, unit="ms", ok=wm <= 20,
        note=f"mean {w['writer_periodic_mean_ms']} ms; VRAMTRACE_INTERVAL_MS=50, the hook thread posting "
             "events all the while; the row above takes them on a third thread")
    if "writer_hook_lock_wait_max_us" in w:
        lock_wait_row(f"periodic snapshots by the writer thread, {live} live, the hook thread posting flat out",
                      w, "writer_hook_", "hook_calls", "; two busy threads on the two cores")
    # the same at paced rates (bench_core ... --rate): what a program whose allocation
    # rate the writer thread keeps up with sees; the H200 tops out at ~11,800
    # cudaMalloc+cudaFree pairs a second
    for rate in ((20000,) if ARGS.quick else (100000, 1000000)):
        shutil.rmtree(env["VRAMTRACE_OUTPUT"], ignore_errors=True)
        pout = run([binp("bench_core"), "stall", str(live), str(sites), str(per), "writer", "--rate", str(rate)],
                   env).splitlines()
        p = kv(pout[0])
        p.update(kv(pout[1]) if len(pout) > 1 else {})
        lock_wait_row(f"periodic snapshots by the writer thread, {live} live, the hook thread paced at {rate} pairs/s",
                      p, "writer_hook_", "hook_calls", f"; periodic snapshot max {p['writer_periodic_max_ms']} ms")
        env.pop("VRAMTRACE_INTERVAL_MS", None)
        shutil.rmtree(env["VRAMTRACE_OUTPUT"], ignore_errors=True)
        fout = run([binp("bench_core"), "stall", str(live), str(sites), str(per), "--rate", str(rate)], env)
        env["VRAMTRACE_INTERVAL_MS"] = "50"
        fw = {kv(x)["phase"]: kv(x) for x in fout.splitlines() if x.startswith("hook_wait")}
        for phase, what in (("periodic", "periodic snapshots by the main thread"),
                            ("full_list", "full live-list snapshot by the main thread")):
            lock_wait_row(f"{what}, {live} live, the hook thread paced at {rate} pairs/s", fw[phase], "", "calls",
                          f"; longest hook call {fw[phase]['max_us']} us (the hook thread preempted counts there)")


# ---- --figures 6: scale ----

def fig6():
    log("Figure 6: cost per event against live allocations; throughput against threads")
    lives = (1000, 10000) if ARGS.quick else (1000, 10000, 100000, 1000000)
    k = 2000 if ARGS.quick else 200000
    kcg = 200 if ARGS.quick else 5000
    for live in lives:
        o = kv(run([binp("bench_core"), "scale", str(live), str(k)], base_env()))
        cg, _, _ = callgrind([binp("bench_core"), "scale", str(live), str(kcg)], base_env())
        # the program runs the measured loop 1 (warm, min(k,1000)) + 3 times
        per = cg / (min(kcg, 1000) + 3 * kcg)
        row(6, f"{live} live: free+alloc pair in the core", float(o["ns_per_pair"]), unit="ns",
            note=f"{per:.0f} instructions per pair (callgrind)")
    n = 2000 if ARGS.quick else 100000
    for th in (1, 2, 4, 8):
        u = kv(run([binp("bench_alloc"), "threads", str(th), str(n // th)], base_env()))
        t = kv(run([binp("bench_alloc"), "threads", str(th), str(n // th)], traced_env()))
        up, tp = float(u["pairs_per_s"]), float(t["pairs_per_s"])
        row(6, f"{th} threads: traced pairs/s (default settings)", tp, floor=up, unit="pairs/s",
            note=f"traced/untraced throughput {tp / up:.3f}")


# ---- --figures 7: analyzer ----

def fig7():
    log("Figure 7: analyzer reading and reporting N snapshots x 500 sites")
    counts = (20, 100) if ARGS.quick else tuple(ARGS.analyzer_counts)
    for version in ARGS.analyzer_formats:
        fig7_version(counts, version)


def fig7_version(counts, version):
    sites = 500
    prev = None
    tag = f" (format v{version})"
    for n in counts:
        d = os.path.join(ARGS.work, f"ana{n}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        f = os.path.join(d, "vt.benchhost.4242.1700000000000000000.jsonl")
        size = int(kv(run([binp("gen_snapshots")] + ([f"--v{version}"] if version < 3 else []) + [f, str(n), str(sites)],
                          base_env()))["bytes"])
        t = time.perf_counter()
        p = subprocess.Popen([binp("vramtrace"), "report", "--format", "json", d],
                             env=base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        rc = os.waitstatus_to_exitcode(status)
        if rc not in (0, 1):
            raise RuntimeError(f"vramtrace report exited {rc}: {err[-1000:]}")
        mib = ru.ru_maxrss / 1024.0
        scale = f"; x{wall / prev:.2f} time for x{n // prevn} input" if prev else ""
        row(7, f"{n} snapshots x {sites} sites{tag} ({size / 2**20:.0f} MiB): report wall", wall, unit="s",
            target=3.0 * n / 10000, ok=wall <= 3.0 * n / 10000 if n >= 10000 else None,
            note=f"max RSS {mib:.0f} MiB (target 200 MiB at 10k){scale}")
        row(7, f"{n} snapshots x {sites} sites{tag}: report max RSS", mib, unit="MiB", target=200,
            ok=mib <= 200 if n <= 10000 else None)
        prev, prevn = wall, n
        shutil.rmtree(d, ignore_errors=True)


# ---- --figures 8: vramtrace_step() with a slow disk ----

def step_records(folder):
    n = 0
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), errors="replace") as fh:
            n += sum('"trigger":"step"' in line for line in fh)
    return n


def fig8():
    log("Figure 8: vramtrace_step() latency with a 20 ms write latency (strace write delay), paired runs")
    strace = shutil.which("strace")
    if not strace:
        row(8, "step latency with a slow disk", "skipped", note="strace is not installed")
        return
    steps = 5 if ARGS.quick else 200
    gap_us = 30000 if ARGS.quick else 50000
    rounds = 1 if ARGS.quick else 3
    cmd = [binp("bench_alloc"), "steplat", str(steps), str(gap_us)]
    # every write(2) of the process (the writer thread's records) waits 20 ms before it
    # runs; the floor is the same run under strace without the delay, so both pay the
    # same tracing of write calls
    base = [strace, "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=write"]
    slow_inject = ["-e", "inject=write:delay_enter=20000"]
    res = {"floor": [], "slow": []}
    written = {}
    for r in range(rounds):
        order = ["floor", "slow"] if r % 2 == 0 else ["slow", "floor"]
        for which in order:
            out = os.path.join(ARGS.work, "steplat-" + which)
            shutil.rmtree(out, ignore_errors=True)
            env = traced_env()
            env["VRAMTRACE_OUTPUT"] = out
            pre = base + (slow_inject if which == "slow" else []) + ["--"]
            try:
                k = kv(run(pre + cmd, env))
            except RuntimeError as e:
                if r == 0 and which == order[0]:
                    row(8, "step latency with a slow disk", "skipped", note=f"strace cannot run here: {e}")
                    return
                raise
            res[which].append(k)
            written[which] = step_records(out)
    med = lambda which, key: statistics.median(float(k[key]) for k in res[which])
    fl, sl = med("floor", "step_mean_us"), med("slow", "step_mean_us")
    added_ms = (sl - fl) / 1000
    row(8, f"vramtrace_step() mean, 20 ms write latency, minus the same without it ({steps} steps, "
        f"{gap_us / 1000:.0f} ms apart)", added_ms, floor=fl / 1000, target=0.1, unit="ms", ok=added_ms <= 0.1,
        note=f"median of {rounds} pairs; step mean {sl:.1f} us slow, {fl:.1f} us floor; "
             f"step records written {written.get('slow')} and {written.get('floor')} of {steps + 1}")
    for key, what in (("step_p99_us", "99th percentile"), ("step_max_us", "longest")):
        row(8, f"vramtrace_step() {what}, 20 ms write latency", med("slow", key) / 1000,
            floor=med("floor", key) / 1000, unit="ms", note="floor = the same without the delay")


def fig9():
    """A process that never calls CUDA under a global LD_PRELOAD: a shell loop of 200
    /bin/true, a fork (bench_inert fork), its open descriptors (bench_inert fds); each
    untraced and traced, alternated in one run (paired)."""
    rounds = 2 if ARGS.quick else ARGS.rounds
    loop = ["sh", "-c", "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done"]
    walls, cpus = {False: [], True: []}, {False: [], True: []}
    for k in range(rounds):
        order = [(False, base_env()), (True, traced_env())]
        if k % 2:
            order.reverse()
        for traced, env in order:
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            run(loop, env)
            walls[traced].append(time.perf_counter() - t)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[traced].append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
    med = statistics.median
    r = med(t / u for t, u in zip(walls[True], walls[False]))
    u, t = med(walls[False]), med(walls[True])
    row(9, "200 x /bin/true in sh: traced/untraced wall", r, floor=1.0, target=1.10, unit="x",
        ok=r <= 1.10, note=f"untraced {u * 1e3:.1f} ms, traced {t * 1e3:.1f} ms (medians of {rounds} pairs)")
    rc = med(t / u for t, u in zip(cpus[True], cpus[False]))
    row(9, "200 x /bin/true in sh: traced/untraced CPU time (user+sys of the loop and its children)", rc,
        floor=1.0, target=1.10, unit="x", ok=rc <= 1.10,
        note=f"untraced {med(cpus[False]) * 1e3:.1f} ms, traced {med(cpus[True]) * 1e3:.1f} ms; "
             f"less sensitive than wall time to other load on the machine")
    n = "200" if ARGS.quick else "2000"
    diffs, us, cdiffs, cus = [], [], [], []
    for k in range(rounds):
        a = kv(run([binp("bench_inert"), "fork", n], base_env()))
        b = kv(run([binp("bench_inert"), "fork", n], traced_env()))
        diffs.append(float(b["fork_us"]) - float(a["fork_us"]))
        us.append(float(a["fork_us"]))
        cdiffs.append(float(b["cpu_us"]) - float(a["cpu_us"]))
        cus.append(float(a["cpu_us"]))
    d = statistics.median(diffs)
    row(9, "fork+_exit+wait: traced minus untraced", d, floor=statistics.median(us), target=20,
        unit="us", ok=d <= 20, note="floor = the untraced fork itself")
    d = statistics.median(cdiffs)
    row(9, "fork+_exit+wait: traced minus untraced CPU time (parent and child, user+sys)", d,
        floor=statistics.median(cus), target=20, unit="us", ok=d <= 20,
        note="floor = the untraced fork's CPU time")
    a = run([binp("bench_inert"), "fds"], base_env()).strip()
    b = run([binp("bench_inert"), "fds"], traced_env()).strip()
    row(9, "open descriptors of a non-CUDA process (traced)", b, floor=a, target=a, ok=a == b)


# ---- --figures 11: the size cap (VRAMTRACE_MAX_BYTES) ----

def cap_run(folder, steps, leak, max_bytes, compress=1):
    """prog_capjob STEPS LEAK under the preload, compressed (the default) or not, with
    VRAMTRACE_MAX_BYTES=max_bytes: (file bytes, the largest seen while it ran, wall s,
    rewrite times in ms from the writer's info lines, the report's JSON process)."""
    shutil.rmtree(folder, ignore_errors=True)
    env = traced_env(OUTPUT=folder, INTERVAL_MS=0, MAX_BYTES=max_bytes, COMPRESS=compress, LOG="info")
    t = time.perf_counter()
    p = subprocess.Popen([binp("prog_capjob"), str(steps), str(leak)], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    biggest = 0
    while p.poll() is None:
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            try:
                biggest = max(biggest, os.stat(os.path.join(folder, name)).st_size)
            except FileNotFoundError:
                pass
        time.sleep(0.005)
    wall = time.perf_counter() - t
    err = p.stderr.read()
    if p.returncode != 0:
        raise RuntimeError(f"prog_capjob exited {p.returncode}: {err[-2000:]}")
    names = os.listdir(folder)
    path = os.path.join(folder, names[0])
    size = os.stat(path).st_size
    ms = [int(x) / 1000 for x in re.findall(r"size cap: .* rewritten to \d+ bytes .* in (\d+) us", err)]
    rep = json.loads(run([binp("vramtrace"), "report", "--format", "json", path], base_env()))
    return size, max(size, biggest), wall, ms, rep["processes"][0]


def fig11():
    """One deterministic job with a slow planted leak (prog_capjob: LEAK bytes more
    every step), run uncapped (the floor) and capped, in one run: the file's size, the
    leak's rate as the report finds it, the writer's cost of one rewrite, wall time."""
    if not os.path.exists(binp("prog_capjob")):
        row(11, "size cap", "skipped", note="prog_capjob is not built (tests/cap)")
        return
    cap, cap_txt = (64 << 10, "64KiB") if ARGS.quick else (4 << 20, "4MiB")
    leak = 256
    for compress, kind in ((1, "zstd"), (0, "plain")):
        # --quick: just past the cap (about 76 B per step compressed, 450 plain)
        steps = (1200 if compress else 300) if ARGS.quick else 100000
        log(f"Figure 11: VRAMTRACE_MAX_BYTES={cap_txt} on {steps} steps ({kind} stream), against the same job uncapped")
        us, _, uwall, _, up = cap_run(os.path.join(ARGS.work, "cap-off"), steps, leak, 0, compress)
        cs, cmax, cwall, ms, cp = cap_run(os.path.join(ARGS.work, "cap-on"), steps, leak, cap_txt, compress)
        row(11, f"{kind}: file bytes, capped at {cap_txt} (largest seen while running; final {cs})", cmax,
            floor=us, target=int(cap * 1.125), unit="B", ok=cmax <= cap * 1.125,
            note=f"floor = uncapped; {len(ms)} rewrites")
        def leak_of(p):
            g = [s for s in p["sites"] if s["title"].startswith("grow_cache")]
            return (g[0]["verdict"], g[0]["growth_bytes_per_step"], g[0]["leaked_bytes"]) if g else (None, None, None)
        cv, crate, cleaked = leak_of(cp)
        uv, urate, uleaked = leak_of(up)
        sm = cp.get("summarised_steps") or {}
        ut = dict(map(tuple, up["total_live_bytes_by_step"]))
        exact = [(st, b) for st, b in cp["total_live_bytes_by_step"] if st > sm.get("last_step", -1)]
        same = sum(ut.get(st) == b for st, b in exact)
        row(11, f"{kind}: leak found, B/step at grow_cache (capped)", crate, floor=urate, target=leak, unit="B/step",
            ok=cv == "leak" and crate == leak,
            note=f"verdict {cv}; leaked {cleaked} vs {uleaked} uncapped; steps {sm.get('first_step')}-"
                 f"{sm.get('last_step')} summarised in {sm.get('buckets')} buckets; {same} of {len(exact)} "
                 f"later steps as uncapped")
        if ms:
            row(11, f"{kind}: writer cost of one rewrite (longest)", max(ms), floor=statistics.median(ms), unit="ms",
                note="floor = the median rewrite; on the writer thread, under its output lock")
        row(11, f"{kind}: wall time capped/uncapped", cwall / uwall, floor=1.0, unit="x",
            note=f"{cwall:.2f} s vs {uwall:.2f} s, one pair")




def stream_bytes(lib, steps, compress):
    """Size in bytes of the one stream bench_multigpu STEPS writes on 8 simulated devices
    under preload `lib` (VRAMTRACE_COMPRESS=compress, every other setting default)."""
    out = os.path.join(ARGS.work, "multigpu")
    shutil.rmtree(out, ignore_errors=True)
    env = traced_env()
    env["LD_PRELOAD"] = lib
    env["VRAMTRACE_OUTPUT"] = out
    env["VRAMTRACE_COMPRESS"] = str(compress)
    env["SIMCUDA_DEVICES"] = "8"
    run([binp("bench_multigpu"), str(steps), "8"], env)
    files = [f for f in os.listdir(out) if f.startswith("vt.")]
    if len(files) != 1:
        raise RuntimeError(f"bench_multigpu wrote {files}, expected one stream")
    return os.path.getsize(os.path.join(out, files[0]))


def fig12():
    """Bytes per step of the snapshot stream of one rank of an 8-GPU job (bench_multigpu:
    41 sites change per step), as written by default (zstd) and plain: (size at 2N - size
    at N) / N, so the header and the definitions written once are left out; and the
    7-days-at-2-steps/s projection per rank. With --before-lib (another build's
    libvramtrace.so, e.g. the branch point), the same runs with it side by side: the
    floor column is then the "before" figure and the note gives before/after."""
    n = 20 if ARGS.quick else 1000
    after = ARGS.preload_lib or os.path.join(ARGS.build, "lib", "libvramtrace.so")
    week = 7 * 86400 * 2   # steps in 7 days at 2 steps/s
    for compress, what in ((1, "zstd (the default)"), (0, "plain (VRAMTRACE_COMPRESS=0)")):
        per = {}
        for label, lib in (("after", after), ("before", ARGS.before_lib)):
            if lib:
                a, b = stream_bytes(lib, n, compress), stream_bytes(lib, 2 * n, compress)
                per[label] = (b - a) / n
        before = per.get("before")
        note = f"N = {n}; 7 days at 2 steps/s: {per['after'] * week / 1e9:.2f} GB per rank"
        if before:
            note += f"; before {before * week / 1e9:.2f} GB, before/after {before / per['after']:.1f}x"
        row(12, f"stream bytes per step, 8 GPUs, 41 sites changing, {what}", per["after"], floor=before,
            target=650 if compress else None, unit="B", ok=per["after"] <= 650 if compress else None, note=note)



# ---- --figures 13: the event trace (VRAMTRACE_TRACE=1) ----

def fig13():
    """The cost of the event trace on the churn program of --figures 3: the same paired
    alternation, with the floor the default traced run (VRAMTRACE_TRACE unset) and the
    measured run VRAMTRACE_TRACE=1; a second row gives the traced/untraced ratio of each
    beside the other, and the trace file's bytes per event."""
    log("Figure 13: event trace, churn wall time VRAMTRACE_TRACE=1 / default, paired runs")
    rounds = 2 if ARGS.quick else ARGS.rounds
    pairs = 2000 if ARGS.quick else (ARGS.churn_pairs or 100000)
    one = kv(run([binp("bench_alloc"), "churn", "20000", "0"], base_env()))
    alloc_ns = 1e9 / float(one["pairs_per_s"])
    sp = kv(run([binp("bench_alloc"), "calibrate", str(max(1000, int(10000 - alloc_ns)))], base_env()))["iters"]
    cmd = [binp("bench_alloc"), "churn", str(pairs), sp]
    out = os.path.join(ARGS.work, "out")
    ratios, ds, ts, us, tbytes = [], [], [], [], []
    for r in range(rounds):
        order = [("untraced", base_env()), ("default", traced_env()), ("trace", traced_env(TRACE=1))]
        if r % 2:
            order.reverse()
        res = {}
        for label, env in order:
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            run(cmd, env)
            res[label] = time.perf_counter() - t
            if label == "trace":
                tbytes.append(sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
                                  if f.endswith(".trace")))
        ratios.append(res["trace"] / res["default"])
        us.append(res["untraced"])
        ds.append(res["default"])
        ts.append(res["trace"])
    r = statistics.median(ratios)
    u, d, t = statistics.median(us), statistics.median(ds), statistics.median(ts)
    row(13, f"churn ({pairs} pairs): VRAMTRACE_TRACE=1 / default traced wall", r, floor=1.0, unit="x",
        note=f"median of {rounds} rounds; default {d:.3f} s, trace {t:.3f} s; "
             f"{(t - d) / pairs * 1e6:+.2f} us per pair")
    row(13, "churn: traced/untraced wall, default | VRAMTRACE_TRACE=1", t / u, floor=d / u, unit="x",
        note=f"untraced {u:.3f} s; floor column = the default's ratio")
    ev = 2 * pairs
    row(13, "trace file bytes per event", statistics.median(tbytes) / ev, unit="B",
        note=f"{ev} events; 16-byte header included")


# ---- --figures 10: a bounded analyzer ----

def analyzer_run(vt, folder):
    """`vt report --format json folder`: (wall s, user+sys CPU s, max RSS MiB) of the
    analyzer alone, as /usr/bin/time measures it (a child of this Python process would
    count Python's own pages from before its exec in its max RSS)."""
    env = base_env()
    env["VRAMTRACE_NO_DWARF"] = "1"
    timer = shutil.which("time", path="/usr/bin:/bin")
    if not timer:
        raise RuntimeError("/usr/bin/time not found (Debian package time): figure 10 needs it")
    t = time.perf_counter()
    p = subprocess.run([timer, "-f", "VTRU %M %U %S", vt, "report", "--format", "json", folder], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=3600)
    wall = time.perf_counter() - t
    m = re.search(r"VTRU (\d+) ([\d.]+) ([\d.]+)", p.stderr)
    if p.returncode not in (0, 1) or not m:
        raise RuntimeError(f"{vt} report exited {p.returncode}: {p.stderr[-1000:]}")
    return wall, float(m.group(2)) + float(m.group(3)), int(m.group(1)) / 1024.0


def gen_job(path, steps, sites):
    """One generated stream (bench/gen_snapshots: every site changes every step); its size."""
    return int(kv(run([binp("gen_snapshots"), path, str(steps), str(sites)], base_env()))["bytes"])


def gen_ranks(folder, ranks, steps, sites):
    """A folder of `ranks` streams of one generated job: one file made by gen_snapshots,
    copied with the header's pid and rank rewritten (the reader keeps one stream per
    process). Total bytes."""
    os.makedirs(folder)
    one = os.path.join(ARGS.work, "rank-template.jsonl")
    gen_job(one, steps, sites)
    total = 0
    with open(one, "rb") as src:
        header = src.readline()
        for r in range(ranks):
            pid = 5000 + r
            h = header.replace(b'"pid":4242', b'"pid":%d' % pid).replace(
                b'"rank":null,"local_rank":null,"world_size":null',
                b'"rank":%d,"local_rank":%d,"world_size":%d' % (r, r % 8, ranks))
            dst = os.path.join(folder, f"vt.benchhost.{pid}.1700000000000000000.jsonl")
            with open(dst, "wb") as out:
                out.write(h)
                src.seek(len(header))
                shutil.copyfileobj(src, out, 1 << 20)
            total += os.path.getsize(dst)
    os.unlink(one)
    return total


def fig10():
    """The analyzer's memory and reading speed on long jobs: max RSS at two step counts of
    one generated job (the ratio is what grows with steps), on a generated many-rank
    folder at two step counts, and MB/s of uncompressed records; each for this build
    and, with --before-build, another build (the floor), run one after the other."""
    log("Figure 10: a bounded analyzer (max RSS, MB/s)")
    builds = [("after", binp("vramtrace"))]
    if ARGS.before_build:
        builds.append(("before", os.path.join(os.path.abspath(ARGS.before_build), "bin", "vramtrace")))
    sites = 20 if ARGS.quick else ARGS.bounded_sites
    counts = (500, 2500) if ARGS.quick else (20000, 100000)
    res = {}
    for n in counts:
        d = os.path.join(ARGS.work, f"bounded{n}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        size = gen_job(os.path.join(d, "vt.benchhost.4242.1700000000000000000.jsonl"), n, sites)
        for name, vt in builds:
            wall, cpu, mib = analyzer_run(vt, d)
            res[(name, n)] = (wall, cpu, mib, size)
            log(f"  {name}: {n} steps x {sites} sites ({size / 1e6:.0f} MB): {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU, max RSS {mib:.1f} MiB, {size / 1e6 / wall:.0f} MB/s")
        shutil.rmtree(d, ignore_errors=True)
    a, b = counts
    after = res[("after", b)][2] / res[("after", a)][2]
    before = res[("before", b)][2] / res[("before", a)][2] if ARGS.before_build else None
    row(10, f"max RSS at {b} / at {a} steps ({sites} sites)", after, floor=before, target=1.5, unit="x",
        ok=after <= 1.5 if not ARGS.quick else None,
        note=f"{res[('after', a)][2]:.1f} -> {res[('after', b)][2]:.1f} MiB"
             + (f"; before {res[('before', a)][2]:.1f} -> {res[('before', b)][2]:.1f} MiB" if before else ""))
    for name, _ in builds:
        wall, cpu, mib, size = res[(name, b)]
        row(10, f"{name}: MB/s of records read, {b} steps x {sites} sites", size / 1e6 / wall,
            floor=(res[("before", b)][3] / 1e6 / res[("before", b)][0]) if name == "after" and ARGS.before_build else None,
            target=200, unit="MB/s", ok=size / 1e6 / wall >= 200 if name == "after" and not ARGS.quick else None,
            note=f"{size / 1e6 / cpu:.0f} MB per CPU second; {wall:.2f} s wall, {cpu:.2f} s CPU")
    ranks = 4 if ARGS.quick else ARGS.bounded_ranks
    rsteps = (200, 1000) if ARGS.quick else tuple(ARGS.bounded_rank_steps)
    rres = {}
    for n in rsteps:
        d = os.path.join(ARGS.work, f"ranks{n}")
        shutil.rmtree(d, ignore_errors=True)
        size = gen_ranks(d, ranks, n, sites)
        for name, vt in builds:
            wall, cpu, mib = analyzer_run(vt, d)
            rres[(name, n)] = mib
            log(f"  {name}: {ranks} ranks x {n} steps x {sites} sites ({size / 1e6:.0f} MB): {wall:.1f} s wall, "
                f"{cpu:.1f} s CPU, max RSS {mib:.1f} MiB, {size / 1e6 / wall:.0f} MB/s")
        shutil.rmtree(d, ignore_errors=True)
    for n in rsteps:
        row(10, f"max RSS, {ranks} ranks x {n} steps x {sites} sites", rres[("after", n)],
            floor=rres.get(("before", n)), target=256, unit="MiB",
            ok=rres[("after", n)] <= 256 if not ARGS.quick else None)
    lo, hi = rsteps[0], rsteps[-1]
    row(10, f"max RSS, {ranks} ranks: {hi} / {lo} steps per rank", rres[("after", hi)] / rres[("after", lo)],
        floor=rres[("before", hi)] / rres[("before", lo)] if ARGS.before_build else None, unit="x",
        note="flat in steps: a week (1.2M steps per rank) stays at the same RSS")


# ---- --figures 20: the HTML report's size and first paint ----

def browser_node_dir():
    """build/browser with playwright-core installed from tests/browser's lock file (the
    browser test's folder and install step), or None with the reason logged."""
    if not os.path.exists("/usr/bin/chromium"):
        log("  /usr/bin/chromium is absent (scripts/setup.sh installs it): first paint not measured")
        return None
    if not shutil.which("npm"):
        log("  npm is absent: first paint not measured")
        return None
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "browser")
    nd = os.path.join(ARGS.build, "browser")
    lock = os.path.join(src, "package-lock.json")
    stamp = os.path.join(nd, ".installed-lock")
    have = os.path.exists(os.path.join(nd, "node_modules", "playwright-core", "package.json"))
    if not have or not os.path.exists(stamp) or open(stamp, "rb").read() != open(lock, "rb").read():
        os.makedirs(nd, exist_ok=True)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(src, f), nd)
        env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
        p = subprocess.run(["npm", "ci", "--prefix", nd, "--ignore-scripts", "--no-audit", "--no-fund",
                            "--prefer-offline"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise RuntimeError("npm ci of playwright-core failed: " + p.stdout[-1500:])
        shutil.copy(lock, stamp)
    return nd


def fig20():
    """The HTML report's budgets: its size for a 20,000-step job of 8 ranks (one GPU
    each) and for a 10,000-step, 500-site process (generated streams, every site changing
    every step), and its first paint and 'views drawn' time in headless chromium beside
    the floor: an almost empty page opened the same way in the same browser."""
    log("Figure 20: HTML report size and first paint (headless chromium)")
    vt = binp("vramtrace")
    cases = [("20,000 steps x 8 ranks (40 sites each)", 8, 20000, 40, 5 << 20),
             ("10,000 steps x 500 sites (1 process)", 1, 10000, 500, 8 << 20),
             ("300 steps x 64 ranks (30 sites each; 16 keep their views)", 64, 300, 30, 5 << 20)]
    if ARGS.quick:
        cases = [("200 steps x 8 ranks (quick)", 8, 200, 10, 5 << 20), ("100 steps x 50 sites (quick)", 1, 100, 50, 8 << 20)]
    pages = []
    for i, (what, ranks, steps, sites, budget) in enumerate(cases):
        folder = os.path.join(ARGS.work, f"html{i}")
        shutil.rmtree(folder, ignore_errors=True)
        if ranks > 1:
            gen_ranks(folder, ranks, steps, sites)
        else:
            os.makedirs(folder)
            gen_job(os.path.join(folder, "vt.benchhost.4242.1700000000000000000.jsonl"), steps, sites)
        html = os.path.join(ARGS.work, f"html{i}.html")
        if os.path.exists(html):
            os.unlink(html)
        t = time.perf_counter()
        run([vt, "report", "--format", "html", "-o", html, folder], base_env(), timeout=1800)
        secs = time.perf_counter() - t
        size = os.path.getsize(html)
        row(20, f"page size, {what}", size / 1048576.0, target=budget / 1048576.0, unit="MiB", ok=size <= budget,
            note=f"report written in {secs:.1f} s")
        pages.append((what, html))
    nd = browser_node_dir()
    if not nd:
        return
    floor = os.path.join(ARGS.work, "html-floor.html")
    with open(floor, "w") as fh:
        fh.write("<!DOCTYPE html><html><head><meta charset=utf-8><title>floor</title></head>"
                 "<body><h1>vramtrace report</h1><script>performance.mark('vt-ready')</script></body></html>\n")
    rounds = 2 if ARGS.quick else 5
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "html_paint.mjs")
    out = run(["node", script, nd, str(rounds), floor] + [h for _, h in pages], base_env(), timeout=900)
    res = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if len(res) != len(pages) + 1:
        raise RuntimeError("html_paint.mjs gave %d results for %d pages" % (len(res), len(pages) + 1))
    med = lambda xs: statistics.median([x for x in xs if x is not None]) if any(x is not None for x in xs) else None
    f_fcp = med(res[0]["fcp_ms"])
    for (what, _), r in zip(pages, res[1:]):
        if r["errors"]:
            raise RuntimeError(f"{what}: page errors: {r['errors'][:3]}")
        fcp, ready = med(r["fcp_ms"]), med(r["ready_ms"])
        row(20, f"first contentful paint, {what}", fcp, floor=f_fcp, target=2000.0, unit="ms",
            ok=fcp is not None and fcp <= 2000.0, note=f"median of {rounds}; floor: an almost empty page")
        row(20, f"views drawn ('vt-ready'), {what}", ready, floor=med(res[0]["ready_ms"]), target=2000.0, unit="ms",
            ok=ready is not None and ready <= 2000.0, note=f"median of {rounds}")


FIGS = {1: fig1, 2: fig2, 3: fig3, 4: fig4, 5: fig5, 6: fig6, 7: fig7, 8: fig8, 9: fig9, 10: fig10, 11: fig11, 12: fig12, 13: fig13, 20: fig20}


# ---- --figures 14: tensor-rate churn (what --tensors makes of a transformer) ----

# Instructions per pair beyond untraced of the full run below at the branch point of
# this figure (the tree before the bookkeeping and Python-frame passes); the target
# is half of it. docs/performance.md "Tensor-rate churn" records the measurement.
TENSOR_BEFORE = 5325


def tensor_cmd(pairs, py_frames, native=30, threads=4):
    return [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_tensor.py"),
            os.path.join(ARGS.build, "lib", "libbench_tensor.so"), str(threads), str(pairs),
            str(py_frames), str(native)]


def tensor_per_pair(env, py_frames, p1, p2, threads=4):
    """callgrind instructions per pair inside bench_measured_tensor_pair: the slope
    between p1 and p2 pairs per thread (the warm-up and first captures cancel)."""
    a, out, _ = callgrind(tensor_cmd(p1, py_frames, threads=threads), env)
    b, _, _ = callgrind(tensor_cmd(p2, py_frames, threads=threads), env)
    return (b - a) / (threads * (p2 - p1)), kv(out)


def fig14():
    """cudaMallocAsync/cudaFreeAsync pairs from 8 Python call sites, 20 Python frames
    and 48 native frames deep, 4 threads (bench_tensor.py): instructions per pair
    traced (default settings: 32 frames) against untraced, the same with stacks off,
    and the cost of one Python frame on the whole hook path (20 against 4 frames)."""
    log("Figure 14: tensor-rate churn, 4 threads x 8 Python sites, 20 Python + 48 native frames "
        "(callgrind instructions per cudaMallocAsync+cudaFreeAsync pair)")
    if ARGS.tensor_wall:
        tensor_wall()
        return
    if ARGS.quick:
        # proves the program runs, untraced and traced; callgrind takes too long for the smoke test
        o = kv(run(tensor_cmd(20, 20), base_env()))
        run(tensor_cmd(20, 20), traced_env())
        row(14, "tensor churn ran untraced and traced (quick: not measured)", o.get("pairs"), unit="pairs",
            note=f"py_frames={o.get('py_frames')} native_frames={o.get('native_frames')}")
        return
    p1, p2 = 100, 300
    u, o = tensor_per_pair(base_env(), 20, p1, p2)
    t, _ = tensor_per_pair(traced_env(), 20, p1, p2)
    extra = t - u
    row(14, "traced (default settings) minus untraced, per pair", extra, floor=u, target=TENSOR_BEFORE / 2,
        unit="instr", ok=extra <= TENSOR_BEFORE / 2,
        note=f"floor = the untraced pair; before {TENSOR_BEFORE}, ratio {extra / TENSOR_BEFORE:.3f} of it; "
             f"py_frames={o.get('py_frames')} native_frames={o.get('native_frames')} threads={o.get('threads')}")
    # one thread: the per-frame slope is a small difference of two counts, and the
    # interleaving of 4 threads moves each count by more than it
    t20, o = tensor_per_pair(traced_env(), 20, p1, p2, threads=1)
    t4, o4 = tensor_per_pair(traced_env(), 4, p1, p2, threads=1)
    per = (t20 - t4) / (int(o.get("py_frames", 20)) - int(o4.get("py_frames", 4)))
    # one thread: the count is the same from run to run (with 4 threads the simulated
    # driver's malloc moves both counts by up to about 100 per pair)
    u1, _ = tensor_per_pair(base_env(), 20, p1, p2, threads=1)
    row(14, "the same pairs on one thread: traced minus untraced, per pair (reference)", t20 - u1, floor=u1,
        unit="instr", note="deterministic: the before/after comparison")
    t0, _ = tensor_per_pair(traced_env(DEPTH=0), 20, p1, p2, threads=1)
    row(14, "of which the hooks with stacks off (VRAMTRACE_DEPTH=0), one thread (reference)", t0 - u1,
        floor=u1, unit="instr", note="bookkeeping of a stream-ordered pair")
    row(14, f"one Python frame on the whole hook path (traced, {o.get('py_frames')} minus {o4.get('py_frames')} Python frames, per frame)", per,
        floor=None, target=40, unit="instr", ok=per <= 40,
        note=f"capture, hash and dedup of the frame; {o4.get('py_frames')} vs {o.get('py_frames')} frames")



def tensor_wall():
    """Figure 14 as paired wall times: bench_tensor.py untraced and traced alternate
    (rotated order each round), the per-round ratio of the pairs' wall time (all
    threads, the interpreter's work between pairs included), medians; beside it the
    traced run with stacks off, periodic snapshots off and NVML off."""
    rounds = 2 if ARGS.quick else ARGS.rounds
    pairs = 200 if ARGS.quick else 5000
    cmd = tensor_cmd(pairs, 20)
    configs = [("default settings", {}), ("VRAMTRACE_DEPTH=0", {"DEPTH": 0}),
               ("VRAMTRACE_INTERVAL_MS=0", {"INTERVAL_MS": 0}), ("VRAMTRACE_NVML=0", {"NVML": 0})]
    walls = {None: []}
    for label, _ in configs:
        walls[label] = []
    for r in range(rounds):
        order = [(None, base_env())] + [(label, traced_env(**kw)) for label, kw in configs]
        k = r % len(order)
        for label, env in order[k:] + order[:k]:
            shutil.rmtree(os.path.join(ARGS.work, "out"), ignore_errors=True)
            walls[label].append(float(kv(run(cmd, env))["wall_ns"]))
    med = statistics.median
    for label, kw in configs:
        ratio = med(t / u for t, u in zip(walls[label], walls[None]))
        du = (med(walls[label]) - med(walls[None])) / (4 * pairs) / 1000
        row(14, f"tensor churn wall, {label}: traced/untraced", ratio, floor=1.0,
            target=1.03 if not kw else None, unit="x", ok=(ratio <= 1.03) if not kw else None,
            note=f"median of {rounds} paired rounds; untraced {med(walls[None]) / 1e6:.1f} ms, traced "
                 f"{med(walls[label]) / 1e6:.1f} ms for {4 * pairs} pairs; {du:+.2f} us per pair")


FIGS[14] = fig14


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--figures", default="1,2,3,4,5,6,7,8,10,11,12,13,14,20")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--analyzer-counts", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--analyzer-formats", type=int, nargs="+", default=[3], choices=[1, 2, 3],
                    help="snapshot format versions figure 7 generates and reads (default: 3, the preload's)")
    ap.add_argument("--before-build", default=None,
                    help="figure 10: another build folder whose bin/vramtrace is measured beside this one (the floor)")
    ap.add_argument("--bounded-sites", type=int, default=100, help="figure 10: sites of the generated job")
    ap.add_argument("--bounded-ranks", type=int, default=64, help="figure 10: ranks of the generated folder")
    ap.add_argument("--bounded-rank-steps", type=int, nargs="+", default=[2000, 10000],
                    help="figure 10: steps per rank of the generated folder (two counts: RSS flat in steps)")
    ap.add_argument("--hyperfine", action="store_true", help="also run hyperfine (figure 3)")
    ap.add_argument("--churn-pairs", type=int, default=None,
                    help="alloc/free pairs of figure 3's churn run (default 100000)")
    ap.add_argument("--churn-variants", action="store_true",
                    help="figure 3: also the churn with stacks off, periodic snapshots off, NVML off")
    ap.add_argument("--churn-async", action="store_true",
                    help="figure 3: also the churn with stream-ordered pairs (cudaMallocAsync/cudaFreeAsync)")
    ap.add_argument("--tensor-wall", action="store_true",
                    help="figure 14: paired wall times (untraced, traced, and the diagnosis rows) instead of "
                         "callgrind counts (a GPU machine, --cuda-lib)")
    ap.add_argument("--verbose", action="store_true", help="callgrind per-function costs")
    ap.add_argument("--json", default=None)
    ap.add_argument("--preload-lib", default=None,
                    help="the libvramtrace.so the traced runs preload (default BUILD/lib/libvramtrace.so): "
                         "another build's, to measure before and after with the same benchmark programs")
    ap.add_argument("--before-lib", default=None,
                    help="figure 12: another build's libvramtrace.so (e.g. the branch point) measured side by "
                         "side with this one")
    ap.add_argument("--cuda-lib", default=None,
                    help="folder of a real libcudart.so.13/libcuda.so.1 (GPU machine) instead of build/simcuda")
    ARGS = ap.parse_args()
    ARGS.build = os.path.abspath(ARGS.build)
    ARGS.work = os.path.abspath(ARGS.work or os.path.join(ARGS.build, "bench-work"))
    os.makedirs(ARGS.work, exist_ok=True)
    figs = [int(x) for x in ARGS.figures.split(",") if x]
    need_vg = any(f in (1, 2, 6, 14) for f in figs)
    if need_vg and not shutil.which("valgrind"):
        log("valgrind not found: instruction-count figures need it")
        return 1
    failed = 0
    for f in figs:
        t = time.perf_counter()
        try:
            FIGS[f]()
        except Exception as e:  # report and go on with the other figures
            log(f"  fig{f} FAILED TO RUN: {e}")
            failed += 1
        log(f"  (figure {f}: {time.perf_counter() - t:.1f} s)")
    if ARGS.json:
        with open(ARGS.json, "w") as fh:
            json.dump(RESULTS, fh, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
