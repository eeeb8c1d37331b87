//! Background work that runs beside the HTTP server, never on a request's path.
//!
//! [`start`] spawns the workers; [`Workers::stop`] asks them to finish and waits, so a
//! graceful shutdown waits for the server and the workers both. Each worker loops over
//! [`run_pending_jobs`]-style passes with a pause between them; tests call
//! [`run_pending_jobs`] directly — deterministic, no sleeping for a worker.
//!
//! The workers: maintenance deletes expired sessions, failed-login counts whose window
//! has passed, webhook records past their retention and SQLite's search entries of page
//! rows that are gone (and, on PostgreSQL without autovacuum, refreshes the planner's
//! statistics, as the statistics worker does every 30 s for the tables that changed
//! much); packing packs workspace repositories that are due (core/packing/, each pass in
//! a child process); embedding refresh drains `embed_queue` when `SEMANTIC_SEARCH=1`; OCR
//! reads uploaded images when `OCR_UPLOADS=1`; webhook delivery drains `deliveries`; on
//! SQLite, indexing writes the search file's entries of the pages each batch saved
//! (core/pages/fulltext.rs); with PostgreSQL, the credential cache's listener forgets
//! checked tokens when another process changes credentials.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::core::Ctx;
use crate::core::accounts;
use crate::core::pages::{fulltext, rows};
use crate::core::semantic::embed;
use crate::core::uploads::ocr::ocr_pending;
use crate::core::webhooks::{self, deliver};
use crate::error::Result;
use crate::store::search_file::SearchFile;

/// Pause between two maintenance passes.
const MAINTENANCE_EVERY: Duration = Duration::from_secs(600);
/// Once embedding has started, how often the queue is looked at without a wake-up (saves
/// by another process sharing the database wake nobody here).
const EMBED_POLL: Duration = Duration::from_secs(5);
/// How often the delivery worker looks at the queue when nothing woke it (retries that
/// came due are waited for exactly; this catches other processes' saves and claims that
/// ran out).
const DELIVERY_POLL: Duration = Duration::from_secs(1);
/// How often, on PostgreSQL without autovacuum, the tables that changed much are analyzed.
const STATISTICS_EVERY: Duration = Duration::from_secs(30);
/// How often the packing worker looks for workspaces due for packing.
const PACKING_EVERY: Duration = Duration::from_secs(60);
/// How long the indexing worker lets saves gather after a batch wakes it, so one
/// catch-up writes them all. Catching up costs a dozen statements of its own besides the
/// entries (≈ 1.4 ms of CPU per lone save when run after each one: measured in commit 6d7c220).
/// A search never waits for it: it catches its workspace up
/// first.
const INDEX_GATHER: Duration = Duration::from_millis(50);
/// Webhook attempts in flight at once, per process.
const DELIVERY_CONCURRENCY: usize = 16;

/// What one pass of every job did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JobReport {
    /// Sessions past their expiry, single sign-ons begun and never finished, and OAuth
    /// tokens and codes expired (with clients that never got a grant).
    pub sessions_pruned: u64,
    /// Invitations expired for a while.
    pub invitations_pruned: u64,
    pub login_failures_pruned: u64,
    pub pages_embedded: u64,
    pub webhook_rows_pruned: u64,
    /// SQLite: search entries of page rows that are gone (pages purged one by one).
    pub search_entries_removed: u64,
    /// SQLite: rows whose plain markdown (an older release's) was compressed.
    pub rows_compressed: u64,
    /// PostgreSQL without autovacuum: the planner's statistics were refreshed and the
    /// full-text index's pending list merged.
    pub statistics_refreshed: bool,
}

/// Runs every job once, now, and answers what each did.
pub async fn run_pending_jobs(ctx: &Ctx) -> Result<JobReport> {
    let mut report = prune(ctx).await?;
    report.pages_embedded = drain_embeddings(ctx).await? as u64;
    Ok(report)
}

/// The maintenance worker's pass: the pruning jobs. (Embedding is the embedding worker's:
/// draining a long queue here too held the pruning back for the whole drain.)
async fn prune(ctx: &Ctx) -> Result<JobReport> {
    Ok(JobReport {
        sessions_pruned: accounts::prune_sessions(ctx).await?
            + crate::core::sso::prune(ctx).await?
            + crate::core::oauth::prune(ctx).await?,
        login_failures_pruned: accounts::limiter::prune(ctx).await?,
        invitations_pruned: crate::core::invitations::prune(ctx).await?,
        pages_embedded: 0,
        webhook_rows_pruned: webhooks::prune(ctx).await?,
        search_entries_removed: fulltext::sweep(ctx).await? as u64,
        rows_compressed: rows::compress_plain_rows(&ctx.db.pool).await? as u64,
        statistics_refreshed: ctx.db.refresh_statistics_if_unattended().await?,
    })
}

