//! Rebuilding the index from the repositories.
//!
//! Everything about pages — rows, revisions, tags, links — is derived from each
//! workspace's git history: the `Cairn-*` trailers say which page a commit changed and
//! how, the branch head holds the current files. `cairn reindex` rebuilds all
//! workspaces; at start-up [`repair`] compares each branch head with the head the index
//! last recorded and rebuilds the workspaces where they differ (a crash between a commit
//! and its database transaction). A branch *behind* the recorded head lost its last move
//! in a power cut (a batch does not flush the move on its own; `git::write_ref`): it is
//! moved forward to the recorded head first, by both.

use std::collections::{HashMap, HashSet};

use crate::core::Ctx;
use crate::core::pages::forget;
use crate::core::pages::rows::{self, IndexedPage, RevisionRow};
use crate::core::pages::save::{Action, Writer};
use crate::core::workspaces::Access;
use crate::error::Result;
use crate::git;
use crate::time::Timestamp;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    pub workspaces: usize,
    pub pages: usize,
    pub revisions: usize,
}

/// One commit's record of a page change, read back from its trailers.
struct Entry {
    sha: String,
    uid: String,
    action: Action,
    slug: String,
    title: String,
    parent: Option<String>,
    /// Its place among its siblings (`Cairn-Position`), when ordered by hand.
    position: Option<i64>,
    actor: Option<i64>,
    author_name: String,
    time: Timestamp,
    summary: String,
    /// The page's blob in this commit (none for a purge, which removes the file).
    blob: Option<String>,
}

struct Snapshot {
    head: Option<String>,
    /// Per page id: its entries, oldest first, and its current content.
    pages: Vec<(Vec<Entry>, String)>,
    /// Purged pages whose other commits are still in the history: a purge a crash
    /// interrupted, or one made before purges rewrote the history (`pages::forget`).
    unforgotten: HashSet<String>,
    /// Old slugs still naming a page: (slug, page id).
    aliases: Vec<(String, String)>,
}

fn read_snapshot(repo: &git2::Repository) -> anyhow::Result<Snapshot> {
    let Some(head) = git::head(repo)? else {
        return Ok(Snapshot { head: None, pages: vec![], unforgotten: HashSet::new(), aliases: vec![] });
    };
    let mut by_uid: HashMap<String, Vec<Entry>> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    // (page id, action, slug) of every commit, newest first.
    let mut slugs: Vec<(String, Action, String)> = Vec::new();
    for oid in git::log(repo)? {
        let commit = repo.find_commit(oid)?;
        let message = commit.message().unwrap_or_default();
        let t = git::trailers(message);
        let (Some(uid), Some(action)) = (t.get("page"), t.get("action").and_then(|a| Action::parse(a))) else {
            continue;
        };
        let slug = t.get("slug").cloned().unwrap_or_default();
        let path = git::page_path(&slug, action == Action::Trash);
        let blob = commit.tree()?.get_path(std::path::Path::new(&path)).ok().map(|e| e.id().to_string());
        let entry = Entry {
            blob,
            sha: oid.to_string(),
            uid: uid.clone(),
            action,
            slug: t.get("slug").cloned().unwrap_or_default(),
            title: t.get("title").cloned().unwrap_or_default(),
            parent: t.get("parent").filter(|p| !p.is_empty()).cloned(),
            position: t.get("position").and_then(|p| p.parse().ok()),
            actor: t.get("actor").and_then(|a| a.parse().ok()),
            // The committer saved it (an imported commit keeps its source's author).
            author_name: commit.committer().name().unwrap_or_default().to_owned(),
            time: t
                .get("time")
                .and_then(|t| Timestamp::parse(t))
                .unwrap_or_else(|| Timestamp::from_unix(commit.time().seconds())),
            summary: message.lines().next().unwrap_or_default().to_owned(),
        };
        slugs.push((uid.clone(), action, entry.slug.clone()));
        if !by_uid.contains_key(uid) {
            order.push(uid.clone());
        }
        by_uid.entry(uid.clone()).or_default().push(entry);
    }
    let tree = repo.find_commit(head)?.tree()?;
    let mut pages = Vec::new();
    let mut unforgotten = HashSet::new();
    // Oldest pages first, so row ids follow creation order.
    for uid in order.into_iter().rev() {
        let mut entries = by_uid.remove(&uid).unwrap_or_default();
        entries.reverse();
        let Some(last) = entries.last() else { continue };
        if last.action == Action::Purge {
            if entries.len() > 1 {
                unforgotten.insert(uid);
            }
            continue;
        }
        let path = git::page_path(&last.slug, last.action == Action::Trash);
        let Ok(entry) = tree.get_path(std::path::Path::new(&path)) else {
            tracing::warn!(page = %uid, %path, "reindex: the page's file is missing at the branch head; skipped");
            continue;
        };
        let content = String::from_utf8_lossy(repo.find_blob(entry.id())?.content()).into_owned();
        pages.push((entries, content));
    }
    slugs.reverse();
    Ok(Snapshot { head: Some(head.to_string()), pages, unforgotten, aliases: aliases(&slugs) })
}

