#!/usr/bin/env python3
"""What a page's full-text entry costs SQLite, apart from everything else a save does.

Builds Cairn's SQLite full-text table (`store/schema.rs`, `pages_fts`: contentless, with
contentless_delete, Porter over unicode61) beside a plain page table, fills both with
1,000 pages of 800 words (a Zipf-like vocabulary, as a wiki's prose is), then times the
CPU of replacing random pages' rows, with and without the full-text entry, one page per
transaction and 16 per transaction, and with a few of FTS5's settings changed. SQLite's
`synchronous=OFF`: this measures CPU, not the disk.

Needs an SQLite of 3.43 or later (contentless_delete): `pip install pysqlite3-binary`
(3.51 when measured). Run: `python3 bench/fts/fts5_cost.py [DIR]`.
"""
import os
import random
import sys
import tempfile
import time

import pysqlite3 as sqlite3

PORTER = "porter unicode61 remove_diacritics 2"
TABLE = "CREATE VIRTUAL TABLE f USING fts5(t, b, content='', contentless_delete=1, tokenize='{tok}'{extra})"

random.seed(1)
VOCAB = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 10))) for _ in range(8000)]
WEIGHTS = [1 / (i + 1) for i in range(len(VOCAB))]


def doc():
    return " ".join(random.choices(VOCAB, WEIGHTS, k=800))


def run(dir, label, fts=True, tok=PORTER, extra="", batch=1, settings=(), new_rows=False, n=1600):
    path = os.path.join(dir, "fts.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("CREATE TABLE pages (id INTEGER PRIMARY KEY, content TEXT, revision TEXT)")
    c.execute(TABLE.format(tok=tok, extra=extra))
    for name, value in settings:
        c.execute("INSERT INTO f (f, rank) VALUES (?, ?)", (name, value))
    c.execute("BEGIN")
    for i in range(1, 1001):
        d = doc()
        c.execute("INSERT INTO pages VALUES (?, ?, 'r')", (i, d))
        if fts:
            c.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", (i, d))
    c.execute("COMMIT")
    docs = [doc() for _ in range(n)]
    started = time.process_time()
    k = 0
    while k < n:
        c.execute("BEGIN IMMEDIATE")
        for _ in range(batch):
            i = 1001 + k if new_rows else random.randint(1, 1000)
            d = docs[k]
            k += 1
            c.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", (i, d, str(k)))
            if fts:
                c.execute("INSERT OR REPLACE INTO f (rowid, t, b) VALUES (?, 'title', ?)", (i, d))
        c.execute("COMMIT")
    ms = (time.process_time() - started) / n * 1000
    print(f"{label:<48} {ms:6.3f} ms CPU per page saved", flush=True)
    c.close()


def main():
    dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    print(f"SQLite {sqlite3.sqlite_version}")
    run(dir, "page row only", fts=False)
    run(dir, "page row + full-text entry (Cairn's)")
    run(dir, "page row only, 16 per transaction", fts=False, batch=16)
    run(dir, "page row + full-text entry, 16 per transaction", batch=16)
    run(dir, "new pages (no old entry to delete)", new_rows=True)
    run(dir, "unicode61 without Porter", tok="unicode61 remove_diacritics 2")
    run(dir, "detail=column", extra=", detail=column")
    run(dir, "detail=none", extra=", detail=none")
    run(dir, "automerge 16", settings=(("automerge", 16),))
    run(dir, "automerge 0 (merges left for later)", settings=(("automerge", 0),))


if __name__ == "__main__":
    main()
