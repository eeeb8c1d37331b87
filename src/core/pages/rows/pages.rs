//! The `pages` table read: one page's row, its lists of tags and links, the tree, the
//! trash, and the summaries lists show.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::json;
use sqlx::{AnyConnection, AssertSqlSafe};

use crate::core::pages::stored;
use crate::core::pages::{Actor, Page, PageRef, PageSummary, TrashEntry};
use crate::core::paging::Paging;
use crate::error::{Error, Result};
use crate::store::{self, Backend};
use crate::time::Timestamp;

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
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub updated_by: Actor,
    pub deleted_at: Option<Timestamp>,
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

/// [`ROW_COLUMNS`], by name.
#[derive(sqlx::FromRow)]
struct RowColumns {
    id: i64,
    uid: Option<String>,
    slug: String,
    title: String,
    content: String,
    content_z: stored::Packed,
    parent_id: Option<i64>,
    parent_slug: Option<String>,
    parent_uid: Option<String>,
    revision: String,
    created_at: Timestamp,
    updated_at: Timestamp,
    updated_by: Option<i64>,
    updated_by_name: String,
    deleted_at: Option<Timestamp>,
    deleted_by: Option<i64>,
    position: Option<i64>,
}

impl TryFrom<RowColumns> for Row {
    type Error = Error;

    fn try_from(c: RowColumns) -> Result<Row> {
        Ok(Row {
            id: c.id,
            uid: c.uid.unwrap_or_default(),
            slug: c.slug,
            title: c.title,
            content: stored::read(c.content, c.content_z)?,
            parent_id: c.parent_id,
            parent_slug: c.parent_slug,
            parent_uid: c.parent_uid,
            revision: c.revision,
            created_at: c.created_at,
            updated_at: c.updated_at,
            updated_by: Actor { id: c.updated_by.unwrap_or_default(), name: c.updated_by_name },
            deleted_at: c.deleted_at,
            deleted_by: c.deleted_by,
            position: c.position,
        })
    }
}

/// [`ROW_COLUMNS`] and [`AGGREGATES`], by name.
#[derive(sqlx::FromRow)]
struct ListedColumns {
    #[sqlx(flatten)]
    row: RowColumns,
    tags: Option<String>,
    links: Option<String>,
}

