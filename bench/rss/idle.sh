#!/usr/bin/env bash
# Idle RSS of a cairn server: starts BIN on a fresh data directory, waits until /health
# answers and then 5 s more, and prints VmRSS, RssAnon and RssFile (kB, /proc/PID/status).
#
#   bench/rss/idle.sh BIN warm|cold [turns]
#
# `cold` drops the page cache first (root only), so the binary's pages are read from disk
# by the start's own page faults; `warm` takes the cache as it is (a just-built binary is
# then mapped in larger runs: BENCHMARKS.md, issue 12, eighth and fifteenth sessions).
set -euo pipefail
bin=$1 mode=$2 turns=${3:-3}
for _ in $(seq 1 "$turns"); do
  dir=$(mktemp -d)
  if [ "$mode" = cold ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
  port=$((20000 + RANDOM % 20000))
  env -i PATH="$PATH" DATA_DIR="$dir/data" LOG_DIR="$dir/logs" PORT=$port "$bin" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  sleep 5
  awk '/VmRSS|RssAnon|RssFile/ { printf "%s %s  ", $1, $2 } END { print "" }' "/proc/$pid/status"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
done
