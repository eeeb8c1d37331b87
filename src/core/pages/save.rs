//! The one write path of pages: files first, then the database.
//!
//! A [`Writer`] holds the workspace's write lock — in-process, and with PostgreSQL also a
//! transaction-level advisory lock, so several `cairn` processes sharing one database and
//! one `DATA_DIR` serialise too. Inside it an operation reads the current state, decides,
//! and hands [`Change`]s to [`Writer::commit`]: one git commit per change, with every
//! index row and outbox event in the same database transaction. Saves queued on the lock
//! share that transaction and its flush ([`super::batch`]); if the flush
//! fails, the branch is put back, so a refused save leaves nothing behind.

use std::sync::Arc;

use serde_json::json;
use sqlx::AnyConnection;
use sqlx::any::AnyRow;
use tokio::sync::{OwnedMutexGuard, oneshot, watch};

use super::batch::{self, Batch, Outcome, Slot, State};
use super::origin::Origin;
use super::rows::{self, IndexedPage, RevisionRow};
use super::{Actor, Page};
use crate::core::Ctx;
use crate::core::test_hooks::SaveFaults;
use crate::core::users::User;
use crate::core::webhooks::{self, EventKind};
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::git::{self, FileChange, WorkspaceRepo};
use crate::markdown::{self, Parsed};
use crate::store::Script;
use crate::time::Timestamp;

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
    /// A new place among the page's siblings, set by hand.
    Order,
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
            Action::Order => "order",
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
            "order" => Action::Order,
            "rename" => Action::Rename,
            "trash" => Action::Trash,
            "untrash" => Action::Untrash,
            "purge" => Action::Purge,
            _ => return None,
        })
    }

    /// The webhook event the change emits (docs/api.md, "Events (outbox)"). A page restored from
    /// the trash reappears, so followers are told `page.created`.
    pub fn event(self) -> EventKind {
        match self {
            Action::Create | Action::Untrash => EventKind::Created,
            Action::Update | Action::Restore | Action::Relink => EventKind::Updated,
            Action::Trash | Action::Purge => EventKind::Deleted,
            // A new place among its siblings is a move within the tree.
            Action::Move | Action::Order => EventKind::Moved,
            Action::Rename => EventKind::Renamed,
        }
    }
}

/// A page's parent, by the id kept in the commit trailers and by its slug (for the answer).
#[derive(Debug, Clone)]
pub struct Parent {
    pub uid: String,
    pub slug: String,
}

impl Parent {
    /// The parent its row names, if any.
    pub fn of(row: &rows::Row) -> Option<Parent> {
        Some(Parent { uid: row.parent_uid.clone()?, slug: row.parent_slug.clone()? })
    }
}

/// A page as one commit leaves it.
#[derive(Debug, Clone)]
pub struct PageState {
    pub uid: String,
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parent: Option<Parent>,
    /// Its place among its siblings when ordered by hand.
    pub position: Option<i64>,
    pub trashed: bool,
    /// `content` already parsed by the operation (for its title), so a save parses once.
    pub parsed: Option<Arc<Parsed>>,
    /// The tags and links the page's rows hold before the change, when the operation
    /// read them (see `rows::IndexedPage::indexed`).
    pub indexed: Option<rows::Lists>,
}

impl PageState {
    /// The page as its row holds it.
    pub fn of(row: &rows::Row) -> PageState {
        PageState {
            uid: row.uid.clone(),
            slug: row.slug.clone(),
            title: row.title.clone(),
            content: row.content.clone(),
            parent: Parent::of(row),
            position: row.position,
            trashed: row.deleted_at.is_some(),
            parsed: None,
            indexed: None,
        }
    }

    /// [`PageState::of`] with the tags and links the page's rows hold, read with the row
    /// (`rows::find_listed`): its save writes them again only if the commit changes them.
    pub fn listed(row: &rows::Row, lists: rows::Lists) -> PageState {
        PageState { indexed: Some(lists), ..PageState::of(row) }
    }

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
    /// Others whose edits the change holds besides its author (`Name <email>`), named in
    /// `Co-authored-by:` trailers: the people of a co-editing session.
    pub co_authors: Vec<String>,
}

impl Change {
    fn after_path(&self) -> Option<String> {
        (self.action != Action::Purge).then(|| self.state.path())
    }
}

