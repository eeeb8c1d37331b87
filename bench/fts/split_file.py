#!/usr/bin/env python3
"""Would the full-text index in a file of its own let saves and indexing overlap?

Two ways of saving N pages of 800 words, each page its own transaction, timed by the wall
clock on this machine's cores:

- together: the page row and its FTS5 entry in one transaction of one database (as
  Cairn writes them now), `synchronous=FULL`;
- apart: a writer thread commits the page rows in the main database (`synchronous=FULL`)
  and hands each page to an indexer thread, which writes the entries into a second
  database file of its own (`synchronous=NORMAL`: a derived index, caught up again after
  a crash) in batches of whatever has queued.

Python's sqlite3 lets go of the interpreter lock inside SQLite, so the two threads run
on two cores as the server's would. Needs `pysqlite3-binary` (see fts5_cost.py).
Run: `python3 bench/fts/split_file.py [DIR]`.
"""
import os
import queue
import random
import sys
import tempfile
import threading
import time

import pysqlite3 as sqlite3

TABLE = ("CREATE VIRTUAL TABLE f USING fts5(t, b, content='', contentless_delete=1, "
         "tokenize='porter unicode61 remove_diacritics 2')")
N = 1500

random.seed(1)
VOCAB = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 10))) for _ in range(8000)]
WEIGHTS = [1 / (i + 1) for i in range(len(VOCAB))]
DOCS = [" ".join(random.choices(VOCAB, WEIGHTS, k=800)) for _ in range(1000 + N)]
TARGETS = [random.randint(1, 1000) for _ in range(N)]


def connect(path, sync):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    c = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute(f"PRAGMA synchronous={sync}")
    return c


def fill(pages, fts):
    pages.execute("CREATE TABLE pages (id INTEGER PRIMARY KEY, content TEXT, revision TEXT)")
    fts.execute(TABLE)
    for c in {id(pages): pages, id(fts): fts}.values():
        c.execute("BEGIN")
    for i in range(1, 1001):
        pages.execute("INSERT INTO pages VALUES (?, ?, 'r')", (i, DOCS[i - 1]))
        fts.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", (i, DOCS[i - 1]))
    for c in {id(pages): pages, id(fts): fts}.values():
        c.execute("COMMIT")


def together(dir):
    c = connect(os.path.join(dir, "main.sqlite"), "FULL")
    fill(c, c)
    started = time.time()
    for k in range(N):
        i, d = TARGETS[k], DOCS[1000 + k]
        c.execute("BEGIN IMMEDIATE")
        c.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", (i, d, str(k)))
        c.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", (i, d))
        c.execute("COMMIT")
    return time.time() - started, time.time() - started


def apart(dir):
    main = connect(os.path.join(dir, "main.sqlite"), "FULL")
    search = connect(os.path.join(dir, "search.sqlite"), "NORMAL")
    fill(main, search)
    handed = queue.Queue()

    def index():
        done = False
        while not done:
            batch = [handed.get()]
            while not handed.empty():
                batch.append(handed.get())
            search.execute("BEGIN IMMEDIATE")
            for item in batch:
                if item is None:
                    done = True
                    continue
                search.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", item)
            search.execute("COMMIT")

    indexer = threading.Thread(target=index)
    indexer.start()
    started = time.time()
    for k in range(N):
        i, d = TARGETS[k], DOCS[1000 + k]
        main.execute("BEGIN IMMEDIATE")
        main.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", (i, d, str(k)))
        main.execute("COMMIT")
        handed.put((i, d))
    saved = time.time() - started
    handed.put(None)
    indexer.join()
    return saved, time.time() - started


def main():
    dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    print(f"SQLite {sqlite3.sqlite_version}, {N} pages saved one per transaction")
    for name, run in (("together", together), ("apart", apart), ("together", together), ("apart", apart)):
        saved, indexed = run(dir)
        print(f"{name:<9} rows committed {N / saved:7.0f} pages/s; every entry indexed {N / indexed:7.0f} pages/s",
              flush=True)


if __name__ == "__main__":
    main()
