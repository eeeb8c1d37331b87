#!/usr/bin/env python3
"""Lone saves just after a packing pass: a release `cairn` (SQLite, a fresh temporary
DATA_DIR) takes 400 updates over 20 pages; the packing worker's first pass (60 s after
the start) packs their loose objects; 7 s later 200 more updates are timed one by one
from one client. Prints their median and 90th percentile wall time and the inodes the
filesystem allocated meanwhile (ext4's `ext4_request_inode` tracepoint, counted by
`perf stat -a`, so run it as root on an otherwise quiet machine).

usage: after_pass.py BIN PORT
"""
import http.client, json, os, subprocess, time, sys, shutil, statistics, tempfile
binary, port = sys.argv[1], int(sys.argv[2])
root = tempfile.mkdtemp(prefix="cairn-after-pass-")
env=dict(os.environ, DATA_DIR=f"{root}/data", LOG_DIR=f"{root}/logs", PORT=str(port), DATABASE_URL=f"sqlite://{root}/cairn.db")
p=subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(3)
c=http.client.HTTPConnection("127.0.0.1",port)
def req(m,path,body=None,h={}):
    c.request(m,path,body=json.dumps(body) if body is not None else None,headers={"Content-Type":"application/json",**h})
    r=c.getresponse(); d=r.read(); return r, d
r,d=req("POST","/api/auth/register",{"email":"a@x.io","password":"correct horse battery","name":"A"})
H={"Cookie":r.getheader("set-cookie").split(";")[0]}
for i in range(20): req("POST","/api/pages",{"slug":f"p{i}","content":f"# p{i}\n"},H)
def saves(n,tag):
    out=[]
    for i in range(n):
        t=time.perf_counter()
        r,d=req("PUT",f"/api/pages/p{i%20}",{"content":f"# p\n\n{tag} {i} " + "words "*(i%50) + "\n"},H)
        out.append((time.perf_counter()-t)*1000)
        assert r.status==200,(r.status,d)
    return out
saves(400,"a")
time.sleep(68)  # the worker's first pass (60 s after start) packs them
time.sleep(7)
perf=subprocess.Popen(["perf","stat","-x,","-e","ext4:ext4_request_inode","-a"],stderr=subprocess.PIPE,text=True)
time.sleep(0.5)
t=saves(200,"b")
perf.send_signal(2); err=perf.communicate()[1]
inodes=[l.split(",")[0] for l in err.splitlines() if "ext4" in l]
print(os.path.basename(binary), "median %.2f ms p90 %.2f ms" % (statistics.median(t), sorted(t)[180]), "inodes", inodes, flush=True)
p.terminate(); p.wait(); shutil.rmtree(root, ignore_errors=True)
