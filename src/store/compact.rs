//! Compacting SQLite's files, which `cairn gc` does when no server has the data directory
//! open.
//!
//! SQLite reuses the pages that deletes and updates free, so its files stop growing in
//! steady state, but it never gives them back, and the pages that updates split stay
//! partly empty: after the bench's 1,000-page run, about a sixth of the database and of
//! the search file (measured in commit 8ef3be2). `VACUUM` rewrites a file
//! compactly; on the search file, FTS5's `optimize` first merges the index's segments into
//! one, which drops the entries of replaced and deleted pages.
//!
//! Both hold the file's write lock from start to end — seconds for a large wiki — so a
//! save or a search beside them would wait that long, and a command writing beside them
//! (an import, a reindex) would fail on SQLite's busy timeout. Hence `cairn gc` compacts
//! only when nothing else uses the data directory: every other `cairn` command — a server,
//! and `import`, `reindex`, `backup`, `restore` — holds a shared lock on [`LOCK_FILE`] in
//! `DATA_DIR` while it runs ([`DataDirLock::shared`]); `cairn gc` takes it exclusively
//! without waiting ([`DataDirLock::exclusive`]), and a command starting meanwhile waits
//! until gc is done. Shared holders run beside each other as before. PostgreSQL keeps no
//! database file here; its autovacuum does this work.

use std::fs::{File, TryLockError};
use std::path::Path;

use anyhow::Context;
use sqlx::AnyConnection;

use super::{Backend, Db};

/// The lock's file in `DATA_DIR` (empty; a backup leaves it out).
pub(crate) const LOCK_FILE: &str = "cairn.lock";

/// A lock on the data directory, released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// The shared lock a command holds while it runs (a server for its life). Waits while
    /// `cairn gc` compacts.
    pub(crate) async fn shared(data_dir: &Path) -> anyhow::Result<DataDirLock> {
        let file = crate::lockfile::open(&data_dir.join(LOCK_FILE))?;
        match file.try_lock_shared() {
            Ok(()) => return Ok(DataDirLock { _file: file }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e).context("cannot lock DATA_DIR"),
        }
        tracing::warn!("`cairn gc` is compacting the database; starting when it is done");
        let file = tokio::task::spawn_blocking(move || file.lock_shared().map(|()| file))
            .await?
            .context("cannot lock DATA_DIR")?;
        Ok(DataDirLock { _file: file })
    }

    /// The exclusive lock compaction needs, or `None` while another command holds it.
    pub(crate) fn exclusive(data_dir: &Path) -> anyhow::Result<Option<DataDirLock>> {
        Ok(crate::lockfile::try_exclusive(&data_dir.join(LOCK_FILE))?.map(|file| DataDirLock { _file: file }))
    }
}

/// The sizes of a file before and after compacting it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shrunk {
    pub before: u64,
    pub after: u64,
}

/// Both files' sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compacted {
    pub database: Shrunk,
    pub search: Shrunk,
}

/// What [`compact`] found to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compaction {
    /// PostgreSQL: no database file here (its autovacuum does this work).
    NotSqlite,
    /// A server or another command holds the data directory: nothing was touched.
    InUse,
    Done(Compacted),
}

/// `cairn gc`'s compaction: rewrites the database and its search file compactly, on
/// SQLite, when no server or other command uses `data_dir`.
pub(crate) async fn compact(db: &Db, data_dir: &Path) -> anyhow::Result<Compaction> {
    if db.backend != Backend::Sqlite {
        return Ok(Compaction::NotSqlite);
    }
    let Some(_alone) = DataDirLock::exclusive(data_dir)? else {
        return Ok(Compaction::InUse);
    };
    let mut conn = db.pool.acquire().await?;
    let database = vacuum(&mut conn, None).await.context("compacting the database")?;
    drop(conn);
    let search = match &db.search {
        Some(file) => {
            let mut writer = file.writer().await;
            let optimize = "INSERT INTO pages_fts (pages_fts) VALUES ('optimize')";
            vacuum(&mut writer, Some(optimize)).await.context("compacting the search index")?
        }
        None => Shrunk { before: 0, after: 0 },
    };
    Ok(Compaction::Done(Compacted { database, search }))
}

/// `VACUUM`s the connection's main file after running `first`, and empties its log (so
/// the space comes back now, not when the last connection closes).
async fn vacuum(conn: &mut AnyConnection, first: Option<&'static str>) -> Result<Shrunk, sqlx::Error> {
    let before = size(conn).await?;
    if let Some(statement) = first {
        sqlx::query(statement).execute(&mut *conn).await?;
    }
    sqlx::query("VACUUM main").execute(&mut *conn).await?;
    // `main.`: without it the checkpoint would write to every attached file, and pooled
    // connections attach the search file read-only.
    sqlx::query("PRAGMA main.wal_checkpoint(TRUNCATE)").execute(&mut *conn).await?;
    Ok(Shrunk { before, after: size(conn).await? })
}

async fn size(conn: &mut AnyConnection) -> Result<u64, sqlx::Error> {
    let pages: i64 = sqlx::query_scalar("PRAGMA main.page_count").fetch_one(&mut *conn).await?;
    let page_size: i64 = sqlx::query_scalar("PRAGMA main.page_size").fetch_one(&mut *conn).await?;
    Ok((pages * page_size) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// flock locks belong to an open file, so two in one process exclude each other as
    /// two processes' would.
    #[tokio::test]
    async fn compaction_waits_for_servers_and_servers_wait_for_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let one = DataDirLock::shared(dir.path()).await.unwrap();
        let two = DataDirLock::shared(dir.path()).await.unwrap();
        assert!(DataDirLock::exclusive(dir.path()).unwrap().is_none());
        drop(one);
        assert!(DataDirLock::exclusive(dir.path()).unwrap().is_none());
        drop(two);
        let compaction = DataDirLock::exclusive(dir.path()).unwrap().expect("no server holds it");
        let path = dir.path().to_owned();
        let server = tokio::spawn(async move { DataDirLock::shared(&path).await.unwrap() });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!server.is_finished(), "a server started while gc compacts");
        drop(compaction);
        let _server = tokio::time::timeout(std::time::Duration::from_secs(10), server).await.unwrap().unwrap();
        assert!(DataDirLock::exclusive(dir.path()).unwrap().is_none());
    }
}
