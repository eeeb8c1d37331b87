#!/usr/bin/env python3
"""What new files cost after a mass unlink, as packing does one (ext4 without a journal).

Plays packing's part with plain files in a fresh directory laid out like a repository's
`objects/`: makes N files in 256 fan-out directories, syncs, unlinks them all. Then:

- `reopen`: probes every 2 s (median of 16 files made in `objects/` itself, kept) until
  three probes in a row read under 0.06 ms, then, one step at a time, does what a save
  row's warm-up does and probes after it: nothing for 10 s; `syncfs`; 250 files made
  and renamed into fan-out directories as loose objects are; `syncfs`; 250 more; 10 s.
  On such a disk an inode freed within 60 s is skipped, and within 360 s while the
  inode-table block holding it is dirty (fs/ext4/ialloc.c, recently_deleted).
- `saves`: every ~9 s until SECS have passed, 40 "saves" of five files each, made in
  `objects/` and renamed into a fan-out directory, then one `syncfs` (a lone save's
  objects and its barrier); prints the median, p90 and max of each round's creations.

Times are from the unlinks. BENCHMARKS.md, issue 12, forty-second session.

usage: after_unlink.py reopen|saves [N=20000] [SECS=450]
"""
import ctypes, os, shutil, statistics, sys, tempfile, time

MODE = sys.argv[1] if len(sys.argv) > 1 else "reopen"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
SECS = float(sys.argv[3]) if len(sys.argv) > 3 else 450
libc = ctypes.CDLL(None, use_errno=True)
root = tempfile.mkdtemp(prefix="cairn-after-unlink-")
objects = os.path.join(root, "objects")
os.mkdir(objects)
for i in range(256):
    os.mkdir(os.path.join(objects, f"{i:02x}"))
seq = 0


def make(path):
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o444))


def syncfs():
    fd = os.open(objects, os.O_RDONLY)
    libc.syncfs(fd)
    os.close(fd)


def loose(count):
    """Files made in objects/ and renamed into a fan-out directory: each creation's time."""
    global seq
    times = []
    for _ in range(count):
        seq += 1
        tmp = os.path.join(objects, f"tmp_obj_{seq}")
        t = time.perf_counter()
        make(tmp)
        times.append(time.perf_counter() - t)
        os.rename(tmp, os.path.join(objects, f"{seq % 256:02x}", f"o{seq}"))
    return times


def probe():
    return statistics.median(loose(16)) * 1000


made = []
for i in range(N):
    path = os.path.join(objects, f"{i % 256:02x}", f"packed{i}")
    make(path)
    made.append(path)
syncfs()
for path in made:
    os.unlink(path)
t0 = time.time()


def show(ms, what):
    print(f"{time.time() - t0:6.1f} s  {ms:.3f} ms  {what}", flush=True)


if MODE == "reopen":
    quiet_in_a_row = 0
    while quiet_in_a_row < 3 and time.time() - t0 < 600:
        ms = probe()
        show(ms, "waiting")
        quiet_in_a_row = quiet_in_a_row + 1 if ms < 0.06 else 0
        time.sleep(2)
    steps = [(lambda: time.sleep(10), "after 10 s of nothing"), (syncfs, "after a syncfs"),
             (lambda: loose(250), "after 250 loose objects"), (syncfs, "after a syncfs"),
             (lambda: loose(250), "after 250 more")] + [(lambda: time.sleep(2), "later")] * 5
    for step, what in steps:
        step()
        show(probe(), what)
else:
    while time.time() - t0 < SECS:
        times = []
        for _ in range(40):
            times += loose(5)
            syncfs()
            time.sleep(0.02)
        times.sort()
        print(f"{time.time() - t0:6.1f} s  40 saves: file creation median {statistics.median(times) * 1000:.3f} ms, "
              f"p90 {times[int(len(times) * 0.9)] * 1000:.3f} ms, max {times[-1] * 1000:.3f} ms", flush=True)
        time.sleep(8)
shutil.rmtree(root)
