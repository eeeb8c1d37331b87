#!/bin/bash
# How large the data directory grows during a burst of creates in one directory.
#
# usage: PORT=18123 bench/packs/burst.sh BIN [PAGES=3000]
#
# Serves BIN on a fresh SQLite DATA_DIR and creates PAGES pages of ≈ 3.6 KB from four
# clients, every slug with one prefix (`burst-<k>`: all in `b/bu/`, as pages named
# `meeting-…` share `m/me/`). Every create writes that directory's tree again, and past
# 16 KiB it is written loose and uncompressed (git::STORED_TREE). Prints the data
# directory's size every two seconds and at the end, and the packing passes the server
# logged. Needs curl and python3.
set -euo pipefail
PORT=${PORT:-18123}
. "$(dirname "$0")/../server.sh"
serve "$1"
python3 - "$PORT" "$token" "${2:-3000}" "$dir/data" <<'PY'
import http.client, json, subprocess, sys, threading, time
port, token, pages, data = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
headers = {"Authorization": "Bearer " + token, "content-type": "application/json"}
body = "word " * 600
failed = []
def client(k):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(k, pages, 4):
        page = {"title": f"Burst {i}", "slug": f"burst-{i}", "content": f"# Burst {i}\n\n{body}"}
        c.request("POST", "/api/pages", json.dumps(page), headers)
        r = c.getresponse(); r.read()
        if r.status >= 300:
            failed.append(r.status); return
def size():
    # Packing may remove files while du walks: its complaints are not the answer.
    out = subprocess.run(["du", "-sm", data], capture_output=True, text=True).stdout
    return out.split()[0] if out else "?"
start = time.time()
clients = [threading.Thread(target=client, args=(k,)) for k in range(4)]
for c in clients: c.start()
while any(c.is_alive() for c in clients):
    time.sleep(2)
    print(f"{time.time() - start:6.1f} s  data {size():>6} MiB", flush=True)
print(f"{pages} creates in {time.time() - start:.1f} s, data {size()} MiB; failed: {len(failed)}")
PY
grep -h '"packed"\| packed ' "$dir"/logs/* | cut -c1-160 || echo "no packing pass"
unserve
