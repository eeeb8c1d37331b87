//! What the doors ask of the page write path: the core's own input types, which the
//! HTTP bodies and the MCP arguments are turned into.

/// A page to create.
pub(crate) struct NewPage {
    pub title: Option<String>,
    /// Derived from the title when absent.
    pub slug: Option<String>,
    /// Raw markdown, at most 1 MiB.
    pub content: Option<String>,
    /// The slug of a live parent page.
    pub parent: Option<String>,
}

/// An edit of a page's content or title.
#[derive(Clone)]
pub(crate) struct PageUpdate {
    /// The whole new markdown (at most 1 MiB); unchanged when absent.
    pub content: Option<String>,
    /// The new title; when absent, from the content, else unchanged.
    pub title: Option<String>,
    /// The revision the edit started from: when the page changed since, the edit is
    /// refused as stale (409), or merged with `merge`.
    pub base_revision: Option<String>,
    /// Merge a stale edit three-way against `base_revision`; overlapping changes are
    /// refused with the merged text carrying conflict markers.
    pub merge: bool,
    /// The commit message; "Update <title>" when absent.
    pub message: Option<String>,
}