/// A workspace's write lock, held by one operation: it reads and decides inside the
/// open batch (see [`super::batch`]), hands [`Change`]s to [`Writer::commit`], and ends
/// with [`Writer::finish`], which answers once the batch is durable.
///
/// An operation's whole course: [`Writer::begin`] (or [`Writer::begin_alone`], from a
/// durable branch) → reads through [`Writer::conn`], then [`Writer::commit`] (or
/// [`Writer::rewrite`] of the history, or [`Writer::keep_writes`] of rows it wrote) →
/// [`Writer::finish`], or [`Writer::abandon`] to roll the batch back. The queued saves of
/// a group (`group.rs`) alone also pass the lock from one save to the next
/// ([`Writer::holding`], [`Writer::release`]) and answer several saves with one outcome
/// ([`Writer::end`], [`Writer::batch_id`]): those four are the pages module's own.
pub struct Writer {
    pub ctx: Ctx,
    pub access: Access,
    repo: Arc<WorkspaceRepo>,
    slot: Arc<Slot>,
    /// The lock, from `begin` until `finish` lets it go.
    guard: Option<OwnedMutexGuard<State>>,
    /// The batch this operation answers after (it committed there, or read what the
    /// batch's saves wrote): its id, and where its outcome appears.
    follows: Option<(u64, watch::Receiver<Option<Outcome>>)>,
    /// Other saves of a group follow this writer's under the same lock (`group`); set
    /// for every writer that commits a [`Saves::Group`].
    grouped: bool,
}

impl Writer {
    /// Takes the workspace's write lock and joins the open batch, or opens one. Fails
    /// fast (503) when the database is down, before anything is written.
    pub async fn begin(ctx: &Ctx, access: &Access) -> Result<Writer> {
        let mut w = Writer::lock(ctx, access).await?;
        w.join().await?;
        Ok(w)
    }

    /// Like [`Writer::begin`], but first flushes a batch other saves left open, so the
    /// operation starts from a durable branch and sees only committed rows (a reindex
    /// rebuilds the rows from the branch on disk).
    pub async fn begin_alone(ctx: &Ctx, access: &Access) -> Result<Writer> {
        let mut w = Writer::lock(ctx, access).await?;
        if w.state().batch.is_some() {
            let guard = w.guard.take().expect("the lock is held");
            w.guard = Some(flush_on_own_task(ctx, &w.repo, guard).await?);
        }
        w.join().await?;
        Ok(w)
    }

    async fn lock(ctx: &Ctx, access: &Access) -> Result<Writer> {
        let slot = ctx.writers.get(access.slug());
        let guard = slot.lock().await;
        Writer::with(ctx, access, slot, guard)
    }

    /// Like [`Writer::begin`], with the lock already taken (by a group of queued saves:
    /// `group`).
    /// With `others`, other saves of its group follow this writer's: it never saves
    /// alone (see [`Writer::commit`]).
    pub(super) async fn holding(
        ctx: &Ctx,
        access: &Access,
        slot: Arc<Slot>,
        guard: OwnedMutexGuard<State>,
        others: bool,
    ) -> Result<Writer> {
        let mut w = Writer::with(ctx, access, slot, guard)?;
        w.grouped = others;
        w.join().await?;
        Ok(w)
    }

    fn with(ctx: &Ctx, access: &Access, slot: Arc<Slot>, guard: OwnedMutexGuard<State>) -> Result<Writer> {
        let repo = ctx.repo(access.slug())?;
        let follows = None;
        Ok(Writer { ctx: ctx.clone(), access: access.clone(), repo, slot, guard: Some(guard), follows, grouped: false })
    }

    async fn join(&mut self) -> Result<()> {
        let (ctx, ws) = (self.ctx.clone(), self.access.workspace_id());
        batch::open(&ctx, ws, self.state_mut()).await?;
        let b = self.batch();
        if b.saves > 0 {
            // What this operation reads includes saves that are not durable yet: its
            // answer, whatever it is, waits for them.
            self.follows = Some((b.id, b.follow()));
        }
        Ok(())
    }

    fn state(&self) -> &State {
        self.guard.as_ref().expect("the lock is held until finish")
    }

    fn state_mut(&mut self) -> &mut State {
        self.guard.as_mut().expect("the lock is held until finish")
    }

    fn batch(&self) -> &Batch {
        self.state().batch.as_ref().expect("a batch is open while the lock is held")
    }

    fn batch_mut(&mut self) -> &mut Batch {
        self.state_mut().batch.as_mut().expect("a batch is open while the lock is held")
    }

