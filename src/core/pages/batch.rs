//! Batches: the saves made in turn under a workspace's write lock share one flush (the
//! technique databases call group commit).
//!
//! The write lock of a workspace guards a [`State`] holding at most one open [`Batch`]: a
//! database transaction ([`Tx`]: SQLite `BEGIN IMMEDIATE` on the one connection saves
//! share; PostgreSQL with the workspace's transaction-level advisory lock, so other
//! processes queue too) and the commits written into it but not yet durable nor named by
//! the branch. Each save takes the lock, reads and decides inside the batch's transaction
//! (so it sees the saves before it), writes its own commit on top of the batch's newest
//! one and its index rows (under a savepoint once the batch holds another save, so a
//! refused save leaves the others intact), and then:
//!
//! - when nobody else is waiting for the lock, flushes the batch at once — one
//!   `sync_objects` barrier, one `write_ref` (visible; the database commit records the
//!   same head, which is what makes the move survive a power cut: `git::catch_up`), one
//!   database commit — which for a lone save costs what it always did. A save that is
//!   alone when it commits does the barrier and the move in the same trip to the
//!   repository as its commit ([`Early`]), so its flush is the database commit alone;
//! - otherwise lets the waiters in and queues for the lock again (tokio's mutex is fair),
//!   so the saves that arrived meanwhile join the batch; whichever member gets the lock
//!   back first flushes it for all, and the rest find it done. A group of queued saves
//!   (`group`) makes the batch's objects durable in its own trip to the repository,
//!   while its rows are written; a flush with no object written since then has no
//!   barrier to wait for, only the branch's move and the database commit.
//!
//! Every save of a batch answers only after the flush: acknowledged means durable. A
//! failed flush refuses every save of the batch and leaves nothing behind (the branch put
//! back when it had moved, the transaction rolled back). A writer cancelled half-way
//! through its own step poisons the batch: the batch is rolled back and every save in it
//! refused, since nobody can say what the cancelled step left in the transaction. The
//! flush itself runs on a task of its own, so a cancelled request never interrupts one.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use git2::Oid;
use sqlx::{Any, AnyConnection, AssertSqlSafe, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

use crate::core::Ctx;
use crate::error::{Error, Result};
use crate::git::{self, Tip, WorkspaceRepo};
use crate::store::save_conn::SaveTx;
use crate::sync::BySlug;

/// How a batch ended, for each save in it.
#[derive(Debug, Clone)]
pub enum Outcome {
    Durable,
    Refused { unavailable: bool, detail: String },
}

impl Outcome {
    pub fn refused(e: &Error) -> Outcome {
        let detail = match &e.source {
            Some(cause) => format!("{e}: {cause:#}"),
            None => e.to_string(),
        };
        Outcome::Refused { unavailable: e.is_unavailable(), detail }
    }

    pub fn into_result(self) -> Result<()> {
        match self {
            Outcome::Durable => Ok(()),
            Outcome::Refused { unavailable: true, detail } => {
                Err(Error::database_unavailable(anyhow::anyhow!("the save's batch failed: {detail}")))
            }
            Outcome::Refused { unavailable: false, detail } => {
                Err(Error::internal(anyhow::anyhow!("the save's batch failed: {detail}")))
            }
        }
    }
}

/// Saves written but not yet durable.
pub struct Batch {
    pub id: u64,
    pub workspace_id: i64,
    pub tx: Tx,
    /// Where the branch stood and where the batch has taken it; None until the batch's
    /// first commit reads the branch.
    pub heads: Option<Heads>,
    /// The objects the batch wrote that no barrier has made durable yet (made durable
    /// one by one off Linux); a group's trip makes them durable with its own.
    pub written: Vec<Oid>,
    /// Saves whose commits and rows are in the batch.
    pub saves: usize,
    /// Rows written without a commit that must be kept (a reindex).
    pub keep: bool,
    /// Some save queued a webhook delivery.
    pub deliveries: bool,
    /// The stable ids of the pages its saves changed (a co-editing session of one of them
    /// takes the change in once it is durable: `live::changed`).
    pub pages: Vec<String>,
    /// The branch moved ahead of the flush, if it was.
    pub moved: Arc<Early>,
    done: watch::Sender<Option<Outcome>>,
}

impl Batch {
    pub fn follow(&self) -> watch::Receiver<Option<Outcome>> {
        self.done.subscribe()
    }

    fn has_writes(&self) -> bool {
        self.saves > 0 || self.keep
    }
}

/// A batch's transaction. On SQLite, which lets one writer in at a time, on the one
/// connection every workspace's batches share (`store::SaveConn`: no pooled connection
/// to take and hand back per batch); on PostgreSQL, where workspaces write side by side,
/// on a pooled connection of its own.
pub enum Tx {
    Shared(SaveTx),
    Pooled(Transaction<'static, Any>),
}

impl Tx {
    async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Shared(tx) => tx.commit().await,
            Tx::Pooled(tx) => tx.commit().await,
        }
    }

    async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Shared(tx) => tx.rollback().await,
            Tx::Pooled(tx) => tx.rollback().await,
        }
    }
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match self {
            Tx::Shared(tx) => tx,
            Tx::Pooled(tx) => tx,
        }
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            Tx::Shared(tx) => tx,
            Tx::Pooled(tx) => tx,
        }
    }
}

