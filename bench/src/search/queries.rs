//! Seeded search queries made of words of the corpus pages that exist, so every query
//! can find something: what people type into a search box, in three kinds.

use cairn_bench::corpus::{self, Page, rng_for};
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One or two content words: `deployment`, `budget cluster`.
    Short,
    /// A word being typed (no space after it, so the server matches it as a prefix),
    /// alone or after a complete word: `migr`, `weekly retr`.
    Prefix,
    /// A question-like run of 6–10 words of a sentence, small words included.
    Long,
}

pub const KINDS: [Kind; 3] = [Kind::Short, Kind::Prefix, Kind::Long];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Short => "1–2 words",
            Kind::Prefix => "prefix as typed",
            Kind::Long => "6–10 words",
        }
    }
}

/// `per_kind` queries of `kind` for the stream `label`, drawn from the pages `existing`
/// (indices into `corpus`). Same seed, label and pages: same queries.
pub fn generate(seed: u64, label: &str, kind: Kind, corpus: &[Page], existing: &[usize], n: usize) -> Vec<String> {
    let mut rng = rng_for(seed, &format!("search-{label}-{}", kind.name()), existing.len() as u64);
    let mut out = Vec::with_capacity(n);
    // Bounded: a page too short for the kind is skipped, and corpus pages are long.
    for _ in 0..n * 20 {
        if out.len() == n {
            break;
        }
        let Some(&page) = existing.choose(&mut rng) else { break };
        if let Some(q) = query(&mut rng, kind, &corpus[page].content) {
            out.push(q);
        }
    }
    out
}

fn query(rng: &mut ChaCha8Rng, kind: Kind, content: &str) -> Option<String> {
    let lines = prose(content);
    let telling: Vec<&String> = lines.iter().flatten().filter(|w| w.len() >= 3 && !corpus::is_filler(w)).collect();
    match kind {
        Kind::Short => {
            let k = rng.random_range(1..=2);
            let words: Vec<&str> = telling.choose_multiple(rng, k).map(|w| w.as_str()).collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        Kind::Prefix => {
            let long: Vec<&&String> = telling.iter().filter(|w| w.chars().count() >= 5).collect();
            let word = long.choose(rng)?;
            let cut: String = word.chars().take(rng.random_range(3..word.chars().count() - 1)).collect();
            if rng.random_bool(0.5)
                && let Some(before) = telling.choose(rng)
            {
                Some(format!("{before} {cut}"))
            } else {
                Some(cut)
            }
        }
        Kind::Long => {
            let line = lines.iter().filter(|l| l.len() >= 6).collect::<Vec<_>>().choose(rng).copied()?;
            let len = rng.random_range(6..=10.min(line.len()));
            let start = rng.random_range(0..=line.len() - len);
            // A question mark ends it, so the last word is complete (not a prefix).
            Some(format!("{}?", line[start..start + len].join(" ")))
        }
    }
}

/// The words of each prose line of a page, lower-cased: headings, code, tags and the
/// targets of wikilinks left out.
fn prose(content: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in content.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.starts_with('#') || line.starts_with("Tags:") {
            continue;
        }
        let mut text = String::new();
        let mut rest = line;
        while let Some(a) = rest.find("[[") {
            text.push_str(&rest[..a]);
            rest = rest[a..].find("]]").map_or("", |b| &rest[a + b + 2..]);
        }
        text.push_str(rest);
        let words: Vec<String> =
            text.split(|c: char| !c.is_alphabetic()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
        if !words.is_empty() {
            out.push(words);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_seeded_and_shaped() {
        let pages = corpus::generate(42, 30);
        let existing: Vec<usize> = (0..30).collect();
        for kind in KINDS {
            let a = generate(42, "t", kind, &pages, &existing, 20);
            assert_eq!(a, generate(42, "t", kind, &pages, &existing, 20));
            assert_eq!(a.len(), 20);
            for q in &a {
                let words = q.split(' ').count();
                match kind {
                    Kind::Short => assert!((1..=2).contains(&words), "{q}"),
                    Kind::Prefix => assert!((1..=2).contains(&words) && q.ends_with(char::is_alphabetic), "{q}"),
                    Kind::Long => assert!((6..=10).contains(&words) && q.ends_with('?'), "{q}"),
                }
                assert!(!q.contains("[[") && !q.contains('#'), "{q}");
            }
        }
        assert_eq!(prose("# T\n\nSee [[a-b|A B]] now.\n```\ncode\n```\nTags: #x\n"), [["see", "now"]]);
    }
}