    /// The batch's transaction: reads see the saves before this one.
    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.batch_mut().tx
    }

    /// Keeps what this operation wrote through [`Writer::conn`] without a commit (a
    /// reindex): the batch's database commit includes it.
    pub fn keep_writes(&mut self) {
        let b = self.batch_mut();
        b.keep = true;
        let follow = (b.id, b.follow());
        self.follows.get_or_insert(follow);
    }

    /// Hands the lock back without ending the operation, and where the outcome of the
    /// batch it answers after will appear, if it has one: for the next save of a group
    /// (`group`), which ends the batch for both.
    pub(super) fn release(mut self) -> (OwnedMutexGuard<State>, Option<watch::Receiver<Option<Outcome>>>) {
        let guard = self.guard.take().expect("the lock is held until finish");
        (guard, self.follows.take().map(|(_, done)| done))
    }

    /// The open batch's id, if one is open (a refused lone save ends its batch).
    pub(super) fn batch_id(&self) -> Option<u64> {
        self.state().batch.as_ref().map(|b| b.id)
    }

    /// Ends the operation: lets the lock go and answers once the batch holding this
    /// operation's commits (or the saves it read) is durable — or refused.
    pub async fn finish(self) -> Result<()> {
        self.end().await.into_result()
    }

    /// [`Writer::finish`], answering how the batch ended, for a caller that answers
    /// several saves with it.
    pub(super) async fn end(mut self) -> Outcome {
        // `follows` stays set until the outcome is in, so a cancelled finish still makes
        // sure the batch is flushed (see Drop).
        let Some((id, mut done)) = self.follows.clone() else {
            // Nothing of ours, nor anything we read, is pending. A batch we opened and
            // left empty is rolled back.
            if let Some(mut guard) = self.guard.take()
                && guard.batch.as_ref().is_some_and(|b| b.saves == 0 && !b.keep)
            {
                batch::abort(&self.repo, &mut guard, "unused").await;
            }
            return Outcome::Durable;
        };
        let guard = self.guard.take().expect("the lock is held until finish");
        let flushed = if self.slot.others_waiting() {
            // Let the waiting saves join the batch; whoever of us gets the lock back
            // first flushes it for all.
            drop(guard);
            tokio::select! {
                biased;
                _ = done.changed() => Ok(()),
                guard = self.slot.lock() => {
                    if guard.batch.as_ref().is_some_and(|b| b.id == id) {
                        flush_on_own_task(&self.ctx, &self.repo, guard).await.map(drop)
                    } else {
                        Ok(())
                    }
                }
            }
        } else {
            flush_on_own_task(&self.ctx, &self.repo, guard).await.map(drop)
        };
        if let Err(e) = flushed {
            return Outcome::refused(&e);
        }
        let outcome = done.borrow().clone();
        outcome.unwrap_or_else(|| Outcome::Refused {
            unavailable: false,
            detail: format!("batch {id} ended without an outcome"),
        })
    }

    /// Replaces the batch's history with a rewritten one (a purge, an erasure:
    /// `super::forget`): `rewrite` gets the repository and the batch's newest commit and
    /// answers the new history, whose objects this writes. The flush makes them durable
    /// and moves the branch to the new tip as it would to a save's commit, before the
    /// database commit; a refused flush puts the branch back. Answers the commits whose
    /// ids changed, (old, new).
    pub async fn rewrite<F>(&mut self, rewrite: F) -> Result<Vec<(git2::Oid, git2::Oid)>>
    where
        F: FnOnce(&git2::Repository, Option<git::Tip>) -> anyhow::Result<git::rewrite::Rewritten> + Send + 'static,
    {
        let heads = self.batch().heads;
        let (start, tip, renamed, written) = self
            .repo
            .with(move |repo| {
                let (start, tip) = match heads {
                    Some(h) => (h.start, h.tip),
                    None => {
                        let tip = git::tip(repo)?;
                        (tip.map(|t| t.commit), tip)
                    }
                };
                let new = rewrite(repo, tip)?;
                let mut written = Vec::new();
                new.made.write(repo, &mut written)?;
                Ok((start, new.tip, new.renamed, written))
            })
            .await?;
        let tip = tip.ok_or_else(|| Error::internal(anyhow::anyhow!("a rewrite left no commit")))?;
        let b = self.batch_mut();
        b.heads = Some(batch::Heads { start, tip: Some(tip) });
        b.written.extend(written);
        b.keep = true;
        let follow = (b.id, b.follow());
        self.follows.get_or_insert(follow);
        let ws = self.access.workspace_id();
        rows::set_head_in_tx(self.conn(), ws, &tip.commit.to_string()).await?;
        Ok(renamed)
    }

    /// Ends the operation without its writes: the batch (which [`Writer::begin_alone`]
    /// made its own) is rolled back, and the branch put back if it moved.
    pub async fn abandon(mut self, why: &str) {
        self.follows = None;
        if let Some(mut guard) = self.guard.take() {
            batch::abort(&self.repo, &mut guard, why).await;
        }
    }

    /// Commits each change (one commit each, in order) on top of the batch and writes
    /// their index rows and outbox events into its transaction. Answers each changed page
    /// exactly as its commit left it — built from what was committed, while the lock is
    /// still held, never read back afterwards (a later save could have landed by then,
    /// and its revision would be answered instead). The answer stands only once
    /// [`Writer::finish`] says the batch is durable.
    pub async fn commit(&mut self, user: &User, changes: Vec<Change>) -> Result<Vec<Page>> {
        let changes = changes.into_iter().map(|c| (user.clone(), c)).collect();
        self.commit_saves(changes, Saves::One).await
    }

    /// [`Writer::commit`] of one change: the page it leaves.
    pub async fn commit_one(&mut self, user: &User, change: Change) -> Result<Page> {
        let mut pages = self.commit(user, vec![change]).await?;
        pages.pop().ok_or_else(|| Error::internal(anyhow::anyhow!("a commit answered no page")))
    }

    /// [`Writer::commit`] of changes made by several users: each change is committed and
    /// indexed as its user's. Three steps: the commits laid out ([`lay_out`], pure), one
    /// trip to the repository that makes them and writes their objects ([`Trip`]) while
    /// their rows are written ([`Writer::index`]), then the batch told what it now holds.
    pub async fn commit_saves(&mut self, mut changes: Vec<(User, Change)>, saves: Saves) -> Result<Vec<Page>> {
        if changes.is_empty() {
            return Ok(vec![]);
        }
        debug_assert!(self.grouped || saves == Saves::One, "a group's writer is marked grouped");
        let origin = Origin::current();
        let committed_at = self.ctx.clock.now();
        // A replayed save keeps its source commit's date: the revision's time.
        let authored_at = origin.as_ref().map_or(committed_at, |o| o.time);
        let now = crate::time::stored(authored_at);
        let faults = self
            .ctx
            .test_hooks
            .save_faults(changes.iter().map(|(_, c)| c.state.slug.as_str()), matches!(saves, Saves::Group(_)));
        let planned = lay_out(&mut changes, origin.as_ref(), &now);

        let b = self.batch();
        // Alone in its batch, with nobody waiting to join: the save makes its commit
        // durable and moves the branch in this same trip (see batch::Early). Whoever
        // arrives meanwhile joins the batch as usual. A group never does: it must be able
        // to take its rows back and leave the batch as it found it.
        let alone = !self.grouped && b.saves == 0 && !b.keep && !self.slot.others_waiting();
        let trip = Trip {
            heads: b.heads,
            planned,
            origin,
            committed_at: committed_at.timestamp(),
            authored_at: authored_at.timestamp(),
            // A group makes its objects durable in its own trip, and with them every
            // object the batch wrote before: the barrier then runs while the group's rows
            // are still being written (a group's rows take longer than its objects),
            // instead of after them in the flush, during which nothing else moves
            // (measured in commit eb2cd5a). Its objects stay unnamed until the flush
            // moves the branch, so a group that is refused still leaves nothing behind.
            sync_before: matches!(saves, Saves::Group(_)).then(|| b.written.clone()),
            move_early: alone.then(|| b.moved.clone()),
            faults,
        };
        // The trip makes the commits in memory and hands their ids to the rows, then
        // writes the objects while the rows are written (the two take about as long, on
        // two threads).
        let (made_tx, made_rx) = tokio::sync::oneshot::channel();
        let objects = self.repo.start(move |repo| trip.run(repo, made_tx));
        let Ok((start, commits)) = made_rx.await else {
            // The trip failed before the commits were made: nothing was written.
            return Err(match objects.await {
                Err(e) => e.into(),
                Ok(_) => Error::internal(anyhow::anyhow!("the save's commits were written but never made")),
            });
        };
        if faults.panic_after_commit {
            panic!("test hook: a save interrupted between its commit and its rows");
        }
        let shas: Vec<String> = commits.iter().map(|c| c.tip.commit.to_string()).collect();
        // Each change's content, by the id its commit gave it (a purge's commit has none).
        let blobs: Vec<Option<String>> =
            commits.iter().map(|c| c.blobs.iter().flatten().last().map(|b| b.to_string())).collect();
        let ids = Commits { shas: &shas, blobs: &blobs };
        let (Indexed { created, deliveries }, written) =
            self.index(&changes, ids, &now, saves, faults.rows, objects).await?;

        let b = self.batch_mut();
        b.heads = Some(batch::Heads { start, tip: commits.last().map(|c| c.tip) });
        b.deliveries |= deliveries;
        b.pages.extend(changes.iter().map(|(_, c)| c.state.uid.clone()));
        match written {
            // Everything the batch wrote is durable.
            Synced::All => b.written.clear(),
            Synced::No(written) => b.written.extend(written),
        }
        b.saves += saves.count();
        let follow = (b.id, b.follow());
        self.follows.get_or_insert(follow);
        let workspace = self.access.slug();
        Ok(changes
            .into_iter()
            .zip(shas)
            .zip(created)
            .map(|(((user, c), revision), created_at)| answer(user, c, revision, created_at, &now, workspace))
            .collect())
    }

    /// Writes the index rows of committed changes into the batch while `objects` writes
    /// their commits' objects (with `fail`, a test asks the rows to fail half-way); answers each page's creation time (kept from its row, or
    /// now for a new page) and what `objects` left to make durable. Once the batch
    /// holds another save, or for a group of saves, the rows go under a savepoint: a save
    /// refused by its rows takes back only its own (a group's, only the group's). A lone
    /// save that fails takes the batch down with it, which holds nothing else; so does a
    /// save whose objects could not be written after its rows were (the disk the whole
    /// batch shares failed it).
    async fn index(
        &mut self,
        changes: &[(User, Change)],
        commits: Commits<'_>,
        now: &Timestamp,
        saves: Saves,
        fail: bool,
        objects: impl Future<Output = anyhow::Result<Synced>>,
    ) -> Result<(Indexed, Synced)> {
        let ws_id = self.access.workspace_id();
        let ws_slug = self.access.slug().to_owned();
        let shared = self.batch().saves > 0 || self.batch().keep || matches!(saves, Saves::Group(_));
        let mut savepoint = Savepoint::Wanted(shared);
        let write = Frame { savepoint: &mut savepoint, fail };
        let rows = index_rows(self.conn(), ws_id, &ws_slug, changes, commits, now, write);
        let e = match tokio::join!(rows, objects) {
            (Ok(indexed), Ok(written)) => return Ok((indexed, written)),
            (Err(e), _) => e,
            (Ok(_), Err(e)) => e.into(),
        };
        let repo = self.repo.clone();
        match savepoint {
            Savepoint::Wanted(false) => {
                batch::abort(&repo, self.state_mut(), "a lone save was refused").await;
                // Keep the lock usable for the rest of this operation (it may read).
                let ctx = self.ctx.clone();
                batch::open(&ctx, ws_id, self.state_mut()).await?;
            }
            // Refused before it wrote anything.
            Savepoint::Wanted(true) => {}
            Savepoint::Open => {
                if let Err(undo) = Savepoint::roll_back(self.conn()).await {
                    // The transaction's state is unknown: nothing in it can stand.
                    tracing::error!(error = %undo, "rolling back to a savepoint failed");
                    batch::abort(&repo, self.state_mut(), "a savepoint could not be rolled back").await;
                }
            }
            Savepoint::Released => {
                batch::abort(&repo, self.state_mut(), "a save failed after its savepoint was released").await;
            }
        }
        Err(e)
    }
}

