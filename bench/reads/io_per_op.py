#!/usr/bin/env python3
"""Read syscalls and bytes read per operation, by timed row of cairn-bench.

Runs cairn-bench, timestamps its stderr lines, and samples the server's /proc/PID/io
(syscr, rchar) and CPU every 0.1 s; prints, per timed row the bench reports, the read
syscalls, bytes and CPU per operation over the row's window (its warm-up included: the
counts are divided by the row's operations plus --warmup). On SQLite each read syscall
of a page request is a database page SQLite did not have in its cache (4 KiB each).

usage: io_per_op.py SERVER_BIN_NAME CAIRN_BENCH [cairn-bench args...]
  e.g. DB_MAX_CONNECTIONS=4 bench/reads/io_per_op.py cairn-main $R/release/cairn-bench \
         --server-bin $R/cairn-main --backends sqlite --sizes 10000 --scenarios get --warmup 1000
"""
import subprocess, sys, threading, time, os, re, json
bin_name = sys.argv[1]  # e.g. cairn-cache (the server binary's file name)
args = sys.argv[2:]
warmup = int(args[args.index("--warmup") + 1]) if "--warmup" in args else 50
samples = []  # (t, pid, syscr, rchar, cpu_ticks)
stop = False
def sampler():
    while not stop:
        try:
            pids = subprocess.run(["pgrep", "-x", bin_name[:15]], capture_output=True, text=True).stdout.split()
            for pid in pids:
                io = dict(l.split(": ") for l in open(f"/proc/{pid}/io").read().splitlines())
                st = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                samples.append((time.time(), pid, int(io["syscr"]), int(io["rchar"]), int(st[11]) + int(st[12])))
        except Exception:
            pass
        time.sleep(0.1)
th = threading.Thread(target=sampler, daemon=True); th.start()
p = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
lines = []
for line in p.stderr:
    lines.append((time.time(), line.rstrip()))
    sys.stdout.write(line); sys.stdout.flush()
p.wait(); stop = True; th.join()
# A row's window: from the previous stderr line to its own line (the bench prints one line per row).
row = re.compile(r"^\s+(\w+)\s+(\d+) clients: (\d+) ops")
prev = None
for t, l in lines:
    m = row.match(l)
    if m and prev is not None:
        op, clients, n = m.group(1), int(m.group(2)), int(m.group(3))
        win = [s for s in samples if prev <= s[0] <= t]
        if len(win) >= 2:
            # the last server pid in the window
            pid = win[-1][1]; win = [s for s in win if s[1] == pid]
            a, b = win[0], win[-1]
            print(f"ROW {op} {clients}: window {b[0]-a[0]:.1f}s, read syscalls {b[2]-a[2]}, {((b[3]-a[3])/1024):.0f} KiB read, CPU ticks {b[4]-a[4]}  (per op over the row's {n} ops and {warmup} warm-up ones: {(b[2]-a[2])/(n+warmup):.2f} syscalls, {(b[3]-a[3])/(n+warmup)/1024:.1f} KiB, {(b[4]-a[4])*10/(n+warmup):.3f} ms CPU)")
    prev = t
