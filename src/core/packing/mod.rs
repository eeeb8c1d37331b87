//! Keeping workspace repositories small: which to pack and when. The mechanics, and why
//! they are safe beside saves, reads and other processes without the write lock, are in
//! `git/pack.rs`. The packing worker (workers.rs) calls [`pack_due`], whose passes run in
//! a child process once [`run_passes_in`] named the program (`process.rs`); `cairn gc`
//! calls [`pack_all`], which packs in its own process.

pub mod process;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::core::Ctx;
use crate::error::Result;
use crate::git::pack::{self, PackReport};

/// A workspace with loose objects and no save for this long is packed even below the
/// threshold, so a quiet wiki ends up fully packed.
pub(crate) const IDLE: Duration = Duration::from_secs(300);

/// A workspace with no save for this long has the loose files its packing runs held
/// aside unlinked (`git::pack::HELD`): the minute after an unlink is when new files cost
/// more on some disks, and then nobody is making any.
pub(crate) const RELEASE_IDLE: Duration = Duration::from_secs(30);

/// However busy the workspace, held files are unlinked once they have waited this long,
/// which bounds the disk they take to what ten minutes of saves write loose.
pub(crate) const HOLD_AT_MOST: Duration = Duration::from_secs(600);

/// The nice value of the worker's packing thread (0 is everybody else's): a pass is
/// seconds of CPU at 10,000 pages (compressing, finding deltas, the offset rewrite
/// re-reading the pack), and on a small machine it ran beside requests as their equal,
/// which showed in their tails (measured in commit 89bcd07). At 10 the
/// scheduler gives a thread at 0 about ten times its share while both want the CPU; when
/// nothing else does, the pass runs at full speed.
const BACKGROUND_NICE: i32 = 10;

/// The program the worker's passes run in, a child process each (`process.rs`); unset,
/// they run on a thread of this process (a library user's server, unit tests).
static PASS_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Runs the worker's packing passes in child processes of `program` — this binary, which
/// answers `cairn pack-pass DIR`. Set once, at start (`cli::main`); later calls change
/// nothing.
pub fn run_passes_in(program: PathBuf) {
    let _ = PASS_PROGRAM.set(program);
}

/// Packs every workspace that is due (see `git::pack::due`); answers what was packed.
/// Setting `stop` ends the pass early — between workspaces, or inside a long run
/// (`git::pack::pack`) — answering what was done until then.
pub async fn pack_due(ctx: &Ctx, stop: &Arc<AtomicBool>) -> Result<Vec<(String, PackReport)>> {
    run(ctx, false, stop).await
}

/// `cairn gc`: packs every workspace's loose objects and folds its packs into one.
pub async fn pack_all(ctx: &Ctx) -> Result<Vec<(String, PackReport)>> {
    run(ctx, true, &Arc::new(AtomicBool::new(false))).await
}

async fn run(ctx: &Ctx, all: bool, stop: &Arc<AtomicBool>) -> Result<Vec<(String, PackReport)>> {
    let mut done = Vec::new();
    for (_, slug) in crate::core::reindex::all_workspaces(ctx).await? {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let dir = ctx.workspace_dir(&slug);
        let (report, peak_rss_kib) = match pack_one(dir, all, stop).await {
            Ok(done) => done,
            Err(e) if e.is::<pack::Stopped>() => {
                tracing::info!(workspace = %slug, "packing stopped for shutdown; it resumes at the next start");
                break;
            }
            Err(e) => return Err(e.into()),
        };
        if report != PackReport::default() {
            tracing::info!(workspace = %slug, loose = report.loose_packed, folded = report.packs_folded, objects = report.objects, peak_rss_kib, "packed");
        }
        done.push((slug, report));
    }
    Ok(done)
}

/// Packs the repository at `dir` if it is due (always for `cairn gc`: `all`); answers
/// what was done, and the peak memory of the process that packed it when that was a
/// child.
async fn pack_one(dir: PathBuf, all: bool, stop: &Arc<AtomicBool>) -> anyhow::Result<(PackReport, Option<u64>)> {
    // A workspace nobody has written to yet has no repository (and one being deleted may
    // lose it at any moment): nothing to pack.
    let due = move |dir: &std::path::Path| -> anyhow::Result<bool> {
        Ok(dir.join("objects").is_dir() && (all || pack::due(dir, IDLE)?))
    };
    if !all {
        let held = dir.clone();
        let released = tokio::task::spawn_blocking(move || pack::release_held(&held, RELEASE_IDLE, HOLD_AT_MOST));
        match released.await? {
            Ok(0) => {}
            Ok(files) => tracing::debug!(dir = %dir.display(), files, "unlinked the packed loose files held aside"),
            Err(e) => tracing::warn!(error = %format!("{e:#}"), "could not unlink the packed loose files held aside"),
        }
    }
    if let Some(program) = PASS_PROGRAM.get().filter(|_| !all) {
        let checked = dir.clone();
        if !tokio::task::spawn_blocking(move || due(&checked)).await?? {
            return Ok((PackReport::default(), None));
        }
        match process::pass(program, &dir, stop).await {
            Ok(done) => return Ok((done.report, Some(done.peak_rss_kib))),
            // A machine that cannot start the child still packs, in this process.
            Err(e) if e.is::<process::CannotStart>() => {
                tracing::warn!(error = %format!("{e:#}"), "packing on a thread of the server instead");
            }
            Err(e) => return Err(e),
        }
    }
    let stop = stop.clone();
    // `cairn gc` (all) is what its operator waits for: it keeps the usual priority.
    on_thread(!all, move || {
        if !due(&dir)? {
            return Ok((PackReport::default(), None));
        }
        Ok((pack::pack(&dir, all, &|| stop.load(Ordering::Relaxed))?, None))
    })
    .await?
}

/// Runs `f` on a thread of its own — at [`BACKGROUND_NICE`] when `background` — rather
/// than on tokio's blocking pool, whose threads go on to run saves' git work and would
/// keep a lowered priority (only privileged processes may raise it back).
async fn on_thread<R: Send + 'static>(background: bool, f: impl FnOnce() -> R + Send + 'static) -> anyhow::Result<R> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("cairn-packing".into()).spawn(move || {
        if background {
            lower_priority();
        }
        let _ = done.send(f());
    })?;
    Ok(result.await?)
}

/// Lowers the calling thread's CPU priority to [`BACKGROUND_NICE`], never raising it (a
/// server started under `nice` keeps its own). On Linux a nice value belongs to a
/// thread, named by its id; elsewhere this does nothing.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: getpriority and setpriority read and set only the scheduling priority of
    // this thread (its id from gettid); they touch no memory.
    unsafe {
        let me = libc::gettid() as libc::id_t;
        let nice = BACKGROUND_NICE.max(libc::getpriority(libc::PRIO_PROCESS, me));
        if libc::setpriority(libc::PRIO_PROCESS, me, nice) != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "packing runs at the usual priority");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn own_nice() -> i32 {
        // SAFETY: getpriority reads this thread's priority.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[tokio::test]
    async fn the_workers_passes_run_at_a_lower_priority_and_gc_at_the_usual_one() {
        let usual = own_nice();
        assert_eq!(on_thread(true, own_nice).await.unwrap(), BACKGROUND_NICE.max(usual));
        assert_eq!(on_thread(false, own_nice).await.unwrap(), usual);
        // The caller's own thread is left as it was.
        assert_eq!(own_nice(), usual);
    }
}
