//! Groups: the creates and edits queued on a workspace's lock, decided, committed and
//! indexed together by one task (the technique is known as flat combining). A group
//! lives inside a batch ([`super::batch`]), whose flush it shares.
//!
//! A create or a plain edit does not take the workspace's lock to save itself: it queues
//! its intent (checked and parsed already) and waits for its answer. Whoever gets the lock
//! next takes every intent queued by then — its own, if no group has taken it yet — and
//! saves them as one group, on a task of its own (a cancelled request cannot interrupt
//! it): one query reads every page the group touches; the saves are decided in the order
//! they were queued ([`super::decide`], as a save alone is), each against what the ones
//! before it left (a create sees an earlier create of its slug, an edit the earlier edit
//! of its page); one trip to the repository makes every commit and makes the batch's
//! objects durable, while the rows are written (each save's as the one script it always
//! was, under one savepoint for the group), so the batch's flush has only the branch's
//! move and the database commit left. The group then ends as any operation under the
//! lock ends: its answers wait for its batch to be durable. So the row reads, the trips
//! to the repository, and the lock passed from task to task are paid once per group, not
//! once per save.
//!
//! History is unchanged: one commit per save, in the order the saves were queued, each
//! answered with its own revision. A save refused by its decision (a stale base, a taken
//! slug, a missing page or parent) is refused alone. When the group's rows fail, they are
//! taken back (the group's savepoint) and its saves run again one by one, each exactly as
//! a save on its own runs, so only a save that fails on its own is refused. When the
//! group's objects cannot be written, the disk the batch shares failed: the batch is
//! refused, as a failed flush refuses it.
//!
//! An append or a merge (which read more than the page's row) and a replayed save (whose
//! origin is a task-local of its own task) take the lock on their own, as every other
//! page operation does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{OwnedMutexGuard, oneshot};

use super::Page;
use super::batch::{Outcome, Slot, State};
use super::decide::{self, Answer, Decided, Intent};
use super::save::{Saves, Writer};
use crate::core::Ctx;
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::sync::BySlug;

/// A save waiting for its group.
pub(crate) struct Pending {
    user: User,
    intent: Intent,
    /// Dropped when a group takes the save: its request stops waiting for the lock.
    taken: oneshot::Sender<()>,
    reply: oneshot::Sender<Result<Page>>,
}

impl Pending {
    fn take(self) -> Taken {
        let Pending { user, intent, taken, reply } = self;
        drop(taken);
        Taken { user, intent, reply }
    }
}

/// A save in a group.
struct Taken {
    user: User,
    intent: Intent,
    reply: oneshot::Sender<Result<Page>>,
}

/// The saves queued on one workspace's lock, in the order they came.
#[derive(Default)]
pub struct Queue(std::sync::Mutex<Vec<Pending>>);

/// The queues, by workspace slug (beside the write locks, `batch::Slots`), and how many
/// saves were made together.
#[derive(Default)]
pub struct Queues {
    open: BySlug<Queue>,
    /// Saves decided, committed and indexed with others of their group (for tests and
    /// the bench).
    pub saved_together: AtomicU64,
}

impl Queues {
    pub fn get(&self, slug: &str) -> Arc<Queue> {
        self.open.get(slug)
    }

    pub fn forget(&self, slug: &str) {
        self.open.forget(slug);
    }
}

impl Queue {
    fn push(&self, p: Pending) {
        crate::sync::lock(&self.0).push(p);
    }

    fn take(&self) -> Vec<Pending> {
        std::mem::take(&mut *crate::sync::lock(&self.0))
    }
}

/// Queues a save and answers once the group that saved it is durable (or refused).
pub(super) async fn submit(ctx: &Ctx, access: &Access, user: &User, intent: Intent) -> Result<Page> {
    let slot = ctx.writers.get(access.slug());
    let queue = ctx.queued.get(access.slug());
    let (reply, mut answer) = oneshot::channel();
    let (taken, mut taken_rx) = oneshot::channel();
    // Queued before waiting for the lock: whoever holds it when we are counted as
    // waiting may take our save into its group.
    queue.push(Pending { user: user.clone(), intent, taken, reply });
    let answered = tokio::select! {
        biased;
        answered = &mut answer => answered,
        // Taken into a group: no longer waiting for the lock, so the group does not
        // hand the lock over to us before it flushes.
        _ = &mut taken_rx => answer.await,
        guard = slot.lock() => {
            let group = queue.take();
            if group.is_empty() {
                // A group holds our save already.
                drop(guard);
            } else {
                tokio::spawn(run(ctx.clone(), access.clone(), slot.clone(), guard, group));
            }
            answer.await
        }
    };
    ctx.test_hooks.after_write().await;
    answered.unwrap_or_else(|_| Err(Error::internal(anyhow::anyhow!("the save's group ended without answering it"))))
}

