#!/usr/bin/env python3
"""Side-by-side rows of several cairn-bench result files (`--out`).

    python3 bench/compare.py A.json B.json ...   (globs are expanded)

For each backend, size, operation and client count, one line per file: p50, p99,
ops/s, the server's CPU per operation and the packing passes that ended during the row;
then each file's RSS (idle, after the timed scenarios) and data directory size. Made for
binaries run alternately (A B A B): on these shared VMs the same binary's times drift by
2-3x within minutes, so read a difference only where every round agrees.
"""
import glob
import json
import sys
from collections import OrderedDict


def main(patterns):
    files = [f for p in patterns for f in sorted(glob.glob(p)) or [p]]
    rows, sizes = OrderedDict(), []
    for f in files:
        name = f.rsplit("/", 1)[-1].removesuffix(".json")
        for run in json.load(open(f))["runs"]:
            rss = run.get("rss_kib", {})
            sizes.append(
                f"{name:34} {run['backend']:8} {run['size']:>6}  RSS idle {rss.get('idle', 0) / 1024:6.1f} MiB, "
                f"after {rss.get('after_scenarios', 0) / 1024:6.1f} MiB; data {run.get('data_bytes', 0) / 2**20:7.1f} MiB"
            )
            for s in run["scenarios"]:
                key = (run["backend"], run["size"], s["op"], s["clients"])
                rows.setdefault(key, []).append(
                    f"   {name:34} p50 {s['p50_ms']:8.2f}  p99 {s['p99_ms']:8.2f}  ops/s {s['ops_per_sec']:8.1f}  "
                    f"CPU/op {s['server_cpu_ms_per_op']:5.2f} ms  packing passes {s.get('packing_passes', 0)}"
                )
    for (backend, size, op, clients), lines in rows.items():
        print(f"{backend} {size} pages, {op}, {clients} client{'s' if clients > 1 else ''}")
        print("\n".join(lines))
    print()
    print("\n".join(sizes))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