impl ListedColumns {
    fn split(self) -> Result<(Row, Lists)> {
        Ok((Row::try_from(self.row)?, Lists { tags: split_list(self.tags), links: split_list(self.links) }))
    }
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
pub(crate) fn tree_order(a: (Option<i64>, &str, &str), b: (Option<i64>, &str, &str)) -> Ordering {
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
pub(crate) struct PageIds {
    pub page: i64,
    pub workspace: i64,
}

// --- Reading pages ----------------------------------------------------------------------

/// Which rows a lookup may answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
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

pub(crate) async fn find(conn: &mut AnyConnection, ws_id: i64, slug: &str, state: State) -> Result<Option<Row>> {
    let sql = format!("{ROW_COLUMNS} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2{}", state.filter());
    let row: Option<RowColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    row.map(Row::try_from).transpose()
}

/// The live page of the workspace with stable id `uid`, whatever its slug is now.
pub(crate) async fn live_by_uid(conn: &mut AnyConnection, ws_id: i64, uid: &str) -> Result<Option<Row>> {
    let sql = format!("{ROW_COLUMNS} {ROW_FROM} WHERE p.workspace_id = $1 AND p.uid = $2 AND p.deleted_at IS NULL");
    let row: Option<RowColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(uid).fetch_optional(&mut *conn).await?;
    row.map(Row::try_from).transpose()
}

/// A live page's row; or 308 for an old slug of a live page, else 404 (`aliases::missing`).
pub(crate) async fn live(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Row> {
    match find(conn, ws_id, slug, State::Live).await? {
        Some(row) => Ok(row),
        None => Err(super::aliases::missing(conn, ws_id, slug).await),
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
    pub(super) fn hold(&self, tags: &[String], links: &[&str]) -> (bool, bool) {
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
pub(crate) async fn find_listed(
    conn: &mut AnyConnection,
    ws_id: i64,
    slug: &str,
    state: State,
) -> Result<Option<(Row, Lists)>> {
    let sql =
        format!("{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug = $2{}", state.filter());
    let row: Option<ListedColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    row.map(ListedColumns::split).transpose()
}

/// [`find_listed`] of several pages at once, in whatever state, by slug: what a group of
/// queued saves reads, in one query (`group`).
pub(crate) async fn find_listed_many(
    conn: &mut AnyConnection,
    ws_id: i64,
    slugs: &[&str],
) -> Result<HashMap<String, (Row, Lists)>> {
    let list = store::json_strings(Backend::of(conn), "$2");
    let sql = format!(
        "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} WHERE p.workspace_id = $1 AND p.slug IN (SELECT j.value FROM {list})"
    );
    let found: Vec<ListedColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(json!(slugs).to_string()).fetch_all(&mut *conn).await?;
    found
        .into_iter()
        .map(|c| {
            let (row, lists) = c.split()?;
            Ok((row.slug.clone(), (row, lists)))
        })
        .collect()
}

/// [`find_listed`] of a live page; or 308 / 404 as [`live`] answers.
pub(crate) async fn live_listed(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<(Row, Lists)> {
    match find_listed(conn, ws_id, slug, State::Live).await? {
        Some(found) => Ok(found),
        None => Err(super::aliases::missing(conn, ws_id, slug).await),
    }
}

/// `(id, slug, title, parent_id)` of every live page of a workspace (tree and export).
pub(crate) async fn live_tree(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<TreeRow>> {
    Ok(sqlx::query_as(
        "SELECT id, slug, title, parent_id, position FROM pages WHERE workspace_id = $1 AND deleted_at IS NULL",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// A live page as the tree needs it: id, slug, title, parent id, position.
pub(crate) type TreeRow = (i64, String, String, Option<i64>, Option<i64>);

/// The live pages under the same parent as a page (`parent_id`; None: the top level),
/// itself included, in tree order, each with the tags and links its rows hold.
pub(crate) async fn siblings(
    conn: &mut AnyConnection,
    ws_id: i64,
    parent_id: Option<i64>,
) -> Result<Vec<(Row, Lists)>> {
    let sql = format!(
        "{ROW_COLUMNS}, {AGGREGATES} {ROW_FROM} \
         WHERE p.workspace_id = $1 AND p.parent_id IS NOT DISTINCT FROM $2 AND p.deleted_at IS NULL"
    );
    let rows: Vec<ListedColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(parent_id).fetch_all(&mut *conn).await?;
    let mut out = rows.into_iter().map(ListedColumns::split).collect::<Result<Vec<_>>>()?;
    out.sort_by(|(a, _), (b, _)| tree_order((a.position, &a.title, &a.slug), (b.position, &b.title, &b.slug)));
    Ok(out)
}

/// The live ancestors of a page, from the top-level one down to its parent.
pub(crate) async fn ancestors(conn: &mut AnyConnection, page_id: i64) -> Result<Vec<(i64, PageRef)>> {
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
pub(crate) enum Among<'a> {
    /// Live pages.
    Live,
    /// Pages trashed by the same delete as the page: its `deleted_at` and `deleted_by`.
    TrashedWith(&'a Timestamp, Option<i64>),
}

/// The descendants of a page among `among`, nearest first (children, then
/// grandchildren…), each with the tags and links its rows hold (see [`find_listed`]).
pub(crate) async fn descendants(
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
    let mut query = sqlx::query_as::<_, ListedColumns>(AssertSqlSafe(sql)).bind(ws_id).bind(page_id).bind(MAX_DEPTH);
    if let Among::TrashedWith(at, by) = among {
        query = query.bind(at).bind(by);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(rows.len());
    for c in rows {
        let (row, lists) = c.split()?;
        // A corrupted cycle would list a page twice.
        if seen.insert(row.id) {
            out.push((row, lists));
        }
    }
    Ok(out)
}

/// True when the page exists and is not in the trash.
pub(crate) async fn is_live(conn: &mut AnyConnection, page_id: i64) -> Result<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pages WHERE id = $1 AND deleted_at IS NULL")
        .bind(page_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(n > 0)
}

/// Other live pages whose wikilinks point at the page `(page_id, slug)`, by slug.
pub(crate) async fn backlinks(conn: &mut AnyConnection, ws_id: i64, page_id: i64, slug: &str) -> Result<Vec<PageRef>> {
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
pub(crate) async fn tag_counts(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<(String, i64)>> {
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
pub(crate) async fn pages_of(
    conn: &mut AnyConnection,
    ws_ids: &[i64],
    paging: Paging,
) -> Result<(Vec<(String, String, String)>, i64)> {
    let list = store::json_strings(Backend::of(conn), "$1");
    let from = format!(
        "FROM pages p JOIN workspaces w ON w.id = p.workspace_id \
         WHERE p.deleted_at IS NULL AND p.workspace_id IN (SELECT CAST(j.value AS BIGINT) FROM {list})"
    );
    let window = format!("SELECT w.slug, p.slug, p.title {from} ORDER BY w.slug, p.slug LIMIT $2 OFFSET $3");
    let count = format!("SELECT COUNT(*) {from}");
    paging.window(conn, AssertSqlSafe(window), AssertSqlSafe(count), json!(ws_ids).to_string()).await
}

/// Slugs of live pages of a workspace that start with `prefix`, in order, at most
/// `limit`; and how many match.
pub(crate) async fn slugs_starting(
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

/// [`SUMMARY_SELECT`]'s columns, by name.
#[derive(sqlx::FromRow)]
struct SummaryColumns {
    id: i64,
    slug: String,
    title: String,
    parent_slug: Option<String>,
    revision: String,
    created_at: Timestamp,
    updated_at: Timestamp,
    updated_by: Option<i64>,
    updated_by_name: String,
    position: Option<i64>,
}

async fn summaries(conn: &mut AnyConnection, rows: Vec<SummaryColumns>) -> Result<Vec<PageSummary>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
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
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut tags = tags.remove(&r.id).unwrap_or_default();
            tags.sort_unstable();
            PageSummary {
                slug: r.slug,
                title: r.title,
                parent: r.parent_slug,
                tags,
                revision: r.revision,
                created_at: r.created_at,
                updated_at: r.updated_at,
                updated_by: Actor { id: r.updated_by.unwrap_or_default(), name: r.updated_by_name },
            }
        })
        .collect())
}

/// Live pages, most recently updated first, optionally only those with `tag`
/// (normalised already); and how many there are.
pub(crate) async fn recent(
    conn: &mut AnyConnection,
    ws_id: i64,
    tag: Option<&str>,
    paging: Paging,
) -> Result<(Vec<PageSummary>, i64)> {
    // `$2` is the tag, or NULL for all pages.
    let filter = "p.workspace_id = $1 AND p.deleted_at IS NULL \
         AND ($2 IS NULL OR EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag = $2))";
    let sql = format!("{SUMMARY_SELECT} WHERE {filter} ORDER BY p.updated_at DESC, p.slug LIMIT $3 OFFSET $4");
    let rows = sqlx::query_as(AssertSqlSafe(sql))
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
pub(crate) async fn live_children(conn: &mut AnyConnection, ws_id: i64, page_id: i64) -> Result<Vec<PageSummary>> {
    let sql = format!("{SUMMARY_SELECT} WHERE p.workspace_id = $1 AND p.parent_id = $2 AND p.deleted_at IS NULL");
    let mut rows: Vec<SummaryColumns> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(page_id).fetch_all(&mut *conn).await?;
    rows.sort_by(|a, b| tree_order((a.position, &a.title, &a.slug), (b.position, &b.title, &b.slug)));
    summaries(conn, rows).await
}

/// What pages trashed by one delete share: the time and the user of that delete.
pub(crate) fn trash_group(deleted_at: &Timestamp, deleted_by: Option<i64>) -> String {
    format!("{deleted_at}/{}", deleted_by.unwrap_or_default())
}

const TRASH_SELECT: &str = "SELECT p.slug, p.title, p.deleted_at, p.deleted_by, COALESCE(u.name, ''), pp.slug FROM pages p \
     LEFT JOIN pages pp ON pp.id = p.parent_id LEFT JOIN users u ON u.id = p.deleted_by \
     WHERE p.workspace_id = $1 AND p.deleted_at IS NOT NULL";

type TrashTuple = (String, String, Timestamp, Option<i64>, String, Option<String>);

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
pub(crate) async fn trashed(conn: &mut AnyConnection, ws_id: i64, paging: Paging) -> Result<(Vec<TrashEntry>, i64)> {
    let sql = format!("{TRASH_SELECT} ORDER BY p.deleted_at DESC, p.slug LIMIT $2 OFFSET $3");
    let count = "SELECT COUNT(*) FROM pages WHERE workspace_id = $1 AND deleted_at IS NOT NULL";
    let (rows, total): (Vec<TrashTuple>, i64) = paging.window(conn, AssertSqlSafe(sql), count, ws_id).await?;
    Ok((rows.into_iter().map(trash_entry).collect(), total))
}

/// One trashed page's entry.
pub(crate) async fn trashed_one(conn: &mut AnyConnection, ws_id: i64, slug: &str) -> Result<Option<TrashEntry>> {
    let sql = format!("{TRASH_SELECT} AND p.slug = $2");
    let row: Option<TrashTuple> =
        sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(slug).fetch_optional(&mut *conn).await?;
    Ok(row.map(trash_entry))
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
