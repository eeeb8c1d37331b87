//! Pages: the write path, reads, history and trash (docs/api.md, "Pages").
//!
//! Every write goes through [`save::Writer`]: files first (one git commit per page
//! change), then one database transaction holding the page rows, revisions, tags, links,
//! the workspace head and the outbox events. Reads come from the database index. All SQL
//! on pages is in [`rows`]; the operations in [`ops`], [`read`] and [`history`] decide.

pub(crate) mod batch;
pub(crate) mod decide;
pub(crate) mod forget;
pub(crate) mod fulltext;
pub(crate) mod group;
pub(crate) mod history;
pub(crate) mod inputs;
pub(crate) mod ops;
pub(crate) mod origin;
pub(crate) mod read;
pub(crate) mod rows;
pub(crate) mod save;
pub(crate) mod search_text;
pub(crate) mod stored;

use crate::time::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

pub(crate) use forget::{Erased, erase, purge};
pub(crate) use inputs::{NewPage, PageUpdate};
pub(crate) use ops::*;
pub(crate) use read::*;

/// Largest page content: 1 MiB of UTF-8.
pub(crate) const MAX_CONTENT_BYTES: usize = 1_048_576;
pub(crate) const MAX_TITLE_CHARS: usize = 300;

/// A page's slug as a request names it, for a page that should exist: a name that is not
/// a slug is no page (404 `page_not_found`), never a 400.
pub(crate) fn named(raw: &str) -> crate::error::Result<crate::ids::Slug> {
    crate::ids::Slug::lookup(raw, crate::error::Error::page_not_found)
}

/// [`named`] for a page in the trash (404 `trash_entry_not_found`).
pub(crate) fn named_in_trash(raw: &str) -> crate::error::Result<crate::ids::Slug> {
    crate::ids::Slug::lookup(raw, crate::error::Error::trash_entry_not_found)
}

/// The latest save an edit did not see, as a 409 names it (`theirs`): its revision, who
/// made it and when, so an editor can say whose change it meets.
pub(crate) fn theirs(revision: &str, author: &Actor, at: &Timestamp) -> serde_json::Value {
    serde_json::json!({"revision": revision, "author": author, "at": at})
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct Actor {
    pub id: i64,
    pub name: String,
}

/// A page as answered.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Page {
    pub slug: String,
    pub title: String,
    /// Raw markdown.
    pub content: String,
    /// Slug of the parent page, or null at top level.
    pub parent: Option<String>,
    pub tags: Vec<String>,
    /// Slugs that the page's wikilinks resolve to, in document order.
    pub links: Vec<String>,
    /// Commit id of the page's latest save.
    pub revision: String,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    pub updated_by: Actor,
    /// Workspace slug.
    pub workspace: String,
    /// The page's place among its siblings when people ordered them by hand (lowest
    /// first; pages without one follow, by title). An extension.
    pub position: Option<i64>,
}

/// A page in a flat list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PageSummary {
    pub slug: String,
    pub title: String,
    pub parent: Option<String>,
    pub tags: Vec<String>,
    pub revision: String,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    pub updated_by: Actor,
}

/// A node of the page tree.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TreeNode {
    pub slug: String,
    pub title: String,
    #[schema(no_recursion)]
    pub children: Vec<TreeNode>,
}

/// A tag and how many live pages carry it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TagCount {
    pub tag: String,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PageRef {
    pub slug: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Heading {
    pub level: u8,
    pub text: String,
    pub anchor: String,
}

/// `GET /api/pages/{slug}/view`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PageView {
    pub page: Page,
    /// From the top-level ancestor down to the parent.
    pub breadcrumbs: Vec<PageRef>,
    pub children: Vec<PageRef>,
    /// Live pages whose wikilinks point here.
    pub backlinks: Vec<PageRef>,
    pub headings: Vec<Heading>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TrashEntry {
    pub slug: String,
    pub title: String,
    #[schema(value_type = String)]
    pub deleted_at: Timestamp,
    pub deleted_by: Actor,
    /// The same for every page one delete trashed (a page with its subpages): restoring
    /// one brings back those of its subpages that went with it. An extension.
    pub group: String,
    /// The page's parent when it was trashed (perhaps in the trash too), or null. An extension.
    pub parent: Option<String>,
}

/// A trashed page with its markdown, to look at before restoring it. An extension.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TrashedPage {
    #[serde(flatten)]
    pub entry: TrashEntry,
    pub content: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct HistoryEntry {
    pub sha: String,
    pub message: String,
    pub author: Actor,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Revision {
    pub sha: String,
    pub content: String,
    pub title: String,
    pub author: Actor,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Diff {
    /// The older revision.
    pub from: Option<String>,
    /// The revision asked for.
    pub to: String,
    /// Unified diff text.
    pub unified: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}
