//! Snippets for results the full-text engine did not find itself (semantic and hybrid
//! search): the window of the page's text that holds the most distinct query terms,
//! HTML-escaped, with the words of those terms marked — the same form as keyword
//! snippets.

use std::collections::HashSet;

use super::{MARK_END, MARK_START, snippet_html};
use crate::text;

/// Words in a snippet.
const WINDOW: usize = 30;

/// The best window of `body` (the stored search text) for the query's `terms`.
pub fn best(body: &str, terms: &[String]) -> String {
    let body = text::display_form(body, &[]);
    let wanted: HashSet<&str> = terms.iter().map(String::as_str).collect();
    let words = text::words(&body);
    if words.is_empty() {
        return String::new();
    }
    let hit: Vec<Option<String>> =
        words.iter().map(|w| text::term_of(&w.lower).filter(|t| wanted.contains(t.as_str()))).collect();
    // Slide a window of WINDOW words; keep the first with the most distinct terms.
    let (mut best_start, mut best_count) = (0, 0);
    for start in 0..words.len().saturating_sub(WINDOW - 1).max(1) {
        let end = (start + WINDOW).min(words.len());
        let distinct: HashSet<&String> = hit[start..end].iter().flatten().collect();
        if distinct.len() > best_count {
            (best_start, best_count) = (start, distinct.len());
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
        let s = best(&body, &text::terms("deploy service"));
        assert!(s.starts_with("… ") && s.ends_with(" …"), "{s}");
        assert!(s.contains("&lt;<mark>deployment</mark>&gt; of <mark>services</mark> &amp; more"), "{s}");
        assert_eq!(best("short text", &text::terms("nothing")), "short text");
        assert_eq!(best("", &[]), "");
    }
}