/// Whose changes a commit holds: one save's (one operation's, however many pages it
/// changes), or a group of queued saves' (`group`), which must be able to take back
/// its rows alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saves {
    One,
    Group(usize),
}

impl Saves {
    fn count(self) -> usize {
        match self {
            Saves::One => 1,
            Saves::Group(n) => n,
        }
    }
}

/// What a save's trip to the repository left for the batch's flush to make durable.
enum Synced {
    /// Nothing: the trip's barrier covered every object the batch wrote until then (a
    /// lone save that moved the branch, or a group).
    All,
    /// These objects, written but not durable until the batch's flush.
    No(Vec<git2::Oid>),
}

/// A change's commit, laid out before the trip to the repository.
struct Planned {
    files: Vec<FileChange>,
    message: String,
    name: String,
    email: String,
}

/// Lays out the commits of `changes`, one each, before the trip to the repository: a
/// replayed save's summaries become its source commit's subject, each page's content is
/// parsed once (for its tags and links, in the rows and the answer), and each commit's
/// files and message are written down.
fn lay_out(changes: &mut [(User, Change)], origin: Option<&Origin>, now: &Timestamp) -> Vec<Planned> {
    // A replayed save says what its source commit says of itself.
    if let Some(subject) = origin.map(|o| one_line(&o.subject)).filter(|s| !s.is_empty()) {
        for (_, c) in changes.iter_mut() {
            c.summary.clone_from(&subject);
        }
    }
    for (_, c) in changes.iter_mut() {
        if c.state.parsed.is_none() && c.action != Action::Purge {
            c.state.parsed = Some(Arc::new(markdown::parse(&c.state.content)));
        }
    }
    changes
        .iter()
        .map(|(user, c)| {
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
            let message = commit_message(c, user.id, now, origin);
            Planned { files, message, name: user.name.clone(), email: user.email.clone() }
        })
        .collect()
}

