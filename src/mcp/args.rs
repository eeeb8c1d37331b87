//! The arguments of the 27 tools: their `inputSchema`s come from these types, and
//! `tools/call` reads its `arguments` into them. Names follow the HTTP fields (docs/mcp.md);
//! a field the tool does not know is an error, not silently dropped.

use serde::Deserialize;
use utoipa::ToSchema;

use crate::core::paging::Paging;
use crate::error::Result;

/// Only the workspace (tools that read a whole workspace).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WsArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
}

/// No arguments (`workspace` is accepted and ignored: the answer is about the user).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {
    /// Accepted for uniformity; not used.
    #[allow(dead_code)] // Every tool takes `workspace`; this one has no use for it.
    pub workspace: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Most items to return (default 50, at most 500).
    pub limit: Option<i64>,
    /// Items to skip (default 0).
    pub offset: Option<i64>,
}

impl ListArgs {
    pub fn paging(&self) -> Result<Paging> {
        Paging::new(self.limit, self.offset)
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecentArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Only pages with this tag (with or without `#`).
    pub tag: Option<String>,
    /// Most pages to return (default 50, at most 500).
    pub limit: Option<i64>,
    /// Pages to skip (default 0).
    pub offset: Option<i64>,
}

/// One page by slug.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PageArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// The page's slug (as in its URL).
    pub slug: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
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
pub struct UpdateArgs {
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
pub struct AppendArgs {
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
pub struct DeleteArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Also trash the page's live children (otherwise a page with children fails).
    #[serde(default)]
    pub recursive: bool,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Slug of the new parent page; absent or null: the top level.
    pub parent: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
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
pub struct HistoryArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Most revisions to return (default 50, at most 500).
    pub limit: Option<i64>,
    /// Revisions to skip (default 0).
    pub offset: Option<i64>,
}

impl HistoryArgs {
    pub fn paging(&self) -> Result<Paging> {
        Paging::new(self.limit, self.offset)
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RevisionArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// The revision's commit id (`sha` from the page's history).
    pub sha: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
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
pub struct SearchArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    /// Words to find. `"a phrase"`, `-word` to exclude; the last word matches as a prefix.
    pub query: String,
    /// `keyword` (default; full text, ranked), `semantic` (by meaning) or `hybrid` (both, fused).
    pub mode: Option<String>,
    /// Only pages with this tag.
    pub tag: Option<String>,
    /// Most results (default 50, at most 500).
    pub limit: Option<i64>,
    /// Results to skip (default 0).
    pub offset: Option<i64>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryArgs {
    /// Workspace slug; default: the user's default workspace.
    pub workspace: Option<String>,
    pub slug: String,
    /// Sentences in the summary (1–50, default 3).
    pub sentences: Option<i64>,
}
