//! What the full-text indexes hold of a page: its search text, derived from the markdown
//! and never stored, and PostgreSQL's vector over it. The page rows write it
//! (`rows`), the indexes read it (`fulltext`).

use crate::markdown;
use crate::text;

/// PostgreSQL's `search_vector` of a page, as an expression over two bound parameters:
/// the title as indexed and the search text. The page row's own statement sets it.
pub(crate) fn pg_vector(title: &str, body: &str) -> String {
    format!("setweight(to_tsvector('english', {title}), 'A') || setweight(to_tsvector('english', {body}), 'B')")
}

/// The text a page is searched by: its markdown's text, then the text read from the
/// images it embeds (`image_text`). Derived, never stored: the full-text indexes keep
/// only their index of it.
pub(crate) fn search_body(content: &str, image_text: &str) -> String {
    search_body_of(&markdown::parse(content).text, image_text)
}

/// [`search_body`] from the markdown's text, when it is parsed already.
pub(super) fn search_body_of(text: &str, image_text: &str) -> String {
    let mut body = text::index_form(text);
    if !image_text.is_empty() {
        body.push('\n');
        body.push_str(image_text);
    }
    body
}
