//! Every SQL statement on pages, revisions, tags, links and workspace heads — the index
//! that `reindex` can rebuild from the repositories. The operations in `read`, `ops`,
//! `save` and `history` decide; this module only reads and writes rows.
//!
//! Statements run on a connection the caller passes: the writer's own (under the
//! workspace lock), a pooled one for reads, or a transaction's.

pub mod aliases;
mod derived;

pub use derived::*;

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::json;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe, Row as _};

use super::search_text::{self, search_body, search_body_of};
use super::stored;
use super::{Actor, Page, PageRef, PageSummary, TrashEntry};
use crate::core::paging::Paging;
use crate::error::{Error, Result};
use crate::markdown::{self, Parsed};
use crate::store::{self, Backend, Script, Value};
use crate::text;

/// How far up or down a parent chain any walk goes. Trees are far shallower; the bound
/// only keeps a corrupted cycle from recursing forever.
const MAX_DEPTH: i64 = 4096;

/// Separates aggregated tags and links (neither can contain it).
const SEP: &str = "\u{1f}";

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
    pub deleted_by: Option<i64>,
    pub position: Option<i64>,
}

const ROW_COLUMNS: &str = "SELECT p.id, p.uid, p.slug, p.title, p.content, p.content_z, p.parent_id, pp.slug AS parent_slug, \
     pp.uid AS parent_uid, p.revision, p.created_at, p.updated_at, p.updated_by, \
     COALESCE(u.name, '') AS updated_by_name, p.deleted_at, p.deleted_by, p.position";
const ROW_FROM: &str =
    "FROM pages p LEFT JOIN pages pp ON pp.id = p.parent_id LEFT JOIN users u ON u.id = p.updated_by";
/// Tags and links of `p`, aggregated in the row query itself, joined by [`SEP`] (a
/// literal of the statement, so the query binds no parameter for it).
const AGGREGATES: &str = "(SELECT string_agg(t.tag, '\u{1f}') FROM page_tags t WHERE t.page_id = p.id) AS tags, \
     (SELECT string_agg(l.target, '\u{1f}' ORDER BY l.position) FROM page_links l WHERE l.page_id = p.id) AS links";

fn row_from(r: &AnyRow) -> Result<Row> {
    Ok(Row {
        id: r.try_get("id")?,
        uid: r.try_get::<Option<String>, _>("uid")?.unwrap_or_default(),
        slug: r.try_get("slug")?,
        title: r.try_get("title")?,
        content: stored::content_of(r)?,
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
        deleted_by: r.try_get("deleted_by")?,
        position: r.try_get("position")?,
    })
}

impl Row {
    pub fn into_page(self, mut tags: Vec<String>, links: Vec<String>, workspace: &str) -> Page {
        // Byte order, as a save answers them (PostgreSQL's collation may order otherwise).
        tags.sort_unstable();
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
            position: self.position,
        }
    }
}

/// Siblings are listed in the order people gave them (pages with a `position`, by it),
/// then by title in natural order (case-insensitive, numbers by value: Sprint 2 before
/// Sprint 10), then slug. Each argument: (position, title, slug).
pub fn tree_order(a: (Option<i64>, &str, &str), b: (Option<i64>, &str, &str)) -> Ordering {
    let placed = |p: Option<i64>| (p.is_none(), p.unwrap_or_default());
    placed(a.0).cmp(&placed(b.0)).then_with(|| natural(a.1, b.1)).then_with(|| a.2.cmp(b.2))
}

/// Natural order of titles: runs of ASCII digits compare by value (then by length, so
/// `07` follows `7`), everything else case-insensitively by character. The web app sorts
/// with `Intl.Collator`'s numeric option, which agrees on every title of letters, digits,
/// spaces and punctuation.
fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) =
        (a.chars().flat_map(char::to_lowercase).peekable(), b.chars().flat_map(char::to_lowercase).peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |it: &mut std::iter::Peekable<_>| {
                    let mut digits = String::new();
                    while let Some(c) = it.next_if(|c: &char| c.is_ascii_digit()) {
                        digits.push(c);
                    }
                    digits
                };
                let (m, n) = (run(&mut x), run(&mut y));
                let (mt, nt) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
                let by_value = mt.len().cmp(&nt.len()).then_with(|| mt.cmp(nt)).then_with(|| m.len().cmp(&n.len()));
                if by_value != Ordering::Equal {
                    return by_value;
                }
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x.next();
                y.next();
            }
        }
    }
}

fn split_list(joined: Option<String>) -> Vec<String> {
    joined.map(|j| j.split(SEP).map(str::to_owned).collect()).unwrap_or_default()
}

/// Where a page's row is: its own id and its workspace's.
#[derive(Debug, Clone, Copy)]
pub struct PageIds {
    pub page: i64,
    pub workspace: i64,
}

// --- Reading pages ----------------------------------------------------------------------

/// Which rows a lookup may answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum State {
    Live,
    Trashed,
    Any,
}

impl State {
    fn filter(self) -> &'static str {
        match self {
            State::Live => " AND p.deleted_at IS NULL",
            State::Trashed => " AND p.deleted_at IS NOT NULL",
            State::Any => "",
        }
    }
}

pub async fn find(conn: &mut AnyConnection, ws_id: i64, slug: &str, state: State) -> Result<Option<Row>> {
    let sql = format!("{ROW_COLUMNS} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2{}", state.filter());
    let row = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    row.as_ref().map(row_from).transpose()
}

/// A live page's row; or 308 for an old slug of a live page, else 404 (`aliases::missing`).
pub async fn live(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Row> {
    match find(conn, ws_id, slug, State::Live).await? {
        Some(row) => Ok(row),
        None => Err(aliases::missing(conn, ws_id, slug).await),
    }
}

/// The tags and links a page's rows hold, as read with its row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lists {
    pub tags: Vec<String>,
    pub links: Vec<String>,
}

