//! The reference ranking of /work/shared/relevance/README.md, computed here so the
//! quality table shows it beside Cairn's numbers: plain Okapi BM25 (k1 0.9, b 0.4) over
//! lower-cased alphanumeric tokens, no stemming, no stop words.
//!
//! The idf is Lucene's, ln(1 + (N − df + 0.5) / (df + 0.5)), which is never negative,
//! and each distinct query token counts once. That is what reproduces the README's
//! figures (nDCG@10 0.230, recall@10 0.069 on the `.W` text of the queries); counting
//! a token as often as a long query repeats it would rank much better on CISI.

use std::collections::HashMap;

pub const K1: f64 = 0.9;
pub const B: f64 = 0.4;

/// Lower-cased runs of letters and digits.
pub fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

pub struct Bm25 {
    /// Document ids, in the order the texts were given.
    ids: Vec<u32>,
    lens: Vec<f64>,
    avg_len: f64,
    /// Term → (document index, term frequency).
    postings: HashMap<String, Vec<(usize, f64)>>,
}

impl Bm25 {
    pub fn new<'a>(docs: impl IntoIterator<Item = (u32, &'a str)>) -> Bm25 {
        let mut ids = Vec::new();
        let mut lens = Vec::new();
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        for (i, (id, text)) in docs.into_iter().enumerate() {
            let toks = tokens(text);
            let mut tf: HashMap<String, f64> = HashMap::new();
            for t in &toks {
                *tf.entry(t.clone()).or_default() += 1.0;
            }
            for (t, f) in tf {
                postings.entry(t).or_default().push((i, f));
            }
            ids.push(id);
            lens.push(toks.len() as f64);
        }
        let avg_len = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 { ids, lens, avg_len, postings }
    }

    /// The ids of the best `k` documents for `query`, best first; ties go to the lower id.
    pub fn top(&self, query: &str, k: usize) -> Vec<u32> {
        let n = self.ids.len() as f64;
        let mut scores = vec![0.0f64; self.ids.len()];
        let mut distinct = tokens(query);
        distinct.sort_unstable();
        distinct.dedup();
        for t in distinct {
            let Some(post) = self.postings.get(&t) else { continue };
            let df = post.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(i, tf) in post {
                let norm = K1 * (1.0 - B + B * self.lens[i] / self.avg_len);
                scores[i] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(self.ids[a.0].cmp(&self.ids[b.0])));
        ranked.into_iter().take(k).map(|(i, _)| self.ids[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_rare_terms() {
        assert_eq!(tokens("The DDC's 18th-edition."), ["the", "ddc", "s", "18th", "edition"]);
        let idx = Bm25::new([(1, "library catalog of books"), (2, "the library"), (3, "retrieval of information")]);
        assert_eq!(idx.top("information retrieval", 10), [3]);
        // "library" is in two documents; the shorter one ranks first.
        assert_eq!(idx.top("library", 10), [2, 1]);
        assert!(idx.top("absent", 10).is_empty());
        // A repeated query token counts once.
        assert_eq!(idx.top("library library catalog", 10), idx.top("catalog library", 10));
    }
}
