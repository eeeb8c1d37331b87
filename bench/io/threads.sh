#!/bin/bash
# What each thread of a server writes during 16 clients' updates (SQLite, 1,000 pages).
#
# usage: bench/io/threads.sh BIN [SECONDS=8]
#
# Runs cairn-bench's update scenario with a long 16-client row, and over SECONDS of it
# reads /proc/<server>/task/*/io (wchar: bytes handed to write(); write_bytes: page-cache
# bytes the thread dirtied, i.e. what the disk will be asked to store) and the disk's
# sectors written (/proc/diskstats), then prints them per thread and per save. sqlx runs
# each SQLite connection on a thread of its own: the search file's writer is the oldest
# `sqlx-sqlite-wor` thread, the others are the pool's (saves, their commits and the
# checkpoints those commits run). Git's objects are written on tokio's blocking threads.
set -euo pipefail
BIN=$1; SECS=${2:-8}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
. "$(dirname "$0")/long_row.sh"
long_row "$BIN" 16 "$OUT"
PID=$(pgrep -f "^$BIN" | head -1)
DISK=$(findmnt -no SOURCE -T "$OUT" | sed 's#/dev/##')
snap() {
    for t in /proc/$PID/task/*; do
        printf '%s %s %s\n' "$(basename "$t")" "$(tr ' ' _ <"$t/comm")" \
            "$(awk '/^(wchar|write_bytes)/ {printf "%s ", $2}' "$t/io")"
    done
    awk -v d="$DISK" '$3 == d {print "DISK disk", $10 * 512, $10 * 512}' /proc/diskstats
}
snap >"$OUT/a"; sleep "$SECS"; snap >"$OUT/b"
wait $BENCH
grep "update   16 clients" "$OUT/run.err"
python3 - "$OUT/a" "$OUT/b" "$OUT/run.json" "$SECS" <<'PY'
import json, sys
def load(f):
    return {p[0]: (p[1], int(p[2]), int(p[3])) for p in (l.split() for l in open(f)) if len(p) >= 4}
a, b = load(sys.argv[1]), load(sys.argv[2])
row = [s for s in json.load(open(sys.argv[3]))["runs"][0]["scenarios"] if s["clients"] > 1][0]
# The window lies inside the row, so its saves are about the row's rate times its length.
saves = row["ops_per_sec"] * float(sys.argv[4])
tids = sorted((int(k), v) for k, v in b.items() if k.isdigit())
first_sqlx = next((t for t, v in tids if v[0] == "sqlx-sqlite-wor"), None)
by = {}
for k, (name, wchar, dirtied) in b.items():
    _, w0, d0 = a.get(k, (name, 0, 0))
    if k.isdigit() and int(k) == first_sqlx:
        name = "search file writer"
    elif name == "sqlx-sqlite-wor":
        name = "pool connections"
    t = by.setdefault(name, [0, 0])
    t[0] += wchar - w0
    t[1] += dirtied - d0
print(f"16 clients: {row['ops_per_sec']:.0f} updates/s, ≈ {saves:.0f} in the {sys.argv[4]} s read")
for name, (w, d) in sorted(by.items(), key=lambda kv: -kv[1][1]):
    if w or d:
        print(f"  {name:20} written {w / 1e6:7.1f} MB ({w / saves / 1024:6.1f} KiB a save)"
              f"  dirtied {d / 1e6:7.1f} MB ({d / saves / 1024:6.1f} KiB a save)")
PY
