//! Text as the full-text index sees it.
//!
//! Neither FTS5's `unicode61` tokenizer nor PostgreSQL's parser splits scripts written
//! without spaces: a Japanese sentence would be one "word", and a Japanese word inside
//! it could never be found. So the text Cairn indexes has every CJK character (Han,
//! kana, Hangul) standing alone between spaces, and a CJK word in a query becomes the
//! phrase of its characters — found exactly where those characters stand in a row, on
//! both engines. Snippets are put back together before they are answered.
//!
//! A leaf: used by the page index writer and by search, imports nothing of Cairn.

/// Characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
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
pub fn index_form(text: &str) -> String {
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
pub fn display_form(text: &str, keep: &[char]) -> String {
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
}