/// A save's one trip to the repository: everything it needs, taken from the writer
/// before it leaves for the blocking pool.
struct Trip {
    /// Where the batch has taken the branch; None before its first commit.
    heads: Option<batch::Heads>,
    planned: Vec<Planned>,
    origin: Option<Origin>,
    /// Unix seconds: the commits' committer time, and their author time.
    committed_at: i64,
    authored_at: i64,
    /// A group's: the objects the batch wrote before, made durable with the group's.
    sync_before: Option<Vec<git2::Oid>>,
    /// A save alone in its batch: the cell in which it records moving the branch.
    move_early: Option<Arc<batch::Early>>,
    faults: SaveFaults,
}

impl Trip {
    /// Makes the commits (on the batch's newest one, or the branch's head for the batch's
    /// first), hands them to the rows through `made`, then writes their objects and
    /// answers what the flush has left to make durable.
    fn run(self, repo: &git2::Repository, made: oneshot::Sender<Made>) -> anyhow::Result<Synced> {
        // The batch's first commit reads the branch (under the lock: see Heads).
        let (start, mut parent) = match self.heads {
            Some(h) => (h.start, h.tip),
            None => {
                let tip = git::tip(repo)?;
                (tip.map(|t| t.commit), tip)
            }
        };
        let mut commits = Vec::with_capacity(self.planned.len());
        let mut unwritten = git::Unwritten::default();
        for p in &self.planned {
            let committer = git::Author { name: &p.name, email: &p.email, time: self.committed_at };
            let author = match &self.origin {
                Some(o) => git::Author { name: &o.author_name, email: &o.author_email, time: self.authored_at },
                None => git::Author { time: self.authored_at, ..committer },
            };
            let commit = git::make_commit(repo, parent, &p.files, &author, &committer, &p.message, &mut unwritten)?;
            parent = Some(commit.tip);
            commits.push(commit);
        }
        let _ = made.send((start, commits));
        anyhow::ensure!(!self.faults.objects, "test hook: the save's objects could not be written");
        if self.faults.disk_full {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC).into());
        }
        let mut written = Vec::new();
        unwritten.write(repo, &mut written)?;
        if let Some(mut before) = self.sync_before {
            before.append(&mut written);
            git::sync_objects(repo, &before)?;
            return Ok(Synced::All);
        }
        // Recorded before it is made, while this trip holds the repository (a save
        // interrupted now must leave it known), and not made if the batch ended
        // meanwhile (see batch::Early).
        if let (Some(early), Some(to)) = (&self.move_early, parent.map(|t| t.commit))
            && early.record(batch::Moved { start, to })
        {
            git::sync_objects(repo, &written)?;
            git::write_ref(repo, to, start)?;
            return Ok(Synced::All);
        }
        Ok(Synced::No(written))
    }
}

