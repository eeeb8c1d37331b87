#!/bin/bash
# Profiles the server during the bench's 16-client update row (SQLite), with call graphs.
# usage: [WINDOW=secs] bench/profile/update-row.sh SIZE NAME [SERVER_BIN] (WINDOW: the bench's --window-secs, 360)
# Then: perf script -F comm,ip,sym -i /tmp/perf-NAME.data | python3 bench/profile/inclusive.py 90
# (inclusive and self shares of the server's samples, by function).
SIZE=$1; NAME=$2; BIN=${3:-$HOME/.cache/cairn-release/release/cairn-main}
R=$HOME/.cache/cairn-release/release
cd /tmp
$R/cairn-bench --server-bin $BIN --backends sqlite --sizes $SIZE --scenarios update --seq-ops 300 --ops 30000 --history-pages 1 --history-revisions 2 --window-secs ${WINDOW:-360} --out /tmp/prof-$NAME.json > /tmp/prof-$NAME.log 2>&1 &
BP=$!
# The lone-client row's result line: the 16-client row starts next.
until grep -q "update    1 clients" /tmp/prof-$NAME.log; do sleep 1; if ! kill -0 $BP 2>/dev/null; then echo bench died; exit 1; fi; done
sleep 3
# The server is the bench's only child by then (its setup's `cairn gc` has ended).
SERVER=$(pgrep -P $BP -x "$(basename "$BIN" | cut -c1-15)")
perf record -e cpu-clock -F 499 --call-graph dwarf,8192 -o /tmp/perf-$NAME.data -p "$SERVER" -- sleep 15 > /tmp/perf-$NAME.rec.log 2>&1
wait $BP
echo finished
