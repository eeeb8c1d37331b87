//! Topical clusters: spherical k-means over the pages' L2-normalised TF-IDF vectors.
//!
//! Deterministic (the same wiki gives the same clusters): seeds are chosen farthest-first
//! from the page with the lowest id, then a fixed number of assignment/update rounds.
//! Each cluster is named by the words that weigh most in its centre.

use std::collections::HashMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::core::semantic::tfidf::TfIdf;

const ROUNDS: usize = 8;
const MAX_CLUSTERS: usize = 12;
/// Pages named per cluster (the ones nearest its centre).
const PAGES_SHOWN: usize = 10;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Cluster {
    /// The words that weigh most in the cluster, joined by ", ".
    pub label: String,
    /// Pages in the cluster.
    pub size: usize,
    /// Slugs of the pages nearest its centre (at most 10), nearest first.
    pub pages: Vec<String>,
}

type Sparse = Vec<(u32, f32)>;

fn dot(v: &Sparse, centre: &HashMap<u32, f32>) -> f32 {
    v.iter().map(|(t, w)| w * centre.get(t).copied().unwrap_or(0.0)).sum()
}

/// Clusters of the index's pages; `slug_of` names a page id (None: not live, left out).
pub(super) fn clusters(tfidf: &TfIdf, slug_of: impl Fn(i64) -> Option<String>) -> Vec<Cluster> {
    let mut docs: Vec<(i64, Sparse)> = tfidf.vectors();
    docs.retain(|(id, v)| !v.is_empty() && slug_of(*id).is_some());
    docs.sort_by_key(|(id, _)| *id);
    let k = ((docs.len() as f64 / 2.0).sqrt().round() as usize).clamp(1, MAX_CLUSTERS);
    if docs.len() < 4 {
        return vec![];
    }
    let to_map = |v: &Sparse| -> HashMap<u32, f32> { v.iter().copied().collect() };
    // Farthest-first seeds: each next seed is the page least like every seed so far.
    let mut centres: Vec<HashMap<u32, f32>> = vec![to_map(&docs[0].1)];
    let mut best_sim: Vec<f32> = docs.iter().map(|(_, v)| dot(v, &centres[0])).collect();
    while centres.len() < k {
        let (far, _) = best_sim.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).expect("docs");
        let seed = to_map(&docs[far].1);
        for (i, (_, v)) in docs.iter().enumerate() {
            best_sim[i] = best_sim[i].max(dot(v, &seed));
        }
        centres.push(seed);
    }
    let mut assign = vec![0usize; docs.len()];
    for _ in 0..ROUNDS {
        for (i, (_, v)) in docs.iter().enumerate() {
            assign[i] = (0..centres.len())
                .max_by(|&a, &b| dot(v, &centres[a]).total_cmp(&dot(v, &centres[b])).then(b.cmp(&a)))
                .expect("k ≥ 1");
        }
        let mut sums: Vec<HashMap<u32, f32>> = vec![HashMap::new(); centres.len()];
        for (i, (_, v)) in docs.iter().enumerate() {
            for (t, w) in v {
                *sums[assign[i]].entry(*t).or_default() += w;
            }
        }
        for (c, sum) in sums.into_iter().enumerate() {
            let norm = sum.values().map(|w| w * w).sum::<f32>().sqrt();
            if norm > 0.0 {
                centres[c] = sum.into_iter().map(|(t, w)| (t, w / norm)).collect();
            }
        }
    }
    let mut out: Vec<Cluster> = (0..centres.len())
        .filter_map(|c| {
            let mut members: Vec<(f32, i64)> = docs
                .iter()
                .enumerate()
                .filter(|(i, _)| assign[*i] == c)
                .map(|(_, (id, v))| (dot(v, &centres[c]), *id))
                .collect();
            if members.len() < 2 {
                return None;
            }
            members.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut top: Vec<(&u32, &f32)> = centres[c].iter().collect();
            top.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
            let label = top.iter().take(3).map(|(t, _)| tfidf.surface(**t)).collect::<Vec<_>>().join(", ");
            Some(Cluster {
                label,
                size: members.len(),
                pages: members.iter().take(PAGES_SHOWN).filter_map(|(_, id)| slug_of(*id)).collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.label.cmp(&b.label)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_on_one_topic_cluster_together() {
        let mut ix = TfIdf::default();
        let pairs =
            |s: &str| -> Vec<(String, String)> { s.split_whitespace().map(|w| (w.to_owned(), w.to_owned())).collect() };
        let topics = [
            "kubernetes pod container node",
            "kubernetes container deploy pod",
            "pod node kubernetes scheduler",
            "soup recipe onion garlic",
            "garlic onion soup bread",
            "recipe bread soup oven",
            "container kubernetes node cluster",
            "onion recipe garlic pepper",
        ];
        for (i, t) in topics.iter().enumerate() {
            ix.upsert(i as i64, &[], &pairs(t));
        }
        let found = clusters(&ix, |id| Some(format!("p{id}")));
        assert_eq!(found.len(), 2, "{found:?}");
        let mut groups: Vec<Vec<String>> = found
            .iter()
            .map(|c| {
                let mut p = c.pages.clone();
                p.sort();
                p
            })
            .collect();
        groups.sort();
        assert_eq!(groups, [vec!["p0", "p1", "p2", "p6"], vec!["p3", "p4", "p5", "p7"]]);
        assert!(found.iter().any(|c| c.label.contains("kubernetes")), "{found:?}");
    }
}
