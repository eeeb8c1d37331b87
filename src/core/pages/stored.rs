//! How a page's markdown is kept in its database row.
//!
//! On SQLite the row keeps it zlib-compressed in `pages.content_z`, and `content` is
//! ''. Wiki prose compresses about 2.2×, and a row of 2–5 KB then shares a database
//! page with others instead of taking one (or an overflow chain) of its own: the
//! markdown was two thirds of the database after the bench's 1,000-page run
//! (measured in commit a4fc83c). PostgreSQL compresses values over
//! 2 KB by itself (TOAST), so there `content` holds the markdown and `content_z` is
//! NULL. Reads take `content_z` when it is there, else `content`: rows of older
//! releases, and of PostgreSQL, read as they are (and the maintenance pass compresses
//! the former, `rows::compress_plain_rows`).
//!
//! Older releases read `content` only. What keeps them right over rows written here
//! (an older release over a newer schema must keep working):
//! - such rows carry `search_title = ''`, which an older release's start-up check takes
//!   for rows to index again: it rebuilds their workspace from its files (rows with the
//!   markdown in `content`) before it serves anything;
//! - a trigger (`pages_content_written_plain`, in `store::schema`) drops `content_z`
//!   from a row that someone writes plain markdown or a search title into, as only
//!   older releases do on SQLite, so this release never reads a stale copy after one
//!   has written.

use crate::error::{Error, Result};
use crate::store::Backend;
use crate::store::script::Value;

/// A row's `content_z`: the compressed markdown, or NULL.
pub(crate) type Packed = Option<Vec<u8>>;

/// What a page row stores for `markdown` and `title`: its `content`, `content_z` and
/// `search_title` (the title's index form, or '' for a compressed row).
pub(crate) fn columns_for(backend: Backend, markdown: &str, title: &str) -> Result<[Value; 3]> {
    Ok(match backend {
        Backend::Sqlite => {
            [Value::Text(String::new()), Value::OptBytes(Some(pack(markdown)?)), Value::Text(String::new())]
        }
        Backend::Postgres => {
            [Value::Text(markdown.to_owned()), Value::OptBytes(None), Value::Text(crate::text::index_form(title))]
        }
    })
}

/// `markdown` as SQLite's rows keep it in `content_z` (their `content` and
/// `search_title` are then '').
pub(crate) fn pack(markdown: &str) -> Result<Vec<u8>> {
    crate::zlib::compress(crate::zlib::Level::Small, &[markdown.as_bytes()]).map_err(Error::internal)
}

/// The markdown from a row's `content` and `content_z`.
pub(crate) fn read(content: String, packed: Packed) -> Result<String> {
    let Some(packed) = packed else { return Ok(content) };
    let bytes = crate::zlib::decompress(&packed)
        .map_err(|e| Error::internal(anyhow::anyhow!("a page row's compressed markdown: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::internal(anyhow::anyhow!("a page row's compressed markdown: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_rows_keep_the_markdown_compressed_and_postgres_rows_as_it_is() {
        let md = "# Runbook\n\nRestart with `systemctl restart app`. #ops\n".repeat(40);
        let [content, packed, title] = columns_for(Backend::Sqlite, &md, "runbook").unwrap();
        let (Value::Text(content), Value::OptBytes(Some(packed)), Value::Text(title)) = (content, packed, title) else {
            panic!("sqlite columns")
        };
        assert!(content.is_empty() && title.is_empty());
        assert!(packed.len() * 5 < md.len(), "{} bytes for {}", packed.len(), md.len());
        assert_eq!(read(content, Some(packed)).unwrap(), md);

        let [content, packed, title] = columns_for(Backend::Postgres, &md, "runbook").unwrap();
        let (Value::Text(content), Value::OptBytes(None), Value::Text(title)) = (content, packed, title) else {
            panic!("postgres columns")
        };
        assert_eq!(title, "runbook");
        assert_eq!(read(content, None).unwrap(), md);
    }

    #[test]
    fn a_damaged_row_is_an_error_not_a_page() {
        assert!(read(String::new(), Some(b"not zlib".to_vec())).is_err());
        let not_utf8 = crate::zlib::compress(crate::zlib::Level::Small, &[&[0xff, 0xfe]]).unwrap();
        assert!(read(String::new(), Some(not_utf8)).is_err());
    }
}