/// The commits a trip made, as soon as they are made: where the branch stood when the
/// batch began, and each change's commit.
type Made = (Option<git2::Oid>, Vec<git::Written>);

/// A changed page as its commit leaves it: the save's answer.
fn answer(user: User, c: Change, revision: String, created_at: Timestamp, now: &Timestamp, workspace: &str) -> Page {
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
        updated_by: Actor { id: user.id, name: user.name },
        workspace: workspace.to_owned(),
        position: st.position,
    }
}

/// The commits of a save's changes, one per change: ids, and the id of each one's
/// content.
struct Commits<'a> {
    shas: &'a [String],
    blobs: &'a [Option<String>],
}

/// How [`index_rows`] writes: in a savepoint or not, and whether the test hook asks it
/// to fail.
struct Frame<'a> {
    savepoint: &'a mut Savepoint,
    fail: bool,
}

/// The savepoint around one save's rows in a shared batch. It is opened by the first
/// statement of the save's first script and released by the last one of its last, so
/// it costs no hand-off to the database of its own (on SQLite a save is then one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Savepoint {
    /// Not opened yet: whether the save needs one.
    Wanted(bool),
    /// May be open: a statement that opens it was sent.
    Open,
    Released,
}

impl Savepoint {
    const OPEN: &str = "SAVEPOINT cairn_save";
    const RELEASE: &str = "RELEASE SAVEPOINT cairn_save";

