#!/usr/bin/env python3
"""Lone saves in the minute after a packing pass that packed thousands of objects.

A release `cairn` (SQLite, a fresh temporary DATA_DIR) gets PAGES new pages of ≈ 480
words; the packing worker's first look (60 s after the start) packs their loose objects
(≈ 6 per page); 65 s after the last page, one client times 2,000 updates of random
pages, then 2,000 creates, then 2,000 updates again, one request at a time. Prints each
phase's p50 and p90 wall time, the server's CPU per request (/proc), and the share of
the server's samples in ext4's search past recently freed inodes (`recently_deleted`,
`find_get_block_common`, `find_inode_bit`, `ext4_get_group_desc`; `perf record -e
cpu-clock`, so run it as root). On an ext4 without a journal the first phase runs inside
the minute after the pass's unlinks. BENCHMARKS.md, issue 12, forty-second session.

usage: after_big_pass.py BIN PORT [PAGES=1000]
"""
import http.client, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

binary, port = sys.argv[1], int(sys.argv[2])
pages = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
root = tempfile.mkdtemp(prefix="cairn-after-big-pass-")
env = dict(os.environ, DATA_DIR=f"{root}/data", LOG_DIR=f"{root}/logs", PORT=str(port),
           DATABASE_URL=f"sqlite://{root}/cairn.db")
server = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(3)
conn = http.client.HTTPConnection("127.0.0.1", port)


def req(method, path, body, headers={}):
    conn.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json", **headers})
    r = conn.getresponse()
    data = r.read()
    assert r.status in (200, 201), (r.status, data)
    return r


r = req("POST", "/api/auth/register", {"email": "a@x.io", "password": "correct horse battery", "name": "A"})
auth = {"Cookie": r.getheader("set-cookie").split(";")[0]}
rng = random.Random(1)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(3000)]


def content():
    return "# Title\n\n" + "\n\n".join(" ".join(rng.choice(words) for _ in range(60)) for _ in range(8)) + "\n"


def slug(i):
    return f"{words[i % 3000][:2]}-p{i}"


for i in range(pages):
    req("POST", "/api/pages", {"slug": slug(i), "title": f"Page {i}", "content": content()}, auth)
time.sleep(65)


def cpu_secs():
    fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


SCAN = ("recently_deleted", "find_get_block_common", "find_inode_bit", "ext4_get_group_desc")


def phase(kind, n):
    data = f"{root}/perf-{kind}.data"
    perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "999", "-p", str(server.pid), "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    cpu0, times = cpu_secs(), []
    for i in range(n):
        t = time.perf_counter()
        if kind.startswith("update"):
            req("PUT", f"/api/pages/{slug(rng.randrange(pages))}", {"content": content()}, auth)
        else:
            req("POST", "/api/pages", {"slug": f"new-{i}", "title": f"New {i}", "content": content()}, auth)
        times.append((time.perf_counter() - t) * 1000)
    cpu1 = cpu_secs()
    perf.send_signal(2)
    perf.wait()
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio"],
                            capture_output=True, text=True).stdout
    scan = sum(float(line.split("%")[0]) for line in report.splitlines()
               if line.strip() and not line.startswith("#") and any(s in line for s in SCAN))
    times.sort()
    print(f"{os.path.basename(binary)} {kind:8} p50 {statistics.median(times):.2f} ms, p90 {times[int(n * 0.9)]:.2f} ms, "
          f"server CPU {(cpu1 - cpu0) * 1000 / n:.2f} ms a request, inode scan {scan:.1f} % of its samples", flush=True)


phase("update", 2000)
phase("create", 2000)
phase("update2", 2000)
server.terminate()
server.wait()
shutil.rmtree(root)
