//! Reads of pages, all from the database index. `/api/pages/{slug}…` routes see live
//! pages only; trashed pages are seen through the trash. A list and its `total` are read
//! in one snapshot (`Db::snapshot`), so saves committing meanwhile cannot make them
//! disagree.

use std::collections::HashMap;

use super::rows::{self, PageIds, State};
use super::{Page, PageRef, PageSummary, PageView, TagCount, TrashEntry, TrashedPage, TreeNode};
use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::users::User;
use crate::core::workspaces::{self, Access};
use crate::error::{Error, Result};
use crate::ids::Slug;
use crate::markdown;

/// A live page of the workspace the caller has access to, with its row id; 404 for a
/// missing page.
pub(crate) async fn visible(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<(PageIds, Page)> {
    let mut conn = ctx.db.pool.acquire().await?;
    let (row, lists) = rows::live_listed(&mut conn, access.workspace_id(), slug).await?;
    let ids = PageIds { page: row.id, workspace: access.workspace_id() };
    Ok((ids, row.into_page(lists.tags, lists.links, access.slug())))
}

/// One live page (`GET /api/pages/{slug}`, its raw form, MCP's `get_page`).
pub(crate) async fn get(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<Page> {
    Ok(visible(ctx, access, slug).await?.1)
}

/// A live page's row by its stable id (a co-editing session's page, renamed or moved
/// since it began); None once it is trashed or purged.
pub(crate) async fn by_uid(ctx: &Ctx, access: &Access, uid: &str) -> Result<Option<rows::Row>> {
    let mut conn = ctx.db.pool.acquire().await?;
    rows::live_by_uid(&mut conn, access.workspace_id(), uid).await
}

/// A live page's row, for what needs its stable id and stored markdown (a co-editing
/// session starting); 308 / 404 as [`visible`] answers.
pub(crate) async fn row(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<rows::Row> {
    let mut conn = ctx.db.pool.acquire().await?;
    rows::live(&mut conn, access.workspace_id(), slug).await
}

/// The page with its breadcrumbs, children, backlinks and outline.
pub(crate) async fn view(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<PageView> {
    let (PageIds { page: id, workspace: ws_id }, page) = visible(ctx, access, slug).await?;
    let mut conn = ctx.db.pool.acquire().await?;
    let breadcrumbs = rows::ancestors(&mut conn, id).await?.into_iter().map(|(_, r)| r).collect();
    let children = rows::live_children(&mut conn, ws_id, id)
        .await?
        .into_iter()
        .map(|c| PageRef { slug: c.slug, title: c.title })
        .collect();
    let backlinks = rows::backlinks(&mut conn, ws_id, id, &page.slug).await?;
    let headings = markdown::parse(&page.content)
        .headings
        .into_iter()
        .map(|h| super::Heading { level: h.level, text: h.text, anchor: h.anchor })
        .collect();
    Ok(PageView { page, breadcrumbs, children, backlinks, headings })
}

/// Most pages one embeds request may name.
pub(crate) const MAX_EMBEDS: usize = 50;

/// A page as another page's embed (`![[slug]]`) shows it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct EmbedPage {
    /// The slug the request named (an old slug of a renamed page answers under it).
    pub slug: String,
    pub title: String,
    pub content: String,
}

/// The live pages named by `names` for embeds, in one read; the names that are no live
/// page of the workspace in `missing` (a name that is no slug is one).
pub(crate) async fn embeds(ctx: &Ctx, access: &Access, names: &[String]) -> Result<(Vec<EmbedPage>, Vec<String>)> {
    let ws = access.workspace_id();
    let mut conn = ctx.db.pool.acquire().await?;
    let wanted: Vec<&str> = names.iter().map(String::as_str).filter(|n| Slug::is_valid(n)).collect();
    let found = rows::find_listed_many(&mut conn, ws, &wanted).await?;
    let (mut items, mut missing) = (Vec::new(), Vec::new());
    for name in names {
        let row = match found.get(name.as_str()) {
            Some((row, _)) if row.deleted_at.is_none() => Some(row.clone()),
            Some(_) => None,
            // An old slug: the page where it is now.
            None if Slug::is_valid(name) => match rows::live(&mut conn, ws, name).await {
                Err(e) => match e.moved() {
                    Some((_, to)) => rows::find(&mut conn, ws, to, State::Live).await?,
                    None => None,
                },
                Ok(row) => Some(row),
            },
            None => None,
        };
        match row {
            Some(r) => items.push(EmbedPage { slug: name.clone(), title: r.title, content: r.content }),
            None => missing.push(name.clone()),
        }
    }
    Ok((items, missing))
}

/// Live pages that link to a live page (MCP's `get_backlinks`; the view's backlinks).
pub(crate) async fn backlinks(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<Vec<PageRef>> {
    let (PageIds { page: id, workspace: ws_id }, page) = visible(ctx, access, slug).await?;
    let mut conn = ctx.db.pool.acquire().await?;
    rows::backlinks(&mut conn, ws_id, id, &page.slug).await
}

/// The tags of a workspace's live pages with their page counts, most used first.
pub(crate) async fn tags(ctx: &Ctx, access: &Access) -> Result<Vec<TagCount>> {
    let mut conn = ctx.db.pool.acquire().await?;
    let counts = rows::tag_counts(&mut conn, access.workspace_id()).await?;
    Ok(counts.into_iter().map(|(tag, count)| TagCount { tag, count: count.max(0) as usize }).collect())
}

/// A live page of any workspace the user belongs to, for listing (MCP resources).
#[derive(Debug, Clone)]
pub(crate) struct MemberPage {
    pub workspace: String,
    pub slug: String,
    pub title: String,
}

/// The live pages of every workspace `user` belongs to, by workspace and slug.
pub(crate) async fn member_pages(ctx: &Ctx, user: &User, paging: Paging) -> Result<(Vec<MemberPage>, i64)> {
    let ids: Vec<i64> = workspaces::all_accesses(ctx, user).await?.iter().map(Access::workspace_id).collect();
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total) = rows::pages_of(&mut tx, &ids, paging).await?;
    tx.commit().await?;
    let items = rows.into_iter().map(|(workspace, slug, title)| MemberPage { workspace, slug, title }).collect();
    Ok((items, total))
}

/// Slugs of live pages starting with `prefix` (completion), at most `limit`, and how
/// many match.
pub(crate) async fn slugs_starting(ctx: &Ctx, access: &Access, prefix: &str, limit: i64) -> Result<(Vec<String>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let found = rows::slugs_starting(&mut tx, access.workspace_id(), prefix, limit).await?;
    tx.commit().await?;
    Ok(found)
}

/// The page tree of live pages, children in tree order.
pub(crate) async fn tree(ctx: &Ctx, access: &Access) -> Result<Vec<TreeNode>> {
    let mut conn = ctx.db.pool.acquire().await?;
    let rows = rows::live_tree(&mut conn, access.workspace_id()).await?;
    let live: std::collections::HashSet<i64> = rows.iter().map(|r| r.0).collect();
    type Kid = (i64, String, String, Option<i64>);
    let mut by_parent: HashMap<Option<i64>, Vec<Kid>> = HashMap::new();
    for (id, slug, title, parent, position) in rows {
        // A parent that is not live (cannot normally happen) puts the page at the top.
        let parent = parent.filter(|p| live.contains(p));
        by_parent.entry(parent).or_default().push((id, slug, title, position));
    }
    fn build(parent: Option<i64>, by_parent: &mut HashMap<Option<i64>, Vec<Kid>>) -> Vec<TreeNode> {
        let mut kids = by_parent.remove(&parent).unwrap_or_default();
        kids.sort_by(|a, b| rows::tree_order((a.3, &a.2, &a.1), (b.3, &b.2, &b.1)));
        kids.into_iter()
            .map(|(id, slug, title, _)| TreeNode { slug, title, children: build(Some(id), by_parent) })
            .collect()
    }
    Ok(build(None, &mut by_parent))
}

/// Live pages, most recently updated first, optionally with one tag.
pub(crate) async fn notes(
    ctx: &Ctx,
    access: &Access,
    tag: Option<&str>,
    paging: Paging,
) -> Result<(Vec<PageSummary>, i64)> {
    let tag = tag.and_then(crate::ids::normalize_tag);
    let mut tx = ctx.db.snapshot().await?;
    let found = rows::recent(&mut tx, access.workspace_id(), tag.as_deref(), paging).await?;
    tx.commit().await?;
    Ok(found)
}

/// Direct live children of a live page.
pub(crate) async fn children(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<Vec<PageSummary>> {
    let mut conn = ctx.db.pool.acquire().await?;
    let row = rows::live(&mut conn, access.workspace_id(), slug).await?;
    rows::live_children(&mut conn, access.workspace_id(), row.id).await
}

/// Trashed pages, most recently trashed first.
pub(crate) async fn trash(ctx: &Ctx, access: &Access, paging: Paging) -> Result<(Vec<TrashEntry>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let found = rows::trashed(&mut tx, access.workspace_id(), paging).await?;
    tx.commit().await?;
    Ok(found)
}

/// A trashed page with its markdown (404 when no such page is in the trash).
pub(crate) async fn trashed_page(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<TrashedPage> {
    let mut tx = ctx.db.snapshot().await?;
    let ws = access.workspace_id();
    let row = rows::find(&mut tx, ws, slug, State::Trashed).await?;
    let entry = rows::trashed_one(&mut tx, ws, slug).await?;
    tx.commit().await?;
    match (row, entry) {
        (Some(row), Some(entry)) => Ok(TrashedPage { entry, content: row.content }),
        _ => Err(Error::trash_entry_not_found(slug)),
    }
}
