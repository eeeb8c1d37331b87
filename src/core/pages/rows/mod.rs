//! Every SQL statement on pages, revisions, tags, links and workspace heads — the index
//! that `reindex` can rebuild from the repositories. The operations in `read`, `ops`,
//! `save` and `history` decide; this module only reads and writes rows.
//!
//! Statements run on a connection the caller passes: the writer's own (under the
//! workspace lock), a pooled one for reads, or a transaction's.

pub(crate) mod aliases;
mod derived;
mod pages;
mod revisions;
mod write;

pub(crate) use derived::*;
pub(crate) use pages::*;
pub(crate) use revisions::*;
pub(crate) use write::*;
