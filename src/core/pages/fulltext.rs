//! The full-text indexes: what they hold of a page, and how a query matches them (the
//! one place where the backends' search SQL differs; `search/keyword.rs` ranks what they
//! match). Neither engine stores the search text itself: it is derived from the markdown
//! ([`super::search_text::search_body`]).
//!
//! PostgreSQL keeps it in the page row's `search_vector`, written with the row. SQLite
//! keeps it in a file of its own (`store/search_file.rs`), written after the saves
//! commit, by [`catch_up`]: from the page rows whose change counter passed what the file
//! has seen. Keyword search catches its workspace up before matching; the indexing worker
//! (`workers.rs`) does it after every batch, so a search rarely finds work left.

use futures_util::future::BoxFuture;
use sqlx::{AnyConnection, AssertSqlSafe};

use super::{rows, search_text};
use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::error::Result;
use crate::store::{self, Backend, search_file};
use crate::text;

/// Page rows read per statement while catching up (a first catch-up reads every page).
const CHUNK: i64 = 256;

/// SQLite: writes the entries of the workspace's pages changed since the search file
/// last caught up, and removes those of page rows that are gone. Once it returns, the
/// file reflects every save committed before it was called. Nothing to do (one
/// primary-key read) when the file is up to date, and always on PostgreSQL.
pub(crate) async fn catch_up(ctx: &Ctx, ws_id: i64) -> Result<()> {
    if ctx.db.search.is_none() || behind(ctx, ws_id).await?.is_none() {
        return Ok(());
    }
    with_writer(ctx, move |ctx, writer| Box::pin(async move { write_entries(&ctx, writer, ws_id).await })).await
}

/// Runs `work` in a transaction holding the search file's write lock — taken before
/// anything is read, so what `work` reads is at least as new as what any other process
/// wrote into the file — committed when it succeeds. In a task of its own: a search
/// whose client went away drops its future, and the writing connection must not be
/// left inside the transaction.
async fn with_writer<T: Send + 'static>(
    ctx: &Ctx,
    work: impl for<'c> FnOnce(Ctx, &'c mut AnyConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
) -> Result<T> {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let Some(file) = ctx.db.search.clone() else { return Err(anyhow::anyhow!("no search file").into()) };
        let mut writer = file.writer().await;
        search_file::begin(&mut writer).await?;
        let result = work(ctx, &mut writer).await;
        search_file::finish(&mut writer, result).await
    })
    .await
    .map_err(anyhow::Error::from)?
}

/// The workspace's change counter and last reset, when the search file is behind them.
async fn behind(ctx: &Ctx, ws_id: i64) -> Result<Option<(i64, i64)>> {
    let row: Option<(i64, i64, i64)> = sqlx::query_as(
        "SELECT s.seq, s.reset_at, COALESCE((SELECT f.seq FROM search.fts_state f WHERE f.workspace_id = s.workspace_id), 0) \
         FROM index_seqs s WHERE s.workspace_id = $1",
    )
    .bind(ws_id)
    .fetch_optional(&ctx.db.pool)
    .await?;
    Ok(row.filter(|(seq, _, seen)| seq > seen).map(|(seq, reset_at, _)| (seq, reset_at)))
}

