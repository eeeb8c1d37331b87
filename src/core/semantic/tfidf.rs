//! Term statistics of one workspace: TF-IDF vectors compared by cosine similarity.
//!
//! A document's weight for a term is `(1 + ln tf) · idf`, `idf = ln((1 + N) / (1 + df)) + 1`.
//! Documents keep their term frequencies; weights are computed with the current idf at
//! query time, so a change of the collection never leaves stale weights behind. Only a
//! document's norm is cached: it is recomputed for every document when the collection
//! has grown or shrunk by a tenth since the last time, and for a changed document at
//! once — between those, norms drift by less than the change of N allows.
//!
//! Slots are never reused: a removed or replaced document leaves a dead slot whose
//! postings are skipped, and the postings are compacted when dead slots pile up.

use std::collections::HashMap;

/// Terms of a document used as a query for "pages like this one".
const SIMILAR_QUERY_TERMS: usize = 64;

struct Doc {
    page_id: i64,
    /// (term id, 1 + ln tf)
    terms: Vec<(u32, f32)>,
    norm: f32,
}

#[derive(Default)]
pub struct TfIdf {
    vocab: HashMap<String, u32>,
    words: Vec<String>,
    /// A word each term was read from (the first seen), to show it.
    surfaces: Vec<String>,
    df: Vec<u32>,
    postings: Vec<Vec<(u32, f32)>>,
    docs: Vec<Option<Doc>>,
    slot_of: HashMap<i64, u32>,
    dead: usize,
    /// Live documents when the norms were last all computed.
    norms_at: usize,
}

impl TfIdf {
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    pub fn contains(&self, page_id: i64) -> bool {
        self.slot_of.contains_key(&page_id)
    }

    fn idf_of(&self, term: u32) -> f32 {
        let n = self.slot_of.len() as f32;
        ((1.0 + n) / (1.0 + self.df[term as usize] as f32)).ln() + 1.0
    }

    /// The idf of a term, or None when no document holds it.
    pub fn idf(&self, term: &str) -> Option<f32> {
        let id = *self.vocab.get(term)?;
        (self.df[id as usize] > 0).then(|| self.idf_of(id))
    }

    fn norm_of(&self, terms: &[(u32, f32)]) -> f32 {
        terms.iter().map(|&(t, w)| (w * self.idf_of(t)).powi(2)).sum::<f32>().sqrt()
    }

    /// Counts terms into (term id, 1 + ln tf), creating ids for new terms.
    fn weigh(&mut self, terms: &[(String, String)]) -> Vec<(u32, f32)> {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for (t, word) in terms {
            let id = match self.vocab.get(t) {
                Some(&id) => id,
                None => {
                    let id = self.words.len() as u32;
                    self.vocab.insert(t.clone(), id);
                    self.words.push(t.clone());
                    self.surfaces.push(word.clone());
                    self.df.push(0);
                    self.postings.push(Vec::new());
                    id
                }
            };
            *counts.entry(id).or_default() += 1;
        }
        let mut out: Vec<(u32, f32)> = counts.into_iter().map(|(t, c)| (t, 1.0 + (c as f32).ln())).collect();
        out.sort_unstable_by_key(|&(t, _)| t);
        out
    }

    /// Adds or replaces a document: its (term, word) pairs.
    pub fn upsert(&mut self, page_id: i64, terms: &[(String, String)]) {
        self.remove(page_id);
        let weighted = self.weigh(terms);
        let slot = self.docs.len() as u32;
        for &(t, w) in &weighted {
            self.df[t as usize] += 1;
            self.postings[t as usize].push((slot, w));
        }
        self.slot_of.insert(page_id, slot);
        let norm = self.norm_of(&weighted);
        self.docs.push(Some(Doc { page_id, terms: weighted, norm }));
        self.maintain();
    }

    pub fn remove(&mut self, page_id: i64) {
        let Some(slot) = self.slot_of.remove(&page_id) else { return };
        if let Some(doc) = self.docs[slot as usize].take() {
            for (t, _) in doc.terms {
                self.df[t as usize] -= 1;
            }
        }
        self.dead += 1;
        self.maintain();
    }

    /// Compacts postings when dead slots pile up; renormalises when N moved by a tenth.
    fn maintain(&mut self) {
        let live = self.slot_of.len();
        if self.dead > 256 && self.dead > live / 2 {
            let docs: Vec<Doc> = self.docs.drain(..).flatten().collect();
            self.postings.iter_mut().for_each(Vec::clear);
            self.slot_of.clear();
            for (slot, doc) in docs.into_iter().enumerate() {
                for &(t, w) in &doc.terms {
                    self.postings[t as usize].push((slot as u32, w));
                }
                self.slot_of.insert(doc.page_id, slot as u32);
                self.docs.push(Some(doc));
            }
            self.dead = 0;
        }
        if live.abs_diff(self.norms_at) * 10 > self.norms_at.max(10) {
            self.renormalise();
        }
    }

    fn renormalise(&mut self) {
        let norms: Vec<Option<f32>> = self.docs.iter().map(|d| d.as_ref().map(|d| self.norm_of(&d.terms))).collect();
        for (doc, norm) in self.docs.iter_mut().zip(norms) {
            if let (Some(doc), Some(norm)) = (doc.as_mut(), norm) {
                doc.norm = norm;
            }
        }
        self.norms_at = self.slot_of.len();
    }

