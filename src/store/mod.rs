//! The database half of Cairn: one pool, two engines.
//!
//! Queries are written once with `$n` placeholders and run through sqlx's `Any` driver on
//! SQLite (embedded default) and PostgreSQL. Only what truly differs between the engines
//! (DDL types, full-text search, locks) lives in small per-backend branches, each
//! commented. Columns are declared as `BIGINT`/`TEXT`/`BLOB` only: the `Any` driver
//! cannot read SQLite columns declared `BOOLEAN` or `TIMESTAMP` (STACK.md).

pub(crate) mod compact;
pub(crate) mod listen;
pub(crate) mod save_conn;
pub(crate) mod schema;
pub(crate) mod script;
pub(crate) mod search_file;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Connection};

pub(crate) use crate::config::Backend;
use crate::config::Config;
pub(crate) use save_conn::SaveConn;
pub use schema::ConvergeReport;
pub use script::{Script, Value};
pub(crate) use search_file::SearchFile;

/// A `FROM` item yielding the strings of a JSON array bound at `param` as rows `j` with
/// columns `value` and `key` (its 0-based position): a list of any length written with
/// one bound value and one fixed statement (`json_each`; `json_array_elements_text`).
pub(crate) fn json_strings(backend: Backend, param: &str) -> String {
    match backend {
        Backend::Sqlite => format!("json_each({param}) AS j"),
        Backend::Postgres => format!(
            "(SELECT value, ordinality - 1 AS key FROM json_array_elements_text({param}::json) \
             WITH ORDINALITY AS e(value, ordinality)) AS j"
        ),
    }
}

#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
    /// SQLite: the full-text index's own file (attached to every pooled connection).
    pub search: Option<Arc<SearchFile>>,
    /// The connection the batches write through, outside the pool: set exactly on
    /// SQLite (`core::pages::batch::open` tells the backends apart by it).
    pub saves: Option<SaveConn>,
}