/// The running workers.
pub(crate) struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts every worker.
pub(crate) fn start(ctx: &Ctx) -> Workers {
    let (stop, stopped) = watch::channel(false);
    let mut tasks = vec![
        tokio::spawn(maintenance(ctx.clone(), stopped.clone())),
        tokio::spawn(packing(ctx.clone(), stopped.clone())),
    ];
    if ctx.models.embedding.usable() {
        tasks.push(tokio::spawn(embedding(ctx.clone(), stopped.clone())));
    }
    if ctx.ocr.usable() {
        tasks.push(tokio::spawn(ocr(ctx.clone(), stopped.clone())));
    }
    if ctx.db.search.is_some() {
        tasks.push(tokio::spawn(indexing(ctx.clone(), stopped.clone())));
    }
    if ctx.db.backend == crate::store::Backend::Postgres {
        tasks.push(tokio::spawn(statistics(ctx.clone(), stopped.clone())));
        let (cache, url) = (ctx.credentials.clone(), ctx.config.database_url());
        tasks.push(tokio::spawn(crate::core::credentials::cache::listen(cache, url.clone(), stopped.clone())));
        // Co-editing sessions shared with the other processes on the database.
        let (heard, notes) = tokio::sync::mpsc::unbounded_channel();
        let process = ctx.live.process();
        tasks.push(tokio::spawn(crate::core::live::relay::listen(url, process, heard, stopped.clone())));
        tasks.push(tokio::spawn(crate::core::live::relay_in(ctx.clone(), notes)));
    }
    tasks.push(tokio::spawn(live_sessions(ctx.clone(), stopped.clone())));
    tasks.push(tokio::spawn(delivery(ctx.clone(), stopped)));
    Workers { stop, tasks }
}

impl Workers {
    /// Asks every worker to stop after its current pass and waits for all of them, at most
    /// `within` (`SHUTDOWN_GRACE_SECS`): what is still running then ends with the process,
    /// which is as safe as kill -9 (a packing pass's work is packed again next time).
    pub(crate) async fn stop(self, within: Duration) {
        let _ = self.stop.send(true);
        let all = async {
            for task in self.tasks {
                if let Err(e) = task.await {
                    tracing::error!(error = %e, "a worker ended abnormally");
                }
            }
        };
        if tokio::time::timeout(within, all).await.is_err() {
            tracing::warn!(
                secs = within.as_secs(),
                "background work still running after the shutdown grace; stopping without it"
            );
        }
    }
}

/// Takes up, once at start, the co-editing sessions a stopped process left in its log
/// (`live::recover`: their text becomes a revision), then brings every save into the
/// sessions of the pages it changed (`live::follow_saves`).
async fn live_sessions(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    // Following first, so no save made while the logs are read is missed.
    let follow = crate::core::live::follow_saves(ctx.clone());
    match crate::core::live::recover(&ctx).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(sessions = n, "co-editing sessions taken up from their logs"),
        Err(e) => tracing::warn!(error = %e, "co-editing logs not read; they are taken up when their pages are opened"),
    }
    tokio::select! {
        () = follow => {}
        _ = stopped.wait_for(|s| *s) => {}
    }
}

async fn maintenance(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    loop {
        match prune(&ctx).await {
            Ok(r) if r != JobReport::default() => tracing::info!(?r, "maintenance pass"),
            Ok(_) => {}
            // The database may be down for a while: try again at the next pass.
            Err(e) => tracing::warn!(error = %e, "maintenance pass failed"),
        }
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(MAINTENANCE_EVERY) => {}
        }
    }
}

/// SQLite: writes the search file's entries of what each batch saved, off the
/// save's path (a search catches its workspace up itself if it comes first), and at
/// start every workspace's (all of them after an upgrade or a lost file). Other
/// processes' saves wake nobody here: their own worker, or the next search, writes them.
async fn indexing(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    let Some(file) = ctx.db.search.clone() else { return };
    tokio::select! {
        () = index_until_stopped(&ctx, &file) => {}
        _ = stopped.wait_for(|s| *s) => {}
    }
    if let Err(e) = file.truncate_log().await {
        tracing::warn!(error = %e, "could not empty the search index's log at shutdown");
    }
}

async fn index_until_stopped(ctx: &Ctx, file: &SearchFile) {
    if let Err(e) = fulltext::catch_up_all(ctx).await {
        tracing::warn!(error = %e, "search index catch-up failed");
    }
    loop {
        file.wake.notified().await;
        tokio::time::sleep(INDEX_GATHER).await;
        for ws_id in file.take_changed() {
            if let Err(e) = fulltext::catch_up(ctx, ws_id).await {
                // The next search of the workspace tries again.
                tracing::warn!(error = %e, workspace_id = ws_id, "search index catch-up failed");
            }
        }
    }
}

/// PostgreSQL without autovacuum: does autovacuum's analyzing as the tables change
/// (`Db::analyze_changed_if_unattended`); the maintenance pass analyzes everything too,
/// but only every 10 minutes.
async fn statistics(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(STATISTICS_EVERY) => {}
        }
        match ctx.db.analyze_changed_if_unattended().await {
            Ok(tables) if !tables.is_empty() => tracing::debug!(?tables, "statistics refreshed"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "statistics pass failed"),
        }
    }
}

