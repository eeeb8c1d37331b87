//! Keyword search on each engine's full-text index — the one place the two backends'
//! SQL differs for search (FTS5 `MATCH` + `bm25` + `snippet`; `tsvector @@ tsquery` +
//! `ts_rank_cd` + `ts_headline`). Title matches weigh more than body matches on both.

use sqlx::AssertSqlSafe;

use super::query::Query;
use super::{Hit, MARK_END, MARK_START, snippet_html};
use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::error::Result;
use crate::store::Backend;

/// `$3` is the tag, or NULL for every page.
const FILTER: &str = "p.workspace_id = $2 AND p.deleted_at IS NULL \
     AND ($3 IS NULL OR EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $3))";

type HitRow = (i64, String, String, String, f64);

/// Keyword hits of one window, with their page ids; `total` counts every match.
pub(super) struct Found {
    pub hits: Vec<(i64, Hit)>,
    pub total: i64,
}

/// Every term must match; when that finds nothing and the query has several terms, any
/// term may (ranked as usual, so pages holding more of them come first). Long questions
/// — "what is known about the effect of X on Y" — find what they are about instead of
/// nothing.
pub(super) async fn search(
    ctx: &Ctx,
    ws_id: i64,
    q: &Query,
    tag: Option<&str>,
    paging: Paging,
    snippets: bool,
) -> Result<Found> {
    let found = run(ctx, ws_id, q, tag, paging, snippets).await?;
    if found.total > 0 || q.positive() < 2 {
        return Ok(found);
    }
    run(ctx, ws_id, &q.any(), tag, paging, snippets).await
}

async fn run(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>, paging: Paging, snippets: bool) -> Result<Found> {
    // The window and its total in one snapshot: a save (or the OCR worker's update of a
    // page's text) committing between the two statements made them disagree.
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total): (Vec<HitRow>, i64) = match ctx.db.backend {
        Backend::Sqlite => {
            // bm25 is lower-is-better: its negation is the score. Title weighs 10×. CROSS
            // JOIN pins the full-text index as the outer loop, and the covering index
            // answers the filter (and the slug that breaks ties) without reading page
            // rows; only the window's rows are read, for title and snippet.
            let from = format!(
                "FROM pages_fts CROSS JOIN pages p INDEXED BY pages_search_filter_idx ON p.id = pages_fts.rowid \
                 WHERE pages_fts MATCH $1 AND {FILTER}"
            );
            // A snippet needs the match again, row by row (FTS5 evaluates the query once
            // per window row): only when asked, never for hybrid's 100 candidates.
            let (snippet, fts, matching) = if snippets {
                (
                    "snippet(pages_fts, 1, $6, $7, '…', 24)",
                    "CROSS JOIN pages_fts ON pages_fts.rowid = hits.id",
                    "WHERE pages_fts MATCH $1",
                )
            } else {
                ("''", "", "")
            };
            let sql = format!(
                "WITH hits AS (SELECT p.id, p.slug, -bm25(pages_fts, 10.0, 1.0) AS score {from} \
                                ORDER BY score DESC, p.slug LIMIT $4 OFFSET $5) \
                 SELECT p.id, p.slug, p.title, {snippet}, hits.score \
                 FROM hits {fts} CROSS JOIN pages p ON p.id = hits.id {matching} ORDER BY hits.score DESC, hits.slug"
            );
            let expr = q.fts5();
            let rows = sqlx::query_as(AssertSqlSafe(sql))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .bind(paging.limit)
                .bind(paging.offset)
                .bind(MARK_START.to_string())
                .bind(MARK_END.to_string())
                .fetch_all(&mut *tx)
                .await?;
            let total = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) {from}")))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .fetch_one(&mut *tx)
                .await?;
            (rows, total)
        }
        Backend::Postgres => {
            // Rank and page first; the (costly) headline only for the page of results.
            let headline = if snippets { "ts_headline('english', p.body, q.query, $6)" } else { "$6" };
            let sql = format!(
                "WITH q AS (SELECT to_tsquery('english', $1) AS query), \
                 hits AS (SELECT p.id, ts_rank_cd(p.search_vector, q.query)::float8 AS score FROM pages p, q \
                          WHERE p.search_vector @@ q.query AND {FILTER} ORDER BY score DESC, p.slug LIMIT $4 OFFSET $5) \
                 SELECT p.id, p.slug, p.title, {headline}, hits.score \
                 FROM hits JOIN pages p ON p.id = hits.id, q ORDER BY hits.score DESC, p.slug"
            );
            let expr = q.tsquery();
            let options = if !snippets {
                String::new()
            } else {
                format!(
                    "StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=30, MinWords=12, ShortWord=1, \
                 MaxFragments=2, FragmentDelimiter=\" … \""
                )
            };
            let rows = sqlx::query_as(AssertSqlSafe(sql))
                .bind(&expr)
                .bind(ws_id)
                .bind(tag)
                .bind(paging.limit)
                .bind(paging.offset)
                .bind(options)
                .fetch_all(&mut *tx)
                .await?;
            let count =
                format!("SELECT COUNT(*) FROM pages p WHERE p.search_vector @@ to_tsquery('english', $1) AND {FILTER}");
            let total =
                sqlx::query_scalar(AssertSqlSafe(count)).bind(&expr).bind(ws_id).bind(tag).fetch_one(&mut *tx).await?;
            (rows, total)
        }
    };
    tx.commit().await?;
    let hits = rows
        .into_iter()
        .map(|(id, slug, title, snippet, score)| (id, Hit { slug, title, snippet: snippet_html(&snippet), score }))
        .collect();
    Ok(Found { hits, total })
}
