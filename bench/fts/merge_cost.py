#!/usr/bin/env python3
"""What FTS5's merge settings cost a wiki under steady saving, and what they cost queries.

Builds Cairn's SQLite full-text table (`store/search_file.rs`, `pages_fts`: contentless,
with contentless_delete, Porter over unicode61) and fills it with N pages of 300-700
words (a Zipf-like vocabulary of 20,000 words), written 16 to a transaction as the search
file's catch-ups write them; then replaces R random pages, each batch of 16 sorted by id
(as `fulltext::write_entries` does), and reports the CPU per replaced entry over the
second half (steady state), the file's size, and query latencies at the end: one word
(`group_concat(rowid)`, as keyword search matches single words) and six words OR-ed,
ranked by bm25 (as longer queries are). SQLite's `synchronous=OFF`: CPU, not the disk.

Needs an SQLite of 3.43 or later: `pip install pysqlite3-binary` (3.51.1 when measured,
the version libsqlite3-sys bundles). Run: `N=10000 R=20000 python3 bench/fts/merge_cost.py
[CONFIG ...]` (CONFIG one of the names below; all when none). Takes ≈ 40 s per config.
"""
import os
import random
import statistics
import sys
import tempfile
import time

import pysqlite3 as sqlite3

PORTER = "porter unicode61 remove_diacritics 2"
N = int(os.environ.get("N", 10000))
R = int(os.environ.get("R", 20000))
BATCH = 16

CONFIGS = {
    "default": (),
    "automerge 8": (("automerge", 8),),
    "automerge 16": (("automerge", 16),),
    "deletemerge 20": (("deletemerge", 20),),
    "deletemerge 30": (("deletemerge", 30),),
    "deletemerge 50": (("deletemerge", 50),),
    "deletemerge 100": (("deletemerge", 100),),
}

random.seed(1)
VOCAB = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 10))) for _ in range(20000)]
WEIGHTS = [1 / (i + 1) for i in range(len(VOCAB))]


def doc():
    return " ".join(random.choices(VOCAB, WEIGHTS, k=random.randint(300, 700)))


random.seed(2)
FIRST = [doc() for _ in range(N)]
EDITS = [(random.randint(1, N), doc()) for _ in range(R)]
queries = random.Random(3)
ONE_WORD = [queries.choice(VOCAB[50:3000]) for _ in range(60)]
SIX_WORDS = [" OR ".join(queries.choices(VOCAB[20:5000], k=6)) for _ in range(60)]


def latency(c, qs, sql):
    """p50 and p95 in ms, each query run twice (the first pass warms the cache)."""
    times = []
    for q in qs * 2:
        started = time.perf_counter()
        c.execute(sql, (q,)).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    times = sorted(times[len(qs):])
    return statistics.median(times), times[int(len(times) * 0.95)]


def run(dir, label, settings):
    path = os.path.join(dir, "fts.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=OFF")
    c.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, b, content='', contentless_delete=1, tokenize='{PORTER}')")
    for name, value in settings:
        c.execute("INSERT INTO f (f, rank) VALUES (?, ?)", (name, value))
    for i in range(0, N, BATCH):
        c.execute("BEGIN IMMEDIATE")
        for j in range(i, min(N, i + BATCH)):
            c.execute("INSERT INTO f (rowid, t, b) VALUES (?, 'title', ?)", (j + 1, FIRST[j]))
        c.execute("COMMIT")
    started = None
    for k in range(0, R, BATCH):
        if k >= R // 2 and started is None:
            started, counted_from = time.process_time(), k
        c.execute("BEGIN IMMEDIATE")
        for i, d in sorted(EDITS[k:k + BATCH]):
            c.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", (i, d))
        c.execute("COMMIT")
    per_entry = (time.process_time() - started) / (R - counted_from) * 1000
    c.close()
    size = os.path.getsize(path) / 2**20
    c = sqlite3.connect(path, isolation_level=None)
    one = latency(c, ONE_WORD, "SELECT group_concat(rowid) FROM f WHERE f MATCH ?")
    six = latency(c, SIX_WORDS, "SELECT rowid, -bm25(f, 10.0, 1.0) AS s FROM f WHERE f MATCH ? ORDER BY s DESC LIMIT 10")
    c.close()
    print(
        f"{label:<16} {per_entry:6.3f} ms CPU per replaced entry  file {size:5.1f} MiB  "
        f"1 word p50/p95 {one[0]:.2f}/{one[1]:.2f} ms  6 words OR bm25 p50/p95 {six[0]:.2f}/{six[1]:.2f} ms",
        flush=True,
    )


def main():
    dir = tempfile.mkdtemp()
    print(f"SQLite {sqlite3.sqlite_version}, {N} pages, {R} replaced, {BATCH} per transaction", flush=True)
    for name in sys.argv[1:] or CONFIGS:
        run(dir, name, CONFIGS[name])


if __name__ == "__main__":
    main()
