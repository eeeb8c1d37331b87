//! A workspace's embedding vectors in memory: every passage of every embedded page,
//! searched exhaustively. Exact search is fast enough at wiki scale (10,000 pages of
//! three or four passages is ≈ 40,000 dot products of 384 floats, a few milliseconds)
//! and needs no approximate index to tune or rebuild.

use std::collections::HashMap;

#[derive(Default)]
pub struct VectorIndex {
    dim: usize,
    /// Page id → its passages' vectors, one after another (unit length each).
    pages: HashMap<i64, Vec<f32>>,
    /// Page id → the normalised mean of its passages: the page as a whole.
    centroids: HashMap<i64, Vec<f32>>,
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl VectorIndex {
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    pub fn contains(&self, page: i64) -> bool {
        self.pages.contains_key(&page)
    }

    /// Replaces a page's passages (`vectors` of `dim` floats each).
    pub fn replace(&mut self, page: i64, dim: usize, vectors: Vec<f32>) {
        if dim == 0 || vectors.is_empty() || !vectors.len().is_multiple_of(dim) {
            self.remove(page);
            return;
        }
        if self.dim != dim {
            // Another model's vectors: start over rather than compare apples and pears.
            self.pages.clear();
            self.centroids.clear();
            self.dim = dim;
        }
        let mut mean = vec![0f32; dim];
        for v in vectors.chunks(dim) {
            mean.iter_mut().zip(v).for_each(|(m, x)| *m += x);
        }
        let norm = dot(&mean, &mean).sqrt().max(1e-12);
        mean.iter_mut().for_each(|m| *m /= norm);
        self.centroids.insert(page, mean);
        self.pages.insert(page, vectors);
    }

    pub fn remove(&mut self, page: i64) {
        self.pages.remove(&page);
        self.centroids.remove(&page);
    }

    pub fn clear(&mut self) {
        self.pages.clear();
        self.centroids.clear();
    }

    /// The passage of `page` closest to `query`: (passage index, cosine).
    pub fn best_passage(&self, page: i64, query: &[f32]) -> Option<(usize, f32)> {
        let vectors = self.pages.get(&page)?;
        if query.len() != self.dim {
            return None;
        }
        vectors.chunks(self.dim).map(|v| dot(v, query)).enumerate().max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Pages by their best passage's cosine with `query`, best first; only pages `keep`
    /// accepts and with a positive score.
    pub fn search(&self, query: &[f32], keep: impl Fn(i64) -> bool) -> Vec<(i64, f32)> {
        if query.len() != self.dim {
            return vec![];
        }
        let mut out: Vec<(i64, f32)> = self
            .pages
            .keys()
            .filter(|&&id| keep(id))
            .filter_map(|&id| self.best_passage(id, query).map(|(_, s)| (id, s)))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// Pages most like `page` as a whole (cosine of centroids), best first, without it.
    pub fn similar(&self, page: i64, keep: impl Fn(i64) -> bool) -> Vec<(i64, f32)> {
        let Some(me) = self.centroids.get(&page) else { return vec![] };
        let mut out: Vec<(i64, f32)> = self
            .centroids
            .iter()
            .filter(|(id, _)| **id != page && keep(**id))
            .map(|(id, v)| (*id, dot(me, v)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// Vectors as stored: little-endian f32s.
pub(crate) fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = dot(v, v).sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn pages_rank_by_their_best_passage() {
        let mut ix = VectorIndex::default();
        ix.replace(1, 2, [unit(&[1.0, 0.0]), unit(&[0.0, 1.0])].concat());
        ix.replace(2, 2, unit(&[1.0, 1.0]));
        ix.replace(3, 2, unit(&[-1.0, 0.0]));
        let q = unit(&[0.0, 1.0]);
        assert_eq!(ix.search(&q, |_| true).iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(ix.best_passage(1, &q).unwrap().0, 1);
        assert_eq!(ix.search(&q, |id| id != 1).iter().map(|h| h.0).collect::<Vec<_>>(), [2]);
        assert_eq!(ix.similar(2, |_| true)[0].0, 1);
        ix.remove(1);
        assert_eq!(ix.len(), 2);
        assert_eq!(from_bytes(&to_bytes(&[1.5, -2.0])), [1.5, -2.0]);
    }
}
