//! Where a save comes from when it replays another wiki's history rather than a person's
//! request: `cairn import` of a git repository. The importer saves through the same
//! operations as every door; [`Origin::scope`] wraps those calls, and
//! [`super::save::Writer::commit`] reads it to keep the source commit's author and date
//! (the importer stays the committer) and to name the source commit in a trailer, which
//! is how a second import knows where the first one stopped.
//!
//! A task-local rather than a parameter: the origin concerns the commit only, and
//! threading it through every page operation (create, update, rename, move, delete) and
//! their HTTP request types would put an import-only field on every door. The doors never
//! set it.

use chrono::{DateTime, Utc};

/// The source commit a save replays.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The source commit's id (full hex).
    pub commit: String,
    /// The source commit's first line.
    pub subject: String,
    pub author_name: String,
    pub author_email: String,
    /// When the source commit was authored: the revision's time.
    pub time: DateTime<Utc>,
}

tokio::task_local! {
    static ORIGIN: Origin;
}

impl Origin {
    /// Runs `fut` with every save in it replaying this origin.
    pub(crate) async fn scope<F: Future>(self, fut: F) -> F::Output {
        ORIGIN.scope(self, fut).await
    }

    /// The origin of the saves of the running task, if it replays one.
    pub(crate) fn current() -> Option<Origin> {
        ORIGIN.try_with(Clone::clone).ok()
    }

    /// The trailer that marks a commit as replaying `commit` (read back by the importer).
    pub(crate) const TRAILER: &'static str = "Import-Commit";
}
