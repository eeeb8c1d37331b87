//! Text as the full-text index sees it.
//!
//! Neither FTS5's `unicode61` tokenizer nor PostgreSQL's parser splits scripts written
//! without spaces: a Japanese sentence would be one "word", and a Japanese word inside
//! it could never be found. So the text Cairn indexes has every CJK character (Han,
//! kana, Hangul) standing alone between spaces, and a CJK word in a query becomes the
//! phrase of its characters — found exactly where those characters stand in a row, on
//! both engines. Snippets are put back together before they are answered.
//!
//! [`terms`] is the other reading of text: the stemmed content words that term
//! statistics (TF-IDF) count.
//!
//! A leaf: used by the page index writer and by search, imports nothing of Cairn.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Characters of scripts written without spaces between words.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x31F0..=0x31FF   // Katakana phonetic extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9F   // half-width Katakana
        | 0x20000..=0x2FA1F // CJK extensions B–F, compatibility supplement
    )
}

/// `text` with a space on both sides of every CJK character (and no other change).
pub(crate) fn index_form(text: &str) -> String {
    if !text.chars().any(is_cjk) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut prev_spaced = true;
    for c in text.chars() {
        if is_cjk(c) {
            if !prev_spaced {
                out.push(' ');
            }
            out.push(c);
            out.push(' ');
            prev_spaced = true;
        } else {
            out.push(c);
            prev_spaced = c.is_whitespace();
        }
    }
    out
}

/// Undoes [`index_form`] as far as a reader can tell: spaces between two CJK
/// characters, or between a CJK character and punctuation, go. `keep` characters (the
/// highlight markers) are looked through.
pub(crate) fn display_form(text: &str, keep: &[char]) -> String {
    // Runs of white space (index_form doubles some) become one space first.
    let chars: Vec<char> = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect();
    let significant = |from: usize, step: isize| -> Option<char> {
        let mut i = from as isize;
        while i >= 0 && (i as usize) < chars.len() {
            let c = chars[i as usize];
            if !keep.contains(&c) {
                return Some(c);
            }
            i += step;
        }
        None
    };
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' && i > 0 {
            let before = significant(i - 1, -1);
            let after = significant(i + 1, 1);
            let glue = |x: Option<char>| x.is_some_and(|x| is_cjk(x) || (!x.is_alphanumeric() && !x.is_whitespace()));
            let cjk = |x: Option<char>| x.is_some_and(is_cjk);
            if (cjk(before) && glue(after)) || (glue(before) && cjk(after)) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// English words too common to say what a text is about.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "etc",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "thus",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The stem term statistics count for one lower-cased word.
pub(crate) fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// One word of `text` as written, lower-cased, and where it starts (a byte offset).
pub(crate) struct Word<'a> {
    pub text: &'a str,
    pub lower: String,
    pub start: usize,
}

/// The words of `text`: runs of letters and digits; each CJK character on its own.
pub(crate) fn words(text: &str) -> Vec<Word<'_>> {
    fn push<'a>(text: &'a str, from: usize, to: usize, out: &mut Vec<Word<'a>>) {
        let w = &text[from..to];
        out.push(Word { text: w, lower: w.to_lowercase(), start: from });
    }
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                push(text, s, i, &mut out);
            }
            push(text, i, i + c.len_utf8(), &mut out);
        } else if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            push(text, s, i, &mut out);
        }
    }
    if let Some(s) = start {
        push(text, s, text.len(), &mut out);
    }
    out
}

/// The term of one lower-cased word: its stem, or None for a word that says nothing
/// (a stop word, a single letter or digit).
pub(crate) fn term_of(lower: &str) -> Option<String> {
    let mut chars = lower.chars();
    let first = chars.next()?;
    if chars.next().is_none() && !is_cjk(first) {
        return None;
    }
    if is_stop_word(lower) {
        return None;
    }
    Some(if first.is_ascii_alphabetic() || first.is_alphabetic() && !is_cjk(first) {
        stem(lower)
    } else {
        lower.to_owned()
    })
}

/// The terms of `text` in order: stems of content words, and for scripts without
/// spaces each pair of neighbouring characters (a lone character stands for itself).
/// Characters apart only by white space are neighbours, so the stored search text
/// (see [`index_form`]) gives the same terms as the original.
pub(crate) fn terms(text: &str) -> Vec<String> {
    term_pairs(text).into_iter().map(|(t, _)| t).collect()
}

/// [`terms`] with the lower-cased words they were read from (for showing a term).
pub(crate) fn term_pairs(text: &str) -> Vec<(String, String)> {
    let words = words(text);
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let cjk = w.text.chars().next().is_some_and(is_cjk);
        if cjk {
            // A run of CJK characters standing next to each other in the text.
            let mut j = i + 1;
            while j < words.len()
                && words[j].text.chars().next().is_some_and(is_cjk)
                // Only white space between: the stored search text spaces CJK out.
                && text[words[j - 1].start + words[j - 1].text.len()..words[j].start].trim().is_empty()
            {
                j += 1;
            }
            if j - i == 1 {
                out.push((w.lower.clone(), w.lower.clone()));
            } else {
                for pair in words[i..j].windows(2) {
                    let both = format!("{}{}", pair[0].text, pair[1].text);
                    out.push((both.clone(), both));
                }
            }
            i = j;
        } else {
            if let Some(t) = term_of(&w.lower) {
                out.push((t, w.lower.clone()));
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_stands_alone_and_comes_back() {
        assert_eq!(index_form("plain words"), "plain words");
        assert_eq!(index_form("東京の天気"), "東 京 の 天 気 ");
        assert_eq!(index_form("a東b"), "a 東 b");
        assert_eq!(display_form(&index_form("東京の天気は晴れです。"), &[]), "東京の天気は晴れです。");
        assert_eq!(display_form(&index_form("Cairn は wiki です"), &[]), "Cairn は wiki です");
        assert_eq!(display_form("東 \u{E000}京\u{E001} の", &['\u{E000}', '\u{E001}']), "東\u{E000}京\u{E001}の");
        assert!(is_cjk('한') && is_cjk('カ') && !is_cjk('ß'));
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms_are_stems_of_content_words_and_cjk_pairs() {
        assert_eq!(terms("The deployments were deploying, a x 42"), ["deploy", "deploy", "42"]);
        assert_eq!(terms("東京の天気"), ["東京", "京の", "の天", "天気"]);
        assert_eq!(terms("雨 and 東"), ["雨", "東"]);
        assert_eq!(terms(&index_form("東京")), ["東京"]);
        assert_eq!(terms("Häuser Straße"), ["häuser", "straße"]);
    }
}