    /// Puts the savepoint's opening first in `script` if it is wanted and not open yet,
    /// and its release last if `last`.
    fn frame(&mut self, script: &mut Script, last: bool) {
        if *self == Savepoint::Wanted(true) {
            script.prepend(Self::OPEN);
            *self = Savepoint::Open;
        }
        if last && *self == Savepoint::Open {
            script.push(Self::RELEASE, vec![]);
        }
    }

    /// Runs a framed script; past its release, the savepoint is gone.
    async fn run(&mut self, script: Script, last: bool, tx: &mut AnyConnection) -> Result<Vec<AnyRow>> {
        let rows = script.run(tx).await?;
        if last && *self == Savepoint::Open {
            *self = Savepoint::Released;
        }
        Ok(rows)
    }

    async fn roll_back(tx: &mut AnyConnection) -> Result<()> {
        let mut script = Script::new();
        script.push("ROLLBACK TO SAVEPOINT cairn_save", vec![]);
        script.push(Self::RELEASE, vec![]);
        script.run(tx).await?;
        Ok(())
    }
}

/// Runs a flush on a task of its own, so the request it serves cannot cancel it halfway;
/// hands the lock back.
async fn flush_on_own_task(
    ctx: &Ctx,
    repo: &Arc<WorkspaceRepo>,
    mut guard: OwnedMutexGuard<State>,
) -> Result<OwnedMutexGuard<State>> {
    let (ctx, repo) = (ctx.clone(), repo.clone());
    tokio::spawn(async move {
        batch::flush(&ctx, &repo, &mut guard).await;
        guard
    })
    .await
    .map_err(|e| Error::internal(anyhow::anyhow!("the batch task failed: {e}")))
}

/// The rows of one save's (or one group's) changes: page rows, revisions, outbox events,
/// one script per change. Not one script for all: SQLite keeps a script prepared by its
/// text, and a group's would be new text every time, parsed and planned afresh (and
/// pushing prepared statements out of the connection's cache) — slower than the hand-offs
/// it saves (measured in commit 50741bc).
async fn index_rows(
    tx: &mut AnyConnection,
    ws_id: i64,
    ws_slug: &str,
    changes: &[(User, Change)],
    commits: Commits<'_>,
    now: &Timestamp,
    frame: Frame<'_>,
) -> Result<Indexed> {
    let Frame { savepoint, fail } = frame;
    let Commits { shas, blobs } = commits;
    let head = shas.last().expect("at least one commit");
    let mut created = Vec::with_capacity(changes.len());
    let mut deliveries = false;
    for (n, (((user, change), sha), blob)) in changes.iter().zip(shas).zip(blobs).enumerate() {
        let st = &change.state;
        // The workspace's head goes with the last change's rows.
        let last = n + 1 == changes.len();
        let kind = change.action.event().as_str();
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
        let payload = json!({"type": kind, "timestamp": now, "data": data}).to_string();
        if change.action == Action::Purge {
            let mut open = Script::new();
            savepoint.frame(&mut open, false);
            savepoint.run(open, false, tx).await?;
            rows::purge_in_tx(tx, ws_id, &st.uid).await?;
            let mut script = Script::new();
            if last {
                rows::set_head(&mut script, ws_id, head);
            }
            webhooks::push_event(&mut script, ws_id, &st.uid, kind, &payload, now);
            savepoint.frame(&mut script, last);
            // The event's row, returned only when some webhook wanted it.
            deliveries |= !savepoint.run(script, last, tx).await?.is_empty();
            created.push(now.clone());
            continue;
        }
        let row = IndexedPage {
            uid: st.uid.clone(),
            slug: st.slug.clone(),
            title: st.title.clone(),
            content: st.content.clone(),
            parent_uid: st.parent.as_ref().map(|p| p.uid.clone()),
            path: st.path(),
            revision: sha.clone(),
            created_at: now.clone(),
            created_by: user.id,
            updated_at: now.clone(),
            updated_by: user.id,
            deleted: st.trashed.then(|| (now.clone(), user.id)),
            parsed: st.parsed.clone(),
            write: match change.action {
                // A create has a new id: its row is inserted here, in this transaction.
                Action::Create => rows::RowWrite::New,
                // Built from the page's row with new content and title (`ops`).
                Action::Update | Action::Restore | Action::Relink => rows::RowWrite::Content,
                _ => rows::RowWrite::Any,
            },
            indexed: st.indexed.clone(),
            // A move leaves the old siblings: its place among them is dropped (`ops`).
            position: matches!(change.action, Action::Order | Action::Move).then_some(st.position),
        };
        let revision = RevisionRow {
            sha: sha.clone(),
            path: st.path(),
            blob: blob.clone(),
            action: change.action.as_str().to_owned(),
            title: st.title.clone(),
            message: one_line(&change.summary),
            author_id: Some(user.id),
            author_name: user.name.clone(),
            created_at: now.clone(),
        };
        // The page's rows and its event in one script: its rows are the page's, then the
        // event's id if a webhook wants it.
        let mut script = rows::page_script(tx, ws_id, &row, last.then_some(head.as_str()), Some(&revision)).await?;
        match (change.action, &change.previous_slug) {
            (Action::Create, _) => rows::aliases::taken(&mut script, ws_id, &st.slug),
            (Action::Rename, Some(old)) if *old != st.slug => {
                rows::aliases::renamed(&mut script, ws_id, &st.uid, old, &st.slug)
            }
            _ => {}
        }
        webhooks::push_event(&mut script, ws_id, &st.uid, kind, &payload, now);
        if fail && last {
            script.push("SELECT * FROM cairn_test_hook_fails_here", vec![]);
        }
        savepoint.frame(&mut script, last);
        let returned = savepoint.run(script, last, tx).await?;
        let (_, created_at) = rows::page_written(&returned)?;
        // The page's row, then the event's if some webhook wanted it.
        deliveries |= returned.len() > 1;
        created.push(created_at);
    }
    Ok(Indexed { created, deliveries })
}

