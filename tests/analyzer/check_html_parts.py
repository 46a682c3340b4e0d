#!/usr/bin/env python3
"""check_html_parts.py VRAMTRACE WORKDIR - the HTML report's flame graph and
many-processes data (vt_html_flame.c, vt_html_ranks.c) on a generated job too big
to draw whole: bounded as documented, and nothing lost in the bounding.

The job (gen_big.py, 30 steps x 500 sites): sites 0-9 leak 1 MiB a step, every site
holds memory at exit; sites 0-4 get stacks of 62 frames. Read as one process, then as
two (the same stream under a second pid and rank):
  - flame: at most 300 sites drawn one by one; the exit bytes of the drawn sites plus
    "exit_other" are the sites' exit bytes in the JSON report; the sites left out are
    counted; the 10 leaks are drawn with their growth (1 MiB/step); the 5 deep stacks are
    counted and cut to 48 frames (one "(N outer frames)" box); the node tree is a tree
    (each parent before its children) and no larger than the caps allow;
  - ranks (two processes): one column per leaking site, matched across the processes
    (10 columns, 2 cells each, 1 MiB/step each); none with one process.
Exit 0 when every check holds, 1 with one FAIL line per failed check.
"""
import json
import os
import re
import shutil
import subprocess
import sys

MiB = 1 << 20
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL: " + what)
    return ok


def page_data(vt, folder, out):
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run([vt, "report", "--format", "html", "-o", out, folder], check=True)
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def json_report(vt, folder):
    r = subprocess.run([vt, "report", "--format", "json", folder], check=True,
                       stdout=subprocess.PIPE, text=True)
    return json.loads(r.stdout)


def deepen(path):
    """Sites 0-4's stacks get 60 more frames between the site's function and main."""
    lines = open(path).read().splitlines(True)
    with open(path, "w") as f:
        for ln in lines:
            m = re.match(r'\{"t":"stack","id":(\d+),', ln)
            if m and int(m.group(1)) < 5:
                s = int(m.group(1))
                frames = [[1, 4660, "cudaMalloc"], [0, 0x1000 + 16 * s, "site_%d" % s]]
                frames += [[0, 0x40000 + 16 * k, "deep_%d" % k] for k in range(60)]
                frames += [[0, 8192, "main"]]
                ln = json.dumps({"t": "stack", "id": s, "frames": frames}, separators=(",", ":")) + "\n"
            f.write(ln)


def main():
    vt, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    one, two = os.path.join(work, "one"), os.path.join(work, "two")
    os.makedirs(one)
    os.makedirs(two)
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_big.py")
    src = os.path.join(one, "vt.bench.4242.1700000000000000000.jsonl")
    subprocess.run([sys.executable, gen, src, "30", "500"], check=True)
    deepen(src)
    text = open(src).read()
    shutil.copy(src, os.path.join(two, os.path.basename(src)))
    other = text.replace('"pid":4242', '"pid":4343', 1).replace('"rank":null', '"rank":1', 1)
    open(os.path.join(two, "vt.bench.4343.1700000000000000000.jsonl"), "w").write(other)
    text0 = text.replace('"rank":null', '"rank":0', 1)
    open(os.path.join(two, os.path.basename(src)), "w").write(text0)

    # ---- one process: the flame graph's bounds ----
    d = page_data(vt, one, os.path.join(work, "one.html"))
    rep = json_report(vt, one)
    check("ranks" not in d, "one process: a many-processes part")
    p = d["procs"][0]
    f = p["flame"]
    sites = rep["processes"][0]["sites"]
    exit_all = sum(s.get("unfreed_at_exit_bytes") or 0 for s in sites)
    with_exit = sum(1 for s in sites if (s.get("unfreed_at_exit_bytes") or 0) > 0)
    n = len(f["site"])
    print("flame: %d sites drawn of %d (%d with exit bytes), %d nodes, %d frames, deep %d, exit other %d sites"
          % (n, len(p["sites"]), with_exit, len(f["parent"]), len(f["frames"]), f["deep_stacks"], f["exit_other_sites"]))
    check(with_exit > f["max_sites"], "the job does not exceed the cap (%d sites with exit bytes)" % with_exit)
    check(n <= f["max_sites"] == 300, "flame: %d sites drawn, cap %s" % (n, f["max_sites"]))
    check(len(f["leaf"]) == n and len(f["exit"]) == n and len(f["growth"]) == n, "flame: columns of unequal length")
    drawn_exit = sum(f["exit"])
    check(drawn_exit + f["exit_other"] == exit_all,
          "flame: exit bytes drawn %d + other %d != the report's %d" % (drawn_exit, f["exit_other"], exit_all))
    check(f["exit_other_sites"] == with_exit - sum(1 for v in f["exit"] if v > 0),
          "flame: %d exit sites counted as other, expected %d" % (f["exit_other_sites"], with_exit - sum(1 for v in f["exit"] if v > 0)))
    growing = [(p["sites"][f["site"][k]]["title"], f["growth"][k]) for k in range(n) if f["growth"][k] > 0]
    check(len(growing) == 10 and all(abs(g - MiB) < 1 for _, g in growing) and f["growth_other_sites"] == 0,
          "flame: expected the 10 leaks at 1 MiB/step: %r, other %d" % (growing, f["growth_other_sites"]))
    check(f["deep_stacks"] == 5, "flame: %d deep stacks, expected 5" % f["deep_stacks"])
    outer = [fr[0] for fr in f["frames"] if fr[0].endswith("outer frames)")]
    check(outer == ["(15 outer frames)"], "flame: the folded outer frames: %r" % outer)
    par = f["parent"]
    check(par[0] == -1 and all(0 <= par[i] < i for i in range(1, len(par))), "flame: the node tree is not a tree in order")
    depth = [0] * len(par)
    for i in range(1, len(par)):
        depth[i] = depth[par[i]] + 1
    check(max(depth) <= f["max_depth"], "flame: a path of %d frames, cap %d" % (max(depth), f["max_depth"]))
    check(len(par) <= 1 + n * f["max_depth"], "flame: %d nodes for %d sites" % (len(par), n))

    # ---- two processes: the heat map's columns are matched sites ----
    d = page_data(vt, two, os.path.join(work, "two.html"))
    r = d.get("ranks")
    if check(r is not None, "two processes: no many-processes part"):
        print("ranks: %d rows, %d columns (of %d), %d cells" % (len(r["rows"]), len(r["cols"]), r["cols_total"], len(r["cells"])))
        check(len(r["rows"]) == 2 and [d["procs"][i]["rank"] for i in r["rows"]] == [0, 1], "ranks: rows not by rank: %r" % r["rows"])
        check(len(r["cols"]) == 10 and r["cols_total"] == 10 and all(c["nprocs"] == 2 for c in r["cols"]),
              "ranks: expected 10 columns in 2 processes each: %r" % [(c["title"], c["nprocs"]) for c in r["cols"]])
        check(len(r["cells"]) == 20 and all(abs(c[2] - MiB) < 1 for c in r["cells"]), "ranks: expected 20 cells of 1 MiB/step")
        for row, col, rate, si in r["cells"]:
            pi = r["rows"][row]
            check(d["procs"][pi]["sites"][si]["title"] == r["cols"][col]["title"],
                  "ranks: cell (%d, %d) names site %r, column %r" % (row, col, d["procs"][pi]["sites"][si]["title"], r["cols"][col]["title"]))
    print("html parts: " + ("FAILED (%d)" % len(fails) if fails else "ok"))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
