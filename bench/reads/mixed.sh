#!/usr/bin/env bash
# Reads beside saves on SQLite (issue 12): what the pool's size (DB_MAX_CONNECTIONS) does
# when clients read and write one workspace at once.
#
#   PAGES=10000 ROUNDS=3 bench/reads/mixed.sh BIN POOL [POOL...]
#
# Makes one DATA_DIR with PAGES pages (one account, one token), then restarts BIN on it
# once per POOL per round, pools taking turns so a noisy neighbour hits them alike. Each
# turn runs, one after the other (wrk, on the same two cores as the server):
#   read1   1 connection  GET /api/pages/{random}/raw
#   read16  16 connections GET …/raw
#   mixed   12 connections GET …/raw beside 4 connections PUT /api/pages/{random}
# and prints "pool=<n> <row> <requests/s> p50 <ms> p99 <ms> errors <n>" per wrk.
# Needs wrk, curl and python3.
set -euo pipefail
BIN=$1
shift
PAGES=${PAGES:-10000}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
PORT=${PORT:-18481}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../server.sh"
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
export DATA_DIR="$dir/data" LOG_DIR="$dir/logs"

start "$BIN"
register
python3 "$here/mixed_pages.py" "$BASE" "$token" "$PAGES"
stop

lua() { # which PAGES: a Lua script for wrk that reads (GET) or saves (PUT) random pages
    cat <<EOF
local pages = $PAGES
local words = {"alpha", "brook", "cedar", "delta", "ember", "fjord", "grove", "heath", "inlet", "juniper"}
function init(args)
    math.randomseed(os.time() * 1000 + tonumber(tostring({}):match("0x(%x+)"), 16) % 1000)
    wrk.headers["Content-Type"] = "application/json"
end
function request()
    local slug = "p-" .. math.random(0, pages - 1)
    if "$1" == "get" then
        return wrk.format("GET", "/api/pages/" .. slug .. "/raw")
    end
    local t = {}
    for i = 1, 400 do t[i] = words[math.random(#words)] end
    return wrk.format("PUT", "/api/pages/" .. slug, nil, '{"content": "# Page\\\\n\\\\n' .. table.concat(t, " ") .. '"}')
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("%.0f p50 %.2f p99 %.2f errors %d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.connect + e.read + e.write + e.status + e.timeout))
end
EOF
}
lua get >"$dir/get.lua"
lua put >"$dir/put.lua"

run() { # CONNECTIONS SCRIPT
    wrk -t1 -c"$1" -d"$DURATION" -H "Authorization: Bearer $token" -s "$2" "$BASE" | tail -n 1
}

for _ in $(seq "$ROUNDS"); do
    for pool in "$@"; do
        DB_MAX_CONNECTIONS=$pool start "$BIN"
        run 16 "$dir/get.lua" >/dev/null # warm the caches, as every turn does
        echo "pool=$pool read1  $(run 1 "$dir/get.lua")"
        echo "pool=$pool read16 $(run 16 "$dir/get.lua")"
        run 12 "$dir/get.lua" >"$dir/mixed-get" &
        reader=$!
        put=$(run 4 "$dir/put.lua")
        wait "$reader"
        echo "pool=$pool mixed  reads $(cat "$dir/mixed-get") | saves $put"
        stop
    done
done
