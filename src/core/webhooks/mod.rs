//! Outgoing webhooks (docs/webhooks.md): a workspace owner registers URLs;
//! every page event reaches each of them, signed, through a durable outbox.
//!
//! The save path writes the event row and one `deliveries` row per interested webhook
//! in its own transaction ([`push_event`]), so an event exists exactly when its write
//! does, and a delivery record exists from the start for `GET …/deliveries` to show. An
//! event no webhook wants is not written at all: nothing would ever read it (a webhook
//! receives the events after its creation only).
//! [`deliver`] is the worker's side: claim, send, record, back off.

pub(crate) mod deliver;
pub(crate) mod sign;
pub(crate) mod target;

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use super::paging::Paging;
use super::users::User;
use super::workspaces::{self, Owner};
use crate::error::{Error, Result};
use crate::store::Script;
use crate::time::Timestamp;

/// A kind of event (docs/api.md, "Events (outbox)", maps operations to them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Created,
    Updated,
    Deleted,
    Moved,
    Renamed,
}

impl EventKind {
    pub const ALL: [EventKind; 5] = [Self::Created, Self::Updated, Self::Deleted, Self::Moved, Self::Renamed];

    /// Its name in the API, the payload and the outbox: `page.created`…
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "page.created",
            Self::Updated => "page.updated",
            Self::Deleted => "page.deleted",
            Self::Moved => "page.moved",
            Self::Renamed => "page.renamed",
        }
    }

    pub fn parse(name: &str) -> Option<EventKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    fn all_names() -> Vec<String> {
        Self::ALL.iter().map(|k| k.as_str().to_owned()).collect()
    }
}

/// Most webhooks one workspace may have.
pub(crate) const MAX_PER_WORKSPACE: i64 = 50;

/// A webhook as listed (never with its secret).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Webhook {
    pub id: i64,
    pub url: String,
    /// The kinds it receives.
    pub events: Vec<String>,
    pub active: bool,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

/// The creation answer: the only time the secret is shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct NewWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_…`: the key receivers verify signatures with.
    pub secret: String,
}

/// One (event, webhook) delivery record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Delivery {
    pub id: i64,
    /// The event's kind, e.g. `page.updated`.
    pub event: String,
    /// The `webhook-id` header the receiver saw (the same on every attempt).
    pub event_id: String,
    /// `pending`, `retrying`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i64,
    /// The receiver's HTTP status on the last attempt, if it answered.
    pub response_status: Option<i64>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    #[schema(value_type = Option<String>)]
    pub next_attempt_at: Option<Timestamp>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>)]
    pub delivered_at: Option<Timestamp>,
}

/// The `webhook-id` of an event.
pub fn message_id(event_id: i64) -> String {
    format!("evt_{event_id}")
}

/// `Some(kinds)` checked against [`EventKind::ALL`]; absent or empty means all of them.
fn check_kinds(kinds: Option<&[String]>) -> Result<Vec<String>> {
    let kinds = kinds.unwrap_or_default();
    if kinds.is_empty() {
        return Ok(EventKind::all_names());
    }
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if EventKind::parse(k).is_none() {
            let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(Error::invalid_webhook_events(k, &names));
        }
        if !out.contains(k) {
            out.push(k.clone());
        }
    }
    Ok(out)
}

/// As stored: `,a,b,` (so one `LIKE` finds a kind), or empty for every kind.
fn stored_kinds(kinds: &[String]) -> String {
    if kinds.len() == EventKind::ALL.len() { String::new() } else { format!(",{},", kinds.join(",")) }
}

fn listed_kinds(stored: &str) -> Vec<String> {
    if stored.is_empty() {
        return EventKind::all_names();
    }
    stored.split(',').filter(|k| !k.is_empty()).map(str::to_owned).collect()
}

type WebhookRow = (i64, String, String, i64, Timestamp);

fn webhook_of((id, url, events, active, created_at): WebhookRow) -> Webhook {
    Webhook { id, url, events: listed_kinds(&events), active: active != 0, created_at }
}

