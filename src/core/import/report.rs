//! What an import did, file by file: the terminal summary and `--report FILE` (JSON).
//! Nothing is dropped silently: every file of the source is in `pages`, `uploads` or
//! `skipped`, every slug that is not the file's own name in `renamed`, and every link
//! that points nowhere in `broken_links`.

use serde::Serialize;

/// What happened to a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    Created,
    Updated,
    /// Already as the source has it: no new revision.
    Unchanged,
    /// The save was refused (see `error`).
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageEntry {
    /// The file (or, for a folder without a note, `folder/`).
    pub source: String,
    pub slug: String,
    /// Slug of the parent page, if any.
    pub parent: Option<String>,
    pub action: PageAction,
    /// Revisions written for this page by this import.
    pub revisions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub source: String,
    pub reason: String,
}

/// A page whose slug is not the one its name gives (a collision: a numeric suffix).
#[derive(Debug, Clone, Serialize)]
pub struct Renamed {
    pub source: String,
    pub wanted: String,
    pub slug: String,
}

/// What happened to an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadAction {
    Created,
    /// The workspace already held it (the same bytes).
    Unchanged,
}

#[derive(Debug, Clone, Serialize)]
pub struct UploadEntry {
    pub source: String,
    /// The upload's name (`/uploads/<name>`).
    pub name: String,
    pub action: UploadAction,
}

/// A rename in a git source's history that the page followed (its history moved along).
#[derive(Debug, Clone, Serialize)]
pub struct FollowedRename {
    /// The source commit that renamed the file.
    pub commit: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct BrokenLink {
    /// The note holding the link.
    pub source: String,
    /// The link's target as written.
    pub target: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The path imported.
    pub source: String,
    /// `folder`, `zip`, `git` (a repository and its history) or `tree` (a bare
    /// repository's head, with `--no-history`).
    pub kind: String,
    pub workspace: String,
    /// Email of the account the pages were saved as.
    pub imported_as: String,
    pub dry_run: bool,
    pub pages: Vec<PageEntry>,
    pub uploads: Vec<UploadEntry>,
    pub renamed: Vec<Renamed>,
    pub skipped: Vec<Skipped>,
    pub broken_links: Vec<BrokenLink>,
    /// A git source: the commits of its history replayed by this import.
    pub commits: usize,
    /// A git source: renames in its history the pages followed.
    pub followed_renames: Vec<FollowedRename>,
    /// A git source: pages moved to the trash because a commit removed their file.
    pub trashed: Vec<String>,
    /// A git source: what found the renames in its history — `git` (git's own rename
    /// detection, as `git log --follow` follows files), or libgit2 and why git could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renames_found_by: Option<String>,
    /// Seconds the import took.
    pub seconds: f64,
}

impl Report {
    pub fn count(&self, action: PageAction) -> usize {
        self.pages.iter().filter(|p| p.action == action).count()
    }

    /// "2 uploads", or "2 uploads (3 already there)".
    fn uploads_counted(&self) -> String {
        let created = self.uploads.iter().filter(|u| u.action == UploadAction::Created).count();
        let there = self.uploads.len() - created;
        let n = counted(created, "upload", "uploads");
        if there == 0 { n } else { format!("{n} ({there} already there)") }
    }

    /// The terminal summary: counts, then the pages created and updated, every failed
    /// save, skipped file, renamed page and broken link (the first 50 of each, so a
    /// 10,000-note import stays readable; the JSON report of `--report` has them all).
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        const SHOWN: usize = 50;
        let mut s = String::new();
        let verb = if self.dry_run { "would import" } else { "imported" };
        let _ = writeln!(
            s,
            "{verb} {} into workspace {} as {}: {} created, {} updated, {} unchanged, {} failed; {}; {} skipped; {} renamed; {} ({:.1} s)",
            self.source,
            self.workspace,
            self.imported_as,
            counted(self.count(PageAction::Created), "page", "pages"),
            self.count(PageAction::Updated),
            self.count(PageAction::Unchanged),
            self.count(PageAction::Failed),
            self.uploads_counted(),
            self.skipped.len(),
            self.renamed.len(),
            counted(self.broken_links.len(), "broken link", "broken links"),
            self.seconds,
        );
        if self.kind == "git" {
            let _ = writeln!(
                s,
                "history: {} replayed, {} followed (found by {}), {} trashed",
                counted(self.commits, "commit", "commits"),
                counted(self.followed_renames.len(), "rename", "renames"),
                self.renames_found_by.as_deref().unwrap_or("libgit2"),
                counted(self.trashed.len(), "page", "pages")
            );
        }
        let more = |s: &mut String, n: usize| {
            if n > SHOWN {
                let _ = writeln!(s, "  … and {} more (see --report)", n - SHOWN);
            }
        };
        for action in [PageAction::Created, PageAction::Updated] {
            let word = if action == PageAction::Created { "created" } else { "updated" };
            for p in self.pages.iter().filter(|p| p.action == action).take(SHOWN) {
                let _ = write!(s, "{word}: {} → {}", p.source, p.slug);
                let _ = if p.revisions > 1 { writeln!(s, " ({} revisions)", p.revisions) } else { writeln!(s) };
            }
            more(&mut s, self.count(action));
        }
        for p in self.pages.iter().filter(|p| p.action == PageAction::Failed).take(SHOWN) {
            let _ = writeln!(s, "failed:  {} → {}: {}", p.source, p.slug, p.error.as_deref().unwrap_or(""));
        }
        more(&mut s, self.count(PageAction::Failed));
        for k in self.skipped.iter().take(SHOWN) {
            let _ = writeln!(s, "skipped: {}: {}", k.source, k.reason);
        }
        more(&mut s, self.skipped.len());
        for r in self.renamed.iter().take(SHOWN) {
            let _ = writeln!(s, "renamed: {} → {} ({} was taken)", r.source, r.slug, r.wanted);
        }
        more(&mut s, self.renamed.len());
        for b in self.broken_links.iter().take(SHOWN) {
            let _ = writeln!(s, "broken link: {} → {}", b.source, b.target);
        }
        more(&mut s, self.broken_links.len());
        s
    }
}

/// "1 page", "2 pages", "0 pages": a count with its noun in the right number.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
