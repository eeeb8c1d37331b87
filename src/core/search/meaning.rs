//! The meaning-level ranking behind `semantic` (and half of `hybrid`): cosine of sentence
//! embeddings when `SEMANTIC_SEARCH=1` and the model resolves, else cosine of TF-IDF
//! vectors. The answer says which ran.

use std::collections::HashSet;

use super::query::Query;
use crate::core::Ctx;
use crate::core::semantic;
use crate::error::Result;

pub struct Ranking {
    /// Page ids, best first, with their cosine.
    pub ranked: Vec<(i64, f64)>,
    /// `embedding` or `tfidf`.
    pub engine: &'static str,
    /// The query's embedding, when that is how pages were ranked.
    pub query_vector: Option<Vec<f32>>,
}

/// The engine a meaning-level query would use now.
pub fn engine_name(ctx: &Ctx) -> &'static str {
    if ctx.models.embedding.usable() { "embedding" } else { "tfidf" }
}

/// Pages by similarity to the query's words, best first; only pages with the tag when
/// one is given.
pub async fn rank(ctx: &Ctx, ws_id: i64, q: &Query, tag: Option<&str>) -> Result<Ranking> {
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
        Some(v) if !ix.vectors.is_empty() => Ranking {
            ranked: ix
                .vectors
                .search(&v, |id| ix.tfidf.contains(id))
                .into_iter()
                .map(|(id, s)| (id, f64::from(s)))
                .collect(),
            engine: "embedding",
            query_vector: Some(v),
        },
        _ => Ranking {
            ranked: ix.tfidf.query(&crate::text::terms(&text)).into_iter().map(|(id, s)| (id, f64::from(s))).collect(),
            engine: "tfidf",
            query_vector: None,
        },
    };
    drop(ix);
    if let Some(tag) = tag {
        let tagged: HashSet<i64> =
            sqlx::query_scalar("SELECT page_id FROM page_tags WHERE workspace_id = $1 AND tag = $2")
                .bind(ws_id)
                .bind(tag)
                .fetch_all(&ctx.db.pool)
                .await?
                .into_iter()
                .collect();
        out.ranked.retain(|(id, _)| tagged.contains(id));
    }
    Ok(out)
}
