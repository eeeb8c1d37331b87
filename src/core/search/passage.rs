//! Snippets for results the full-text engine did not find itself (semantic and hybrid
//! search): the window of the page's text that holds the most distinct query terms,
//! HTML-escaped, with the words of those terms marked — the same form as keyword
//! snippets.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::query::Query;
use super::{MARK_END, MARK_START, snippet_html};
use crate::text;

/// Words in a snippet.
const WINDOW: usize = 30;

/// What a snippet marks: the words whose term is one of the query's positive terms
/// (stemmed as the indexes stem), and the words that start with the word being typed.
#[derive(Debug, Default)]
pub(super) struct Marks {
    terms: HashSet<String>,
    prefixes: Vec<String>,
    /// What each word looked up so far counts as: stemming is the costly part of a
    /// snippet, and the pages of one answer share most of their words.
    seen: RefCell<HashMap<String, Option<String>>>,
}

impl Marks {
    pub(super) fn of(q: &Query) -> Marks {
        let positive = || q.terms.iter().filter(|t| !t.negated);
        let prefixes = positive().filter(|t| t.prefix).filter_map(|t| t.words.last().cloned()).collect();
        // Each word on its own too: a CJK word is the phrase of its characters, and the
        // text is read character by character.
        let mut terms: HashSet<String> = text::terms(&q.positive_text()).into_iter().collect();
        terms.extend(positive().flat_map(|t| t.words.iter().filter_map(|w| text::term_of(w))));
        Marks { terms, prefixes, seen: RefCell::default() }
    }

    /// What a (lower-cased) word counts as, when it is marked: its term, or the prefix.
    fn of_word(&self, lower: &str) -> Option<String> {
        if let Some(known) = self.seen.borrow().get(lower) {
            return known.clone();
        }
        let found = text::term_of(lower)
            .filter(|t| self.terms.contains(t))
            .or_else(|| self.prefixes.iter().find(|p| lower.starts_with(p.as_str())).cloned());
        self.seen.borrow_mut().insert(lower.to_owned(), found.clone());
        found
    }
}

/// The best window of `body` (a page's search text: `search_text::search_body`) for `marks`.
pub(super) fn best(body: &str, marks: &Marks) -> String {
    // Words are read from the text as indexed (CJK characters spaced apart: they are
    // words of their own either way); only the snippet is put back together, by
    // `snippet_html`.
    let words = text::words(body);
    if words.is_empty() {
        return String::new();
    }
    // Each distinct word is looked up once (stemming is the costly part); a marked word
    // is the small number of what it counts as.
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let mut looked_up: HashMap<&str, Option<usize>> = HashMap::new();
    let hit: Vec<Option<usize>> = words
        .iter()
        .map(|w| {
            *looked_up.entry(w.lower.as_str()).or_insert_with(|| {
                let fresh = numbers.len();
                marks.of_word(&w.lower).map(|t| *numbers.entry(t).or_insert(fresh))
            })
        })
        .collect();
    // Slide a window of WINDOW words, counting the distinct marks in it as words enter
    // and leave; keep the first window with the most.
    let span = WINDOW.min(words.len());
    let mut counts = vec![0usize; numbers.len()];
    let mut distinct = 0;
    for &t in hit[..span].iter().flatten() {
        distinct += usize::from(counts[t] == 0);
        counts[t] += 1;
    }
    let (mut best_start, mut best_count) = (0, distinct);
    for start in 1..=words.len() - span {
        if let Some(t) = hit[start - 1] {
            counts[t] -= 1;
            distinct -= usize::from(counts[t] == 0);
        }
        if let Some(t) = hit[start + span - 1] {
            distinct += usize::from(counts[t] == 0);
            counts[t] += 1;
        }
        if distinct > best_count {
            (best_start, best_count) = (start, distinct);
        }
    }
    // Start a few words before the window's first match (keeping every match in it),
    // so the snippet opens near what was found.
    let last_start = words.len().saturating_sub(WINDOW);
    let window_hits: Vec<usize> =
        (best_start..(best_start + WINDOW).min(words.len())).filter(|&i| hit[i].is_some()).collect();
    if let (Some(&first), Some(&last)) = (window_hits.first(), window_hits.last()) {
        let lead = first.saturating_sub(4).max(best_start);
        best_start = lead.min(last_start).min(last).max(best_start);
    }
    let end = (best_start + WINDOW).min(words.len());
    let from = words[best_start].start;
    let to = words[end - 1].start + words[end - 1].text.len();
    let mut raw = String::new();
    if best_start > 0 {
        raw.push_str("… ");
    }
    let mut at = from;
    for (w, h) in words[best_start..end].iter().zip(&hit[best_start..end]) {
        raw.push_str(&body[at..w.start]);
        if h.is_some() {
            raw.push(MARK_START);
            raw.push_str(w.text);
            raw.push(MARK_END);
        } else {
            raw.push_str(w.text);
        }
        at = w.start + w.text.len();
    }
    debug_assert_eq!(at, to);
    if end < words.len() {
        raw.push_str(" …");
    }
    snippet_html(&raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_densest_window() {
        let mut body = "filler ".repeat(50);
        body.push_str("the <deployment> of services & more");
        body.push_str(&" filler".repeat(50));
        let s = best(&body, &Marks::of(&Query::parse("deploy service ")));
        assert!(s.starts_with("… ") && s.ends_with(" …"), "{s}");
        assert!(s.contains("&lt;<mark>deployment</mark>&gt; of <mark>services</mark> &amp; more"), "{s}");
        assert_eq!(best("short text", &Marks::of(&Query::parse("nothing"))), "short text");
        assert_eq!(best("", &Marks::default()), "");
    }

    #[test]
    fn the_window_with_the_most_distinct_terms_wins_and_the_first_of_equals() {
        let filler = |n: usize| "filler ".repeat(n);
        // Two windows with one term each, then one with two (a repeated term counts once).
        let body = format!("{}alpha alpha {}beta {}alpha gamma {}", filler(40), filler(40), filler(40), filler(40));
        let s = best(&body, &Marks::of(&Query::parse("alpha beta gamma ")));
        assert!(s.contains("<mark>alpha</mark> <mark>gamma</mark>"), "{s}");
        let s = best(
            &format!("{}alpha {}beta {}", filler(40), filler(40), filler(40)),
            &Marks::of(&Query::parse("beta alpha ")),
        );
        assert!(s.contains("<mark>alpha</mark>") && !s.contains("<mark>beta</mark>"), "{s}");
    }

    #[test]
    fn marks_the_words_a_typed_prefix_starts() {
        let s = best("a migration plan, migrated once", &Marks::of(&Query::parse("plan migr")));
        assert_eq!(s, "a <mark>migration</mark> <mark>plan</mark>, <mark>migrated</mark> once");
        // A negated word is not marked, whatever it is.
        assert_eq!(best("the plan", &Marks::of(&Query::parse("-plan"))), "the plan");
    }
}
