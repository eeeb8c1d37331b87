//! Names validated once: slugs, emails, display names and tags.
//!
//! A leaf module — it imports only the error type — so that `markdown`, `core` and the
//! doors can all share the same rules without reaching into each other.
//!
//! Slugs of pages and workspaces: 1–128 characters that are lowercase
//! letters or letters without case (any script), digits, `-`, `_` or `.`; not starting
//! with `.` or `-`.

use std::fmt;

use crate::error::{Error, Result};

pub(crate) const SLUG_MAX_LEN: usize = 128;

fn slug_char(c: char) -> bool {
    c.is_lowercase() || (c.is_alphabetic() && !c.is_uppercase()) || c.is_numeric() || matches!(c, '-' | '_' | '.')
}

/// A page or workspace slug that follows the rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

impl Slug {
    pub fn is_valid(slug: &str) -> bool {
        let n = slug.chars().count();
        (1..=SLUG_MAX_LEN).contains(&n)
            && !slug.starts_with('.')
            && !slug.starts_with('-')
            && slug.chars().all(slug_char)
    }

    /// The slug, or 400 `invalid_slug`.
    pub fn parse(slug: &str) -> Result<Slug> {
        Slug::lookup(slug, Error::invalid_slug)
    }

    /// A slug read from a request that names something to find. A name that is not a slug
    /// names nothing, so the answer is that thing's "not found" (`missing`), never 400:
    /// the doors say which thing, the core then takes the `Slug`.
    pub fn lookup(raw: &str, missing: impl FnOnce(&str) -> Error) -> Result<Slug> {
        if Slug::is_valid(raw) { Ok(Slug(raw.to_owned())) } else { Err(missing(raw)) }
    }

    /// A slug derived from a title: lower-cased, runs of other characters → `-`, trimmed,
    /// cut to 128 characters. May be empty, and then is no slug (the caller decides).
    pub fn derive(title: &str) -> String {
        let mut out = String::new();
        let mut pending_dash = false;
        for c in title.chars().flat_map(char::to_lowercase) {
            if slug_char(c) && c != '-' {
                if pending_dash && !out.is_empty() {
                    out.push('-');
                }
                pending_dash = false;
                out.push(c);
            } else {
                pending_dash = true;
            }
        }
        let cut: String = out.chars().take(SLUG_MAX_LEN).collect();
        cut.trim_start_matches(['.', '-', '_']).trim_end_matches(['-']).to_owned()
    }

