//! A page's history: its revisions (one per commit that touched it, following renames),
//! the content at a revision, and diffs between revisions.

use similar::{ChangeTag, TextDiff};

use super::read::live_row;
use super::{Actor, Diff, HistoryEntry, Revision};
use crate::core::Ctx;
use crate::core::workspaces::Access;
use crate::error::{Error, Result};

pub fn revision_not_found(sha: &str) -> Error {
    Error::not_found("revision_not_found", format!("no revision '{sha}' of this page"))
}

/// The text of a page at a revision: by blob id when the index has it, else by path in
/// the commit (rows written before blob ids were kept).
pub async fn read_blob(
    ctx: &Ctx,
    access: &Access,
    sha: &str,
    path: &str,
    blob: Option<&str>,
) -> Result<Option<String>> {
    let dir = ctx.workspace_dir(&access.slug);
    let bytes = match blob.and_then(|b| git2::Oid::from_str(b).ok()) {
        Some(oid) => crate::git::read(dir, move |r| crate::git::read_blob(r, oid)).await?,
        None => {
            let Ok(oid) = git2::Oid::from_str(sha) else { return Ok(None) };
            let path = path.to_owned();
            crate::git::read(dir, move |r| crate::git::read_at(r, oid, &path)).await?
        }
    };
    Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

struct RevRow {
    id: i64,
    sha: String,
    path: String,
    blob: Option<String>,
    title: String,
    message: String,
    author: Actor,
    created_at: String,
}

const REV_SELECT: &str =
    "SELECT id, sha, path, blob, title, message, COALESCE(author_id, 0), author_name, created_at FROM revisions";

type RevTuple = (i64, String, String, Option<String>, String, String, i64, String, String);

fn rev(t: RevTuple) -> RevRow {
    RevRow {
        id: t.0,
        sha: t.1,
        path: t.2,
        blob: t.3,
        title: t.4,
        message: t.5,
        author: Actor { id: t.6, name: t.7 },
        created_at: t.8,
    }
}

async fn find_rev(ctx: &Ctx, page_id: i64, sha: &str) -> Result<RevRow> {
    let sql = format!("{REV_SELECT} WHERE page_id = $1 AND sha = $2");
    let t: Option<RevTuple> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(page_id).bind(sha.trim()).fetch_optional(&ctx.db.pool).await?;
    t.map(rev).ok_or_else(|| revision_not_found(sha))
}

async fn content_of(ctx: &Ctx, access: &Access, r: &RevRow) -> Result<String> {
    read_blob(ctx, access, &r.sha, &r.path, r.blob.as_deref())
        .await?
        .ok_or_else(|| Error::internal(anyhow::anyhow!("revision {} has no file {}", r.sha, r.path)))
}

/// Revisions of a live page, newest first.
pub async fn list(ctx: &Ctx, access: &Access, slug: &str, limit: i64, offset: i64) -> Result<(Vec<HistoryEntry>, i64)> {
    let mut conn = ctx.db.pool.acquire().await?;
    let page = live_row(&mut conn, access.workspace_id, slug).await?;
    let sql = format!("{REV_SELECT} WHERE page_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3");
    let rows: Vec<RevTuple> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(page.id).bind(limit).bind(offset).fetch_all(&mut *conn).await?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM revisions WHERE page_id = $1")
        .bind(page.id)
        .fetch_one(&mut *conn)
        .await?;
    let items = rows
        .into_iter()
        .map(rev)
        .map(|r| HistoryEntry { sha: r.sha, message: r.message, author: r.author, created_at: r.created_at })
        .collect();
    Ok((items, total))
}

pub async fn get(ctx: &Ctx, access: &Access, slug: &str, sha: &str) -> Result<Revision> {
    let mut conn = ctx.db.pool.acquire().await?;
    let page = live_row(&mut conn, access.workspace_id, slug).await?;
    drop(conn);
    let r = find_rev(ctx, page.id, sha).await?;
    let content = content_of(ctx, access, &r).await?;
    Ok(Revision { sha: r.sha, content, title: r.title, author: r.author, created_at: r.created_at, message: r.message })
}

/// The diff from `against` (default: the revision before `sha`) to `sha`.
pub async fn diff(ctx: &Ctx, access: &Access, slug: &str, sha: &str, against: Option<&str>) -> Result<Diff> {
    let mut conn = ctx.db.pool.acquire().await?;
    let page = live_row(&mut conn, access.workspace_id, slug).await?;
    drop(conn);
    let to = find_rev(ctx, page.id, sha).await?;
    let from = match against {
        Some(a) => Some(find_rev(ctx, page.id, a).await?),
        None => {
            let sql = format!(
                "{REV_SELECT} WHERE page_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
                 ORDER BY created_at DESC, id DESC LIMIT 1"
            );
            let t: Option<RevTuple> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(page.id)
                .bind(&to.created_at)
                .bind(to.id)
                .fetch_optional(&ctx.db.pool)
                .await?;
            t.map(rev)
        }
    };
    let new = content_of(ctx, access, &to).await?;
    let old = match &from {
        Some(f) => content_of(ctx, access, f).await?,
        None => String::new(),
    };
    let from_name = from.as_ref().map(|f| f.sha.clone());
    let text = TextDiff::from_lines(&old, &new);
    let (mut added, mut removed) = (0, 0);
    for change in text.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let unified =
        text.unified_diff().context_radius(3).header(from_name.as_deref().unwrap_or("/dev/null"), &to.sha).to_string();
    Ok(Diff { from: from_name, to: to.sha, unified, added, removed })
}
