#!/usr/bin/env python3
"""gen_big.py - writes one large synthetic snapshot stream for reading-speed
measurements (docs/performance.md "Analyzer reading speed"), not a test.

    gen_big.py OUT.jsonl [SNAPSHOTS [SITES]]      (defaults: 10000 snapshots x 500 sites)

Every snapshot is a step snapshot with one device and every site present, with
all the per-site keys the preload writes (docs/snapshot-format.md "snapshot"),
so the file is what a long run of a program with SITES distinct allocation
stacks looks like: about 1.2 GB for the defaults. Site i < 10 leaks 1 MiB per
step, sites with i % 3 == 0 churn, the rest are stable. Deterministic.
"""
import sys


def main():
    out = sys.argv[1]
    nsnap = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    nsites = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    MiB = 1 << 20
    with open(out, "w") as f:
        w = f.write
        w('{"t":"header","format":"vramtrace-snapshot","version":1,"pid":4242,"ppid":1,"host":"bench",'
          '"exe":"/opt/bench/train","cmdline":["/opt/bench/train"],"rank":null,"local_rank":null,"world_size":null,'
          '"start_ns":1700000000000000000,"clock":"CLOCK_MONOTONIC","mono_start_ns":1000,"depth":32,'
          '"interval_ms":1000,"step_every":1,"leak_steps":10}\n')
        w('{"t":"module","id":0,"path":"/opt/bench/train","build_id":"","bias":93824992231424}\n')
        w('{"t":"module","id":1,"path":"/usr/lib/x86_64-linux-gnu/libcudart.so.13","build_id":"","bias":140737348395008}\n')
        for s in range(nsites):
            w('{"t":"stack","id":%d,"frames":[[1,4660,"cudaMalloc"],[0,%d,"site_%d"],[0,%d,"layer_%d"],[0,8192,"main"]]}\n'
              % (s, 0x1000 + 16 * s, s, 0x9000 + 16 * (s % 50), s % 50))
        for step in range(nsnap):
            parts = []
            total = 0
            for s in range(nsites):
                if s < 10:
                    live = (s + 1) * MiB + step * MiB
                    peak, frees = live, 0
                elif s % 3 == 0:
                    live = 4 * MiB
                    peak, frees = 68 * MiB, step
                else:
                    live = (s % 17 + 1) * 65536
                    peak, frees = live, 0
                total += live
                parts.append('{"stack":%d,"kind":"device","device":0,"live_bytes":%d,"live_count":%d,'
                             '"interval_peak_bytes":%d,"alloc_total":%d,"alloc_bytes_total":%d,"free_total":%d,'
                             '"growth_steps":%d,"growth_bytes":%d}'
                             % (s, live, step + 1, peak, step + 1, live + frees * 64 * MiB, frees,
                                step if s < 10 else 0, step * MiB if s < 10 else 0))
            w('{"t":"snapshot","seq":%d,"trigger":"step","label":null,"time_ns":%d,"step":%d,"step_marked":true,'
              '"devices":[{"device":0,"free_bytes":%d,"total_bytes":85899345920,"live_bytes":%d,"peak_bytes":%d,'
              '"fragmentation":0.0,"pool_reserved_bytes":0,"pool_used_bytes":0,"kinds":{"device":{"live_bytes":%d,'
              '"live_count":%d,"peak_bytes":%d,"alloc_total":0,"free_total":0,"failed_total":0,"alloc_bytes_total":0}}}],'
              '"sites":[%s],"leak_warnings":[],"oom":null,"allocations":null,"unfreed_at_exit":false,"dropped_records":0}\n'
              % (step + 1, 1000 + step * 1000000000, step, max(0, 85899345920 - total), total, total, total,
                 nsites, total, ",".join(parts)))


if __name__ == "__main__":
    main()
