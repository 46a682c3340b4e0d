#!/usr/bin/env python3
"""check_monitoring.py — the monitoring_* tests (issue 9, items 3 and 5).

    check_monitoring.py prom|host|ecc|nonvml|nvmlload --lib LIB --prog PROG --simcuda DIR
                        --work DIR [--promtool PATH]
    check_monitoring.py examples --examples DIR [--promtool PATH]

prom     runs `prog_monitor prom` with VRAMTRACE_PROMETHEUS and checks the textfile
         while running and after exit: exact figures, labels, no timestamps, HELP/TYPE,
         the atomic-rename leftovers, `promtool check metrics` (when installed);
         then 6 runs of 40 unpaced steps (3 without step snapshots): the UUID label
         is there in each.
host     runs `prog_monitor steps` and checks the snapshots' "host" object: RSS,
         cgroup, and the simulated NVML's device memory, consistent with the
         simulated device (capacity, 64 MiB context overhead, 2 MiB rounding).
ecc      the same with SIMCUDA_ECC_SBE/DBE/RISE_AFTER_MS: the ECC counts and row
         remaps read 0 first and rise during the run.
nonvml   SIMCUDA_NVML=off: no "nvml" key, everything else still there; then
         VRAMTRACE_NVML=0 with a working NVML: no "nvml" key and libnvidia-ml.so.1
         never loaded (LD_DEBUG=files).
nvmlload SIMCUDA_NVML_CTOR_CUDA=1: NVML's constructor has another thread cudaMalloc
         and waits for it while the loader's lock is held (a thread inside dlopen
         waiting for CUDA work): the preload loads NVML with no lock of its own held,
         so that thread's first allocation is not kept waiting for the writer's
         start ("simnvml: ... still blocked" otherwise); NVML figures as usual.
examples promtool check rules / test rules on examples/monitoring, the dashboard JSON
         and that every vramtrace_* name they use is one the preload writes.
Exit 0 = every check held; each failure prints one line.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

MIB = 1 << 20
SIM_UUID0 = "GPU-73696d63-7564-612d-6465-760000000000"   # simcuda: "simcuda-dev" + ordinal
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run_prog(a, args, extra_env, interval=100):
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    env = dict(os.environ)
    for k in list(env):
        if (k.startswith("VRAMTRACE_") and k != "VRAMTRACE_COMPRESS") or k.startswith("SIMCUDA_"):
            del env[k]
    env.update({
        # sanitizer builds: the runtime first (tests/reliability/sanitize_run.sh)
        "LD_PRELOAD": ":".join(filter(None, (os.environ.get("VT_SANITIZER_PRELOAD"), a.lib))),
        "LD_LIBRARY_PATH": a.simcuda,
        "VRAMTRACE_OUTPUT": os.path.join(a.work, "out"),
        "VRAMTRACE_INTERVAL_MS": str(interval),
        # host signals sampled as often as the periodic snapshots (format version 4
        # writes them only in the record after a new sample)
        "VRAMTRACE_HOST_INTERVAL_MS": str(interval or 1000),
        "VRAMTRACE_LOG": "warn",
        "SIMCUDA_MEM": "1GiB",
    })
    env.update(extra_env)
    p = subprocess.run([a.prog] + args, env=env, capture_output=True, text=True, timeout=50)
    check(p.returncode == 0, f"prog_monitor {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    check("vramtrace:" not in p.stderr, f"vramtrace warned: {p.stderr.strip()}")
    return p


def snapshots(a):
    files = glob.glob(os.path.join(a.work, "out", "*.jsonl"))
    check(len(files) == 1, f"one snapshot file expected, found {files}")
    snaps = []
    for f in files:
        with open(f) as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("t") == "snapshot":
                    snaps.append(r)
    return snaps


def header(a):
    """The header record of the one snapshot file."""
    files = glob.glob(os.path.join(a.work, "out", "*.jsonl"))
    if not check(len(files) == 1, f"one snapshot file expected, found {files}"):
        return {}
    with open(files[0]) as fh:
        return json.loads(fh.readline())


# ---- Prometheus text format ----

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def parse_prom(path):
    """Returns ({(name, frozenset(labels)): value}, [problems])."""
    samples, problems, typed = {}, [], {}
    with open(path) as fh:
        text = fh.read()
    check(text.endswith("\n"), f"{path}: last line not terminated")
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if parts[1] == "TYPE":
                typed[parts[2]] = parts[3]
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append(f"{path}:{n}: not 'name{{labels}} value' (a timestamp?): {line}")
            continue
        name, labels, value = m.group(1), m.group(2) or "{}", m.group(3)
        if name not in typed:
            problems.append(f"{path}:{n}: {name} has no TYPE line before it")
        if typed.get(name) == "counter" and not name.endswith("_total"):
            problems.append(f"{path}:{n}: counter {name} does not end in _total")
        lab = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', labels))
        if set(lab) - {"pid", "rank", "gpu", "UUID", "kind"}:
            problems.append(f"{path}:{n}: unexpected labels {sorted(lab)}")
        samples[(name, frozenset(lab.items()))] = float(value)
    return samples, problems


def value(samples, name, **labels):
    want = set(labels.items())
    hits = [v for (n, lab), v in samples.items() if n == name and want <= set(lab)]
    return hits[0] if len(hits) == 1 else None


def promtool_metrics(a, path):
    if not a.promtool:
        print(f"promtool not found, `promtool check metrics` of {path} skipped")
        return
    with open(path, "rb") as fh:
        p = subprocess.run([a.promtool, "check", "metrics"], stdin=fh, capture_output=True, text=True)
    check(p.returncode == 0, f"promtool check metrics {path}: {p.stdout}{p.stderr}")


def test_prom(a):
    prom_dir = os.path.join(a.work, "prom")
    started = time.time()
    p = run_prog(a, ["prom"], {"VRAMTRACE_PROMETHEUS": prom_dir, "RANK": "3",
                               "TORCHELASTIC_RESTART_COUNT": "1", "SLURM_RESTART_COUNT": "5"})
    h = header(a)
    check(h.get("rank") == 3 and h.get("restart") == 1,
          f"header rank/restart {h.get('rank')}/{h.get('restart')}, want 3/1 (torchrun's count before Slurm's)")
    m = re.search(r"pid (\d+)", p.stdout)
    if not check(m, "prog_monitor printed no pid"):
        return
    pid = m.group(1)
    final = os.path.join(prom_dir, f"vramtrace_{os.uname().nodename}_{pid}.prom")
    running = os.path.join(prom_dir, "running.prom")
    check(os.path.exists(final), f"{final} missing after exit (it is kept)")
    check(os.path.exists(running), "no textfile while the program ran")
    left = [f for f in os.listdir(prom_dir) if f not in (os.path.basename(final), "running.prom", "running2.prom")]
    check(not left, f"leftover files in the textfile folder: {left}")
    if not (os.path.exists(final) and os.path.exists(running)):
        return
    check(oct(os.stat(final).st_mode & 0o777) == "0o644", "textfile mode is not 0644")
    lab = {"pid": pid, "gpu": "0", "UUID": SIM_UUID0}

    s, problems = parse_prom(running)
    for pr in problems:
        check(False, pr)
    check(value(s, "vramtrace_up", pid=pid) == 1, "running: vramtrace_up != 1")
    # the write's time, and the interval it is kept fresh within
    ts = value(s, "vramtrace_last_snapshot_timestamp_seconds", pid=pid)
    check(ts is not None and started - 1 <= ts <= time.time() + 1,
          f"running: vramtrace_last_snapshot_timestamp_seconds {ts} outside the run [{started}, {time.time()}]")
    check(value(s, "vramtrace_snapshot_interval_seconds", pid=pid) == 0.1,
          "running: vramtrace_snapshot_interval_seconds != 0.1")
    # 450 ms later, idle (nothing allocated, no step), the file was rewritten
    s2, _ = parse_prom(os.path.join(prom_dir, "running2.prom"))
    ts2 = value(s2, "vramtrace_last_snapshot_timestamp_seconds", pid=pid)
    check(ts is not None and ts2 is not None and ts2 - ts >= 0.3,
          f"idle: the textfile's timestamp went from {ts} to {ts2} in 450 ms (not rewritten each interval)")
    check(value(s, "vramtrace_step", pid=pid) == 5, "running: vramtrace_step != 5")
    want = {("vramtrace_live_bytes", "device"): 5 * MIB,
            ("vramtrace_live_bytes", "managed"): 2 * MIB,
            ("vramtrace_live_bytes", "host_pinned"): 64 * 1024,
            ("vramtrace_live_bytes", "async"): MIB,
            ("vramtrace_live_bytes", "vmm"): 0,
            ("vramtrace_peak_bytes", "device"): 5 * MIB + 256 * 1024,
            ("vramtrace_allocations_total", "device"): 10,
            ("vramtrace_frees_total", "device"): 5,
            ("vramtrace_allocated_bytes_total", "device"): 5 * MIB + 5 * 256 * 1024,
            ("vramtrace_failed_allocations_total", "device"): 1,
            ("vramtrace_failed_allocations_total", "managed"): 0,
            ("vramtrace_oom_total", "device"): 1,
            ("vramtrace_oom_total", "managed"): 0}
    for (name, kind), v in want.items():
        got = value(s, name, kind=kind, **lab)
        check(got == v, f"running: {name}{{kind={kind}}} = {got}, want {v}")
    check(value(s, "vramtrace_unfreed_bytes", kind="device", **lab) is None,
          "running: vramtrace_unfreed_bytes written before exit")
    check(value(s, "vramtrace_fastest_site_growth_bytes_per_step", **lab) == MIB,
          "running: fastest site growth != 1 MiB/step")
    check((value(s, "vramtrace_fastest_site_growth_steps", **lab) or 0) >= 2,
          "running: fastest site growth_steps < 2")
    # the simulated device: 64 MiB context overhead + 5 x 2 MiB + 2 MiB managed + 2 MiB pool chunk
    used = 64 * MIB + 14 * MIB
    check(value(s, "vramtrace_device_memory_total_bytes", **lab) == 1 << 30, "running: device total != 1 GiB")
    check(value(s, "vramtrace_device_memory_used_bytes", **lab) == used,
          f"running: device used = {value(s, 'vramtrace_device_memory_used_bytes', **lab)}, want {used}")
    check(value(s, "vramtrace_process_memory_used_bytes", **lab) == used, "running: process used != device used")
    # untracked: NVML's figure less the tracked bytes at the NVML sample, whose pool
    # term is the pool's 2 MiB chunk once a snapshot has read the reserve, and the
    # 1 MiB of async live bytes before that (the textfile's own pool figure may be
    # older than the sample)
    want = {used - (5 * MIB + 2 * MIB + pool) for pool in (MIB, 2 * MIB)}
    check(value(s, "vramtrace_untracked_bytes", **lab) in want,
          f"running: untracked = {value(s, 'vramtrace_untracked_bytes', **lab)}, want one of {sorted(want)}")
    nts = value(s, "vramtrace_nvml_sample_timestamp_seconds", pid=pid)
    check(nts is not None and ts is not None and ts - 1 <= nts <= ts,
          f"running: vramtrace_nvml_sample_timestamp_seconds {nts}, want within 1 s before the write ({ts})")
    frag = value(s, "vramtrace_fragmentation_ratio", **lab)
    check(frag is not None and 0 <= frag <= 1, f"running: fragmentation ratio {frag}")
    for (n, labels), v in s.items():
        d = dict(labels)
        check(d.get("pid") == pid, f"running: {n} without pid=\"{pid}\"")
        check(d.get("rank") == "3", f"running: {n} without rank=\"3\" (RANK=3)")
        if "gpu" in d:
            check(d["gpu"] == "0" and d["UUID"] == SIM_UUID0, f"running: {n} has gpu/UUID {d}")
    promtool_metrics(a, running)

    s, problems = parse_prom(final)
    for pr in problems:
        check(False, pr)
    check(value(s, "vramtrace_up", pid=pid) == 0, "exit: vramtrace_up != 0")
    for kind, v in {"device": 5 * MIB, "managed": 0, "host_pinned": 64 * 1024, "async": MIB}.items():
        got = value(s, "vramtrace_unfreed_bytes", kind=kind, **lab)
        check(got == v, f"exit: vramtrace_unfreed_bytes{{kind={kind}}} = {got}, want {v}")
    check(value(s, "vramtrace_frees_total", kind="managed", **lab) == 1, "exit: managed frees_total != 1")
    check(value(s, "vramtrace_pool_reserved_bytes", **lab) == 2 * MIB, "exit: pool reserved != 2 MiB")
    promtool_metrics(a, final)

    # A short program whose step snapshots all come before the writer thread's first
    # wake after CUDA initialised: the UUID label must be there anyway (it used to be
    # "" in about half such runs, the UUIDs being asked for on the writer thread only).
    # Runs 3-5 write no step snapshot (VRAMTRACE_STEP_EVERY): only the exit textfile.
    for attempt in range(6):
        run_prog(a, ["steps", "40", "0"], {"VRAMTRACE_PROMETHEUS": prom_dir,
                                           "VRAMTRACE_STEP_EVERY": "1" if attempt < 3 else "1000000"},
                 interval=60000)
        files = glob.glob(os.path.join(prom_dir, "vramtrace_*.prom"))
        if not check(len(files) == 1, f"fast steps, run {attempt}: textfiles {files}"):
            break
        s, problems = parse_prom(files[0])
        uuids = {dict(l).get("UUID") for (n, l) in s if "gpu" in dict(l)}
        check(uuids == {SIM_UUID0}, f"fast steps, run {attempt}: UUID labels {uuids}, want {{{SIM_UUID0!r}}}")


def test_untracked(a):
    """vramtrace_untracked_bytes compares NVML's figure for this process with the
    tracked bytes of the same moment: 200 MiB freed after the last NVML sample (which
    saw them) must not show as untracked, neither while running nor at exit. Without
    NVML, cuMemGetInfo's reading (at the step) is compared with the tracked bytes only
    while nothing was allocated or freed since: the exit file has no untracked."""
    for nvml in (1, 0):
        prom_dir = os.path.join(a.work, "prom")
        env = {"VRAMTRACE_PROMETHEUS": prom_dir, "VRAMTRACE_HOST_INTERVAL_MS": "4000"}
        if not nvml:
            env["SIMCUDA_NVML"] = "off"
        p = run_prog(a, ["peakfree"] + ([] if nvml else ["nonvml"]), env)
        m = re.search(r"pid (\d+)", p.stdout)
        if not check(m, "prog_monitor peakfree printed no pid"):
            return
        pid = m.group(1)
        lab = {"pid": pid, "gpu": "0", "UUID": SIM_UUID0}
        final = os.path.join(prom_dir, f"vramtrace_{os.uname().nodename}_{pid}.prom")
        # the simulated device: 64 MiB of context besides the allocations (2 MiB granules)
        for name, path, up in (("after the free", os.path.join(prom_dir, "afterfree.prom"), 1),
                               ("exit", final, 0)):
            name = f"{name} ({'NVML' if nvml else 'no NVML'})"
            if not check(os.path.exists(path), f"{name}: {path} missing"):
                continue
            s, problems = parse_prom(path)
            for pr in problems:
                check(False, pr)
            check(value(s, "vramtrace_up", pid=pid) == up, f"{name}: vramtrace_up != {up}")
            live = value(s, "vramtrace_live_bytes", kind="device", **lab)
            check(live == 2 * MIB * up, f"{name}: live device bytes {live}, want {2 * MIB * up}")
            proc = value(s, "vramtrace_process_memory_used_bytes", **lab)
            got = value(s, "vramtrace_untracked_bytes", **lab)
            if nvml:
                check(proc == 64 * MIB + 202 * MIB, f"{name}: process used {proc}, want the sample at the peak "
                      f"({64 * MIB + 202 * MIB})")
                check(got == 64 * MIB, f"{name}: vramtrace_untracked_bytes = {got}, want {64 * MIB} (the NVML "
                      "sample's figure less the tracked bytes of that moment, not of now)")
            else:
                check(proc is None, f"{name}: process used {proc} without NVML")
                want = 64 * MIB if up else None   # exit: freed since cuMemGetInfo was read
                check(got == want, f"{name}: vramtrace_untracked_bytes = {got}, want {want}")
            promtool_metrics(a, path)
        # the stream: an NVML sample carries the tracked bytes of its moment (null in a
        # sample taken while the first allocation, which started the writer thread,
        # was not recorded yet)
        if nvml:
            devs = [d for s_, ds in nvml_devices(snapshots(a)) for d in ds if d.get("device") == 0]
            known = [d for d in devs if d.get("tracked_bytes") is not None]
            check(any(d["process_used_bytes"] == 266 * MIB for d in known) and
                  all(d["process_used_bytes"] - d["tracked_bytes"] == 64 * MIB for d in known),
                  f"stream: nvml devices' process_used_bytes - tracked_bytes != 64 MiB: {devs}")


def nvml_devices(snaps):
    return [(s, s["host"]["nvml"]["devices"]) for s in snaps if "nvml" in s.get("host", {})]


def test_host(a, ecc=False):
    env = {}
    if ecc:
        env = {"SIMCUDA_ECC_SBE": "3", "SIMCUDA_ECC_DBE": "1", "SIMCUDA_ECC_RISE_AFTER_MS": "300"}
    env["SLURM_RESTART_COUNT"] = "2"
    env["TORCHELASTIC_RESTART_COUNT"] = ""   # set but empty: not a count
    run_prog(a, ["steps", "14" if ecc else "8", "60"], env, interval=50)
    h = header(a)
    check(h.get("restart") == 2, f"header restart {h.get('restart')}, want 2 (SLURM_RESTART_COUNT)")
    snaps = snapshots(a)
    check(len(snaps) >= 8, f"only {len(snaps)} snapshots")
    # version 4: host signals in the record after each new sample, and in complete ones
    check("host" in snaps[0] and "host" in snaps[-1], "the first or the exit record has no host object")
    check(sum("host" in s for s in snaps) >= 5, f"only {sum('host' in s for s in snaps)} records carry host")
    for s in snaps:
        h = s.get("host")
        if h is None:
            continue
        if not check(isinstance(h, dict), f"snapshot {s.get('seq')} has a host that is not an object"):
            continue
        check(isinstance(h.get("rss_bytes"), int) and h["rss_bytes"] > 0, f"snapshot {s.get('seq')}: rss_bytes {h.get('rss_bytes')}")
        check(isinstance(h.get("rss_peak_bytes"), int) and h["rss_peak_bytes"] >= h["rss_bytes"], "rss_peak_bytes < rss_bytes")
        check(isinstance(h.get("swap_bytes"), int), "swap_bytes missing")
        if "cgroup" in h:
            cg = h["cgroup"]
            check(cg["version"] in (1, 2) and cg["path"].startswith("/"), f"cgroup {cg}")
            check(isinstance(cg["oom_kill"], int), f"cgroup oom_kill {cg}")
            check(cg["version"] == 1 or isinstance(cg["oom"], int), f"cgroup v2 oom {cg}")
    nv = nvml_devices(snaps)
    if not check(len(nv) >= 5, f"only {len(nv)} snapshots carry host.nvml"):
        return
    last_t = 0
    for s, devs in nv:
        check(s["host"]["nvml"]["time_ns"] >= last_t, "nvml time_ns went back")
        last_t = s["host"]["nvml"]["time_ns"]
        if not check(len(devs) == 1, f"nvml devices {devs}"):
            continue
        d = devs[0]
        check(d["device"] == 0 and d["index"] == 0 and d["uuid"] == SIM_UUID0, f"nvml device identity {d}")
        check(d["total_bytes"] == 1 << 30, f"nvml total {d['total_bytes']}")
        # context overhead 64 MiB + one or two live 1 MiB blocks (2 MiB each, rounded)
        check(d["used_bytes"] in (66 * MIB, 68 * MIB), f"nvml used {d['used_bytes']} not 64 MiB + 1 or 2 blocks")
        check(d["process_used_bytes"] == d["used_bytes"], f"nvml process_used {d['process_used_bytes']}")
        check(d["retired_pages_single_bit"] is None and d["retired_pages_double_bit"] is None,
              "retired pages should be null (NOT_SUPPORTED on a Hopper-like device)")
        check(d["remapped_rows_corrected"] == 0 and d["remapped_rows_failure"] is False, f"remapped rows {d}")
        if not ecc:
            for k in ("ecc_volatile_corrected", "ecc_volatile_uncorrected",
                      "ecc_aggregate_corrected", "ecc_aggregate_uncorrected", "remapped_rows_uncorrected"):
                check(d[k] == 0, f"{k} = {d[k]} on a healthy device")
            check(d["remapped_rows_pending"] is False, "remap pending on a healthy device")
    if ecc:
        seq = [(d[0]["ecc_volatile_corrected"], d[0]["ecc_volatile_uncorrected"],
                d[0]["ecc_aggregate_corrected"], d[0]["ecc_aggregate_uncorrected"],
                d[0]["remapped_rows_uncorrected"], d[0]["remapped_rows_pending"]) for _, d in nv]
        check(seq[0] == (0, 0, 0, 0, 0, False), f"ECC not 0 at the start: {seq[0]}")
        check(seq[-1] == (3, 1, 3, 1, 1, True), f"ECC did not rise to 3/1: {seq[-1]}")
        check(all(seq[i][0] <= seq[i + 1][0] for i in range(len(seq) - 1)), f"ECC counts fell: {seq}")


def no_nvml_snapshots(a, why):
    """The run's snapshots: at least 4, at least 3 with host RSS (version 4: the records
    after a new host sample), none with an nvml key."""
    snaps = snapshots(a)
    check(len(snaps) >= 4, f"{why}: only {len(snaps)} snapshots")
    check(sum("host" in s for s in snaps) >= 3, f"{why}: only {sum('host' in s for s in snaps)} records carry host")
    for s in snaps:
        if "host" not in s:
            continue
        h = s["host"]
        check(h.get("rss_bytes", 0) > 0, f"{why}, snapshot {s.get('seq')}: no rss_bytes")
        check("nvml" not in h, f"{why}, snapshot {s.get('seq')}: nvml present")
    return snaps


def test_nonvml(a):
    run_prog(a, ["steps", "6", "40"], {"SIMCUDA_NVML": "off", "VRAMTRACE_PROMETHEUS": os.path.join(a.work, "prom"),
                                       "TORCHELASTIC_RESTART_COUNT": "x", "SLURM_RESTART_COUNT": "-1", "RANK": "r0"},
             interval=50)
    h = header(a)
    check("restart" not in h and h.get("rank") is None,
          f"header with unparsable counts: restart {h.get('restart')!r}, rank {h.get('rank')!r}: want no key, null")
    snaps = no_nvml_snapshots(a, "nvmlInit_v2 fails")
    proms = glob.glob(os.path.join(a.work, "prom", "vramtrace_*.prom"))
    if check(len(proms) == 1, f"textfiles {proms}"):
        s, problems = parse_prom(proms[0])
        for pr in problems:
            check(False, pr)
        # Without NVML, device memory comes only from cuMemGetInfo_v2, which the preload
        # asks at every vramtrace_step() mark: the textfile must agree with the driver's
        # free/total of the last snapshot, never invent a value.
        last = {d["device"]: d for d in snaps[-1].get("devices", [])}
        for (n, lab), v in s.items():
            if n != "vramtrace_device_memory_used_bytes":
                continue
            d = last.get(int(dict(lab).get("gpu", "-1")))
            check(d is not None and d.get("total_bytes") is not None and
                  v == d["total_bytes"] - d["free_bytes"],
                  f"device memory {v} does not match cuMemGetInfo of the last snapshot {d}")
        check(any(n == "vramtrace_live_bytes" and dict(l).get("UUID") == SIM_UUID0 for n, l in s),
              "UUID label missing (it comes from the driver, not NVML)")
        promtool_metrics(a, proms[0])
    # VRAMTRACE_NVML=0: NVML works, but the preload must not even load it
    p = run_prog(a, ["steps", "6", "40"], {"VRAMTRACE_NVML": "0", "LD_DEBUG": "files"}, interval=50)
    check("libnvidia-ml.so" not in p.stderr, "VRAMTRACE_NVML=0 but libnvidia-ml.so.1 was loaded")
    no_nvml_snapshots(a, "VRAMTRACE_NVML=0")
    # and the same run without it does load NVML (the check above can fail)
    p = run_prog(a, ["steps", "6", "40"], {"LD_DEBUG": "files"}, interval=50)
    check("libnvidia-ml.so" in p.stderr, "LD_DEBUG=files shows no libnvidia-ml.so.1 with NVML on")
    check(any("nvml" in s.get("host", {}) for s in snapshots(a)), "no nvml figures with NVML on")


def test_nvmlload(a):
    p = run_prog(a, ["steps", "6", "40"], {"SIMCUDA_NVML_CTOR_CUDA": "1"}, interval=50)
    check("simnvml:" not in p.stderr, f"NVML's constructor waited for a CUDA thread kept blocked by the preload: "
                                      f"{p.stderr.strip()}")
    snaps = snapshots(a)
    check(any("nvml" in s.get("host", {}) for s in snaps), "no nvml figures")
    # the constructor thread's 1 MiB was recorded (freed again: a churn row of its own)
    check(any(d.get("kinds", {}).get("device", {}).get("alloc_total", 0) >= 7
              for s in snaps[-1:] for d in s.get("devices", [])),
          f"the constructor thread's allocation is missing: {snaps[-1].get('devices')}")


def test_examples(a):
    ex = a.examples
    rules = os.path.join(ex, "vramtrace-alerts.yml")
    dash = os.path.join(ex, "vramtrace-dashboard.json")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "preload", "write", "vt_prom.c")
    with open(src) as fh:
        known = set(re.findall(r'"(vramtrace_[a-z_]+)"', fh.read()))
    check(len(known) > 15, f"metric names not found in {src}")
    with open(rules) as fh:
        rules_text = fh.read()
    with open(dash) as fh:
        d = json.load(fh)
    exprs = [t["expr"] for p in d.get("panels", []) for t in p.get("targets", [])]
    titles = " | ".join(p.get("title", "") for p in d.get("panels", [])).lower()
    for want in ("live", "peak", "growth", "oom", "fragmentation", "untracked"):
        check(want in titles, f"dashboard has no panel about {want}: {titles}")
    check(len(exprs) >= 6, "dashboard has fewer than 6 queries")
    used = set(re.findall(r"\b(vramtrace_[a-z_]+)", rules_text + "\n".join(exprs)))
    check(used, "no vramtrace_ metric used")
    for n in sorted(used - known):
        check(False, f"{n} is used by the examples but the preload never writes it")
    for alert in ("VramtraceSustainedGrowth", "VramtraceDeviceMemoryHigh", "VramtraceOutOfMemory"):
        check(f"alert: {alert}" in rules_text, f"alert {alert} missing")
    if not a.promtool:
        print("promtool not found, `promtool check rules` / `test rules` skipped")
        return
    p = subprocess.run([a.promtool, "check", "rules", rules], capture_output=True, text=True)
    check(p.returncode == 0, f"promtool check rules: {p.stdout}{p.stderr}")
    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alerts_test.yml")
    p = subprocess.run([a.promtool, "test", "rules", os.path.basename(tests)],
                       capture_output=True, text=True, cwd=os.path.dirname(tests))
    check(p.returncode == 0, f"promtool test rules: {p.stdout}{p.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["prom", "untracked", "host", "ecc", "nonvml", "nvmlload", "examples"])
    ap.add_argument("--lib")
    ap.add_argument("--prog")
    ap.add_argument("--simcuda")
    ap.add_argument("--work")
    ap.add_argument("--examples")
    ap.add_argument("--promtool", default="")
    a = ap.parse_args()
    if a.promtool.endswith("NOTFOUND"):
        a.promtool = ""
    if not a.promtool:
        a.promtool = shutil.which("promtool") or ""
    {"prom": test_prom, "untracked": test_untracked, "host": test_host, "ecc": lambda a: test_host(a, ecc=True),
     "nonvml": test_nonvml, "nvmlload": test_nvmlload, "examples": test_examples}[a.what](a)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
