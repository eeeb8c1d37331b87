#!/usr/bin/env python3
"""What one save writes, counted exactly: N one-client updates on a fresh SQLite server.

usage: bench/io/lone.py BIN [--pages 1000] [--saves 2000] [--seed 1] [--keep]

Starts BIN on a temporary data directory and SQLite file, creates --pages pages (in
twenty parent sections, with links and tags, about 2 KB each), then reads every
thread's /proc/<server>/task/*/io (wchar: bytes handed to write()), makes --saves
updates of random pages one after another (new words, the same links and tags, as the
bench's edits; each its own group commit, so every save's rows are one database
commit), reads them again and prints the bytes per save by thread kind: the database
pool's connections (their WAL frames and the checkpoints their commits run), the search
file's writer, and tokio's threads (git objects, the branch). Unlike
bench/io/threads.sh, the number of saves is exact and nothing else runs, so two
builds can be compared by a run of each. Standard library only.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    def __init__(self, base):
        self.base, self.token = base, None

    def call(self, method, path, body=None, cookie=None):
        req = urllib.request.Request(self.base + path, method=method)
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        if cookie:
            req.add_header("Cookie", cookie)
        with urllib.request.urlopen(req, data) as r:
            return r.status, r.headers, json.loads(r.read() or b"null")


def content(rng, n):
    """Page n's markdown: new words at every call, the same links and tags (as the bench's
    edits, which keep a page's tags and links: those rows are then left alone)."""
    words = " ".join(rng.choice(WORDS) for _ in range(300))
    links = " ".join(f"[[page-{(n * 7 + k * 13) % 1000}]]" for k in range(3))
    return f"# Page {n}\n\n{words}\n\nSee {links}. #topic-{n % 7}\n"


WORDS = ("alpha beta gamma delta release deploy runbook incident service queue cache "
         "index search page wiki team owner review budget plan meeting notes").split()


def threads(pid):
    out = {}
    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    first_sqlx = None
    for t in tids:
        try:
            name = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            io = dict(l.split(": ") for l in open(f"/proc/{pid}/task/{t}/io").read().splitlines())
        except FileNotFoundError:
            continue
        if name == "sqlx-sqlite-wor" and first_sqlx is None:
            first_sqlx = t
            kind = "search file writer"
        elif name == "sqlx-sqlite-wor":
            kind = "pool connections"
        else:
            kind = name
        out[t] = (kind, int(io["wchar"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--saves", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the data directory and SQLite file, and say where")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="cairn-lone-")
    port = free_port()
    env = dict(os.environ, DATA_DIR=f"{tmp}/data", LOG_DIR=f"{tmp}/logs", PORT=str(port), HOST="127.0.0.1",
               LOG_LEVEL="warn", DATABASE_URL=f"sqlite://{tmp}/cairn.db")
    srv = subprocess.Popen([a.bin], env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/server.err", "w"))
    try:
        api = Api(f"http://127.0.0.1:{port}")
        for _ in range(300):
            try:
                api.call("GET", "/health")
                break
            except OSError:
                time.sleep(0.1)
        _, headers, _ = api.call("POST", "/api/auth/register",
                                 {"email": "lone@example.com", "password": "lone-password-1234"})
        cookie = "; ".join(c.split(";")[0] for c in headers.get_all("Set-Cookie"))
        api.token = api.call("POST", "/api/tokens", {"name": "lone"}, cookie=cookie)[2]["token"]
        for s in range(20):
            api.call("POST", "/api/pages", {"slug": f"section-{s}", "content": f"# Section {s}\n"})
        for n in range(a.pages):
            api.call("POST", "/api/pages", {"slug": f"page-{n}", "parent": f"section-{n % 20}",
                                            "content": content(rng, n)})
        time.sleep(3)  # the search file's catch-up of the setup
        before = threads(srv.pid)
        t0 = time.monotonic()
        for _ in range(a.saves):
            n = rng.randrange(a.pages)
            api.call("PUT", f"/api/pages/page-{n}", {"content": content(rng, n)})
        took = time.monotonic() - t0
        time.sleep(3)  # the search file's catch-up of the last saves
        after = threads(srv.pid)
        by = {}
        for t, (kind, w) in after.items():
            by[kind] = by.get(kind, 0) + w - before.get(t, (kind, 0))[1]
        print(f"{a.saves} one-client updates of {a.pages} pages in {took:.1f} s ({a.saves / took:.0f}/s)")
        for kind, w in sorted(by.items(), key=lambda kv: -kv[1]):
            if w:
                print(f"  {kind:20} {w / a.saves / 1024:7.1f} KiB a save")
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=60)
        if a.keep:
            print(f"kept {tmp} (cairn.db, data/)")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
