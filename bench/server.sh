# Sourced by the shell benches (reads/run.sh): `serve BIN`
# starts BIN on a fresh SQLite DATA_DIR in a new temporary directory at $BASE (port $PORT),
# registers one account and sets `dir` (the directory), `pid` (the server) and `token` (a
# personal access token); `unserve` stops that server and removes its directory. A bench
# that restarts a server on the same data uses the parts: `start BIN` (on DATA_DIR and
# LOG_DIR as they are set; sets `pid`), `register` (sets `token`; needs `dir`) and `stop`.
# Needs curl and python3.
BASE="http://127.0.0.1:$PORT"

json() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }

start() {
    PORT=$PORT "$1" serve >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 400); do curl -sf "$BASE/health" >/dev/null && return; sleep 0.05; done
    echo "server did not start" >&2
    return 1
}

register() {
    curl -sf -c "$dir/jar" -H 'content-type: application/json' \
        -d '{"email":"bench@bench.example","password":"a long bench password"}' "$BASE/api/auth/register" >/dev/null
    token=$(curl -sf -b "$dir/jar" -H 'content-type: application/json' -d '{"name":"bench"}' "$BASE/api/tokens" | json token)
}

stop() {
    kill "$pid"
    wait "$pid" || true
}

serve() {
    dir=$(mktemp -d)
    export DATA_DIR="$dir/data" LOG_DIR="$dir/logs"
    start "$1"
    register
}

unserve() {
    stop
    rm -rf "$dir"
}
