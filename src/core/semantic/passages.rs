//! Passages of a page for the embedding model. A model reads a bounded number of tokens
//! (256 for MiniLM), so a page is cut into overlapping windows of words, each prefixed
//! by the page's title (the context a passage lacks on its own). Passage 0 is the
//! opening; a page of a few paragraphs is one passage.

/// Words in a passage: about 200 tokens of English, inside MiniLM's 256.
const WORDS: usize = 150;
/// Words shared by neighbouring passages, so a sentence cut by one is whole in the next.
const OVERLAP: usize = 30;
/// Passages per page at most (≈ 15,000 words covered); past that a page is long enough
/// for its opening passages to say what it is about.
pub(crate) const MAX_PASSAGES: usize = 128;
/// A "word" longer than this (scripts written without spaces) is cut into pieces of it.
const LONG_WORD: usize = 40;

/// The passages of a page with `title` and plain `text`.
pub fn passages(title: &str, text: &str) -> Vec<String> {
    let mut words: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        if w.chars().count() <= LONG_WORD {
            words.push(w);
        } else {
            let mut rest = w;
            while !rest.is_empty() {
                let cut = rest.char_indices().nth(LONG_WORD).map_or(rest.len(), |(i, _)| i);
                words.push(&rest[..cut]);
                rest = &rest[cut..];
            }
        }
    }
    let title = title.trim();
    let with_title = |body: &str| if title.is_empty() { body.to_owned() } else { format!("{title}\n{body}") };
    if words.is_empty() {
        return vec![title.to_owned()];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < words.len() && out.len() < MAX_PASSAGES {
        let end = (start + WORDS).min(words.len());
        out.push(with_title(&words[start..end].join(" ")));
        if end == words.len() {
            break;
        }
        start = end - OVERLAP;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_pages_are_one_passage_and_long_ones_overlap() {
        assert_eq!(passages("Lunch", "The canteen opens at noon."), ["Lunch\nThe canteen opens at noon."]);
        assert_eq!(passages("Empty", "  "), ["Empty"]);
        let text: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let p = passages("T", &text.join(" "));
        // Windows start at 0, 120, 240, 360.
        assert_eq!(p.len(), 4);
        assert!(p[0].starts_with("T\nw0 ") && p[0].ends_with(" w149"));
        assert!(p[1].starts_with("T\nw120 ") && p[3].starts_with("T\nw360 ") && p[3].ends_with(" w399"));
        let huge: Vec<String> = (0..100_000).map(|i| format!("w{i}")).collect();
        assert_eq!(passages("T", &huge.join(" ")).len(), MAX_PASSAGES);
        // Text without spaces is cut into pieces the tokenizer can take.
        let cjk = "東".repeat(100);
        assert_eq!(passages("", &cjk), [format!("{} {} {}", "東".repeat(40), "東".repeat(40), "東".repeat(20))]);
    }
}
