#!/usr/bin/env bash
# Real-time co-editing (`GET /api/pages/{slug}/live`) measured with independent Yjs
# clients (bench.mjs: the `yjs` npm package in Node over `ws`):
#
#   bench/live/run.sh BIN [--out FILE] [bench.mjs options, e.g. --seconds 30 --idle 200]
#
# Starts BIN on a fresh SQLite DATA_DIR (../server.sh), runs bench.mjs against it —
# propagation between 20 typing editors, server memory per idle session, 16-client save
# throughput in --rounds pairs (4) of --save-seconds rounds (10 s) without and with 200
# idle sessions, alternated without, with | with, without | … so a steady drift cancels
# (exactly for an even --rounds) — prints a Markdown table, writes the figures as JSON to
# FILE (keep it outside the tree, e.g. /tmp), prints the server's warnings and errors,
# and stops the server. About 3 minutes with the defaults.
# Needs node (20+), curl and python3; installs the pinned packages on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: bench/live/run.sh BIN [--out FILE] [options]}
shift
out=/dev/null
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --out) out=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
PORT=${PORT:-18490}
. "$here/../server.sh"

if [ ! -d "$here/node_modules" ]; then
    (cd "$here" && npm_config_cache=${npm_config_cache:-$HOME/.cache/npm} npm ci --no-audit --no-fund >&2)
fi

serve "$bin"
finish() {
    # The server's own account of the run: every warning and error it logged.
    if grep -rhE 'WARN|ERROR' "$LOG_DIR" >/tmp/cairn-live-warnings.$$ 2>/dev/null; then
        echo "server warnings/errors: $(wc -l </tmp/cairn-live-warnings.$$) (first 20 below)" >&2
        head -20 /tmp/cairn-live-warnings.$$ >&2
    else
        echo "server warnings/errors: none" >&2
    fi
    rm -f /tmp/cairn-live-warnings.$$
    unserve
}
trap finish EXIT
CAIRN_BASE=$BASE CAIRN_TOKEN=$token CAIRN_PID=$pid node "$here/bench.mjs" --out "$out" ${args[@]+"${args[@]}"}
