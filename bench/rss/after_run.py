#!/usr/bin/env python3
"""What a server's memory holds at the end of a bench run, and how it got there.

    bench/rss/after_run.py OUT $R/release/cairn-bench --server-bin $R/cairn-<rev> \
        --backends sqlite --sizes 10000 --settle-secs 0 --keep --out OUT.json

Runs the bench command given after OUT, writes its stderr to OUT.log with the seconds
since the start in front of each line, and samples the server's VmRSS, RssAnon and
RssFile (KiB) twice a second into OUT.rss. When the bench reports the last timed
scenario (the regex in SNAP_AT, by default the 16-client create row: the moment the bench
reads "RSS after the timed scenarios"; its SNAP_NTH-th match, 1 unless set: 2 for the
10,000-page server of a run of both sizes), it copies the server's /proc/PID/smaps to
OUT.smaps and asks the server, through gdb, for

- glibc's `malloc_stats()` (written to the server's stderr: with `--keep`, the run's
  `server.err`): each arena's bytes taken from the system and in use;
- `sqlite3_memory_used()` and `sqlite3_memory_highwater(0)` (into OUT.gdb): what SQLite
  holds, all connections together, and the most it held.

Needs gdb and a binary with symbols (the release profile keeps them). The bench (and
the server) are stopped for the second or so this takes; the bench's export row after
it starts that much later.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

out, cmd = sys.argv[1], sys.argv[2:]
start = time.time()
bench = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, bufsize=1)
state = {"pid": None}


def server_pid():
    """The bench's child process named cairn… (the server it started)."""
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        comm = stat.split("(", 1)[1].rsplit(")", 1)[0]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == bench.pid and comm.startswith("cairn") and "bench" not in comm:
            return int(d)
    return None


def sample():
    with open(out + ".rss", "w") as samples:
        while bench.poll() is None:
            state["pid"] = state["pid"] or server_pid()
            if state["pid"]:
                try:
                    status = open(f"/proc/{state['pid']}/status").read()
                    kib = [re.search(k + r":\s+(\d+)", status).group(1) for k in ("VmRSS", "RssAnon", "RssFile")]
                    samples.write(f"{time.time() - start:.1f} {' '.join(kib)}\n")
                    samples.flush()
                except (OSError, AttributeError):
                    state["pid"] = None  # the server stopped (or restarted)
            time.sleep(0.5)


threading.Thread(target=sample, daemon=True).start()
snap_at = re.compile(os.environ.get("SNAP_AT", r"create\s+16 clients"))
snap_nth = int(os.environ.get("SNAP_NTH", "1"))
snapped = False
with open(out + ".log", "w") as log:
    for line in bench.stderr:
        log.write(f"{time.time() - start:7.1f} {line}")
        log.flush()
        sys.stderr.write(line)
        pid = state["pid"]
        if not snapped and pid and snap_at.search(line):
            snap_nth -= 1
        if not snapped and pid and snap_nth == 0:
            snapped = True
            # The bench held still meanwhile, so that it does not go on to stop the server.
            os.kill(bench.pid, signal.SIGSTOP)
            subprocess.run(["cp", f"/proc/{pid}/smaps", out + ".smaps"], check=False)
            with open(out + ".gdb", "w") as g:
                subprocess.run(
                    ["gdb", "-p", str(pid), "-batch",
                     "-ex", "call (void)malloc_stats()",
                     "-ex", "print (long long)sqlite3_memory_used()",
                     "-ex", "print (long long)sqlite3_memory_highwater(0)"],
                    stdout=g, stderr=subprocess.STDOUT, check=False)
            os.kill(bench.pid, signal.SIGCONT)
sys.exit(bench.wait())
