//! Keeping workspace repositories small: which to pack and when. The mechanics, and why
//! they are safe beside saves, reads and other processes without the write lock, are in
//! `git/pack.rs`. The packing worker (workers.rs) calls [`pack_due`]; `cairn gc` calls
//! [`pack_all`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::core::Ctx;
use crate::error::Result;
use crate::git::pack::{self, PackReport};

/// A workspace with loose objects and no save for this long is packed even below the
/// threshold, so a quiet wiki ends up fully packed.
pub const IDLE: Duration = Duration::from_secs(300);

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
        let stop = stop.clone();
        let report = tokio::task::spawn_blocking(move || -> anyhow::Result<PackReport> {
            // A workspace nobody has written to yet has no repository (and one being
            // deleted may lose it at any moment): nothing to pack.
            if !dir.join("objects").is_dir() || (!all && !pack::due(&dir, IDLE)?) {
                return Ok(PackReport::default());
            }
            pack::pack(&dir, all, &|| stop.load(Ordering::Relaxed))
        })
        .await
        .map_err(anyhow::Error::from)?;
        let report = match report {
            Ok(report) => report,
            Err(e) if e.is::<pack::Stopped>() => {
                tracing::info!(workspace = %slug, "packing stopped for shutdown; it resumes at the next start");
                break;
            }
            Err(e) => return Err(e.into()),
        };
        if report != PackReport::default() {
            tracing::info!(workspace = %slug, loose = report.loose_packed, folded = report.packs_folded, objects = report.objects, "packed");
        }
        done.push((slug, report));
    }
    Ok(done)
}
