//! The meaning-level ranking behind `semantic` (and half of `hybrid`): cosine of sentence
//! embeddings when `SEMANTIC_SEARCH=1` and the model resolves, else cosine of TF-IDF
//! vectors. The answer says which ran.

use std::collections::HashSet;

use super::query::Query;
use crate::core::Ctx;
use crate::core::semantic;
use crate::error::Result;

pub(super) struct Ranking {
    /// Page ids, best first, with their cosine.
    pub ranked: Vec<(i64, f64)>,
    /// `embedding` or `tfidf`.
    pub engine: &'static str,
    /// The query's embedding, when that is how pages were ranked.
    pub query_vector: Option<Vec<f32>>,
    /// With embeddings: the live pages not embedded yet (found by TF-IDF meanwhile).
    pub pending: Option<usize>,
}

/// The engine a meaning-level query would use now.
pub(super) fn engine_name(ctx: &Ctx) -> &'static str {
    if ctx.models.embedding.usable() { "embedding" } else { "tfidf" }
}

/// Pages by similarity to the query's words, best first; only pages with the tag when
/// one is given.
pub(super) async fn rank(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>) -> Result<Ranking> {
    let text = q.positive_text();
    let query_vector = match ctx.models.encoder().await {
        Some(encoder) => {
            ctx.models.wake();
            let text = text.clone();
            tokio::task::spawn_blocking(move || encoder.embed(&[&text]))
                .await
                .map_err(|e| anyhow::anyhow!("query embedding task: {e}"))?
                .map_err(|e| tracing::warn!(error = %e, "query embedding failed; using TF-IDF"))
                .ok()
                .and_then(|mut v| v.pop())
        }
        None => None,
    };
    let index = semantic::fresh(ctx, ws_id).await?;
    let ix = index.read().await;
    let mut out = match query_vector {
        // Before the first pages are embedded, TF-IDF answers (and says so).
        Some(v) if !ix.vectors.is_empty() => {
            let embedded: Vec<(i64, f64)> = ix
                .vectors
                .search(&v, |id| ix.tfidf.contains(id))
                .into_iter()
                .map(|(id, s)| (id, f64::from(s)))
                .collect();
            // Pages not embedded yet (right after an import, say) are still found, by
            // their TF-IDF vectors: each goes ahead of the first embedded page that
            // matches the query's words less well than it does.
            let lexical = ix.tfidf.query(&crate::text::terms(&text));
            let ranked = if lexical.iter().any(|(id, _)| !ix.vectors.contains(*id)) {
                with_pending(&embedded, &lexical, |id| ix.vectors.contains(id))
            } else {
                embedded
            };
            let pending = ix.tfidf.len().saturating_sub(ix.vectors.len());
            Ranking { ranked, engine: "embedding", query_vector: Some(v), pending: Some(pending) }
        }
        _ => Ranking {
            ranked: ix.tfidf.query(&crate::text::terms(&text)).into_iter().map(|(id, s)| (id, f64::from(s))).collect(),
            engine: "tfidf",
            query_vector: None,
            pending: None,
        },
    };
    drop(ix);
    if let Some(tag) = tag {
        let tagged: HashSet<i64> = crate::core::pages::rows::tagged(&mut *ctx.db.pool.acquire().await?, ws_id, tag)
            .await?
            .into_iter()
            .collect();
        out.ranked.retain(|(id, _)| tagged.contains(id));
    }
    Ok(out)
}

/// The embedded pages in their order, with the pages not embedded yet (`embedded(id)`
/// false) placed among them by their TF-IDF scores (`lexical`, best first): a waiting page
/// goes ahead of the first embedded page whose own TF-IDF score is lower. Scores are then
/// by rank (`1 / (60 + rank)`, as reciprocal-rank fusion gives), the two scales being
/// incomparable.
fn with_pending(ranked: &[(i64, f64)], lexical: &[(i64, f32)], embedded: impl Fn(i64) -> bool) -> Vec<(i64, f64)> {
    let score: std::collections::HashMap<i64, f32> = lexical.iter().copied().collect();
    let mut waiting = lexical.iter().filter(|(id, _)| !embedded(*id)).peekable();
    let mut out: Vec<i64> = Vec::with_capacity(ranked.len() + lexical.len());
    for (id, _) in ranked {
        let own = score.get(id).copied().unwrap_or(0.0);
        while let Some((w, _)) = waiting.next_if(|(_, s)| *s > own) {
            out.push(*w);
        }
        out.push(*id);
    }
    out.extend(waiting.map(|(id, _)| *id));
    out.into_iter().enumerate().map(|(rank, id)| (id, 1.0 / (super::RRF_K + rank as f64 + 1.0))).collect()
}

#[cfg(test)]
mod tests {
    use super::with_pending;

    #[test]
    fn waiting_pages_go_ahead_of_embedded_pages_that_match_less() {
        // 1 and 2 embedded (1 matching the words well, 2 not at all); 3 and 4 waiting.
        let ranked = [(1, 0.9), (2, 0.8)];
        let lexical = [(1, 0.7_f32), (3, 0.5), (4, 0.01)];
        let out: Vec<i64> = with_pending(&ranked, &lexical, |id| id <= 2).into_iter().map(|(id, _)| id).collect();
        assert_eq!(out, [1, 3, 4, 2]);
        let scores: Vec<f64> = with_pending(&ranked, &lexical, |id| id <= 2).into_iter().map(|(_, s)| s).collect();
        assert!(scores.windows(2).all(|w| w[0] > w[1]));
    }
}
