//! Reads of pages, all from the database index. `/api/pages/{slug}…` routes see live
//! pages only; trashed pages are seen through the trash.

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe, Row as _};

use super::{Actor, Page, PageRef, PageSummary, PageView, TrashEntry, TreeNode};
use crate::core::Ctx;
use crate::core::accounts::User;
use crate::core::workspaces::{self, Access};
use crate::error::{Error, Result};
use crate::markdown;

/// A page's index row.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: i64,
    pub uid: String,
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parent_id: Option<i64>,
    pub parent_slug: Option<String>,
    pub parent_uid: Option<String>,
    pub revision: String,
    pub created_at: String,
    pub updated_at: String,
    pub updated_by: Actor,
    pub deleted_at: Option<String>,
    pub deleted_by: Option<Actor>,
}

const ROW_COLUMNS: &str = "SELECT p.id, p.uid, p.slug, p.title, p.content, p.parent_id, pp.slug AS parent_slug, \
     pp.uid AS parent_uid, p.revision, p.created_at, p.updated_at, p.updated_by, \
     COALESCE(u.name, '') AS updated_by_name, p.deleted_at, p.deleted_by, COALESCE(d.name, '') AS deleted_by_name";
const ROW_FROM: &str = "FROM pages p LEFT JOIN pages pp ON pp.id = p.parent_id \
     LEFT JOIN users u ON u.id = p.updated_by LEFT JOIN users d ON d.id = p.deleted_by";

fn row_from(r: &AnyRow) -> Result<Row> {
    let deleted_by: Option<i64> = r.try_get("deleted_by")?;
    Ok(Row {
        id: r.try_get("id")?,
        uid: r.try_get::<Option<String>, _>("uid")?.unwrap_or_default(),
        slug: r.try_get("slug")?,
        title: r.try_get("title")?,
        content: r.try_get("content")?,
        parent_id: r.try_get("parent_id")?,
        parent_slug: r.try_get("parent_slug")?,
        parent_uid: r.try_get("parent_uid")?,
        revision: r.try_get("revision")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        updated_by: Actor {
            id: r.try_get::<Option<i64>, _>("updated_by")?.unwrap_or_default(),
            name: r.try_get("updated_by_name")?,
        },
        deleted_at: r.try_get("deleted_at")?,
        deleted_by: deleted_by.map(|id| Actor { id, name: r.try_get("deleted_by_name").unwrap_or_default() }),
    })
}

pub fn page_not_found(slug: &str) -> Error {
    Error::not_found("page_not_found", format!("no page '{slug}'"))
}

/// Which rows a lookup may answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum State {
    Live,
    Trashed,
    Any,
}

pub async fn find_row(conn: &mut AnyConnection, ws_id: i64, slug: &str, state: State) -> Result<Option<Row>> {
    let filter = match state {
        State::Live => " AND p.deleted_at IS NULL",
        State::Trashed => " AND p.deleted_at IS NOT NULL",
        State::Any => "",
    };
    let sql = format!("{ROW_COLUMNS} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2{filter}");
    let row = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    row.as_ref().map(row_from).transpose()
}

pub async fn live_row(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Row> {
    find_row(conn, ws_id, slug, State::Live).await?.ok_or_else(|| page_not_found(slug))
}

pub async fn tags_of(conn: &mut AnyConnection, page_id: i64) -> Result<Vec<String>> {
    let mut tags: Vec<String> =
        sqlx::query_scalar("SELECT tag FROM page_tags WHERE page_id = $1").bind(page_id).fetch_all(&mut *conn).await?;
    tags.sort_unstable();
    Ok(tags)
}

pub async fn links_of(conn: &mut AnyConnection, page_id: i64) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT target FROM page_links WHERE page_id = $1 ORDER BY position")
        .bind(page_id)
        .fetch_all(&mut *conn)
        .await?)
}

pub async fn page_from_row(conn: &mut AnyConnection, access: &Access, row: Row) -> Result<Page> {
    let tags = tags_of(conn, row.id).await?;
    let links = links_of(conn, row.id).await?;
    Ok(row.into_page(tags, links, &access.slug))
}

