#!/usr/bin/env python3
"""gen_big.py - writes one large synthetic snapshot stream for reading-speed
measurements (docs/performance.md "Analyzer reading speed"), not a test.

    gen_big.py [--v1|--v2] OUT.jsonl [SNAPSHOTS [SITES]]   (defaults: 10000 snapshots x 500 sites)

The program: SITES distinct allocation stacks on one device, one step snapshot
per step. Site i < 10 leaks 1 MiB per step (one more allocation a step); other
sites with i % 3 == 0 churn (a 64 MiB temporary allocated and freed inside every
step: the interval peak is 68 MiB, the free counter rises); the rest are stable
(allocated once before step 0). So 173 of 500 sites change every step.

Written as format version 3 (docs/snapshot-format.md), as the preload writes:
one "site" record per site, the first snapshot ("start") complete, every step
snapshot a delta that lists only the sites whose row changed, each as its
differences from the previous row, and a complete "exit" record at the end.
--v2 writes the same program as version 2 (rows of absolute values keyed by
stack, kind, device), --v1 as version 1 (every live site in every snapshot, as
11-key objects), for comparison. Deterministic.
"""
import os
import sys

MiB = 1 << 20


def site_row(s, step):
    """The site's 11 columns (VT_SITE_* order, common/vt_format.h) after step."""
    if s < 10:                      # leak: one 1 MiB allocation per step
        live = (s + 1) * MiB + step * MiB
        return [s, "device", 0, live, step + 1, live, step + 1, live, 0, step, step * MiB]
    if s % 3 == 0:                  # churn: 4 MiB kept, a 64 MiB temporary per step
        live = 4 * MiB
        return [s, "device", 0, live, 1, 68 * MiB if step else live, 1 + step,
                live + step * 64 * MiB, step, 0, 0]
    live = (s % 17 + 1) * 65536     # stable
    return [s, "device", 0, live, 1, live, 1, live, 0, 0, 0]


# version 3's column order after the site id (common/vt_format.h VT_SITE3_ORDER)
SITE3_ORDER = (6, 7, 8, 3, 4, 5, 9, 10)

KEYS = ("stack", "kind", "device", "live_bytes", "live_count", "interval_peak_bytes", "alloc_total",
        "alloc_bytes_total", "free_total", "growth_steps", "growth_bytes")


def main():
    args = sys.argv[1:]
    version = 1 if "--v1" in args else 2 if "--v2" in args else 3
    v1 = version == 1
    args = [a for a in args if a not in ("--v1", "--v2")]
    if not args or args[0].startswith("-"):
        sys.stderr.write(__doc__)
        sys.exit(0 if args and args[0] in ("-h", "--help") else 2)
    out = args[0]
    if os.path.exists(out):
        sys.exit("gen_big.py: %s exists; not overwriting it" % out)
    nsnap = int(args[1]) if len(args) > 1 else 10000
    nsites = int(args[2]) if len(args) > 2 else 500

    def sites_json(rows, prev_by_stack=None):
        if version == 3:   # [site id = stack + 1, counters in VT_SITE3_ORDER]; deltas: differences
            out = []
            for r in rows:
                p = prev_by_stack[r[0]] if prev_by_stack else [0] * 11
                d = [r[0] + 1] + [r[c] - p[c] for c in SITE3_ORDER]
                while prev_by_stack and len(d) > 1 and d[-1] == 0:
                    d.pop()
                out.append("[" + ",".join(map(str, d)) + "]")
            return ",".join(out)
        if v1:
            return ",".join('{"stack":%d,"kind":"%s","device":%d,"live_bytes":%d,"live_count":%d,'
                            '"interval_peak_bytes":%d,"alloc_total":%d,"alloc_bytes_total":%d,"free_total":%d,'
                            '"growth_steps":%d,"growth_bytes":%d}' % tuple(r) for r in rows)
        return ",".join('[%d,"%s",%d,%d,%d,%d,%d,%d,%d,%d,%d]' % tuple(r) for r in rows)

    with open(out, "w") as f:
        w = f.write
        w('{"t":"header","format":"vramtrace-snapshot","version":%d,"pid":4242,"ppid":1,"host":"bench",'
          '"exe":"/opt/bench/train","cmdline":["/opt/bench/train"],"rank":null,"local_rank":null,"world_size":null,'
          '"start_ns":1700000000000000000,"clock":"CLOCK_MONOTONIC","mono_start_ns":1000,"depth":32,'
          '"interval_ms":1000,"step_every":1,"leak_steps":10}\n' % version)
        w('{"t":"module","id":0,"path":"/opt/bench/train","build_id":"","bias":93824992231424}\n')
        w('{"t":"module","id":1,"path":"/usr/lib/x86_64-linux-gnu/libcudart.so.13","build_id":"","bias":140737348395008}\n')
        for s in range(nsites):
            w('{"t":"stack","id":%d,"frames":[[1,4660,"cudaMalloc"],[0,%d,"site_%d"],[0,%d,"layer_%d"],[0,8192,"main"]]}\n'
              % (s, 0x1000 + 16 * s, s, 0x9000 + 16 * (s % 50), s % 50))
            if version == 3:
                w('{"t":"site","id":%d,"stack":%d,"kind":"device","device":0}\n' % (s + 1, s))
        prev = None
        for seq in range(nsnap + 1):
            # record 0: "start" (complete); then one step snapshot per step; the
            # last one is written as "exit" (complete) as well
            step = max(seq - 1, 0)
            trigger = "start" if seq == 0 else "exit" if seq == nsnap else "step"
            rows = [site_row(s, step) for s in range(nsites)]
            total = sum(r[3] for r in rows)
            delta = not v1 and trigger == "step"
            listed = rows
            if delta:
                listed = [r for r, p in zip(rows, prev) if r != p]
            prev_by_stack = {p[0]: p for p in prev} if delta else None
            prev = rows
            w('{"t":"snapshot","seq":%d,"trigger":"%s","label":null,"time_ns":%d,"step":%d,"step_marked":true,'
              '"devices":[{"device":0,"free_bytes":%d,"total_bytes":85899345920,"live_bytes":%d,"peak_bytes":%d,'
              '"fragmentation":0.0,"pool_reserved_bytes":0,"pool_used_bytes":0,"kinds":{"device":{"live_bytes":%d,'
              '"live_count":%d,"peak_bytes":%d,"alloc_total":0,"free_total":0,"failed_total":0,"alloc_bytes_total":0}}}],'
              '%s"sites":[%s],"leak_warnings":[],"oom":null,"allocations":%s,"unfreed_at_exit":%s,"dropped_records":0}\n'
              % (seq + 1, trigger, 1000 + seq * 1000000000, step, max(0, 85899345920 - total), total, total, total,
                 nsites, total, "" if v1 else '"sites_delta":%s,' % ("true" if delta else "false"),
                 sites_json(listed, prev_by_stack), "[]" if trigger == "exit" else "null",
                 "true" if trigger == "exit" else "false"))


if __name__ == "__main__":
    main()