async fn write_entries(ctx: &Ctx, writer: &mut AnyConnection, ws_id: i64) -> Result<()> {
    let seen: Option<(i64, i64)> = sqlx::query_as("SELECT seq, reset_at FROM fts_state WHERE workspace_id = $1")
        .bind(ws_id)
        .fetch_optional(&mut *writer)
        .await?;
    let (seen_seq, seen_reset) = seen.unwrap_or((0, 0));
    let Some((seq, reset_at)) = behind(ctx, ws_id).await? else { return Ok(()) };
    if reset_at > seen_reset {
        // The workspace's rows were removed and written again with new ids.
        remove_gone(ctx, writer).await?;
    }
    // Keyset over (index_seq, id): a row saved again meanwhile moves past `seq`, and the
    // next catch-up writes it.
    let mut after = (seen_seq, 0_i64);
    loop {
        let pages = rows::texts_in_order(&mut *ctx.db.pool.acquire().await?, ws_id, seq, after, CHUNK).await?;
        let Some(last) = pages.last() else { break };
        after = (last.index_seq, last.id);
        let full = pages.len() as i64 == CHUNK;
        // Inflating and parsing the markdown again is CPU work: off the async threads.
        let mut entries = tokio::task::spawn_blocking(move || {
            pages
                .into_iter()
                .map(|mut t| {
                    let content = t.take_markdown()?;
                    Ok((t.id, text::index_form(&t.title), search_text::search_body(&content, &t.image_text)))
                })
                .collect::<Result<Vec<_>>>()
        })
        .await
        .map_err(anyhow::Error::from)??;
        // Written in rowid order. FTS5 gathers a transaction's entries in memory and
        // writes them out as one new segment, but an entry whose rowid is below the last
        // one written makes it write out what it gathered first (`BeginWrite`,
        // fts5_index.c): in the rows' change order, random pages made a segment every
        // other entry, and merging them back was 18 % of the server's CPU with 16 clients
        // editing at 10,000 pages (measured in commit 8e326f3).
        entries.sort_unstable_by_key(|(id, _, _)| *id);
        for (id, title, body) in entries {
            sqlx::query("INSERT OR REPLACE INTO pages_fts (rowid, search_title, body) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(title)
                .bind(body)
                .execute(&mut *writer)
                .await?;
        }
        if !full {
            break;
        }
    }
    sqlx::query(
        "INSERT INTO fts_state (workspace_id, seq, reset_at) VALUES ($1, $2, $3) \
         ON CONFLICT (workspace_id) DO UPDATE SET seq = excluded.seq, reset_at = excluded.reset_at",
    )
    .bind(ws_id)
    .bind(seq)
    .bind(reset_at)
    .execute(&mut *writer)
    .await?;
    Ok(())
}

/// Removes the entries of page rows that no longer exist (a workspace rebuilt or
/// deleted, a page purged from the trash). Their ids are never used again, so until then
/// they only take space: every match is joined with, or ranked among, live rows.
async fn remove_gone(ctx: &Ctx, writer: &mut AnyConnection) -> Result<()> {
    remove_entries(writer, &gone_entries(ctx).await?).await
}

/// The ids of the entries whose page rows no longer exist. A page id is never used
/// again, so an id found gone stays gone: reading this outside the file's write lock is
/// safe.
async fn gone_entries(ctx: &Ctx) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT f.rowid FROM search.pages_fts f WHERE NOT EXISTS (SELECT 1 FROM pages p WHERE p.id = f.rowid)",
    )
    .fetch_all(&ctx.db.pool)
    .await?)
}

/// One statement for any number of entries (a rebuilt workspace removes all of its own).
async fn remove_entries(writer: &mut AnyConnection, ids: &[i64]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let list = store::json_strings(Backend::Sqlite, "$1");
    sqlx::query(AssertSqlSafe(format!("DELETE FROM pages_fts WHERE rowid IN (SELECT j.value FROM {list})")))
        .bind(serde_json::to_string(ids).map_err(anyhow::Error::from)?)
        .execute(&mut *writer)
        .await?;
    Ok(())
}

/// SQLite: takes a purged page out of the search file for good: its entry removed, the
/// index's segments merged without it (FTS5 keeps a deleted entry's words in its segments
/// until they are merged), with the freed pages zeroed (`secure_delete`), and the
/// write-ahead log emptied — so no byte of the file still holds its words.
pub(crate) async fn forget_purged(ctx: &Ctx) -> Result<()> {
    if ctx.db.search.is_none() {
        return Ok(());
    }
    with_writer(ctx, |ctx, writer| {
        Box::pin(async move {
            remove_gone(&ctx, writer).await?;
            sqlx::query("PRAGMA secure_delete = ON").execute(&mut *writer).await?;
            let merged =
                sqlx::query("INSERT INTO pages_fts (pages_fts) VALUES ('optimize')").execute(&mut *writer).await;
            sqlx::query("PRAGMA secure_delete = OFF").execute(&mut *writer).await?;
            merged?;
            Ok(())
        })
    })
    .await?;
    if let Some(file) = &ctx.db.search {
        file.truncate_log().await?;
    }
    Ok(())
}

/// SQLite: removes the entries of page rows that are gone (the maintenance pass, for
/// pages purged one by one). Answers how many. Takes the file's write lock only when
/// there is something to remove.
pub(crate) async fn sweep(ctx: &Ctx) -> Result<usize> {
    if ctx.db.search.is_none() {
        return Ok(0);
    }
    let gone = gone_entries(ctx).await?;
    if gone.is_empty() {
        return Ok(0);
    }
    with_writer(ctx, move |_, writer| Box::pin(async move { remove_entries(writer, &gone).await.map(|()| gone.len()) }))
        .await
}

/// SQLite: catches up every workspace (at start, after an upgrade or a lost file).
pub(crate) async fn catch_up_all(ctx: &Ctx) -> Result<()> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT workspace_id FROM index_seqs").fetch_all(&ctx.db.pool).await?;
    for id in ids {
        catch_up(ctx, id).await?;
    }
    Ok(())
}

// --- Matching ---------------------------------------------------------------------------

/// `$3` is the tag, or NULL for every page.
const FILTER: &str = "p.workspace_id = $2 AND p.deleted_at IS NULL \
     AND ($3 IS NULL OR EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $3))";

/// SQLite's matches: CROSS JOIN pins the full-text index as the outer loop, and the
/// covering index answers the filter without reading page rows.
const SQLITE_MATCHES: &str = "FROM search.pages_fts CROSS JOIN pages p INDEXED BY pages_search_filter_idx \
     ON p.id = pages_fts.rowid WHERE pages_fts MATCH $1";