/// Saves a group under the lock and answers each of its saves once its batch has ended.
async fn run(ctx: Ctx, access: Access, slot: Arc<Slot>, guard: OwnedMutexGuard<State>, group: Vec<Pending>) {
    // A save whose request went away before its group began is not made.
    let group: Vec<Taken> = group.into_iter().filter(|p| !p.reply.is_closed()).map(Pending::take).collect();
    if group.is_empty() {
        return;
    }
    let armed = group.iter().any(|p| p.intent.slugs().any(|s| ctx.test_hooks.armed(s)));
    let mut guard = guard;
    if group.len() > 1 && !armed {
        let mut w = match Writer::holding(&ctx, &access, slot.clone(), guard, true).await {
            Ok(w) => w,
            Err(e) => return refuse(group, &Outcome::refused(&e)),
        };
        let batch = w.batch_id();
        match together(&mut w, &group).await {
            Ok(answers) => {
                let outcome = w.end().await;
                for (p, answer) in group.into_iter().zip(answers) {
                    let _ = p.reply.send(outcome.clone().into_result().and(answer));
                }
                return;
            }
            // The group's rows were taken back, the batch is as it was: one by one.
            Err(e) if w.batch_id() == batch => {
                tracing::warn!(error = %e, saves = group.len(), "a group of saves failed together; saving them one by one");
                guard = w.release().0;
            }
            // The batch was refused with the group.
            Err(e) => {
                drop(w.end().await);
                return refuse(group, &Outcome::refused(&e));
            }
        }
    }
    one_by_one(&ctx, &access, slot, guard, group).await;
}

/// Each save of the group as a save on its own would run, one after the other in the
/// batch (a lone save; a test hook waiting for one of the saves; rows that failed
/// together): each is answered with its own batch's outcome, as if it had queued for the
/// lock on its own — a save in a batch that a later save's failure ended is refused with
/// that batch, and the saves after it go into a new one.
async fn one_by_one(ctx: &Ctx, access: &Access, slot: Arc<Slot>, guard: OwnedMutexGuard<State>, group: Vec<Taken>) {
    let last = group.len() - 1;
    let mut guard = Some(guard);
    let mut saved = Vec::with_capacity(group.len());
    for (i, p) in group.iter().enumerate() {
        let held = guard.take().expect("the lock is held until the group's last save");
        let mut w = match Writer::holding(ctx, access, slot.clone(), held, i < last).await {
            Ok(w) => w,
            Err(e) => {
                // The batch could not be opened: nothing of this save, or of the ones
                // after it, was made.
                let outcome = Outcome::refused(&e);
                saved.extend(group[i..].iter().map(|_| (Err(refusal(&outcome)), None)));
                break;
            }
        };
        let answer = p.intent.save_in(&mut w, &p.user).await;
        if i == last {
            let outcome = w.end().await;
            saved.push((outcome.into_result().and(answer), None));
        } else {
            let (held, follows) = w.release();
            guard = Some(held);
            saved.push((answer, follows));
        }
    }
    for (p, (answer, follows)) in group.into_iter().zip(saved) {
        // Ended by now: flushed with the last save's batch, or refused before it.
        let outcome = follows.map_or(Outcome::Durable, |done| {
            done.borrow().clone().unwrap_or_else(|| Outcome::Refused {
                unavailable: false,
                detail: "a group's batch ended without an outcome".to_owned(),
            })
        });
        let _ = p.reply.send(outcome.into_result().and(answer));
    }
}

fn refuse(group: Vec<Taken>, outcome: &Outcome) {
    for p in group {
        let _ = p.reply.send(Err(refusal(outcome)));
    }
}

/// The error a refused batch answers each of its saves.
fn refusal(outcome: &Outcome) -> Error {
    match outcome.clone().into_result() {
        Err(e) => e,
        Ok(()) => Error::internal(anyhow::anyhow!("a group of saves was not saved")),
    }
}

/// The saves of `group` decided in order, committed and indexed together. On an error,
/// the group left nothing in the batch if the batch is still open; otherwise the batch
/// was refused.
async fn together(w: &mut Writer, group: &[Taken]) -> Result<Vec<Result<Page>>> {
    let mut slugs: Vec<&str> = group.iter().flat_map(|p| p.intent.slugs()).collect();
    slugs.sort_unstable();
    slugs.dedup();
    let mut known = decide::known(w, &slugs).await?;
    let mut changes = Vec::new();
    let mut decided = Vec::with_capacity(group.len());
    for p in group {
        decided.push(match p.intent.decide(&known, w.access.slug()) {
            Decided::Commit(change) => {
                let k = changes.len();
                known.insert(change.state.slug.clone(), decide::after(&change, k));
                changes.push((p.user.clone(), *change));
                Answer::Page(k)
            }
            Decided::Answered(answer) => answer,
        });
    }
    let n = changes.len();
    let pages = if n == 0 { vec![] } else { w.commit_saves(changes, Saves::Group(n)).await? };
    w.ctx.queued.saved_together.fetch_add(group.len() as u64, Ordering::Relaxed);
    Ok(decided
        .into_iter()
        .map(|d| match d {
            Answer::Now(answer) => *answer,
            Answer::Page(k) => Ok(pages[k].clone()),
            Answer::Stale(k) => {
                let p = &pages[k];
                let theirs = super::theirs(&p.revision, &p.updated_by, &p.updated_at);
                Err(Error::stale_revision(&p.revision).with_extra("theirs", theirs))
            }
        })
        .collect())
}