/// What a save's rows were: each page's creation time, and whether a webhook delivery
/// was queued.
struct Indexed {
    created: Vec<Timestamp>,
    deliveries: bool,
}

impl Drop for Writer {
    fn drop(&mut self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        if let Some(mut guard) = self.guard.take() {
            // Dropped holding the lock: the operation was cancelled (or panicked) in the
            // middle of its step, and what it left in the transaction is unknown.
            let repo = self.repo.clone();
            rt.spawn(async move { batch::abort(&repo, &mut guard, "a save was cancelled mid-way").await });
        } else if let Some((id, done)) = self.follows.take()
            && done.borrow().is_none()
        {
            // Cancelled while waiting to flush: make sure somebody does.
            let (ctx, repo, slot) = (self.ctx.clone(), self.repo.clone(), self.slot.clone());
            rt.spawn(async move {
                let mut guard = slot.lock().await;
                if guard.batch.as_ref().is_some_and(|b| b.id == id) {
                    batch::flush(&ctx, &repo, &mut guard).await;
                }
            });
        }
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.split(['\r', '\n']).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The commit message: the summary (plus the user's message body, if any), then the
/// trailers that let `reindex` rebuild the page. A replayed save names its source commit
/// (a line for people, a trailer for the next import).
fn commit_message(c: &Change, actor: i64, time: &Timestamp, origin: Option<&Origin>) -> String {
    let st = &c.state;
    let imported = origin.map_or_else(String::new, |o| {
        format!("Imported from {}\n\nCairn-{}: {}\n", o.commit, Origin::TRAILER, o.commit)
    });
    // A purge's record keeps the page's id only: nothing of what it was called survives
    // it in the history (its other commits are dropped by the purge's rewrite).
    let (slug, title) =
        if c.action == Action::Purge { ("", String::new()) } else { (st.slug.as_str(), one_line(&st.title)) };
    let co_authored: String = c.co_authors.iter().map(|who| format!("Co-authored-by: {}\n", one_line(who))).collect();
    format!(
        "{}\n\n{imported}Cairn-Page: {}\nCairn-Action: {}\nCairn-Slug: {}\nCairn-Title: {}\nCairn-Parent: {}\n{}Cairn-Actor: {}\nCairn-Time: {}\n{co_authored}",
        one_line(&c.summary),
        st.uid,
        c.action.as_str(),
        slug,
        title,
        st.parent.as_ref().map_or("", |p| p.uid.as_str()),
        st.position.map_or_else(String::new, |p| format!("Cairn-Position: {p}\n")),
        actor,
        time,
    )
}

/// A new page id for the `Cairn-Page` trailer.
pub(crate) fn new_uid() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Refuses content over 1 MiB (exactly 1,048,576 bytes is allowed).
pub(crate) fn check_content(content: &str) -> Result<()> {
    if content.len() > super::MAX_CONTENT_BYTES {
        return Err(Error::content_too_large(content.len(), super::MAX_CONTENT_BYTES));
    }
    // PostgreSQL cannot store NUL in text; SQLite could, and both answer alike.
    if content.contains('\0') {
        return Err(Error::invalid_text());
    }
    Ok(())
}
