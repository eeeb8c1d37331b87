"""Gives every live page without vectors a copy of a real page's vectors (cycling over the
pages the model did embed), so the server's memory with the model and 100,000 embedded
pages can be measured without 7 hours of embedding. Vectors' values do not change what
they cost in memory or to scan.

Usage: copy_vectors.py PATH/cairn.db, with the server stopped (needs pysqlite3-binary:
the database's FTS5 table needs SQLite 3.43 or later to open)."""
import pysqlite3 as sqlite3, sys
db = sqlite3.connect(sys.argv[1])
donors = {}
for pid, chunk, model, vec in db.execute("SELECT page_id, chunk, model, vector FROM page_vectors ORDER BY page_id, chunk"):
    donors.setdefault(pid, []).append((chunk, model, vec))
donors = list(donors.values())
assert donors, "no embedded page to copy from"
print(f"{len(donors)} donor pages, {sum(len(d) for d in donors) / len(donors):.2f} passages each")
(vseq,) = db.execute("SELECT MAX(vector_seq) FROM index_seqs").fetchone()
pages = db.execute(
    "SELECT id, workspace_id, index_seq FROM pages WHERE deleted_at IS NULL "
    "AND id NOT IN (SELECT page_id FROM page_vectors)").fetchall()
rows = 0
for i, (pid, ws, seq) in enumerate(pages):
    vseq += 1
    for chunk, model, vec in donors[i % len(donors)]:
        db.execute("INSERT INTO page_vectors (page_id, workspace_id, chunk, index_seq, vector_seq, model, vector) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", (pid, ws, chunk, seq, vseq, model, vec))
        rows += 1
db.execute("UPDATE index_seqs SET vector_seq = ?", (vseq,))
db.execute("DELETE FROM embed_queue")
db.commit()
(n,) = db.execute("SELECT COUNT(DISTINCT page_id) FROM page_vectors").fetchone()
print(f"{len(pages)} pages given {rows} vectors; {n} pages have vectors")
