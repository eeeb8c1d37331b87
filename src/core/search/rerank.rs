//! Reranking the head of a hybrid list (`RERANK=1`). With a cross-encoder
//! (`RERANK_MODEL_DIR`), the query and each candidate's best passage are read together
//! by the model; without one, each candidate's best passage's embedding similarity to
//! the query (passage-level, where fusion saw whole-page centroids) gives a second order
//! of the head, fused with the first. Without either
//! model the list is left as fused, and the engine does not say `+rerank`.

use std::collections::HashMap;

use super::meaning::Ranking;
use super::query::Query;
use crate::core::Ctx;
use crate::core::semantic::{self, passages::passages};
use crate::error::Result;
use crate::markdown;

/// Candidates reranked: the head of the fused list, where order matters to a reader.
pub(super) const DEPTH: usize = 30;

/// Reorders the head of `fused` in place; answers whether it did.
pub(super) async fn rerank(ctx: &Ctx, ws_id: i64, q: &Query, sem: &Ranking, fused: &mut [(i64, f64)]) -> Result<bool> {
    let depth = DEPTH.min(fused.len());
    if depth == 0 {
        return Ok(false);
    }
    let head: Vec<i64> = fused[..depth].iter().map(|h| h.0).collect();
    let index = semantic::fresh(ctx, ws_id).await?;
    let scores: Vec<f64> = if let Some(cross) = ctx.models.cross_encoder().await {
        let rows = crate::core::pages::rows::texts(&mut *ctx.db.pool.acquire().await?, Some(ws_id), &head).await?;
        let mut by_id: HashMap<i64, (String, String)> = HashMap::new();
        for mut t in rows {
            let markdown = t.take_markdown()?;
            by_id.insert(t.id, (t.title, markdown));
        }
        let ix = index.read().await;
        let texts: Vec<String> = head
            .iter()
            .map(|id| {
                let Some((title, content)) = by_id.get(id) else { return String::new() };
                let mut all = passages(title, &markdown::parse(content).text);
                // The passage the embedding found closest, else the opening.
                let best = sem.query_vector.as_ref().and_then(|v| ix.vectors.best_passage(*id, v)).map_or(0, |b| b.0);
                if best < all.len() { all.swap_remove(best) } else { all.swap_remove(0) }
            })
            .collect();
        drop(ix);
        let query = q.positive_text();
        let scored = tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            cross.score(&query, &refs)
        })
        .await
        .map_err(|e| anyhow::anyhow!("rerank task: {e}"))?;
        match scored {
            // A logit → (0, 1).
            Ok(s) => s.into_iter().map(|x| 1.0 / (1.0 + (-f64::from(x)).exp())).collect(),
            Err(e) => {
                tracing::warn!(error = %e, "reranking failed; results as fused");
                return Ok(false);
            }
        }
    } else if let Some(v) = &sem.query_vector {
        let ix = index.read().await;
        // A candidate not embedded yet ranks below those that are.
        let passage: Vec<f64> =
            head.iter().map(|id| ix.vectors.best_passage(*id, v).map_or(-1.0, |b| f64::from(b.1))).collect();
        with_fused_order(&passage)
    } else {
        return Ok(false);
    };
    let mut reranked: Vec<(i64, f64, usize)> =
        head.iter().zip(scores).enumerate().map(|(rank, (id, s))| (*id, s, rank)).collect();
    reranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    // Scores of the head in (1, 2]: above every fused score of the tail (< 1).
    for (slot, (id, s, _)) in fused.iter_mut().zip(reranked) {
        *slot = (id, 1.0 + (s + 1.0) / 2.0 * 0.999 + 0.0005);
    }
    Ok(true)
}

/// Scores in (0, 1] for a head whose `passage` scores come from the embedding model, in
/// fused order. The same model ranked the semantic list, so it is a weak judge on its
/// own: ordering by its passage score alone would throw away the keyword evidence the
/// fusion weighed. Its passage order is fused with the fused order (RRF again), so a
/// page whose best passage matches climbs without erasing the rest.
fn with_fused_order(passage: &[f64]) -> Vec<f64> {
    let mut by_passage: Vec<usize> = (0..passage.len()).collect();
    by_passage.sort_by(|&a, &b| passage[b].total_cmp(&passage[a]).then(a.cmp(&b)));
    let mut scores = vec![0.0; passage.len()];
    for (rank, &i) in by_passage.iter().enumerate() {
        let rrf = 1.0 / (super::RRF_K + rank as f64 + 1.0) + 1.0 / (super::RRF_K + i as f64 + 1.0);
        // The best possible is 2 / (k + 1): scaled onto the cross-encoder's (0, 1].
        scores[i] = rrf * (super::RRF_K + 1.0) / 2.0;
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::with_fused_order;

    fn order(scores: &[f64]) -> Vec<usize> {
        let mut o: Vec<usize> = (0..scores.len()).collect();
        o.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        o
    }

    #[test]
    fn a_matching_passage_climbs_without_erasing_the_fused_order() {
        // Fused order 0..5; the passage scores put 3 first, then 0.
        let s = with_fused_order(&[0.8, 0.1, 0.2, 0.9, 0.3]);
        assert!(s.iter().all(|&x| x > 0.0 && x <= 1.0), "{s:?}");
        assert_eq!(order(&s), [0, 3, 1, 2, 4]);
        // Agreement of both orders is the best possible score.
        assert_eq!(with_fused_order(&[0.9, 0.5])[0], 1.0);
    }
}
