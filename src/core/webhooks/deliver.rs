//! The delivery side of the outbox: claim due deliveries, send them signed, record what
//! happened, and schedule retries with exponential backoff and jitter.
//!
//! A claim is a lease (`locked_until`): the claiming worker owns the delivery until the
//! lease runs out, and records the outcome only if it still holds that lease. A worker
//! killed mid-attempt leaves a lease that runs out, and the attempt is made again with
//! the same `webhook-id` — receivers deduplicate on it (Standard Webhooks). What is
//! `delivered` is never claimed again. With PostgreSQL the claim takes `FOR UPDATE SKIP
//! LOCKED`, so any number of workers and processes share the queue. A delivery waits
//! while an earlier event of the same page is still unfinished for the same webhook:
//! one page's events arrive in order.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;
use reqwest::redirect::Policy;

use super::{message_id, sign, target};
use crate::core::Ctx;
use crate::error::Result;
use crate::store::Backend;
use crate::time::{Timestamp, stored};

/// Attempts before a delivery is `failed`.
pub(crate) const MAX_ATTEMPTS: i64 = 8;
/// Most of a receiver's answer that is read (and the first of it kept as the error).
const MAX_RESPONSE_BYTES: usize = 64 * 1024;
const MAX_ERROR_CHARS: usize = 300;

/// One claimed delivery, with what sending it needs.
#[derive(Debug)]
pub struct Job {
    pub id: i64,
    pub event_id: i64,
    pub attempts: i64,
    url: String,
    secret: String,
    payload: String,
    lease: Timestamp,
}

/// What one attempt came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub response_status: Option<i64>,
    pub error: Option<String>,
}

/// The HTTP client deliveries go out with: no redirects, no proxies from the
/// environment, a timeout per attempt, and name resolution through the SSRF guard.
pub(crate) fn client(ctx: &Ctx) -> anyhow::Result<reqwest::Client> {
    let timeout = Duration::from_millis(ctx.config.webhook_timeout_ms);
    Ok(reqwest::Client::builder()
        .redirect(Policy::none())
        .no_proxy()
        .timeout(timeout)
        .connect_timeout(timeout)
        .dns_resolver(target::GuardedResolver { allow_private: ctx.config.webhook_allow_private.on() })
        .user_agent(format!("Cairn-Webhooks/{}", crate::core::VERSION))
        .build()?)
}

/// How long a claim holds: one attempt's timeout plus room for recording it.
fn lease(ctx: &Ctx) -> chrono::Duration {
    chrono::Duration::milliseconds(2 * ctx.config.webhook_timeout_ms as i64 + 5_000)
}

/// Claims up to `limit` due deliveries for this worker.
pub async fn claim(ctx: &Ctx, limit: i64) -> Result<Vec<Job>> {
    let now = ctx.clock.now();
    let lease_until = stored(now + lease(ctx));
    let skip_locked = if ctx.db.backend == Backend::Postgres { " FOR UPDATE SKIP LOCKED" } else { "" };
    let sql = format!(
        "UPDATE deliveries SET locked_until = $1 WHERE id IN (\
           SELECT d.id FROM deliveries d \
           WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= $2 \
             AND (d.locked_until IS NULL OR d.locked_until <= $2) \
             AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.webhook_id = d.webhook_id \
               AND e.page_uid = d.page_uid AND e.event_id < d.event_id \
               AND e.status IN ('pending', 'retrying')) \
           ORDER BY d.next_attempt_at, d.id LIMIT {limit}{skip_locked}) \
         RETURNING id"
    );
    // The limit (a small number of ours) is written into the statement, not bound: SQLite
    // re-prepares a statement each time its LIMIT is bound, as the plan may depend on it.
    let ids: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(&lease_until)
        .bind(stored(now))
        .fetch_all(&ctx.db.pool)
        .await?;
    let mut jobs = Vec::with_capacity(ids.len());
    for id in ids {
        let row: Option<(i64, i64, String, String, String)> = sqlx::query_as(
            "SELECT d.event_id, d.attempts, h.url, h.secret, e.payload FROM deliveries d \
             JOIN webhooks h ON h.id = d.webhook_id JOIN events e ON e.id = d.event_id WHERE d.id = $1",
        )
        .bind(id)
        .fetch_optional(&ctx.db.pool)
        .await?;
        // Gone meanwhile: its webhook was deleted.
        if let Some((event_id, attempts, url, secret, payload)) = row {
            jobs.push(Job { id, event_id, attempts, url, secret, payload, lease: lease_until.clone() });
        }
    }
    Ok(jobs)
}

