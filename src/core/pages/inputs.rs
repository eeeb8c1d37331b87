//! What the doors ask of the page write path: the core's own input types. The HTTP door
//! takes them as its request bodies (`CreatePage`, `UpdatePage` in the API's schemas);
//! the MCP door's arguments, described for agents and naming their page and workspace
//! in the same object, are turned into them.

use serde::Deserialize;
use utoipa::ToSchema;

// A page to create. (Its doc comments are the API schema's descriptions.)
#[derive(Deserialize, ToSchema)]
#[schema(as = CreatePage, example = json!({"slug": "runbook", "content": "# Runbook\n\nRestart with `systemctl restart app`. #ops", "parent": null}))]
pub(crate) struct NewPage {
    pub title: Option<String>,
    /// Derived from the title when absent.
    pub slug: Option<String>,
    /// Raw markdown, at most 1 MiB.
    pub content: Option<String>,
    /// Slug of a live parent page.
    pub parent: Option<String>,
}

// An edit of a page's content or title: the whole new markdown (at most 1 MiB) and the
// new title, each unchanged when absent (the title then comes from the content, if
// any); a stale `base_revision` is refused (409), or merged three-way with `merge`.
#[derive(Clone, Deserialize, ToSchema)]
#[schema(as = UpdatePage, example = json!({"content": "# Runbook\n\nRestart, then check [[status]]. #ops", "base_revision": "4f0c2a9e8d1b7c6a5f4e3d2c1b0a998877665544"}))]
pub(crate) struct PageUpdate {
    pub content: Option<String>,
    pub title: Option<String>,
    /// The revision the edit was based on; stale → 409 (or a merge with `merge: true`).
    pub base_revision: Option<String>,
    /// Merge a stale edit three-way against its base.
    #[serde(default)]
    pub merge: bool,
    /// Commit message (default "Update <title>").
    pub message: Option<String>,
}
