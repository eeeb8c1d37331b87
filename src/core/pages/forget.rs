//! Forgetting: a purge takes a trashed page out of the workspace's history — every
//! version of it, from every commit — and an erasure takes one revision's content out of
//! it (someone pasted a password). Both rewrite the history ([`git::rewrite`]) under the
//! workspace's write lock, in one batch with their rows, so the branch moves to the new
//! history with the database commit, or not at all. Commits after the first one that
//! changes get new ids; the old ids keep answering (`rows::rename_revisions_in_tx`).
//! Then what the branch no longer reaches is removed from the disk
//! ([`git::pack::expunge`]), so no file of the repository, nor a backup made afterwards,
//! still holds it.
//!
//! What stays, as the record: a purge's own commit (who purged which page, and when; it
//! changes no file once the page's other commits are gone), and for an erasure an empty
//! commit saying who erased which revision.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use utoipa::ToSchema;

use super::rows::{self, State};
use super::save::{Action, Change, PageState, Writer};
use crate::core::Ctx;
use crate::core::users::User;
use crate::core::workspaces::{Access, Owner};
use crate::error::{Error, Result};
use crate::git::{self, rewrite::Fate};
use crate::ids::Slug;

/// What an erasure answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Erased {
    /// The erased revision's id now (a rewrite gives it, and every later commit, a new
    /// id; the old ids keep answering).
    pub sha: String,
    /// How many revision ids of the workspace changed.
    pub renamed: usize,
}

/// Removes a trashed page for good: from the tree, every index and every API, and from
/// the repository — its every commit dropped, its file taken out of every other commit's
/// tree, the objects no longer reached removed from the disk.
pub(crate) async fn purge(ctx: &Ctx, access: &Access, user: &User, slug: &Slug) -> Result<()> {
    let ws = access.workspace_id();
    let mut w = Writer::begin_alone(ctx, access).await?;
    let done: Result<()> = async {
        let row =
            rows::find(w.conn(), ws, slug, State::Trashed).await?.ok_or_else(|| Error::trash_entry_not_found(slug))?;
        // The record names the page by its id only: its title or slug may be the secret.
        let change = Change {
            co_authors: Vec::new(),
            action: Action::Purge,
            summary: "Purge a page from the trash".to_owned(),
            before_path: Some(git::trash_path(slug)),
            state: PageState::of(&row),
            previous_slug: None,
        };
        w.commit(user, vec![change]).await?;
        forget_pages(&mut w, HashSet::from([row.uid.clone()])).await
    }
    .await;
    finish(ctx, access, w, done).await?;
    super::fulltext::forget_purged(ctx).await
}

/// Erases the content of revision `sha` of page `slug`: from that revision on, wherever
/// the page's file holds that content it holds the revision before's instead (nothing,
/// for the page's first revision). The revision stays in the history, with its title,
/// message and author. Refused (409) while it is the page's current content: a save
/// without it comes first.
pub(crate) async fn erase(ctx: &Ctx, owner: &Owner, user: &User, slug: &Slug, sha: &str) -> Result<Erased> {
    let ws = owner.workspace_id();
    let mut w = Writer::begin_alone(ctx, owner).await?;
    let done: Result<Erased> = async {
        let page = rows::live(w.conn(), ws, slug).await?;
        let rev = rows::revision(w.conn(), page.id, sha).await?.ok_or_else(|| Error::revision_not_found(sha))?;
        let before = rows::revision_before(w.conn(), page.id, &rev).await?;
        let target = oid(&rev.sha)?;
        let (rev_path, head_path) = (rev.path.clone(), git::live_path(&page.slug));
        let before_at = match &before {
            Some(b) => Some((oid(&b.sha)?, b.path.clone())),
            None => None,
        };
        let (erased, current, kept) = w
            .ctx
            .repo(w.access.slug())?
            .with(move |repo| {
                let blob_at = |commit: git2::Oid, path: &str| -> anyhow::Result<Option<git2::Oid>> {
                    let tree = repo.find_commit(commit)?.tree()?;
                    Ok(tree.get_path(std::path::Path::new(path)).ok().map(|e| e.id()))
                };
                let erased = blob_at(target, &rev_path)?;
                let current = git::head(repo)?.map(|h| blob_at(h, &head_path)).transpose()?.flatten();
                let kept = before_at.map(|(c, p)| blob_at(c, &p)).transpose()?.flatten();
                Ok((erased, current, kept))
            })
            .await?;
        let erased =
            erased.ok_or_else(|| Error::internal(anyhow::anyhow!("revision {} has no file {}", rev.sha, rev.path)))?;
        if Some(erased) == current {
            return Err(Error::revision_is_current(&rev.sha));
        }
        // Before the page's first revision there was nothing: an empty file.
        let empty = kept.is_none();
        let kept = match kept {
            Some(k) => k,
            None => git2::Oid::hash_object(git2::ObjectType::Blob, b"").map_err(Error::internal)?,
        };
        let (uid, author) = (page.uid.clone(), user.clone());
        let record = format!("Erase the content of revision {} of {}", short(&rev.sha), page.title);
        let now = ctx.clock.now().timestamp();
        let renamed = w
            .rewrite(move |repo, tip| {
                let head = tip.map(|t| t.commit).ok_or_else(|| anyhow::anyhow!("an empty history"))?;
                let mut out = git::rewrite::rewrite(repo, head, replacing(uid, target, erased, kept))?;
                if empty {
                    out.made.blob(b"")?;
                }
                // The record of who erased what: a commit that changes no file.
                let who = git::Author { name: &author.name, email: &author.email, time: now };
                let message = format!("{record}\n\nCairn-Erased: {target}\nCairn-Actor: {}\n", author.id);
                let made = git::make_commit(repo, out.tip, &[], &who, &who, &message, &mut out.made)?;
                out.tip = Some(made.tip);
                Ok(out)
            })
            .await?;
        let pairs = named(&renamed);
        rows::rename_revisions_in_tx(w.conn(), ws, &pairs).await?;
        rows::replace_revision_blob_in_tx(w.conn(), page.id, rev.id, &erased.to_string(), &kept.to_string()).await?;
        let sha = pairs.iter().find(|(old, _)| *old == rev.sha).map_or(rev.sha.clone(), |(_, new)| new.clone());
        Ok(Erased { sha, renamed: pairs.len() })
    }
    .await;
    finish(ctx, owner, w, done).await
}