/// Registers a webhook on the owner's workspace.
pub(crate) async fn create(
    ctx: &Ctx,
    owner: &Owner,
    url: &str,
    events: Option<&[String]>,
    secret: Option<&str>,
) -> Result<NewWebhook> {
    let target = target::parse(url)?;
    target::check(&target, ctx.config.webhook_allow_private.on()).await?;
    let kinds = check_kinds(events)?;
    let secret = match secret {
        Some(s) => {
            sign::key_of(s)?;
            s.to_owned()
        }
        None => sign::generate_secret(),
    };
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE workspace_id = $1")
        .bind(owner.workspace_id())
        .fetch_one(&ctx.db.pool)
        .await?;
    if count >= MAX_PER_WORKSPACE {
        return Err(Error::too_many_webhooks(MAX_PER_WORKSPACE));
    }
    let now = ctx.clock.rfc3339();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhooks (workspace_id, url, events, secret, active, created_by, created_at) \
         VALUES ($1, $2, $3, $4, 1, $5, $6) RETURNING id",
    )
    .bind(owner.workspace_id())
    .bind(target.as_str())
    .bind(stored_kinds(&kinds))
    .bind(&secret)
    .bind(owner.user_id())
    .bind(&now)
    .fetch_one(&ctx.db.pool)
    .await?;
    tracing::info!(workspace = %owner.slug(), webhook = id, "webhook created");
    Ok(NewWebhook {
        webhook: Webhook { id, url: target.to_string(), events: kinds, active: true, created_at: now },
        secret,
    })
}

/// The workspace's webhooks, oldest first.
pub(crate) async fn list(ctx: &Ctx, owner: &Owner, paging: Paging) -> Result<(Vec<Webhook>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total): (Vec<WebhookRow>, i64) = paging
        .window(
            &mut tx,
            "SELECT id, url, events, active, created_at FROM webhooks WHERE workspace_id = $1 \
             ORDER BY id LIMIT $2 OFFSET $3",
            "SELECT COUNT(*) FROM webhooks WHERE workspace_id = $1",
            owner.workspace_id(),
        )
        .await?;
    tx.commit().await?;
    Ok((rows.into_iter().map(webhook_of).collect(), total))
}

/// The owner's proof for webhook `id`: 404 when it does not exist or its workspace is
/// not the caller's (or not `ws` when given), 403 for a member who is not an owner.
pub(crate) async fn owner_of(ctx: &Ctx, user: &User, ws: Option<&str>, id: i64) -> Result<Owner> {
    let slug: Option<String> =
        sqlx::query_scalar("SELECT w.slug FROM webhooks h JOIN workspaces w ON w.id = h.workspace_id WHERE h.id = $1")
            .bind(id)
            .fetch_optional(&ctx.db.pool)
            .await?;
    let slug = slug.filter(|s| ws.is_none_or(|ws| ws == s)).ok_or_else(|| Error::webhook_not_found(id))?;
    let access = workspaces::access(ctx, user, &slug)
        .await
        .map_err(|e| if e.is_not_found() { Error::webhook_not_found(id) } else { e })?;
    access.owner()
}

/// Removes a webhook and its delivery records; what is in flight is not sent again.
pub(crate) async fn delete(ctx: &Ctx, owner: &Owner, id: i64) -> Result<()> {
    let n = sqlx::query("DELETE FROM webhooks WHERE id = $1 AND workspace_id = $2")
        .bind(id)
        .bind(owner.workspace_id())
        .execute(&ctx.db.pool)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(Error::webhook_not_found(id));
    }
    tracing::info!(workspace = %owner.slug(), webhook = id, "webhook deleted");
    Ok(())
}

/// The columns a [`Delivery`] is read from, by name.
#[derive(sqlx::FromRow)]
struct DeliveryColumns {
    id: i64,
    #[sqlx(rename = "type")]
    event: String,
    event_id: i64,
    status: String,
    attempts: i64,
    response_status: Option<i64>,
    error: Option<String>,
    next_attempt_at: Option<Timestamp>,
    created_at: Timestamp,
    delivered_at: Option<Timestamp>,
}

impl From<DeliveryColumns> for Delivery {
    fn from(c: DeliveryColumns) -> Delivery {
        Delivery {
            id: c.id,
            event: c.event,
            event_id: message_id(c.event_id),
            status: c.status,
            attempts: c.attempts,
            response_status: c.response_status,
            error: c.error,
            next_attempt_at: c.next_attempt_at,
            created_at: c.created_at,
            delivered_at: c.delivered_at,
        }
    }
}

