//! SQLite: the full-text index in a file of its own, `DATA_DIR/search.sqlite3`.
//!
//! Writing a page's FTS5 entry costs more than everything else a save does in the
//! database (≈ 1.3 ms per 800-word page against 0.06 ms for its row; measured in
//! commit ca7ae87), and inside the save's transaction it held SQLite's one write lock, so
//! every other save of every workspace waited for it. Here the entries live in a second
//! file with its own lock and are written after the saves commit, by one connection of
//! this process ([`SearchFile::writer`]), from the page rows whose change counter
//! (`pages.index_seq`) passed what the file has seen (`fts_state`):
//! `core::pages::fulltext::catch_up`. A keyword search catches its workspace up before it
//! matches, so it sees every acknowledged save.
//!
//! The file is derived: nothing in it is not in the page rows. So it is written with
//! `synchronous=NORMAL` (a power cut may lose its last commits; the counters in it are
//! lost with them and the entries are written again), it is not backed up, and it is
//! made again from nothing whenever it does not match the database — another schema
//! (fingerprint), another database (the `search_generation` in the database's
//! `schema_meta`), or not a database at all. Every pooled connection attaches it
//! read-only as `search`: `BEGIN IMMEDIATE` takes the write lock of every file attached
//! for writing, which would serialize the saves on this file's lock again.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;
use sha2::{Digest, Sha256};
use sqlx::any::AnyConnectOptions;
use sqlx::{AnyConnection, AssertSqlSafe, ConnectOptions};

/// The file's name in `DATA_DIR`.
pub(crate) const FILE_NAME: &str = "search.sqlite3";

/// The schema name the file is attached under on pooled connections.
pub(crate) const SCHEMA: &str = "search";

/// What the file holds, created from nothing. `pages_fts`: a contentless FTS5 table (it
/// keeps the index, not a copy of the text, which is derived from the markdown beside
/// it), the Porter stemmer over `unicode61` (words of every script, diacritics folded);
/// `contentless_delete` lets an entry be replaced or deleted without its old text.
/// `fts_state`: per workspace, the change counter the entries reflect, and the last
/// reset (rows removed) seen. Changing any statement makes the file again.
///
/// `deletemerge` 30: a segment is rewritten to drop the entries of replaced pages once
/// 30 % of its entries are replaced, not a tenth (FTS5's default). Under steady saving
/// the largest segment holds most pages, and rewriting it every tenth of the wiki's pages
/// saved cost about a third of the entries' CPU (10,000 pages: 0.74-0.82 → 0.54-0.57 ms
/// per replaced entry); the price is up to 30 % of that
/// segment's entries read past by a query until then, and a file about an eighth larger,
/// which `cairn gc`'s `optimize` gives back (measured in commit dfd6f17).
const CREATE: &[&str] = &[
    "CREATE VIRTUAL TABLE pages_fts USING fts5(search_title, body, content='', contentless_delete=1, \
     tokenize='porter unicode61 remove_diacritics 2')",
    "INSERT INTO pages_fts (pages_fts, rank) VALUES ('deletemerge', 30)",
    "CREATE TABLE fts_state (workspace_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, reset_at INTEGER NOT NULL)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
];
const DROP: &[&str] =
    &["DROP TABLE IF EXISTS pages_fts", "DROP TABLE IF EXISTS fts_state", "DROP TABLE IF EXISTS meta"];

pub struct SearchFile {
    path: PathBuf,
    /// The one connection that writes the file (its lock serializes other processes).
    writer: tokio::sync::Mutex<AnyConnection>,
    /// Workspaces whose saves committed since the indexing worker last looked.
    pending: Mutex<HashSet<i64>>,
    /// Wakes the indexing worker.
    pub wake: tokio::sync::Notify,
}

impl SearchFile {
    /// Opens the file in `data_dir` (creating it), and makes it again when it does not
    /// match this release's schema or the database of `generation`.
    pub async fn open(data_dir: &Path, generation: &str) -> anyhow::Result<(SearchFile, Option<Made>)> {
        let path = data_dir.join(FILE_NAME);
        let (writer, made) = match open_writer(&path, generation).await {
            Ok(opened) => opened,
            Err(e) => {
                // Unreadable (not a database, a torn header): it is derived, so start over.
                tracing::warn!(error = %format!("{e:#}"), path = %path.display(), "search index unreadable; making it again");
                for suffix in ["", "-wal", "-shm"] {
                    let file = PathBuf::from(format!("{}{suffix}", path.display()));
                    if file.exists() {
                        std::fs::remove_file(&file).with_context(|| format!("cannot remove {}", file.display()))?;
                    }
                }
                let (writer, _) = open_writer(&path, generation).await?;
                (writer, Some(Made::Rebuilt))
            }
        };
        let file = SearchFile {
            path,
            writer: tokio::sync::Mutex::new(writer),
            pending: Mutex::new(HashSet::new()),
            wake: Default::default(),
        };
        Ok((file, made))
    }

