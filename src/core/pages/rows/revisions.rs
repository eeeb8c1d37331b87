//! The `revisions` table: one row per commit that touched a page, and the ids a history
//! rewrite gave commits (`revision_aliases`).

use sqlx::{AnyConnection, AssertSqlSafe};

use crate::core::pages::Actor;
use crate::core::paging::Paging;
use crate::error::Result;
use crate::time::Timestamp;

/// One revision row of a page.
pub(crate) struct RevRow {
    pub id: i64,
    pub sha: String,
    pub path: String,
    pub blob: Option<String>,
    pub title: String,
    pub message: String,
    pub author: Actor,
    pub created_at: Timestamp,
}

const REV_SELECT: &str = "SELECT id, sha, path, blob, title, message, COALESCE(author_id, 0) AS author_id, author_name, \
     created_at FROM revisions";

/// [`REV_SELECT`]'s columns, by name.
#[derive(sqlx::FromRow)]
struct RevColumns {
    id: i64,
    sha: String,
    path: String,
    blob: Option<String>,
    title: String,
    message: String,
    author_id: i64,
    author_name: String,
    created_at: Timestamp,
}

impl From<RevColumns> for RevRow {
    fn from(c: RevColumns) -> Self {
        RevRow {
            id: c.id,
            sha: c.sha,
            path: c.path,
            blob: c.blob,
            title: c.title,
            message: c.message,
            author: Actor { id: c.author_id, name: c.author_name },
            created_at: c.created_at,
        }
    }
}

/// The id a revision has now: `sha`, or what a history rewrite (a purge, an erasure)
/// made of it.
const NOW_SHA: &str = "COALESCE((SELECT new_sha FROM revision_aliases \
     WHERE workspace_id = (SELECT workspace_id FROM pages WHERE id = $1) AND old_sha = $2), $2)";

/// Revision `sha` of page `page_id`, if it is one of its revisions (by the id it had
/// before a history rewrite too).
pub(crate) async fn revision(conn: &mut AnyConnection, page_id: i64, sha: &str) -> Result<Option<RevRow>> {
    let sql = format!("{REV_SELECT} WHERE page_id = $1 AND sha = {NOW_SHA}");
    let t: Option<RevColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(page_id).bind(sha.trim()).fetch_optional(&mut *conn).await?;
    Ok(t.map(RevRow::from))
}

/// The id revision `sha` of workspace `ws_id` has now (itself unless a history rewrite
/// replaced it).
pub(crate) async fn revision_now(conn: &mut AnyConnection, ws_id: i64, sha: &str) -> Result<String> {
    let now: Option<String> =
        sqlx::query_scalar("SELECT new_sha FROM revision_aliases WHERE workspace_id = $1 AND old_sha = $2")
            .bind(ws_id)
            .bind(sha.trim())
            .fetch_optional(&mut *conn)
            .await?;
    Ok(now.unwrap_or_else(|| sha.trim().to_owned()))
}

/// Records that a history rewrite gave the commits in `renamed` new ids, (old, new): the
/// revisions and pages naming them name the new ones, and the old ids — and the ids that
/// earlier rewrites replaced by them — answer as the new ones.
pub(crate) async fn rename_revisions_in_tx(
    tx: &mut AnyConnection,
    ws_id: i64,
    renamed: &[(String, String)],
) -> Result<()> {
    for chunk in renamed.chunks(300) {
        let rows: Vec<String> = (0..chunk.len()).map(|i| format!("($1, ${}, ${})", 2 * i + 2, 2 * i + 3)).collect();
        let sql = format!(
            "INSERT INTO revision_aliases (workspace_id, old_sha, new_sha) VALUES {} \
             ON CONFLICT (workspace_id, old_sha) DO UPDATE SET new_sha = excluded.new_sha",
            rows.join(", ")
        );
        let mut q = sqlx::query(AssertSqlSafe(sql)).bind(ws_id);
        for (old, new) in chunk {
            q = q.bind(old).bind(new);
        }
        q.execute(&mut *tx).await?;
    }
    let now = |table: &str, column: &str| {
        format!(
            "UPDATE {table} SET {column} = (SELECT a.new_sha FROM revision_aliases a \
             WHERE a.workspace_id = {table}.workspace_id AND a.old_sha = {table}.{column}) \
             WHERE workspace_id = $1 AND {column} IN (SELECT old_sha FROM revision_aliases WHERE workspace_id = $1)"
        )
    };
    for (table, column) in [("revision_aliases", "new_sha"), ("revisions", "sha"), ("pages", "revision")] {
        sqlx::query(AssertSqlSafe(now(table, column))).bind(ws_id).execute(&mut *tx).await?;
    }
    Ok(())
}

/// Page `page_id`'s revisions from `from_id` on that hold blob `old` hold `new` instead
/// (an erasure).
pub(crate) async fn replace_revision_blob_in_tx(
    tx: &mut AnyConnection,
    page_id: i64,
    from_id: i64,
    old: &str,
    new: &str,
) -> Result<()> {
    sqlx::query("UPDATE revisions SET blob = $1 WHERE page_id = $2 AND id >= $3 AND blob = $4")
        .bind(new)
        .bind(page_id)
        .bind(from_id)
        .bind(old)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The revision saved just before `r` (None for the first).
pub(crate) async fn revision_before(conn: &mut AnyConnection, page_id: i64, r: &RevRow) -> Result<Option<RevRow>> {
    let sql = format!(
        "{REV_SELECT} WHERE page_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
         ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    let t: Option<RevColumns> = sqlx::query_as(AssertSqlSafe(sql))
        .bind(page_id)
        .bind(&r.created_at)
        .bind(r.id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(t.map(RevRow::from))
}

/// A page's revisions, newest first; and how many there are.
pub(crate) async fn revisions(conn: &mut AnyConnection, page_id: i64, paging: Paging) -> Result<(Vec<RevRow>, i64)> {
    let sql = format!("{REV_SELECT} WHERE page_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3");
    let count = "SELECT COUNT(*) FROM revisions WHERE page_id = $1";
    let (rows, total): (Vec<RevColumns>, i64) = paging.window(conn, AssertSqlSafe(sql), count, page_id).await?;
    Ok((rows.into_iter().map(RevRow::from).collect(), total))
}
