//! Keyword search: the database's full-text index finds the pages (FTS5 `MATCH` in the
//! search file attached as `search`; `tsvector @@ tsquery`; what each index holds of a
//! page, and when it is written: `pages/fulltext.rs`), and BM25 ranks them, title matches
//! weighing more than body matches.
//!
//! Where the ranking runs: a query of single words (and a typed prefix) is ranked in the
//! process, from the workspace's term statistics (`semantic::tfidf`), over the ids the
//! database matched — the same BM25 as FTS5's `bm25()`, computed in well under a
//! millisecond where the engine's own ranking decodes every match's positions (about a
//! microsecond a match: 10 ms when a query matches most of 10,000 pages). Phrases, which
//! need positions, and the first queries after a start, before the workspace's
//! statistics are built (in the background), rank in the database (`bm25`;
//! `ts_rank_cd`). See docs/api.md, "Search".

use sqlx::{AnyConnection, AssertSqlSafe};

use super::query::Query;
use crate::core::Ctx;
use crate::core::pages::fulltext;
use crate::core::paging::Paging;
use crate::core::semantic;
use crate::error::Result;
use crate::store::Backend;

/// `$3` is the tag, or NULL for every page.
const FILTER: &str = "p.workspace_id = $2 AND p.deleted_at IS NULL \
     AND ($3 IS NULL OR EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $3))";

/// SQLite's matches: CROSS JOIN pins the full-text index as the outer loop, and the
/// covering index answers the filter without reading page rows.
const SQLITE_MATCHES: &str = "FROM search.pages_fts CROSS JOIN pages p INDEXED BY pages_search_filter_idx \
     ON p.id = pages_fts.rowid WHERE pages_fts MATCH $1";

/// One window of keyword hits (page ids, best first, with their scores); `total` counts
/// every match.
pub(super) struct Found {
    pub ranked: Vec<(i64, f64)>,
    pub total: i64,
}

/// Every term must match; when that finds nothing and the query has several terms, any
/// term may (ranked as usual, so pages holding more of them come first). Long questions
/// — "what is known about the effect of X on Y" — find what they are about instead of
/// nothing.
pub(super) async fn search(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>, paging: Paging) -> Result<Found> {
    // SQLite's entries are written after the saves commit: every acknowledged save first.
    fulltext::catch_up(ctx, ws_id).await?;
    let found = run(ctx, ws_id, q, tag, paging).await?;
    if found.total > 0 || q.positive() < 2 {
        return Ok(found);
    }
    run(ctx, ws_id, &q.any(), tag, paging).await
}

async fn run(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>, paging: Paging) -> Result<Found> {
    match q.single_words() {
        Some(words) if semantic::built_or_start(ctx, ws_id) => ranked_here(ctx, ws_id, q, &words, tag, paging).await,
        _ => ranked_in_database(ctx, ws_id, q, tag, paging).await,
    }
}

/// The database matches, the process ranks.
async fn ranked_here(
    ctx: &Ctx,
    ws_id: i64,
    q: &Query,
    words: &[(&str, bool)],
    tag: Option<&str>,
    paging: Paging,
) -> Result<Found> {
    let mut conn = ctx.db.pool.acquire().await?;
    let matched = matches(&mut conn, ctx.db.backend, q, ws_id, tag).await?;
    drop(conn);
    // Caught up after the match, so the index holds every live page of the workspace the
    // match found (a page saved in between is ranked by its newer text; one trashed in
    // between drops out).
    let index = semantic::fresh(ctx, ws_id).await?;
    let ix = index.read().await;
    let terms: Vec<Vec<u32>> = words.iter().map(|&(w, prefix)| ix.tfidf.keyword_terms(w, prefix)).collect();
    let keep = (paging.offset + paging.limit).max(0) as usize;
    let (best, total) = ix.tfidf.bm25(&terms, &matched, keep);
    drop(ix);
    let window = best.into_iter().skip(paging.offset as usize).collect();
    Ok(Found { ranked: window, total: total as i64 })
}

