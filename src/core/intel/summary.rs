//! Extractive summaries: the page's most telling sentences, verbatim, in page order.
//!
//! Sentences come from the page's prose only (paragraphs and list items: never
//! headings, code, tables or front matter — see `markdown::Parsed::sentences`). Each is
//! scored by the TF-IDF weight of its distinct terms in the workspace, damped by its
//! length so long sentences do not win by size alone, with a small bonus for the
//! opening sentence (where pages usually say what they are about).

use std::collections::HashSet;

use serde::Serialize;
use utoipa::ToSchema;

use super::Mode;
use crate::core::Ctx;
use crate::core::pages;
use crate::core::semantic::{self, tfidf::TfIdf};
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::ids::Slug;
use crate::markdown;

pub(crate) const DEFAULT_SENTENCES: i64 = 3;
pub(crate) const MAX_SENTENCES: i64 = 50;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Summary {
    pub mode: Mode,
    /// Sentences taken verbatim from the page, in page order.
    pub sentences: Vec<String>,
    /// The sentences joined by a space.
    pub summary: String,
}

/// Scores and picks `n` sentences; answers their indexes in page order.
fn pick(sentences: &[String], n: usize, idf: impl Fn(&str) -> f32) -> Vec<usize> {
    let mut scored: Vec<(usize, f32)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let terms = crate::text::terms(s);
            let distinct: HashSet<&String> = terms.iter().collect();
            let weight: f32 = distinct.iter().map(|t| idf(t)).sum();
            let damped = weight / (1.0 + terms.len() as f32).sqrt();
            (i, if i == 0 { damped * 1.2 } else { damped })
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<usize> = scored.into_iter().take(n).map(|(i, _)| i).collect();
    chosen.sort_unstable();
    chosen
}

/// How many sentences a summary has: 3 unless asked, 1 to 50 (400 otherwise).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sentences(usize);

impl Sentences {
    pub(crate) fn parse(asked: Option<i64>) -> Result<Sentences> {
        let n = asked.unwrap_or(DEFAULT_SENTENCES);
        if !(1..=MAX_SENTENCES).contains(&n) {
            return Err(Error::invalid_sentences(MAX_SENTENCES));
        }
        Ok(Sentences(n as usize))
    }
}

/// `n` sentences of the page.
pub(crate) async fn summary(ctx: &Ctx, access: &Access, slug: &Slug, Sentences(n): Sentences) -> Result<Summary> {
    let (ids, page) = pages::read::visible(ctx, access, slug).await?;
    let parsed = markdown::parse(&page.content);
    let index = semantic::fresh(ctx, ids.workspace).await?;
    let chosen = {
        let ix = index.read().await;
        let tfidf: &TfIdf = &ix.tfidf;
        // A term the index has not seen gets the idf of a term seen once.
        let unseen = ((1.0 + tfidf.len() as f32) / 2.0).ln() + 1.0;
        pick(&parsed.sentences, n, |t| tfidf.idf(t).unwrap_or(unseen))
    };
    let sentences: Vec<String> = chosen.into_iter().map(|i| parsed.sentences[i].clone()).collect();
    Ok(Summary { mode: Mode::Tfidf, summary: sentences.join(" "), sentences })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_telling_sentences_in_page_order() {
        let s: Vec<String> = [
            "Kubernetes schedules containers onto nodes.",
            "It is nice.",
            "The scheduler weighs affinity, taints and resource requests.",
            "We like it.",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let idf = |t: &str| if ["nice", "like"].contains(&t) { 0.1 } else { 2.0 };
        assert_eq!(pick(&s, 2, idf), [0, 2]);
        assert_eq!(pick(&s, 10, idf), [0, 1, 2, 3]);
    }
}