/// The branch under a batch. Read from disk by the batch's first commit, in the same trip
/// to the repository as that commit's objects (a trip of its own when the batch opened
/// cost every lone save a hand-off to the blocking pool): still under the lock, so no
/// other process can move the branch after it.
#[derive(Debug, Clone, Copy)]
pub struct Heads {
    /// The branch head on disk when the batch began.
    pub start: Option<Oid>,
    /// The batch's newest commit and its tree: written, but neither durable nor named by
    /// the branch unless a lone save moved it ([`Early`]); the branch's head and its tree
    /// until the batch's first save.
    pub tip: Option<Tip>,
}

/// The branch moved ahead of the flush: a save alone in its batch makes its commit
/// durable and names it in the same trip to the repository that writes it, saving the
/// flush a trip of its own.
#[derive(Debug, Clone, Copy)]
pub struct Moved {
    pub start: Option<Oid>,
    pub to: Oid,
}

/// Whether a lone save moved the branch ahead of the flush, shared by the batch and that
/// save's trip to the repository. The trip records the move before making it, while it
/// holds the repository; ending the batch closes the cell first. So a save interrupted
/// during its trip and the [`abort`] that follows cannot miss each other: either the trip
/// recorded first, and the put-back (which waits for the repository, so for the move)
/// undoes it, or the cell was closed first and the trip no longer moves the branch.
#[derive(Debug, Default)]
pub struct Early(std::sync::Mutex<EarlyState>);

#[derive(Debug, Default, Clone, Copy)]
enum EarlyState {
    #[default]
    Open,
    Moved(Moved),
    Closed,
}

impl Early {
    fn state(&self) -> std::sync::MutexGuard<'_, EarlyState> {
        crate::sync::lock(&self.0)
    }

    /// Records a move before it is made; false once the batch has ended, and then the
    /// move must not be made.
    pub fn record(&self, moved: Moved) -> bool {
        let mut state = self.state();
        match *state {
            EarlyState::Closed => false,
            _ => {
                *state = EarlyState::Moved(moved);
                true
            }
        }
    }

    /// The move made, if any (once the save that made it has finished its trip).
    fn get(&self) -> Option<Moved> {
        match *self.state() {
            EarlyState::Moved(m) => Some(m),
            _ => None,
        }
    }

    /// Ends the cell (no move after this) and answers the move made before, if any.
    fn close(&self) -> Option<Moved> {
        match std::mem::replace(&mut *self.state(), EarlyState::Closed) {
            EarlyState::Moved(m) => Some(m),
            _ => None,
        }
    }
}

/// What the write lock guards.
#[derive(Default)]
pub struct State {
    pub batch: Option<Batch>,
    next_id: u64,
}

/// A workspace's write lock in this process, and how many wait for it.
#[derive(Default)]
pub struct Slot {
    lock: Arc<Mutex<State>>,
    waiting: AtomicUsize,
}

impl Slot {
    /// Waits for the lock; counted as waiting meanwhile, so the holder knows to leave its
    /// batch open for us.
    pub async fn lock(&self) -> OwnedMutexGuard<State> {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        self.lock.clone().lock_owned().await
    }

    pub fn others_waiting(&self) -> bool {
        self.waiting() > 0
    }