impl Lists {
    /// Whether the rows hold exactly `tags` (in any order) and exactly `links` (in
    /// order): which of the two a save may leave as they are.
    fn hold(&self, tags: &[String], links: &[&str]) -> (bool, bool) {
        // A value holding the separator would not read back apart: never the same.
        let clean = |v: &&str| !v.contains(SEP);
        let mut had: Vec<&str> = self.tags.iter().map(String::as_str).collect();
        let mut want: Vec<&str> = tags.iter().map(String::as_str).collect();
        had.sort_unstable();
        want.sort_unstable();
        let same_tags = want.iter().all(clean) && had == want;
        let same_links = links.iter().all(clean) && self.links.iter().map(String::as_str).eq(links.iter().copied());
        (same_tags, same_links)
    }
}

/// A page's row with the tags and links its rows hold, in one query: what an operation
/// that commits the page reads, so that its save writes the lists again only when they
/// change.
pub async fn find_listed(
    conn: &mut AnyConnection,
    ws_id: i64,
    slug: &str,
    state: State,
) -> Result<Option<(Row, Lists)>> {
    let sql =
        format!("{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2{}", state.filter());
    let Some(row) = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await? else {
        return Ok(None);
    };
    Ok(Some((row_from(&row)?, lists_from(&row)?)))
}

/// The lists a row read with [`AGGREGATES`] holds.
fn lists_from(r: &AnyRow) -> Result<Lists> {
    Ok(Lists { tags: split_list(r.try_get("tags")?), links: split_list(r.try_get("links")?) })
}

/// [`find_listed`] of several pages at once, in whatever state, by slug: what a group of
/// queued saves reads, in one query (`group`).
pub async fn find_listed_many(
    conn: &mut AnyConnection,
    ws_id: i64,
    slugs: &[&str],
) -> Result<HashMap<String, (Row, Lists)>> {
    let list = store::json_strings(Backend::of(conn), "$2");
    let sql = format!(
        "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug IN (SELECT j.value FROM {list})"
    );
    let found =
        sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(json!(slugs).to_string()).fetch_all(&mut *conn).await?;
    found
        .iter()
        .map(|r| {
            let row = row_from(r)?;
            Ok((row.slug.clone(), (row, lists_from(r)?)))
        })
        .collect()
}

/// [`find_listed`] of a live page; or 308 / 404 as [`live`] answers.
pub async fn live_listed(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<(Row, Lists)> {
    match find_listed(conn, ws_id, slug, State::Live).await? {
        Some(found) => Ok(found),
        None => Err(aliases::missing(conn, ws_id, slug).await),
    }
}

/// `(id, slug, title, parent_id)` of every live page of a workspace (tree and export).
pub async fn live_tree(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<TreeRow>> {
    Ok(sqlx::query_as(
        "SELECT id, slug, title, parent_id, position FROM pages WHERE workspace_id = $1 AND deleted_at IS NULL",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// A live page as the tree needs it: id, slug, title, parent id, position.
pub type TreeRow = (i64, String, String, Option<i64>, Option<i64>);

/// The live pages under the same parent as a page (`parent_id`; None: the top level),
/// itself included, in tree order, each with the tags and links its rows hold.
pub async fn siblings(conn: &mut AnyConnection, ws_id: i64, parent_id: Option<i64>) -> Result<Vec<(Row, Lists)>> {
    let sql = format!(
        "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} \
         WHERE p.workspace_id = $1 AND p.parent_id IS NOT DISTINCT FROM $2 AND p.deleted_at IS NULL"
    );
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(parent_id).fetch_all(&mut *conn).await?;
    let mut out = rows.iter().map(|r| Ok((row_from(r)?, lists_from(r)?))).collect::<Result<Vec<_>>>()?;
    out.sort_by(|(a, _), (b, _)| tree_order((a.position, &a.title, &a.slug), (b.position, &b.title, &b.slug)));
    Ok(out)
}

/// The live ancestors of a page, from the top-level one down to its parent.
pub async fn ancestors(conn: &mut AnyConnection, page_id: i64) -> Result<Vec<(i64, PageRef)>> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "WITH RECURSIVE up(id, slug, title, parent_id, depth) AS ( \
           SELECT p.id, p.slug, p.title, p.parent_id, 1 FROM pages p \
            WHERE p.id = (SELECT c.parent_id FROM pages c WHERE c.id = $1) AND p.deleted_at IS NULL \
           UNION ALL \
           SELECT p.id, p.slug, p.title, p.parent_id, up.depth + 1 FROM pages p JOIN up ON p.id = up.parent_id \
            WHERE p.deleted_at IS NULL AND up.depth < $2) \
         SELECT id, slug, title FROM up ORDER BY depth DESC",
    )
    .bind(page_id)
    .bind(MAX_DEPTH)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(id, slug, title)| (id, PageRef { slug, title })).collect())
}

/// Which descendants [`descendants`] walks through.
pub enum Among<'a> {
    /// Live pages.
    Live,
    /// Pages trashed by the same delete as the page: its `deleted_at` and `deleted_by`.
    TrashedWith(&'a str, Option<i64>),
}

/// The descendants of a page among `among`, nearest first (children, then
/// grandchildren…), each with the tags and links its rows hold (see [`find_listed`]).
pub async fn descendants(
    conn: &mut AnyConnection,
    ws_id: i64,
    page_id: i64,
    among: Among<'_>,
) -> Result<Vec<(Row, Lists)>> {
    let member = |t: &str| match among {
        Among::Live => format!("{t}.deleted_at IS NULL"),
        Among::TrashedWith(..) => format!("{t}.deleted_at = $4 AND {t}.deleted_by IS NOT DISTINCT FROM $5"),
    };
    let (first, next) = (member("pages"), member("c"));
    let sql = format!(
        "WITH RECURSIVE down(id, depth) AS ( \
           SELECT id, 1 FROM pages WHERE workspace_id = $1 AND parent_id = $2 AND {first} \
           UNION ALL \
           SELECT c.id, down.depth + 1 FROM pages c JOIN down ON c.parent_id = down.id \
            WHERE {next} AND down.depth < $3) \
         {ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} JOIN down ON down.id = p.id ORDER BY down.depth, p.id"
    );
    let mut query = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(page_id).bind(MAX_DEPTH);
    if let Among::TrashedWith(at, by) = among {
        query = query.bind(at).bind(by);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let row = row_from(r)?;
        // A corrupted cycle would list a page twice.
        if seen.insert(row.id) {
            out.push((row, lists_from(r)?));
        }
    }
    Ok(out)
}

/// True when the page exists and is not in the trash.
pub async fn is_live(conn: &mut AnyConnection, page_id: i64) -> Result<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pages WHERE id = $1 AND deleted_at IS NULL")
        .bind(page_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(n > 0)
}

/// Other live pages whose wikilinks point at the page `(page_id, slug)`, by slug.
pub async fn backlinks(conn: &mut AnyConnection, ws_id: i64, page_id: i64, slug: &str) -> Result<Vec<PageRef>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT DISTINCT p.slug, p.title FROM page_links l JOIN pages p ON p.id = l.page_id \
         WHERE l.workspace_id = $1 AND l.target = $2 AND p.deleted_at IS NULL AND p.id <> $3 ORDER BY p.slug",
    )
    .bind(ws_id)
    .bind(slug)
    .bind(page_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(slug, title)| PageRef { slug, title }).collect())
}

