//! `/health`, `/api/system` and `/openapi.json`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::{Ctx, VERSION, system};
use crate::http::auth::AuthUser;

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new().routes(routes!(health)).routes(routes!(system_report)).routes(routes!(openapi_json))
}

#[derive(Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok`, or `degraded` while the database is unreachable.
    #[schema(example = "ok")]
    pub status: &'static str,
    /// `ok` or `error`.
    #[schema(example = "ok")]
    pub db: &'static str,
    pub version: &'static str,
}

/// Process state, database connectivity and version. Needs no credential; answers 200
/// even while the database is down (then `db` is `error`).
#[utoipa::path(get, path = "/health", tag = "system", responses((status = 200, body = Health)))]
async fn health(State(ctx): State<Ctx>) -> Json<Health> {
    let db_ok = ctx.db.ping().await;
    Json(Health {
        status: if db_ok { "ok" } else { "degraded" },
        db: if db_ok { "ok" } else { "error" },
        version: VERSION,
    })
}

/// Which optional features resolved as enabled on this instance.
#[utoipa::path(get, path = "/api/system", tag = "system",
    responses((status = 200, body = system::SystemReport)))]
async fn system_report(State(ctx): State<Ctx>, _auth: AuthUser) -> Json<system::SystemReport> {
    Json(system::report(&ctx).await)
}

/// The document, rendered once when the router is built (see `http::api`), as the bytes
/// every request gets. Kept as a `serde_json::Value` it held 1.5 MB of the idle server's
/// 7.4 MB of heap for its whole life, and was copied at each request (measured in commit 8ef3be2).
pub(crate) static OPENAPI: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();

/// This OpenAPI 3.1 document: every route, with request and response schemas.
#[utoipa::path(get, path = "/openapi.json", tag = "system",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
async fn openapi_json() -> impl IntoResponse {
    let doc = OPENAPI.get().cloned().unwrap_or_else(|| Bytes::from_static(b"null"));
    ([(CONTENT_TYPE, "application/json")], doc)
}
