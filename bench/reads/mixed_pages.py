#!/usr/bin/env python3
"""Creates pages p-0 … p-(N-1) for bench/reads/mixed.sh: BASE TOKEN N.

Each page is ≈ 3 KB of words drawn from a 2,000-word vocabulary (about what the bench's
corpus pages are), so that the database outgrows SQLite's 16 MiB of caches at 10,000
pages as the bench's own 10,000-page run does. Eight connections at a time.
"""

import http.client
import json
import random
import sys
import threading
import urllib.parse

base, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = urllib.parse.urlparse(base)
rng = random.Random(12)
vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 10))) for _ in range(2000)]
lock = threading.Lock()
next_index = 0
failures = []


def worker():
    global next_index
    conn = http.client.HTTPConnection(url.hostname, url.port)
    mine = random.Random(threading.get_ident())
    while True:
        with lock:
            i = next_index
            next_index += 1
        if i >= n or failures:
            return
        words = " ".join(mine.choice(vocab) for _ in range(450))
        body = json.dumps({"slug": f"p-{i}", "title": f"Page {i}", "content": f"# Page {i}\n\n{words}\n"})
        conn.request(
            "POST",
            "/api/pages",
            body,
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        answer = conn.getresponse()
        answer.read()
        if answer.status != 201:
            failures.append(f"p-{i}: {answer.status}")


threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if failures:
    sys.exit(f"creating pages failed: {failures[:3]}")
print(f"created {n} pages", file=sys.stderr)
