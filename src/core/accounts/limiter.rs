//! The failed-login limiter: at most `LOGIN_MAX_FAILURES` failed attempts per (email,
//! client address) inside `LOGIN_WINDOW_SECS`, counted from the first one. Kept in the
//! database so that several instances behind one proxy share the count.

use crate::core::Ctx;
use crate::error::{Error, Result};

/// Counts a login attempt for the pair, then refuses it (429 with `Retry-After`) when
/// it is past the limit — even when the password would be right. The count is taken
/// before the password is verified, in one statement (an upsert that answers the new
/// count), so attempts in flight at the same moment cannot all pass a check made before
/// any of them is recorded: on SQLite the writes are serial, on PostgreSQL the upsert
/// locks the pair's row, across processes too. A success clears the pair ([`clear`]),
/// so only failures (and attempts still in flight) stay counted.
pub async fn attempt(ctx: &Ctx, email: &str, client: &str) -> Result<()> {
    let now = ctx.clock.unix();
    let window = ctx.config.login_window_secs as i64;
    // An attempt after the window has passed starts a new window.
    let (attempts, first): (i64, i64) = sqlx::query_as(
        "INSERT INTO login_failures (email, client, failures, first_failure_at) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (email, client) DO UPDATE SET \
           failures = CASE WHEN login_failures.first_failure_at <= $4 THEN 1 ELSE login_failures.failures + 1 END, \
           first_failure_at = CASE WHEN login_failures.first_failure_at <= $4 THEN $3 ELSE login_failures.first_failure_at END \
         RETURNING failures, first_failure_at",
    )
    .bind(email)
    .bind(client)
    .bind(now)
    .bind(now - window)
    .fetch_one(&ctx.db.pool)
    .await?;
    if attempts > i64::from(ctx.config.login_max_failures) {
        return Err(Error::too_many_login_failures((first + window - now).max(1) as u64));
    }
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
