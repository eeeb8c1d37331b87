//! SQLite: the one connection that batches write through.
//!
//! SQLite lets one writer in at a time, whichever connection it comes through, so the
//! batches of every workspace (`core::pages::batch`) share one connection kept out of the
//! pool instead of each taking a pooled one. A pooled connection costs a batch more than
//! its statements: sqlx pings every connection handed back to the pool, and on SQLite a
//! ping is a message to the connection's worker thread and an answer back — two thread
//! hand-offs per batch for nothing, on a save made of a handful of such hand-offs
//! (measured in commit 93c6232). Batches queue for it first come, first
//! served, instead of in SQLite's busy handler, which sleeps and tries again; other
//! writers (accounts, tokens, the workers) still take pooled connections and meet the
//! batches at SQLite's lock, as before.
//!
//! The transaction is managed as sqlx's own `Transaction` manages one (its
//! `TransactionManager`: a cancelled `BEGIN` is rolled back by the connection's worker, a
//! transaction dropped before it ended is rolled back before the connection's next
//! command), which cannot be kept here itself: it needs a pooled connection to outlive
//! the borrow it is made from.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use sqlx::any::AnyTransactionManager;
use sqlx::{AnyConnection, SqlSafeStr};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// sqlx's own transaction manager (its trait is sqlx-core's: sqlx does not re-export it).
type Manager = AnyTransactionManager;

#[derive(Clone)]
pub struct SaveConn(Arc<Mutex<AnyConnection>>);

impl SaveConn {
    /// Keeps `conn` (configured as the pool's connections are) for the batches.
    pub fn new(conn: AnyConnection) -> SaveConn {
        SaveConn(Arc::new(Mutex::new(conn)))
    }

    /// Waits for the connection, then begins a transaction holding SQLite's write lock.
    pub async fn begin(&self) -> Result<SaveTx, sqlx::Error> {
        let mut conn = self.0.clone().lock_owned().await;
        // Nothing should be open here; if something is, it is nobody's.
        while Manager::get_transaction_depth(&conn) > 0 {
            Manager::rollback(&mut conn).await?;
        }
        Manager::begin(&mut conn, Some("BEGIN IMMEDIATE".into_sql_str())).await?;
        Ok(SaveTx { conn, open: true })
    }
}

/// A transaction on the [`SaveConn`], holding it until it ends.
pub struct SaveTx {
    conn: OwnedMutexGuard<AnyConnection>,
    open: bool,
}

impl SaveTx {
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        Manager::commit(&mut self.conn).await?;
        self.open = false;
        Ok(())
    }

    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        Manager::rollback(&mut self.conn).await?;
        self.open = false;
        Ok(())
    }
}

impl Deref for SaveTx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl DerefMut for SaveTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

impl Drop for SaveTx {
    fn drop(&mut self) {
        if self.open {
            // Queued ahead of whatever the next holder sends.
            Manager::start_rollback(&mut self.conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::any::AnyConnectOptions;
    use sqlx::{ConnectOptions, Connection};

    async fn connect(path: &std::path::Path) -> AnyConnection {
        sqlx::any::install_default_drivers();
        let options: AnyConnectOptions = format!("sqlite://{}?mode=rwc", path.display()).parse().unwrap();
        let mut conn = options.connect().await.unwrap();
        sqlx::query("PRAGMA journal_mode = WAL").execute(&mut conn).await.unwrap();
        // A writer that finds the lock taken fails at once (sqlx waits 5 s by default).
        sqlx::query("PRAGMA busy_timeout = 0").execute(&mut conn).await.unwrap();
        conn
    }

    async fn count(conn: &mut AnyConnection) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(conn).await.unwrap()
    }

    /// Another connection's `BEGIN IMMEDIATE`, which fails at once while a writer holds
    /// SQLite's lock (no busy timeout).
    async fn lock_free(other: &mut AnyConnection) -> bool {
        let free = sqlx::query("BEGIN IMMEDIATE").execute(&mut *other).await.is_ok();
        if free {
            sqlx::query("ROLLBACK").execute(&mut *other).await.unwrap();
        }
        free
    }

    /// A database with a table `t`: a connection of its own, and the save connection.
    async fn database() -> (tempfile::TempDir, AnyConnection, SaveConn) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let mut other = connect(&path).await;
        sqlx::query("CREATE TABLE t (x INTEGER)").execute(&mut other).await.unwrap();
        let saves = SaveConn::new(connect(&path).await);
        (dir, other, saves)
    }

    #[tokio::test]
    async fn a_transaction_dropped_before_it_ends_is_rolled_back_and_lets_the_lock_go() {
        let (_dir, mut other, saves) = database().await;

        let mut tx = saves.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)").execute(&mut *tx).await.unwrap();
        assert!(!lock_free(&mut other).await, "the transaction holds SQLite's write lock");
        drop(tx);
        // The rollback is queued on the connection's worker, which runs it at once.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !lock_free(&mut other).await {
            assert!(std::time::Instant::now() < deadline, "the dropped transaction still holds the lock");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(count(&mut other).await, 0, "nothing of the dropped transaction stays");

        // The connection is usable again, and a commit is kept.
        let mut tx = saves.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (2)").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(count(&mut other).await, 1);
        assert!(lock_free(&mut other).await);
    }

    #[tokio::test]
    async fn a_transaction_nests_savepoints_and_rolls_back_whole() {
        let (_dir, mut other, saves) = database().await;

        // A nested transaction (a reindex's, inside its batch) is a savepoint.
        let mut tx = saves.begin().await.unwrap();
        let mut inner = Connection::begin(&mut *tx).await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)").execute(&mut *inner).await.unwrap();
        inner.rollback().await.unwrap();
        let mut inner = Connection::begin(&mut *tx).await.unwrap();
        sqlx::query("INSERT INTO t VALUES (2)").execute(&mut *inner).await.unwrap();
        inner.commit().await.unwrap();
        assert_eq!(count(&mut tx).await, 1);
        tx.rollback().await.unwrap();
        assert_eq!(count(&mut other).await, 0, "the rollback takes the savepoint's rows too");

        let mut tx = saves.begin().await.unwrap();
        let mut inner = Connection::begin(&mut *tx).await.unwrap();
        sqlx::query("INSERT INTO t VALUES (3)").execute(&mut *inner).await.unwrap();
        inner.commit().await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(count(&mut other).await, 1);
    }
}
