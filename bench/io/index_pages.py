#!/usr/bin/env python3
"""WAL pages a lone edit writes, and what each index of pages and revisions adds to them.

usage: bench/io/index_pages.py CAIRN_DB

CAIRN_DB: a Cairn SQLite file with page rows named page-*, such as the one
`bench/io/lone.py BIN --keep` leaves. Works on a copy: replays 300 edits with the
statements a save runs (the change counter, the page row's UPDATE, the embedding
queue, the revision, the head), each its own transaction, with checkpoints off, and
prints the WAL pages per edit with every index and with each of four indexes dropped
in turn (those the file has). Python's sqlite3.
"""
import os
import random
import shutil
import sqlite3
import sys
import zlib

EDITS = 300
INDEXES = ["pages_workspace_updated_idx", "pages_workspace_seq_idx", "revisions_page_idx", "revisions_sha_idx"]
TIME = "2026-11-29T14:{:02d}:{:02d}.{:06d}Z"


def sha(rng):
    return "%040x" % rng.getrandbits(160)


def wal_pages_per_edit(src, drop):
    copy = src + ".index-pages-copy"
    remove(copy)
    shutil.copy(src, copy)
    c = sqlite3.connect(copy, isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA wal_autocheckpoint = 0")
    for index in drop:
        c.execute(f"DROP INDEX {index}")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rng = random.Random(1)
    uids = [r[0] for r in c.execute("SELECT uid FROM pages WHERE slug LIKE 'page-%'")]
    ws = c.execute("SELECT workspace_id FROM pages LIMIT 1").fetchone()[0]
    for k in range(EDITS):
        uid, now = rng.choice(uids), TIME.format(k // 3600 % 60, k // 60 % 60, k)
        c.execute("BEGIN")
        c.execute("INSERT INTO index_seqs (workspace_id, seq, reset_at, vector_seq) VALUES (?, 1, 0, 0) "
                  "ON CONFLICT (workspace_id) DO UPDATE SET seq = index_seqs.seq + 1", (ws,))
        c.execute("UPDATE pages SET title = title, content = '', content_z = ?, revision = ?, updated_at = ?, "
                  "index_seq = (SELECT seq FROM index_seqs WHERE workspace_id = ?) WHERE workspace_id = ? AND uid = ?",
                  (zlib.compress(os.urandom(600)), sha(rng), now, ws, ws, uid))
        c.execute("INSERT INTO embed_queue (page_id, workspace_id, index_seq, attempts, queued_at) "
                  "SELECT id, workspace_id, index_seq, 0, ? FROM pages WHERE workspace_id = ? AND uid = ? "
                  "ON CONFLICT (page_id) DO UPDATE SET index_seq = excluded.index_seq, attempts = 0, "
                  "queued_at = excluded.queued_at, locked_until = NULL", (now, ws, uid))
        page_id = c.execute("SELECT id FROM pages WHERE workspace_id = ? AND uid = ?", (ws, uid)).fetchone()[0]
        c.execute("INSERT INTO revisions (workspace_id, page_id, sha, path, blob, action, title, message, "
                  "author_id, author_name, created_at) VALUES (?, ?, ?, 'p/pa/x.md', ?, 'update', 't', 'Update t', "
                  "1, 'lone', ?)", (ws, page_id, sha(rng), sha(rng), now))
        c.execute("INSERT INTO workspace_heads (workspace_id, head) VALUES (?, ?) "
                  "ON CONFLICT (workspace_id) DO UPDATE SET head = excluded.head", (ws, sha(rng)))
        c.execute("COMMIT")
    pages = os.path.getsize(copy + "-wal") / (4096 + 24) / EDITS
    c.close()
    remove(copy)
    return pages


def remove(db):
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)


if __name__ == "__main__":
    src = sys.argv[1]
    print(f"every index: {wal_pages_per_edit(src, []):.2f} WAL pages per edit")
    with sqlite3.connect(src) as c:
        present = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    for index in INDEXES:
        if index in present:  # revisions_sha_idx is gone since the twenty-eighth session
            print(f"without {index}: {wal_pages_per_edit(src, [index]):.2f}")