    /// The first of `slug`, `slug-2`, `slug-3`… that `taken` does not hold, cut so that it
    /// stays within 128 characters (two pages may share a title; CONTRACT §5).
    pub fn first_free(&self, taken: impl Fn(&str) -> bool) -> Slug {
        if !taken(&self.0) {
            return self.clone();
        }
        (2_u64..)
            .map(|n| {
                let suffix = format!("-{n}");
                let room = SLUG_MAX_LEN - suffix.len();
                let stem: String = self.0.chars().take(room).collect();
                Slug(format!("{}{suffix}", stem.trim_end_matches('-')))
            })
            .find(|s| !taken(&s.0))
            .expect("some number is free")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for Slug {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An email address: trimmed and lower-cased, shaped like `local@domain.tld`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Email(String);

impl Email {
    /// The normalised address, or 400 `invalid_email`.
    pub(crate) fn parse(raw: &str) -> Result<Email> {
        let email = raw.trim().to_lowercase();
        let valid = email.len() <= 254
            // Angle brackets delimit the address in a commit's author line.
            && !email.chars().any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
            && matches!(email.split_once('@'), Some((local, domain))
                if !local.is_empty() && !domain.contains('@') && domain.contains('.')
                   && !domain.starts_with('.') && !domain.ends_with('.'));
        if valid { Ok(Email(email)) } else { Err(Error::invalid_email()) }
    }

    /// The part before `@`.
    pub(crate) fn local(&self) -> &str {
        self.0.split('@').next().unwrap_or_default()
    }

    /// The part after `@`.
    pub(crate) fn domain(&self) -> &str {
        self.0.rsplit('@').next().unwrap_or_default()
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A display name (of a user, a workspace, a token): trimmed, 1 to `max` characters,
/// none of them a control character. None when it breaks the rule.
pub(crate) fn display_name(raw: &str, max: usize) -> Option<String> {
    let name = raw.trim();
    let ok = !name.is_empty() && name.chars().count() <= max && !name.chars().any(char::is_control);
    ok.then(|| name.to_owned())
}

/// A tag as stored and matched: trimmed, without a leading `#`, lower-cased. None when
/// nothing is left.
/// The longest tag a page may carry: a longer `#word` (or front-matter entry) is no tag.
pub(crate) const MAX_TAG_CHARS: usize = 100;

/// A tag as a page carries it: [`normalize_tag`] of at most [`MAX_TAG_CHARS`] characters.
pub(crate) fn page_tag(raw: &str) -> Option<String> {
    normalize_tag(raw).filter(|t| t.chars().count() <= MAX_TAG_CHARS)
}

pub(crate) fn normalize_tag(raw: &str) -> Option<String> {
    let tag = raw.trim().trim_start_matches('#').trim();
    (!tag.is_empty()).then(|| tag.to_lowercase())
}

/// Extensions of upload names (`core::uploads` maps sniffed types to them).
pub(crate) const UPLOAD_EXTENSIONS: [&str; 6] = ["png", "jpg", "gif", "webp", "avif", "svg"];

/// Whether `name` is an upload name: 64 lowercase hex digits (the content's SHA-256), a
/// dot and a known extension. Anything else (`..`, slashes, encoded tricks, NUL) is not.
pub(crate) fn is_upload_name(name: &str) -> bool {
    let Some((hash, ext)) = name.split_once('.') else { return false };
    hash.len() == 64
        && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && UPLOAD_EXTENSIONS.contains(&ext)
}

/// Every upload name a page's markdown mentions (`/uploads/<name>`), in order, once.
pub(crate) fn upload_names_in(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in markdown.match_indices("/uploads/") {
        let rest = &markdown[i + "/uploads/".len()..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).unwrap_or(rest.len());
        let name = &rest[..end];
        if is_upload_name(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_rules() {
        for ok in ["a", "getting-started", "v1.2", "日本語", "straße", "a_b", "x".repeat(128).as_str()] {
            assert!(Slug::is_valid(ok), "{ok}");
        }
        for bad in ["", "A", "-a", ".a", "a/b", "a b", "x".repeat(129).as_str(), "Ünïcode"] {
            assert!(!Slug::is_valid(bad), "{bad}");
            assert_eq!(Slug::parse(bad).unwrap_err().code, crate::error::Code::InvalidSlug);
        }
    }

    #[test]
    fn the_first_free_slug_counts_up_and_stays_a_slug() {
        let taken = ["onboarding", "onboarding-2", "onboarding-4"];
        let s = Slug::parse("onboarding").unwrap();
        assert_eq!(s.first_free(|c| taken.contains(&c)).as_str(), "onboarding-3");
        assert_eq!(s.first_free(|_| false).as_str(), "onboarding");
        let long = Slug::parse(&"x".repeat(128)).unwrap();
        let next = long.first_free(|c| c.len() == 128 && c.starts_with("xxx") && !c.ends_with("-2"));
        assert_eq!(next.as_str(), format!("{}-2", "x".repeat(126)));
        assert!(Slug::is_valid(next.as_str()));
    }

    #[test]
    fn slug_derivation() {
        assert_eq!(Slug::derive("Getting Started!"), "getting-started");
        assert_eq!(Slug::derive("  Hello,   World  "), "hello-world");
        assert_eq!(Slug::derive("Über Größe"), "über-größe");
        assert_eq!(Slug::derive("..hidden"), "hidden");
        assert_eq!(Slug::derive("!!!"), "");
        assert_eq!(Slug::derive(&"a".repeat(300)).len(), 128);
    }

    #[test]
    fn emails() {
        assert_eq!(Email::parse("  Ann@Example.COM ").unwrap().as_str(), "ann@example.com");
        assert_eq!(Email::parse("ann@example.com").unwrap().local(), "ann");
        for bad in ["", "ann", "ann@", "@x.io", "a@b", "a@.b", "a@b.", "a b@x.io", "a@b@c.io", "a\u{0}@x.io"] {
            assert!(Email::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_and_tags() {
        assert_eq!(display_name("  Ann  ", 10).as_deref(), Some("Ann"));
        assert_eq!(display_name("", 10), None);
        assert_eq!(display_name("a\u{7}b", 10), None);
        assert_eq!(display_name("abc", 2), None);
        assert_eq!(normalize_tag(" #Rust ").as_deref(), Some("rust"));
        assert_eq!(normalize_tag("#"), None);
    }

    #[test]
    fn names_are_hash_dot_known_extension_only() {
        let hash = "a".repeat(64);
        assert!(is_upload_name(&format!("{hash}.png")));
        assert!(is_upload_name(&format!("{hash}.avif")));
        assert!(is_upload_name(&format!("{hash}.svg")));
        for bad in [
            format!("{hash}.html"),
            format!("{hash}.png.png"),
            format!("{}.png", "A".repeat(64)),
            format!("{}.png", "a".repeat(63)),
            "../../etc/passwd".into(),
            format!("..%2F{hash}.png"),
            format!("{hash}.png\0"),
            "/etc/passwd".into(),
            String::new(),
        ] {
            assert!(!is_upload_name(&bad), "{bad:?}");
        }
    }

    #[test]
    fn page_markdown_names_its_uploads() {
        let a = format!("{}.png", "a".repeat(64));
        let b = format!("{}.jpg", "b".repeat(64));
        let md = format!("![x](/uploads/{a}) and <img src=\"/uploads/{b}\"> ![again](/uploads/{a}) /uploads/../x");
        assert_eq!(upload_names_in(&md), [a, b]);
    }

    proptest::proptest! {
        /// Whatever a title holds, the slug derived from it is a valid slug or nothing; a
        /// slug parses exactly when it is valid; a display name comes back trimmed,
        /// within its length, without control characters.
        #[test]
        fn names_from_anything(text in "\\PC{0,300}", raw in proptest::prelude::any::<String>()) {
            for input in [&text, &raw] {
                let d = Slug::derive(input);
                proptest::prop_assert!(d.is_empty() || Slug::is_valid(&d), "{input:?} -> {d:?}");
                proptest::prop_assert_eq!(Slug::parse(input).is_ok(), Slug::is_valid(input));
                if let Some(name) = display_name(input, 200) {
                    proptest::prop_assert_eq!(name.trim(), name.as_str());
                    proptest::prop_assert!(!name.is_empty() && name.chars().count() <= 200);
                    proptest::prop_assert!(!name.chars().any(char::is_control));
                }
                let _ = Email::parse(input);
                let _ = normalize_tag(input);
                let _ = upload_names_in(input);
            }
        }
    }
}
