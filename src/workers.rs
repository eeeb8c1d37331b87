//! Background work that runs beside the HTTP server, never on a request's path.
//!
//! [`start`] spawns the workers; [`Workers::stop`] asks them to finish and waits, so a
//! graceful shutdown waits for the server and the workers both. Each worker loops over
//! [`run_pending_jobs`]-style passes with a pause between them; tests call
//! [`run_pending_jobs`] directly — deterministic, no sleeping for a worker.
//!
//! Today there is one worker, maintenance: it deletes expired sessions and failed-login
//! counts whose window has passed. Webhook delivery (durable outbox, backoff) joins it
//! as a second worker.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::core::Ctx;
use crate::core::accounts;
use crate::error::Result;

/// Pause between two maintenance passes.
const MAINTENANCE_EVERY: Duration = Duration::from_secs(600);

/// What one pass of every job did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JobReport {
    pub sessions_pruned: u64,
    pub login_failures_pruned: u64,
}

/// Runs every job once, now, and answers what each did.
pub async fn run_pending_jobs(ctx: &Ctx) -> Result<JobReport> {
    Ok(JobReport {
        sessions_pruned: accounts::prune_sessions(ctx).await?,
        login_failures_pruned: accounts::limiter::prune(ctx).await?,
    })
}

/// The running workers.
pub struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts every worker.
pub fn start(ctx: &Ctx) -> Workers {
    let (stop, stopped) = watch::channel(false);
    let tasks = vec![tokio::spawn(maintenance(ctx.clone(), stopped))];
    Workers { stop, tasks }
}

impl Workers {
    /// Asks every worker to stop after its current pass and waits for all of them.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "a worker ended abnormally");
            }
        }
    }
}

async fn maintenance(ctx: Ctx, mut stopped: watch::Receiver<bool>) {
    loop {
        match run_pending_jobs(&ctx).await {
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
