#!/usr/bin/env python3
"""Thread switches and CPU per lone save, read off the server process itself.

Starts a release `cairn` (SQLite, a fresh temporary DATA_DIR), signs up, creates one
page, then updates it N times from one client over one keep-alive connection. Reports,
per update, the server's context switches (voluntary + involuntary, summed over its
threads, from /proc/PID/task/*/status) and its CPU (utime + stime, /proc/PID/stat).
Every hand-off between threads (tokio workers, the blocking pool, sqlx's SQLite worker
thread) is a voluntary switch of the thread that waits, so the count moves with the
number of hand-offs a save makes and, unlike time, hardly with the machine's noise.

With `--postgres` the server runs on a fresh database of the local PostgreSQL
(PGHOST/PGUSER as for psql; dropped afterwards), and the CPU of its backends per update
is reported beside the server's.

usage: per_save.py BIN [N=500] [ROUNDS=3] [--postgres]
"""
import http.client, json, os, shutil, socket, subprocess, sys, tempfile, time

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def by_thread(pid):
    """Switches so far, by thread id: (name, count)."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            n = 0
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    n += int(line.split()[1])
            out[t] = (name, n)
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return out

def switches(pid):
    return sum(n for _, n in by_thread(pid).values())

def by_name(before, after, n):
    names = {}
    for t, (name, count) in after.items():
        names[name] = names.get(name, 0) + count - before.get(t, (name, 0))[1]
    return ", ".join(f"{k} {v / n:.1f}" for k, v in sorted(names.items(), key=lambda kv: -kv[1]) if v)

def cpu_secs(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def psql(db, sql):
    return subprocess.run(["psql", "-X", "-qAt", "-d", db, "-c", sql], check=True,
                          capture_output=True, text=True).stdout.split()

def pg_cpu_secs(db):
    """CPU of the database's backends so far (those alive now: the server's pool keeps them)."""
    total = 0.0
    for pid in psql("postgres", f"SELECT pid FROM pg_stat_activity WHERE datname = '{db}'"):
        try:
            total += cpu_secs(int(pid))
        except FileNotFoundError:
            pass
    return total

def main():
    args = [a for a in sys.argv[1:] if a != "--postgres"]
    pg = f"cairn_switches_{os.getpid()}" if "--postgres" in sys.argv else None
    binary, n, rounds = args[0], int(args[1]) if len(args) > 1 else 500, int(args[2]) if len(args) > 2 else 3
    d = tempfile.mkdtemp(prefix="cairn-switches-")
    port = free_port()
    url = f"sqlite://{d}/data/cairn.db"
    if pg:
        psql("postgres", f"CREATE DATABASE {pg}")
        host, user = os.environ.get("PGHOST", "127.0.0.1"), os.environ.get("PGUSER", "postgres")
        url = f"postgres://{user}@{host}:{os.environ.get('PGPORT', '5432')}/{pg}"
    env = dict(os.environ, DATA_DIR=f"{d}/data", LOG_DIR=f"{d}/logs", PORT=str(port), HOST="127.0.0.1",
               LOG_LEVEL="warn", DATABASE_URL=url)
    srv = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        for _ in range(200):
            try:
                c.request("GET", "/health"); r = c.getresponse(); r.read()
                if r.status == 200: break
            except OSError:
                c = http.client.HTTPConnection("127.0.0.1", port)
            time.sleep(0.05)
        def call(method, path, body=None, headers=None):
            h = {"Content-Type": "application/json", **(headers or {})}
            c.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
            r = c.getresponse(); data = r.read()
            return r.status, r.getheader("Set-Cookie"), data
        s, cookie, _ = call("POST", "/api/auth/register", {"email": "s@example.com", "password": "switches-1234"})
        assert s == 201, s
        s, _, data = call("POST", "/api/tokens", {"name": "s"}, {"Cookie": cookie.split(";")[0]})
        assert s == 201, data
        auth = {"Authorization": "Bearer " + json.loads(data)["token"]}
        # A page like the bench corpus: 800 words, two tags, three links.
        words = " ".join(f"word{i}" for i in range(800)) + " #alpha #beta [[one]] [[two]] [[three]]"
        s, _, data = call("POST", "/api/pages", {"slug": "p", "content": f"# P\n\n{words}\n"}, auth)
        assert s == 201, data
        for k in range(50):  # warm up
            call("PUT", "/api/pages/p", {"content": f"# P\n\nwarm {k} {words}\n"}, auth)
        for r in range(rounds):
            time.sleep(0.3)  # the indexing worker's gathering window passes
            threads, cpu, t = by_thread(srv.pid), cpu_secs(srv.pid), time.perf_counter()
            db_cpu = pg_cpu_secs(pg) if pg else 0.0
            sw = sum(c for _, c in threads.values())
            for k in range(n):
                s, _, data = call("PUT", "/api/pages/p", {"content": f"# P\n\nround {r} edit {k} {words}\n"}, auth)
                assert s == 200, data
            time.sleep(0.3)  # the worker's catch-up after the last save is counted too
            wall = time.perf_counter() - t - 0.3
            db = f", PostgreSQL {(pg_cpu_secs(pg) - db_cpu) * 1000 / n:5.2f} ms CPU" if pg else ""
            print(f"round {r + 1}: {(switches(srv.pid) - sw) / n:6.1f} switches, "
                  f"{(cpu_secs(srv.pid) - cpu) * 1000 / n:5.2f} ms CPU{db}, {wall * 1000 / n:5.2f} ms wall per update")
            print(f"  by thread: {by_name(threads, by_thread(srv.pid), n)}")
    finally:
        srv.terminate(); srv.wait(); shutil.rmtree(d, ignore_errors=True)
        if pg:
            psql("postgres", f"DROP DATABASE IF EXISTS {pg}")

if __name__ == "__main__":
    main()