impl Row {
    fn into_page(self, tags: Vec<String>, links: Vec<String>, workspace: &str) -> Page {
        Page {
            slug: self.slug,
            title: self.title,
            content: self.content,
            parent: self.parent_slug,
            tags,
            links,
            revision: self.revision,
            created_at: self.created_at,
            updated_at: self.updated_at,
            updated_by: self.updated_by,
            workspace: workspace.to_owned(),
        }
    }
}

/// Separates aggregated tags and links (neither can contain it).
const SEP: &str = "\u{1f}";

fn split_list(joined: Option<String>) -> Vec<String> {
    joined.map(|j| j.split(SEP).map(str::to_owned).collect()).unwrap_or_default()
}

/// Tags and links of `p`, aggregated in the row query itself.
const AGGREGATES: &str = "(SELECT string_agg(t.tag, $3 ORDER BY t.tag) FROM page_tags t WHERE t.page_id = p.id) AS tags, \
     (SELECT string_agg(l.target, $3 ORDER BY l.position) FROM page_links l WHERE l.page_id = p.id) AS links";

fn page_from_aggregated(r: &AnyRow, workspace: &str) -> Result<Page> {
    let mut tags = split_list(r.try_get("tags")?);
    // Byte order, as a save answers them (PostgreSQL's collation may order otherwise).
    tags.sort_unstable();
    let links = split_list(r.try_get("links")?);
    Ok(row_from(r)?.into_page(tags, links, workspace))
}

/// One live page of a workspace the caller already has access to, in one query.
pub async fn get(ctx: &Ctx, access: &Access, slug: &str) -> Result<Page> {
    let sql = format!(
        "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2 AND p.deleted_at IS NULL"
    );
    let r = sqlx::query(AssertSqlSafe(sql))
        .bind(access.workspace_id)
        .bind(slug)
        .bind(SEP)
        .fetch_optional(&ctx.db.pool)
        .await?
        .ok_or_else(|| page_not_found(slug))?;
    page_from_aggregated(&r, &access.slug)
}

/// The hot read path: one query checks membership and reads the page. Only on a miss
/// does a second query tell a hidden workspace (404 workspace) from a missing page.
pub async fn get_visible(ctx: &Ctx, user: &User, ws: Option<&str>, slug: &str) -> Result<Page> {
    if let Some(ws) = ws.or(user.default_workspace.as_deref()) {
        let sql = format!(
            "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} JOIN workspaces w ON w.id = p.workspace_id \
             JOIN memberships m ON m.workspace_id = p.workspace_id AND m.user_id = $4 \
             WHERE w.slug = $1 AND p.slug = $2 AND p.deleted_at IS NULL"
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(ws)
            .bind(slug)
            .bind(SEP)
            .bind(user.id)
            .fetch_optional(&ctx.db.pool)
            .await?;
        if let Some(r) = row {
            return page_from_aggregated(&r, ws);
        }
    }
    workspaces::access_or_default(ctx, user, ws).await?;
    Err(page_not_found(slug))
}

/// The page tree of live pages, children ordered by title.
pub async fn tree(ctx: &Ctx, access: &Access) -> Result<Vec<TreeNode>> {
    let rows: Vec<(i64, String, String, Option<i64>)> =
        sqlx::query_as("SELECT id, slug, title, parent_id FROM pages WHERE workspace_id = $1 AND deleted_at IS NULL")
            .bind(access.workspace_id)
            .fetch_all(&ctx.db.pool)
            .await?;
    let live: std::collections::HashSet<i64> = rows.iter().map(|r| r.0).collect();
    let mut by_parent: HashMap<Option<i64>, Vec<(i64, String, String)>> = HashMap::new();
    for (id, slug, title, parent) in rows {
        // A parent that is not live (cannot normally happen) puts the page at the top.
        let parent = parent.filter(|p| live.contains(p));
        by_parent.entry(parent).or_default().push((id, slug, title));
    }
    fn build(parent: Option<i64>, by_parent: &mut HashMap<Option<i64>, Vec<(i64, String, String)>>) -> Vec<TreeNode> {
        let mut kids = by_parent.remove(&parent).unwrap_or_default();
        kids.sort_by(|a, b| a.2.to_lowercase().cmp(&b.2.to_lowercase()).then(a.1.cmp(&b.1)));
        kids.into_iter()
            .map(|(id, slug, title)| TreeNode { slug, title, children: build(Some(id), by_parent) })
            .collect()
    }
    Ok(build(None, &mut by_parent))
}

const SUMMARY_SELECT: &str = "SELECT p.id, p.slug, p.title, pp.slug AS parent_slug, p.revision, p.created_at, \
     p.updated_at, p.updated_by, COALESCE(u.name, '') AS updated_by_name \
     FROM pages p LEFT JOIN pages pp ON pp.id = p.parent_id LEFT JOIN users u ON u.id = p.updated_by";

async fn summaries(conn: &mut AnyConnection, rows: Vec<AnyRow>) -> Result<Vec<PageSummary>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
    let mut tags: HashMap<i64, Vec<String>> = HashMap::new();
    if !ids.is_empty() {
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        // Safe: the list holds integers only.
        let sql = format!("SELECT page_id, tag FROM page_tags WHERE page_id IN ({list}) ORDER BY tag");
        let pairs: Vec<(i64, String)> = sqlx::query_as(AssertSqlSafe(sql)).fetch_all(&mut *conn).await?;
        for (id, tag) in pairs {
            tags.entry(id).or_default().push(tag);
        }
    }
    rows.iter()
        .map(|r| {
            let id: i64 = r.try_get("id")?;
            Ok(PageSummary {
                slug: r.try_get("slug")?,
                title: r.try_get("title")?,
                parent: r.try_get("parent_slug")?,
                tags: tags.remove(&id).unwrap_or_default(),
                revision: r.try_get("revision")?,
                created_at: r.try_get("created_at")?,
                updated_at: r.try_get("updated_at")?,
                updated_by: Actor {
                    id: r.try_get::<Option<i64>, _>("updated_by")?.unwrap_or_default(),
                    name: r.try_get("updated_by_name")?,
                },
            })
        })
        .collect()
}

