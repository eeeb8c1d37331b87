//! Term statistics of one workspace: TF-IDF vectors compared by cosine similarity, and
//! BM25 scores for keyword search.
//!
//! A document's weight for a term is `(1 + ln tf) · idf`, `idf = ln((1 + N) / (1 + df)) + 1`,
//! where the title's words count twice. Documents keep their term counts (title and body
//! apart); weights are computed with the current idf at query time, so a change of the
//! collection never leaves stale weights behind. Only a document's norm is cached: it is
//! recomputed for every document when the collection has grown or shrunk by a tenth
//! since the last time, and for a changed document at once — between those, norms drift
//! by less than the change of N allows.
//!
//! Slots are never reused: a removed or replaced document leaves a dead slot whose
//! postings are skipped, and the postings are compacted when dead slots pile up.

use std::collections::HashMap;
use std::sync::LazyLock;

/// Terms of a document used as a query for "pages like this one".
const SIMILAR_QUERY_TERMS: usize = 64;

/// BM25's parameters, as FTS5's `bm25()` has them.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;
/// A title match weighs as much as this many body matches (the weight keyword search
/// gives the title column on both engines).
const TITLE_WEIGHT: f64 = 10.0;

/// One term's counts in one document: the term (in a document's list) or the document's
/// slot (in a term's postings), then the counts in the title and in the body.
#[derive(Clone, Copy)]
struct Counts {
    id: u32,
    title: u16,
    body: u16,
}

impl Counts {
    /// `1 + ln tf`, the title's words counted twice.
    fn weight(self) -> f32 {
        static LN: LazyLock<Vec<f32>> =
            LazyLock::new(|| (0..1024).map(|n: u32| if n == 0 { 0.0 } else { 1.0 + (n as f32).ln() }).collect());
        let tf = 2 * u32::from(self.title) + u32::from(self.body);
        LN.get(tf as usize).copied().unwrap_or_else(|| 1.0 + (tf as f32).ln())
    }
}

struct Doc {
    page_id: i64,
    /// Sorted by term id.
    terms: Vec<Counts>,
    /// Terms in the title and body together (BM25's document length).
    len: u32,
    norm: f32,
}

#[derive(Default)]
pub struct TfIdf {
    vocab: HashMap<String, u32>,
    words: Vec<String>,
    /// A word each term was read from (the first seen), to show it.
    surfaces: Vec<String>,
    df: Vec<u32>,
    postings: Vec<Vec<Counts>>,
    docs: Vec<Option<Doc>>,
    slot_of: HashMap<i64, u32>,
    /// Ids of terms no live document holds any more, given to the next new terms: the
    /// vocabulary holds what the live pages say, not every word a page ever said (a long
    /// run of edits and deletes would otherwise grow it without end).
    free: Vec<u32>,
    dead: usize,
    /// Live documents when the norms were last all computed.
    norms_at: usize,
    /// Sum of the live documents' lengths.
    total_len: u64,
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

    fn norm_of(&self, terms: impl IntoIterator<Item = (u32, f32)>) -> f32 {
        terms.into_iter().map(|(t, w)| (w * self.idf_of(t)).powi(2)).sum::<f32>().sqrt()
    }