/// Ends a rewrite: durable with its rows, or abandoned whole; then the disk is cleared of
/// what the branch no longer reaches.
async fn finish<T>(ctx: &Ctx, access: &Access, w: Writer, done: Result<T>) -> Result<T> {
    let answer = match done {
        Ok(answer) => answer,
        Err(e) => {
            w.abandon("a history rewrite failed").await;
            return Err(e);
        }
    };
    w.finish().await?;
    ctx.test_hooks.after_write().await;
    expunge(ctx, access).await?;
    Ok(answer)
}

/// Removes from the repository what its branch no longer reaches, under the write lock
/// (a save in flight has objects nothing reaches yet).
pub(crate) async fn expunge(ctx: &Ctx, access: &Access) -> Result<()> {
    let w = Writer::begin_alone(ctx, access).await?;
    let dir = ctx.workspace_dir(access.slug());
    let packed = tokio::task::spawn_blocking(move || git::pack::expunge(&dir)).await;
    w.finish().await?;
    let report = packed.map_err(Error::internal)??;
    tracing::info!(workspace = %access.slug(), objects = report.objects, "history rewritten; unreachable objects removed");
    Ok(())
}

/// Takes pages `uids`, purged already (their purge commits made), out of the history
/// in `w`'s batch: see [`rewrite_without_pages`]. For a purge, and for a reindex that
/// finds a purge a crash interrupted (or one made before purges rewrote the history).
pub(crate) async fn forget_pages(w: &mut Writer, uids: HashSet<String>) -> Result<()> {
    let renamed = w.rewrite(move |repo, tip| rewrite_without_pages(repo, tip, &uids)).await?;
    let ws = w.access.workspace_id();
    rows::rename_revisions_in_tx(w.conn(), ws, &named(&renamed)).await
}

/// The history from `tip` without pages `uids`: their commits dropped, save their purges
/// (the record), and their files taken out of every other commit's tree.
fn rewrite_without_pages(
    repo: &git2::Repository,
    tip: Option<git::Tip>,
    uids: &HashSet<String>,
) -> anyhow::Result<git::rewrite::Rewritten> {
    let head = tip.map(|t| t.commit).ok_or_else(|| anyhow::anyhow!("an empty history"))?;
    // Where each page's file is as of the commit being rewritten.
    let mut files: HashMap<String, String> = HashMap::new();
    git::rewrite::rewrite(repo, head, |commit| {
        let (page, action, slug) = page_change(commit);
        if let Some(uid) = page.filter(|p| uids.contains(p)) {
            if action == Some(Action::Purge) {
                files.remove(&uid);
                return Ok(Fate::Keep(vec![]));
            }
            files.insert(uid, git::page_path(&slug, action == Some(Action::Trash)));
            return Ok(Fate::Drop);
        }
        Ok(Fate::Keep(files.values().map(|f| (f.clone(), None)).collect()))
    })
}

/// What a rewrite does for an erasure: from commit `from` on, page `uid`'s file holds
/// `kept` wherever it held `erased`.
fn replacing(
    uid: String,
    from: git2::Oid,
    erased: git2::Oid,
    kept: git2::Oid,
) -> impl FnMut(&git2::Commit<'_>) -> anyhow::Result<Fate> {
    let mut file: Option<String> = None;
    let mut active = false;
    move |commit| {
        let (page, action, slug) = page_change(commit);
        if page.as_deref() == Some(uid.as_str()) {
            file = (action != Some(Action::Purge)).then(|| git::page_path(&slug, action == Some(Action::Trash)));
        }
        active |= commit.id() == from;
        let Some(path) = file.as_ref().filter(|_| active) else { return Ok(Fate::Keep(vec![])) };
        let holds = commit.tree()?.get_path(std::path::Path::new(path)).is_ok_and(|e| e.id() == erased);
        Ok(Fate::Keep(if holds { vec![(path.clone(), Some(kept))] } else { vec![] }))
    }
}

/// The page a commit changed, how, and its slug then (its `Cairn-*` trailers).
fn page_change(commit: &git2::Commit<'_>) -> (Option<String>, Option<Action>, String) {
    let t = git::trailers(commit.message().unwrap_or_default());
    let action = t.get("action").and_then(|a| Action::parse(a));
    (t.get("page").cloned(), action, t.get("slug").cloned().unwrap_or_default())
}

fn named(renamed: &[(git2::Oid, git2::Oid)]) -> Vec<(String, String)> {
    renamed.iter().map(|(old, new)| (old.to_string(), new.to_string())).collect()
}

fn oid(sha: &str) -> Result<git2::Oid> {
    git2::Oid::from_str(sha).map_err(|_| Error::revision_not_found(sha))
}

fn short(sha: &str) -> String {
    sha.chars().take(7).collect()
}