    /// How many wait for the lock now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// The write locks, by workspace slug, and what they did.
#[derive(Default)]
pub struct Slots {
    open: BySlug<Slot>,
    /// Batches flushed durably, and the saves they held (for tests and the bench).
    pub flushes: AtomicU64,
    pub flushed_saves: AtomicU64,
    /// The pages each durable batch changed, for whoever follows them ([`Slots::changes`]).
    changed: Changes,
}

/// What a durable batch changed: its workspace, and the stable ids of its pages.
#[derive(Debug, Clone)]
pub(crate) struct Changed {
    pub workspace_id: i64,
    pub pages: Arc<Vec<String>>,
}

/// A broadcast of [`Changed`]; sent only while someone follows it.
struct Changes(tokio::sync::broadcast::Sender<Changed>);

impl Default for Changes {
    fn default() -> Self {
        Changes(tokio::sync::broadcast::channel(1024).0)
    }
}

impl Slots {
    /// Follows the pages that durable batches change (the co-editing sessions take in
    /// other doors' saves: `live`). A follower too far behind is told it lagged.
    pub(crate) fn changes(&self) -> tokio::sync::broadcast::Receiver<Changed> {
        self.changed.0.subscribe()
    }

    pub fn get(&self, slug: &str) -> Arc<Slot> {
        self.open.get(slug)
    }