/// Tags of the live pages of a workspace with how many pages carry each, most used
/// first, then by name.
pub async fn tag_counts(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT t.tag, COUNT(*) AS n FROM page_tags t JOIN pages p ON p.id = t.page_id \
         WHERE p.workspace_id = $1 AND p.deleted_at IS NULL GROUP BY t.tag ORDER BY n DESC, t.tag",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// `(workspace slug, page slug, title, updated_at)` of the live pages of workspaces
/// `ws_ids`, by workspace then slug; and how many there are.
pub async fn pages_of(
    conn: &mut AnyConnection,
    ws_ids: &[i64],
    paging: Paging,
) -> Result<(Vec<(String, String, String, String)>, i64)> {
    let list = store::json_strings(Backend::of(conn), "$1");
    let from = format!(
        "FROM pages p JOIN workspaces w ON w.id = p.workspace_id \
         WHERE p.deleted_at IS NULL AND p.workspace_id IN (SELECT CAST(j.value AS BIGINT) FROM {list})"
    );
    let window =
        format!("SELECT w.slug, p.slug, p.title, p.updated_at {from} ORDER BY w.slug, p.slug LIMIT $2 OFFSET $3");
    let count = format!("SELECT COUNT(*) {from}");
    paging.window(conn, AssertSqlSafe(window), AssertSqlSafe(count), json!(ws_ids).to_string()).await
}

/// Slugs of live pages of a workspace that start with `prefix`, in order, at most
/// `limit`; and how many match.
pub async fn slugs_starting(
    conn: &mut AnyConnection,
    ws_id: i64,
    prefix: &str,
    limit: i64,
) -> Result<(Vec<String>, i64)> {
    // By characters on both engines (slugs may be of any script; a byte range would
    // depend on PostgreSQL's collation).
    let filter = "workspace_id = $1 AND deleted_at IS NULL AND SUBSTR(slug, 1, CAST($2 AS INTEGER)) = $3";
    let len = prefix.chars().count() as i64;
    let items =
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT slug FROM pages WHERE {filter} ORDER BY slug LIMIT $4")))
            .bind(ws_id)
            .bind(len)
            .bind(prefix)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?;
    let total = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM pages WHERE {filter}")))
        .bind(ws_id)
        .bind(len)
        .bind(prefix)
        .fetch_one(&mut *conn)
        .await?;
    Ok((items, total))
}

const SUMMARY_SELECT: &str = "SELECT p.id, p.slug, p.title, pp.slug AS parent_slug, p.revision, p.created_at, \
     p.updated_at, p.updated_by, COALESCE(u.name, '') AS updated_by_name, p.position \
     FROM pages p LEFT JOIN pages pp ON pp.id = p.parent_id LEFT JOIN users u ON u.id = p.updated_by";

async fn summaries(conn: &mut AnyConnection, rows: Vec<AnyRow>) -> Result<Vec<PageSummary>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
    let mut tags: HashMap<i64, Vec<String>> = HashMap::new();
    if !ids.is_empty() {
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        // Safe: the list holds integers only.
        let sql = format!("SELECT page_id, tag FROM page_tags WHERE page_id IN ({list})");
        let pairs: Vec<(i64, String)> = sqlx::query_as(AssertSqlSafe(sql)).fetch_all(&mut *conn).await?;
        for (id, tag) in pairs {
            tags.entry(id).or_default().push(tag);
        }
    }
    rows.iter()
        .map(|r| {
            let id: i64 = r.try_get("id")?;
            let mut tags = tags.remove(&id).unwrap_or_default();
            tags.sort_unstable();
            Ok(PageSummary {
                slug: r.try_get("slug")?,
                title: r.try_get("title")?,
                parent: r.try_get("parent_slug")?,
                tags,
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

/// Live pages, most recently updated first, optionally only those with `tag`
/// (normalised already); and how many there are.
pub async fn recent(
    conn: &mut AnyConnection,
    ws_id: i64,
    tag: Option<&str>,
    paging: Paging,
) -> Result<(Vec<PageSummary>, i64)> {
    // `$2` is the tag, or NULL for all pages.
    let filter = "p.workspace_id = $1 AND p.deleted_at IS NULL \
         AND ($2 IS NULL OR EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $2))";
    let sql = format!("{SUMMARY_SELECT} WHERE {filter} ORDER BY p.updated_at DESC, p.slug LIMIT $3 OFFSET $4");
    let rows = sqlx::query(AssertSqlSafe(sql))
        .bind(ws_id)
        .bind(tag)
        .bind(paging.limit)
        .bind(paging.offset)
        .fetch_all(&mut *conn)
        .await?;
    let sql = format!("SELECT COUNT(*) FROM pages p WHERE {filter}");
    let total: i64 = sqlx::query_scalar(AssertSqlSafe(sql)).bind(ws_id).bind(tag).fetch_one(&mut *conn).await?;
    Ok((summaries(conn, rows).await?, total))
}

/// Direct live children of a page, in tree order.
pub async fn live_children(conn: &mut AnyConnection, ws_id: i64, page_id: i64) -> Result<Vec<PageSummary>> {
    let sql = format!("{SUMMARY_SELECT} WHERE p.workspace_id = $1 AND p.parent_id = $2 AND p.deleted_at IS NULL");
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(ws_id).bind(page_id).fetch_all(&mut *conn).await?;
    // Each row's sort key read once, not at every comparison.
    let key = |r: &AnyRow| -> Result<(Option<i64>, String, String)> {
        Ok((r.try_get("position")?, r.try_get("title")?, r.try_get("slug")?))
    };
    let mut keyed = rows.into_iter().map(|r| Ok((key(&r)?, r))).collect::<Result<Vec<_>>>()?;
    keyed.sort_by(|(a, _), (b, _)| tree_order((a.0, &a.1, &a.2), (b.0, &b.1, &b.2)));
    summaries(conn, keyed.into_iter().map(|(_, r)| r).collect()).await
}

/// What pages trashed by one delete share: the time and the user of that delete.
pub fn trash_group(deleted_at: &str, deleted_by: Option<i64>) -> String {
    format!("{deleted_at}/{}", deleted_by.unwrap_or_default())
}

const TRASH_SELECT: &str = "SELECT p.slug, p.title, p.deleted_at, p.deleted_by, COALESCE(u.name, ''), pp.slug FROM pages p \
     LEFT JOIN pages pp ON pp.id = p.parent_id LEFT JOIN users u ON u.id = p.deleted_by \
     WHERE p.workspace_id = $1 AND p.deleted_at IS NOT NULL";

type TrashTuple = (String, String, String, Option<i64>, String, Option<String>);

fn trash_entry((slug, title, deleted_at, by, name, parent): TrashTuple) -> TrashEntry {
    TrashEntry {
        group: trash_group(&deleted_at, by),
        slug,
        title,
        deleted_at,
        deleted_by: Actor { id: by.unwrap_or_default(), name },
        parent,
    }
}

/// Trashed pages, most recently trashed first; and how many there are.
pub async fn trashed(conn: &mut AnyConnection, ws_id: i64, paging: Paging) -> Result<(Vec<TrashEntry>, i64)> {
    let sql = format!("{TRASH_SELECT} ORDER BY p.deleted_at DESC, p.slug LIMIT $2 OFFSET $3");
    let count = "SELECT COUNT(*) FROM pages WHERE workspace_id = $1 AND deleted_at IS NOT NULL";
    let (rows, total): (Vec<TrashTuple>, i64) = paging.window(conn, AssertSqlSafe(sql), count, ws_id).await?;
    Ok((rows.into_iter().map(trash_entry).collect(), total))
}

/// One trashed page's entry.
pub async fn trashed_one(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Option<TrashEntry>> {
    let sql = format!("{TRASH_SELECT} AND p.slug = $2");
    let row: Option<TrashTuple> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    Ok(row.map(trash_entry))
}

// --- Revisions --------------------------------------------------------------------------

/// One revision row of a page.
pub struct RevRow {
    pub id: i64,
    pub sha: String,
    pub path: String,
    pub blob: Option<String>,
    pub title: String,
    pub message: String,
    pub author: Actor,
    pub created_at: String,
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

/// The id a revision has now: `sha`, or what a history rewrite (a purge, an erasure)
/// made of it.
const NOW_SHA: &str = "COALESCE((SELECT new_sha FROM revision_aliases \
     WHERE workspace_id = (SELECT workspace_id FROM pages WHERE id = $1) AND old_sha = $2), $2)";

/// Revision `sha` of page `page_id`, if it is one of its revisions (by the id it had
/// before a history rewrite too).
pub async fn revision(conn: &mut AnyConnection, page_id: i64, sha: &str) -> Result<Option<RevRow>> {
    let sql = format!("{REV_SELECT} WHERE page_id = $1 AND sha = {NOW_SHA}");
    let t: Option<RevTuple> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(page_id).bind(sha.trim()).fetch_optional(&mut *conn).await?;
    Ok(t.map(rev))
}

/// The id revision `sha` of workspace `ws_id` has now (itself unless a history rewrite
/// replaced it).
pub async fn revision_now(conn: &mut AnyConnection, ws_id: i64, sha: &str) -> Result<String> {
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
pub async fn rename_revisions_in_tx(tx: &mut AnyConnection, ws_id: i64, renamed: &[(String, String)]) -> Result<()> {
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
pub async fn replace_revision_blob_in_tx(
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
pub async fn revision_before(conn: &mut AnyConnection, page_id: i64, r: &RevRow) -> Result<Option<RevRow>> {
    let sql = format!(
        "{REV_SELECT} WHERE page_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
         ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    let t: Option<RevTuple> = sqlx::query_as(AssertSqlSafe(sql))
        .bind(page_id)
        .bind(&r.created_at)
        .bind(r.id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(t.map(rev))
}

/// A page's revisions, newest first; and how many there are.
pub async fn revisions(conn: &mut AnyConnection, page_id: i64, paging: Paging) -> Result<(Vec<RevRow>, i64)> {
    let sql = format!("{REV_SELECT} WHERE page_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3");
    let count = "SELECT COUNT(*) FROM revisions WHERE page_id = $1";
    let (rows, total): (Vec<RevTuple>, i64) = paging.window(conn, AssertSqlSafe(sql), count, page_id).await?;
    Ok((rows.into_iter().map(rev).collect(), total))
}

// --- Writing the index (inside a save's or a reindex's transaction) ---------------------

/// A page's index row, as a save or `reindex` writes it.
pub struct IndexedPage {
    pub uid: String,
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parent_uid: Option<String>,
    pub path: String,
    pub revision: String,
    /// Used only when the row is new.
    pub created_at: String,
    pub created_by: i64,
    pub updated_at: String,
    pub updated_by: i64,
    /// When and by whom it was trashed; None for a live page.
    pub deleted: Option<(String, i64)>,
    /// `content` parsed, when the caller has it already.
    pub parsed: Option<Arc<Parsed>>,
    /// What the write may change of the row (the statement that writes it).
    pub write: RowWrite,
    /// The tags and links the row holds now, when the caller read them with it: a list
    /// that would be written the same again is left as it is.
    pub indexed: Option<Lists>,
    /// The page's place among its siblings, when the write sets it (None: left as it is).
    pub position: Option<Option<i64>>,
}

/// What a page's write may change of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowWrite {
    /// The row cannot exist yet (a page created with a new id): it has no tags or links
    /// to delete first.
    New,
    /// The row may exist, and any of its fields may change.
    Any,
    /// The row exists and keeps its slug, parent and trash state: an edit. Written by an
    /// `UPDATE` that leaves those columns out, because SQLite rewrites the entries of
    /// every index on a column its `SET` names, changed or not — three index pages fewer
    /// per edit (`(workspace_id, slug)`, `(workspace_id, parent_id)` and the search
    /// filter's).
    Content,
}

pub struct RevisionRow {
    pub sha: String,
    pub path: String,
    pub blob: Option<String>,
    pub action: String,
    pub title: String,
    pub message: String,
    pub author_id: Option<i64>,
    pub author_name: String,
    pub created_at: String,
}

/// Workspaces with page rows marked as missing from the full-text index (written by an
/// older release, restored from a backup, or left when the index was rebuilt empty):
/// the start-up check reindexes them. On SQLite a row with compressed markdown has no
/// search title by design (`stored`: the mark is for older releases); this release's
/// SQLite search file keeps its own count of what it has seen.
pub async fn workspaces_with_stale_search_text(conn: &mut AnyConnection) -> Result<Vec<i64>> {
    let sql = match Backend::of(conn) {
        Backend::Sqlite => "SELECT DISTINCT workspace_id FROM pages WHERE search_title = '' AND content_z IS NULL",
        Backend::Postgres => "SELECT DISTINCT workspace_id FROM pages WHERE search_title = ''",
    };
    Ok(sqlx::query_scalar(sql).fetch_all(&mut *conn).await?)
}

/// How many plain rows one maintenance pass compresses at most (one short transaction).
pub const COMPRESS_BATCH: i64 = 200;

/// SQLite: compresses the markdown of up to [`COMPRESS_BATCH`] rows that hold it plain
/// (written by an older release, or before this one compressed rows), as a save of this
/// release would keep it (`stored`). A row saved since it was read is left alone (its
/// save compressed it). Answers how many rows changed; 0 on PostgreSQL. The rows are
/// found through a partial index of the plain ones (`pages_plain_markdown_idx`), so a
/// pass that finds none reads nothing of the table.
pub async fn compress_plain_rows(pool: &sqlx::AnyPool) -> Result<usize> {
    let mut conn = pool.acquire().await?;
    if Backend::of(&conn) != Backend::Sqlite {
        return Ok(0);
    }
    let plain: Vec<(i64, String, i64)> =
        sqlx::query_as("SELECT id, content, index_seq FROM pages WHERE content <> '' AND content_z IS NULL LIMIT $1")
            .bind(COMPRESS_BATCH)
            .fetch_all(&mut *conn)
            .await?;
    if plain.is_empty() {
        return Ok(0);
    }
    // Compressed before the transaction: it holds SQLite's write lock.
    let packed: Vec<(i64, Vec<u8>, i64)> =
        plain.iter().map(|(id, content, seq)| Ok((*id, stored::pack(content)?, *seq))).collect::<Result<_>>()?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut changed = 0;
    for (id, packed, seq) in packed {
        changed += sqlx::query(
            "UPDATE pages SET content = '', content_z = $1, search_title = '' \
             WHERE id = $2 AND index_seq = $3 AND content_z IS NULL",
        )
        .bind(packed)
        .bind(id)
        .bind(seq)
        .execute(&mut *tx)
        .await?
        .rows_affected() as usize;
    }
    tx.commit().await?;
    Ok(changed)
}

/// The branch head the index has caught up with (compared at start-up).
pub async fn recorded_head(conn: &mut AnyConnection, ws_id: i64) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT head FROM workspace_heads WHERE workspace_id = $1")
        .bind(ws_id)
        .fetch_optional(&mut *conn)
        .await?)
}

const SET_HEAD: &str = "INSERT INTO workspace_heads (workspace_id, head) VALUES ($1, $2) \
     ON CONFLICT (workspace_id) DO UPDATE SET head = excluded.head";

pub async fn set_head_in_tx(tx: &mut AnyConnection, ws_id: i64, head: &str) -> Result<()> {
    sqlx::query(SET_HEAD).bind(ws_id).bind(head).execute(&mut *tx).await?;
    Ok(())
}

/// [`set_head_in_tx`] as a statement of a script.
pub fn set_head(script: &mut Script, ws_id: i64, head: &str) {
    script.push(SET_HEAD, vec![ws_id.into(), head.into()]);
}

/// Bumps workspace `$1`'s change counter (`index_seqs.seq`), creating it at 1.
const BUMP_INDEX_SEQ: &str = "INSERT INTO index_seqs (workspace_id, seq, reset_at, vector_seq) VALUES ($1, 1, 0, 0) \
     ON CONFLICT (workspace_id) DO UPDATE SET seq = index_seqs.seq + 1";

/// Bumps and answers the workspace's change counter (`index_seqs.seq`): what in-process
/// search indexes compare with what they have seen. Called inside the write transaction,
/// under the workspace lock, so counters are committed in order.
pub async fn next_index_seq_in_tx(tx: &mut AnyConnection, ws_id: i64) -> Result<i64> {
    Ok(sqlx::query_scalar(AssertSqlSafe(format!("{BUMP_INDEX_SEQ} RETURNING seq")))
        .bind(ws_id)
        .fetch_one(&mut *tx)
        .await?)
}

/// Removes every page row of a workspace (and, by cascade, its revisions, tags and
/// links) and its recorded head: the start of a rebuild.
pub async fn clear_workspace_in_tx(tx: &mut AnyConnection, ws_id: i64) -> Result<()> {
    // In-process search indexes built before this point start again from nothing.
    let seq = next_index_seq_in_tx(tx, ws_id).await?;
    sqlx::query("UPDATE index_seqs SET reset_at = $2 WHERE workspace_id = $1")
        .bind(ws_id)
        .bind(seq)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM pages WHERE workspace_id = $1").bind(ws_id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM workspace_heads WHERE workspace_id = $1").bind(ws_id).execute(&mut *tx).await?;
    Ok(())
}

/// Marks every page row's full-text entry as not written (a restore: the index is
/// derived, and the start-up check writes it again for every row marked so).
pub async fn forget_fulltext_in_tx(tx: &mut AnyConnection) -> Result<()> {
    sqlx::query("UPDATE pages SET search_title = ''").execute(&mut *tx).await?;
    Ok(())
}

/// Sets a page's parent by the parent's page id (`uid`), as a rebuild learns it.
pub async fn set_parent_in_tx(tx: &mut AnyConnection, ws_id: i64, page_id: i64, parent_uid: &str) -> Result<()> {
    sqlx::query(
        "UPDATE pages SET parent_id = (SELECT p.id FROM pages p WHERE p.workspace_id = $1 AND p.uid = $2) WHERE id = $3",
    )
    .bind(ws_id)
    .bind(parent_uid)
    .bind(page_id)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The text read (OCR, when it has run) from the images `content` embeds, in index form.
async fn image_text_in_tx(tx: &mut AnyConnection, ws_id: i64, content: &str) -> Result<String> {
    let mut out = String::new();
    for name in crate::ids::upload_names_in(content) {
        let ocr: Option<Option<String>> =
            sqlx::query_scalar("SELECT ocr_text FROM uploads WHERE workspace_id = $1 AND name = $2")
                .bind(ws_id)
                .bind(&name)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(Some(found)) = ocr
            && !found.is_empty()
        {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text::index_form(&found));
        }
    }
    Ok(out)
}

/// A page that embeds an upload, as [`pages_embedding`] read it.
pub struct Embedding {
    id: i64,
    content: String,
    search_title: String,
    index_seq: i64,
}

/// The pages of a workspace that embed `upload`, for [`refresh_search_body_in_tx`]. Read
/// outside its transaction: compressed markdown (`stored`) cannot be matched in SQL, so
/// on SQLite every row of the workspace is read and matched here, which must not hold
/// the database's write lock.
pub async fn pages_embedding(conn: &mut AnyConnection, ws_id: i64, upload: &str) -> Result<Vec<Embedding>> {
    let needle = format!("/uploads/{upload}");
    let rows: Vec<(i64, String, stored::Packed, String, i64)> = sqlx::query_as(
        "SELECT id, content, content_z, search_title, index_seq FROM pages \
         WHERE workspace_id = $1 AND (content LIKE $2 OR content_z IS NOT NULL)",
    )
    .bind(ws_id)
    .bind(format!("%{needle}%"))
    .fetch_all(&mut *conn)
    .await?;
    let mut found = Vec::new();
    for (id, content, packed, search_title, index_seq) in rows {
        let content = stored::read(content, packed)?;
        if content.contains(&needle) {
            found.push(Embedding { id, content, search_title, index_seq });
        }
    }
    Ok(found)
}

/// After an image's text was read: the image text (and PostgreSQL's search vector; for
/// SQLite's search file, a new change counter) of every page that embeds it
/// ([`pages_embedding`]), again. A page saved since it was read is left alone (its save
/// read the text already). Answers how many pages changed.
pub async fn refresh_search_body_in_tx(tx: &mut AnyConnection, ws_id: i64, pages: Vec<Embedding>) -> Result<usize> {
    let backend = Backend::of(tx);
    let mut changed = 0;
    for Embedding { id, content, search_title, index_seq: seen_seq } in pages {
        let image_text = image_text_in_tx(tx, ws_id, &content).await?;
        let seq = next_index_seq_in_tx(tx, ws_id).await?;
        let vector = match backend {
            Backend::Postgres => format!(", search_vector = {}", search_text::pg_vector("$5", "$6")),
            Backend::Sqlite => String::new(),
        };
        let sql = format!("UPDATE pages SET image_text = $1, index_seq = $2{vector} WHERE id = $3 AND index_seq = $4");
        let mut update = sqlx::query(AssertSqlSafe(sql)).bind(&image_text).bind(seq).bind(id).bind(seen_seq);
        if backend == Backend::Postgres {
            update = update.bind(&search_title).bind(search_body(&content, &image_text));
        }
        changed += update.execute(&mut *tx).await?.rows_affected() as usize;
    }
    Ok(changed)
}

/// A page's row id inside a [`Script`]'s statement whose `$1` is the workspace id and
/// `$2` the page's uid (the statements after the row's own do not know the id yet).
const PAGE_ID: &str = "(SELECT id FROM pages WHERE workspace_id = $1 AND uid = $2)";

/// Writes (inserts or updates) a page's row (with PostgreSQL's search vector),
/// embedding-queue entry, tags and links — and, when given, the workspace's head and the
/// page's new revision — as one [`Script`] (one hand-off on SQLite); answers its row id
/// and creation time.
pub async fn upsert_page_in_tx(
    tx: &mut AnyConnection,
    ws_id: i64,
    p: &IndexedPage,
    head: Option<&str>,
    revision: Option<&RevisionRow>,
) -> Result<(i64, String)> {
    let script = page_script(tx, ws_id, p, head, revision).await?;
    page_written(&script.run(tx).await?)
}

/// What [`upsert_page_in_tx`] runs, for a caller that adds statements of its own after
/// it (their rows come after the page's one row).
pub async fn page_script(
    tx: &mut AnyConnection,
    ws_id: i64,
    p: &IndexedPage,
    head: Option<&str>,
    revision: Option<&RevisionRow>,
) -> Result<Script> {
    let parsed = match &p.parsed {
        Some(parsed) => parsed.clone(),
        None => Arc::new(markdown::parse(&p.content)),
    };
    let image_text = image_text_in_tx(tx, ws_id, &p.content).await?;
    let backend = Backend::of(tx);
    let [content, content_z, search_title] = stored::columns_for(backend, &p.content, &p.title)?;
    let mut script = Script::new();
    // The workspace's change counter, which the row then takes (see `next_index_seq_in_tx`).
    script.push(BUMP_INDEX_SEQ, vec![ws_id.into()]);
    let text = RowText { content, content_z, search_title };
    let (statement, mut values) = match p.write {
        RowWrite::Content => (edit(backend), edit_values(ws_id, p, text, &image_text)),
        RowWrite::New | RowWrite::Any => (upsert(backend), upsert_values(ws_id, p, text, &image_text)),
    };
    if backend == Backend::Postgres {
        values.push(search_body_of(&parsed.text, &image_text).into());
    }
    script.push(statement, values);
    let page = || -> Vec<Value> { vec![ws_id.into(), (&p.uid).into()] };
    let with_page = |more: Vec<Value>| -> Vec<Value> { page().into_iter().chain(more).collect() };
    if let Some(position) = p.position {
        script.push(
            "UPDATE pages SET position = $3 WHERE workspace_id = $1 AND uid = $2",
            with_page(vec![position.into()]),
        );
    }
    // Embedding happens off the request path: the worker picks this row up. One row per
    // page at most, so the queue stays bounded while semantic search is off.
    script.push(
        "INSERT INTO embed_queue (page_id, workspace_id, index_seq, attempts, queued_at) \
         SELECT id, workspace_id, index_seq, 0, $3 FROM pages WHERE workspace_id = $1 AND uid = $2 \
         ON CONFLICT (page_id) DO UPDATE SET index_seq = excluded.index_seq, attempts = 0, \
           queued_at = excluded.queued_at, locked_until = NULL",
        with_page(vec![(&p.updated_at).into()]),
    );
    let links: Vec<&str> = parsed.links.iter().map(|l| l.slug.as_str()).collect();
    // An edit that keeps the page's tags or links leaves their rows alone: two statements
    // fewer each (on PostgreSQL, two round trips), and no index entries rewritten.
    let (same_tags, same_links) = p.indexed.as_ref().map_or((false, false), |now| now.hold(&parsed.tags, &links));
    if p.write != RowWrite::New && !same_tags {
        script.push(format!("DELETE FROM page_tags WHERE page_id = {PAGE_ID}"), page());
    }
    if p.write != RowWrite::New && !same_links {
        script.push(format!("DELETE FROM page_links WHERE page_id = {PAGE_ID}"), page());
    }
    let list = store::json_strings(backend, "$3");
    if !parsed.tags.is_empty() && !same_tags {
        script.push(
            format!("INSERT INTO page_tags (page_id, workspace_id, tag) SELECT {PAGE_ID}, $1, j.value FROM {list}"),
            with_page(vec![json!(parsed.tags).to_string().into()]),
        );
    }
    if !links.is_empty() && !same_links {
        script.push(
            format!(
                "INSERT INTO page_links (page_id, workspace_id, target, position) \
                 SELECT {PAGE_ID}, $1, j.value, j.key FROM {list}"
            ),
            with_page(vec![json!(links).to_string().into()]),
        );
    }
    if let Some(r) = revision {
        script.push(
            format!("INSERT INTO revisions {REVISION_COLUMNS} VALUES ($1, {PAGE_ID}, {REVISION_VALUES})"),
            with_page(revision_values(r)),
        );
    }
    if let Some(head) = head {
        set_head(&mut script, ws_id, head);
    }
    Ok(script)
}

/// The page's row id and creation time, from the rows a [`page_script`] returned.
pub fn page_written(rows: &[AnyRow]) -> Result<(i64, String)> {
    let row = rows.first().ok_or_else(|| Error::internal(anyhow::anyhow!("a page's row write returned no row")))?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// PostgreSQL's search vector is a column of the row, computed from the search title and
/// one extra parameter, the search text (given by their numbers); SQLite's search file is
/// written after the commit, from the row (`fulltext::catch_up`).
fn search_vector(backend: Backend, title: &str, body: &str) -> Option<String> {
    (backend == Backend::Postgres).then(|| search_text::pg_vector(title, body))
}

/// One statement for new and existing rows: the row is keyed by the page id kept in the
/// commit trailers, and creation fields are written only once. `body` is emptied (rows
/// of older releases held the search text there).
fn upsert(backend: Backend) -> String {
    let vector = search_vector(backend, "$16", "$18");
    let (vector_column, vector_value, vector_set) = match &vector {
        Some(v) => (", search_vector", format!(", {v}"), ", search_vector = excluded.search_vector"),
        None => ("", String::new(), ""),
    };
    format!(
        "INSERT INTO pages (workspace_id, uid, slug, title, content, image_text, parent_id, path, revision, \
         created_at, created_by, updated_at, updated_by, deleted_at, deleted_by, search_title, content_z, index_seq{vector_column}) \
         VALUES ($1, $2, $3, $4, $5, $6, (SELECT id FROM pages WHERE workspace_id = $1 AND uid = $7), \
                 $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
                 (SELECT seq FROM index_seqs WHERE workspace_id = $1){vector_value}) \
         ON CONFLICT (workspace_id, uid) DO UPDATE SET slug = excluded.slug, title = excluded.title, \
           content = excluded.content, content_z = excluded.content_z, image_text = excluded.image_text, body = '', \
           search_title = excluded.search_title, parent_id = excluded.parent_id, path = excluded.path, \
           revision = excluded.revision, updated_at = excluded.updated_at, updated_by = excluded.updated_by, \
           deleted_at = excluded.deleted_at, deleted_by = excluded.deleted_by, index_seq = excluded.index_seq{vector_set} \
         RETURNING id, created_at"
    )
}

/// A page's markdown and search title as its row keeps them (`stored::columns_for`).
struct RowText {
    content: Value,
    content_z: Value,
    search_title: Value,
}

/// The upsert's parameters but PostgreSQL's search text (`$18`).
fn upsert_values(ws_id: i64, p: &IndexedPage, text: RowText, image_text: &str) -> Vec<Value> {
    let (deleted_at, deleted_by) = match &p.deleted {
        Some((at, by)) => (Some(at.clone()), Some(*by)),
        None => (None, None),
    };
    vec![
        ws_id.into(),
        (&p.uid).into(),
        (&p.slug).into(),
        (&p.title).into(),
        text.content,
        image_text.into(),
        p.parent_uid.as_ref().into(),
        (&p.path).into(),
        (&p.revision).into(),
        (&p.created_at).into(),
        p.created_by.into(),
        (&p.updated_at).into(),
        p.updated_by.into(),
        deleted_at.into(),
        deleted_by.into(),
        text.search_title,
        text.content_z,
    ]
}

/// An edit ([`RowWrite::Content`]): the columns an edit changes, and none that an index
/// holds but `updated_at` and `index_seq`, which move at every save.
fn edit(backend: Backend) -> String {
    let vector_set = search_vector(backend, "$9", "$11").map_or_else(String::new, |v| format!(", search_vector = {v}"));
    format!(
        "UPDATE pages SET title = $3, content = $4, content_z = $5, image_text = $6, body = '', \
           search_title = $9, revision = $7, updated_at = $8, updated_by = $10, \
           index_seq = (SELECT seq FROM index_seqs WHERE workspace_id = $1){vector_set} \
         WHERE workspace_id = $1 AND uid = $2 \
         RETURNING id, created_at"
    )
}

/// The edit's parameters but PostgreSQL's search text (`$11`).
fn edit_values(ws_id: i64, p: &IndexedPage, text: RowText, image_text: &str) -> Vec<Value> {
    vec![
        ws_id.into(),
        (&p.uid).into(),
        (&p.title).into(),
        text.content,
        text.content_z,
        image_text.into(),
        (&p.revision).into(),
        (&p.updated_at).into(),
        text.search_title,
        p.updated_by.into(),
    ]
}

const REVISION_COLUMNS: &str =
    "(workspace_id, page_id, sha, path, blob, action, title, message, author_id, author_name, created_at)";
/// A revision's values after its workspace and page: `$3` to `$11`.
const REVISION_VALUES: &str = "$3, $4, $5, $6, $7, $8, $9, $10, $11";

fn revision_values(r: &RevisionRow) -> Vec<Value> {
    vec![
        (&r.sha).into(),
        (&r.path).into(),
        r.blob.as_ref().into(),
        (&r.action).into(),
        (&r.title).into(),
        (&r.message).into(),
        r.author_id.into(),
        (&r.author_name).into(),
        (&r.created_at).into(),
    ]
}

/// One revision row (reindex writes a page's whole history; a save writes its revision
/// with the page's row, in [`upsert_page_in_tx`]).
pub async fn insert_revision_in_tx(tx: &mut AnyConnection, ws_id: i64, page_id: i64, r: &RevisionRow) -> Result<()> {
    let mut script = Script::new();
    script.push(format!("INSERT INTO revisions {REVISION_COLUMNS} VALUES ($1, $2, {REVISION_VALUES})"), {
        let mut v: Vec<Value> = vec![ws_id.into(), page_id.into()];
        v.extend(revision_values(r));
        v
    });
    script.run(tx).await?;
    Ok(())
}

/// Removes a page's row (revisions, tags and links go by cascade); its children, if any
/// are left, move to the top level.
pub async fn purge_in_tx(tx: &mut AnyConnection, ws_id: i64, uid: &str) -> Result<()> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM pages WHERE workspace_id = $1 AND uid = $2")
        .bind(ws_id)
        .bind(uid)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(id) = id else { return Ok(()) };
    sqlx::query("UPDATE pages SET parent_id = NULL WHERE parent_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM pages WHERE id = $1").bind(id).execute(&mut *tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{AGGREGATES, SEP, natural};
    use std::cmp::Ordering;

    #[test]
    fn the_lists_are_joined_by_the_separator_they_are_split_by() {
        assert_eq!(AGGREGATES.matches(&format!("'{SEP}'")).count(), 2);
        assert!(!AGGREGATES.contains('$'), "the aggregates bind no parameter");
    }

    #[test]
    fn titles_sort_naturally() {
        let mut titles =
            vec!["Sprint 10", "sprint 2", "Sprint 1", "Sprint 11", "Sprint 02", "Retro", "Sprint", "Sprint 1b"];
        titles.sort_by(|a, b| natural(a, b));
        assert_eq!(
            titles,
            ["Retro", "Sprint", "Sprint 1", "Sprint 1b", "sprint 2", "Sprint 02", "Sprint 10", "Sprint 11"]
        );
        assert_eq!(natural("v1.10", "v1.9"), Ordering::Greater);
        assert_eq!(natural("Équipe", "équipe"), Ordering::Equal);
        assert_eq!(natural("99999999999999999999999", "100000000000000000000000"), Ordering::Less);
    }
}
