//! Search in three modes (docs/api.md, "Search").
//!
//! - `keyword`: the database's full-text index, ranked, with a highlighted snippet.
//! - `semantic`: cosine similarity of TF-IDF vectors (`engine: "tfidf"`), or of
//!   sentence embeddings when `SEMANTIC_SEARCH=1` and the model resolved (`"embedding"`).
//! - `hybrid`: reciprocal-rank fusion of the two lists (`"fulltext+tfidf"`, …).
//!
//! Every mode answers the same shape; `engine` says which computation ran, so a
//! feature that degrades says so.

mod keyword;
mod meaning;
mod passage;
pub(crate) mod query;
mod rerank;

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use super::paging::Paging;
use super::workspaces::Access;
use crate::error::{Error, Result};
use query::Query;

/// Longest query read; the rest is ignored (a search box, not a document).
const MAX_QUERY_CHARS: usize = 1000;
/// Most terms a query may hold; later ones are ignored.
const MAX_TERMS: usize = 32;

/// Candidates each list brings to a hybrid fusion (at least; more when paging deeper).
const FUSION_CANDIDATES: i64 = 100;
/// The `k` of reciprocal-rank fusion: 60, as in Cormack et al. (2009); it damps the
/// weight of the very first ranks so neither list dominates.
const RRF_K: f64 = 60.0;

/// Highlight markers the engines put around matches; private-use characters no page
/// holds, turned into `<mark>` after the snippet is HTML-escaped.
const MARK_START: char = '\u{E000}';
const MARK_END: char = '\u{E001}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Keyword,
    Semantic,
    Hybrid,
}

