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

use super::query::Query;
use crate::core::Ctx;
use crate::core::pages::fulltext;
use crate::core::paging::Paging;
use crate::core::semantic;
use crate::error::Result;
use crate::store::Backend;

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
    let matched = fulltext::matches(&mut conn, ctx.db.backend, &expression(ctx.db.backend, q), ws_id, tag).await?;
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

/// The engine ranks: BM25 on SQLite (title 10×), `ts_rank_cd` on PostgreSQL (title
/// weight A). Ties by page id, as in the process.
async fn ranked_in_database(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>, paging: Paging) -> Result<Found> {
    // The window and its total in one snapshot: a save (or the OCR worker's update of a
    // page's text) committing between the two statements made them disagree.
    let mut tx = ctx.db.snapshot().await?;
    let (ranked, total) =
        fulltext::ranked(&mut tx, ctx.db.backend, &expression(ctx.db.backend, q), ws_id, tag, paging).await?;
    tx.commit().await?;
    Ok(Found { ranked, total })
}

/// The query as the backend's full-text engine reads it.
fn expression(backend: Backend, q: &Query) -> String {
    match backend {
        Backend::Sqlite => q.fts5(),
        Backend::Postgres => q.tsquery(),
    }
}
