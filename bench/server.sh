# Sourced by the shell benches (reads/run.sh, packs/held.sh): `serve BIN` starts BIN on a
# fresh SQLite DATA_DIR in a new temporary directory at $BASE (port $PORT), registers one
# account and sets `dir` (the directory), `pid` (the server) and `token` (a personal access
# token); `unserve` stops that server and removes its directory. Needs curl and python3.
BASE="http://127.0.0.1:$PORT"

json() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }

serve() {
    local bin=$1
    dir=$(mktemp -d)
    export DATA_DIR="$dir/data" LOG_DIR="$dir/logs"
    PORT=$PORT "$bin" serve >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 200); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.05; done
    curl -sf -c "$dir/jar" -H 'content-type: application/json' \
        -d '{"email":"bench@bench.example","password":"a long bench password"}' "$BASE/api/auth/register" >/dev/null
    token=$(curl -sf -b "$dir/jar" -H 'content-type: application/json' -d '{"name":"bench"}' "$BASE/api/tokens" | json token)
}

unserve() {
    kill "$pid"
    wait "$pid" || true
    rm -rf "$dir"
}
