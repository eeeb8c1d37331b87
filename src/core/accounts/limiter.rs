//! The failed-login limiter. Inside `LOGIN_WINDOW_SECS`, counted from a row's first
//! failure, it allows at most:
//!
//! - `LOGIN_MAX_FAILURES` (5) failed attempts per (email, client address) — the pair;
//! - `LOGIN_MAX_FAILURES_PER_ACCOUNT` (10) per email from all addresses together;
//! - `LOGIN_MAX_FAILURES_PER_ADDRESS` (50) per address for all emails together.
//!
//! The account and address ceilings do not apply to a device that has signed in to the
//! email before (it shows a device cookie, `auth::device`): guesses from elsewhere slow
//! the account down for strangers, but cannot lock its owner out of their own browser.
//! Kept in the database so that several instances behind one proxy share the counts.

use crate::core::Ctx;
use crate::error::{Error, Result};

/// Marks a row that counts across addresses (in `client`) or across emails (in
/// `email`). Neither column is ever empty otherwise: an address always has characters,
/// and emails are counted under a non-empty form ([`counted_email`]).
const ANY: &str = "";

/// Counts an attempt in the rows `($3, $4)`, … at `$1`; a row whose window started at or
/// before `$2` starts a new one. Answers every row's new count.
macro_rules! count_in {
    ($values:literal) => {
        concat!(
            "INSERT INTO login_failures (email, client, failures, first_failure_at) VALUES ",
            $values,
            " ON CONFLICT (email, client) DO UPDATE SET \
               failures = CASE WHEN login_failures.first_failure_at <= $2 THEN 1 ELSE login_failures.failures + 1 END, \
               first_failure_at = CASE WHEN login_failures.first_failure_at <= $2 THEN $1 \
                 ELSE login_failures.first_failure_at END \
             RETURNING email, client, failures, first_failure_at"
        )
    };
}
const COUNT_PAIR: &str = count_in!("($3, $4, 1, $1)");
const COUNT_ALL: &str = count_in!("($3, $4, 1, $1), ($5, $6, 1, $1), ($7, $8, 1, $1)");

/// Where an attempt comes from: the client address, and the device cookie it showed.
pub(crate) struct Origin<'a> {
    pub address: &'a str,
    pub device: Option<&'a str>,
}

/// An attempt in flight: the rows it was counted in, and each row's window (its first
/// failure) when it was counted.
pub(crate) struct Attempt {
    rows: Vec<(String, String, i64)>,
}

/// The form an email is counted under: an unparseable one still counts, as typed.
pub(crate) fn counted_email(email: &str) -> String {
    match crate::ids::Email::parse(email) {
        Ok(e) => e.as_str().to_owned(),
        Err(_) => format!("?{}", email.trim().to_lowercase().replace('\0', "")),
    }
}

/// Counts a login attempt in every row it falls under, then refuses it (429 with
/// `Retry-After`) when any of them is past its ceiling — even when the password would be
/// right. The count is taken before the password is verified, in one statement (an
/// upsert of every row that answers the new counts), so attempts in flight at the same
/// moment cannot all pass a check made before any of them is recorded: on SQLite the
/// writes are serial, on PostgreSQL the upsert locks the rows, across processes too. A
/// refused attempt is taken back from the counts, so hammering a refused pair does not
/// also use up the account's or the address's allowance.
pub(crate) async fn attempt(ctx: &Ctx, email: &str, origin: &Origin<'_>) -> Result<Attempt> {
    let now = ctx.clock.unix();
    let window = ctx.config.login_window_secs as i64;
    let config = &ctx.config;
    let per_pair = i64::from(config.login_max_failures);
    let trusted = origin.device.is_some_and(|note| ctx.devices.vouches(note, email, now));
    let mut rows = vec![(email, origin.address, per_pair)];
    if !trusted {
        rows.push((email, ANY, i64::from(config.login_max_failures_per_account)));
        rows.push((ANY, origin.address, i64::from(config.login_max_failures_per_address)));
    }
    let sql = if trusted { COUNT_PAIR } else { COUNT_ALL };
    let mut query = sqlx::query_as::<_, (String, String, i64, i64)>(sql).bind(now).bind(now - window);
    for (email, client, _) in &rows {
        query = query.bind(*email).bind(*client);
    }
    let counted = query.fetch_all(&ctx.db.pool).await?;
    let mut retry_after = None;
    for (row_email, row_client, failures, first) in &counted {
        let ceiling = rows.iter().find(|(e, c, _)| e == row_email && c == row_client).map_or(per_pair, |r| r.2);
        if *failures > ceiling {
            retry_after = retry_after.max(Some((first + window - now).max(1) as u64));
        }
    }
    let attempt = Attempt { rows: counted.into_iter().map(|(e, c, _, first)| (e, c, first)).collect() };
    if let Some(secs) = retry_after {
        take_back(ctx, &attempt.rows).await?;
        return Err(Error::too_many_login_failures(secs));
    }
    Ok(attempt)
}

