//! A page's history: its revisions (one per commit that touched it, following renames),
//! the content at a revision, and diffs between revisions.

use similar::{ChangeTag, TextDiff};

use super::rows::{self, RevRow};
use super::{Diff, HistoryEntry, Revision};
use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::ids::Slug;

/// The text of a page at a revision: by blob id when the index has it, else by path in
/// the commit (rows written before blob ids were kept).
pub(crate) async fn read_blob(
    ctx: &Ctx,
    access: &Access,
    sha: &str,
    path: &str,
    blob: Option<&str>,
) -> Result<Option<String>> {
    let dir = ctx.workspace_dir(access.slug());
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

async fn content_of(ctx: &Ctx, access: &Access, r: &RevRow) -> Result<String> {
    read_blob(ctx, access, &r.sha, &r.path, r.blob.as_deref())
        .await?
        .ok_or_else(|| Error::internal(anyhow::anyhow!("revision {} has no file {}", r.sha, r.path)))
}

/// Revisions of a live page, newest first.
pub(crate) async fn list(ctx: &Ctx, access: &Access, slug: &Slug, paging: Paging) -> Result<(Vec<HistoryEntry>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let page = rows::live(&mut tx, access.workspace_id(), slug).await?;
    let (revs, total) = rows::revisions(&mut tx, page.id, paging).await?;
    tx.commit().await?;
    let items = revs
        .into_iter()
        .map(|r| HistoryEntry { sha: r.sha, message: r.message, author: r.author, created_at: r.created_at })
        .collect();
    Ok((items, total))
}

/// Revision `sha` of page `page_id`, or 404.
async fn find_rev(conn: &mut sqlx::AnyConnection, page_id: i64, sha: &str) -> Result<RevRow> {
    rows::revision(conn, page_id, sha).await?.ok_or_else(|| Error::revision_not_found(sha))
}

pub(crate) async fn get(ctx: &Ctx, access: &Access, slug: &Slug, sha: &str) -> Result<Revision> {
    let mut conn = ctx.db.pool.acquire().await?;
    let page = rows::live(&mut conn, access.workspace_id(), slug).await?;
    let r = find_rev(&mut conn, page.id, sha).await?;
    drop(conn);
    let content = content_of(ctx, access, &r).await?;
    Ok(Revision { sha: r.sha, content, title: r.title, author: r.author, created_at: r.created_at, message: r.message })
}

/// The diff from `against` (default: the revision before `sha`) to `sha`.
pub(crate) async fn diff(ctx: &Ctx, access: &Access, slug: &Slug, sha: &str, against: Option<&str>) -> Result<Diff> {
    let mut conn = ctx.db.pool.acquire().await?;
    let page = rows::live(&mut conn, access.workspace_id(), slug).await?;
    let to = find_rev(&mut conn, page.id, sha).await?;
    let from = match against {
        Some(a) => Some(find_rev(&mut conn, page.id, a).await?),
        None => rows::revision_before(&mut conn, page.id, &to).await?,
    };
    drop(conn);
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