    /// The statement that attaches the file read-only to a pooled connection.
    pub fn attach_statement(&self) -> String {
        format!("ATTACH DATABASE '{}' AS {SCHEMA}", read_only_uri(&self.path))
    }

    /// The writing connection, for one catch-up at a time in this process.
    pub async fn writer(&self) -> tokio::sync::MutexGuard<'_, AnyConnection> {
        self.writer.lock().await
    }

    /// Notes that a workspace's saves committed, for the indexing worker.
    pub fn changed(&self, ws_id: i64) {
        crate::sync::lock(&self.pending).insert(ws_id);
        self.wake.notify_one();
    }

    /// The workspaces noted since the last call.
    pub fn take_changed(&self) -> Vec<i64> {
        crate::sync::lock(&self.pending).drain().collect()
    }

    /// Copies the write-ahead log into the file and empties it (at shutdown). SQLite does
    /// this when a file's last connection closes — unless, as here, the last ones are
    /// the pooled read-only attachments, which may not: the log (≈ 20 MiB after a
    /// 1,000-page bench run) would stay on disk until the next start.
    pub async fn truncate_log(&self) -> Result<(), sqlx::Error> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *self.writer().await).await.map(drop)
    }
}

/// A `file:` URI opening `path` read-only (SQLite reads `%`, `?` and `#` specially).
fn read_only_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.display().to_string().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            '\'' => uri.push_str("''"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro");
    uri
}

fn fingerprint() -> String {
    let mut h = Sha256::new();
    for stmt in CREATE {
        h.update(stmt.as_bytes());
        h.update(b";\n");
    }
    hex::encode(h.finalize())
}

async fn open_writer(path: &Path, generation: &str) -> anyhow::Result<(AnyConnection, Option<Made>)> {
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let options: AnyConnectOptions = url.parse().context("invalid search index path")?;
    let mut conn = options.disable_statement_logging().connect().await.context("cannot open the search index")?;
    // The log is cut back to 4 MiB whenever a checkpoint lets it start over (SQLite keeps
    // it at its largest otherwise).
    let pragmas = [
        "PRAGMA journal_mode = WAL",
        "PRAGMA busy_timeout = 10000",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA journal_size_limit = 4194304",
    ];
    for pragma in pragmas {
        sqlx::query(pragma).execute(&mut conn).await?;
    }
    let made = converge(&mut conn, generation).await?;
    Ok((conn, made))
}

/// Makes the file's tables again unless they are this release's, for this database.
/// Under the file's write lock, so two processes starting together agree.
async fn converge(conn: &mut AnyConnection, generation: &str) -> anyhow::Result<Option<Made>> {
    begin(conn).await?;
    let result = converge_locked(conn, generation).await;
    finish(conn, result).await
}

/// Starts a transaction holding the file's write lock (on the writing connection). One
/// left open by a panic is rolled back first.
pub(crate) async fn begin(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    if sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.is_err() {
        sqlx::query("ROLLBACK").execute(&mut *conn).await.ok();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    }
    Ok(())
}

/// Ends what [`begin`] started: committed when `result` is a success, else rolled back.
pub(crate) async fn finish<T, E: From<sqlx::Error>>(conn: &mut AnyConnection, result: Result<T, E>) -> Result<T, E> {
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = sqlx::query(end).execute(&mut *conn).await;
    let value = result?;
    ended?;
    Ok(value)
}

/// What opening the file had to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// There was none: made from nothing.
    Created,
    /// There was one of another schema or database: made again.
    Rebuilt,
}

async fn converge_locked(conn: &mut AnyConnection, generation: &str) -> anyhow::Result<Option<Made>> {
    let want = [("fingerprint", fingerprint()), ("generation", generation.to_owned())];
    let has_meta: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
        .fetch_one(&mut *conn)
        .await?;
    if has_meta > 0 {
        let mut same = true;
        for (key, value) in &want {
            let stored: Option<String> = sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
                .bind(key)
                .fetch_optional(&mut *conn)
                .await?;
            same &= stored.as_deref() == Some(value.as_str());
        }
        if same {
            return Ok(None);
        }
    }
    for stmt in DROP.iter().chain(CREATE) {
        sqlx::query(AssertSqlSafe(*stmt)).execute(&mut *conn).await?;
    }
    for (key, value) in &want {
        sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2)").bind(key).bind(value).execute(&mut *conn).await?;
    }
    Ok(Some(if has_meta > 0 { Made::Rebuilt } else { Made::Created }))
}

/// True for the file's own names in `DATA_DIR` (which a backup leaves out).
pub(crate) fn is_search_file(name: &str) -> bool {
    name.strip_prefix(FILE_NAME).is_some_and(|rest| ["", "-wal", "-shm"].contains(&rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_escapes_what_sqlite_reads_specially() {
        assert_eq!(read_only_uri(Path::new("/d/a%b?c#d'e")), "file:/d/a%25b%3fc%23d''e?mode=ro");
    }
}