/// Live pages, most recently updated first, optionally with one tag.
pub async fn notes(
    ctx: &Ctx,
    access: &Access,
    tag: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<PageSummary>, i64)> {
    let mut conn = ctx.db.pool.acquire().await?;
    let tag_filter = " AND EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $2)";
    let (rows, total) = match tag {
        Some(tag) => {
            let tag = tag.trim().trim_start_matches('#').to_lowercase();
            let sql = format!(
                "{SUMMARY_SELECT} WHERE p.workspace_id = $1 AND p.deleted_at IS NULL{tag_filter} \
                 ORDER BY p.updated_at DESC, p.slug LIMIT $3 OFFSET $4"
            );
            let rows = sqlx::query(AssertSqlSafe(sql))
                .bind(access.workspace_id)
                .bind(&tag)
                .bind(limit)
                .bind(offset)
                .fetch_all(&mut *conn)
                .await?;
            let sql =
                format!("SELECT COUNT(*) FROM pages p WHERE p.workspace_id = $1 AND p.deleted_at IS NULL{tag_filter}");
            let total: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(access.workspace_id)
                .bind(&tag)
                .fetch_one(&mut *conn)
                .await?;
            (rows, total)
        }
        None => {
            let sql = format!(
                "{SUMMARY_SELECT} WHERE p.workspace_id = $1 AND p.deleted_at IS NULL \
                 ORDER BY p.updated_at DESC, p.slug LIMIT $2 OFFSET $3"
            );
            let rows = sqlx::query(AssertSqlSafe(sql))
                .bind(access.workspace_id)
                .bind(limit)
                .bind(offset)
                .fetch_all(&mut *conn)
                .await?;
            let total: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM pages WHERE workspace_id = $1 AND deleted_at IS NULL")
                    .bind(access.workspace_id)
                    .fetch_one(&mut *conn)
                    .await?;
            (rows, total)
        }
    };
    Ok((summaries(&mut conn, rows).await?, total))
}