    pub fn forget(&self, slug: &str) {
        self.open.forget(slug);
    }
}

fn lock_key(workspace_id: i64) -> i64 {
    // A namespace of our own in PostgreSQL's advisory-lock key space.
    0x4341_4952_0000_0000 + workspace_id
}

/// Opens a batch when none is open: the transaction (which takes the database's write
/// lock on SQLite and the workspace's advisory lock on PostgreSQL). The branch head is
/// read later, by the batch's first commit ([`Heads`]).
pub(crate) async fn open(ctx: &Ctx, workspace_id: i64, state: &mut State) -> Result<()> {
    if state.batch.is_some() {
        return Ok(());
    }
    let tx = match &ctx.db.saves {
        // SQLite, the only backend with a connection kept for the batches.
        Some(saves) => Tx::Shared(saves.begin().await?),
        // PostgreSQL: the lock in the same message as the BEGIN, one round trip fewer for
        // every save. The key is a number of ours (no value from a client is spliced in).
        None => {
            let begin = format!("BEGIN; SELECT pg_advisory_xact_lock({})", lock_key(workspace_id));
            Tx::Pooled(ctx.db.pool.begin_with(AssertSqlSafe(begin)).await?)
        }
    };
    state.next_id += 1;
    let (done, _) = watch::channel(None);
    state.batch = Some(Batch {
        id: state.next_id,
        workspace_id,
        tx,
        heads: None,
        written: Vec::new(),
        saves: 0,
        keep: false,
        deliveries: false,
        pages: Vec::new(),
        moved: Arc::default(),
        done,
    });
    Ok(())
}

/// Ends the open batch: makes its commits durable, moves the branch, commits the
/// transaction, and tells every save in it. A batch without writes is rolled back.
pub(crate) async fn flush(ctx: &Ctx, repo: &WorkspaceRepo, state: &mut State) {
    let Some(batch) = state.batch.take() else { return };
    let writes = batch.has_writes();
    let Batch { workspace_id, tx, heads, written, saves, deliveries, moved, done, pages, .. } = batch;
    if !writes {
        let _ = tx.rollback().await;
        put_back(repo, moved).await;
        done.send_replace(Some(Outcome::Durable));
        return;
    }
    let outcome = match write(ctx, repo, tx, heads, written, moved).await {
        Ok(()) => {
            ctx.writers.flushes.fetch_add(1, Ordering::Relaxed);
            ctx.writers.flushed_saves.fetch_add(saves as u64, Ordering::Relaxed);
            // How groups form under load, for an operator's `LOG_LEVEL` and the bench's
            // batches column (bench/README.md); the count in the message, where a reader
            // of the plain or coloured log finds it the same way.
            tracing::debug!("flushed a batch of {saves} saves");
            // The batch queued pages for embedding, left SQLite's search file behind, and
            // maybe queued deliveries; nudge the workers. The delivery worker only when it
            // has something new: its claim is a write statement, which would queue behind
            // (and hold up) the next batch.
            ctx.models.wake();
            if let Some(search) = &ctx.db.search {
                search.changed(workspace_id);
            }
            if deliveries {
                ctx.webhook_wake.notify_one();
            }
            if !pages.is_empty() && ctx.writers.changed.0.receiver_count() > 0 {
                let _ = ctx.writers.changed.0.send(Changed { workspace_id, pages: Arc::new(pages) });
            }
            Outcome::Durable
        }
        Err(e) => {
            tracing::error!(error = %e, saves, "a batch failed; its saves are refused");
            Outcome::refused(&e)
        }
    };
    done.send_replace(Some(outcome));
}

/// Objects durable, then the branch moved, then the database commit (which records the
/// new head: after a power cut the start-up check moves a branch that lost this move
/// forward to it); if that commit fails, the branch is put back, durably, so the batch
/// leaves nothing behind. The branch may have moved part of the way already ([`Early`]).
async fn write(
    ctx: &Ctx,
    repo: &WorkspaceRepo,
    tx: Tx,
    heads: Option<Heads>,
    written: Vec<Oid>,
    moved_early: Arc<Early>,
) -> Result<()> {
    // Every save of the batch has finished its trip to the repository.
    let early = moved_early.get();
    let start = heads.and_then(|h| h.start);
    let tip = heads.and_then(|h| h.tip).map(|t| t.commit);
    // What the branch names now, and whether the batch moves it at all.
    let named = early.map_or(start, |m| Some(m.to));
    let moved = tip.filter(|h| Some(*h) != start);
    if let Some(head) = tip.filter(|h| Some(*h) != named) {
        let written_ref = repo
            .with(move |r| {
                git::sync_objects(r, &written)?;
                git::write_ref(r, head, named)
            })
            .await;
        if let Err(e) = written_ref {
            let _ = tx.rollback().await;
            put_back(repo, moved_early).await;
            return Err(e.into());
        }
    }
    let committed = if ctx.test_hooks.flush_fails() {
        let _ = tx.rollback().await;
        Err(Error::database_unavailable(anyhow::anyhow!("the flush failed (test hook)")))
    } else {
        tx.commit().await.map_err(Error::from)
    };
    if let (Err(_), Some(head)) = (&committed, moved)
        && let Err(undo) = repo.with(move |r| git::reset_branch(r, start, head)).await
    {
        // The start-up check will index the commits instead.
        tracing::error!(error = %undo, "could not put the branch back after a failed batch");
    }
    committed
}

/// Closes the cell and puts back a branch moved ahead of a flush that will not happen,
/// if it still names the commit it was moved to (the move itself may have failed). No
/// trip to the repository when nothing was moved (see [`Early`]).
async fn put_back(repo: &WorkspaceRepo, early: Arc<Early>) {
    let Some(Moved { start, to }) = early.close() else { return };
    let undone = repo
        .with(move |r| match git::head(r)? {
            Some(head) if head == to => git::reset_branch(r, start, to),
            _ => Ok(()),
        })
        .await;
    if let Err(undo) = undone {
        // The start-up check will index the commits instead.
        tracing::error!(error = %undo, "could not put the branch back after a refused save");
    }
}

/// Rolls the open batch back and refuses every save in it (a writer was cancelled in the
/// middle of its step, or a lone save was refused), putting the branch back if a lone
/// save had moved it ([`Early`]).
pub(crate) async fn abort(repo: &WorkspaceRepo, state: &mut State, why: &str) {
    let Some(batch) = state.batch.take() else { return };
    if batch.has_writes() {
        tracing::warn!(saves = batch.saves, "{why}: the open batch is rolled back and its saves refused");
    }
    put_back(repo, batch.moved.clone()).await;
    let _ = batch.tx.rollback().await;
    batch.done.send_replace(Some(Outcome::Refused { unavailable: true, detail: why.to_owned() }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(n: u8) -> Moved {
        Moved { start: None, to: Oid::from_bytes(&[n; 20]).unwrap() }
    }

    #[test]
    fn a_move_recorded_before_the_batch_ends_is_put_back_and_none_is_made_after() {
        // The trip first: its move is what the abort finds.
        let early = Early::default();
        assert!(early.record(moved(1)));
        assert_eq!(early.get().map(|m| m.to), Some(moved(1).to));
        assert_eq!(early.close().map(|m| m.to), Some(moved(1).to));
        // The abort first: the trip that comes after must not move the branch.
        let early = Early::default();
        assert!(early.close().is_none());
        assert!(!early.record(moved(2)));
        assert!(early.get().is_none());
    }
}