/// Packs the workspaces whose loose objects passed the threshold or that went idle
/// (core/packing/). It never takes a write lock, so saves go on while it runs. A stop
/// during a pass asks the pass to give up (packing 50,000 loose objects takes half a
/// minute here, and a shutdown must not wait for it); what it did not pack stays loose
/// for the next start.
async fn packing(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(PACKING_EVERY) => {}
            () = ctx.test_hooks.packing_requested() => {}
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pass = crate::core::packing::pack_due(&ctx, &stop);
        tokio::pin!(pass);
        let finished = tokio::select! {
            r = &mut pass => Some(r),
            _ = stopped.wait_for(|s| *s) => None,
        };
        let result = match finished {
            Some(result) => result,
            None => {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                pass.await
            }
        };
        // Stopped meanwhile: the wait at the top of the loop returns at once.
        if let Err(e) = result {
            tracing::warn!(error = %e, "packing pass failed");
        }
        // What the saves of the last minute (and a pass that could not start its own
        // process) freed goes back to the system; on the blocking pool, as trimming a
        // large heap takes a while.
        let _ = tokio::task::spawn_blocking(crate::memory::trim).await;
    }
}

/// Embeds every queued page, a batch at a time; answers how many.
pub(crate) async fn drain_embeddings(ctx: &Ctx) -> Result<usize> {
    let mut total = 0;
    loop {
        let n = embed::embed_pending(ctx, embed::BATCH_PAGES).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n;
    }
}

/// Embedding refresh. Sleeps until the first save or semantic query of this process
/// wants it, so start-up never loads the model; from then on it drains the queue
/// whenever woken, and looks every `EMBED_POLL` for pages queued by other processes.
async fn embedding(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    tokio::select! {
        _ = stopped.wait_for(|s| *s) => return,
        _ = ctx.models.wanted.notified() => {}
    }
    match embed::requeue_other_models(&ctx).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(pages = n, "pages embedded by another model queued again"),
        Err(e) => tracing::warn!(error = %e, "could not look for another model's vectors"),
    }
    let pass = || embed::embed_pending(&ctx, embed::BATCH_PAGES);
    drain_then_wait(&mut stopped, "embedding", pass, &ctx.models.wanted).await;
}

/// OCR of uploads: reads new images as they arrive (and, after a restart, those not
/// read yet), one at a time — each in a process of its own.
async fn ocr(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    drain_then_wait(&mut stopped, "OCR", || ocr_pending(&ctx, 1), &ctx.ocr_wake).await;
}

/// A queue worker's loop: runs `pass` until it finds nothing to do (or fails, or the
/// server stops), then sleeps until woken, until `EMBED_POLL` passes (for work queued
/// by other processes) or until the server stops.
async fn drain_then_wait<F, Fut>(stopped: &mut watch::Receiver<bool>, what: &str, pass: F, wake: &tokio::sync::Notify)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<usize>>,
{
    loop {
        loop {
            match pass().await {
                Ok(0) => break,
                Ok(_) if *stopped.borrow() => return,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "{what} pass failed");
                    break;
                }
            }
        }
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            _ = wake.notified() => {}
            _ = tokio::time::sleep(EMBED_POLL) => {}
        }
    }
}

/// Webhook delivery: keeps up to `DELIVERY_CONCURRENCY` attempts in flight, woken by
/// saves, by finished attempts and by the next retry coming due. On stop it claims
/// nothing more and waits for the attempts in flight (each bounded by its timeout).
async fn delivery(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    let mut running = tokio::task::JoinSet::new();
    // Made for the first delivery, not at start: the TLS client loads and parses the
    // system's root certificates and starts its crypto library, memory and code a server
    // that sends no webhook never needs (measured in commit 89bcd07).
    let mut client: Option<reqwest::Client> = None;
    loop {
        let mut claimed = 0;
        let free = DELIVERY_CONCURRENCY - running.len();
        if free > 0 && !*stopped.borrow() {
            match deliver::claim(&ctx, free as i64).await {
                Ok(jobs) => {
                    claimed = jobs.len();
                    if claimed > 0 && client.is_none() {
                        // Without a client the claims run out and the jobs come due again.
                        client = deliver::client(&ctx)
                            .inspect_err(|e| tracing::error!(error = %e, "webhook delivery: no HTTP client"))
                            .ok();
                    }
                    for job in jobs {
                        let Some(client) = &client else { break };
                        running.spawn(deliver::attempt(ctx.clone(), client.clone(), job));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not claim webhook deliveries"),
            }
        }
        if *stopped.borrow() {
            while running.join_next().await.is_some() {}
            return;
        }
        if claimed > 0 && running.len() < DELIVERY_CONCURRENCY {
            continue;
        }
        let pause = match deliver::next_due(&ctx).await {
            Ok(Some(at)) => (at - ctx.clock.now()).to_std().unwrap_or_default().min(DELIVERY_POLL),
            _ => DELIVERY_POLL,
        };
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => {}
            _ = ctx.webhook_wake.notified() => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
            _ = tokio::time::sleep(pause) => {}
        }
    }
}
