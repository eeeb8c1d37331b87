//! Ranking quality of one answer against binary judgments, cut at rank k.

use std::collections::HashSet;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scores {
    /// DCG of the ranking (gain 1 for a relevant document, discount log2(rank + 1)) over
    /// that of an ideal ranking, which has min(relevant, k) relevant documents on top.
    pub ndcg: f64,
    /// Relevant documents in the top k over all relevant documents (not capped at k, so
    /// a query with 40 relevant documents reaches at most 0.25 at k = 10).
    pub recall: f64,
    /// 1 / rank of the first relevant document in the top k, 0 when there is none.
    pub rr: f64,
}

pub fn score(ranked: &[u32], relevant: &HashSet<u32>, k: usize) -> Scores {
    if relevant.is_empty() {
        return Scores::default();
    }
    let discount = |i: usize| 1.0 / (i as f64 + 2.0).log2();
    let top = &ranked[..ranked.len().min(k)];
    let hits: Vec<usize> = top.iter().enumerate().filter(|(_, d)| relevant.contains(d)).map(|(i, _)| i).collect();
    let dcg: f64 = hits.iter().map(|&i| discount(i)).sum();
    let ideal: f64 = (0..relevant.len().min(k)).map(discount).sum();
    Scores {
        ndcg: dcg / ideal,
        recall: hits.len() as f64 / relevant.len() as f64,
        rr: hits.first().map_or(0.0, |&i| 1.0 / (i as f64 + 1.0)),
    }
}

/// The mean of each measure over `n` queries; a query missing from `scores` (its
/// request failed) counts as 0, so a failing engine is not flattered.
pub fn mean(scores: &[Scores], n: usize) -> Scores {
    let n = n.max(1) as f64;
    Scores {
        ndcg: scores.iter().map(|s| s.ndcg).sum::<f64>() / n,
        recall: scores.iter().map(|s| s.recall).sum::<f64>() / n,
        rr: scores.iter().map(|s| s.rr).sum::<f64>() / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures() {
        let rel: HashSet<u32> = [1, 2, 3].into();
        let perfect = score(&[1, 2, 3, 9], &rel, 10);
        assert!((perfect.ndcg - 1.0).abs() < 1e-12);
        assert_eq!(perfect.recall, 1.0);
        assert_eq!(perfect.rr, 1.0);
        let s = score(&[9, 8, 2], &rel, 10);
        let ideal = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!((s.ndcg - 0.5 / ideal).abs() < 1e-12);
        assert!((s.recall - 1.0 / 3.0).abs() < 1e-12);
        assert!((s.rr - 1.0 / 3.0).abs() < 1e-12);
        // Past rank k nothing counts.
        assert_eq!(score(&[9, 8, 2], &rel, 2), Scores::default());
        let m = mean(&[perfect], 2);
        assert_eq!(m.recall, 0.5);
    }
}
