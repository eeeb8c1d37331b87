#!/bin/bash
# Who wakes whom during lone saves: the kernel's sched_wakeup events, system-wide, over
# SECONDS inside a long run of bench/switches/per_save.py (one client updating one page
# on a fresh SQLite server), grouped by waker thread → woken thread (by name) and given per
# update. Each wake-up of a sleeping thread is a hand-off the save paid for: sqlx's SQLite
# worker waking a tokio thread is about one per command it was sent (not one per statement
# or row: BENCHMARKS.md, twenty-ninth session), a tokio thread waking sqlx's worker a
# command sent to it, tokio's blocking threads a git trip.
#
# usage: bench/switches/wakeups.sh BIN [SECONDS=5]      (needs perf and root)
set -euo pipefail
BIN=$1; SECS=${2:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 "$(dirname "$0")/per_save.py" "$BIN" 4000 1 >"$OUT/per_save.txt" 2>&1 &
LOOP=$!
# per_save.py starts the server, signs up and creates its page within a second or two.
sleep 4
perf record -q -e sched:sched_wakeup -a -o "$OUT/perf.data" -- sleep "$SECS" 2>/dev/null
wait $LOOP
cat "$OUT/per_save.txt"
perf script -i "$OUT/perf.data" -F comm,trace 2>/dev/null | python3 -c '
import collections, re, sys
secs = float(sys.argv[1])
wall = float(re.search(r"([0-9.]+) ms wall per update", open(sys.argv[2]).read()).group(1))
updates = secs * 1000 / wall
pairs = collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*(.+?)\s+comm=(.+?) pid=", line)
    if m:
        pairs[(m.group(1).strip(), m.group(2).strip())] += 1
print(f"≈ {updates:.0f} updates in the {secs:g} s window ({wall} ms each)")
for (waker, woken), n in pairs.most_common(14):
    print(f"  {waker:>16} → {woken:<16} {n / updates:6.2f} a save")
' "$SECS" "$OUT/per_save.txt"
