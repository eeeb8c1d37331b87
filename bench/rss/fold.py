#!/usr/bin/env python3
"""What a server's memory does while its packing worker folds a large pack, binary by binary.

    bench/rss/fold.py OUT PAGES UPDATES BIN [BIN …]

Prepares one SQLite wiki once, with the first BIN: PAGES pages of ~600 words created by
4 clients, then `cairn gc` (one pack). For each BIN in turn, on a copy of it: starts the
server, saves UPDATES edits with 4 clients — well before the worker's first look, 60 s
after the start, and enough loose objects (≥ half the pack's) that its pass folds the pack
into a new one (git's geometric rule, git/pack.rs) — then samples the server's VmRSS and
that of any `cairn-pack` child (a pass in a process of its own) four times a second until
the log's `packed` line, and 3 s more. Prints per binary the server's RSS before the pass,
its peak during it and after, and the child's peak; writes the samples to OUT-<n>.rss
(seconds, server KiB, children KiB). The worker's first look being at a fixed time after
the start, every binary folds the same pack with the same loose objects — unlike the
bench's 10,000-page run, whose end falls before or inside its fold by the machine's speed.
"""
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

out, pages, updates, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
PORT = 18093
WORDS = [f"w{n:x}" for n in range(3000)]


def text(rng, title):
    return f"# {title}\n\n" + " ".join(rng.choice(WORDS) for _ in range(600)) + "\n"


def request(conn, method, path, body=None, token=None, cookie=None):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    if cookie:
        headers["cookie"] = cookie
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, resp.getheader("set-cookie"), data


def start(binary, data):
    env = dict(os.environ, DATA_DIR=f"{data}/data", LOG_DIR=f"{data}/logs", PORT=str(PORT),
               LOG_LEVEL="warn,cairn::core::packing=info")
    proc = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT)
            if request(conn, "GET", "/health")[0] == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("server did not start")


def stop(proc):
    proc.terminate()
    proc.wait()


def save_all(token, jobs):
    """Runs (method, path, body) jobs with 4 clients; every one must succeed."""
    queue, lock, failed = list(reversed(jobs)), threading.Lock(), []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", PORT)
        while not failed:
            with lock:
                if not queue:
                    return
                method, path, body = queue.pop()
            status, _, data = request(conn, method, path, body, token=token)
            if status not in (200, 201):
                failed.append(f"{method} {path}: {status} {data[:200]}")

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise SystemExit(failed[0])


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])
    except (OSError, StopIteration):
        return 0


def children_rss_kib(pid):
    total = 0
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            total += rss_kib(int(d))
    return total


base = tempfile.mkdtemp(prefix="cairn-fold-")
rng = random.Random(42)
server = start(bins[0], f"{base}/prepared")
conn = http.client.HTTPConnection("127.0.0.1", PORT)
_, cookie, _ = request(conn, "POST", "/api/auth/register",
                       {"email": "fold@bench.example", "password": "a long bench password"})
_, _, data = request(conn, "POST", "/api/tokens", {"name": "fold"}, cookie=cookie.split(";")[0])
token = json.loads(data)["token"]
t = time.time()
# Pages in 50 sections (a page's file sits in its parent's directory), as wikis are.
save_all(token, [("POST", "/api/pages", {"slug": f"s{k}", "content": f"# Section {k}\n"}) for k in range(50)])
save_all(token, [("POST", "/api/pages", {"slug": f"p{i}", "parent": f"s{i % 50}", "content": text(rng, f"p{i}")})
                 for i in range(pages)])
print(f"prepared {pages} pages in {time.time() - t:.0f} s", flush=True)
stop(server)
env = dict(os.environ, DATA_DIR=f"{base}/prepared/data", LOG_DIR=f"{base}/prepared/logs")
subprocess.run([bins[0], "gc"], env=env, check=True, stdout=subprocess.DEVNULL)
edits = [("PUT", f"/api/pages/p{rng.randrange(pages)}", {"content": text(rng, f"edit {n}")}) for n in range(updates)]

for n, binary in enumerate(bins, 1):
    run = f"{base}/run{n}"
    shutil.copytree(f"{base}/prepared/data", f"{run}/data")  # not its logs: gc's say "packed"
    server = start(binary, run)
    started = time.time()
    save_all(token, edits)
    saved = time.time() - started
    samples, seen_packed = [], None
    while time.time() - started < 600:
        samples.append((time.time() - started, rss_kib(server.pid), children_rss_kib(server.pid)))
        logs = "".join(open(os.path.join(f"{run}/logs", f)).read() for f in os.listdir(f"{run}/logs"))
        if seen_packed is None and "packed" in logs:
            seen_packed = time.time()
        if seen_packed and time.time() - seen_packed > 3:
            break
        time.sleep(0.25)
    stop(server)
    line = next((l for l in logs.splitlines() if "packed" in l), "no packing pass")
    before = [s for s in samples if s[0] < 59.5]
    during = [s for s in samples if s[0] >= 59.5]
    with open(f"{out}-{n}.rss", "w") as f:
        f.writelines(f"{s:.2f} {a} {b}\n" for s, a, b in samples)
    print(f"{os.path.basename(binary)}: {updates} edits in {saved:.0f} s; server RSS before the pass "
          f"{before[-1][1] / 1024:.1f} MiB, peak during it {max(s[1] for s in during) / 1024:.1f} MiB, after "
          f"{during[-1][1] / 1024:.1f} MiB; a child's peak {max(s[2] for s in during) / 1024:.1f} MiB; "
          f"{line.split('INFO', 1)[-1].strip()}", flush=True)
    shutil.rmtree(run)
shutil.rmtree(base)
