//! The arguments of the 27 tools: their `inputSchema`s come from these types, and
//! `tools/call` reads its `arguments` into them. Names follow the HTTP fields (docs/mcp.md);
//! a field the tool does not know is an error, not silently dropped.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::{Map, Value};
use utoipa::openapi::{RefOr, schema::Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::core::paging::Paging;
use crate::error::Result;

/// Only the workspace (tools that read a whole workspace).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WsArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
}

/// No arguments (`workspace` is accepted and ignored: the answer is about the user).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArgs {
    /// Accepted for uniformity; not used.
    #[allow(dead_code)] // Every tool takes `workspace`; this one has no use for it.
    pub workspace: Option<String>,
}

/// `limit` and `offset`, as every list tool takes them.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct PagingArgs {
    /// Most items to return (default 50, at most 500).
    limit: Option<i64>,
    /// Items to skip (default 0).
    offset: Option<i64>,
}

/// A list tool's arguments: its own, `A`, and the paging ones. Its schema is `A`'s with
/// `limit` and `offset` added; a field neither knows is still an error.
pub(super) struct Paged<A> {
    pub args: A,
    paging: PagingArgs,
}

impl<A> Paged<A> {
    /// The window asked for, checked (a tool failure, not a protocol error, as over HTTP).
    pub(super) fn paging(&self) -> Result<Paging> {
        Paging::new(self.paging.limit, self.paging.offset)
    }
}

impl<'de, A: DeserializeOwned> Deserialize<'de> for Paged<A> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut own = Map::deserialize(d)?;
        let paging: Map<_, _> = ["limit", "offset"].into_iter().filter_map(|k| own.remove_entry(k)).collect();
        Ok(Paged {
            args: A::deserialize(Value::Object(own)).map_err(D::Error::custom)?,
            paging: PagingArgs::deserialize(Value::Object(paging)).map_err(D::Error::custom)?,
        })
    }
}

impl<A: ToSchema> PartialSchema for Paged<A> {
    fn schema() -> RefOr<Schema> {
        let mut schema = A::schema();
        if let (RefOr::T(Schema::Object(own)), RefOr::T(Schema::Object(paging))) = (&mut schema, PagingArgs::schema()) {
            own.properties.extend(paging.properties);
            // `A`'s own description says what `A` is alone (the tool describes itself).
            own.description = None;
        }
        schema
    }
}

impl<A: ToSchema> ToSchema for Paged<A> {
    fn name() -> Cow<'static, str> {
        A::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        A::schemas(schemas);
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RecentArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Only pages with this tag (with or without `#`).
    pub tag: Option<String>,
}

/// One page by slug.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PageArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// The page's slug (as in its URL).
    pub slug: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Title; default: the front matter `title` or the first `# heading`.
    pub title: Option<String>,
    /// Slug; default: derived from the title.
    pub slug: Option<String>,
    /// Markdown, at most 1 MiB. `[[other-page]]` links to another page; `#tag` tags it.
    pub content: Option<String>,
    /// Slug of a live page to create this one under.
    pub parent: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UpdateArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// The whole new markdown (at most 1 MiB); default: unchanged.
    pub content: Option<String>,
    /// New title; default: from the content, else unchanged.
    pub title: Option<String>,
    /// The `revision` the edit started from. If the page changed since, the update fails
    /// with the current revision (or is merged, with `merge: true`).
    pub base_revision: Option<String>,
    /// Merge a stale edit three-way against `base_revision`; overlapping changes fail
    /// with the merged text carrying conflict markers.
    #[serde(default)]
    pub merge: bool,
    /// Commit message; default "Update <title>".
    pub message: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AppendArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Markdown to add at the end of the page, after a blank line.
    pub text: String,
    /// Commit message; default "Update <title>".
    pub message: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Also trash the page's live children (otherwise a page with children fails).
    #[serde(default)]
    pub recursive: bool,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Slug of the new parent page; absent or null: the top level.
    pub parent: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RenameArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// The page's new slug; links to the page are rewritten.
    pub new_slug: String,
    /// A new title too (optional).
    pub title: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HistoryArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RevisionArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// The revision's commit id (`sha` from the page's history).
    pub sha: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DiffArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// The newer revision.
    pub sha: String,
    /// An earlier revision of the page; default: the one before `sha`.
    pub against: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Words to find. `"a phrase"`, `-word` to exclude; the last word matches as a prefix.
    pub query: String,
    /// `keyword` (default; full text, ranked), `semantic` (by meaning) or `hybrid` (both, fused).
    pub mode: Option<String>,
    /// Only pages with this tag.
    pub tag: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SummaryArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Sentences in the summary (1–50, default 3).
    pub sentences: Option<i64>,
}