impl Mode {
    /// `keyword` when absent; 400 for an unknown mode.
    pub(crate) fn parse(mode: Option<&str>) -> Result<Mode> {
        match mode.map(str::trim).filter(|m| !m.is_empty()) {
            None | Some("keyword") => Ok(Mode::Keyword),
            Some("semantic") => Ok(Mode::Semantic),
            Some("hybrid") => Ok(Mode::Hybrid),
            Some(other) => Err(Error::invalid_mode(other)),
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Keyword => "keyword",
            Mode::Semantic => "semantic",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// One page found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Hit {
    pub slug: String,
    pub title: String,
    /// Text around the best match, HTML-escaped, matches in `<mark>…</mark>`.
    pub snippet: String,
    /// Higher is better; comparable within one answer only. (Reranked hybrid answers
    /// score their reranked head in 1–2, above the fused tail.)
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SearchResults {
    pub query: String,
    pub mode: &'static str,
    /// How the result was computed: `fulltext` (keyword), `tfidf` or `embedding`
    /// (semantic), `fulltext+tfidf` or `fulltext+embedding` (hybrid), with `+rerank`
    /// appended when the hybrid list was reranked.
    pub engine: String,
    pub items: Vec<Hit>,
    /// Pages matching in all (for paging).
    pub total: i64,
    /// With the embedding model: how many of the workspace's pages are not embedded yet
    /// (found meanwhile by their TF-IDF vectors, each placed ahead of the embedded pages
    /// that match the query's words less well). Absent when no embedding ran. An extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_embeddings: Option<usize>,
}

pub(crate) struct SearchRequest<'a> {
    pub q: &'a str,
    pub mode: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub paging: Paging,
}

/// Searches the live pages of one workspace.
pub(crate) async fn search(ctx: &Ctx, access: &Access, req: SearchRequest<'_>) -> Result<SearchResults> {
    // Parsed untrimmed: a trailing space says the last word is complete.
    let raw: String = req.q.chars().take(MAX_QUERY_CHARS).collect();
    let q = raw.trim().to_owned();
    if q.is_empty() {
        return Err(Error::empty_query());
    }
    let mode = Mode::parse(req.mode)?;
    let mut parsed = Query::parse(&raw);
    parsed.terms.truncate(MAX_TERMS);
    let tag = req.tag.and_then(crate::ids::normalize_tag);
    let ws_id = access.workspace_id();
    if parsed.is_empty() {
        let engine = match mode {
            Mode::Keyword => "fulltext".to_owned(),
            Mode::Semantic => meaning::engine_name(ctx).to_owned(),
            Mode::Hybrid => format!("fulltext+{}", meaning::engine_name(ctx)),
        };
        return Ok(SearchResults {
            query: q,
            mode: mode.as_str(),
            engine,
            items: vec![],
            total: 0,
            pending_embeddings: None,
        });
    }
    let (engine, items, total, pending_embeddings) = match mode {
        Mode::Keyword => {
            let found = keyword::search(ctx, ws_id, &parsed, tag.as_deref(), req.paging).await?;
            let all = Paging { limit: found.ranked.len() as i64, offset: 0 };
            ("fulltext".to_owned(), hits_of(ctx, ws_id, &found.ranked, all, &parsed).await?, found.total, None)
        }
        Mode::Semantic => {
            let sem = meaning::rank(ctx, ws_id, &parsed, tag.as_deref()).await?;
            let total = sem.ranked.len() as i64;
            let items = hits_of(ctx, ws_id, &sem.ranked, req.paging, &parsed).await?;
            (sem.engine.to_owned(), items, total, sem.pending)
        }
        Mode::Hybrid => {
            let want = FUSION_CANDIDATES.max(req.paging.offset + req.paging.limit);
            let window = Paging { limit: want.min(super::paging::MAX_LIMIT * 2), offset: 0 };
            let keyword = keyword::search(ctx, ws_id, &parsed, tag.as_deref(), window).await?;
            let sem = meaning::rank(ctx, ws_id, &parsed, tag.as_deref()).await?;
            let lists = [
                keyword.ranked.iter().map(|(id, _)| *id).collect(),
                sem.ranked.iter().take(window.limit as usize).map(|h| h.0).collect(),
            ];
            // Without the embedding model the second list is term statistics too: fused
            // by rank, it put pages both lists half-liked above keyword's clear best
            // (a page titled with the query's words) for short queries. Keyword's order
            // leads then, and TF-IDF adds the pages keyword did not find.
            let mut fused = if sem.query_vector.is_some() { fuse(&lists) } else { extend(&lists) };
            let mut engine = format!("fulltext+{}", sem.engine);
            if ctx.config.rerank.on() && rerank::rerank(ctx, ws_id, &parsed, &sem, &mut fused).await? {
                engine.push_str("+rerank");
            }
            let total = fused.len() as i64;
            (engine, hits_of(ctx, ws_id, &fused, req.paging, &parsed).await?, total, sem.pending)
        }
    };
    Ok(SearchResults { query: q, mode: mode.as_str(), engine, items, total, pending_embeddings })
}

/// Reciprocal-rank fusion: each page scores Σ 1 / (k + rank) over the lists it is in.
fn fuse(lists: &[Vec<i64>]) -> Vec<(i64, f64)> {
    let mut scores: std::collections::HashMap<i64, f64> = std::collections::HashMap::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// The first list's pages in its order, then those only later lists have, each scored as
/// reciprocal-rank fusion would score its place in one list.
fn extend(lists: &[Vec<i64>]) -> Vec<(i64, f64)> {
    let mut seen = std::collections::HashSet::new();
    lists
        .iter()
        .flatten()
        .filter(|id| seen.insert(**id))
        .enumerate()
        .map(|(rank, id)| (*id, 1.0 / (RRF_K + rank as f64 + 1.0)))
        .collect()
}

/// The window `paging` of ranked page ids as hits: live pages of the workspace only
/// (a page trashed since the index saw it drops out), snippets from their text.
async fn hits_of(ctx: &Ctx, ws_id: i64, ranked: &[(i64, f64)], paging: Paging, q: &Query) -> Result<Vec<Hit>> {
    let window: Vec<(i64, f64)> =
        ranked.iter().skip(paging.offset as usize).take(paging.limit as usize).copied().collect();
    if window.is_empty() {
        return Ok(vec![]);
    }
    let ids: Vec<i64> = window.iter().map(|(id, _)| *id).collect();
    let rows = super::pages::rows::texts(&mut *ctx.db.pool.acquire().await?, Some(ws_id), &ids).await?;
    let mut by_id: std::collections::HashMap<i64, super::pages::rows::Text> =
        rows.into_iter().filter(|t| t.live()).map(|t| (t.id, t)).collect();
    let marks = passage::Marks::of(q);
    let mut hits = Vec::with_capacity(window.len());
    for (id, score) in window {
        let Some(mut t) = by_id.remove(&id) else { continue };
        let body = super::pages::search_text::search_body(&t.take_markdown()?, &t.image_text);
        hits.push(Hit { slug: t.slug, title: t.title, snippet: passage::best(&body, &marks), score });
    }
    Ok(hits)
}

/// The engine's snippet as answered: CJK put back together, HTML-escaped, matches
/// marked.
fn snippet_html(raw: &str) -> String {
    let text = crate::text::display_form(raw, &[MARK_START, MARK_END]);
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            MARK_START => out.push_str("<mark>"),
            MARK_END => out.push_str("</mark>"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_escaped_and_marked() {
        assert_eq!(
            snippet_html("a <script> \u{E000}run\u{E001} & b 東 \u{E000}京\u{E001} 、 "),
            "a &lt;script&gt; <mark>run</mark> &amp; b 東<mark>京</mark>、"
        );
    }

    #[test]
    fn fusion_rewards_agreement() {
        let fused = fuse(&[vec![1, 2, 3], vec![3, 4, 1]]);
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 3, 2, 4]);
    }

    #[test]
    fn extension_keeps_the_first_lists_order() {
        let extended = extend(&[vec![1, 2, 3], vec![3, 4, 1, 5]]);
        assert_eq!(extended.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert!(extended.windows(2).all(|w| w[0].1 > w[1].1));
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::parse(None).unwrap(), Mode::Keyword);
        assert_eq!(Mode::parse(Some("hybrid")).unwrap(), Mode::Hybrid);
        assert_eq!(Mode::parse(Some("fuzzy")).unwrap_err().code, crate::error::Code::InvalidMode);
    }
}