/// Sends one delivery: the event's payload, signed.
pub(crate) async fn send(ctx: &Ctx, client: &reqwest::Client, job: &Job) -> Outcome {
    let failed = |e: String| Outcome { response_status: None, error: Some(e) };
    let url = match target::parse(&job.url) {
        Ok(u) => u,
        Err(e) => return failed(e.detail),
    };
    if !target::literal_allowed(&url, ctx.config.webhook_allow_private.on()) {
        return failed(format!("{} is not a public address", url.host_str().unwrap_or_default()));
    }
    let key = match sign::key_of(&job.secret) {
        Ok(k) => k,
        Err(e) => return failed(e.detail),
    };
    let msg_id = message_id(job.event_id);
    let timestamp = ctx.clock.unix();
    let signature = sign::signature(&key, &msg_id, timestamp, job.payload.as_bytes());
    let sent = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &msg_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(job.payload.clone())
        .send()
        .await;
    let mut res = match sent {
        Ok(r) => r,
        Err(e) => return failed(describe(&e.without_url())),
    };
    let status = res.status();
    // Read (a bounded part of) the answer, so a well-behaved connection can be reused
    // and a hostile one cannot make us hold much.
    let mut body = Vec::new();
    while body.len() < MAX_RESPONSE_BYTES {
        match res.chunk().await {
            Ok(Some(c)) => body.extend_from_slice(&c[..c.len().min(MAX_RESPONSE_BYTES - body.len())]),
            _ => break,
        }
    }
    let response_status = Some(status.as_u16() as i64);
    if status.is_success() {
        return Outcome { response_status, error: None };
    }
    let text: String =
        String::from_utf8_lossy(&body).chars().filter(|c| !c.is_control()).take(MAX_ERROR_CHARS).collect();
    let error =
        if text.trim().is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {}", text.trim()) };
    Outcome { response_status, error: Some(error) }
}

/// An error with its causes, one line ("error sending request: connection refused").
fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let s = cause.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = cause.source();
    }
    text.chars().take(MAX_ERROR_CHARS).collect()
}

/// The pause before attempt `attempts + 1`: `base · 2^(attempts-1)`, at most `max`,
/// with "equal jitter" (uniform in its upper half) so retries of many deliveries spread.
pub(crate) fn backoff(attempts: i64, base_ms: u64, max_ms: u64) -> Duration {
    let shift = (attempts.max(1) - 1).min(32) as u32;
    let full = base_ms.saturating_mul(1u64 << shift).min(max_ms).max(1);
    let ms = rand::rng().random_range(full.div_ceil(2)..=full);
    Duration::from_millis(ms)
}

/// Records an attempt's outcome, if this worker still holds the claim.
pub(crate) async fn record(ctx: &Ctx, job: &Job, outcome: &Outcome) -> Result<()> {
    let now = ctx.clock.now();
    let attempts = job.attempts + 1;
    let q = if outcome.error.is_none() {
        sqlx::query(
            "UPDATE deliveries SET status = 'delivered', attempts = $1, response_status = $2, error = NULL, \
             next_attempt_at = NULL, locked_until = NULL, delivered_at = $3 WHERE id = $4 AND locked_until = $5",
        )
        .bind(attempts)
        .bind(outcome.response_status)
        .bind(stored(now))
    } else {
        let (status, next) = if attempts >= MAX_ATTEMPTS {
            ("failed", None)
        } else {
            let pause = backoff(attempts, ctx.config.webhook_retry_base_ms, ctx.config.webhook_retry_max_ms);
            ("retrying", Some(stored(now + chrono::Duration::from_std(pause).unwrap_or_default())))
        };
        sqlx::query(
            "UPDATE deliveries SET status = $1, attempts = $2, response_status = $3, error = $4, \
             next_attempt_at = $5, locked_until = NULL WHERE id = $6 AND locked_until = $7",
        )
        .bind(status)
        .bind(attempts)
        .bind(outcome.response_status)
        .bind(outcome.error.clone())
        .bind(next)
    };
    q.bind(job.id).bind(&job.lease).execute(&ctx.db.pool).await?;
    if let Some(error) = &outcome.error {
        tracing::info!(delivery = job.id, attempt = attempts, %error, "webhook attempt failed");
    }
    Ok(())
}

/// When the next delivery becomes due, if any is waiting for its time.
pub(crate) async fn next_due(ctx: &Ctx) -> Result<Option<DateTime<Utc>>> {
    let next: Option<String> = sqlx::query_scalar(
        "SELECT MIN(next_attempt_at) FROM deliveries WHERE status IN ('pending', 'retrying') AND next_attempt_at > $1",
    )
    .bind(stored(ctx.clock.now()))
    .fetch_one(&ctx.db.pool)
    .await?;
    Ok(next.and_then(|t| DateTime::parse_from_rfc3339(&t).ok()).map(|t| t.with_timezone(&Utc)))
}

/// Sends and records one claimed job (a worker task).
pub(crate) async fn attempt(ctx: Ctx, client: reqwest::Client, job: Job) {
    let outcome = send(&ctx, &client, &job).await;
    if let Err(e) = record(&ctx, &job, &outcome).await {
        // The claim runs out and the delivery is tried again.
        tracing::warn!(delivery = job.id, error = %e, "could not record a webhook attempt");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter_in_the_upper_half() {
        for attempts in 1..=7 {
            let full = (1000u64 << (attempts - 1)).min(20_000);
            for _ in 0..50 {
                let d = backoff(attempts, 1000, 20_000).as_millis() as u64;
                assert!(d >= full / 2 && d <= full, "attempt {attempts}: {d} not in {}..={full}", full / 2);
            }
        }
        assert!(backoff(60, 1000, 5000) <= Duration::from_millis(5000));
        assert!(backoff(1, 0, 0) >= Duration::from_millis(1));
    }
}
