#!/usr/bin/env python3
"""Does a file-creation probe that removes its files disturb what it measures?

Makes, 40 times 0.2 s apart, 64 directories each with one file under DIR/selfprobe-MODE/
objects/ (as cairn-bench's creation probe does in a repository's `objects/`) and prints the
median time of each round's creations, in ms. MODE `remove` removes each round's 128 inodes
again (the probe as it was until issue 12's forty-first session); `keep` leaves them. On an
ext4 without a journal each removed inode is "recently deleted" for a minute or more, and
every later creation near it scans past it.

usage: self_probe.py DIR keep|remove     (run `keep` first: it frees nothing)
"""
import os, statistics, sys, time

base, mode = sys.argv[1], sys.argv[2]
objects = os.path.join(base, f"selfprobe-{mode}", "objects")
os.makedirs(objects)
made = 0

def probe(remove):
    global made
    times, dirs = [], []
    for _ in range(64):
        d = os.path.join(objects, f".p-{made}")
        made += 1
        t = time.perf_counter()
        os.mkdir(d)
        fd = os.open(os.path.join(d, "probe"), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        times.append(time.perf_counter() - t)
        os.close(fd)
        dirs.append(d)
    if remove:
        for d in dirs:
            os.unlink(os.path.join(d, "probe"))
            os.rmdir(d)
    return statistics.median(times) * 1000

rounds = []
for _ in range(40):
    rounds.append(probe(mode == "remove"))
    time.sleep(0.2)
print(mode, " ".join(f"{x:.3f}" for x in rounds))
