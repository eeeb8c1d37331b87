//! Local intelligence (docs/api.md, "Intelligence"): link and tag suggestions, extractive summaries,
//! workspace insights and the wikilink graph. Everything is computed in the process from
//! the workspace's own pages; nothing calls a third party. Every answer says in `mode`
//! how it was computed. Trashed pages take part in none of it.

mod clusters;
pub(crate) mod graph;
pub(crate) mod suggest;
pub(crate) mod summary;

use serde::Serialize;
use utoipa::ToSchema;

/// How an intelligence answer was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Term statistics (TF-IDF) of the workspace's pages.
    Tfidf,
    /// Sentence embeddings of a local model.
    Embedding,
}

pub(crate) use graph::{Graph, Insights, graph, insights};
pub(crate) use suggest::{LinkSuggestions, TagSuggestions, suggest_links, suggest_tags};
pub(crate) use summary::{Sentences, Summary, summary};

use crate::core::{Ctx, semantic};
use crate::error::Result;

/// The least TF-IDF cosine that makes two pages similar. Pages that share a word or two in
/// passing — a deploy page and sprint retrospectives that mention a deploy — score about
/// 0.1; pages about the same thing score well above 0.3.
const TFIDF_FLOOR: f32 = 0.15;

/// Pages like `page`, best first, each with its similarity, and how that was computed:
/// by sentence embeddings when the page has vectors, else by TF-IDF. Below `floor` (per
/// mode: cosines of embeddings run higher than those of sparse term vectors) a page is
/// not similar.
async fn similar_pages(ctx: &Ctx, ws_id: i64, page: i64) -> Result<(Vec<(i64, f32)>, Mode)> {
    ctx.models.wake();
    let index = semantic::fresh(ctx, ws_id).await?;
    let ix = index.read().await;
    let (mut similar, mode, floor) = if ix.vectors.contains(page) {
        (ix.vectors.similar(page, |id| ix.tfidf.contains(id)), Mode::Embedding, 0.3)
    } else {
        (ix.tfidf.similar(page), Mode::Tfidf, TFIDF_FLOOR)
    };
    similar.retain(|(_, s)| *s >= floor);
    Ok((similar, mode))
}
