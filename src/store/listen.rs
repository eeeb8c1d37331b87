//! PostgreSQL's `LISTEN`, by which the processes sharing a database hear each other's
//! notes (credentials to forget, co-editing updates to take in).

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::watch;

/// How long to wait before trying to connect again.
const RETRY: Duration = Duration::from_secs(1);

/// A connection listening on `channel`, tried every second until it is made; none once
/// `stopped`.
pub(crate) async fn connect(url: &str, channel: &str, stopped: &mut watch::Receiver<bool>) -> Option<PgListener> {
    loop {
        let connected = async {
            let mut l = PgListener::connect(url).await?;
            l.listen(channel).await?;
            Ok::<_, sqlx::Error>(l)
        };
        let connected = tokio::select! {
            _ = stopped.wait_for(|s| *s) => return None,
            l = connected => l,
        };
        match connected {
            Ok(l) => return Some(l),
            Err(e) => {
                tracing::debug!(error = %e, channel, "cannot listen yet");
                tokio::select! {
                    _ = stopped.wait_for(|s| *s) => return None,
                    _ = tokio::time::sleep(RETRY) => {}
                }
            }
        }
    }
}