/// What else than a password is counted, each under its own name for the client address
/// alone. The names start with `?`, which no counted email does ([`counted_email`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Guarded {
    /// Invitation links looked up (guessing one).
    Invitation,
    /// Single sign-on returns (forged or replayed ones).
    SingleSignOn,
    /// OAuth clients registering themselves (each counted, none taken back).
    ClientRegistration,
}

impl Guarded {
    fn key(self) -> &'static str {
        match self {
            Guarded::Invitation => "?invitation",
            Guarded::SingleSignOn => "?sso",
            Guarded::ClientRegistration => "?oauth-client",
        }
    }
}

/// Counts an attempt at `what` from `address` before it is tried, as [`attempt`] counts
/// a password, and refuses it (429 `too_many_attempts`) once the address is past
/// `LOGIN_MAX_FAILURES_PER_ADDRESS` failures inside the window. A success is taken back
/// with [`succeeded`].
pub(crate) async fn attempt_at(ctx: &Ctx, what: Guarded, address: &str) -> Result<Attempt> {
    let now = ctx.clock.unix();
    let window = ctx.config.login_window_secs as i64;
    let (key, ceiling) = (what.key(), i64::from(ctx.config.login_max_failures_per_address));
    let (email, client, failures, first): (String, String, i64, i64) =
        sqlx::query_as(COUNT_PAIR).bind(now).bind(now - window).bind(key).bind(address).fetch_one(&ctx.db.pool).await?;
    let attempt = Attempt { rows: vec![(email, client, first)] };
    if failures > ceiling {
        take_back(ctx, &attempt.rows).await?;
        return Err(Error::too_many_attempts((first + window - now).max(1) as u64));
    }
    Ok(attempt)
}

/// A successful attempt: its pair starts again from nothing, and it is taken back from
/// the account's and the address's counts (which keep the failures of others).
pub(crate) async fn succeeded(ctx: &Ctx, attempt: Attempt) -> Result<()> {
    let (pair, shared): (Vec<_>, Vec<_>) =
        attempt.rows.into_iter().partition(|(email, client, _)| email != ANY && client != ANY);
    for (email, client, _) in pair {
        sqlx::query("DELETE FROM login_failures WHERE email = $1 AND client = $2")
            .bind(email)
            .bind(client)
            .execute(&ctx.db.pool)
            .await?;
    }
    take_back(ctx, &shared).await
}

/// Takes one attempt back from each row — unless the row's window has started again
/// since, when the count it holds is no longer the attempt's.
async fn take_back(ctx: &Ctx, rows: &[(String, String, i64)]) -> Result<()> {
    for (email, client, first) in rows {
        sqlx::query(
            "UPDATE login_failures SET failures = failures - 1 \
             WHERE email = $1 AND client = $2 AND first_failure_at = $3 AND failures > 0",
        )
        .bind(email)
        .bind(client)
        .bind(first)
        .execute(&ctx.db.pool)
        .await?;
    }
    Ok(())
}

/// Forgets failures whose window has passed (they limit nothing any more); answers how
/// many rows went. Run by the maintenance worker.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let window_start = ctx.clock.unix() - ctx.config.login_window_secs as i64;
    let done = sqlx::query("DELETE FROM login_failures WHERE first_failure_at <= $1")
        .bind(window_start)
        .execute(&ctx.db.pool)
        .await?;
    Ok(done.rows_affected())
}
