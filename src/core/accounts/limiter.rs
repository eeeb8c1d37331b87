//! The failed-login limiter: at most `LOGIN_MAX_FAILURES` failures per (email, client
//! address) inside `LOGIN_WINDOW_SECS`, counted from the first failure. Kept in the
//! database so that several instances behind one proxy share the count.

use crate::core::Ctx;
use crate::error::{Error, Result};

/// Refuses the attempt (429 with `Retry-After`) while the pair is over the limit —
/// even when the password would be right.
pub async fn check(ctx: &Ctx, email: &str, client: &str) -> Result<()> {
    let row: Option<(i64, i64)> =
        sqlx::query_as("SELECT failures, first_failure_at FROM login_failures WHERE email = $1 AND client = $2")
            .bind(email)
            .bind(client)
            .fetch_optional(&ctx.db.pool)
            .await?;
    if let Some((failures, first)) = row {
        let ends = first + ctx.config.login_window_secs as i64;
        let now = ctx.clock.unix();
        if now < ends && failures >= i64::from(ctx.config.login_max_failures) {
            return Err(Error::too_many_login_failures((ends - now) as u64));
        }
    }
    Ok(())
}

pub async fn record_failure(ctx: &Ctx, email: &str, client: &str) -> Result<()> {
    let now = ctx.clock.unix();
    let window_start = now - ctx.config.login_window_secs as i64;
    // A failure after the window has passed starts a new window.
    sqlx::query(
        "INSERT INTO login_failures (email, client, failures, first_failure_at) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (email, client) DO UPDATE SET \
           failures = CASE WHEN login_failures.first_failure_at <= $4 THEN 1 ELSE login_failures.failures + 1 END, \
           first_failure_at = CASE WHEN login_failures.first_failure_at <= $4 THEN $3 ELSE login_failures.first_failure_at END",
    )
    .bind(email)
    .bind(client)
    .bind(now)
    .bind(window_start)
    .execute(&ctx.db.pool)
    .await?;
    Ok(())
}

pub async fn clear(ctx: &Ctx, email: &str, client: &str) -> Result<()> {
    sqlx::query("DELETE FROM login_failures WHERE email = $1 AND client = $2")
        .bind(email)
        .bind(client)
        .execute(&ctx.db.pool)
        .await?;
    Ok(())
}

/// Forgets failures whose window has passed (they limit nothing any more); answers how
/// many rows went. Run by the maintenance worker.
pub async fn prune(ctx: &Ctx) -> Result<u64> {
    let window_start = ctx.clock.unix() - ctx.config.login_window_secs as i64;
    let done = sqlx::query("DELETE FROM login_failures WHERE first_failure_at <= $1")
        .bind(window_start)
        .execute(&ctx.db.pool)
        .await?;
    Ok(done.rows_affected())
}
