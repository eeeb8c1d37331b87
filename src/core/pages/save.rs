//! The one write path of pages: files first, then the database.
//!
//! A [`Writer`] holds the workspace's write lock — in-process, and with PostgreSQL also a
//! session advisory lock, so several `cairn` processes sharing one database and one
//! `DATA_DIR` serialise too. Inside it an operation reads the current state, decides,
//! and hands [`Change`]s to [`Writer::commit`]: one git commit per change, then one
//! database transaction with every index row and outbox event. If that transaction
//! fails, the branch is put back, so a refused save leaves nothing behind.

use std::sync::Arc;

use serde_json::json;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, Connection};

use super::rows::{self, IndexedPage, RevisionRow};
use super::{Actor, Page};
use crate::core::Ctx;
use crate::core::users::User;
use crate::core::webhooks;
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::git::{self, FileChange, WorkspaceRepo};
use crate::markdown::{self, Parsed};
use crate::store::Backend;

/// What a commit did to its page (its `Cairn-Action` trailer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    /// Restore of an earlier revision's content.
    Restore,
    /// A link rewrite caused by another page's rename.
    Relink,
    Move,
    Rename,
    Trash,
    Untrash,
    Purge,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Restore => "restore",
            Action::Relink => "relink",
            Action::Move => "move",
            Action::Rename => "rename",
            Action::Trash => "trash",
            Action::Untrash => "untrash",
            Action::Purge => "purge",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "create" => Action::Create,
            "update" => Action::Update,
            "restore" => Action::Restore,
            "relink" => Action::Relink,
            "move" => Action::Move,
            "rename" => Action::Rename,
            "trash" => Action::Trash,
            "untrash" => Action::Untrash,
            "purge" => Action::Purge,
            _ => return None,
        })
    }

    /// The webhook event the change emits (CONTRACT §5 "Events"). A page restored from
    /// the trash reappears, so followers are told `page.created`.
    pub fn event(self) -> &'static str {
        match self {
            Action::Create | Action::Untrash => "page.created",
            Action::Update | Action::Restore | Action::Relink => "page.updated",
            Action::Trash | Action::Purge => "page.deleted",
            Action::Move => "page.moved",
            Action::Rename => "page.renamed",
        }
    }
}

/// A page's parent, by the id kept in the commit trailers and by its slug (for the answer).
#[derive(Debug, Clone)]
pub struct Parent {
    pub uid: String,
    pub slug: String,
}

/// A page as one commit leaves it.
#[derive(Debug, Clone)]
pub struct PageState {
    pub uid: String,
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parent: Option<Parent>,
    pub trashed: bool,
    /// `content` already parsed by the operation (for its title), so a save parses once.
    pub parsed: Option<Arc<Parsed>>,
}

impl PageState {
    pub fn path(&self) -> String {
        git::page_path(&self.slug, self.trashed)
    }
}

/// One page change: becomes exactly one commit.
#[derive(Debug, Clone)]
pub struct Change {
    pub action: Action,
    /// First line of the commit message (what `history` shows).
    pub summary: String,
    /// The page's file before the change, removed when it differs from the new one.
    pub before_path: Option<String>,
    /// The page after the change; for a purge, the page before it.
    pub state: PageState,
    pub previous_slug: Option<String>,
}

impl Change {
    fn after_path(&self) -> Option<String> {
        (self.action != Action::Purge).then(|| self.state.path())
    }
}

pub struct Writer {
    pub ctx: Ctx,
    pub access: Access,
    repo: Arc<WorkspaceRepo>,
    conn: Option<PoolConnection<Any>>,
    pg_locked: bool,
    _local: tokio::sync::OwnedMutexGuard<()>,
}

fn lock_key(workspace_id: i64) -> i64 {
    // A namespace of our own in PostgreSQL's advisory-lock key space.
    0x4341_4952_0000_0000 + workspace_id
}

