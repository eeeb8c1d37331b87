#!/usr/bin/env bash
# Reads at 16 clients: `GET /api/pages/{slug}/raw` with a personal access token,
# measured by wrk (2 threads, 16 connections) on the same two cores as the server.
#
#   bench/reads/run.sh BIN [BIN...]
#
# Each binary serves a fresh SQLite DATA_DIR with one account, one token and one 3 KB page.
# The binaries take turns, ROUNDS times (default 5), so a noisy neighbour hits them alike;
# each turn prints "<bin> <requests/s>". Needs wrk, curl and python3.
set -euo pipefail
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
PORT=${PORT:-18480}
. "$(dirname "$0")/../server.sh"

one() {
    local bin=$1 dir pid token
    serve "$bin"
    python3 -c "import json; print(json.dumps({'title': 'Bench', 'content': '# Bench\n\n' + 'Some words of a page. ' * 140}))" |
        curl -sf -H "Authorization: Bearer $token" -H 'content-type: application/json' -d @- "$BASE/api/pages" >/dev/null
    local rps
    rps=$(wrk -t2 -c16 -d"$DURATION" -H "Authorization: Bearer $token" "$BASE/api/pages/bench/raw" |
        awk '/Requests\/sec/ {print $2} /Non-2xx/ {print "NON-2XX:" $0 > "/dev/stderr"}')
    echo "$bin $rps"
    unserve
}

for _ in $(seq "$ROUNDS"); do
    for bin in "$@"; do
        one "$bin"
    done
done
