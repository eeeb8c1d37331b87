#!/bin/bash
# How many durability barriers a save asks for during 16 clients' updates (SQLite, 1,000
# pages): syncfs(2) (the objects' barrier) and fsync/fdatasync (SQLite's WAL commit, the
# search file, anything else), counted system-wide with the syscall tracepoints.
#
# usage: bench/io/syncs.sh BIN [SECONDS=8] [CLIENTS=16]
#
# Runs cairn-bench's update scenario with a long row of CLIENTS clients and counts the
# calls over SECONDS inside it; the saves in the window are the row's rate times its
# length. A group commit of n saves costs one syncfs, so syncfs per save is about 1/n;
# more means some saves paid a barrier of their own.
set -euo pipefail
BIN=$1; SECS=${2:-8}; CLIENTS=${3:-16}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
. "$(dirname "$0")/long_row.sh"
long_row "$BIN" "$CLIENTS" "$OUT"
perf stat -x, -a -e syscalls:sys_enter_syncfs -e syscalls:sys_enter_fsync -e syscalls:sys_enter_fdatasync \
    -o "$OUT/perf.csv" -- sleep "$SECS"
wait $BENCH
grep "update *$CLIENTS clients" "$OUT/run.err"
python3 - "$OUT/perf.csv" "$OUT/run.json" "$SECS" <<'PY'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    p = line.strip().split(",")
    if len(p) > 2 and p[0].replace(".", "").isdigit():
        counts[p[2].split("sys_enter_")[-1]] = int(float(p[0]))
row = [s for s in json.load(open(sys.argv[2]))["runs"][0]["scenarios"] if s["clients"] > 1][0]
saves = row["ops_per_sec"] * float(sys.argv[3])
print(f"{row['clients']} clients: {row['ops_per_sec']:.0f} updates/s, ≈ {saves:.0f} in the {sys.argv[3]} s read")
for name, n in counts.items():
    print(f"  {name:10} {n:7d}  ({n / saves:.3f} a save, one per {saves / max(n, 1):.1f} saves)")
PY
