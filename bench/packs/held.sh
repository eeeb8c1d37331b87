#!/usr/bin/env bash
# Removed packs a running server still holds (issue 12): a server saves while `cairn gc`,
# a second process, folds the repository's packs into one, eight times; after each round
# (40 updates and a history read, gc, then one more update and read) it prints how many
# removed pack files the server holds open and mapped, and their size. Such a file's
# blocks are freed only when its last descriptor closes.
#
#   bench/packs/held.sh BIN [BIN...]
#
# Each binary serves a fresh SQLite DATA_DIR. Needs curl and python3; Linux (/proc).
set -euo pipefail
PORT=${PORT:-18490}
. "$(dirname "$0")/../server.sh"

one() {
    local bin=$1 dir pid token
    serve "$bin"
    local H=(-H "Authorization: Bearer $token" -H 'content-type: application/json')
    for n in $(seq 20); do
        curl -sf "${H[@]}" -d "{\"title\":\"Page $n\",\"content\":\"# Page $n\"}" "$BASE/api/pages" >/dev/null
    done
    for round in $(seq 8); do
        for k in $(seq 40); do
            local n=$(((k % 20) + 1))
            python3 -c "import json; print(json.dumps({'content': '# Page $n\n\n' + 'round $round edit $k. ' * 200}))" |
                curl -sf "${H[@]}" -X PUT -d @- "$BASE/api/pages/page-$n" >/dev/null
        done
        curl -sf "${H[@]}" "$BASE/api/pages/page-1/history" >/dev/null
        "$bin" gc >/dev/null 2>&1
        curl -sf "${H[@]}" -X PUT -d '{"content":"# Page 1\n\nafter the fold"}' "$BASE/api/pages/page-1" >/dev/null
        curl -sf "${H[@]}" "$BASE/api/pages/page-1/history" >/dev/null
        local held=0 bytes=0 fd target
        for fd in /proc/$pid/fd/*; do
            target=$(readlink "$fd" || true)
            case "$target" in
                *.pack\ \(deleted\)) held=$((held + 1)) bytes=$((bytes + $(stat -L -c %s "$fd"))) ;;
            esac
        done
        echo "$(basename "$bin") round $round: removed packs held open $held ($bytes bytes)," \
            "mapped $(grep -c '\.pack (deleted)' /proc/$pid/maps || true)"
    done
    unserve
}

for bin in "$@"; do
    one "$bin"
done
