//! What the full-text indexes hold of a page (the one place outside `search/keyword.rs`
//! where the backends' search SQL differs). Neither engine stores the search text
//! itself: it is derived from the markdown ([`super::rows::search_body`]).
//!
//! PostgreSQL keeps it in the page row's `search_vector`, written with the row. SQLite
//! keeps it in a file of its own (`store/search_file.rs`), written after the saves
//! commit, by [`catch_up`]: from the page rows whose change counter passed what the file
//! has seen. Keyword search catches its workspace up before matching; the indexing worker
//! (`workers.rs`) does it after every group commit, so a search rarely finds work left.

use futures_util::future::BoxFuture;
use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::{rows, stored};
use crate::core::Ctx;
use crate::error::Result;
use crate::store::{self, Backend, search_file};
use crate::text;

/// PostgreSQL's `search_vector` of a page, as an expression over two bound parameters:
/// the title as indexed and the search text. The page row's own statement sets it.
pub fn pg_vector(title: &str, body: &str) -> String {
    format!("setweight(to_tsvector('english', {title}), 'A') || setweight(to_tsvector('english', {body}), 'B')")
}

/// Page rows read per statement while catching up (a first catch-up reads every page).
const CHUNK: i64 = 256;

/// SQLite: writes the entries of the workspace's pages changed since the search file
/// last caught up, and removes those of page rows that are gone. Once it returns, the
/// file reflects every save committed before it was called. Nothing to do (one
/// primary-key read) when the file is up to date, and always on PostgreSQL.
pub async fn catch_up(ctx: &Ctx, ws_id: i64) -> Result<()> {
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
        let rows = sqlx::query(
            "SELECT id, index_seq, title, content, content_z, image_text FROM pages \
             WHERE workspace_id = $1 AND index_seq <= $2 AND (index_seq > $3 OR (index_seq = $3 AND id > $4)) \
             ORDER BY index_seq, id LIMIT $5",
        )
        .bind(ws_id)
        .bind(seq)
        .bind(after.0)
        .bind(after.1)
        .bind(CHUNK)
        .fetch_all(&ctx.db.pool)
        .await?;
        let Some(last) = rows.last() else { break };
        after = (last.try_get("index_seq")?, last.try_get("id")?);
        type Fetched = (i64, String, String, stored::Packed, String);
        let pages: Vec<Fetched> = rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("id")?,
                    r.try_get("title")?,
                    r.try_get("content")?,
                    r.try_get("content_z")?,
                    r.try_get("image_text")?,
                ))
            })
            .collect::<std::result::Result<_, sqlx::Error>>()?;
        // Inflating and parsing the markdown again is CPU work: off the async threads.
        let mut entries = tokio::task::spawn_blocking(move || {
            pages
                .into_iter()
                .map(|(id, title, content, packed, image_text)| {
                    let content = stored::read(content, packed)?;
                    Ok((id, text::index_form(&title), rows::search_body(&content, &image_text)))
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
        if rows.len() < CHUNK as usize {
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

/// SQLite: removes the entries of page rows that are gone (the maintenance pass, for
/// pages purged one by one). Answers how many. Takes the file's write lock only when
/// there is something to remove.
pub async fn sweep(ctx: &Ctx) -> Result<usize> {
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
pub async fn catch_up_all(ctx: &Ctx) -> Result<()> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT workspace_id FROM index_seqs").fetch_all(&ctx.db.pool).await?;
    for id in ids {
        catch_up(ctx, id).await?;
    }
    Ok(())
}
