#!/usr/bin/env bash
# Imports a fetched copy of Obsidian's help repository (obsidianmd/obsidian-help) with a
# cairn binary into a fresh data directory, and checks the result file by file
# (check_history.py). Run by scripts/test when the repository is on the machine.
#
#   bench/import/real_help.sh CAIRN_BINARY REPOSITORY
#
# Exit 0 when the import and a second one exit 0, every head note is one live page under
# its folder's page, no other page is live, and at most ALLOWED (4) files' revisions
# differ from `git log --follow --first-parent` (folder notes renamed away or in: the
# kind docs/import.md lists, 4 files today).
set -euo pipefail
bin=$(realpath "$1"); repo=$(realpath "$2")
allowed=${ALLOWED:-4}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# An account and the workspace, through the API as anyone would make them.
env -u DATABASE_URL DATA_DIR="$work/data" PORT=$port "$bin" serve >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/api/health" && break; sleep 0.2; done
api() { curl -fs -b "$work/cookies" -c "$work/cookies" -H 'content-type: application/json' "$@"; }
api -d '{"email":"importer@example.com","password":"a long password"}' "http://127.0.0.1:$port/api/auth/register" >/dev/null
api -d '{"slug":"help","name":"Obsidian Help"}' "http://127.0.0.1:$port/api/workspaces" >/dev/null
kill "$server"; wait "$server" || true

/usr/bin/time -f "import: %e s, %M KiB max RSS" env -u DATABASE_URL DATA_DIR="$work/data" "$bin" import \
  --workspace help --report "$work/report.json" "$repo" >"$work/import.out" 2>"$work/import.err" \
  || { tail -20 "$work/import.out" "$work/import.err"; exit 1; }
head -2 "$work/import.out"
tail -1 "$work/import.err"
# Again: it resumes at the last commit from the slugs the first run kept, changes
# nothing, and must still find every page as the head has it (or exit non-zero).
/usr/bin/time -f "again: %e s, %M KiB max RSS" env -u DATABASE_URL DATA_DIR="$work/data" "$bin" import \
  --workspace help --report "$work/again.json" "$repo" >"$work/again.out" 2>"$work/again.err" \
  || { tail -20 "$work/again.out" "$work/again.err"; exit 1; }
head -1 "$work/again.out"
tail -1 "$work/again.err"
python3 "$here/check_history.py" "$repo" "$work/data" help "$work/report.json" --show 5 \
  --allow-history-differences "$allowed"