/// The old slugs the history leaves naming a page, replaying its commits oldest first as
/// saves keep them (`rows::aliases`): a rename makes the slug it leaves an alias; a page
/// taking a slug ends that alias; a purge ends the page's.
fn aliases(commits: &[(String, Action, String)]) -> Vec<(String, String)> {
    let mut slug_of: HashMap<&str, &str> = HashMap::new();
    let mut alias: HashMap<&str, &str> = HashMap::new();
    for (uid, action, slug) in commits {
        if *action == Action::Purge {
            alias.retain(|_, page| page != uid);
            continue;
        }
        if let Some(before) = slug_of.insert(uid, slug)
            && *action == Action::Rename
            && before != slug
        {
            alias.insert(before, uid);
        }
        alias.remove(slug.as_str());
    }
    let mut out: Vec<(String, String)> = alias.into_iter().map(|(s, u)| (s.to_owned(), u.to_owned())).collect();
    out.sort();
    out
}

/// Rebuilds one workspace's page rows from its repository, under its write lock.
pub async fn workspace(ctx: &Ctx, ws_id: i64, ws_slug: &str) -> Result<Report> {
    let report = rebuild(ctx, ws_id, ws_slug, None).await?;
    Ok(report.unwrap_or_default())
}

/// Rebuilds a workspace's rows under its write lock — with `check` = Some(whether its
/// search text is stale), only when the index is behind: checked under the lock too,
/// because another process sharing the database and `DATA_DIR` (PostgreSQL) may be
/// between a batch's branch move and its database commit, which is a write in
/// progress, not an index behind its repository. None when nothing was rebuilt.
async fn rebuild(ctx: &Ctx, ws_id: i64, ws_slug: &str, check: Option<bool>) -> Result<Option<Report>> {
    let access = Access::maintenance(ws_id, ws_slug);
    let mut w = Writer::begin_alone(ctx, &access).await?;
    let result = async {
        let repo = ctx.repo(ws_slug)?;
        // Either way the branch is followed: first make sure it has not lost its last move.
        let recorded = rows::recorded_head(w.conn(), ws_id).await?;
        catch_up(&repo, ws_slug, recorded.as_deref()).await?;
        if let Some(stale_search) = check
            && !behind(&repo, ws_slug, recorded, stale_search).await?
        {
            return Ok(None);
        }
        let (report, unforgotten) = rebuild_locked(&mut w, &repo, ws_id).await?;
        // Purges still to be taken out of the history: done now, in the same batch.
        let forget = !unforgotten.is_empty();
        if forget {
            tracing::warn!(workspace = %ws_slug, pages = unforgotten.len(), "purged pages still in the history; rewriting it");
            forget::forget_pages(&mut w, unforgotten).await?;
        }
        Ok(Some((report, forget)))
    }
    .await;
    if matches!(result, Ok(Some(_))) {
        w.keep_writes();
    }
    let durable = w.finish().await;
    let Some((report, forgot)) = durable.and(result)? else { return Ok(None) };
    if forgot {
        forget::expunge(ctx, &access).await?;
    }
    Ok(Some(report))
}

/// Whether the index is behind the repository: the branch (already moved forward to the
/// recorded head if it had lost that move) names another head than the index recorded,
/// or the search text is stale.
async fn behind(repo: &git::WorkspaceRepo, slug: &str, recorded: Option<String>, stale_search: bool) -> Result<bool> {
    let head = repo.with(|r| Ok(git::head(r)?.map(|h| h.to_string()))).await?;
    let behind = head != recorded || stale_search;
    if behind {
        tracing::warn!(workspace = %slug, ?head, ?recorded, "index behind the repository; reindexing the workspace");
    }
    Ok(behind)
}

