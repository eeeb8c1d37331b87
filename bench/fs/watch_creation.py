#!/usr/bin/env python3
"""Watches what a new file costs in a running bench server's repository, every 2 s.

Beside a cairn-bench run (its data under TMPDIR, default /tmp), prints every 2 s the
median time of 16 creations of a directory with a file in it (cairn-bench's probe) and of
16 files made in `objects/` itself (where Cairn writes each loose object's temporary
file before renaming it into `objects/xx/`), in ms. Neither is removed (see
self_probe.py). Stops after SECS seconds.

usage: watch_creation.py [SECS=150]
"""
import glob, os, statistics, sys, tempfile, time

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 150
n, t0 = 0, time.time()
while time.time() - t0 < secs:
    repos = glob.glob(os.path.join(tempfile.gettempdir(), "cairn-bench-*/data/workspaces/*/objects"))
    if not repos:
        time.sleep(1)
        continue
    objects, dirs, files = repos[0], [], []
    for _ in range(16):
        d = os.path.join(objects, f".watch-{os.getpid()}-{n}")
        f = os.path.join(objects, f"tmp_obj_watch_{os.getpid()}_{n}")
        n += 1
        t = time.perf_counter()
        os.mkdir(d)
        os.close(os.open(os.path.join(d, "p"), os.O_CREAT | os.O_WRONLY | os.O_EXCL))
        dirs.append(time.perf_counter() - t)
        t = time.perf_counter()
        os.close(os.open(f, os.O_CREAT | os.O_WRONLY | os.O_EXCL))
        files.append(time.perf_counter() - t)
    print(f"{time.time() - t0:6.1f} s  dir+file {statistics.median(dirs) * 1000:.3f} ms  "
          f"file in objects/ {statistics.median(files) * 1000:.3f} ms", flush=True)
    time.sleep(2)