    /// Cosine similarity of the query's terms against every document; answers those
    /// above zero, best first (ties by page id).
    pub fn query(&self, terms: &[String]) -> Vec<(i64, f32)> {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for t in terms {
            if let Some(&id) = self.vocab.get(t)
                && self.df[id as usize] > 0
            {
                *counts.entry(id).or_default() += 1;
            }
        }
        let weighted: Vec<(u32, f32)> = counts.into_iter().map(|(t, c)| (t, 1.0 + (c as f32).ln())).collect();
        self.score(&weighted, None)
    }

    /// The documents most like `page_id`, best first, without itself.
    pub fn similar(&self, page_id: i64) -> Vec<(i64, f32)> {
        let Some(&slot) = self.slot_of.get(&page_id) else { return vec![] };
        let Some(doc) = &self.docs[slot as usize] else { return vec![] };
        let mut terms = doc.terms.clone();
        // Its most telling terms stand for it: enough for the ranking, bounded in cost.
        terms.sort_by(|a, b| (b.1 * self.idf_of(b.0)).total_cmp(&(a.1 * self.idf_of(a.0))));
        terms.truncate(SIMILAR_QUERY_TERMS);
        self.score(&terms, Some(slot))
    }

    fn score(&self, query: &[(u32, f32)], skip: Option<u32>) -> Vec<(i64, f32)> {
        let qnorm = self.norm_of(query);
        if qnorm == 0.0 {
            return vec![];
        }
        let mut acc = vec![0f32; self.docs.len()];
        for &(t, qw) in query {
            let idf = self.idf_of(t);
            let q = qw * idf * idf;
            for &(slot, dw) in &self.postings[t as usize] {
                acc[slot as usize] += q * dw;
            }
        }
        let mut out: Vec<(i64, f32)> = acc
            .into_iter()
            .enumerate()
            .filter(|&(slot, s)| s > 0.0 && Some(slot as u32) != skip)
            .filter_map(|(slot, s)| {
                let doc = self.docs[slot].as_ref()?;
                Some((doc.page_id, s / (qnorm * doc.norm.max(f32::EPSILON))))
            })
            .collect();
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// A document's terms by weight, heaviest first, each shown by a word it was read from.
    pub fn top_terms(&self, page_id: i64, n: usize) -> Vec<(String, f32)> {
        let Some(doc) = self.slot_of.get(&page_id).and_then(|&s| self.docs[s as usize].as_ref()) else {
            return vec![];
        };
        let mut terms: Vec<(String, f32)> = doc
            .terms
            .iter()
            .map(|&(t, w)| (self.surfaces[t as usize].clone(), w * self.idf_of(t) / doc.norm))
            .collect();
        terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        terms.truncate(n);
        terms
    }

    /// Every live document's sparse vector (term id, weight), L2-normalised — for
    /// clustering.
    pub fn vectors(&self) -> Vec<(i64, Vec<(u32, f32)>)> {
        self.docs
            .iter()
            .flatten()
            .map(|d| {
                let v = d.terms.iter().map(|&(t, w)| (t, w * self.idf_of(t) / d.norm.max(f32::EPSILON))).collect();
                (d.page_id, v)
            })
            .collect()
    }

    /// A word the term was read from.
    pub fn surface(&self, term: u32) -> &str {
        &self.surfaces[term as usize]
    }

    /// A word the term was read from, by the term.
    pub fn surface_of(&self, term: &str) -> Option<&str> {
        self.vocab.get(term).map(|&id| self.surface(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn pairs(s: &str) -> Vec<(String, String)> {
        s.split_whitespace().map(|w| (w.to_owned(), w.to_owned())).collect()
    }

    #[test]
    fn ranks_by_cosine_and_forgets_removed_documents() {
        let mut ix = TfIdf::default();
        ix.upsert(1, &pairs("rust borrow checker lifetimes"));
        ix.upsert(2, &pairs("rust cargo build"));
        ix.upsert(3, &pairs("lunch canteen menu"));
        let hits = ix.query(&terms("borrow rust"));
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
        assert!(hits[0].1 > hits[1].1 && hits[0].1 <= 1.0 + 1e-6);
        ix.remove(1);
        assert_eq!(ix.query(&terms("borrow")), []);
        ix.upsert(2, &pairs("lunch menu"));
        assert_eq!(ix.query(&terms("cargo")), []);
        assert_eq!(ix.query(&terms("menu")).iter().map(|h| h.0).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn identical_documents_are_most_similar_and_compaction_keeps_answers() {
        let mut ix = TfIdf::default();
        for i in 0..600 {
            ix.upsert(i, &pairs(&format!("common word{} topic{}", i, i % 7)));
        }
        ix.upsert(10_000, &pairs("common word5 topic5"));
        let similar = ix.similar(10_000);
        assert_eq!(similar[0].0, 5);
        // Norms of older documents drift with N until the next renormalisation.
        assert!(similar[0].1 > 0.9 && similar[1].1 < 0.5, "{:?}", &similar[..3]);
        for i in 0..500 {
            ix.remove(i);
        }
        assert!(ix.dead < 300, "compacted");
        assert_eq!(ix.query(&terms("word550"))[0].0, 550);
        assert_eq!(ix.top_terms(550, 1)[0].0, "word550");
    }
}