async fn rebuild_locked(w: &mut Writer, repo: &git::WorkspaceRepo, ws_id: i64) -> Result<(Report, HashSet<String>)> {
    let snap = repo.with(read_snapshot).await?;
    let mut report = Report { workspaces: 1, ..Default::default() };
    let mut tx = sqlx::Connection::begin(w.conn()).await?;
    // Writes first (see save.rs): SQLite takes its write lock at once.
    rows::clear_workspace_in_tx(&mut tx, ws_id).await?;
    if let Some(head) = &snap.head {
        rows::set_head_in_tx(&mut tx, ws_id, head).await?;
    }
    let mut parents: Vec<(i64, String)> = Vec::new();
    for (entries, content) in &snap.pages {
        let (first, last) = (&entries[0], &entries[entries.len() - 1]);
        let row = IndexedPage {
            uid: last.uid.clone(),
            slug: last.slug.clone(),
            title: last.title.clone(),
            content: content.clone(),
            parent_uid: None,
            path: git::page_path(&last.slug, last.action == Action::Trash),
            revision: last.sha.clone(),
            created_at: first.time.clone(),
            created_by: first.actor.unwrap_or_default(),
            updated_at: last.time.clone(),
            updated_by: last.actor.unwrap_or_default(),
            deleted: (last.action == Action::Trash).then(|| (last.time.clone(), last.actor.unwrap_or_default())),
            parsed: None,
            write: rows::RowWrite::Any,
            indexed: None,
            position: Some(last.position),
        };
        let (page_id, _) = rows::upsert_page_in_tx(&mut tx, ws_id, &row, None, None).await?;
        if let Some(p) = &last.parent {
            parents.push((page_id, p.clone()));
        }
        for e in entries {
            let path = git::page_path(&e.slug, matches!(e.action, Action::Trash | Action::Purge));
            let r = RevisionRow {
                sha: e.sha.clone(),
                path,
                blob: e.blob.clone(),
                action: e.action.as_str().to_owned(),
                title: e.title.clone(),
                message: e.summary.clone(),
                author_id: e.actor,
                author_name: e.author_name.clone(),
                created_at: e.time.clone(),
            };
            rows::insert_revision_in_tx(&mut tx, ws_id, page_id, &r).await?;
            report.revisions += 1;
        }
        report.pages += 1;
    }
    for (page_id, parent_uid) in parents {
        rows::set_parent_in_tx(&mut tx, ws_id, page_id, &parent_uid).await?;
    }
    for (slug, uid) in &snap.aliases {
        rows::aliases::insert_in_tx(&mut tx, ws_id, slug, uid).await?;
    }
    tx.commit().await?;
    Ok((report, snap.unforgotten))
}

/// Moves a branch that lost its last move in a crash forward to the head the database
/// recorded (`git::catch_up`: a batch's branch move is not flushed on its own, the
/// database's record of it is).
async fn catch_up(repo: &git::WorkspaceRepo, slug: &str, recorded: Option<&str>) -> Result<()> {
    let Some(recorded) = recorded.and_then(|h| git2::Oid::from_str(h).ok()) else { return Ok(()) };
    if repo.with(move |r| git::catch_up(r, recorded)).await? {
        tracing::warn!(workspace = %slug, head = %recorded, "the branch had lost its last move; moved it to the recorded head");
    }
    Ok(())
}

/// Every workspace, as (id, slug), oldest first.
pub(crate) async fn all_workspaces(ctx: &Ctx) -> Result<Vec<(i64, String)>> {
    Ok(sqlx::query_as("SELECT id, slug FROM workspaces ORDER BY id").fetch_all(&ctx.db.pool).await?)
}

/// `cairn reindex`: rebuilds every workspace.
pub async fn all(ctx: &Ctx) -> Result<Report> {
    let mut total = Report::default();
    for (id, slug) in all_workspaces(ctx).await? {
        let r = workspace(ctx, id, &slug).await?;
        tracing::info!(workspace = %slug, pages = r.pages, revisions = r.revisions, "reindexed");
        total.workspaces += 1;
        total.pages += r.pages;
        total.revisions += r.revisions;
    }
    Ok(total)
}

/// The cheap start-up check: rebuilds only workspaces whose branch head is not the head
/// the index recorded, or whose pages are marked missing from the full-text index.
/// Answers the slugs it repaired.
pub async fn repair(ctx: &Ctx) -> Result<Vec<String>> {
    let mut repaired = Vec::new();
    // Rows the full-text index lacks (see `rows::workspaces_with_stale_search_text`) too.
    let stale_search = rows::workspaces_with_stale_search_text(&mut *ctx.db.pool.acquire().await?).await?;
    for (id, slug) in all_workspaces(ctx).await? {
        if !ctx.workspace_dir(&slug).exists() {
            continue;
        }
        if rebuild(ctx, id, &slug, Some(stale_search.contains(&id))).await?.is_some() {
            repaired.push(slug);
        }
    }
    Ok(repaired)
}

#[cfg(test)]
mod tests {
    use super::{Action, aliases};

    fn c(uid: &str, action: Action, slug: &str) -> (String, Action, String) {
        (uid.to_owned(), action, slug.to_owned())
    }

    #[test]
    fn old_slugs_follow_renames_until_another_page_takes_them() {
        let history = [
            c("p", Action::Create, "a"),
            c("p", Action::Rename, "b"),
            c("p", Action::Update, "b"),
            c("p", Action::Rename, "c"),
            c("q", Action::Create, "x"),
            c("q", Action::Rename, "y"),
            c("r", Action::Create, "x"),
        ];
        let got = aliases(&history);
        let want = [("a", "p"), ("b", "p")].map(|(s, u)| (s.to_owned(), u.to_owned()));
        assert_eq!(got, want, "x was taken by r");
        // Renamed back: its own slug is no alias; a purge ends the page's aliases.
        let back = [c("p", Action::Create, "a"), c("p", Action::Rename, "b"), c("p", Action::Rename, "a")];
        assert_eq!(aliases(&back), vec![("b".to_owned(), "p".to_owned())]);
        let purged = [c("p", Action::Create, "a"), c("p", Action::Rename, "b"), c("p", Action::Purge, "b")];
        assert!(aliases(&purged).is_empty());
    }
}
