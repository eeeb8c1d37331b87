"""Times semantic, hybrid and keyword search on a running server over a bench data
directory: 60 queries of 1-3 words drawn from its pages (10 untimed, 50 timed, one at a
time). Usage: time_modes.py PORT TOKEN PATH/cairn.db (needs pysqlite3-binary: the
database's FTS5 table needs SQLite 3.43 or later to open)."""
import sys, time, json, urllib.request, urllib.parse, random, statistics
import pysqlite3 as sqlite3
port, tok, dbp = sys.argv[1], sys.argv[2], sys.argv[3]
db=sqlite3.connect(f'file:{dbp}?mode=ro', uri=True)
rows=db.execute("select content from pages where deleted_at is null and id % 97 = 0 limit 300").fetchall()
words=[w.strip('.,;:!?#*()[]').lower() for (c,) in rows for w in c.split()]
words=[w for w in words if w.isalpha() and len(w)>3]
random.seed(7)
qs=[' '.join(random.choice(words) for _ in range(random.choice([1,2,3]))) + ' ' for _ in range(60)]
def q(s, mode):
    url=f'http://127.0.0.1:{port}/api/search?'+urllib.parse.urlencode({'q':s,'mode':mode,'limit':10})
    req=urllib.request.Request(url, headers={'authorization':'Bearer '+tok})
    t=time.perf_counter(); r=json.load(urllib.request.urlopen(req)); return (time.perf_counter()-t)*1000, r['engine']
for mode in ['semantic','hybrid','keyword']:
    for s in qs[:10]: q(s, mode)
    ts=[]; eng=set()
    for s in qs[10:]:
        dt,e=q(s,mode); ts.append(dt); eng.add(e)
    ts.sort()
    print(f"{mode:8} {eng} n={len(ts)} p50 {statistics.median(ts):.1f} p95 {ts[int(len(ts)*0.95)-1]:.1f} max {ts[-1]:.1f}")