/// The ids of the pages the query matches, in one statement (an aggregate, so thousands
/// of matches cross to the process as one value). On SQLite without a tag, the ids of
/// every workspace's matches: the full-text index alone answers that, in a third of
/// the time the join with the page rows takes, and the workspace's term statistics
/// keep only its own live pages ([`TfIdf::bm25`](crate::core::semantic::tfidf::TfIdf::bm25)).
async fn matches(
    conn: &mut AnyConnection,
    backend: Backend,
    q: &Query,
    ws_id: i64,
    tag: Option<&str>,
) -> Result<Vec<i64>> {
    let ids = match (backend, tag) {
        (Backend::Postgres, _) => return pg_matches(conn, q, ws_id, tag).await,
        (Backend::Sqlite, None) => {
            sqlx::query_scalar("SELECT group_concat(rowid) FROM search.pages_fts WHERE pages_fts MATCH $1")
                .bind(q.fts5())
                .fetch_one(&mut *conn)
                .await?
        }
        (Backend::Sqlite, Some(_)) => {
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT group_concat(p.id) {SQLITE_MATCHES} AND {FILTER}")))
                .bind(q.fts5())
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
async fn pg_matches(conn: &mut AnyConnection, q: &Query, ws_id: i64, tag: Option<&str>) -> Result<Vec<i64>> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    sqlx::query("SET LOCAL enable_seqscan = off").execute(&mut *tx).await?;
    let sql = format!(
        "SELECT string_agg(p.id::text, ',') FROM \
         (SELECT id, workspace_id, deleted_at FROM pages WHERE search_vector @@ to_tsquery('english', $1) OFFSET 0) p \
         WHERE {FILTER}"
    );
    let ids =
        sqlx::query_scalar(AssertSqlSafe(sql)).bind(q.tsquery()).bind(ws_id).bind(tag).fetch_one(&mut *tx).await?;
    tx.commit().await?;
    Ok(id_list(ids))
}

/// Page ids from the comma-separated aggregate (NULL when nothing matched).
fn id_list(ids: Option<String>) -> Vec<i64> {
    ids.as_deref().unwrap_or("").split(',').filter_map(|id| id.parse().ok()).collect()
}

/// The engine ranks: BM25 on SQLite (title 10×), `ts_rank_cd` on PostgreSQL (title
/// weight A). Ties by page id, as in the process.
async fn ranked_in_database(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>, paging: Paging) -> Result<Found> {
    // The window and its total in one snapshot: a save (or the OCR worker's update of a
    // page's text) committing between the two statements made them disagree.
    let mut tx = ctx.db.snapshot().await?;
    let (window, total): (Vec<(i64, f64)>, i64) = match ctx.db.backend {
        Backend::Sqlite => {
            // bm25 is lower-is-better: its negation is the score.
            let sql = format!(
                "SELECT p.id, -bm25(pages_fts, 10.0, 1.0) AS score {SQLITE_MATCHES} AND {FILTER} \
                 ORDER BY score DESC, p.id LIMIT $4 OFFSET $5"
            );
            let expr = q.fts5();
            let window = sqlx::query_as(AssertSqlSafe(sql))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(&mut *tx)
                .await?;
            let total = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) {SQLITE_MATCHES} AND {FILTER}")))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .fetch_one(&mut *tx)
                .await?;
            (window, total)
        }
        Backend::Postgres => {
            let sql = format!(
                "WITH q AS (SELECT to_tsquery('english', $1) AS query) \
                 SELECT p.id, ts_rank_cd(p.search_vector, q.query)::float8 AS score FROM pages p, q \
                 WHERE p.search_vector @@ q.query AND {FILTER} ORDER BY score DESC, p.id LIMIT $4 OFFSET $5"
            );
            let expr = q.tsquery();
            let window = sqlx::query_as(AssertSqlSafe(sql))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(&mut *tx)
                .await?;
            let count =
                format!("SELECT COUNT(*) FROM pages p WHERE p.search_vector @@ to_tsquery('english', $1) AND {FILTER}");
            let total =
                sqlx::query_scalar(AssertSqlSafe(count)).bind(&expr).bind(ws_id).bind(tag).fetch_one(&mut *tx).await?;
            (window, total)
        }
    };
    tx.commit().await?;
    Ok(Found { ranked: window, total })
}
