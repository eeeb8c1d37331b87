//! What people type into a search box, read into terms — never an error.
//!
//! Words are runs of letters and digits of any script; a CJK word is the phrase of its
//! characters (see `text`). `"quoted words"` are a phrase (an unclosed quote runs to
//! the end), a leading `-` or a `NOT` excludes the next term, and the last word is a
//! prefix while it is being typed (no space after it yet). `AND` and `OR` in capitals
//! are passed over (every term must match). Everything else — `*`, `:`, parentheses,
//! stray quotes — only separates words. The engines' own query syntax is never exposed:
//! [`Query::fts5`] and [`Query::tsquery`] write it from words that hold only letters and
//! digits, so no input can make them fail.

use crate::text::is_cjk;

/// One term: a word, or a phrase of several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    pub words: Vec<String>,
    pub negated: bool,
    /// The last word matches as a prefix.
    pub prefix: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Query {
    pub terms: Vec<Term>,
    /// Any positive term matches (instead of every one).
    pub any: bool,
}

/// The words of `s`: letter/digit runs, each CJK character on its own.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        if is_cjk(c) {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

impl Query {
    pub(crate) fn parse(raw: &str) -> Query {
        let mut terms = Vec::new();
        let mut negate_next = false;
        let mut rest = raw.trim_start();
        while !rest.is_empty() {
            let negated = std::mem::take(&mut negate_next) | rest.starts_with('-');
            let body = rest.trim_start_matches('-');
            let (chunk, next, quoted) = if let Some(inner) = body.strip_prefix('"') {
                match inner.find('"') {
                    Some(end) => (&inner[..end], &inner[end + 1..], true),
                    None => (inner, "", true),
                }
            } else {
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                (&body[..end], &body[end..], false)
            };
            match chunk {
                "NOT" if !quoted => negate_next = true,
                "AND" | "OR" if !quoted => {}
                _ => {
                    let words = words(chunk);
                    if !words.is_empty() {
                        terms.push(Term { words, negated, prefix: false });
                    }
                }
            }
            rest = next.trim_start();
        }
        // The last word is still being typed unless a space or a closing quote ends it.
        let typing = raw.chars().next_back().is_some_and(char::is_alphanumeric);
        if typing
            && let Some(last) = terms.last_mut()
            && !last.negated
            && last.words.last().is_some_and(|w| w.chars().count() >= 2 && !w.chars().any(is_cjk))
        {
            last.prefix = true;
        }
        Query { terms, any: false }
    }

