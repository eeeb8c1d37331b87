//! What the full-text indexes hold of a page, written in the transaction that writes its
//! row (the one place outside `search/keyword.rs` where the backends' search SQL differs).
//! Neither engine stores the search text itself: it is derived from the markdown
//! ([`super::rows::search_body`]).

use sqlx::{AnyConnection, AssertSqlSafe};

use crate::error::Result;

/// PostgreSQL's `search_vector` of a page, as an expression over two bound parameters:
/// the title as indexed and the search text. The page row's own statement sets it.
pub fn pg_vector(title: &str, body: &str) -> String {
    format!("setweight(to_tsvector('english', {title}), 'A') || setweight(to_tsvector('english', {body}), 'B')")
}

/// SQLite: the statement that writes a page's entry in `pages_fts`, replacing the one it
/// had (contentless with `contentless_delete`, so the old text is not needed), from three
/// SQL expressions: the page id, the title as indexed and the search text.
pub fn fts_entry(rowid: &str, title: &str, body: &str) -> String {
    format!("INSERT OR REPLACE INTO pages_fts (rowid, search_title, body) VALUES ({rowid}, {title}, {body})")
}

/// [`fts_entry`] on its own.
pub async fn fts_entry_in_tx(tx: &mut AnyConnection, page_id: i64, title: &str, body: &str) -> Result<()> {
    sqlx::query(AssertSqlSafe(fts_entry("$1", "$2", "$3")))
        .bind(page_id)
        .bind(title)
        .bind(body)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
