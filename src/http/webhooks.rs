//! Webhooks (docs/webhooks.md): owner-only. A workspace the caller cannot see is 404; a
//! member who is not an owner gets 403.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::webhooks::{self, Delivery, NewWebhook, Webhook};
use crate::error::Result;
use crate::http::auth::AuthUser;
use crate::http::extract::{Json, PagingQuery, Path, Query};
use crate::http::scope::{Member, Ws};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(delete_webhook))
        .routes(routes!(list_deliveries))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://hooks.example.com/cairn", "events": ["page.created", "page.updated"]}))]
pub(crate) struct CreateWebhook {
    /// An `http(s)` URL on a public address (unless `WEBHOOK_ALLOW_PRIVATE=1`).
    pub url: String,
    /// Kinds to receive: `page.created`, `page.updated`, `page.deleted`, `page.moved`,
    /// `page.renamed`. Absent or empty: all of them.
    pub events: Option<Vec<String>>,
    /// A Standard Webhooks secret (`whsec_` + base64 of 24–64 bytes); generated when absent.
    pub secret: Option<String>,
}

/// The workspace's webhooks (secrets are never listed).
#[utoipa::path(get, path = "/api/webhooks", tag = "webhooks", params(Ws, PagingQuery),
    responses((status = 200, body = List<Webhook>), (status = 400, body = Problem),
        (status = 403, body = Problem, description = "A member, not an owner"), (status = 404, body = Problem),
        (status = 503, body = Problem)))]
async fn list_webhooks(State(ctx): State<Ctx>, m: Member, paging: Paging) -> Result<axum::Json<List<Webhook>>> {
    let (items, total) = webhooks::list(&ctx, &m.access.owner()?, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Registers a webhook. The answer is the only place its secret is shown.
#[utoipa::path(post, path = "/api/webhooks", tag = "webhooks", params(Ws), request_body = CreateWebhook,
    responses((status = 201, body = NewWebhook),
        (status = 400, body = Problem, description = "Bad URL, non-public target, bad secret or unknown event kind"),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn create_webhook(
    State(ctx): State<Ctx>,
    m: Member,
    Json(req): Json<CreateWebhook>,
) -> Result<(StatusCode, axum::Json<NewWebhook>)> {
    let owner = m.access.owner()?;
    let created = webhooks::create(&ctx, &owner, &req.url, req.events.as_deref(), req.secret.as_deref()).await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Removes a webhook and its delivery records.
#[utoipa::path(delete, path = "/api/webhooks/{webhook_id}", tag = "webhooks", params(("webhook_id" = i64, Path), Ws),
    responses((status = 204, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn delete_webhook(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(id): Path<i64>,
    Query(q): Query<Ws>,
) -> Result<StatusCode> {
    let owner = webhooks::owner_of(&ctx, &auth.user, q.ws.as_deref(), id).await?;
    webhooks::delete(&ctx, &owner, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A webhook's delivery records, newest first. Read-only: reading never triggers a retry.
#[utoipa::path(get, path = "/api/webhooks/{webhook_id}/deliveries", tag = "webhooks",
    params(("webhook_id" = i64, Path), Ws, PagingQuery),
    responses((status = 200, body = List<Delivery>), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_deliveries(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(id): Path<i64>,
    Query(q): Query<Ws>,
    paging: Paging,
) -> Result<axum::Json<List<Delivery>>> {
    let owner = webhooks::owner_of(&ctx, &auth.user, q.ws.as_deref(), id).await?;
    let (items, total) = webhooks::deliveries(&ctx, &owner, id, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}
