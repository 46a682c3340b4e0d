#!/usr/bin/env python3
"""gpu_paired.py — paired runs of one program for scripts/gpu-validate.sh: untraced
against traced configurations, alternated in rotated order each round, each run's
figure read from its output; prints the median of the per-round ratios (traced /
untraced) and writes every run to a JSON file.

Usage:
  gpu_paired.py --name NAME --out DIR --rounds N [--deadline EPOCH_S] [--metric REGEX]
                --vt VRAMTRACE [--run-opts "OPTS"] [--env K=V ...]
                [--config LABEL:K=V,K=V ...] -- CMD ...

Each round runs CMD untraced (env: --env) and once per --config under
`VRAMTRACE run OPTS --` with the config's VRAMTRACE_* variables added (the first
config, usually "traced:" with none, is the figure; the others are its diagnosis
rows). --metric: a regex whose group 1 is the run's figure (default: wall seconds
of the whole process). --deadline: no round starts after that time (the rounds run
are reported). Output: DIR/NAME.txt and DIR/NAME.json. Exit 0 when at least one
round ran, 1 otherwise.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--deadline", type=float, default=0)
    ap.add_argument("--metric", default=None)
    ap.add_argument("--vt", required=True)
    ap.add_argument("--run-opts", default="")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    base = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        base[k] = v
    configs = []
    for c in a.config or ["traced:"]:
        label, _, rest = c.partition(":")
        env = {}
        for kv in filter(None, rest.split(",")):
            k, _, v = kv.partition("=")
            env[k] = v
        configs.append((label, env))
    runs = {label: [] for label, _ in configs}
    runs["untraced"] = []
    work = os.path.join(a.out, a.name + ".runs")
    os.makedirs(work, exist_ok=True)
    rounds = 0
    log = []

    def one(label, env):
        e = dict(base)
        e.update(env)
        c = cmd
        if label != "untraced":
            c = [a.vt, "run"] + a.run_opts.split() + ["-o", os.path.join(work, label)] + ["--"] + cmd
        t = time.perf_counter()
        p = subprocess.run(c, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=a.timeout)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            raise RuntimeError(f"{label}: exit {p.returncode}: {p.stdout[-1500:]}")
        if a.metric:
            m = re.findall(a.metric, p.stdout)
            if not m:
                raise RuntimeError(f"{label}: no match of {a.metric!r} in: {p.stdout[-800:]}")
            return float(m[-1])
        return wall

    order0 = [("untraced", {})] + configs
    try:
        for r in range(a.rounds):
            if a.deadline and time.time() > a.deadline:
                log.append(f"deadline reached after {rounds} rounds")
                break
            k = r % len(order0)
            vals = {}
            for label, env in order0[k:] + order0[:k]:
                shutil.rmtree(os.path.join(work, label), ignore_errors=True)
                vals[label] = one(label, env)
            for label in vals:
                runs[label].append(vals[label])
            rounds += 1
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        log.append(f"stopped: {e}")
    shutil.rmtree(work, ignore_errors=True)
    lines = [f"{a.name}: {' '.join(cmd)}", f"rounds: {rounds} (asked {a.rounds}); figure: "
             + (f"/{a.metric}/" if a.metric else "process wall seconds")]
    result = {"name": a.name, "cmd": cmd, "run_opts": a.run_opts, "rounds": rounds, "runs": runs,
              "rows": [], "notes": log}
    if rounds:
        u = runs["untraced"]
        for label, env in configs:
            t = runs[label][:rounds]
            ratio = statistics.median(x / y for x, y in zip(t, u))
            result["rows"].append({"config": label, "env": env, "median_ratio": ratio,
                                   "median_untraced": statistics.median(u),
                                   "median_traced": statistics.median(t)})
            lines.append(f"  {label:28s} traced/untraced {ratio:.4f}x  (medians: untraced "
                         f"{statistics.median(u):.4f}, traced {statistics.median(t):.4f}; {rounds} paired rounds)"
                         + (f"  env {env}" if env else ""))
    lines += ["  " + x for x in log]
    text = "\n".join(lines)
    print(text, flush=True)
    with open(os.path.join(a.out, a.name + ".txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, a.name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0 if rounds else 1


if __name__ == "__main__":
    sys.exit(main())
