//! Slugs of pages and workspaces (CONTRACT §5): 1–128 characters that are lowercase
//! letters or letters without case (any script), digits, `-`, `_` or `.`; not starting
//! with `.` or `-`.

use crate::error::{Error, Result};

pub const MAX_LEN: usize = 128;

fn allowed(c: char) -> bool {
    c.is_lowercase() || (c.is_alphabetic() && !c.is_uppercase()) || c.is_numeric() || matches!(c, '-' | '_' | '.')
}

pub fn is_valid(slug: &str) -> bool {
    let n = slug.chars().count();
    (1..=MAX_LEN).contains(&n) && !slug.starts_with('.') && !slug.starts_with('-') && slug.chars().all(allowed)
}

pub fn validate(slug: &str) -> Result<()> {
    if is_valid(slug) { Ok(()) } else { Err(Error::invalid_slug(slug)) }
}

/// A slug derived from a title: lower-cased, runs of other characters → `-`, trimmed,
/// cut to 128 characters. May be empty (the caller decides what then).
pub fn derive(title: &str) -> String {
    let mut out = String::new();
    let mut pending_dash = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        if allowed(c) && c != '-' {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c);
        } else {
            pending_dash = true;
        }
    }
    let cut: String = out.chars().take(MAX_LEN).collect();
    cut.trim_start_matches(['.', '-', '_']).trim_end_matches(['-']).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        for ok in ["a", "getting-started", "v1.2", "日本語", "straße", "a_b", "x".repeat(128).as_str()] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in ["", "A", "-a", ".a", "a/b", "a b", "x".repeat(129).as_str(), "Ünïcode"] {
            assert!(!is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn derivation() {
        assert_eq!(derive("Getting Started!"), "getting-started");
        assert_eq!(derive("  Hello,   World  "), "hello-world");
        assert_eq!(derive("Über Größe"), "über-größe");
        assert_eq!(derive("..hidden"), "hidden");
        assert_eq!(derive("!!!"), "");
        assert_eq!(derive(&"a".repeat(300)).len(), 128);
    }
}