/// The ids of the pages the query matches, in one statement (an aggregate, so thousands
/// of matches cross to the process as one value). On SQLite without a tag, the ids of
/// every workspace's matches: the full-text index alone answers that, in a third of
/// the time the join with the page rows takes, and the workspace's term statistics
/// keep only its own live pages ([`TfIdf::bm25`](crate::core::semantic::tfidf::TfIdf::bm25)).
pub(crate) async fn matches(
    conn: &mut AnyConnection,
    backend: Backend,
    expr: &str,
    ws_id: i64,
    tag: Option<&str>,
) -> Result<Vec<i64>> {
    let ids = match (backend, tag) {
        (Backend::Postgres, _) => return pg_matches(conn, expr, ws_id, tag).await,
        (Backend::Sqlite, None) => {
            sqlx::query_scalar("SELECT group_concat(rowid) FROM search.pages_fts WHERE pages_fts MATCH $1")
                .bind(expr)
                .fetch_one(&mut *conn)
                .await?
        }
        (Backend::Sqlite, Some(_)) => {
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT group_concat(p.id) {SQLITE_MATCHES} AND {FILTER}")))
                .bind(expr)
                .bind(ws_id)
                .bind(tag)
                .fetch_one(&mut *conn)
                .await?
        }
    };
    Ok(id_list(ids))
}

/// PostgreSQL's matches, found through the GIN index. The planner prices `@@` as if each
/// row's vector were at hand, so for a word most pages hold it tests every row; but most
/// vectors are TOASTed, and that scan reads and decompresses them all — 30 ms at 10,000
/// pages, against 2.5 ms for the index's bitmap (EXPLAIN ANALYZE in commit e01e180). The
/// subquery (`OFFSET 0` keeps the planner from merging it) matches on the vector alone,
/// and with sequential scans off for this one statement the index is its only way; the
/// workspace, trash and tag filter the matches outside it.
async fn pg_matches(conn: &mut AnyConnection, expr: &str, ws_id: i64, tag: Option<&str>) -> Result<Vec<i64>> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    sqlx::query("SET LOCAL enable_seqscan = off").execute(&mut *tx).await?;
    let sql = format!(
        "SELECT string_agg(p.id::text, ',') FROM \
         (SELECT id, workspace_id, deleted_at FROM pages WHERE search_vector @@ to_tsquery('english', $1) OFFSET 0) p \
         WHERE {FILTER}"
    );
    let ids = sqlx::query_scalar(AssertSqlSafe(sql)).bind(expr).bind(ws_id).bind(tag).fetch_one(&mut *tx).await?;
    tx.commit().await?;
    Ok(id_list(ids))
}

/// Page ids from the comma-separated aggregate (NULL when nothing matched).
fn id_list(ids: Option<String>) -> Vec<i64> {
    ids.as_deref().unwrap_or("").split(',').filter_map(|id| id.parse().ok()).collect()
}

/// One window of the matches of `expr` ranked by the engine, and how many match in all:
/// BM25 on SQLite (title 10×), `ts_rank_cd` on PostgreSQL (title weight A). Ties by page
/// id. Run both statements in one snapshot (`tx`), so that they agree.
pub(crate) async fn ranked(
    tx: &mut AnyConnection,
    backend: Backend,
    expr: &str,
    ws_id: i64,
    tag: Option<&str>,
    paging: Paging,
) -> Result<(Vec<(i64, f64)>, i64)> {
    let (window_sql, count_sql) = match backend {
        // bm25 is lower-is-better: its negation is the score.
        Backend::Sqlite => (
            format!(
                "SELECT p.id, -bm25(pages_fts, 10.0, 1.0) AS score {SQLITE_MATCHES} AND {FILTER} \
                 ORDER BY score DESC, p.id LIMIT $4 OFFSET $5"
            ),
            format!("SELECT COUNT(*) {SQLITE_MATCHES} AND {FILTER}"),
        ),
        Backend::Postgres => (
            format!(
                "WITH q AS (SELECT to_tsquery('english', $1) AS query) \
                 SELECT p.id, ts_rank_cd(p.search_vector, q.query)::float8 AS score FROM pages p, q \
                 WHERE p.search_vector @@ q.query AND {FILTER} ORDER BY score DESC, p.id LIMIT $4 OFFSET $5"
            ),
            format!("SELECT COUNT(*) FROM pages p WHERE p.search_vector @@ to_tsquery('english', $1) AND {FILTER}"),
        ),
    };
    let window = sqlx::query_as(AssertSqlSafe(window_sql))
        .bind(expr)
        .bind(ws_id)
        .bind(tag)
        .bind(paging.limit)
        .bind(paging.offset)
        .fetch_all(&mut *tx)
        .await?;
    let total =
        sqlx::query_scalar(AssertSqlSafe(count_sql)).bind(expr).bind(ws_id).bind(tag).fetch_one(&mut *tx).await?;
    Ok((window, total))
}