    /// True when no term requires anything (nothing to search for).
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.iter().all(|t| t.negated)
    }

    /// How many terms must match.
    pub(crate) fn positive(&self) -> usize {
        self.terms.iter().filter(|t| !t.negated).count()
    }

    /// The positive terms as single words (with whether each is a typed prefix), when
    /// every one is a single word of a script written with spaces: what term statistics
    /// can score. None when a phrase (quoted words, or a CJK word, the phrase of its
    /// characters) must match, since scoring a phrase needs the positions of its words.
    pub(crate) fn single_words(&self) -> Option<Vec<(&str, bool)>> {
        self.terms
            .iter()
            .filter(|t| !t.negated)
            .map(|t| match t.words.as_slice() {
                [w] if !w.chars().any(is_cjk) => Some((w.as_str(), t.prefix)),
                _ => None,
            })
            .collect()
    }

    /// The words of the terms that must match, in order (what meaning-level search reads).
    pub(crate) fn positive_text(&self) -> String {
        self.terms
            .iter()
            .filter(|t| !t.negated)
            .flat_map(|t| t.words.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The same query with any one of its terms enough to match. Single stop words go
    /// (they would match nearly every page and say nothing), unless nothing else is left.
    pub(crate) fn any(&self) -> Query {
        let telling = |t: &&Term| t.negated || t.words.len() > 1 || !crate::text::is_stop_word(&t.words[0]);
        let kept: Vec<Term> = self.terms.iter().filter(telling).cloned().collect();
        let terms = if kept.iter().any(|t| !t.negated) { kept } else { self.terms.clone() };
        Query { terms, any: true }
    }

    /// An FTS5 MATCH expression: every positive term, then `NOT` each negative one.
    pub(crate) fn fts5(&self) -> String {
        let quote = |t: &Term| {
            let phrase = format!("\"{}\"", t.words.join(" "));
            if t.prefix { format!("{phrase}*") } else { phrase }
        };
        let positive: Vec<String> = self.terms.iter().filter(|t| !t.negated).map(quote).collect();
        let mut out = format!("({})", positive.join(if self.any { " OR " } else { " " }));
        for t in self.terms.iter().filter(|t| t.negated) {
            out.push_str(" NOT ");
            out.push_str(&quote(t));
        }
        out
    }

    /// A `to_tsquery` expression: terms joined by `&` (`|` for [`Query::any`]), phrases
    /// with `<->`, the typed prefix with `:*`, negations with `!`.
    pub(crate) fn tsquery(&self) -> String {
        let term = |t: &Term| {
            let mut words: Vec<String> = t.words.clone();
            if t.prefix
                && let Some(last) = words.last_mut()
            {
                last.push_str(":*");
            }
            let body = if words.len() == 1 { words.remove(0) } else { format!("({})", words.join(" <-> ")) };
            if t.negated { format!("!{body}") } else { body }
        };
        let positive: Vec<String> = self.terms.iter().filter(|t| !t.negated).map(term).collect();
        let negative = self.terms.iter().filter(|t| t.negated).map(term);
        let joined = positive.join(if self.any { " | " } else { " & " });
        std::iter::once(if self.any && positive.len() > 1 { format!("({joined})") } else { joined })
            .chain(negative)
            .collect::<Vec<_>>()
            .join(" & ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(words: &[&str], negated: bool, prefix: bool) -> Term {
        Term { words: words.iter().map(|w| w.to_string()).collect(), negated, prefix }
    }

    #[test]
    fn words_phrases_negation_prefix() {
        let q = Query::parse(r#"Deploy "blue green" -legacy NOT old serv"#);
        assert_eq!(
            q.terms,
            vec![
                t(&["deploy"], false, false),
                t(&["blue", "green"], false, false),
                t(&["legacy"], true, false),
                t(&["old"], true, false),
                t(&["serv"], false, true),
            ]
        );
        assert_eq!(q.fts5(), r#"("deploy" "blue green" "serv"*) NOT "legacy" NOT "old""#);
        assert_eq!(q.tsquery(), "deploy & (blue <-> green) & serv:* & !legacy & !old");
        let any = Query::parse("the effect of noise -old").any();
        assert_eq!(any.fts5(), r#"("effect" OR "noise") NOT "old""#);
        assert_eq!(any.tsquery(), "(effect | noise) & !old");
        assert_eq!(Query::parse("the of ").any().fts5(), r#"("the" OR "of")"#);
    }

    #[test]
    fn cjk_words_are_phrases_and_a_trailing_space_ends_the_prefix() {
        assert_eq!(Query::parse("天気 ").terms, vec![t(&["天", "気"], false, false)]);
        assert_eq!(Query::parse("straße ").terms, vec![t(&["straße"], false, false)]);
        assert_eq!(Query::parse("Häuser").terms, vec![t(&["häuser"], false, true)]);
    }

    #[test]
    fn single_words_are_what_term_statistics_can_score() {
        assert_eq!(Query::parse("deploy -legacy \"old way\" serv").single_words(), None);
        assert_eq!(
            Query::parse("deploy -\"old way\" serv").single_words(),
            Some(vec![("deploy", false), ("serv", true)])
        );
        assert_eq!(Query::parse("東京 tower").single_words(), None);
    }

    #[test]
    fn hostile_input_is_only_words() {
        for raw in ["\"", "-", "*", ":", "()", "AND", "a:b", "NOT", "((", "'", "\\", "%_", "\"unclosed", "--x", "-\"\""]
        {
            let q = Query::parse(raw);
            for term in &q.terms {
                assert!(term.words.iter().all(|w| w.chars().all(char::is_alphanumeric)), "{raw:?}: {q:?}");
            }
        }
        assert!(Query::parse("-only -negative").is_empty());
        assert!(Query::parse("  *** ").is_empty());
        assert_eq!(Query::parse("a:b").terms, vec![t(&["a", "b"], false, false)]);
    }
}