impl Writer {
    /// Takes the workspace's write lock. Fails fast (503) when the database is down,
    /// before anything is written.
    pub async fn begin(ctx: &Ctx, access: &Access) -> Result<Writer> {
        let repo = ctx.repo(access.slug())?;
        let local = repo.write_lock.clone().lock_owned().await;
        let mut conn = ctx.db.pool.acquire().await?;
        let mut pg_locked = false;
        if ctx.db.backend == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(lock_key(access.workspace_id()))
                .execute(&mut *conn)
                .await?;
            pg_locked = true;
        }
        Ok(Writer { ctx: ctx.clone(), access: access.clone(), repo, conn: Some(conn), pg_locked, _local: local })
    }

    pub fn conn(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("connection held until release")
    }

    /// Releases the locks. Always called, on success and on error.
    pub async fn release(mut self) {
        if self.pg_locked
            && let Some(conn) = self.conn.as_mut()
        {
            let key = lock_key(self.access.workspace_id());
            if sqlx::query("SELECT pg_advisory_unlock($1)").bind(key).execute(&mut **conn).await.is_ok() {
                self.pg_locked = false;
            }
        }
    }

    /// Commits each change (one commit each, in order) and then indexes them all in one
    /// transaction. Answers each changed page exactly as its commit left it — built from
    /// what was committed, while the lock is still held, never read back afterwards (a
    /// later save could have landed by then, and its revision would be answered instead).
    pub async fn commit(&mut self, user: &User, mut changes: Vec<Change>) -> Result<Vec<Page>> {
        if changes.is_empty() {
            return Ok(vec![]);
        }
        let clock_now = self.ctx.clock.now();
        let now = clock_now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let time = clock_now.timestamp();
        // Parse each page once: for its tags and links in the index and in the answer.
        for c in &mut changes {
            if c.state.parsed.is_none() && c.action != Action::Purge {
                c.state.parsed = Some(Arc::new(markdown::parse(&c.state.content)));
            }
        }
        let plan: Vec<(Vec<FileChange>, String)> = changes
            .iter()
            .map(|c| {
                let mut files = Vec::new();
                let after = c.after_path();
                if let Some(before) = &c.before_path
                    && Some(before) != after.as_ref()
                {
                    files.push(FileChange { path: before.clone(), content: None });
                }
                if let Some(after) = after {
                    files.push(FileChange { path: after, content: Some(c.state.content.clone().into_bytes()) });
                }
                (files, commit_message(c, user.id, &now))
            })
            .collect();
        let (name, email) = (user.name.clone(), user.email.clone());
        let (head, shas) = self
            .repo
            .with(move |repo| {
                let head = git::head(repo)?;
                let author = git::Author { name: &name, email: &email, time };
                let mut parent = head;
                let mut shas = Vec::with_capacity(plan.len());
                for (files, message) in &plan {
                    let sha = git::commit(repo, parent, files, &author, message)?;
                    shas.push(sha);
                    parent = Some(sha);
                }
                Ok((head, shas))
            })
            .await?;
        let sha_strings: Vec<String> = shas.iter().map(|s| s.to_string()).collect();
        let indexed = self.index(user, &changes, &sha_strings, &now).await;
        let created = match indexed {
            Ok(created) => created,
            Err(e) => {
                let last = *shas.last().expect("at least one commit");
                if let Err(undo) = self.repo.with(move |repo| git::reset_branch(repo, head, last)).await {
                    // The start-up check will index the commit instead.
                    tracing::error!(error = %undo, "could not undo commits after a failed index write");
                }
                return Err(e);
            }
        };
        let actor = Actor { id: user.id, name: user.name.clone() };
        Ok(changes
            .into_iter()
            .zip(sha_strings)
            .zip(created)
            .map(|((c, revision), created_at)| {
                let st = c.state;
                let (tags, links) = match &st.parsed {
                    Some(p) => (p.tags.clone(), p.links.iter().map(|l| l.slug.clone()).collect()),
                    None => (vec![], vec![]),
                };
                Page {
                    slug: st.slug,
                    title: st.title,
                    content: st.content,
                    parent: st.parent.map(|p| p.slug),
                    tags,
                    links,
                    revision,
                    created_at,
                    updated_at: now.clone(),
                    updated_by: actor.clone(),
                    workspace: self.access.slug().to_owned(),
                }
            })
            .collect())
    }

    /// Writes the index rows of committed changes in one transaction; answers each
    /// page's creation time (kept from its row, or now for a new page).
    async fn index(&mut self, user: &User, changes: &[Change], shas: &[String], now: &str) -> Result<Vec<String>> {
        let ws_id = self.access.workspace_id();
        let ws_slug = self.access.slug().to_owned();
        let mut created = Vec::with_capacity(changes.len());
        let mut tx = self.conn().begin().await?;
        // The first statement writes, so SQLite takes its write lock at once (a read
        // first would pin a snapshot that a concurrent writer could invalidate).
        rows::set_head_in_tx(&mut tx, ws_id, shas.last().expect("at least one commit")).await?;
        for (change, sha) in changes.iter().zip(shas) {
            let st = &change.state;
            if change.action == Action::Purge {
                rows::purge_in_tx(&mut tx, ws_id, &st.uid).await?;
                created.push(now.to_owned());
            } else {
                let row = IndexedPage {
                    uid: st.uid.clone(),
                    slug: st.slug.clone(),
                    title: st.title.clone(),
                    content: st.content.clone(),
                    parent_uid: st.parent.as_ref().map(|p| p.uid.clone()),
                    path: st.path(),
                    revision: sha.clone(),
                    created_at: now.to_owned(),
                    created_by: user.id,
                    updated_at: now.to_owned(),
                    updated_by: user.id,
                    deleted: st.trashed.then(|| (now.to_owned(), user.id)),
                    parsed: st.parsed.clone(),
                };
                let (page_id, created_at) = rows::upsert_page_in_tx(&mut tx, ws_id, &row).await?;
                created.push(created_at);
                rows::insert_revision_in_tx(
                    &mut tx,
                    ws_id,
                    page_id,
                    &RevisionRow {
                        sha: sha.clone(),
                        path: st.path(),
                        blob: Some(git::blob_id(st.content.as_bytes())?.to_string()),
                        action: change.action.as_str().to_owned(),
                        title: st.title.clone(),
                        message: one_line(&change.summary),
                        author_id: Some(user.id),
                        author_name: user.name.clone(),
                        created_at: now.to_owned(),
                    },
                )
                .await?;
            }
            let mut data = json!({
                "workspace": ws_slug,
                "slug": st.slug,
                "title": st.title,
                "revision": sha,
                "actor": {"id": user.id, "name": user.name},
            });
            if let Some(prev) = &change.previous_slug {
                data["previous_slug"] = json!(prev);
            }
            let payload = json!({"type": change.action.event(), "timestamp": now, "data": data});
            let kind = change.action.event();
            webhooks::fan_out_in_tx(&mut tx, ws_id, &st.uid, kind, &payload.to_string(), now).await?;
        }
        tx.commit().await?;
        // The page is queued for embedding and its event for delivery (in the
        // transaction above); nudge both workers.
        self.ctx.models.wake();
        self.ctx.webhook_wake.notify_one();
        Ok(created)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Dropped without `release` (a panic or a cancelled request): close the
        // connection instead of returning it, so PostgreSQL ends the session and frees
        // the advisory lock.
        if self.pg_locked
            && let Some(conn) = self.conn.take()
        {
            drop(conn.detach());
        }
    }
}

pub fn one_line(s: &str) -> String {
    s.split(['\r', '\n']).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The commit message: the summary (plus the user's message body, if any), then the
/// trailers that let `reindex` rebuild the page.
fn commit_message(c: &Change, actor: i64, time: &str) -> String {
    let st = &c.state;
    format!(
        "{}\n\nCairn-Page: {}\nCairn-Action: {}\nCairn-Slug: {}\nCairn-Title: {}\nCairn-Parent: {}\nCairn-Actor: {}\nCairn-Time: {}\n",
        one_line(&c.summary),
        st.uid,
        c.action.as_str(),
        st.slug,
        one_line(&st.title),
        st.parent.as_ref().map_or("", |p| p.uid.as_str()),
        actor,
        time,
    )
}

/// A new page id for the `Cairn-Page` trailer.
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Refuses content over 1 MiB (exactly 1,048,576 bytes is allowed).
pub fn check_content(content: &str) -> Result<()> {
    if content.len() > super::MAX_CONTENT_BYTES {
        return Err(Error::content_too_large(content.len(), super::MAX_CONTENT_BYTES));
    }
    Ok(())
}