/// A webhook's delivery records, newest first. Reading never triggers a retry.
pub(crate) async fn deliveries(ctx: &Ctx, owner: &Owner, id: i64, paging: Paging) -> Result<(Vec<Delivery>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let items: Vec<DeliveryColumns> = sqlx::query_as(
        "SELECT d.id, e.type, d.event_id, d.status, d.attempts, d.response_status, d.error, \
                d.next_attempt_at, d.created_at, d.delivered_at \
         FROM deliveries d JOIN webhooks h ON h.id = d.webhook_id JOIN events e ON e.id = d.event_id \
         WHERE d.webhook_id = $1 AND h.workspace_id = $2 ORDER BY d.id DESC LIMIT $3 OFFSET $4",
    )
    .bind(id)
    .bind(owner.workspace_id())
    .bind(paging.limit)
    .bind(paging.offset)
    .fetch_all(&mut *tx)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM deliveries WHERE webhook_id = $1")
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok((items.into_iter().map(Delivery::from).collect(), total))
}

/// The active webhooks of workspace `$1` that want events of kind `$2`.
///
/// The pattern is made in the statement, not bound whole: SQLite marks a bound `LIKE`
/// pattern as something its plan may depend on and prepares the statement again at
/// every execution that binds it — two re-prepares per save, on every save, as these
/// statements run whether or not the workspace has a webhook (measured in commit 384e88a).
const WANTING: &str =
    "FROM webhooks WHERE workspace_id = $1 AND active = 1 AND (events = '' OR events LIKE '%,' || $2 || ',%')";

/// Writes a page event into the outbox, and a pending delivery for every webhook of the
/// workspace that wants its kind — as the last statements of a save's script, so in the
/// save's transaction and in its one hand-off to the database. Without such a webhook,
/// nothing (two statements that find no webhook: most workspaces have none, and every
/// save comes here). The event is written only if some webhook wants it, which returns
/// its id as the script's last row (so the save knows a delivery was queued); then a
/// pending delivery for each webhook that wants it, naming that event — the newest of
/// the page's events in the workspace, as writers of a workspace are serialised.
pub(crate) fn push_event(script: &mut Script, ws_id: i64, page_uid: &str, kind: &str, payload: &str, now: &Timestamp) {
    script.push(
        format!(
            "INSERT INTO events (workspace_id, type, payload, created_at, page_uid) \
             SELECT $1, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 {WANTING}) RETURNING id"
        ),
        vec![ws_id.into(), kind.into(), kind.into(), payload.into(), now.into(), page_uid.into()],
    );
    script.push(
        format!(
            "INSERT INTO deliveries (webhook_id, event_id, page_uid, status, attempts, next_attempt_at, created_at) \
             SELECT id, (SELECT max(id) FROM events WHERE workspace_id = $1 AND page_uid = $3), $3, 'pending', 0, $4, $4 \
             {WANTING}"
        ),
        vec![ws_id.into(), kind.into(), page_uid.into(), now.into()],
    );
}

/// Deletes finished delivery records, and events no delivery needs, older than
/// `WEBHOOK_RETENTION_DAYS`. Answers how many rows went.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let cutoff =
        crate::time::stored(ctx.clock.now() - chrono::Duration::days(ctx.config.webhook_retention_days as i64));
    let deliveries = sqlx::query("DELETE FROM deliveries WHERE status IN ('delivered', 'failed') AND created_at < $1")
        .bind(&cutoff)
        .execute(&ctx.db.pool)
        .await?
        .rows_affected();
    let events = sqlx::query(
        "DELETE FROM events WHERE created_at < $1 \
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)",
    )
    .bind(&cutoff)
    .execute(&ctx.db.pool)
    .await?
    .rows_affected();
    Ok(deliveries + events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_checked_deduplicated_and_stored_for_like() {
        let all = check_kinds(None).unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(stored_kinds(&all), "");
        assert_eq!(check_kinds(Some(&[])).unwrap(), all);
        let two = check_kinds(Some(&["page.moved".into(), "page.created".into(), "page.moved".into()])).unwrap();
        assert_eq!(two, ["page.moved", "page.created"]);
        assert_eq!(stored_kinds(&two), ",page.moved,page.created,");
        assert_eq!(listed_kinds(",page.moved,page.created,"), two);
        assert_eq!(listed_kinds(""), all);
        assert_eq!(
            check_kinds(Some(&["page.exploded".into()])).unwrap_err().code,
            crate::error::Code::InvalidWebhookEvents
        );
    }
}
