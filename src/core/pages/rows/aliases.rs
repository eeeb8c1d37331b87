//! Old slugs: a renamed page keeps answering at every slug it had (CONTRACT §5), until
//! another page takes that slug or the page is purged (the row goes with the page's).
//! A slug that names no page is looked up here only after the page lookup failed, so the
//! common path pays nothing.

use serde_json::json;
use sqlx::AnyConnection;

use super::trashed_one;
use crate::error::{Error, Result};
use crate::store::Script;

/// A rename's rows: the old slug now names the page; the new one is the page's own and
/// no longer any page's alias. `$1` workspace, `$2` the page's uid.
pub(crate) fn renamed(script: &mut Script, ws_id: i64, uid: &str, old: &str, new: &str) {
    script.push(
        "INSERT INTO page_aliases (workspace_id, slug, page_id) \
         SELECT $1, $3, id FROM pages WHERE workspace_id = $1 AND uid = $2 \
         ON CONFLICT (workspace_id, slug) DO UPDATE SET page_id = excluded.page_id",
        vec![ws_id.into(), uid.into(), old.into()],
    );
    taken(script, ws_id, new);
}

/// A page now has `slug` (created with it, or renamed to it): it is nobody's alias.
pub(crate) fn taken(script: &mut Script, ws_id: i64, slug: &str) {
    script.push("DELETE FROM page_aliases WHERE workspace_id = $1 AND slug = $2", vec![ws_id.into(), slug.into()]);
}

/// An alias a rebuild derived from the history (`reindex`), for the page with `uid`.
pub(crate) async fn insert_in_tx(tx: &mut AnyConnection, ws_id: i64, slug: &str, uid: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO page_aliases (workspace_id, slug, page_id) \
         SELECT $1, $2, id FROM pages WHERE workspace_id = $1 AND uid = $3 ON CONFLICT (workspace_id, slug) DO NOTHING",
    )
    .bind(ws_id)
    .bind(slug)
    .bind(uid)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The page an old slug names now: (its slug, whether it is in the trash).
async fn target(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Option<(String, bool)>> {
    let row: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT p.slug, p.deleted_at FROM page_aliases a JOIN pages p ON p.id = a.page_id \
         WHERE a.workspace_id = $1 AND a.slug = $2",
    )
    .bind(ws_id)
    .bind(slug)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|(slug, deleted_at)| (slug, deleted_at.is_some())))
}

/// The error for a live page `slug` that is not there: `page_moved` when it is an old slug
/// of a live page; `page_not_found` otherwise, saying who trashed it when the slug (or
/// the page it is an old slug of) is in the trash, so an editor can offer to restore it.
pub(crate) async fn missing(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Error {
    explain(conn, ws_id, slug).await.unwrap_or_else(|e| e)
}

async fn explain(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Error> {
    let trashed_slug = match target(conn, ws_id, slug).await? {
        Some((now, false)) => return Ok(Error::page_moved(slug, &now)),
        Some((now, true)) => now,
        None => slug.to_owned(),
    };
    let not_found = Error::page_not_found(slug);
    Ok(match trashed_one(conn, ws_id, &trashed_slug).await? {
        Some(t) => not_found.with_extra(
            "trashed",
            json!({"slug": t.slug, "title": t.title, "deleted_at": t.deleted_at, "deleted_by": t.deleted_by}),
        ),
        None => not_found,
    })
}

/// The slugs of `stem` and its numbered forms (`stem-2`…) that a page has, live or in the
/// trash, or that are old slugs: what a derived slug must pass over.
pub(crate) async fn numbered_taken(
    conn: &mut AnyConnection,
    ws_id: i64,
    stem: &str,
) -> Result<std::collections::HashSet<String>> {
    // LIKE's own wildcards in a slug (`_`) only widen the match; the caller compares exactly.
    let taken: Vec<String> = sqlx::query_scalar(
        "SELECT slug FROM pages WHERE workspace_id = $1 AND (slug = $2 OR slug LIKE $3) \
         UNION SELECT slug FROM page_aliases WHERE workspace_id = $1 AND (slug = $2 OR slug LIKE $3)",
    )
    .bind(ws_id)
    .bind(stem)
    .bind(format!("{}-%", stem.chars().take(100).collect::<String>()))
    .fetch_all(&mut *conn)
    .await?;
    Ok(taken.into_iter().collect())
}
