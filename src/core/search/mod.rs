//! Search (CONTRACT §6): `keyword` — the database's full-text index, ranked, with a
//! highlighted snippet. `semantic` and `hybrid` are known modes that this release does
//! not serve yet: they answer 400 `mode_unavailable`, saying so, rather than pretending
//! with keyword results.

mod keyword;
pub mod query;

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use super::paging::Paging;
use super::workspaces::Access;
use crate::error::{Error, Result};
use query::Query;

/// Longest query read; the rest is ignored (a search box, not a document).
const MAX_QUERY_CHARS: usize = 1000;
/// Most terms a query may hold; later ones are ignored.
const MAX_TERMS: usize = 32;

/// Highlight markers the engines put around matches; private-use characters no page
/// holds, turned into `<mark>` after the snippet is HTML-escaped.
const MARK_START: char = '\u{E000}';
const MARK_END: char = '\u{E001}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Keyword,
    Semantic,
    Hybrid,
}

impl Mode {
    /// `keyword` when absent; 400 for an unknown mode.
    pub fn parse(mode: Option<&str>) -> Result<Mode> {
        match mode.map(str::trim).filter(|m| !m.is_empty()) {
            None | Some("keyword") => Ok(Mode::Keyword),
            Some("semantic") => Ok(Mode::Semantic),
            Some("hybrid") => Ok(Mode::Hybrid),
            Some(other) => Err(Error::invalid_mode(other)),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Keyword => "keyword",
            Mode::Semantic => "semantic",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// One page found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Hit {
    pub slug: String,
    pub title: String,
    /// Text around the best match, HTML-escaped, matches in `<mark>…</mark>`.
    pub snippet: String,
    /// Higher is better; comparable within one answer only.
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchResults {
    pub query: String,
    pub mode: &'static str,
    /// How the result was computed: `fulltext` for keyword search.
    pub engine: &'static str,
    pub items: Vec<Hit>,
    /// Pages matching in all (for paging).
    pub total: i64,
}

pub struct SearchRequest<'a> {
    pub q: &'a str,
    pub mode: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub paging: Paging,
}

/// Searches the live pages of one workspace.
pub async fn search(ctx: &Ctx, access: &Access, req: SearchRequest<'_>) -> Result<SearchResults> {
    // Parsed untrimmed: a trailing space says the last word is complete.
    let raw: String = req.q.chars().take(MAX_QUERY_CHARS).collect();
    let q = raw.trim().to_owned();
    if q.is_empty() {
        return Err(Error::empty_query());
    }
    let mode = Mode::parse(req.mode)?;
    if mode != Mode::Keyword {
        return Err(Error::mode_unavailable(mode.as_str()));
    }
    let mut parsed = Query::parse(&raw);
    parsed.terms.truncate(MAX_TERMS);
    let tag = req.tag.and_then(crate::ids::normalize_tag);
    let (items, total) = if parsed.is_empty() {
        (vec![], 0)
    } else {
        keyword::search(ctx, access.workspace_id(), &parsed, tag.as_deref(), req.paging).await?
    };
    Ok(SearchResults { query: q, mode: mode.as_str(), engine: "fulltext", items, total })
}

/// The engine's snippet as answered: CJK put back together, HTML-escaped, matches
/// marked.
fn snippet_html(raw: &str) -> String {
    let text = crate::text::display_form(raw, &[MARK_START, MARK_END]);
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            MARK_START => out.push_str("<mark>"),
            MARK_END => out.push_str("</mark>"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_escaped_and_marked() {
        assert_eq!(
            snippet_html("a <script> \u{E000}run\u{E001} & b 東 \u{E000}京\u{E001} 、 "),
            "a &lt;script&gt; <mark>run</mark> &amp; b 東<mark>京</mark>、"
        );
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::parse(None).unwrap(), Mode::Keyword);
        assert_eq!(Mode::parse(Some("hybrid")).unwrap(), Mode::Hybrid);
        assert_eq!(Mode::parse(Some("fuzzy")).unwrap_err().code, "invalid_mode");
    }
}