    /// (term id, weight) of a document's terms.
    fn weights(terms: &[Counts]) -> impl Iterator<Item = (u32, f32)> + '_ {
        terms.iter().map(|c| (c.id, c.weight()))
    }

    /// The id of a term, created when new.
    fn intern(&mut self, term: &str, word: &str) -> u32 {
        if let Some(&id) = self.vocab.get(term) {
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.words[id as usize] = term.to_owned();
                self.surfaces[id as usize] = word.to_owned();
                id
            }
            None => {
                self.words.push(term.to_owned());
                self.surfaces.push(word.to_owned());
                self.df.push(0);
                self.postings.push(Vec::new());
                (self.words.len() - 1) as u32
            }
        };
        self.vocab.insert(term.to_owned(), id);
        id
    }

    /// Forgets a term no live document holds: its id goes to the next new term.
    fn release(&mut self, id: u32) {
        let i = id as usize;
        self.vocab.remove(&self.words[i]);
        self.words[i] = String::new();
        self.surfaces[i] = String::new();
        // Only entries of slots whose documents are gone: the new term starts empty.
        self.postings[i] = Vec::new();
        self.free.push(id);
    }

    /// Counts the title's and the body's terms, creating ids for new terms.
    fn count(&mut self, title: &[(String, String)], body: &[(String, String)]) -> Vec<Counts> {
        let mut counts: HashMap<u32, (u16, u16)> = HashMap::new();
        for (t, word) in title {
            let c = counts.entry(self.intern(t, word)).or_default();
            c.0 = c.0.saturating_add(1);
        }
        for (t, word) in body {
            let c = counts.entry(self.intern(t, word)).or_default();
            c.1 = c.1.saturating_add(1);
        }
        let mut out: Vec<Counts> = counts.into_iter().map(|(id, (title, body))| Counts { id, title, body }).collect();
        out.sort_unstable_by_key(|c| c.id);
        out
    }

    /// Adds or replaces a document: the (term, word) pairs of its title and of its body.
    pub fn upsert(&mut self, page_id: i64, title: &[(String, String)], body: &[(String, String)]) {
        self.remove(page_id);
        let terms = self.count(title, body);
        let slot = self.docs.len() as u32;
        for c in &terms {
            self.df[c.id as usize] += 1;
            self.postings[c.id as usize].push(Counts { id: slot, ..*c });
        }
        self.slot_of.insert(page_id, slot);
        let norm = self.norm_of(Self::weights(&terms));
        let len = (title.len() + body.len()).min(u32::MAX as usize) as u32;
        self.total_len += u64::from(len);
        self.docs.push(Some(Doc { page_id, terms, len, norm }));
        self.maintain();
    }

    pub fn remove(&mut self, page_id: i64) {
        let Some(slot) = self.slot_of.remove(&page_id) else { return };
        if let Some(doc) = self.docs[slot as usize].take() {
            for c in doc.terms {
                self.df[c.id as usize] -= 1;
                if self.df[c.id as usize] == 0 {
                    self.release(c.id);
                }
            }
            self.total_len -= u64::from(doc.len);
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
                for c in &doc.terms {
                    self.postings[c.id as usize].push(Counts { id: slot as u32, ..*c });
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
        let norms: Vec<Option<f32>> =
            self.docs.iter().map(|d| d.as_ref().map(|d| self.norm_of(Self::weights(&d.terms)))).collect();
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
        let mut terms: Vec<(u32, f32)> = Self::weights(&doc.terms).collect();
        // Its most telling terms stand for it: enough for the ranking, bounded in cost.
        terms.sort_by(|a, b| (b.1 * self.idf_of(b.0)).total_cmp(&(a.1 * self.idf_of(a.0))));
        terms.truncate(SIMILAR_QUERY_TERMS);
        self.score(&terms, Some(slot))
    }

    fn score(&self, query: &[(u32, f32)], skip: Option<u32>) -> Vec<(i64, f32)> {
        let qnorm = self.norm_of(query.iter().copied());
        if qnorm == 0.0 {
            return vec![];
        }
        let mut acc = vec![0f32; self.docs.len()];
        for &(t, qw) in query {
            let idf = self.idf_of(t);
            let q = qw * idf * idf;
            for p in &self.postings[t as usize] {
                acc[p.id as usize] += q * p.weight();
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

    /// The terms a keyword query word covers here: its own, or — for a word being typed —
    /// every term that begins with it or with its stem. Empty for a word no document holds
    /// (and for a stop word, which the index leaves out).
    pub fn keyword_terms(&self, word: &str, prefix: bool) -> Vec<u32> {
        if !prefix {
            return crate::text::term_of(word).and_then(|t| self.vocab.get(&t).copied()).into_iter().collect();
        }
        let stem = crate::text::stem(word);
        // A scan of the vocabulary: a few thousand terms in most wikis, well under a
        // millisecond; the order of ids does not matter.
        self.vocab.iter().filter(|(t, _)| t.starts_with(word) || t.starts_with(&stem)).map(|(_, &id)| id).collect()
    }

    /// BM25 scores of the documents `matched` (page ids the database's full-text index
    /// found) for a query of words, each given as the terms it covers
    /// ([`TfIdf::keyword_terms`]): the best `keep`, best first (ties by page id), and how
    /// many were scored. Matches this index does not hold (pages of another workspace,
    /// or trashed) are left out. Computed as FTS5's `bm25()` computes them: per query
    /// word, tf is the count of its terms with a title match weighing [`TITLE_WEIGHT`],
    /// `idf = ln((N − n + 0.5) / (n + 0.5))` (at least 1e-6), and the length
    /// normalisation uses the document's terms against the average — over this
    /// workspace's live documents.
    pub fn bm25(&self, words: &[Vec<u32>], matched: &[i64], keep: usize) -> (Vec<(i64, f64)>, usize) {
        // NaN: not matched, so not scored.
        let mut score = vec![f64::NAN; self.docs.len()];
        let mut slots = Vec::with_capacity(matched.len());
        for id in matched {
            if let Some(&slot) = self.slot_of.get(id) {
                score[slot as usize] = 0.0;
                slots.push((*id, slot));
            }
        }
        let n = self.slot_of.len() as f64;
        let avgdl = (self.total_len as f64 / n.max(1.0)).max(1.0);
        let mut tf = vec![0f64; self.docs.len()];
        let mut holding: Vec<usize> = Vec::new();
        for terms in words {
            for &t in terms {
                for p in &self.postings[t as usize] {
                    let slot = p.id as usize;
                    if self.docs[slot].is_none() {
                        continue;
                    }
                    if tf[slot] == 0.0 {
                        holding.push(slot);
                    }
                    tf[slot] += TITLE_WEIGHT * f64::from(p.title) + f64::from(p.body);
                }
            }
            let hits = holding.len() as f64;
            let idf = ((n - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
            for &slot in &holding {
                if !score[slot].is_nan()
                    && let Some(doc) = &self.docs[slot]
                {
                    let f = tf[slot];
                    let norm = 1.0 - BM25_B + BM25_B * f64::from(doc.len) / avgdl;
                    score[slot] += idf * f * (BM25_K1 + 1.0) / (f + BM25_K1 * norm);
                }
                tf[slot] = 0.0;
            }
            holding.clear();
        }
        let total = slots.len();
        let mut out: Vec<(i64, f64)> = slots.into_iter().map(|(id, slot)| (id, score[slot as usize])).collect();
        let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        // Only the best `keep` are ordered: a query matching most of a large wiki shows ten.
        if keep < out.len() {
            out.select_nth_unstable_by(keep, order);
            out.truncate(keep);
        }
        out.sort_unstable_by(order);
        (out, total)
    }

    /// A document's terms by weight, heaviest first, each shown by a word it was read from.
    pub fn top_terms(&self, page_id: i64, n: usize) -> Vec<(String, f32)> {
        let Some(doc) = self.slot_of.get(&page_id).and_then(|&s| self.docs[s as usize].as_ref()) else {
            return vec![];
        };
        let mut terms: Vec<(String, f32)> = doc
            .terms
            .iter()
            .map(|c| (self.surfaces[c.id as usize].clone(), c.weight() * self.idf_of(c.id) / doc.norm))
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
                let v =
                    d.terms.iter().map(|c| (c.id, c.weight() * self.idf_of(c.id) / d.norm.max(f32::EPSILON))).collect();
                (d.page_id, v)
            })
            .collect()
    }

    /// A word the term was read from.
    pub fn surface(&self, term: u32) -> &str {
        &self.surfaces[term as usize]
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
        ix.upsert(1, &[], &pairs("rust borrow checker lifetimes"));
        ix.upsert(2, &[], &pairs("rust cargo build"));
        ix.upsert(3, &[], &pairs("lunch canteen menu"));
        let hits = ix.query(&terms("borrow rust"));
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
        assert!(hits[0].1 > hits[1].1 && hits[0].1 <= 1.0 + 1e-6);
        ix.remove(1);
        assert_eq!(ix.query(&terms("borrow")), []);
        ix.upsert(2, &[], &pairs("lunch menu"));
        assert_eq!(ix.query(&terms("cargo")), []);
        assert_eq!(ix.query(&terms("menu")).iter().map(|h| h.0).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn the_vocabulary_holds_only_what_live_pages_say() {
        let mut ix = TfIdf::default();
        ix.upsert(1, &[], &pairs("steady words here"));
        // A page edited ten thousand times, each time with a word never seen before.
        for i in 0..10_000 {
            ix.upsert(2, &[], &pairs(&format!("churn unique{i}")));
        }
        assert_eq!(ix.vocab.len(), 5, "steady words here churn unique9999");
        assert!(ix.words.len() <= 6 && ix.postings.len() <= 6, "{} ids", ix.words.len());
        assert_eq!(ix.query(&terms("unique9999"))[0].0, 2);
        assert!(ix.query(&terms("unique5")).is_empty());
        let surface_of = |t: &str| ix.vocab.get(t).map(|&id| ix.surface(id));
        assert_eq!((surface_of("churn"), surface_of("unique5")), (Some("churn"), None));
        assert_eq!(ix.query(&terms("steady"))[0].0, 1);
    }

    #[test]
    fn identical_documents_are_most_similar_and_compaction_keeps_answers() {
        let mut ix = TfIdf::default();
        for i in 0..600 {
            ix.upsert(i, &[], &pairs(&format!("common word{} topic{}", i, i % 7)));
        }
        ix.upsert(10_000, &[], &pairs("common word5 topic5"));
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

    #[test]
    fn bm25_scores_only_the_matched_weighs_the_title_and_reads_prefixes() {
        let mut ix = TfIdf::default();
        let t = |s: &str| crate::text::term_pairs(s);
        ix.upsert(1, &t("Deployment notes"), &t("how we ship the server"));
        ix.upsert(2, &t("Kitchen"), &t("the deployment of the new oven, a deployment at last"));
        ix.upsert(3, &t("Garden"), &t("nothing about shipping here"));
        ix.upsert(4, &t("Server room"), &t("deploying the rack"));
        let deploy = ix.keyword_terms("deployment", false);
        assert_eq!(deploy.len(), 1);
        // A title match outweighs two body matches; pages not matched, and matches the
        // index does not hold (another workspace's), stay out.
        let (hits, total) = ix.bm25(std::slice::from_ref(&deploy), &[2, 1, 99], 10);
        assert_eq!((hits.iter().map(|h| h.0).collect::<Vec<_>>(), total), (vec![1, 2], 2));
        assert!(hits[0].1 > hits[1].1 && hits[1].1 > 0.0, "{hits:?}");
        // Only the best `keep` come back, in order; the total counts them all.
        assert_eq!(ix.bm25(std::slice::from_ref(&deploy), &[2, 1, 3, 4], 1), (vec![hits[0]], 4));
        // A word being typed covers every term it begins: "deplo" is "deploy" here.
        let typed = ix.keyword_terms("deplo", true);
        assert_eq!(typed, deploy);
        assert_eq!(ix.bm25(&[typed], &[4, 2], 10).0[0].0, 2);
        // Stop words and unknown words cover nothing, and score nothing.
        assert!(ix.keyword_terms("the", false).is_empty() && ix.keyword_terms("zebra", false).is_empty());
        assert_eq!(ix.bm25(&[vec![]], &[3], 10), (vec![(3, 0.0)], 1));
        // A removed page no longer counts.
        ix.remove(1);
        let (hits, total) = ix.bm25(&[deploy], &[1, 2], 10);
        assert_eq!((hits.len(), hits[0].0, total), (1, 2, 1));
    }
}