async fn child_refs(conn: &mut AnyConnection, ws_id: i64, page_id: i64) -> Result<Vec<PageRef>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT slug, title FROM pages WHERE workspace_id = $1 AND parent_id = $2 AND deleted_at IS NULL",
    )
    .bind(ws_id)
    .bind(page_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut refs: Vec<PageRef> = rows.into_iter().map(|(slug, title)| PageRef { slug, title }).collect();
    refs.sort_by(|a, b| a.title.to_lowercase().cmp(&b.title.to_lowercase()).then(a.slug.cmp(&b.slug)));
    Ok(refs)
}

/// Direct live children of a live page.
pub async fn children(ctx: &Ctx, access: &Access, slug: &str) -> Result<Vec<PageSummary>> {
    let mut conn = ctx.db.pool.acquire().await?;
    let row = live_row(&mut conn, access.workspace_id, slug).await?;
    let sql = format!("{SUMMARY_SELECT} WHERE p.workspace_id = $1 AND p.parent_id = $2 AND p.deleted_at IS NULL");
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(access.workspace_id).bind(row.id).fetch_all(&mut *conn).await?;
    let mut items = summaries(&mut conn, rows).await?;
    items.sort_by(|a, b| a.title.to_lowercase().cmp(&b.title.to_lowercase()).then(a.slug.cmp(&b.slug)));
    Ok(items)
}

/// Live pages whose wikilinks point at `slug`.
pub async fn backlinks(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Vec<PageRef>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT p.slug, p.title FROM page_links l JOIN pages p ON p.id = l.page_id \
         WHERE l.workspace_id = $1 AND l.target = $2 AND p.deleted_at IS NULL AND p.slug <> $2 ORDER BY p.slug",
    )
    .bind(ws_id)
    .bind(slug)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(slug, title)| PageRef { slug, title }).collect())
}

/// The page with its breadcrumbs, children, backlinks and outline.
pub async fn view(ctx: &Ctx, access: &Access, slug: &str) -> Result<PageView> {
    let mut conn = ctx.db.pool.acquire().await?;
    let ws = access.workspace_id;
    let row = live_row(&mut conn, ws, slug).await?;
    let mut breadcrumbs = Vec::new();
    let mut next = row.parent_id;
    // Bounded: a corrupted cycle cannot loop forever.
    for _ in 0..256 {
        let Some(id) = next else { break };
        let parent: Option<(String, String, Option<i64>)> =
            sqlx::query_as("SELECT slug, title, parent_id FROM pages WHERE id = $1 AND deleted_at IS NULL")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        let Some((slug, title, parent_id)) = parent else { break };
        breadcrumbs.push(PageRef { slug, title });
        next = parent_id;
    }
    breadcrumbs.reverse();
    let children = child_refs(&mut conn, ws, row.id).await?;
    let backlinks = backlinks(&mut conn, ws, &row.slug).await?;
    let headings = markdown::parse(&row.content)
        .headings
        .into_iter()
        .map(|h| super::Heading { level: h.level, text: h.text, anchor: h.anchor })
        .collect();
    let page = page_from_row(&mut conn, access, row).await?;
    Ok(PageView { page, breadcrumbs, children, backlinks, headings })
}

/// Trashed pages, most recently trashed first.
pub async fn trash(ctx: &Ctx, access: &Access, limit: i64, offset: i64) -> Result<(Vec<TrashEntry>, i64)> {
    let rows: Vec<(String, String, String, Option<i64>, String)> = sqlx::query_as(
        "SELECT p.slug, p.title, p.deleted_at, p.deleted_by, COALESCE(u.name, '') FROM pages p \
         LEFT JOIN users u ON u.id = p.deleted_by WHERE p.workspace_id = $1 AND p.deleted_at IS NOT NULL \
         ORDER BY p.deleted_at DESC, p.slug LIMIT $2 OFFSET $3",
    )
    .bind(access.workspace_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&ctx.db.pool)
    .await?;
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM pages WHERE workspace_id = $1 AND deleted_at IS NOT NULL")
            .bind(access.workspace_id)
            .fetch_one(&ctx.db.pool)
            .await?;
    let items = rows
        .into_iter()
        .map(|(slug, title, deleted_at, by, name)| TrashEntry {
            slug,
            title,
            deleted_at,
            deleted_by: Actor { id: by.unwrap_or_default(), name },
        })
        .collect();
    Ok((items, total))
}