impl Db {
    /// Connects, converges the schema on a dedicated connection (so no pooled
    /// connection caches statements from before a rebuild), then opens the pool.
    pub async fn connect(config: &Config) -> anyhow::Result<(Db, ConvergeReport)> {
        sqlx::any::install_default_drivers();
        let backend = config.backend().map_err(anyhow::Error::msg)?;
        let url = connect_url(&config.database_url(), backend);
        let options: AnyConnectOptions = url.parse().context("invalid DATABASE_URL")?;
        let options = options.disable_statement_logging();

        let (mut report, generation) = {
            let mut conn = options.connect().await.context("cannot connect to the database")?;
            if backend == Backend::Sqlite {
                // WAL is a property of the file: set once, kept by every later connection.
                sqlx::query("PRAGMA journal_mode = WAL").execute(&mut conn).await?;
            }
            configure_connection(&mut conn, backend).await?;
            let report = schema::converge(&mut conn, backend).await?;
            if backend == Backend::Postgres {
                let autovacuum: String = sqlx::query_scalar("SHOW autovacuum").fetch_one(&mut conn).await?;
                if autovacuum != "on" {
                    tracing::warn!(
                        "PostgreSQL's autovacuum is off: Cairn analyzes its tables as they change (looked \
                         at every 30 s) and at each maintenance pass (every 10 minutes), but plans made in \
                         between can be slow; turn autovacuum on"
                    );
                }
            }
            let generation =
                if backend == Backend::Sqlite { Some(schema::search_generation(&mut conn).await?) } else { None };
            conn.close().await.ok();
            (report, generation)
        };
        let search = match generation {
            Some(generation) => Some(Arc::new(open_search_file(config, &generation, &mut report).await?)),
            None => None,
        };
        report.log();
        let attach = search.as_ref().map(|s| s.attach_statement());

        let pool = AnyPoolOptions::new()
            .max_connections(config.db_max_connections)
            .min_connections(if backend == Backend::Sqlite { 1 } else { 0 })
            .acquire_timeout(Duration::from_secs(3))
            // A PostgreSQL connection may die with the server; SQLite's cannot.
            .test_before_acquire(backend == Backend::Postgres)
            .after_connect(move |conn, _meta| {
                let attach = attach.clone();
                Box::pin(async move {
                    configure_connection(conn, backend).await?;
                    if let Some(attach) = attach {
                        sqlx::query(sqlx::AssertSqlSafe(attach)).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .context("cannot open the database pool")?;
        let saves = match backend {
            // Made by the pool, so configured and attached as its connections are; and
            // its statement journals kept in memory. A group of saves writes its rows
            // under a savepoint, and SQLite copies each page the group changes into that
            // journal first: past 64 KiB, a temporary file on disk, written with one
            // system call per page (4 % of the server's CPU with 16 clients editing at
            // 10,000 pages; measured in commit 8e326f3). The journal
            // lives for one batch's transaction and holds what the batch changed.
            Backend::Sqlite => {
                let mut conn = pool.acquire().await?.detach();
                sqlx::query("PRAGMA temp_store = MEMORY").execute(&mut conn).await?;
                Some(SaveConn::new(conn))
            }
            Backend::Postgres => None,
        };
        Ok((Db { pool, backend, search, saves }, report))
    }

    /// A read-only transaction whose statements all see one snapshot, so that a page of
    /// results and its `total`, read by two statements, agree while writes commit between
    /// them. (SQLite in WAL mode holds a read transaction's snapshot from its first read;
    /// PostgreSQL's default isolation takes a new snapshot per statement.)
    pub async fn snapshot(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY").execute(&mut *tx).await?;
        }
        Ok(tx)
    }

    /// A transaction that writes, holding SQLite's write lock from its `BEGIN`
    /// (`BEGIN IMMEDIATE`, waiting for the lock as long as the busy timeout allows). A
    /// deferred transaction that reads and then writes cannot wait: its first write fails
    /// at once ("database is locked") when another connection committed after its read,
    /// which in a server is any time. PostgreSQL: a plain `BEGIN` (its rows lock as they
    /// are written; a read that must not change until the commit says `FOR UPDATE`).
    pub async fn write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
    }

    /// PostgreSQL with autovacuum off: refreshes the planner's statistics of Cairn's
    /// tables (`ANALYZE`) and merges the full-text index's pending list, which autovacuum
    /// would otherwise do as they grow, and answers true. Without it a connection keeps
    /// the generic plan it made while the wiki was small — one found pages by slug
    /// through the wrong index, 4–6 ms per read at
    /// 10,000 pages (measured in commit dd9924f) — and `ANALYZE` is what makes every connection plan
    /// again. False (nothing done) on SQLite or with autovacuum on.
    pub async fn refresh_statistics_if_unattended(&self) -> Result<bool, sqlx::Error> {
        if !self.unattended().await? {
            return Ok(false);
        }
        // Tables named here resolve through the search path: this instance's own.
        let tables = schema::table_names().collect::<Vec<_>>().join(", ");
        sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {tables}"))).execute(&self.pool).await?;
        // Autovacuum would also merge the full-text index's pending list (recent saves'
        // words, which every keyword query reads through one by one: ≈ 4 ms at 10,000
        // pages once a few hundred saves wait there; measured in commit e01e180).
        sqlx::query("SELECT gin_clean_pending_list('pages_search_vector_idx'::regclass)").execute(&self.pool).await?;
        Ok(true)
    }

    /// PostgreSQL with autovacuum off: `ANALYZE`s each of Cairn's tables that autovacuum
    /// would analyze by now — more rows changed since its last analyze than 50 plus 10 %
    /// of its rows (PostgreSQL's default `autovacuum_analyze_threshold` and
    /// `autovacuum_analyze_scale_factor`) — and answers their names. Run every
    /// [`crate::workers`] statistics pass (30 s), so a wiki that grows fast does not
    /// wait for the 10-minute maintenance pass with plans made while it was small: at
    /// 10,000 pages such a plan scanned `pages` a few times per save, 18 ms a save
    /// against 5 (measured in commit b696015). Empty on SQLite or with autovacuum on.
    pub async fn analyze_changed_if_unattended(&self) -> Result<Vec<String>, sqlx::Error> {
        if !self.unattended().await? {
            return Ok(vec![]);
        }
        let counts: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT relname::text, n_mod_since_analyze, n_live_tup FROM pg_stat_user_tables \
             WHERE schemaname = current_schema()",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut analyzed = Vec::new();
        for (table, changed, rows) in counts {
            // The name comes from Cairn's own list, never from the catalogue's text.
            let Some(table) = schema::table_names().find(|t| *t == table) else { continue };
            if changed as f64 > 50.0 + 0.1 * rows as f64 {
                sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {table}"))).execute(&self.pool).await?;
                analyzed.push(table.to_owned());
            }
        }
        Ok(analyzed)
    }

    /// PostgreSQL with autovacuum off: nobody refreshes the planner's statistics but us.
    async fn unattended(&self) -> Result<bool, sqlx::Error> {
        if self.backend != Backend::Postgres {
            return Ok(false);
        }
        let autovacuum: String = sqlx::query_scalar("SHOW autovacuum").fetch_one(&self.pool).await?;
        Ok(autovacuum != "on")
    }

    /// True when the database answers within two seconds.
    pub async fn ping(&self) -> bool {
        let probe = sqlx::query("SELECT 1").execute(&self.pool);
        matches!(tokio::time::timeout(Duration::from_secs(2), probe).await, Ok(Ok(_)))
    }
}

/// SQLite's search file, with what opening it made in the report.
async fn open_search_file(
    config: &Config,
    generation: &str,
    report: &mut ConvergeReport,
) -> anyhow::Result<SearchFile> {
    let (file, made) = SearchFile::open(&config.data_dir, generation).await?;
    let name = search_file::FILE_NAME.to_owned();
    match made {
        Some(search_file::Made::Created) => report.created_search.push(name),
        Some(search_file::Made::Rebuilt) => report.rebuilt_search.push(name),
        None => {}
    }
    Ok(file)
}

/// The URL as sqlx wants it: SQLite files are created when missing.
fn connect_url(url: &str, backend: Backend) -> String {
    if backend == Backend::Sqlite && !url.contains('?') { format!("{url}?mode=rwc") } else { url.to_owned() }
}

/// Per-connection settings. SQLite: enforce foreign keys, wait on a busy writer instead
/// of failing, and fsync the WAL at every commit (`synchronous=FULL`) so an acknowledged
/// write survives a power cut, not only a crash. And SQLite's memory limit, which is the
/// process's, not the connection's: set again by each new connection, to the same value.
async fn configure_connection(conn: &mut sqlx::AnyConnection, backend: Backend) -> Result<(), sqlx::Error> {
    if backend == Backend::Sqlite {
        sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
        sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
        sqlx::query("PRAGMA synchronous = FULL").execute(&mut *conn).await?;
        let limit = format!("PRAGMA soft_heap_limit = {}", crate::memory::SQLITE_HEAP_BYTES);
        sqlx::query(sqlx::AssertSqlSafe(limit)).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Errors that mean "the database is unreachable" (answered 503) rather than a bug.
pub(crate) fn is_connection_error(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            // PostgreSQL class 08 = connection exception; 57P0x = shutting down.
            code.starts_with("08") || code.starts_with("57P")
        }
        _ => false,
    }
}

/// Text the database refuses to store: PostgreSQL rejects NUL bytes (22021) and
/// characters outside its encoding (22P05). A client's mistake, not a server error.
pub(crate) fn is_invalid_text(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("22021" | "22P05")))
}

/// A unique constraint was violated (detected by kind, not by name: SQLite has none).
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}
